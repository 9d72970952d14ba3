//! What changed in the store between two snapshots that this console did
//! not do itself: an instance that appeared (or a tombstoned name born
//! again), an instance tombstoned by someone else, a controller operation
//! that finished. The UI turns them into Activity lines (`observed`,
//! `controller`); it leaves out its own teardowns. Pure.

use std::collections::HashMap;

use super::activity::{Activity, ActivityKind, Actor};
use super::envelope::parse_error;
use super::operation::{OpStatus, Operation};
use super::rows::{Rows, Status};

/// One change seen between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// A name that was not in the store, or a tombstoned name that is active
    /// again (`reborn`: stackless 0.4.0 updates the row in place with a new
    /// `instance_id`).
    Appeared {
        /// The instance name, as stored.
        name: String,
        /// Whether the row was there before, tombstoned or of another birth.
        reborn: bool,
    },
    /// An instance that was not tombstoned and now is.
    Tombstoned {
        /// The instance name, as stored.
        name: String,
    },
    /// A controller operation that was pending (or not shown) and is now
    /// finished.
    Finished(Box<Operation>),
    /// A `down` the controller ran to success on an instance whose lease
    /// had run out when the `down` was queued: its lease reaper's
    /// (stackless 0.4.0 controller: each pass queues a `down` for every
    /// expired lease, `{"name","verb":"down"}` as the CLI's own).
    LeaseReaped(Box<Operation>),
}

impl Observed {
    /// The instance the change is about.
    #[must_use]
    pub fn instance(&self) -> &str {
        match self {
            Self::Appeared { name, .. } | Self::Tombstoned { name } => name,
            Self::Finished(op) | Self::LeaseReaped(op) => &op.instance,
        }
    }

    /// The Activity line for it at `at` (unix seconds): `observed alpha
    /// appeared`, `observed alpha tombstoned`, `controller alpha succeeded:
    /// down in 0.4s, after 3m 19s queued` (its run time, then its wait in
    /// the queue: [`Operation::took_and_queued`]), `controller bravo failed: up in 5s: code: message`.
    #[must_use]
    pub fn activity(&self, at: i64) -> Activity {
        match self {
            Self::Appeared { name, reborn } => Activity::new(
                at,
                Actor::Observed,
                name,
                ActivityKind::Appeared,
                if *reborn { "born again" } else { "" },
            ),
            Self::Tombstoned { name } => {
                Activity::new(at, Actor::Observed, name, ActivityKind::Tombstoned, "")
            }
            Self::Finished(op) => {
                let kind = match op.status {
                    OpStatus::Succeeded => ActivityKind::Succeeded,
                    OpStatus::Failed => ActivityKind::Failed,
                    OpStatus::Cancelled => ActivityKind::Cancelled,
                    _ => ActivityKind::Interrupted,
                };
                let mut detail = format!("{} in {}", op.verb, op.took_and_queued(at));
                if let OpStatus::Other(status) = &op.status {
                    detail.push_str(&format!(" ({status})"));
                }
                if let Some(error) = op.error_json.as_deref().and_then(parse_error) {
                    detail.push_str(": ");
                    detail.push_str(&error.summary());
                }
                Activity::new(at, Actor::Controller, &op.instance, kind, detail)
            }
            Self::LeaseReaped(op) => Activity::new(
                at,
                Actor::Controller,
                &op.instance,
                ActivityKind::Reaped,
                format!(
                    "by its lease reaper (lease expired): down in {}",
                    op.took_and_queued(at)
                ),
            ),
        }
    }
}

/// What changed from `prev` to `next`, instances first (by name), then
/// operations (in `next`'s order). An operation counts as finished when it
/// is finished in `next` and was pending in `prev` or not in `prev` at all
/// (it ran between the two snapshots); one already finished in `prev` is
/// never reported again.
#[must_use]
pub fn changes(prev: &Rows, next: &Rows) -> Vec<Observed> {
    let mut out = Vec::new();
    // Both in strict name order (every snapshot of a store stackless
    // wrote): one walk side by side instead of a binary search per
    // instance, which cost 100,000 cache-missing searches at 100k
    // instances. Otherwise (duplicate names, rows made by hand) as before.
    let strict = |rows: &Rows| rows.instances.is_sorted_by(|a, b| a.name < b.name);
    let merge = strict(prev) && strict(next);
    let mut cursor = 0;
    for instance in &next.instances {
        let before = if merge {
            while prev
                .instances
                .get(cursor)
                .is_some_and(|old| old.name < instance.name)
            {
                cursor += 1;
            }
            let old = prev.instances.get(cursor);
            if old.is_some_and(|old| std::sync::Arc::ptr_eq(old, instance)) {
                // The same row, shared by the two reads: nothing changed.
                continue;
            }
            old.filter(|old| old.name == instance.name)
                .map(std::sync::Arc::as_ref)
        } else {
            prev.instance(&instance.name)
        };
        let active = instance.status == Status::Active;
        match before {
            None => out.push(Observed::Appeared {
                name: instance.name.clone(),
                reborn: false,
            }),
            Some(old) => {
                let new_birth = match (&old.birth, &instance.birth) {
                    (Some(a), Some(b)) => a.instance_id() != b.instance_id(),
                    _ => false,
                };
                if active && (old.status == Status::Tombstoned || new_birth) {
                    out.push(Observed::Appeared {
                        name: instance.name.clone(),
                        reborn: true,
                    });
                } else if instance.status == Status::Tombstoned && old.status != Status::Tombstoned
                {
                    out.push(Observed::Tombstoned {
                        name: instance.name.clone(),
                    });
                }
            }
        }
    }
    let before: HashMap<&str, &OpStatus> = prev
        .operations
        .iter()
        .map(|op| (op.id.as_str(), &op.status))
        .collect();
    for op in &next.operations {
        if op.status.is_pending() {
            continue;
        }
        if before.get(op.id.as_str()).is_none_or(|s| s.is_pending()) {
            let op = Box::new(op.clone());
            out.push(if lease_reaped(prev, next, &op) {
                Observed::LeaseReaped(op)
            } else {
                Observed::Finished(op)
            });
        }
    }
    out
}

/// Whether `op` is a `down` that succeeded on an instance whose lease (as
/// `prev` held it, else `next`) had run out by the time it was queued: what
/// the 0.4.0 controller's lease reaper queues.
fn lease_reaped(prev: &Rows, next: &Rows, op: &Operation) -> bool {
    op.verb == "down"
        && op.status == OpStatus::Succeeded
        && prev
            .instance(&op.instance)
            .or_else(|| next.instance(&op.instance))
            .and_then(|i| i.lease)
            .is_some_and(|lease| lease.expires_at <= op.created_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rows::{Birth, Instance, Lease};

    fn instance(name: &str, status: Status, birth: &str) -> Instance {
        Instance {
            name: name.into(),
            substrate: "local".into(),
            status,
            created_at: Some(1),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 60,
                expires_at: 2_000,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: Some(false),
            birth: Some(Birth::new(birth, &format!("sl-{birth}"))),
        }
    }

    fn op(id: &str, name: &str, verb: &str, status: OpStatus) -> Operation {
        Operation {
            id: id.into(),
            instance: name.into(),
            instance_id: None,
            verb: verb.into(),
            status,
            cancel_requested: false,
            created_at: 1_000,
            updated_at: 1_002,
            error_json: None,
            progress: None,
            ran: None,
        }
    }

    fn lines(prev: &Rows, next: &Rows) -> Vec<String> {
        changes(prev, next)
            .iter()
            .map(|c| {
                let a = c.activity(1_010);
                format!("{} {} {}: {}", a.actor, a.instance, a.kind, a.detail)
            })
            .collect()
    }

    #[test]
    fn two_snapshots_give_exact_lines() {
        let prev = Rows {
            instances: vec![
                instance("alpha", Status::Active, "a1"),
                instance("bravo", Status::Active, "b1"),
                instance("delta", Status::Tombstoned, "d1"),
            ]
            .into(),
            operations: vec![
                op("op-1", "alpha", "down", OpStatus::Running),
                op("op-2", "bravo", "up", OpStatus::Queued),
                op("op-0", "delta", "down", OpStatus::Succeeded),
            ],
            ..Rows::default()
        };
        let mut failed = op("op-2", "bravo", "up", OpStatus::Failed);
        failed.error_json = Some(
            r#"{"schema_version":2,"code":"engine.source_override.shared","message":"service \"web\" --source path \"/src\" is already pinned by active instance \"alpha\""}"#
                .into(),
        );
        let next = Rows {
            instances: vec![
                instance("alpha", Status::Tombstoned, "a1"),
                instance("bravo", Status::Active, "b1"),
                instance("charlie", Status::Active, "c1"),
                instance("delta", Status::Active, "d2"),
            ]
            .into(),
            operations: vec![
                op("op-3", "charlie", "up", OpStatus::Running),
                failed,
                op("op-1", "alpha", "down", OpStatus::Succeeded),
                op("op-0", "delta", "down", OpStatus::Succeeded),
            ],
            ..Rows::default()
        };
        assert_eq!(
            lines(&prev, &next),
            [
                "observed alpha tombstoned: ",
                "observed charlie appeared: ",
                "observed delta appeared: born again",
                "controller bravo failed: up in ≤2s (queue wait included): engine.source_override.shared: service \"web\" --source path \"/src\" is already pinned by active instance \"alpha\"",
                "controller alpha succeeded: down in ≤2s (queue wait included)",
            ]
        );
        // The same snapshot again: nothing new.
        assert!(changes(&next, &next).is_empty());
    }

    /// A `down` the controller queued for a lease already run out is its
    /// lease reaper's, and reads so (`reaped`); a `down` queued while the
    /// lease still ran, or one that failed, reads as the controller's
    /// operation.
    #[test]
    fn a_down_queued_after_the_lease_ran_out_is_the_lease_reapers() {
        let mut expired = instance("alpha", Status::Active, "a1");
        expired.lease = Some(Lease {
            duration_secs: 60,
            expires_at: 999,
        });
        let mut failing = instance("bravo", Status::Active, "b1");
        failing.lease = expired.lease;
        let prev = Rows {
            instances: vec![expired, failing, instance("charlie", Status::Active, "c1")].into(),
            operations: vec![
                op("op-1", "alpha", "down", OpStatus::Running),
                op("op-2", "bravo", "down", OpStatus::Running),
                op("op-3", "charlie", "down", OpStatus::Running),
            ],
            ..Rows::default()
        };
        let mut next = prev.clone();
        next.operations = vec![
            op("op-1", "alpha", "down", OpStatus::Succeeded),
            op("op-2", "bravo", "down", OpStatus::Failed),
            op("op-3", "charlie", "down", OpStatus::Succeeded),
        ];
        assert_eq!(
            lines(&prev, &next),
            [
                "controller alpha reaped: by its lease reaper (lease expired): down in ≤2s (queue wait included)",
                "controller bravo failed: down in ≤2s (queue wait included)",
                "controller charlie succeeded: down in ≤2s (queue wait included)",
            ]
        );
    }

    /// A finished operation's "took" is its run time, its wait in the
    /// queue said apart.
    #[test]
    fn a_finished_operation_says_its_run_and_its_wait_apart() {
        let prev = Rows {
            operations: vec![op("op-1", "alpha", "down", OpStatus::Running)],
            ..Rows::default()
        };
        let mut done = op("op-1", "alpha", "down", OpStatus::Succeeded);
        done.updated_at = 1_199;
        done.ran = Some(crate::model::operation::Ran {
            started_ms: 1_199_300,
            last_ms: 1_199_712,
        });
        let next = Rows {
            operations: vec![done],
            ..Rows::default()
        };
        assert_eq!(
            lines(&prev, &next),
            ["controller alpha succeeded: down in 0.4s, after 3m 19s queued"]
        );
    }

    #[test]
    fn an_operation_that_ran_between_snapshots_is_reported_once() {
        let prev = Rows::default();
        let next = Rows {
            operations: vec![op("op-9", "echo", "gc", OpStatus::Cancelled)],
            ..Rows::default()
        };
        assert_eq!(
            lines(&prev, &next),
            ["controller echo cancelled: gc in ≤2s (queue wait included)"]
        );
        assert!(lines(&next, &next).is_empty());
    }
}
