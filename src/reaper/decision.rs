//! The reaper's decision, as a pure function of (now, rows): stackless §6
//! re-implemented. No I/O here: the reaper thread (`super::runner`) reads the
//! store, asks this module what to do, and acts.

use crate::model::name::is_dns_safe;
use crate::model::{Instance, Liveness, ReapAttempt, Snapshot, Status};

pub use crate::model::backoff::{
    BACKOFF_BASE_SECS, BACKOFF_CAP_SECS, TOMBSTONE_GC_WINDOW_SECS, backoff, backoff_secs,
    next_failure,
};

/// What the reaper does with one expired instance this tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run the verified teardown (`stackless down <name> --json`).
    Reap,
    /// A live operation holds the lock: never reap mid-operation, however long
    /// past expiry (§6 step 2).
    SkipLocked(Liveness),
    /// A previous reap failed and its backoff runs until this unix second.
    WaitBackoff {
        /// `next_retry_at`.
        until: i64,
    },
    /// The name is not DNS-safe: stackless never wrote it, so it is never
    /// passed to a command ("Instance names").
    RefuseName,
}

/// The §6 step 2 decision for one instance already on the worklist: the lock
/// first (`held`, from [`Liveness::held`]), then the backoff gate
/// (`next_retry_at > now` waits), else reap. The name check comes before
/// both: a hostile name is never acted upon.
#[must_use]
pub fn decide(
    name: &str,
    now: i64,
    lock: Option<&Liveness>,
    prior: Option<&ReapAttempt>,
) -> Decision {
    if !is_dns_safe(name) {
        return Decision::RefuseName;
    }
    if let Some(liveness) = lock.filter(|l| l.held()) {
        return Decision::SkipLocked(liveness.clone());
    }
    match prior {
        Some(attempt) if attempt.next_retry_at > now => Decision::WaitBackoff {
            until: attempt.next_retry_at,
        },
        _ => Decision::Reap,
    }
}

/// What one GC candidate gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GcDecision {
    /// Delete the row (FK cascade) after removing `<state_dir>/logs/<name>/`.
    Collect,
    /// Not DNS-safe: never used as a path, never deleted by this console.
    RefuseName,
}

/// One reaper pass, decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The worklist (§6 step 1: active, lease expired at `now`, ordered by
    /// name), each with its decision.
    pub reaps: Vec<(String, Decision)>,
    /// Tombstones past the 7-day window (D14), ordered by name. Empty when
    /// the generation leaves GC to stackless.
    pub gc: Vec<(String, GcDecision)>,
}

/// Whether `instance` is on the §6 worklist at `now`: active, with a lease
/// that has expired (`expires_at <= now`). An instance without a lease row is
/// not (the store's join would drop it).
#[must_use]
pub fn on_worklist(instance: &Instance, now: i64) -> bool {
    instance.status == Status::Active && instance.lease.is_some_and(|l| l.expired(now))
}

/// Whether a tombstone is due for GC at `now`: `tombstoned_at <= now - 7 days`
/// (D14). A wall clock that jumped back makes `now` smaller, which only
/// delays GC; it never makes it early.
#[must_use]
pub fn gc_due(instance: &Instance, now: i64) -> bool {
    instance.status == Status::Tombstoned
        && instance
            .tombstoned_at
            .is_some_and(|at| at <= now.saturating_sub(TOMBSTONE_GC_WINDOW_SECS))
}

/// Decide a whole pass over `snapshot` at `now`. `allow_gc` comes from the
/// store's generation ([`crate::model::Generation::allows_gc`]).
#[must_use]
pub fn plan(snapshot: &Snapshot, now: i64, allow_gc: bool) -> Plan {
    let mut plan = Plan::default();
    // `snapshot.instances` is ordered by name, so both lists are too.
    for instance in &snapshot.instances {
        if on_worklist(instance, now) {
            let decision = decide(
                &instance.name,
                now,
                snapshot.lock_liveness(&instance.name),
                snapshot.reap_attempt(&instance.name),
            );
            plan.reaps.push((instance.name.clone(), decision));
        } else if allow_gc && gc_due(instance, now) {
            let decision = if is_dns_safe(&instance.name) {
                GcDecision::Collect
            } else {
                GcDecision::RefuseName
            };
            plan.gc.push((instance.name.clone(), decision));
        }
    }
    plan
}

/// Why an operator key cannot act on an instance right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRefusal {
    /// Not DNS-safe: never passed to a command.
    NotDnsSafe,
    /// Already tombstoned (or an unknown status).
    NotActive,
    /// `r` only: the lease has not expired.
    LeaseNotExpired,
    /// A live operation (or a foreign host) holds the lock.
    Locked(Liveness),
}

impl std::fmt::Display for KeyRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotDnsSafe => f.write_str(crate::model::name::REFUSED_NOT_DNS_SAFE),
            Self::NotActive => f.write_str("refused: not active"),
            Self::LeaseNotExpired => {
                f.write_str("refused: lease has not expired (use d to tear down)")
            }
            Self::Locked(l) => write!(f, "refused: locked ({l})"),
        }
    }
}

/// May the operator's `r` reap `instance` now? Only an active instance whose
/// lease has expired and whose lock is not held. Unlike the reaper, `r` does
/// not wait out a backoff: the operator asked for a retry now.
///
/// # Errors
/// The [`KeyRefusal`] to show in the activity log.
pub fn may_reap_now(
    instance: &Instance,
    lock: Option<&Liveness>,
    now: i64,
) -> Result<(), KeyRefusal> {
    may_tear_down(instance, lock)?;
    if !instance.lease.is_some_and(|l| l.expired(now)) {
        return Err(KeyRefusal::LeaseNotExpired);
    }
    Ok(())
}

/// May the operator's `d` tear `instance` down? Any active instance with a
/// DNS-safe name whose lock is not held.
///
/// # Errors
/// The [`KeyRefusal`] to show in the activity log.
pub fn may_tear_down(instance: &Instance, lock: Option<&Liveness>) -> Result<(), KeyRefusal> {
    if !is_dns_safe(&instance.name) {
        return Err(KeyRefusal::NotDnsSafe);
    }
    if instance.status != Status::Active {
        return Err(KeyRefusal::NotActive);
    }
    if let Some(l) = lock.filter(|l| l.held()) {
        return Err(KeyRefusal::Locked(l.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Lease, OpLock, Rows};

    const NOW: i64 = 1_795_960_686;

    fn instance(name: &str, status: Status, expires_at: Option<i64>) -> Instance {
        Instance {
            name: name.into(),
            substrate: "local".into(),
            status,
            created_at: Some(NOW - 1000),
            tombstoned_at: None,
            lease: expires_at.map(|e| Lease {
                duration_secs: 60,
                expires_at: e,
            }),
            lock: None,
            anomalies: vec![],
            dirty: None,
            birth: None,
        }
    }

    fn attempt(name: &str, attempts: i64, next: i64) -> ReapAttempt {
        ReapAttempt {
            instance: name.into(),
            attempts,
            last_error: "boom".into(),
            next_retry_at: next,
        }
    }

    #[test]
    fn decide_each_branch() {
        assert_eq!(decide("golf", NOW, None, None), Decision::Reap);
        assert_eq!(
            decide("golf", NOW, Some(&Liveness::Alive), None),
            Decision::SkipLocked(Liveness::Alive)
        );
        assert_eq!(
            decide("golf", NOW, Some(&Liveness::ForeignHost("b".into())), None),
            Decision::SkipLocked(Liveness::ForeignHost("b".into()))
        );
        // A stale lock does not block (the holder is dead).
        assert_eq!(
            decide("golf", NOW, Some(&Liveness::StalePidGone), None),
            Decision::Reap
        );
        assert_eq!(
            decide("golf", NOW, Some(&Liveness::StalePidReused), None),
            Decision::Reap
        );
        // The lock wins over the backoff.
        assert_eq!(
            decide(
                "golf",
                NOW,
                Some(&Liveness::Alive),
                Some(&attempt("golf", 3, NOW + 173))
            ),
            Decision::SkipLocked(Liveness::Alive)
        );
        assert_eq!(
            decide("golf", NOW, None, Some(&attempt("golf", 3, NOW + 173))),
            Decision::WaitBackoff { until: NOW + 173 }
        );
        // next_retry_at == now: the gate is `> now`, so it is due.
        assert_eq!(
            decide("golf", NOW, None, Some(&attempt("golf", 3, NOW))),
            Decision::Reap
        );
        assert_eq!(decide("x; rm -rf /", NOW, None, None), Decision::RefuseName);
        assert_eq!(decide("--help", NOW, None, None), Decision::RefuseName);
    }

    #[test]
    fn plan_builds_worklist_and_gc() {
        let mut tomb_old = instance("old", Status::Tombstoned, None);
        tomb_old.tombstoned_at = Some(NOW - TOMBSTONE_GC_WINDOW_SECS);
        let mut tomb_new = instance("new", Status::Tombstoned, None);
        tomb_new.tombstoned_at = Some(NOW - TOMBSTONE_GC_WINDOW_SECS + 1);
        let mut tomb_bad = instance("Bad/../x", Status::Tombstoned, None);
        tomb_bad.tombstoned_at = Some(0);
        let mut locked = instance("locked", Status::Active, Some(NOW - 10));
        locked.lock = Some(OpLock {
            operation: "up".into(),
            holder_pid: 1,
            holder_start_time: 1,
            acquired_at: 1,
            holder_host: Some("vm".into()),
            claim_id: None,
        });
        let mut snapshot = Snapshot::from(Rows {
            instances: vec![
                instance("alpha", Status::Active, Some(NOW + 1)),
                instance("backing", Status::Active, Some(NOW - 100)),
                instance("due", Status::Active, Some(NOW)),
                instance("gone", Status::Tombstoned, None),
                locked,
                instance("nolease", Status::Active, None),
                tomb_new,
                tomb_old,
            ],
            reap_attempts: vec![attempt("backing", 2, NOW + 50)],
            ..Rows::default()
        });
        snapshot.instances.push(tomb_bad);
        snapshot.instances.sort_by(|a, b| a.name.cmp(&b.name));
        snapshot
            .liveness_mut()
            .insert("locked".into(), Liveness::Alive);
        let plan = plan(&snapshot, NOW, true);
        assert_eq!(
            plan.reaps,
            vec![
                ("backing".into(), Decision::WaitBackoff { until: NOW + 50 }),
                ("due".into(), Decision::Reap),
                ("locked".into(), Decision::SkipLocked(Liveness::Alive)),
            ]
        );
        assert_eq!(
            plan.gc,
            vec![
                ("Bad/../x".into(), GcDecision::RefuseName),
                ("old".into(), GcDecision::Collect),
            ]
        );
        assert!(super::plan(&snapshot, NOW, false).gc.is_empty());
    }

    #[test]
    fn key_rules() {
        let expired = instance("golf", Status::Active, Some(NOW - 1));
        let fresh = instance("alpha", Status::Active, Some(NOW + 100));
        let tomb = instance("charlie", Status::Tombstoned, None);
        assert_eq!(may_reap_now(&expired, None, NOW), Ok(()));
        assert_eq!(
            may_reap_now(&fresh, None, NOW),
            Err(KeyRefusal::LeaseNotExpired)
        );
        assert_eq!(may_tear_down(&fresh, None), Ok(()));
        assert_eq!(may_tear_down(&tomb, None), Err(KeyRefusal::NotActive));
        assert_eq!(
            may_reap_now(&expired, Some(&Liveness::Alive), NOW),
            Err(KeyRefusal::Locked(Liveness::Alive))
        );
        assert_eq!(
            may_reap_now(&expired, Some(&Liveness::StalePidGone), NOW),
            Ok(())
        );
        let hostile = instance("--help", Status::Active, Some(NOW - 1));
        assert_eq!(
            may_reap_now(&hostile, None, NOW),
            Err(KeyRefusal::NotDnsSafe)
        );
        assert_eq!(
            KeyRefusal::NotDnsSafe.to_string(),
            "refused: not a DNS-safe name"
        );
    }
}
