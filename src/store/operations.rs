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
//! - the rows pending at the previous read that are in neither list now
//!   (a long `up` that finished after more than [`FINISHED_SHOWN`] newer
//!   rows were created), one primary-key seek
//!   each, so every finish is observed once;
//! - each listed row's newest event through
//!   `operation_event_cursor(operation_id, sequence)`, `ORDER BY sequence
//!   DESC LIMIT 1`, except for the rows already finished at the
//!   connection's previous read (their events are final: [`QueueMemory`]).
//!
//! `request_json` is never selected: it may carry secrets (the definition).

use rusqlite::{Connection, OptionalExtension};

use super::Layout;
use super::lenient::{col, lenient_int, lenient_text};
use crate::model::operation::{
    EVENTS_SHOWN, FINISHED_SHOWN, OpEvent, OpStatus, Operation, Ran, StepProgress, event_times,
};

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

/// One operation by id (`sqlite_autoindex_operations_1`), with its rowid
/// (column 9) to order it among the finished rows.
pub(super) const BY_ID_SQL: &str = "SELECT id, instance, {birth}, verb, status, cancel_requested,
        created_at, updated_at, error_json, rowid
 FROM operations WHERE id = ?1";

/// One operation's newest event.
pub(super) const NEWEST_EVENT_SQL: &str =
    "SELECT event_json, recorded_at FROM operation_events WHERE operation_id = ?1
     ORDER BY sequence DESC LIMIT 1";

/// One operation's first event (when it started running: [`Ran`]).
pub(super) const FIRST_EVENT_SQL: &str =
    "SELECT event_json, recorded_at FROM operation_events WHERE operation_id = ?1
     ORDER BY sequence LIMIT 1";

/// One operation's events in the order written, through
/// `operation_event_cursor(operation_id, sequence)`, at most
/// [`EVENTS_SHOWN`] (the operation overlay's list).
pub(super) const EVENTS_SQL: &str =
    "SELECT sequence, event_json, recorded_at FROM operation_events WHERE operation_id = ?1
     ORDER BY sequence LIMIT ?2";

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

/// What one connection keeps of the queue from its last read.
#[derive(Debug, Default)]
pub(super) struct QueueMemory {
    /// The ids pending then: re-read by id on the next read, so their
    /// finish is always seen, however many newer rows were created.
    pending: Vec<String>,
    /// The finished operations listed then, with their newest step event
    /// and when they ran.
    /// A finished operation's events are final (the controller writes them
    /// from the running operation's progress sink, stackless-0.4.0
    /// src/controller.rs:528-531, before `finish_operation`, :416-418; the
    /// journal marker only while running, core-0.4.0
    /// src/state/operation.rs:241-250), so they are not read again.
    finished: std::collections::HashMap<String, (Option<StepProgress>, Option<Ran>)>,
}

/// Every pending operation (oldest first), then the [`FINISHED_SHOWN`]
/// newest finished ones (by rowid) and those pending at the last read
/// (`memory`) that are finished but not among them, all in the order they
/// finished (`crate::model::operation::order_finished`: `updated_at`,
/// newest first), each with its newest step event (read again only for the operations
/// not already finished at the last read). Read leniently: a value of the
/// wrong type reads as empty / 0.
pub(super) fn read_operations(
    conn: &Connection,
    layout: Layout,
    memory: &mut QueueMemory,
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
    let finished_late = finished_since(conn, layout, &memory.pending, &operations)?;
    operations.extend(finished_late);
    crate::model::operation::order_finished(&mut operations);
    if layout.operation_events {
        read_events(conn, &mut operations, memory)?;
    }
    memory.pending.clear();
    memory.finished.clear();
    for op in &operations {
        if op.status.is_pending() {
            memory.pending.push(op.id.clone());
        } else {
            memory
                .finished
                .insert(op.id.clone(), (op.progress.clone(), op.ran));
        }
    }
    Ok(operations)
}

/// Each operation's newest step event and when it ran (its first and
/// newest events' times: [`Ran`]), from `memory` for those finished at
/// the last read.
fn read_events(
    conn: &Connection,
    operations: &mut [Operation],
    memory: &QueueMemory,
) -> rusqlite::Result<()> {
    let mut newest_stmt = conn.prepare_cached(NEWEST_EVENT_SQL)?;
    let mut first_stmt = conn.prepare_cached(FIRST_EVENT_SQL)?;
    let event = |row: &rusqlite::Row<'_>| {
        Ok((
            lenient_text(col(row, 0)).unwrap_or_default(),
            lenient_int(col(row, 1)),
        ))
    };
    for op in operations {
        if !op.status.is_pending()
            && let Some((progress, ran)) = memory.finished.get(&op.id)
        {
            op.progress.clone_from(progress);
            op.ran = *ran;
            continue;
        }
        let newest = newest_stmt.query_row([op.id.as_str()], event).optional()?;
        let Some((newest_json, newest_at)) = newest else {
            op.progress = None;
            op.ran = None;
            continue;
        };
        op.progress = StepProgress::parse(&newest_json);
        let first = first_stmt.query_row([op.id.as_str()], event).optional()?;
        op.ran = first.and_then(|(json, at)| {
            let (started_ms, _) = event_times(&json, at)?;
            let (_, last_ms) = event_times(&newest_json, newest_at)?;
            Some(Ran {
                started_ms,
                last_ms: last_ms.max(started_ms),
            })
        });
    }
    Ok(())
}

/// The operations of `previous` (pending at the last read) that are in
/// neither list of `listed` and are finished now, newest (highest rowid)
/// first: one primary-key seek each, only for those.
fn finished_since(
    conn: &Connection,
    layout: Layout,
    previous: &[String],
    listed: &[Operation],
) -> rusqlite::Result<Vec<Operation>> {
    if previous.is_empty() {
        return Ok(Vec::new());
    }
    let listed: std::collections::HashSet<&str> = listed.iter().map(|op| op.id.as_str()).collect();
    let mut found: Vec<(i64, Operation)> = Vec::new();
    let mut stmt = conn.prepare_cached(&with_birth(BY_ID_SQL, layout))?;
    for id in previous.iter().filter(|id| !listed.contains(id.as_str())) {
        let row = stmt
            .query_row([id.as_str()], |row| {
                Ok((
                    lenient_int(col(row, 9)).unwrap_or(0),
                    operation_from_row(row),
                ))
            })
            .optional()?;
        if let Some((rowid, op)) = row.filter(|(_, op)| !op.status.is_pending()) {
            found.push((rowid, op));
        }
    }
    found.sort_by_key(|(rowid, _)| std::cmp::Reverse(*rowid));
    Ok(found.into_iter().map(|(_, op)| op).collect())
}

/// The first pending operation on `name` (matched by name, as the
/// controller's reaper does: daemon-0.4.0/src/reaper.rs:7-12): verb and
/// status.
/// Through what the last snapshot of `file` saw when it can
/// ([`super::queue_seen`]: a few index seeks), else a walk of the pending
/// rows.
pub(super) fn pending_on(
    conn: &Connection,
    file: Option<(u64, u64)>,
    name: &str,
) -> rusqlite::Result<Option<(String, OpStatus)>> {
    if let super::queue_seen::Pending::Known(found) =
        super::queue_seen::pending_on(conn, file, name)
    {
        return Ok(found);
    }
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
        ran: None,
    }
}

impl super::Store {
    /// [`super::Store::operation_events`], on the connection as it is.
    pub(super) fn operation_events_once(
        &mut self,
        id: &str,
    ) -> Result<Vec<OpEvent>, super::StoreError> {
        if !self.layout.operation_events {
            return Ok(Vec::new());
        }
        let path = self.path.clone();
        let err = |e: rusqlite::Error| super::StoreError::sqlite(&path, &e);
        let limit = i64::try_from(EVENTS_SHOWN).unwrap_or(i64::MAX);
        let mut stmt = self.conn.prepare_cached(EVENTS_SQL).map_err(err)?;
        let rows = stmt
            .query_map(rusqlite::params![id, limit], |row| {
                Ok(OpEvent::parse(
                    lenient_int(col(row, 0)).unwrap_or_default(),
                    &lenient_text(col(row, 1)).unwrap_or_default(),
                    lenient_int(col(row, 2)),
                ))
            })
            .map_err(err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err)
    }

    /// The plans `SQLite` chooses for the queue's reads (`EXPLAIN QUERY
    /// PLAN` detail lines, per read: `pending`, `finished`,
    /// `newest_event`, `first_event`, `by_id`, `still_pending`, `pending_since`), for the
    /// tests that check no read scans the queue.
    ///
    /// # Errors
    /// `SQLite` errors (a store without the queue's tables).
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    pub fn operation_query_plans(&self) -> Result<Vec<(String, Vec<String>)>, super::StoreError> {
        query_plans(&self.conn).map_err(|e| super::StoreError::sqlite(&self.path, &e))
    }
}

#[cfg(feature = "test-support")]
fn query_plans(conn: &Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let layout = Layout {
        operation_birth: true,
        ..Layout::default()
    };
    let queries = [
        ("pending", with_birth(PENDING_SQL, layout), None),
        ("finished", with_birth(FINISHED_SQL, layout), Some("50")),
        ("newest_event", NEWEST_EVENT_SQL.to_owned(), Some("x")),
        ("first_event", FIRST_EVENT_SQL.to_owned(), Some("x")),
        ("events", EVENTS_SQL.replace("?2", "1000"), Some("x")),
        ("by_id", with_birth(BY_ID_SQL, layout), Some("x")),
        (
            "still_pending",
            super::queue_seen::STILL_PENDING_SQL.replace("?2", "'n'"),
            Some("x"),
        ),
        (
            "pending_since",
            super::queue_seen::PENDING_SINCE_SQL.replace("?2", "'n'"),
            Some("1"),
        ),
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
