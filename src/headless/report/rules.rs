//! The reaper's rules as the report reads them ([`Rules`]): what it would
//! do with each instance, decided as [`decision::plan`] decides, and the
//! rows of the snapshot each instance's fields look up once ([`Looked`]).

use crate::model::{Instance, Operation, ReapAttempt, Snapshot};
use crate::reaper::clock::ClockDoubt;
use crate::reaper::decision::{self, Decision};

/// What the reaper would do, decided per instance with the rules of
/// [`decision::plan`] (the same decisions, without building the plan):
/// only where it may run (not on older stores). Holds no borrow of the
/// snapshot: a streamed one ([`JsonStream`](super::JsonStream)) is lent a
/// row at a time.
pub(crate) struct Rules {
    reaper: bool,
    /// The wall clock looks wrong (`crate::reaper::clock::ClockDoubt`):
    /// the reaper would not act, whatever the row (`paused: clock`, as
    /// `reap --once` and the console's reaper pause).
    clock_paused: bool,
    /// The oldest pending operation of each name, as its index in
    /// [`Snapshot::pending_operations`].
    pending: std::collections::HashMap<String, usize>,
    /// Where the last reap attempt looked up was in the snapshot's
    /// (sorted) reap attempts: the instances come in name order, so the
    /// next one is found by stepping on, not by a binary search each.
    attempt_at: std::cell::Cell<usize>,
    /// Two reap attempts name one instance (a hand-made store): each
    /// looked up as [`Snapshot::reap_attempt`] finds it.
    attempt_twins: bool,
}

impl Rules {
    pub(super) fn new(snapshot: &Snapshot, clock: Option<&ClockDoubt>) -> Self {
        let mut pending = std::collections::HashMap::new();
        for (at, op) in snapshot.pending_operations().iter().enumerate() {
            pending.entry(op.instance.clone()).or_insert(at);
        }
        Self {
            reaper: snapshot.generation.allows_reaper(),
            clock_paused: clock.is_some(),
            pending,
            attempt_at: std::cell::Cell::new(0),
            attempt_twins: snapshot
                .reap_attempts
                .windows(2)
                .any(|w| w[0].instance == w[1].instance),
        }
    }

    /// `name`'s reap attempt in `snapshot` ([`Snapshot::reap_attempt`]):
    /// a few steps on from the last one looked up when names come in
    /// order, a binary search otherwise.
    pub(super) fn attempt<'s>(
        &self,
        snapshot: &'s Snapshot,
        name: &str,
    ) -> Option<&'s ReapAttempt> {
        const STEPS: usize = 8;
        if self.attempt_twins {
            return snapshot.reap_attempt(name);
        }
        let attempts = &snapshot.reap_attempts;
        let from = self.attempt_at.get().min(attempts.len());
        let behind = from > 0 && attempts[from - 1].instance.as_str() >= name;
        let at = if behind {
            attempts.partition_point(|a| a.instance.as_str() < name)
        } else {
            let ahead = attempts[from..]
                .iter()
                .take(STEPS)
                .position(|a| a.instance.as_str() >= name);
            match ahead {
                Some(step) => from + step,
                None if attempts.len() - from <= STEPS => attempts.len(),
                None => from + attempts[from..].partition_point(|a| a.instance.as_str() < name),
            }
        };
        self.attempt_at.set(at);
        attempts.get(at).filter(|a| a.instance == name)
    }

    /// What the rules read of `instance`'s other rows in `snapshot`,
    /// looked up once for every field that needs them.
    pub(super) fn look<'s>(&self, snapshot: &'s Snapshot, instance: &Instance) -> Looked<'s> {
        let name = instance.name.as_str();
        Looked {
            liveness: snapshot.lock_liveness(name),
            attempt: self.attempt(snapshot, name),
            pending: self
                .pending
                .get(name)
                .and_then(|&at| snapshot.pending_operations().get(at)),
        }
    }

    /// The reaper column of `instance` (its rows `looked` up) as its text
    /// and machine value (`("skip: locked", "skip_locked")`; `None`: not
    /// on the worklist).
    pub(super) fn reaper(
        &self,
        instance: &Instance,
        now: i64,
        looked: &Looked<'_>,
    ) -> Option<(&'static str, &'static str)> {
        if !self.reaper || !decision::on_worklist(instance, now) {
            return None;
        }
        if self.clock_paused {
            return Some(("paused: clock", "paused_clock"));
        }
        let decided = decision::decide(
            &instance.name,
            now,
            looked.pending,
            looked.liveness,
            looked.attempt,
        );
        Some(match decided {
            Decision::Reap => ("reap", "reap"),
            Decision::SkipLocked(_) => ("skip: locked", "skip_locked"),
            Decision::SkipPending { .. } => ("skip: operation pending", "skip_pending"),
            Decision::WaitBackoff { .. } => ("wait: backoff", "wait_backoff"),
            Decision::RefuseName => ("refuse: not DNS-safe", "refuse_name"),
        })
    }
}

/// One instance's lock holder liveness, reap attempt and oldest pending
/// operation, as [`Rules::look`] found them.
pub(super) struct Looked<'s> {
    pub(super) liveness: Option<&'s crate::model::Liveness>,
    pub(super) attempt: Option<&'s crate::model::ReapAttempt>,
    pub(super) pending: Option<&'s Operation>,
}

impl Looked<'_> {
    /// [`crate::model::readiness::failed_up`] of `instance` with these rows.
    pub(super) fn failed_up(&self, instance: &Instance) -> bool {
        crate::model::readiness::failed_up(
            instance,
            self.pending.is_some(),
            self.liveness.is_some_and(crate::model::Liveness::held),
        )
    }
}
