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
use crate::model::detail::Observation;
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
        _observations: Vec<Observation>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Lease, Liveness, OpLock, Rows, Status};
    use crate::reaper::decision::{Decision, GcDecision, TOMBSTONE_GC_WINDOW_SECS};

    const NOW: i64 = 1_795_960_686;

    fn instance(name: &str, status: Status, expires_at: Option<i64>, created: i64) -> Instance {
        Instance {
            name: name.into(),
            substrate: "local".into(),
            status,
            created_at: Some(created),
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

    /// The streamed pass, fed as `Store::stream_snapshot` feeds it: the
    /// head (no instances), then each instance with only its own lock
    /// holder's liveness in the head.
    fn streamed(whole: &Snapshot, now: i64, allow_gc: bool) -> PassRead {
        let mut head = Snapshot::from(Rows {
            reap_attempts: whole.rows.reap_attempts.clone(),
            operations: whole.rows.operations.clone(),
            ..Rows::default()
        });
        let mut reader = Streamed::new(now, allow_gc);
        reader.head(&head).unwrap();
        for instance in &whole.instances {
            let live = head.liveness_mut();
            live.clear();
            if let Some(l) = whole.lock_liveness(&instance.name) {
                live.insert(instance.name.clone(), l.clone());
            }
            reader
                .instance(0, &head, instance, None, Vec::new())
                .unwrap();
        }
        reader.finish(&head).unwrap();
        reader.into_read().unwrap()
    }

    #[test]
    fn the_streamed_pass_decides_as_the_whole_one_and_holds_only_what_it_reaps() {
        let mut tomb = instance("old", Status::Tombstoned, None, NOW - 9);
        tomb.tombstoned_at = Some(NOW - TOMBSTONE_GC_WINDOW_SECS);
        let mut locked = instance("locked", Status::Active, Some(NOW - 10), NOW - 50);
        locked.lock = Some(Box::new(OpLock {
            operation: "up".into(),
            holder_pid: 1,
            holder_start_time: 1,
            acquired_at: NOW - 3,
            holder_host: Some("vm".into()),
            claim_id: None,
        }));
        let mut snapshot = Snapshot::from(Rows {
            instances: vec![
                instance("alpha", Status::Active, Some(NOW + 1), NOW - 40),
                instance("backing", Status::Active, Some(NOW - 100), NOW - 30),
                instance("due", Status::Active, Some(NOW), NOW - 20),
                locked,
                tomb,
                instance("zulu", Status::Active, Some(NOW - 1), NOW - 3),
            ]
            .into(),
            reap_attempts: vec![
                ReapAttempt {
                    instance: "backing".into(),
                    attempts: 2,
                    last_error: "boom".into(),
                    next_retry_at: NOW + 50,
                },
                ReapAttempt {
                    instance: "zulu".into(),
                    attempts: 1,
                    last_error: "boom".into(),
                    next_retry_at: NOW - 5,
                },
            ],
            ..Rows::default()
        });
        snapshot
            .liveness_mut()
            .insert("locked".into(), Liveness::Alive);
        for allow_gc in [true, false] {
            let whole = PassRead::whole(&snapshot, NOW, allow_gc);
            let read = streamed(&snapshot, NOW, allow_gc);
            assert_eq!(read.plan, whole.plan);
            assert_eq!(read.acted, whole.acted);
            assert_eq!((read.instances, whole.instances), (6, 6));
            assert_eq!(read.newest, whole.newest);
        }
        let read = streamed(&snapshot, NOW, true);
        assert_eq!(
            read.plan.reaps,
            vec![
                ("backing".into(), Decision::WaitBackoff { until: NOW + 50 }),
                ("due".into(), Decision::Reap),
                ("locked".into(), Decision::SkipLocked(Liveness::Alive)),
                ("zulu".into(), Decision::Reap),
            ]
        );
        assert_eq!(read.plan.gc, vec![("old".into(), GcDecision::Collect)]);
        let held: Vec<(&str, Option<i64>)> = read
            .acted
            .iter()
            .map(|(i, a)| (i.name.as_str(), a.as_ref().map(|a| a.attempts)))
            .collect();
        assert_eq!(held, [("due", None), ("zulu", Some(1))]);
        // The newest write is the lock's `acquired_at` and zulu's
        // `created_at` (NOW - 3): the first read is the one named.
        assert_eq!(
            read.newest.map(|n| (n.at, n.what)),
            Some((NOW - 3, "op_locks.acquired_at of locked".to_owned()))
        );
    }
}
