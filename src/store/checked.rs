//! Each call that reads or writes the store goes through here, checked
//! ([`Store::noticed`]).

use super::{Recheck, Store, StoreError, detail};

/// Each call that reads or writes the store, checked: an error that breaks
/// the connection ([`StoreError::breaks_connection`]) invalidates every
/// connection of this process to the file (`epoch`), so each holder drops
/// its own and opens the file afresh: else a `disk I/O error` met by the
/// teardown jobs' re-checks leaves every pass failing until restart.
impl Store {
    /// `Err(StoreError::Closed)` when this store is closed.
    fn open_now(&self) -> Result<(), StoreError> {
        match &self.closed {
            Some(why) => Err(StoreError::Closed(self.path.clone(), why.clone())),
            None => Ok(()),
        }
    }

    fn noticed<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(error) = &result
            && error.breaks_connection()
        {
            self.invalidate();
        }
        result
    }

    /// Re-read one instance in a fresh read transaction, right before its
    /// teardown (`write::recheck`), on the file the path names now: a
    /// connection to a file since replaced reads the old file's rows
    /// (its descriptor and `-wal` still open), so that is an error
    /// ([`StoreError::Replaced`], or [`StoreError::StaleWal`] while the old
    /// log is beside the new file), not a re-check that passes.
    ///
    /// # Errors
    /// `SQLite` errors (`Busy` when locked past the busy timeout).
    pub fn recheck(&mut self, name: &str) -> Result<Option<Recheck>, StoreError> {
        self.open_now()?;
        let result = self.same_file().and_then(|()| self.recheck_once(name));
        self.noticed(result)
    }

    /// Record a failed reap in `reap_attempts` (stackless §6 step 4; the
    /// backoff from `model::backoff`), in one `BEGIN IMMEDIATE`
    /// transaction.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`] on a read-only store or an older
    /// generation; `SQLite` errors (`Busy`: retry).
    pub fn record_reap_failure(
        &mut self,
        name: &str,
        reason: &str,
        now: i64,
    ) -> Result<crate::model::ReapAttempt, StoreError> {
        self.open_now()?;
        let result = self.record_reap_failure_once(name, reason, now);
        self.noticed(result)
    }

    /// Delete an instance's `reap_attempts` row after a successful teardown
    /// (stackless §6 step 4).
    ///
    /// # Errors
    /// As [`Store::record_reap_failure`].
    pub fn clear_reap_failure(&mut self, name: &str) -> Result<(), StoreError> {
        self.open_now()?;
        let result = self.clear_reap_failure_once(name);
        self.noticed(result)
    }

    /// Garbage-collect a tombstone at least `older_than` (unix seconds) old
    /// (D14); whether a row was deleted.
    ///
    /// # Errors
    /// As [`Store::record_reap_failure`]; refused on a newer generation.
    pub fn delete_tombstone(&mut self, name: &str, older_than: i64) -> Result<bool, StoreError> {
        self.open_now()?;
        let result = self.delete_tombstone_once(name, older_than);
        self.noticed(result)
    }

    /// One consistent snapshot of the store (`read`).
    ///
    /// # Errors
    /// `SQLite` errors, `Busy` when locked past the busy timeout, `Empty`
    /// for a file truncated under this connection.
    pub fn snapshot(
        &mut self,
        probe: &mut dyn crate::store::probe::HostProbe,
    ) -> Result<crate::model::Snapshot, StoreError> {
        self.open_now()?;
        let result = self.snapshot_once(probe);
        if result.is_ok() {
            self.note_read();
        }
        self.noticed(result)
    }

    /// The `limit` instances with the soonest leases (ties by name: the
    /// Instances pane's default order), each with its lease and lock, the
    /// reap attempts and the redaction history, in one read transaction
    /// with the store's instance count; `None` when the store holds no
    /// more than `limit`, or fewer leases (the whole read says it all). No
    /// operations are read (a million of them is the slow part): the
    /// snapshot is [`crate::model::Partial`], which no action is taken on.
    ///
    /// # Errors
    /// `SQLite` errors, `Busy` when locked past the busy timeout.
    pub fn snapshot_head(
        &mut self,
        probe: &mut dyn crate::store::probe::HostProbe,
        limit: usize,
    ) -> Result<Option<crate::model::Snapshot>, StoreError> {
        self.open_now()?;
        let result = self.snapshot_head_once(probe, limit);
        self.noticed(result)
    }

    /// [`Store::stream_snapshot`], checked as [`Store::snapshot`] is: a
    /// closed store is an error, and an error that breaks the connection
    /// invalidates every one to the file.
    ///
    /// # Errors
    /// As [`Store::stream_snapshot`]; [`StoreError::Closed`].
    pub fn stream_checked<R: super::StreamReader>(
        &mut self,
        probe: &mut dyn crate::store::probe::HostProbe,
        wall: Option<i64>,
        reader: &mut R,
    ) -> Result<bool, super::StreamStop<R::Error>> {
        self.open_now().map_err(super::StreamStop::Store)?;
        let result = self.stream_snapshot(probe, wall, reader);
        if result.is_ok() {
            self.note_read();
        }
        if let Err(super::StreamStop::Store(error)) = &result
            && error.breaks_connection()
        {
            self.invalidate();
        }
        result
    }

    /// Every event of operation `id` in the order the controller wrote them
    /// (at most [`crate::model::operation::EVENTS_SHOWN`], the first ones), for the operation
    /// overlay; empty on a store without `operation_events` (before
    /// schema 14) or for an id with none. Read leniently, in one read
    /// transaction.
    ///
    /// # Errors
    /// `SQLite` errors (`Busy` when locked past the busy timeout).
    pub fn operation_events(
        &mut self,
        id: &str,
    ) -> Result<Vec<crate::model::operation::OpEvent>, StoreError> {
        self.open_now()?;
        let result = self.operation_events_once(id);
        self.noticed(result)
    }

    /// One instance's whole record for the detail view (`detail`).
    ///
    /// # Errors
    /// `SQLite` errors (`Busy` when locked past the busy timeout).
    pub fn instance_detail(
        &mut self,
        name: &str,
    ) -> Result<Option<detail::InstanceDetail>, StoreError> {
        self.open_now()?;
        let result = self.instance_detail_once(name);
        self.noticed(result)
    }
}
