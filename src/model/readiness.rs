//! An instance's readiness as `stackless list` and `stackless status`
//! derive it: a stage per service, and the row a failed
//! `up` leaves behind. Pure.
//!
//! stackless 0.4.0 derives each service's stage from a live observation
//! (cli-0.4.0 src/client/report.rs:343-420): no checkpoint for the service
//! -> everything unknown -> `unknown`; a tombstone -> `absent`; the
//! provider's observation `Gone` (a local process not alive:
//! stackless-local-0.4.0 src/lib.rs:923-946) -> `absent`; present and
//! drifted -> `drifted`; present, ready and applied -> `healthy`; present
//! and unready -> `unhealthy`; present otherwise -> `started`. It records
//! what it found in `observations` (report.rs:421-423). This console runs
//! no health probe: it takes the process from its own probe (pid plus
//! start time) and readiness and configuration from the last recorded
//! observation, when that one saw the service present; a live process
//! with no such observation is `started`.
//!
//! The services an instance has are its definition's
//! ([`crate::model::services::defined_services`]) and those with a
//! checkpoint, placement or observation ([`crate::model::services::services`]).
//!
//! Not derived here: jobs (`completed`, `failed`, `running`: their exit
//! codes are in files this console does not read) and services whose
//! only checkpoint is not a local process (their observation alone
//! decides).

use super::detail::Observation;
use super::rows::{Instance, Status};
use super::services::{ProcessState, Service};

/// One service's stage, in stackless 0.4.0's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// Present, ready, configuration applied.
    Healthy,
    /// Present; readiness not known to be ready or unready.
    Started,
    /// Present, configuration drifted out of band.
    Drifted,
    /// Present and unready (a health check failed).
    Unhealthy,
    /// Nothing recorded of it (no checkpoint), or not observable.
    Unknown,
    /// Gone: its process is dead, or the instance is tombstoned.
    Absent,
}

impl Stage {
    /// `healthy`, `started`, `drifted`, `unhealthy`, `unknown`, `absent`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::Started => "started",
            Self::Drifted => "drifted",
            Self::Unhealthy => "unhealthy",
            Self::Unknown => "unknown",
            Self::Absent => "absent",
        }
    }

    /// Whether the stage says the service is not known to serve: unknown,
    /// absent, unhealthy or drifted.
    #[must_use]
    pub const fn troubled(self) -> bool {
        !matches!(self, Self::Healthy | Self::Started)
    }
}

/// The stage of one service of an instance that is `tombstoned` or not,
/// whose recorded process probed as `process` (`None`: no process
/// recorded), last observed as `observation`.
#[must_use]
pub fn stage(
    tombstoned: bool,
    process: Option<ProcessState>,
    observation: Option<&Observation>,
) -> Stage {
    if tombstoned {
        return Stage::Absent;
    }
    let observed_present = observation.filter(|o| o.existence.as_deref() == Some("present"));
    match process {
        Some(state) if state.dead() => Stage::Absent,
        Some(_) => observed_present.map_or(Stage::Started, observed_stage),
        None => match observation.and_then(|o| o.existence.as_deref()) {
            Some("present") => observed_present.map_or(Stage::Started, observed_stage),
            Some("absent") => Stage::Absent,
            _ => Stage::Unknown,
        },
    }
}

/// The stage of one probed `service` (its process, its last
/// observation) under an instance that is `tombstoned` or not: [`stage`],
/// except a process record stackless's local provider refuses to observe
/// ([`Service::record_elsewhere`]: a store copied from elsewhere), which
/// 0.4.0's `list` says is `unknown` (alive or not: `alive` says that).
#[must_use]
pub fn service_stage(service: &Service, tombstoned: bool) -> Stage {
    let observation = (service.existence.is_some()
        || service.readiness.is_some()
        || service.configuration.is_some())
    .then(|| Observation {
        node: format!("service:{}", service.name),
        readiness: service.readiness.clone(),
        existence: service.existence.clone(),
        configuration: service.configuration.clone(),
        observed_at: service.observed_at,
        error_code: None,
        drift: Vec::new(),
    });
    if !tombstoned && service.record_elsewhere() {
        // 0.4.0's observation errs before it looks at the process: no
        // existence known, whether the process lives or not.
        return Stage::Unknown;
    }
    stage(tombstoned, service.process, observation.as_ref())
}

/// The stage of a service observed present (report.rs:404-420).
fn observed_stage(o: &Observation) -> Stage {
    let configuration = o.configuration.as_deref();
    match (o.readiness.as_deref(), configuration) {
        (_, Some("drifted")) => Stage::Drifted,
        (Some("ready"), Some("applied")) => Stage::Healthy,
        (Some("unready"), _) => Stage::Unhealthy,
        _ => Stage::Started,
    }
}

/// Whether `instance` is a row a failed (or cancelled) `up` left behind:
/// active with no lease, no operation pending on it (`pending`) and no
/// live holder of its operation lock (`lock_held`). stackless 0.4.0 writes
/// the lease only when an `up` succeeds, and a reaper's worklist is the
/// active instances whose lease expired (the contract's §6; daemon-0.4.0
/// src/reaper.rs), so such a row is never reaped: it stays until someone
/// runs `stackless down` on it.
#[must_use]
pub fn failed_up(instance: &Instance, pending: bool, lock_held: bool) -> bool {
    instance.status == Status::Active && instance.lease.is_none() && !pending && !lock_held
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(existence: &str, readiness: &str, configuration: &str) -> Observation {
        Observation {
            node: "service:web".into(),
            readiness: Some(readiness.into()),
            existence: Some(existence.into()),
            configuration: Some(configuration.into()),
            observed_at: Some(1),
            error_code: None,
            drift: vec![],
        }
    }

    #[test]
    fn stages_as_stackless_status_words_them() {
        let alive = Some(ProcessState::Alive);
        let healthy = observed("present", "ready", "applied");
        assert_eq!(stage(false, alive, Some(&healthy)), Stage::Healthy);
        assert_eq!(stage(false, alive, None), Stage::Started);
        assert_eq!(
            stage(
                false,
                alive,
                Some(&observed("present", "unready", "applied"))
            ),
            Stage::Unhealthy
        );
        assert_eq!(
            stage(false, alive, Some(&observed("present", "ready", "drifted"))),
            Stage::Drifted
        );
        assert_eq!(
            stage(
                false,
                alive,
                Some(&observed("present", "unknown", "pending"))
            ),
            Stage::Started
        );
        // An observation from before the process started says nothing.
        assert_eq!(
            stage(
                false,
                alive,
                Some(&observed("unknown", "unknown", "unknown"))
            ),
            Stage::Started
        );
        assert_eq!(
            stage(false, Some(ProcessState::Dead), Some(&healthy)),
            Stage::Absent
        );
        assert_eq!(
            stage(false, Some(ProcessState::PidReused), None),
            Stage::Absent
        );
        assert_eq!(stage(true, alive, Some(&healthy)), Stage::Absent);
        // No process recorded: what `list` says of a failed `up`'s service.
        assert_eq!(stage(false, None, None), Stage::Unknown);
        assert_eq!(
            stage(
                false,
                None,
                Some(&observed("unknown", "unknown", "unknown"))
            ),
            Stage::Unknown
        );
        assert_eq!(
            stage(false, None, Some(&observed("absent", "unready", "unknown"))),
            Stage::Absent
        );
        assert_eq!(stage(false, None, Some(&healthy)), Stage::Healthy);
        assert!(Stage::Unknown.troubled() && !Stage::Started.troubled());
    }

    /// A process record naming another state dir's log (a store copied
    /// from another machine): 0.4.0's local provider refuses to observe
    /// it, so `list` says `unknown`, dead or alive; this state dir's log:
    /// the probe decides (`absent` when dead).
    #[test]
    fn a_process_recorded_under_another_state_dir_is_unknown() {
        let record = |log: &str| crate::model::services::StartRecord {
            service: "web".into(),
            pid: 4242,
            start_time: 1,
            port: None,
            hosts: vec![],
            log: Some(log.into()),
        };
        let service = |log: &str, process| Service {
            name: "web".into(),
            runs_on: "local".into(),
            start: Some(record(log)),
            process: Some(process),
            readiness: None,
            existence: None,
            configuration: None,
            observed_at: None,
            error_code: None,
            drift: vec![],
            log_path: Some("/here/logs/sl-1/web.log".into()),
            log: crate::model::services::LogState::Missing,
        };
        let elsewhere = "/home/operator/.local/state/stackless/logs/sl-1/web.log";
        assert_eq!(
            service_stage(&service(elsewhere, ProcessState::Dead), false),
            Stage::Unknown
        );
        assert_eq!(
            service_stage(&service(elsewhere, ProcessState::Alive), false),
            Stage::Unknown
        );
        assert_eq!(
            service_stage(&service(elsewhere, ProcessState::Dead), true),
            Stage::Absent
        );
        let here = "/here/logs/sl-1/web.log";
        assert_eq!(
            service_stage(&service(here, ProcessState::Dead), false),
            Stage::Absent
        );
        assert_eq!(
            service_stage(&service(here, ProcessState::Alive), false),
            Stage::Started
        );
    }

    #[test]
    fn a_failed_up_is_active_unleased_unpending_unlocked() {
        let row = Instance {
            name: "b".into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(1),
            tombstoned_at: None,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        };
        assert!(failed_up(&row, false, false));
        assert!(!failed_up(&row, true, false), "its up is still pending");
        assert!(!failed_up(&row, false, true), "its up holds the lock");
        let leased = Instance {
            lease: Some(crate::model::Lease {
                duration_secs: 60,
                expires_at: 100,
            }),
            ..row.clone()
        };
        assert!(!failed_up(&leased, false, false));
        let tombstone = Instance {
            status: Status::Tombstoned,
            ..row
        };
        assert!(!failed_up(&tombstone, false, false));
    }
}
