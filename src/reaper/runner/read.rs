//! The pass's read: the decision ([`crate::reaper::decision::Planner`]) made over the
//! store's rows as they are read, holding only what the pass acts on.
//! `reap --once` streams the rows in name order
//! ([`Store::stream_snapshot`]: one instance held at a time, so its memory
//! does not grow with the store); the reaper thread decides over the whole
//! snapshot it reads (whose rows it shares with the console's watcher).
//! Both go through the same [`crate::reaper::decision::Planner::instance`], in name order
//! (stackless §6 step 1: the worklist ordered by name).

use std::convert::Infallible;
use std::sync::Arc;

use crate::model::clock_evidence::{NewestWrite, NewestWriteScan};
use crate::model::redact::Redactor;
use crate::model::{Instance, ReapAttempt, Snapshot};
use crate::reaper::decision::{Plan, Planner};
use crate::store::StreamReader;
use crate::store::services::ServiceRows;

/// A pass's rows, decided: the plan, the instances decided
/// [`crate::reaper::decision::Decision::Reap`] (each with its `reap_attempts` row, in the
/// plan's order: what a teardown job, or a dry run's re-check, is handed),
/// and what the pass notes of the rest.
#[derive(Debug)]
pub(super) struct PassRead {
    /// The pass's decisions (worklist, GC, tombstones due), in name order.
    pub(super) plan: Plan,
    /// The rows the `Reap` decisions were made from, in the plan's order.
    pub(super) acted: Vec<(Instance, Option<ReapAttempt>)>,
    /// How many instances the store has (all read).
    pub(super) instances: usize,
    /// The store's newest write (`crate::model::clock_evidence`).
    pub(super) newest: Option<NewestWrite>,
    /// The redaction history read with the rows.
    pub(super) redactor: Arc<Redactor>,
}

impl PassRead {
    /// The pass decided over a whole snapshot at `now`.
    pub(super) fn whole(snapshot: &Snapshot, now: i64, allow_gc: bool) -> Self {
        let mut planner = Planner::new(snapshot, now, allow_gc);
        let mut acted = Vec::new();
        for instance in &snapshot.instances {
            let attempt = snapshot.reap_attempt(&instance.name);
            if planner.instance(instance, snapshot.lock_liveness(&instance.name), attempt) {
                acted.push((Instance::clone(instance), attempt.cloned()));
            }
        }
        Self {
            plan: planner.plan,
            acted,
            instances: snapshot.rows.instances.len(),
            newest: crate::model::clock_evidence::newest_write(&snapshot.rows),
            redactor: Arc::clone(&snapshot.redactor),
        }
    }
}

/// The streamed pass: a [`StreamReader`] that decides each instance as it
/// is read and keeps only the ones decided `Reap`.
pub(super) struct Streamed {
    now: i64,
    allow_gc: bool,
    planner: Option<Planner>,
    acted: Vec<(Instance, Option<ReapAttempt>)>,
    instances: usize,
    newest: NewestWriteScan,
    read: Option<PassRead>,
}

impl Streamed {
    /// A pass at `now` (unix seconds); `allow_gc` as [`crate::reaper::decision::plan`]'s.
    pub(super) fn new(now: i64, allow_gc: bool) -> Self {
        Self {
            now,
            allow_gc,
            planner: None,
            acted: Vec::new(),
            instances: 0,
            newest: NewestWriteScan::default(),
            read: None,
        }
    }

    /// The pass decided, once the stream finished.
    pub(super) fn into_read(self) -> Option<PassRead> {
        self.read
    }
}

impl StreamReader for Streamed {
    type Error = Infallible;

    fn wants_services(&self) -> bool {
        false
    }

    fn head(&mut self, head: &Snapshot) -> Result<(), Infallible> {
        self.planner = Some(Planner::new(head, self.now, self.allow_gc));
        Ok(())
    }

    fn instance(
        &mut self,
        _pass: usize,
        head: &Snapshot,
        instance: &Instance,
        _services: Option<ServiceRows>,
    ) -> Result<(), Infallible> {
        self.instances += 1;
        self.newest.instance(instance);
        let attempt = head.reap_attempt(&instance.name);
        if let Some(planner) = &mut self.planner
            && planner.instance(instance, head.lock_liveness(&instance.name), attempt)
        {
            self.acted.push((instance.clone(), attempt.cloned()));
        }
        Ok(())
    }

    fn finish(&mut self, head: &Snapshot) -> Result<(), Infallible> {
        let mut newest = std::mem::take(&mut self.newest);
        newest.operations(&head.rows.operations);
        self.read = Some(PassRead {
            plan: self.planner.take().map(|p| p.plan).unwrap_or_default(),
            acted: std::mem::take(&mut self.acted),
            instances: self.instances,
            newest: newest.newest(),
            redactor: Arc::clone(&head.redactor),
        });
        Ok(())
    }
}
