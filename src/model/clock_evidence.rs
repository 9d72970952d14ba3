//! The store's own times as evidence about the wall clock (a clock that
//! is wrong as a whole must not make the reaper act early).
//!
//! A machine whose whole clock is wrong fools the kernel check
//! (`reaper::clock::doubt`: btime + uptime move with it). The store keeps
//! times its writers took from their clocks: instances' `created_at` and
//! `tombstoned_at`, a lock's `acquired_at`, an operation's `created_at`
//! and `updated_at` (0.4.0 controller, schema 14). When the wall clock
//! reads more than [`PLAUSIBLE_BEHIND_SECS`] *behind* the newest of them,
//! either this clock is wrong or every writer's was: leases cannot be
//! judged, and the reaper and GC pause (the same `clock` pause as the
//! kernel check).
//!
//! A wall clock far *ahead* of the newest write is not evidence: a store
//! can sit idle for months, and nothing writes while nothing runs. Future
//! times that are future by design (a lease's `expires_at`, a backoff's
//! `next_retry_at`) are not write times and are never read here. Pure:
//! the rows and the wall clock are parameters.

use super::rows::Rows;

/// How far the wall clock may read behind the store's newest write before
/// it is doubted: the same slack as the kernel check (5 min covers the
/// skew between hosts sharing a store and NTP corrections).
pub(crate) const PLAUSIBLE_BEHIND_SECS: i64 = 300;

/// The newest time a writer put in the store, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewestWrite {
    /// Unix seconds.
    pub at: i64,
    /// The column and row it is in: `instances.created_at of alpha`.
    pub what: String,
}

/// The newest write time in `rows` (see the module doc for the columns),
/// `None` for a store with none.
#[must_use]
pub(crate) fn newest_write(rows: &Rows) -> Option<NewestWrite> {
    let mut scan = NewestWriteScan::default();
    for instance in &rows.instances {
        scan.instance(instance);
    }
    scan.operations(&rows.operations);
    scan.newest
}

/// [`newest_write`] one row at a time, for a read that holds one instance
/// at a time: every instance in the rows' order, then the operations;
/// the first of equal times is the one named, as [`newest_write`] names it.
#[derive(Debug, Default)]
pub(crate) struct NewestWriteScan {
    newest: Option<NewestWrite>,
}

impl NewestWriteScan {
    fn offer(&mut self, at: i64, what: &dyn Fn() -> String) {
        if self.newest.as_ref().is_none_or(|n| at > n.at) {
            self.newest = Some(NewestWrite { at, what: what() });
        }
    }

    /// One instance's write times. A name is sanitized only when its row
    /// is the newest so far, not for every row (measured: that was 5 % of
    /// a 100k dry run).
    pub(crate) fn instance(&mut self, instance: &super::Instance) {
        let name = || super::text::sanitize_short(&instance.name, 40);
        if let Some(at) = instance.created_at {
            self.offer(at, &|| format!("instances.created_at of {}", name()));
        }
        if let Some(at) = instance.tombstoned_at {
            self.offer(at, &|| format!("instances.tombstoned_at of {}", name()));
        }
        if let Some(lock) = &instance.lock {
            self.offer(lock.acquired_at, &|| {
                format!("op_locks.acquired_at of {}", name())
            });
        }
    }

    /// The operations' write times, after every instance.
    pub(crate) fn operations(&mut self, operations: &[super::Operation]) {
        for op in operations {
            let id = || super::text::sanitize_short(&op.id, 40);
            self.offer(op.created_at, &|| {
                format!("operations.created_at of {}", id())
            });
            self.offer(op.updated_at, &|| {
                format!("operations.updated_at of {}", id())
            });
        }
    }

    /// The newest write offered, `None` when none was.
    pub(crate) fn newest(self) -> Option<NewestWrite> {
        self.newest
    }
}

/// How many seconds the wall clock `wall` reads behind `newest`, when that
/// is more than [`PLAUSIBLE_BEHIND_SECS`]: the clock is implausible.
/// `None` otherwise (within the slack, or ahead by any amount).
#[must_use]
pub(crate) fn behind(wall: i64, newest: &NewestWrite) -> Option<i64> {
    let behind = newest.at.saturating_sub(wall);
    (behind > PLAUSIBLE_BEHIND_SECS).then_some(behind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Generation, Instance, Status};

    const NOW: i64 = 1_795_960_686;

    fn instance(name: &str, created: i64, tombstoned: Option<i64>) -> Instance {
        Instance {
            name: name.into(),
            substrate: "local".into(),
            status: if tombstoned.is_some() {
                Status::Tombstoned
            } else {
                Status::Active
            },
            created_at: Some(created),
            tombstoned_at: tombstoned,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        }
    }

    #[test]
    fn the_newest_write_is_named_and_a_clock_a_year_behind_it_is_doubted() {
        let rows = Rows {
            generation: Generation::new(5),
            instances: vec![
                instance("alpha", NOW - 100, None),
                instance("bravo", NOW - 9_000, Some(NOW - 50)),
            ]
            .into(),
            ..Rows::default()
        };
        let newest = newest_write(&rows).unwrap();
        assert_eq!(
            newest,
            NewestWrite {
                at: NOW - 50,
                what: "instances.tombstoned_at of bravo".into()
            }
        );
        // The machine's whole clock set a year back.
        let year = 365 * 86_400;
        assert_eq!(behind(NOW - year, &newest), Some(year - 50));
        assert_eq!(behind(NOW - 50 - 300, &newest), None, "within 5 min");
        assert_eq!(behind(NOW - 50 - 301, &newest), Some(301));
        // Far ahead of the newest write: an idle store, not evidence.
        assert_eq!(behind(NOW + 10 * year, &newest), None);
        assert_eq!(newest_write(&Rows::default()), None);
    }
}
