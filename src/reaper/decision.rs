//! The reaper's decision, as a pure function of (now, rows): stackless §6
//! re-implemented, as each release decides. No I/O here: the reaper thread
//! (`super::runner`) reads the store, asks this module what to do, and acts.
//!
//! Per release (docs/stackless-releases.md, "Schema 5" and "The
//! controller's reaper (0.4.0), each pass"):
//! - v4/v5 (the contract; stackless 0.2/0.3 daemons): worklist, lock skip,
//!   backoff wait, reap; tombstones past 7 days are collected here.
//! - v14 (the 0.4.0 controller, daemon-0.4.0/src/reaper.rs:6-26): the same
//!   worklist minus every name with a queued or running operation (matched
//!   by name, [`Decision::SkipPending`]), then lock and backoff as before.
//!   Old `reap_attempts` rows are still honoured as backoff by the
//!   controller, which clears them on a successful `down`.
//! - **GC is off on v14**: tombstones due are listed
//!   ([`Plan::tombstones_due`]) and left to the controller. Its collection
//!   is guarded by far more than the row: the birth (`owner_id` must still
//!   be the name's `instance_id`), the runtime-command lock under
//!   `<state_dir>/locks/stripe/<hash>.lock` (keyed by a `DefaultHasher`
//!   digest of a canonical path, under the state dir taken from the
//!   environment), no checkpoint and no non-absent `resources` row, and its
//!   own `gc` operation lock; it removes `logs/<resource_namespace>/` and
//!   `runtime/<instance_id>/`. Reimplementing that guard here risks
//!   deleting a row (and logs) that is still teardown evidence, for nothing:
//!   the controller resubmits its `gc` every tick while a tombstone is due.

use std::collections::HashMap;

use crate::model::name::is_dns_safe;
use crate::model::{Instance, Liveness, OpStatus, Operation, ReapAttempt, Snapshot, Status};

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
    /// The controller has a queued or running operation on this name
    /// (v14; daemon-0.4.0/src/reaper.rs:10): it will run first, and a `down`
    /// submitted now would only queue behind it.
    SkipPending {
        /// The pending operation's verb (`up`, `down`, `verify`, `gc`).
        verb: String,
        /// Queued or running.
        status: OpStatus,
    },
    /// A previous reap failed and its backoff runs until this unix second.
    WaitBackoff {
        /// `next_retry_at`.
        until: i64,
    },
    /// The name is not DNS-safe: stackless never wrote it, so it is never
    /// passed to a command ("Instance names").
    RefuseName,
}

/// The §6 step 2 decision for one instance already on the worklist: a
/// pending operation first (v14: the controller's rule; `None` elsewhere),
/// then the lock (`held`, from [`Liveness::held`]), then the backoff gate
/// (`next_retry_at > now` waits), else reap. The name check comes before
/// all: a hostile name is never acted upon.
#[must_use]
pub fn decide(
    name: &str,
    now: i64,
    pending: Option<&Operation>,
    lock: Option<&Liveness>,
    prior: Option<&ReapAttempt>,
) -> Decision {
    if !is_dns_safe(name) {
        return Decision::RefuseName;
    }
    if let Some(op) = pending {
        return Decision::SkipPending {
            verb: op.verb.clone(),
            status: op.status.clone(),
        };
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
    /// Tombstones past the 7-day window that this console leaves to
    /// stackless (v14: the controller collects them; see the module docs),
    /// ordered by name. Empty where the console collects them itself.
    pub tombstones_due: Vec<String>,
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
/// store's generation ([`crate::model::Generation::allows_gc`]). Pending
/// operations come from [`crate::model::Rows::pending_operations`] (empty
/// before v8), looked up through a map built once: linear in the rows.
#[must_use]
pub fn plan(snapshot: &Snapshot, now: i64, allow_gc: bool) -> Plan {
    let mut planner = Planner::new(snapshot, now, allow_gc);
    // `snapshot.instances` is ordered by name, so the lists are too.
    for instance in &snapshot.instances {
        planner.instance(
            instance,
            snapshot.lock_liveness(&instance.name),
            snapshot.reap_attempt(&instance.name),
        );
    }
    planner.plan
}

/// [`plan`] one instance at a time, for a read that holds one instance at
/// a time: every caller of the pass's decision goes through
/// [`Planner::instance`], handed the instances in name order.
#[derive(Debug)]
pub struct Planner {
    now: i64,
    allow_gc: bool,
    /// The oldest pending operation of each name (stackless 0.4.0's
    /// controller: any queued or running one holds the reaper off).
    pending: HashMap<String, Operation>,
    /// The pass decided so far.
    pub plan: Plan,
}

impl Planner {
    /// A pass at `now` (unix seconds) over a store whose pending
    /// operations are `head`'s ([`crate::model::Rows::pending_operations`]);
    /// `allow_gc` as [`plan`]'s.
    #[must_use]
    pub fn new(head: &Snapshot, now: i64, allow_gc: bool) -> Self {
        let mut pending: HashMap<String, Operation> = HashMap::new();
        for op in head.pending_operations() {
            // The oldest pending operation of a name is the one shown.
            pending
                .entry(op.instance.clone())
                .or_insert_with(|| op.clone());
        }
        Self {
            now,
            allow_gc,
            pending,
            plan: Plan::default(),
        }
    }

    /// Decide one instance (after every instance before it by name):
    /// `lock` its lock holder's liveness, `prior` its `reap_attempts` row.
    /// Whether it went onto the worklist with [`Decision::Reap`] (the
    /// instances a pass acts on).
    pub fn instance(
        &mut self,
        instance: &Instance,
        lock: Option<&Liveness>,
        prior: Option<&ReapAttempt>,
    ) -> bool {
        let now = self.now;
        if on_worklist(instance, now) {
            let decision = decide(
                &instance.name,
                now,
                self.pending.get(instance.name.as_str()),
                lock,
                prior,
            );
            let reap = decision == Decision::Reap;
            self.plan.reaps.push((instance.name.clone(), decision));
            return reap;
        }
        if gc_due(instance, now) {
            if self.allow_gc {
                let decision = if is_dns_safe(&instance.name) {
                    GcDecision::Collect
                } else {
                    GcDecision::RefuseName
                };
                self.plan.gc.push((instance.name.clone(), decision));
            } else {
                self.plan.tombstones_due.push(instance.name.clone());
            }
        }
        false
    }
}

/// The operator keys' instance rules live in the pure core (every caller,
/// key or agent, goes through [`crate::model::rules::admit`]).
pub use crate::model::rules::{KeyRefusal, may_reap_now, may_tear_down};

/// Why the reaper may not act on the store as it is now, if it may not:
/// checked at every pass and by every teardown job, on its own open of the
/// file (so a store swapped, restored or migrated under a running console
/// is judged as it is, not as it was at start-up). In order:
/// - the generation predates reap bookkeeping (`schema v2`): a failure
///   could not be recorded, so nothing would back off;
/// - the file cannot be written by this process (opened read-write, but
///   `SQLite` fell back to read-only: permissions, a read-only mount): the
///   same;
/// - a failed reap could not be recorded (`unrecorded`: the store error,
///   e.g. read-only since start-up, disk full, an I/O error): it did not
///   back off, so the next pass would tear the same instance down again;
///   the reaper writes the owed record at each pass and resumes when one
///   is written;
/// - the audit trail cannot be written (`audit`, [`crate::audit::Health`]:
///   disk full, an I/O error, a rotation refused): nothing is done that
///   would go unrecorded (`docs/ARCHITECTURE.md`, "What is learned about
///   a store, and learned again": the audit trail is a pause reason);
///   resumes once an owed line is written;
/// - the wall clock looks wrong ([`super::clock::doubt`]): leases and the
///   tombstone window cannot be judged;
/// - the operator paused this console's reaper (`P`, `operator_paused`;
///   [`super::control`]): the passes only, so a teardown job (an operator
///   key) passes `false`.
#[must_use]
pub fn pause_reason(
    generation: crate::model::Generation,
    writable: bool,
    unrecorded: Option<&str>,
    audit: Option<&str>,
    clock: Option<super::clock::ClockDoubt>,
    operator_paused: bool,
) -> Option<String> {
    if let Some(off) = generation.reaper_off() {
        return Some(format!(
            "reaper paused: {off} predates reap bookkeeping; nothing is torn down until stackless upgrades the store"
        ));
    }
    if !writable {
        return Some(
            "reaper paused: the store file is read-only for this process; nothing is torn down (a failure could not be recorded)"
                .into(),
        );
    }
    if let Some(error) = unrecorded {
        return Some(format!(
            "reaper paused: failures cannot be recorded in the store ({error}); nothing is torn down until the store accepts writes"
        ));
    }
    if let Some(error) = audit {
        return Some(format!(
            "reaper paused: the audit trail cannot be written ({error}); nothing is torn down until it can"
        ));
    }
    if let Some(doubt) = clock {
        return Some(doubt.to_string());
    }
    operator_paused.then(|| OPERATOR_PAUSE.to_owned())
}

/// The operator pause, as [`pause_reason`] says it.
pub const OPERATOR_PAUSE: &str = "reaper paused by the operator (P resumes); its role is given up meanwhile: another console or reap --once may reap";

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
            anomalies: Default::default(),
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
        assert_eq!(decide("golf", NOW, None, None, None), Decision::Reap);
        assert_eq!(
            decide("golf", NOW, None, Some(&Liveness::Alive), None),
            Decision::SkipLocked(Liveness::Alive)
        );
        assert_eq!(
            decide(
                "golf",
                NOW,
                None,
                Some(&Liveness::ForeignHost("b".into())),
                None
            ),
            Decision::SkipLocked(Liveness::ForeignHost("b".into()))
        );
        // A stale lock does not block (the holder is dead).
        assert_eq!(
            decide("golf", NOW, None, Some(&Liveness::StalePidGone), None),
            Decision::Reap
        );
        assert_eq!(
            decide("golf", NOW, None, Some(&Liveness::StalePidReused), None),
            Decision::Reap
        );
        // The lock wins over the backoff.
        assert_eq!(
            decide(
                "golf",
                NOW,
                None,
                Some(&Liveness::Alive),
                Some(&attempt("golf", 3, NOW + 173))
            ),
            Decision::SkipLocked(Liveness::Alive)
        );
        assert_eq!(
            decide(
                "golf",
                NOW,
                None,
                None,
                Some(&attempt("golf", 3, NOW + 173))
            ),
            Decision::WaitBackoff { until: NOW + 173 }
        );
        // next_retry_at == now: the gate is `> now`, so it is due.
        assert_eq!(
            decide("golf", NOW, None, None, Some(&attempt("golf", 3, NOW))),
            Decision::Reap
        );
        assert_eq!(
            decide("x; rm -rf /", NOW, None, None, None),
            Decision::RefuseName
        );
        assert_eq!(
            decide("--help", NOW, None, None, None),
            Decision::RefuseName
        );
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
        locked.lock = Some(Box::new(OpLock {
            operation: "up".into(),
            holder_pid: 1,
            holder_start_time: 1,
            acquired_at: 1,
            holder_host: Some("vm".into()),
            claim_id: None,
        }));
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
            ]
            .into(),
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

    fn op(instance: &str, verb: &str, status: OpStatus) -> Operation {
        Operation {
            id: format!("op-{instance}"),
            instance: instance.into(),
            instance_id: None,
            verb: verb.into(),
            status,
            cancel_requested: false,
            created_at: NOW - 5,
            updated_at: NOW - 5,
            error_json: None,
            progress: None,
            ran: None,
        }
    }

    #[test]
    fn v14_skips_pending_names_and_leaves_gc_to_the_controller() {
        let mut tomb_old = instance("old", Status::Tombstoned, None);
        tomb_old.tombstoned_at = Some(NOW - TOMBSTONE_GC_WINDOW_SECS - 1);
        let mut locked = instance("locked", Status::Active, Some(NOW - 10));
        locked.lock = Some(Box::new(OpLock {
            operation: "down".into(),
            holder_pid: 1,
            holder_start_time: 1,
            acquired_at: 1,
            holder_host: Some("vm".into()),
            claim_id: Some("c".into()),
        }));
        let mut snapshot = Snapshot::from(Rows {
            generation: crate::model::Generation::new(14),
            instances: vec![
                instance("alpha", Status::Active, Some(NOW - 1)),
                instance("bravo", Status::Active, Some(NOW - 1)),
                locked,
                tomb_old,
            ]
            .into(),
            operations: vec![
                op("alpha", "down", OpStatus::Running),
                op("locked", "up", OpStatus::Queued),
                op("bravo", "up", OpStatus::Failed),
            ],
            ..Rows::default()
        });
        snapshot
            .liveness_mut()
            .insert("locked".into(), Liveness::Alive);
        let plan = plan(&snapshot, NOW, false);
        assert_eq!(
            plan.reaps,
            vec![
                (
                    "alpha".into(),
                    Decision::SkipPending {
                        verb: "down".into(),
                        status: OpStatus::Running
                    }
                ),
                ("bravo".into(), Decision::Reap),
                (
                    "locked".into(),
                    Decision::SkipPending {
                        verb: "up".into(),
                        status: OpStatus::Queued
                    }
                ),
            ]
        );
        assert!(plan.gc.is_empty());
        assert_eq!(plan.tombstones_due, vec!["old".to_owned()]);
        // Where the console collects (v4/v5), nothing is "left".
        assert!(super::plan(&snapshot, NOW, true).tombstones_due.is_empty());

        let alpha = snapshot.instance("alpha").unwrap();
        let refusal = may_tear_down(alpha, None, snapshot.pending_operation("alpha"));
        assert_eq!(
            refusal,
            Err(KeyRefusal::Pending {
                verb: "down".into(),
                status: OpStatus::Running
            })
        );
        assert_eq!(
            refusal.unwrap_err().to_string(),
            "refused: operation pending (down running); the controller runs it first"
        );
        assert!(matches!(
            may_reap_now(alpha, None, snapshot.pending_operation("alpha"), NOW),
            Err(KeyRefusal::Pending { .. })
        ));
        let bravo = snapshot.instance("bravo").unwrap();
        assert_eq!(
            may_reap_now(bravo, None, snapshot.pending_operation("bravo"), NOW),
            Ok(())
        );
    }

    #[test]
    fn key_rules() {
        let expired = instance("golf", Status::Active, Some(NOW - 1));
        let fresh = instance("alpha", Status::Active, Some(NOW + 100));
        let tomb = instance("charlie", Status::Tombstoned, None);
        assert_eq!(may_reap_now(&expired, None, None, NOW), Ok(()));
        assert_eq!(
            may_reap_now(&fresh, None, None, NOW),
            Err(KeyRefusal::LeaseNotExpired)
        );
        assert_eq!(may_tear_down(&fresh, None, None), Ok(()));
        assert_eq!(may_tear_down(&tomb, None, None), Err(KeyRefusal::NotActive));
        assert_eq!(
            may_reap_now(&expired, Some(&Liveness::Alive), None, NOW),
            Err(KeyRefusal::Locked(Liveness::Alive))
        );
        assert_eq!(
            may_reap_now(&expired, Some(&Liveness::StalePidGone), None, NOW),
            Ok(())
        );
        let hostile = instance("--help", Status::Active, Some(NOW - 1));
        assert_eq!(
            may_reap_now(&hostile, None, None, NOW),
            Err(KeyRefusal::NotDnsSafe)
        );
        assert_eq!(
            KeyRefusal::NotDnsSafe.to_string(),
            "refused: not a DNS-safe name"
        );
    }

    #[test]
    fn pauses_in_order_schema_then_read_only_then_clock() {
        use crate::model::Generation;
        let doubt = Some(super::super::clock::ClockDoubt::AheadOfKernel { ahead: 86_400 });
        assert_eq!(
            pause_reason(Generation::new(5), true, None, None, None, false),
            None
        );
        assert_eq!(
            pause_reason(Generation::new(5), true, None, None, None, true).as_deref(),
            Some(OPERATOR_PAUSE)
        );
        assert_eq!(
            pause_reason(Generation::new(14), true, None, None, None, false),
            None
        );
        assert_eq!(
            pause_reason(Generation::new(2), false, None, None, doubt.clone(), true).as_deref(),
            Some(
                "reaper paused: schema v2 predates reap bookkeeping; nothing is torn down until stackless upgrades the store"
            )
        );
        assert_eq!(
            pause_reason(Generation::new(5), false, None, None, doubt.clone(), true).as_deref(),
            Some(
                "reaper paused: the store file is read-only for this process; nothing is torn down (a failure could not be recorded)"
            )
        );
        assert_eq!(
            pause_reason(
                Generation::new(5),
                true,
                Some("disk full"),
                Some("No space left on device (os error 28)"),
                doubt.clone(),
                true
            )
            .as_deref(),
            Some(
                "reaper paused: failures cannot be recorded in the store (disk full); nothing is torn down until the store accepts writes"
            )
        );
        assert_eq!(
            pause_reason(
                Generation::new(5),
                true,
                None,
                Some("No space left on device (os error 28)"),
                doubt.clone(),
                true
            )
            .as_deref(),
            Some(
                "reaper paused: the audit trail cannot be written (No space left on device (os error 28)); nothing is torn down until it can"
            )
        );
        assert_eq!(
            pause_reason(Generation::new(5), true, None, None, doubt.clone(), true),
            doubt.map(|d| d.to_string())
        );
    }
}
