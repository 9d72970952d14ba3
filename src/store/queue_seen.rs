//! The pre-teardown re-check's pending-operation look-up, without a scan
//! of the queue (a scan cost `E x P` per pass: `pending_on` walked every
//! pending row through `operations_pending(status, created_at)` and
//! filtered on the name, once per expired instance; 0.4.0 has no index
//! on `operations.instance`).
//!
//! Each snapshot of a store file publishes what it saw of the queue: the
//! ids pending per name and the highest rowid (the watermark), read in its
//! transaction. A re-check on any connection to the same file then needs
//! only
//! - a primary-key seek per id pending on that name at the snapshot, to see
//!   whether it still is, and
//! - the rows created since, through the rowid (`rowid > ?` on the table's
//!   b-tree), filtered on the name.
//!
//! Both are complete because the controller never deletes an operation row
//! (docs/stackless-releases.md "Schema 14": "Rows are never deleted; they
//! grow forever"; core-0.4.0/src/state/operation.rs only inserts, :122),
//! so a new row's rowid is above every older one, and never moves a
//! finished operation back to pending (only queued or running rows change
//! status: operation.rs:229-231, 259-261, 268-269, 287-288). The file is
//! checked to be the one seen: the row at the watermark must still have
//! the id it had (one rowid seek). A file never snapshotted, another file
//! at the same inode, or a query that fails (a hand-made table without
//! rowids) falls back to the walk of the pending rows.
//!
//! Plans on the 0.4.0 schema (`EXPLAIN QUERY PLAN`, checked by
//! `tests/integration/history.rs`):
//! - [`STILL_PENDING_SQL`]: `SEARCH operations USING INDEX
//!   sqlite_autoindex_operations_1 (id=?)`;
//! - [`PENDING_SINCE_SQL`]: `SEARCH operations USING INTEGER PRIMARY KEY
//!   (rowid>?)` (then a sort of the few rows found); without the `+` on
//!   `status` `SQLite` would walk `operations_pending` instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension};

use super::lenient::{col, lenient_int, lenient_text};
use crate::model::operation::{OpStatus, Operation};

/// Whether one id, pending at the snapshot, still is.
pub(super) const STILL_PENDING_SQL: &str = "SELECT verb, status, created_at, rowid
 FROM operations WHERE id = ?1 AND instance = ?2 AND +status IN ('queued', 'running')";

/// The oldest pending row on a name among those created since the
/// snapshot.
pub(super) const PENDING_SINCE_SQL: &str = "SELECT verb, status, created_at, rowid
 FROM operations WHERE rowid > ?1 AND instance = ?2 AND +status IN ('queued', 'running')
 ORDER BY created_at, rowid LIMIT 1";

/// The highest rowid of the queue (the b-tree's last entry) and its id.
const WATERMARK_SQL: &str = "SELECT rowid, id FROM operations ORDER BY rowid DESC LIMIT 1";

/// The id at a rowid: the file is still the one seen.
const ID_AT_SQL: &str = "SELECT id FROM operations WHERE rowid = ?1";

/// What one snapshot saw of a file's queue.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The highest rowid then and its id (`None`: the queue was empty).
    watermark: Option<(i64, String)>,
    /// The ids pending then, per instance name.
    pending: HashMap<String, Vec<String>>,
}

/// Store files (`(device, inode)`) seen by this process, at most
/// [`FILES_KEPT`]: a process watches one store, tests open many.
type Registry = HashMap<(u64, u64), Arc<Seen>>;

const FILES_KEPT: usize = 16;

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// The queue's watermark, read in the snapshot's transaction.
///
/// # Errors
/// `SQLite` errors (a table without rowids).
pub(super) fn watermark(conn: &Connection) -> rusqlite::Result<Option<(i64, String)>> {
    conn.prepare_cached(WATERMARK_SQL)?
        .query_row([], |row| {
            Ok(lenient_int(col(row, 0)).zip(lenient_text(col(row, 1))))
        })
        .optional()
        .map(Option::flatten)
}

/// Publish what a snapshot of `file` read: its `watermark` and the pending
/// prefix of `operations`.
pub(super) fn publish(
    file: (u64, u64),
    watermark: Option<(i64, String)>,
    operations: &[Operation],
) {
    let mut pending: HashMap<String, Vec<String>> = HashMap::new();
    for op in operations.iter().take_while(|op| op.status.is_pending()) {
        pending
            .entry(op.instance.clone())
            .or_default()
            .push(op.id.clone());
    }
    let seen = Arc::new(Seen { watermark, pending });
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = registry.get_or_insert_with(HashMap::new);
    if registry.len() >= FILES_KEPT && !registry.contains_key(&file) {
        registry.clear();
    }
    registry.insert(file, seen);
}

/// Forget `file` (its rows cannot be trusted to follow the rules above: it
/// was replaced, or read immutably).
pub(super) fn forget(file: (u64, u64)) {
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(registry) = registry.as_mut() {
        registry.remove(&file);
    }
}

fn seen(file: (u64, u64)) -> Option<Arc<Seen>> {
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry.as_ref()?.get(&file).cloned()
}

/// What the published queue says of `name`'s oldest pending operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Pending {
    /// Nothing was published for the file, or a query failed: the caller
    /// walks the pending rows.
    Unknown,
    /// Known: the oldest pending operation (verb, status), if any.
    Known(Option<(String, OpStatus)>),
}

/// The oldest pending operation on `name` (verb, status) from what the last
/// snapshot of `file` saw plus the rows since.
pub(super) fn pending_on(conn: &Connection, file: Option<(u64, u64)>, name: &str) -> Pending {
    file.and_then(seen)
        .and_then(|seen| look_up(conn, &seen, name).ok())
        .map_or(Pending::Unknown, Pending::Known)
}

fn look_up(
    conn: &Connection,
    seen: &Seen,
    name: &str,
) -> rusqlite::Result<Option<(String, OpStatus)>> {
    type Found = ((i64, i64), (String, OpStatus));
    let read = |row: &rusqlite::Row<'_>| -> rusqlite::Result<Found> {
        let key = (
            lenient_int(col(row, 2)).unwrap_or(0),
            lenient_int(col(row, 3)).unwrap_or(0),
        );
        let verb = lenient_text(col(row, 0)).unwrap_or_default();
        let status = OpStatus::parse(&lenient_text(col(row, 1)).unwrap_or_default());
        Ok((key, (verb, status)))
    };
    let since = match &seen.watermark {
        Some((rowid, id)) => {
            let now: Option<Option<String>> = conn
                .prepare_cached(ID_AT_SQL)?
                .query_row([rowid], |row| Ok(lenient_text(col(row, 0))))
                .optional()?;
            if now.flatten().as_deref() != Some(id.as_str()) {
                return Err(rusqlite::Error::QueryReturnedNoRows);
            }
            *rowid
        }
        None => i64::MIN,
    };
    let mut found: Vec<Found> = Vec::new();
    if let Some(ids) = seen.pending.get(name) {
        let mut stmt = conn.prepare_cached(STILL_PENDING_SQL)?;
        for id in ids {
            if let Some(row) = stmt.query_row([id.as_str(), name], read).optional()? {
                found.push(row);
            }
        }
    }
    let mut stmt = conn.prepare_cached(PENDING_SINCE_SQL)?;
    if let Some(row) = stmt
        .query_row(rusqlite::params![since, name], read)
        .optional()?
    {
        found.push(row);
    }
    Ok(found
        .into_iter()
        .min_by_key(|(key, _)| *key)
        .map(|(_, op)| op))
}
