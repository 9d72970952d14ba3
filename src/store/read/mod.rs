//! Reading a whole consistent snapshot: instances, leases, locks and reap
//! attempts in one read transaction, read leniently (a hand-made store's
//! NULLs and wrong types become [`crate::model::Instance::anomalies`], never
//! a panic), then lock liveness probed (docs/stackless-state-store.md §2).

use rusqlite::types::ValueRef;
use rusqlite::{Connection, TransactionBehavior};

use std::sync::Arc;

use super::lenient::{col, lenient_int, lenient_str, lenient_text};
use super::probe::HostProbe;
use super::{Layout, Store, StoreError};
use crate::model::liveness::{LockLiveness, liveness};
use crate::model::{Birth, Instance, Lease, OpLock, ReapAttempt, Rows, Snapshot, Status};

pub(super) mod head;
mod scan;
pub(super) mod stream;
mod walk;

impl Store {
    /// Read instances, leases, locks and reap attempts in one read
    /// transaction, then probe each lock holder's liveness.
    ///
    /// Rows are read leniently: a NULL or a value of the wrong type (possible
    /// only in hand-made non-STRICT stores) becomes an entry in
    /// [`Instance::anomalies`], never a panic or an error.
    ///
    /// # Errors
    /// `SQLite` errors, `StoreError::Busy` when the store stays locked past the
    /// busy timeout.
    pub(super) fn snapshot_once(
        &mut self,
        probe: &mut dyn HostProbe,
    ) -> Result<Snapshot, StoreError> {
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() == 0) {
            // Truncated under this connection: `SQLite` would call it busy
            // or empty, neither true. (`Empty` breaks the connection: the
            // checked `Store::snapshot` invalidates every one.)
            return Err(StoreError::Empty(self.path.clone()));
        }
        let path = &self.path;
        let err = |e: rusqlite::Error| StoreError::sqlite(path, &e);
        let layout = self.layout;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        // Three sequential table scans joined here by name are several times
        // cheaper than SQLite's LEFT JOIN at scale (two index seeks per
        // instance plus a sort); the join query remains for the stores where
        // a byte-wise merge could differ from SQL's `=` (see `scan_instances`).
        // Held to the end of this read (after it publishes its rows).
        let (previous, _reading) = self
            .identity
            .map_or((None, None), super::row_reuse::previous_or_wait);
        let (mut instances, places, scanned) =
            read_instances(&tx, layout, previous.as_ref()).map_err(err)?;
        drop(previous);
        let (mut reap_attempts, attempt_keys_text) = if layout.reap_attempts {
            read_reap_attempts(&tx).map_err(err)?
        } else {
            (Vec::new(), true)
        };
        let mut operations = if layout.operations {
            super::operations::read_operations(&tx, layout, &mut self.queue).map_err(err)?
        } else {
            Vec::new()
        };
        let redactor = if layout.secret_history {
            super::secrets::redactor(&tx).map_err(err)?
        } else {
            crate::model::redact::Redactor::default()
        };
        super::secrets::redact_rows(&redactor, &mut operations, &mut reap_attempts);
        // What the re-checks of this file may rely on (`queue_seen`); an
        // immutable read may lag the file, so it publishes nothing.
        let seen = match (layout.operations, self.identity) {
            (true, Some(file)) if !self.immutable => {
                Some((file, super::queue_seen::watermark(&tx).ok().flatten()))
            }
            _ => None,
        };
        // Paired as `Store::recheck`'s per-name query pairs them: the
        // scans ran (no name, lease or lock twice, every key text), no
        // reap attempt twice or keyed by another type, no collation.
        let paired = scanned && attempt_keys_text && !collates(&tx).map_err(err)?;
        let version = if paired {
            Some(version(&tx).map_err(err)?)
        } else {
            None
        };
        tx.commit().map_err(err)?;
        sort_by_name(&mut instances, &mut reap_attempts);
        let version = version.filter(|_| {
            reap_attempts
                .windows(2)
                .all(|w| w[0].instance != w[1].instance)
        });
        let rows = Rows {
            generation: self.generation,
            instances: crate::model::Instances::from_shared(instances),
            reap_attempts,
            operations,
            operation_index: crate::model::OperationIndex::default(),
        };
        // Built here, on the reading thread, not on the render thread.
        let _ = rows.pending_operations();
        self.snapshot_version = version.map(|version| {
            let pending = rows
                .pending_operations()
                .iter()
                .map(|op| op.instance.clone())
                .collect();
            (version, pending)
        });
        publish_queue_seen(self.identity, seen, &rows.operations);
        let liveness = probe_liveness(&rows, probe);
        let mut snapshot = Snapshot::new(rows, liveness);
        snapshot.immutable = self.immutable;
        snapshot.redactor = Arc::new(redactor);
        if let Some(file) = self.identity {
            publish_row_reuse(file, &snapshot.rows, places);
        }
        Ok(snapshot)
    }
}

/// The snapshot's instances, each with its lease and lock: the three table
/// scans ([`scan::scan_instances`]) with each row's place, or the SQL join
/// where a scan could differ from it (then no places); and whether the
/// scans ran (each name, lease and lock once, every key text).
fn read_instances(
    tx: &Connection,
    layout: Layout,
    previous: Option<&super::row_reuse::Previous>,
) -> rusqlite::Result<(Vec<Arc<Instance>>, Vec<super::row_reuse::RowPlace>, bool)> {
    Ok(match scan::scan_instances(tx, layout, previous)? {
        Some((instances, places)) => (instances, places, true),
        None => (
            join_instances(tx, layout)?
                .into_iter()
                .map(Arc::new)
                .collect(),
            Vec::new(),
            false,
        ),
    })
}

/// Every `reap_attempts` row (a layout that has the table), in the order
/// `SQLite` gives them by `instance`; and whether every key is text.
fn read_reap_attempts(tx: &Connection) -> rusqlite::Result<(Vec<ReapAttempt>, bool)> {
    let mut reap_attempts = Vec::new();
    let mut keys_text = true;
    let mut stmt = tx.prepare_cached(
        "SELECT instance, attempts, last_error, next_retry_at
         FROM reap_attempts ORDER BY instance",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        keys_text &= matches!(col(row, 0), ValueRef::Text(_));
        reap_attempts.push(attempt_from_row(row, 0));
    }
    Ok((reap_attempts, keys_text))
}

/// What a read sees of the file's version: `PRAGMA data_version` (another
/// connection's commit changes it) and this connection's
/// `total_changes()` (its own writes), in the read transaction open on
/// `conn` (begun first by reading the schema).
pub(in crate::store) fn version(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    let _: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    let data: i64 = conn.query_row("PRAGMA data_version", [], |row| row.get(0))?;
    let own: i64 = conn.query_row("SELECT total_changes()", [], |row| row.get(0))?;
    Ok((data, own))
}

/// Whether any of the tables read declares a collation (`=` would not be
/// byte equality).
pub(in crate::store) fn collates(conn: &Connection) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT sql FROM sqlite_master WHERE type = 'table'
         AND name IN ('instances', 'leases', 'op_locks', 'reap_attempts', 'operations')",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let ValueRef::Text(sql) = col(row, 0)
            && sql.windows(7).any(|w| w.eq_ignore_ascii_case(b"collate"))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Put the instances and reap attempts in byte order of their names:
/// lossy UTF-8 decoding can reorder, and binary search needs byte order.
fn sort_by_name(instances: &mut [Arc<Instance>], reap_attempts: &mut [ReapAttempt]) {
    // (Checked first: a stable sort of sorted rows changes nothing, and
    // skipping it saves its scratch buffer.)
    if !instances.is_sorted_by(|a, b| a.name <= b.name) {
        instances.sort_by(|a, b| a.name.cmp(&b.name));
    }
    if !reap_attempts.is_sorted_by(|a, b| a.instance <= b.instance) {
        reap_attempts.sort_by(|a, b| a.instance.cmp(&b.instance));
    }
}

/// What a read saw of the queue of one file: the file (device, inode) and
/// its watermark (`queue_seen::watermark`: the newest operation's
/// `(rowid, id)`; `None` when there is none or it could not be read).
type QueueSeen = ((u64, u64), Option<(i64, String)>);

/// Publish what the read saw of the queue for the re-checks of this file
/// (`seen`: the file and its watermark, [`super::queue_seen`]), or forget
/// the file (`identity`) when the read may not be relied on.
fn publish_queue_seen(
    identity: Option<(u64, u64)>,
    seen: Option<QueueSeen>,
    operations: &[crate::model::Operation],
) {
    match seen {
        Some((file, watermark)) => {
            super::queue_seen::publish(file, watermark, operations);
        }
        None => {
            if let Some(file) = identity {
                super::queue_seen::forget(file);
            }
        }
    }
}

/// Keep `rows` for the next read of `file` ([`super::row_reuse`]), or
/// forget the file when no places are known (the SQL join ran).
fn publish_row_reuse(file: (u64, u64), rows: &Arc<Rows>, places: Vec<super::row_reuse::RowPlace>) {
    if places.is_empty() {
        super::row_reuse::forget(file);
    } else {
        super::row_reuse::publish(file, rows, places);
    }
}

/// Lock-holder liveness for every locked instance of `rows`
/// (docs/stackless-state-store.md §2).
pub fn probe_liveness(rows: &Rows, probe: &mut dyn HostProbe) -> LockLiveness {
    let host = probe.host_name().map(str::to_owned);
    let mut found = LockLiveness::new();
    for instance in &rows.instances {
        if let Some(lock) = &instance.lock {
            let l = liveness(lock, host.as_deref(), |pid| probe.live_start_time(pid));
            found.insert(instance.name.clone(), l);
        }
    }
    found
}

/// Every lease row, in the column order [`lease_columns`] reads from 1 on
/// (the snapshot's scan and a dry run's at-once re-check).
pub(super) const LEASE_SCAN_SQL: &str = "SELECT instance, duration_secs, expires_at FROM leases";

/// Every lock row, in the column order [`lock_columns`] reads from 1 on;
/// the columns of later migrations read as NULL where the store has none.
pub(super) fn lock_scan_sql(layout: Layout) -> String {
    let pick = |present: bool, column: &'static str| if present { column } else { "NULL" };
    format!(
        "SELECT instance, operation, holder_pid, holder_start_time, acquired_at, {}, {}
         FROM op_locks",
        pick(layout.holder_host, "holder_host"),
        pick(layout.claim_id, "claim_id"),
    )
}

/// The `LEFT JOIN` of an instance with its lease and lock, in the column
/// order [`instance_from_row`] reads (instance 0..=4, lease 5..=7, lock
/// 8..=14, then `dirty`, `instance_id`, `resource_namespace` at 15..=17),
/// followed by `tail` (a `WHERE` or `ORDER BY`). Columns the store lacks
/// read as NULL.
pub(super) fn join_sql(layout: Layout, tail: &str) -> String {
    join_sql_with(layout, "", "", tail)
}

/// [`join_sql`] with `more` columns after its own (`more` starts with a
/// comma) and another `join` after its own.
pub(super) fn join_sql_with(layout: Layout, more: &str, join: &str, tail: &str) -> String {
    let pick = |present: bool, column: &'static str| if present { column } else { "NULL" };
    format!(
        "SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at,
                l.instance, l.duration_secs, l.expires_at,
                k.instance, k.operation, k.holder_pid, k.holder_start_time,
                k.acquired_at, {}, {}, {}, {}, {}{more}
         FROM instances i
         LEFT JOIN leases l ON l.instance = i.name
         LEFT JOIN op_locks k ON k.instance = i.name
         {join}
         {tail}",
        pick(layout.holder_host, "k.holder_host"),
        pick(layout.claim_id, "k.claim_id"),
        pick(layout.dirty, "i.dirty"),
        pick(layout.birth, "i.instance_id"),
        pick(layout.birth, "i.resource_namespace"),
    )
}

/// The instances with their lease and lock, in SQL's `LEFT JOIN` form
/// (one query, ordered by name). Used where [`scan::scan_instances`] declines.
fn join_instances(conn: &Connection, layout: Layout) -> rusqlite::Result<Vec<Instance>> {
    let sql = join_sql(layout, "ORDER BY i.name");
    let mut instances = Vec::new();
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([])?;
    let mut substrates = Substrates::default();
    while let Some(row) = rows.next()? {
        instances.push(instance_from_row_with(row, &mut substrates));
    }
    Ok(instances)
}

/// Text read leniently; a value that is not text is noted as an anomaly
/// and reads as empty.
fn text_or_note(value: ValueRef<'_>, what: &str, anomalies: &mut Vec<String>) -> String {
    lenient_text(value).unwrap_or_else(|| {
        anomalies.push(format!("{what} is not text"));
        String::new()
    })
}

/// One shared copy of each substrate's text for the rows of a read (there
/// are a handful: `local`, `render`, `vercel`); at most [`Substrates::KEPT`]
/// kept, so a hand-made store with a substrate per row is not searched
/// through thousands.
#[derive(Default)]
pub(super) struct Substrates(Vec<crate::model::Substrate>);

impl Substrates {
    const KEPT: usize = 16;

    /// The shared text equal to `text`.
    pub(super) fn get(&mut self, text: &str) -> crate::model::Substrate {
        if let Some(found) = self.0.iter().find(|kept| **kept == *text) {
            return found.clone();
        }
        let made = crate::model::Substrate::from(text);
        if self.0.len() < Self::KEPT {
            self.0.push(made.clone());
        }
        made
    }
}

/// The `instances` columns at 1..=4 (`substrate`, `status`, `created_at`,
/// `tombstoned_at`) around an already-read `name`; no lease, no lock.
/// `status`, noting in `anomalies` the stored text of an unknown status
/// the process does not keep ([`crate::model::OtherStatus`]: its table is
/// bounded), cut to 200 characters.
fn not_kept(status: Status, stored: ValueRef<'_>, anomalies: &mut Vec<String>) -> Status {
    if let Status::Other(other) = &status
        && !other.is_kept()
        && let Some(text) = lenient_str(stored)
    {
        let cut: String = text.chars().take(200).collect();
        anomalies.push(format!("status {cut:?} not kept (too many or too long)"));
    }
    status
}

pub(super) fn instance_columns(
    row: &rusqlite::Row<'_>,
    name: String,
    mut anomalies: Vec<String>,
    substrates: &mut Substrates,
) -> Instance {
    let substrate = if let Some(text) = lenient_str(col(row, 1)) {
        substrates.get(&text)
    } else {
        anomalies.push("substrate is not text".into());
        substrates.get("")
    };
    let status = match col(row, 2) {
        // The two values stackless writes, without an allocation.
        ValueRef::Text(b"active") => Status::Active,
        ValueRef::Text(b"tombstoned") => Status::Tombstoned,
        other => not_kept(
            Status::parse(&text_or_note(other, "status", &mut anomalies)),
            other,
            &mut anomalies,
        ),
    };
    Instance {
        name,
        substrate,
        status,
        created_at: lenient_int(col(row, 3)),
        tombstoned_at: lenient_int(col(row, 4)),
        lease: None,
        lock: None,
        anomalies: anomalies.into(),
        dirty: None,
        birth: None,
    }
}

/// A lease row's duration and expiry at `base`, `base + 1`.
pub(super) fn lease_columns(
    row: &rusqlite::Row<'_>,
    base: usize,
    anomalies: &mut Vec<String>,
) -> Option<Lease> {
    match (lenient_int(col(row, base)), lenient_int(col(row, base + 1))) {
        (Some(duration_secs), Some(expires_at)) => Some(Lease {
            duration_secs,
            expires_at,
        }),
        _ => {
            anomalies.push("lease row has no integer duration/expiry".into());
            None
        }
    }
}

/// A lock row's operation, pid, start time, `acquired_at` and host from
/// `base` on.
pub(super) fn lock_columns(
    row: &rusqlite::Row<'_>,
    base: usize,
    anomalies: &mut Vec<String>,
) -> OpLock {
    let holder_pid = lenient_int(col(row, base + 1));
    let holder_start_time = lenient_int(col(row, base + 2));
    if holder_pid.is_none() || holder_start_time.is_none() {
        anomalies.push("lock row has no integer holder pid/start time".into());
    }
    // A lock row is never dropped for being malformed: an unreadable
    // holder pid (-1) reads as gone, but the row is still shown.
    OpLock {
        operation: lenient_text(col(row, base)).unwrap_or_default(),
        holder_pid: holder_pid.unwrap_or(-1),
        holder_start_time: holder_start_time.unwrap_or(-1),
        acquired_at: lenient_int(col(row, base + 3)).unwrap_or(0),
        holder_host: lenient_text(col(row, base + 4)),
        claim_id: lenient_text(col(row, base + 5)),
    }
}

/// The columns of later migrations at `base..=base + 2`: `dirty` (5),
/// `instance_id` and `resource_namespace` (7); NULL where the store has
/// none (the field stays `None`).
pub(super) fn instance_extras(row: &rusqlite::Row<'_>, base: usize, instance: &mut Instance) {
    instance.dirty = lenient_int(col(row, base)).map(|d| d != 0);
    // Borrowed from the row where it is valid UTF-8 text: the birth is
    // one allocation, not three.
    if let Some(instance_id) = lenient_str(col(row, base + 1)) {
        let namespace = lenient_str(col(row, base + 2)).unwrap_or_default();
        instance.birth = Some(Birth::new(&instance_id, &namespace));
    }
}

/// The last anomaly checked, after the lease's and the lock's.
fn note_created_at(instance: &mut Instance) {
    if instance.created_at.is_none() {
        instance
            .anomalies
            .push("created_at is not an integer".into());
    }
}

/// One row of the join query ([`join_sql`]: `recheck`, [`join_instances`]):
/// instance columns 0..=4, lease 5..=7, lock 8..=14, later columns 15..=17.
pub(super) fn instance_from_row(row: &rusqlite::Row<'_>) -> Instance {
    instance_from_row_with(row, &mut Substrates::default())
}

/// [`instance_from_row`] sharing substrates across the rows of one read.
fn instance_from_row_with(row: &rusqlite::Row<'_>, substrates: &mut Substrates) -> Instance {
    let mut anomalies = Vec::new();
    let name = text_or_note(col(row, 0), "name", &mut anomalies);
    let mut instance = instance_columns(row, name, anomalies, substrates);
    let mut notes = Vec::new();
    if !matches!(col(row, 5), ValueRef::Null) {
        instance.lease = lease_columns(row, 6, &mut notes);
    }
    if !matches!(col(row, 8), ValueRef::Null) {
        instance.lock = Some(Box::new(lock_columns(row, 9, &mut notes)));
    }
    instance.anomalies.extend(notes);
    instance_extras(row, 15, &mut instance);
    note_created_at(&mut instance);
    instance
}

pub(super) fn attempt_from_row(row: &rusqlite::Row<'_>, base: usize) -> ReapAttempt {
    ReapAttempt {
        instance: lenient_text(col(row, base)).unwrap_or_default(),
        attempts: lenient_int(col(row, base + 1)).unwrap_or(0),
        last_error: lenient_text(col(row, base + 2)).unwrap_or_default(),
        // An unreadable gate reads as "due now": the reaper may retry, which
        // is what stackless's `next_retry_at > now` comparison does with NULL.
        next_retry_at: lenient_int(col(row, base + 3)).unwrap_or(i64::MIN),
    }
}

#[cfg(test)]
mod tests {
    use super::{Status, ValueRef, not_kept};
    use crate::model::OtherStatus;

    #[test]
    fn an_unknown_status_not_kept_is_noted_with_its_stored_text() {
        let long = format!("{}é", "x".repeat(OtherStatus::MAX_LEN));
        let mut anomalies = Vec::new();
        let status = not_kept(
            Status::parse(&long),
            ValueRef::Text(long.as_bytes()),
            &mut anomalies,
        );
        assert_eq!(status.as_str(), OtherStatus::NOT_KEPT);
        assert_eq!(
            anomalies,
            [format!(
                "status \"{}\" not kept (too many or too long)",
                "x".repeat(200)
            )]
        );
        // A status kept, or a known one, notes nothing.
        let mut none = Vec::new();
        for text in ["paused-in-a-read-test", "active"] {
            let status = not_kept(
                Status::parse(text),
                ValueRef::Text(text.as_bytes()),
                &mut none,
            );
            assert_eq!(status.as_str(), text);
        }
        assert!(none.is_empty());
    }
}
