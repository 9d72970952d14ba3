//! The store's state as gauges, read from one snapshot at `now`: the
//! same rules `snapshot --json` reports each instance by (a lease expired
//! at `expires_at <= now`, stackless §6; a lock holder's liveness, §2;
//! pending operations, schema 14), summed, never one series an instance.

use std::collections::BTreeMap;

use super::{Capped, Family, Kind, Sample, count};
use crate::model::protocol::rows::liveness_state;
use crate::model::{Liveness, Snapshot, Status};

/// The lock holder liveness states, as `snapshot --json`'s
/// `lock.liveness_state` says them, each always written (0 when none).
pub const LIVENESS_STATES: [&str; 5] = [
    "alive",
    "stale_pid_gone",
    "stale_pid_reused",
    "foreign_host",
    "unknown",
];

/// The store's state, summed over its instances.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreState {
    /// `PRAGMA user_version`.
    pub schema: i64,
    /// When it was evaluated (unix seconds).
    pub now: i64,
    /// Instances by `(status, substrate)`.
    pub instances: BTreeMap<(String, String), u64>,
    /// Active instances whose lease expired, by substrate.
    pub expired: BTreeMap<String, u64>,
    /// The longest an active instance's lease has been expired, seconds
    /// (0 when none is).
    pub oldest_overdue_secs: i64,
    /// Instances in a reap backoff (a `reap_attempts` row).
    pub backoffs: u64,
    /// Their consecutive failed attempts, summed.
    pub backoff_attempts: u64,
    /// The most consecutive failed attempts of one instance.
    pub backoff_attempts_max: i64,
    /// Active instances left by a failed or cancelled `up`
    /// (`crate::model::readiness::failed_up`).
    pub failed_up: u64,
    /// Pending operations (queued, running) by `(verb, status)`.
    pub pending: BTreeMap<(String, String), u64>,
    /// Operation locks by their holder's liveness ([`LIVENESS_STATES`]).
    pub locks: BTreeMap<&'static str, u64>,
    /// The controller's finished `down` operations among those read (the
    /// newest [`crate::model::operation::FINISHED_SHOWN`] finished ones),
    /// by outcome ([`DOWN_OUTCOMES`]).
    pub controller_downs: BTreeMap<&'static str, u64>,
    /// Whether the store has the controller's `operations` table
    /// (migration 8): without it no controller teardown is written.
    pub has_operations: bool,
    statuses: Capped,
    substrates: Capped,
    verbs: Capped,
}

/// The outcomes a controller's finished `down` is counted under, each
/// always written (0.4.0 operations table: `succeeded`, `failed`; a
/// `cancelled` or `interrupted` one tore nothing down to the end).
pub const DOWN_OUTCOMES: [&str; 2] = ["succeeded", "failed"];

/// The outcome `op` is counted under in `stackless_controller_teardowns`:
/// a `down` (0.4.0 controller verb) that succeeded or failed.
#[must_use]
pub fn down_outcome(op: &crate::model::Operation) -> Option<&'static str> {
    use crate::model::operation::OpStatus;
    if op.verb != "down" {
        return None;
    }
    match op.status {
        OpStatus::Succeeded => Some(DOWN_OUTCOMES[0]),
        OpStatus::Failed => Some(DOWN_OUTCOMES[1]),
        _ => None,
    }
}

impl StoreState {
    /// The state of `snapshot` at `now` (unix seconds).
    #[must_use]
    pub fn of(snapshot: &Snapshot, now: i64) -> Self {
        let mut state = Self {
            schema: snapshot.generation.user_version,
            now,
            has_operations: snapshot.generation.has_operations(),
            ..Self::default()
        };
        for instance in &snapshot.instances {
            state.instance(snapshot, instance);
        }
        for op in snapshot.pending_operations() {
            let verb = state.verbs.of(&op.verb);
            *state
                .pending
                .entry((verb, op.status.as_str().to_owned()))
                .or_default() += 1;
        }
        for op in snapshot.finished_operations() {
            if let Some(outcome) = down_outcome(op) {
                *state.controller_downs.entry(outcome).or_default() += 1;
            }
        }
        state
    }

    /// Count one instance of `snapshot`.
    fn instance(&mut self, snapshot: &Snapshot, instance: &crate::model::Instance) {
        let now = self.now;
        let status = self.statuses.of(instance.status.as_str());
        let substrate = self.substrates.of(&instance.substrate);
        let active = instance.status == Status::Active;
        if active && let Some(lease) = instance.lease.filter(|l| l.expired(now)) {
            *self.expired.entry(substrate.clone()).or_default() += 1;
            self.oldest_overdue_secs = self
                .oldest_overdue_secs
                .max(now.saturating_sub(lease.expires_at));
        }
        *self.instances.entry((status, substrate)).or_default() += 1;
        let liveness = snapshot.lock_liveness(&instance.name);
        if instance.lock.is_some() {
            *self.locks.entry(liveness_state(liveness)).or_default() += 1;
        }
        if let Some(attempt) = snapshot.reap_attempt(&instance.name) {
            self.backoffs += 1;
            self.backoff_attempts += u64::try_from(attempt.attempts).unwrap_or(0);
            self.backoff_attempts_max = self.backoff_attempts_max.max(attempt.attempts);
        }
        let pending = !snapshot.pending_operations_of(&instance.name).is_empty();
        if crate::model::readiness::failed_up(
            instance,
            pending,
            liveness.is_some_and(Liveness::held),
        ) {
            self.failed_up += 1;
        }
    }

    /// Its families, in docs/metrics.md's order.
    #[must_use]
    pub fn families(&self) -> Vec<Family> {
        vec![
            Family::gauge(
                "stackless_store_schema_version",
                "The store's schema (PRAGMA user_version).",
                count(u64::try_from(self.schema).unwrap_or(0)),
            ),
            Family::gauge(
                "stackless_snapshot_timestamp_seconds",
                "When these values were read (unix seconds).",
                count(u64::try_from(self.now).unwrap_or(0)),
            ),
            Family {
                name: "stackless_instances",
                help: "Instances by status and substrate.",
                kind: Kind::Gauge,
                unit: None,
                samples: self
                    .instances
                    .iter()
                    .map(|((status, substrate), n)| {
                        Sample::new(
                            vec![("status", status.clone()), ("substrate", substrate.clone())],
                            count(*n),
                        )
                    })
                    .collect(),
            },
            Family::labelled(
                "stackless_instances_expired",
                "Active instances whose lease has expired (stackless §6), by substrate.",
                "substrate",
                self.expired.iter().map(|(s, n)| (s.clone(), count(*n))),
            ),
            Family::gauge(
                "stackless_lease_overdue_max_seconds",
                "How long the oldest expired lease of an active instance has been expired (0: none).",
                count(u64::try_from(self.oldest_overdue_secs).unwrap_or(0)),
            ),
            Family::gauge(
                "stackless_instances_failed_up",
                "Active instances left by a failed or cancelled up: no lease, nothing pending, no live lock.",
                count(self.failed_up),
            ),
            Family::gauge(
                "stackless_reap_backoffs",
                "Instances whose teardown failed and waits in a reap backoff (stackless §6).",
                count(self.backoffs),
            ),
            Family::gauge(
                "stackless_reap_backoff_attempts",
                "Consecutive failed teardown attempts, summed over the instances in a backoff.",
                count(self.backoff_attempts),
            ),
            Family::gauge(
                "stackless_reap_backoff_attempts_max",
                "The most consecutive failed teardown attempts of one instance.",
                count(u64::try_from(self.backoff_attempts_max).unwrap_or(0)),
            ),
            self.pending_family(),
            self.controller_downs_family(),
            Family::labelled(
                "stackless_locks",
                "Operation locks by their holder's liveness (stackless §2).",
                "liveness",
                LIVENESS_STATES.iter().map(|s| {
                    (
                        (*s).to_owned(),
                        count(self.locks.get(s).copied().unwrap_or(0)),
                    )
                }),
            ),
        ]
    }

    fn controller_downs_family(&self) -> Family {
        Family {
            name: "stackless_controller_teardowns",
            help: "The controller's finished down operations among the newest finished operations the store holds, by outcome (a gauge: newer operations push them out).",
            kind: Kind::Gauge,
            unit: None,
            samples: DOWN_OUTCOMES
                .iter()
                .filter(|_| self.has_operations)
                .map(|outcome| {
                    Sample::new(
                        vec![
                            ("actor", "controller".to_owned()),
                            ("outcome", (*outcome).to_owned()),
                        ],
                        count(self.controller_downs.get(outcome).copied().unwrap_or(0)),
                    )
                })
                .collect(),
        }
    }

    fn pending_family(&self) -> Family {
        Family {
            name: "stackless_operations_pending",
            help: "The controller's queued and running operations by verb and status (schema 14).",
            kind: Kind::Gauge,
            unit: None,
            samples: self
                .pending
                .iter()
                .map(|((verb, status), n)| {
                    Sample::new(
                        vec![("verb", verb.clone()), ("status", status.clone())],
                        count(*n),
                    )
                })
                .collect(),
        }
    }

    /// All active instances whose lease expired.
    #[must_use]
    pub fn expired_total(&self) -> u64 {
        self.expired.values().sum()
    }
}
