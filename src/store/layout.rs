//! What a store's schema holds, read at each open: its generation
//! (`user_version`), which optional tables and columns it has
//! ([`Layout`]), and the v4 schema written into a file the console created
//! itself (`Store::open_or_create`).

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{StoreError, schema};
use crate::model::Generation;

/// Which optional columns and tables the store has (they depend on its
/// migrations: a v2 store has no `reap_attempts` and no `holder_host`). Each
/// is read only where the generation says it is known *and* the column is
/// there: "read what you know" (docs/stackless-releases.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one bool per table or column the store has: independent facts read from its schema"
)]
pub(super) struct Layout {
    /// `reap_attempts` (migration 3).
    pub(super) reap_attempts: bool,
    /// `op_locks.holder_host` (migration 4).
    pub(super) holder_host: bool,
    /// `instances.dirty` (migration 5, stackless 0.2.0+; read on v5+).
    pub(super) dirty: bool,
    /// `op_locks.claim_id` (migration 6).
    pub(super) claim_id: bool,
    /// `instances.instance_id` and `resource_namespace` (migration 7).
    pub(super) birth: bool,
    /// `operations` with the columns of migration 8 (read on v8+).
    pub(super) operations: bool,
    /// `operations.instance_id` (migration 10).
    pub(super) operation_birth: bool,
    /// `operation_events` with the columns of migration 8.
    pub(super) operation_events: bool,
    /// `secret_history` with its `value` column (migration 10, stackless
    /// 0.4.0): the values to redact (`super::secrets`).
    pub(super) secret_history: bool,
}

/// Run migrations 1-4 on an empty database, each batch in its own
/// transaction that also sets `user_version` (contract, "Schema"), then
/// switch to WAL as stackless does.
pub(super) fn create_schema(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    for (index, sql) in schema::MIGRATIONS.iter().enumerate() {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| StoreError::sqlite(path, &e))?;
        tx.execute_batch(sql)
            .map_err(|e| StoreError::sqlite(path, &e))?;
        tx.pragma_update(
            None,
            "user_version",
            i64::try_from(index + 1).unwrap_or(i64::MAX),
        )
        .map_err(|e| StoreError::sqlite(path, &e))?;
        tx.commit().map_err(|e| StoreError::sqlite(path, &e))?;
    }
    Ok(())
}

/// Whether the database has no schema at all (a new, empty file).
pub(super) fn is_empty(conn: &Connection, path: &Path) -> Result<bool, StoreError> {
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| StoreError::sqlite(path, &e))?;
    Ok(objects == 0)
}

pub(super) fn read_generation(conn: &Connection, path: &Path) -> Result<Generation, StoreError> {
    let user_version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| StoreError::sqlite(path, &e))?;
    Ok(Generation::new(user_version))
}

/// The names of `table`'s columns (empty when there is no such table).
fn table_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    stmt.query_map([table], |r| r.get::<_, String>(0))?
        .collect()
}

/// What the store has that this console knows how to read. Never an error
/// for an unknown table or column (v6-13, >14): those are left alone.
pub(super) fn read_layout(
    conn: &Connection,
    path: &Path,
    generation: Generation,
) -> Result<Layout, StoreError> {
    let err = |e: rusqlite::Error| StoreError::sqlite(path, &e);
    let tables: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .map_err(err)?;
        stmt.query_map([], |r| r.get::<_, String>(0))
            .map_err(err)?
            .collect::<Result<_, _>>()
            .map_err(err)?
    };
    let has = |t: &str| tables.iter().any(|n| n == t);
    for required in ["instances", "leases", "op_locks"] {
        if !has(required) {
            return Err(StoreError::NotStackless(
                path.to_owned(),
                required.to_owned(),
            ));
        }
    }
    let lock_columns = table_columns(conn, "op_locks").map_err(err)?;
    let instance_columns = table_columns(conn, "instances").map_err(err)?;
    let all =
        |present: &[String], wanted: &[&str]| wanted.iter().all(|w| present.iter().any(|c| c == w));
    let uv = generation.user_version;
    let (operations, operation_birth, operation_events) = if generation.has_operations() {
        let columns = table_columns(conn, "operations").map_err(err)?;
        let events = table_columns(conn, "operation_events").map_err(err)?;
        let operations = all(
            &columns,
            &[
                "id",
                "instance",
                "verb",
                "status",
                "created_at",
                "updated_at",
            ],
        );
        (
            operations,
            operations && all(&columns, &["instance_id"]),
            operations && all(&events, &["sequence", "operation_id", "event_json"]),
        )
    } else {
        (false, false, false)
    };
    if generation.has_operations() && !operations {
        // The 0.4.0 controller's rules need the queue: without it every
        // instance would look free of pending operations and the reaper
        // could race the controller. Refuse rather than guess.
        return Err(StoreError::NotStackless(
            path.to_path_buf(),
            "operations".to_owned(),
        ));
    }
    Ok(Layout {
        reap_attempts: has("reap_attempts"),
        holder_host: all(&lock_columns, &["holder_host"]),
        dirty: uv >= 5 && all(&instance_columns, &["dirty"]),
        claim_id: uv >= 6 && all(&lock_columns, &["claim_id"]),
        birth: uv >= 7 && all(&instance_columns, &["instance_id", "resource_namespace"]),
        operations,
        operation_birth,
        operation_events,
        secret_history: uv >= 10
            && all(
                &table_columns(conn, "secret_history").map_err(err)?,
                &["value"],
            ),
    })
}
