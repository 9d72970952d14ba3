//! The only rows this console writes (docs/stackless-state-store.md §6):
//! the pre-teardown re-check, `reap_attempts` bookkeeping, and the GC
//! delete of a tombstone past its window. Each write is its own short
//! IMMEDIATE transaction, as stackless's daemon writes them.

use rusqlite::types::ValueRef;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::Layout;
use super::lenient::{col, lenient_int};
use super::read::{attempt_from_row, instance_from_row, join_sql, join_sql_with};
use super::{Store, StoreError};
use crate::model::{Birth, Lease, OpLock, OpStatus, ReapAttempt, Status};

/// An instance's rows as re-read immediately before a teardown (stackless
/// §6 has a check-then-act window; this closes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recheck {
    /// `instances.status`.
    pub status: Status,
    /// The lease row, if any.
    pub lease: Option<Lease>,
    /// The lock row, if any.
    pub lock: Option<OpLock>,
    /// The `reap_attempts` row, if any.
    pub attempt: Option<ReapAttempt>,
    /// The birth (migration 7, stackless 0.4.0): a name reborn between the
    /// decision and the teardown has another `instance_id`. `None` before
    /// migration 7.
    pub birth: Option<Birth>,
    /// `instances.created_at`, unix seconds (`None`: the row holds no
    /// integer): what tells two births of a name apart before migration 7
    /// (`crate::model::birth_check`).
    pub created_at: Option<i64>,
    /// A queued or running operation on this name (0.4.0 controller, matched
    /// by name): its verb and status. `None` before migration 8 or when
    /// nothing is pending.
    pub pending: Option<(String, OpStatus)>,
}

impl Store {
    /// Re-read one instance's status, lease, lock and reap attempt in a fresh
    /// transaction, immediately before a teardown. `None` when the instance
    /// row is gone.
    ///
    /// # Errors
    /// `SQLite` errors.
    pub(super) fn recheck_once(&mut self, name: &str) -> Result<Option<Recheck>, StoreError> {
        // One cached statement, which is a read transaction of its own: a
        // `reap --once` pass re-checks every expired instance, and the
        // three statements prepared afresh each time (with a sorter for
        // the pending lookup, and `BEGIN`/`COMMIT`) were most of its time
        // (measured). Only an instance with an operation pending, whose
        // verb and status are reported, is read again the long way.
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let found = self
            .conn
            .prepare_cached(&self.recheck_sql)
            .and_then(|mut stmt| {
                stmt.query_row([name], |row| {
                    let attempt = (!matches!(col(row, ATTEMPT), ValueRef::Null))
                        .then(|| attempt_from_row(row, ATTEMPT));
                    let pending = lenient_int(col(row, PENDING)).is_some_and(|p| p != 0);
                    Ok((instance_from_row(row), attempt, pending))
                })
                .optional()
            })
            .map_err(err)?;
        match found {
            None => Ok(None),
            Some((_, _, true)) => self.recheck_pending(name),
            Some((i, attempt, false)) => Ok(Some(Recheck {
                status: i.status,
                lease: i.lease,
                lock: i.lock.map(|lock| *lock),
                attempt,
                birth: i.birth,
                created_at: i.created_at,
                pending: None,
            })),
        }
    }

    /// Hold one read transaction open until [`Store::end_read`], so that
    /// every [`Store::recheck`] meanwhile reads the same consistent state
    /// and the cost of a transaction (the `-shm` read lock taken and
    /// released, the file's size read: two `fcntl` and one `fstat`) is
    /// paid once, not per instance. For a dry run only: it tears
    /// nothing down, so nothing takes time between its re-checks and one
    /// state read for all of them is what a re-check per instance would
    /// have read. A real pass re-checks each instance in a fresh
    /// transaction right before its teardown (no check-then-act race: a
    /// teardown acts on the state read just before it, not on the pass's
    /// first read): never hold this across a teardown.
    ///
    /// # Errors
    /// `SQLite` errors (a transaction already open).
    pub fn begin_read(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(|e| StoreError::sqlite(&self.path, &e))
    }

    /// End the read transaction of [`Store::begin_read`] (it wrote
    /// nothing: rolled back). Nothing to do when none is open.
    pub fn end_read(&mut self) {
        self.held = None;
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    /// [`Store::recheck`] of an instance with an operation pending: the
    /// same rows, read in one transaction with the oldest pending
    /// operation's verb and status.
    fn recheck_pending(&mut self, name: &str) -> Result<Option<Recheck>, StoreError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let layout = self.layout;
        // A savepoint: a deferred transaction of its own, or, inside the
        // one read transaction of a dry run ([`Store::begin_read`]), a part
        // of it (a `BEGIN` there would fail).
        let tx = self.conn.savepoint().map_err(err)?;
        // Cached statements (not two `prepare`s per re-check, one per
        // teardown).
        let instance = tx
            .prepare_cached(&join_sql(layout, "WHERE i.name = ?1"))
            .and_then(|mut stmt| {
                stmt.query_row([name], |row| Ok(instance_from_row(row)))
                    .optional()
            })
            .map_err(err)?;
        let attempt = if self.layout.reap_attempts {
            tx.prepare_cached(
                "SELECT instance, attempts, last_error, next_retry_at
                 FROM reap_attempts WHERE instance = ?1",
            )
            .and_then(|mut stmt| {
                stmt.query_row([name], |row| Ok(attempt_from_row(row, 0)))
                    .optional()
            })
            .map_err(err)?
        } else {
            None
        };
        let pending = if layout.operations {
            super::operations::pending_on(&tx, self.identity, name).map_err(err)?
        } else {
            None
        };
        tx.commit().map_err(err)?;
        Ok(instance.map(|i| Recheck {
            status: i.status,
            lease: i.lease,
            lock: i.lock.map(|lock| *lock),
            attempt,
            birth: i.birth,
            created_at: i.created_at,
            pending,
        }))
    }

    /// Record a failed reap at `now` (§6 step 4): `attempts = previous + 1`,
    /// `last_error = reason`, `next_retry_at = now + backoff(attempts)`, in
    /// one immediate transaction. Returns the row written.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`] on a read-only store or an older generation;
    /// `SQLite` errors (`Busy` when another writer holds the store past the
    /// busy timeout: retry on the next tick).
    pub(super) fn record_reap_failure_once(
        &mut self,
        name: &str,
        reason: &str,
        now: i64,
    ) -> Result<ReapAttempt, StoreError> {
        self.check_writable()?;
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let previous: Option<i64> = tx
            .query_row(
                "SELECT attempts FROM reap_attempts WHERE instance = ?1",
                [name],
                |r| Ok(lenient_int(r.get_ref(0)?)),
            )
            .optional()
            .map_err(err)?
            .flatten();
        let (attempts, next_retry_at) = crate::model::backoff::next_failure(previous, now);
        // Never a secret into a column `stackless status` prints: the
        // values of `secret_history`, read in this transaction, redacted
        // as stackless 0.4.0 redacts its own output.
        let reason = if super::secrets::has_history(&tx).map_err(err)? {
            super::secrets::redactor(&tx)
                .map_err(err)?
                .json_text(reason)
        } else {
            reason.to_owned()
        };
        let reason = reason.as_str();
        tx.execute(
            "INSERT INTO reap_attempts (instance, attempts, last_error, next_retry_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(instance) DO UPDATE SET
               attempts = excluded.attempts,
               last_error = excluded.last_error,
               next_retry_at = excluded.next_retry_at",
            params![name, attempts, reason, next_retry_at],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(ReapAttempt {
            instance: name.to_owned(),
            attempts,
            last_error: reason.to_owned(),
            next_retry_at,
        })
    }

    /// Delete an instance's `reap_attempts` row after a successful teardown
    /// (§6 step 4; `down` does this itself too, so it is usually a no-op).
    ///
    /// # Errors
    /// As [`Store::record_reap_failure`].
    pub(super) fn clear_reap_failure_once(&mut self, name: &str) -> Result<(), StoreError> {
        self.check_writable()?;
        self.conn
            .execute("DELETE FROM reap_attempts WHERE instance = ?1", [name])
            .map_err(|e| StoreError::sqlite(&self.path, &e))?;
        Ok(())
    }

    /// Garbage-collect a tombstone (D14): delete its instance row (FK cascade
    /// removes leases, locks, checkpoints, reap attempts), but only if it is
    /// still a tombstone at least `older_than` (unix seconds) old. Returns
    /// whether a row was deleted. The caller removes the logs dir first.
    ///
    /// # Errors
    /// As [`Store::record_reap_failure`]; GC on a newer generation is refused.
    pub(super) fn delete_tombstone_once(
        &mut self,
        name: &str,
        older_than: i64,
    ) -> Result<bool, StoreError> {
        self.check_writable()?;
        if !self.generation.allows_gc() {
            return Err(StoreError::ReadOnly(
                "tombstone GC is left to stackless on this schema generation".into(),
            ));
        }
        let deleted = self
            .conn
            .execute(
                "DELETE FROM instances WHERE name = ?1 AND status = 'tombstoned'
                 AND tombstoned_at IS NOT NULL AND tombstoned_at <= ?2",
                params![name, older_than],
            )
            .map_err(|e| StoreError::sqlite(&self.path, &e))?;
        Ok(deleted > 0)
    }
}

/// The column of [`recheck_sql`] where the `reap_attempts` row begins
/// (after the 18 of [`join_sql`]).
const ATTEMPT: usize = 18;
/// The column of [`recheck_sql`] saying whether an operation is pending.
const PENDING: usize = 22;

/// [`join_sql`] for one name (`?1`), with its `reap_attempts` row (columns
/// [`ATTEMPT`]`..`, NULL before migration 3) and whether a queued or
/// running operation names it ([`PENDING`], 0 before migration 8): the
/// same predicates the transaction of [`Store::recheck_pending`] runs.
pub(super) fn recheck_sql(layout: Layout) -> String {
    let (attempt, join) = if layout.reap_attempts {
        (
            "r.instance, r.attempts, r.last_error, r.next_retry_at",
            "LEFT JOIN reap_attempts r ON r.instance = ?1",
        )
    } else {
        ("NULL, NULL, NULL, NULL", "")
    };
    // Two `=` look-ups, not `status IN ('queued', 'running')`: the same
    // rows (`=` and `IN` apply the same affinity and collation), but an
    // `IN` list is built into an ephemeral b-tree each time the statement
    // runs (opened and closed per re-check: 13 % of a dry run, measured).
    let pending = if layout.operations {
        "(EXISTS (SELECT 1 FROM operations WHERE status = 'queued' AND instance = ?1)
          OR EXISTS (SELECT 1 FROM operations WHERE status = 'running' AND instance = ?1))"
    } else {
        "0"
    };
    join_sql_with(
        layout,
        &format!(", {attempt}, {pending}"),
        join,
        "WHERE i.name = ?1",
    )
}
