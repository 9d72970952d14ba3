//! Schema 14 (stackless 0.4.0): the controller's durable queue,
//! `operations` and `operation_events` (migrations 8, 10, 13;
//! docs/stackless-releases.md, "Schema 14"). Everything the snapshot and
//! the pre-teardown re-check read from it is here.
//!
//! The queue grows forever (rows are never deleted), so every read is
//! bounded by an index or a `LIMIT`, never a full scan:
//! - pending rows through `operations_pending(status, created_at)`;
//! - the newest finished rows from the highest rowid down, `LIMIT`
//!   [`FINISHED_SHOWN`];
//! - each listed row's newest event through
//!   `operation_event_cursor(operation_id, sequence)`, `ORDER BY sequence
//!   DESC LIMIT 1`.
//!
//! `request_json` is never selected: it may carry secrets (the definition).

use rusqlite::{Connection, OptionalExtension};

use super::Layout;
use super::read::{col, lenient_int, lenient_text};
use crate::model::operation::{FINISHED_SHOWN, OpStatus, Operation, StepProgress};

/// Pending operations, oldest first (the controller's own order:
/// core-0.4.0/src/state/operation.rs:199-207).
pub(super) const PENDING_SQL: &str = "SELECT id, instance, {birth}, verb, status, cancel_requested,
        created_at, updated_at, error_json
 FROM operations WHERE status IN ('queued', 'running')
 ORDER BY created_at, rowid";

/// The newest finished operations, newest first.
pub(super) const FINISHED_SQL: &str =
    "SELECT id, instance, {birth}, verb, status, cancel_requested,
        created_at, updated_at, error_json
 FROM operations WHERE status NOT IN ('queued', 'running')
 ORDER BY rowid DESC LIMIT ?1";

/// One operation's newest event.
pub(super) const NEWEST_EVENT_SQL: &str =
    "SELECT event_json FROM operation_events WHERE operation_id = ?1
     ORDER BY sequence DESC LIMIT 1";

fn with_birth(sql: &str, layout: Layout) -> String {
    sql.replace(
        "{birth}",
        if layout.operation_birth {
            "instance_id"
        } else {
            "NULL"
        },
    )
}

/// Every pending operation (oldest first), then the [`FINISHED_SHOWN`]
/// newest finished ones (newest first), each with its newest step event.
/// Read leniently: a value of the wrong type reads as empty / 0.
pub(super) fn read_operations(
    conn: &Connection,
    layout: Layout,
) -> rusqlite::Result<Vec<Operation>> {
    let mut operations = Vec::new();
    {
        let mut stmt = conn.prepare_cached(&with_birth(PENDING_SQL, layout))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            operations.push(operation_from_row(row));
        }
    }
    {
        let mut stmt = conn.prepare_cached(&with_birth(FINISHED_SQL, layout))?;
        let limit = i64::try_from(FINISHED_SHOWN).unwrap_or(i64::MAX);
        let mut rows = stmt.query([limit])?;
        while let Some(row) = rows.next()? {
            let op = operation_from_row(row);
            // A status that reads as pending only after lossy decoding is
            // not one the index query saw: keep the two groups apart.
            if !op.status.is_pending() {
                operations.push(op);
            }
        }
    }
    if layout.operation_events {
        let mut stmt = conn.prepare_cached(NEWEST_EVENT_SQL)?;
        for op in &mut operations {
            let newest: Option<Option<String>> = stmt
                .query_row([op.id.as_str()], |row| Ok(lenient_text(col(row, 0))))
                .optional()?;
            op.progress = newest.flatten().as_deref().and_then(StepProgress::parse);
        }
    }
    Ok(operations)
}

/// The first pending operation on `name` (matched by name, as the
/// controller's reaper does: daemon-0.4.0/src/reaper.rs:7-12): verb and
/// status.
pub(super) fn pending_on(
    conn: &Connection,
    name: &str,
) -> rusqlite::Result<Option<(String, OpStatus)>> {
    conn.prepare_cached(
        "SELECT verb, status FROM operations
         WHERE status IN ('queued', 'running') AND instance = ?1
         ORDER BY created_at, rowid LIMIT 1",
    )?
    .query_row([name], |row| {
        Ok((
            lenient_text(col(row, 0)).unwrap_or_default(),
            OpStatus::parse(&lenient_text(col(row, 1)).unwrap_or_default()),
        ))
    })
    .optional()
}

fn operation_from_row(row: &rusqlite::Row<'_>) -> Operation {
    let text = |index| lenient_text(col(row, index)).unwrap_or_default();
    Operation {
        id: text(0),
        instance: text(1),
        instance_id: lenient_text(col(row, 2)),
        verb: text(3),
        status: OpStatus::parse(&text(4)),
        cancel_requested: lenient_int(col(row, 5)).is_some_and(|c| c != 0),
        created_at: lenient_int(col(row, 6)).unwrap_or(0),
        updated_at: lenient_int(col(row, 7)).unwrap_or(0),
        error_json: lenient_text(col(row, 8)),
        progress: None,
    }
}

impl super::Store {
    /// The plans `SQLite` chooses for the queue's reads (`EXPLAIN QUERY
    /// PLAN` detail lines, per read: `pending`, `finished`,
    /// `newest_event`), for the tests that check no read scans the queue.
    ///
    /// # Errors
    /// `SQLite` errors (a store without the queue's tables).
    #[doc(hidden)]
    pub fn operation_query_plans(&self) -> Result<Vec<(String, Vec<String>)>, super::StoreError> {
        query_plans(&self.conn).map_err(|e| super::StoreError::sqlite(&self.path, &e))
    }
}

fn query_plans(conn: &Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let layout = Layout {
        operation_birth: true,
        ..Layout::default()
    };
    let queries = [
        ("pending", with_birth(PENDING_SQL, layout), None),
        ("finished", with_birth(FINISHED_SQL, layout), Some("50")),
        ("newest_event", NEWEST_EVENT_SQL.to_owned(), Some("x")),
    ];
    let mut plans = Vec::new();
    for (what, sql, param) in queries {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        let details: Vec<String> = match param {
            Some(p) => stmt
                .query_map([p], |r| r.get::<_, String>(3))?
                .collect::<Result<_, _>>()?,
            None => stmt
                .query_map([], |r| r.get::<_, String>(3))?
                .collect::<Result<_, _>>()?,
        };
        plans.push((what.to_owned(), details));
    }
    Ok(plans)
}
