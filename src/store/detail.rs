//! One instance's full record for the detail view: the definition TOML,
//! `definition_dir`, `source_overrides` and its checkpoints, read in one read
//! transaction. The snapshot already carries the lease, lock and reap
//! attempt; this adds what is too big to read for every instance every
//! second.
//!
//! Read leniently, like the snapshot: a hand-made store may hold NULLs or
//! values of the wrong type, an older one may lack `definition_dir` (added by
//! migration 2) and a stripped-down one the whole `checkpoints` table. A
//! missing column reads as empty text, never as an error.

use rusqlite::{OptionalExtension, TransactionBehavior};

use super::lenient::{col, lenient_int, lenient_text};
use super::{Store, StoreError};
pub use crate::model::detail::{
    Checkpoint, InstanceDetail, Observation, Placement, Resource, Revision,
};

/// The names of `table`'s columns (empty when there is no such table).
fn columns(tx: &rusqlite::Transaction<'_>, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = tx.prepare("SELECT name FROM pragma_table_info(?1)")?;
    stmt.query_map([table], |r| r.get::<_, String>(0))?
        .collect()
}

/// `column` when `present` has it, else `NULL` (so the query still runs).
fn or_null<'a>(present: &[String], column: &'a str) -> &'a str {
    if present.iter().any(|c| c == column) {
        column
    } else {
        "NULL"
    }
}

impl Store {
    /// Read `name`'s definition, `definition_dir`, `source_overrides` and
    /// checkpoints in one read transaction. `Ok(None)` when no instance of
    /// that name exists (any more).
    ///
    /// # Errors
    /// `SQLite` errors (`StoreError::Busy` when the store stays locked past the
    /// busy timeout).
    pub(super) fn instance_detail_once(
        &mut self,
        name: &str,
    ) -> Result<Option<InstanceDetail>, StoreError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        let instance_columns = columns(&tx, "instances").map_err(err)?;
        let sql = format!(
            "SELECT {}, {}, {}, {}, {} FROM instances WHERE name = ?1",
            or_null(&instance_columns, "definition"),
            or_null(&instance_columns, "definition_dir"),
            or_null(&instance_columns, "source_overrides"),
            or_null(&instance_columns, "substrate"),
            or_null(&instance_columns, "resource_namespace"),
        );
        let detail = tx
            .query_row(&sql, [name], |row| {
                // Logs live under the name before schema 7, under the
                // resource namespace from then on.
                let namespace = lenient_text(col(row, 4)).filter(|n| !n.is_empty());
                Ok(InstanceDetail {
                    definition: lenient_text(col(row, 0)).unwrap_or_default(),
                    definition_dir: lenient_text(col(row, 1)).unwrap_or_default(),
                    source_overrides: lenient_text(col(row, 2)).unwrap_or_default(),
                    substrate: lenient_text(col(row, 3)).unwrap_or_default(),
                    logs_dir_name: namespace.unwrap_or_else(|| name.to_owned()),
                    checkpoints: Vec::new(),
                    ..InstanceDetail::default()
                })
            })
            .optional()
            .map_err(err)?;
        let Some(mut detail) = detail else {
            tx.commit().map_err(err)?;
            return Ok(None);
        };
        let checkpoint_columns = columns(&tx, "checkpoints").map_err(err)?;
        if checkpoint_columns.iter().any(|c| c == "instance") {
            let select = format!(
                "SELECT {}, {}, {}, {}, {} FROM checkpoints WHERE instance = ?1",
                or_null(&checkpoint_columns, "step_id"),
                or_null(&checkpoint_columns, "resource_kind"),
                or_null(&checkpoint_columns, "resource_id"),
                or_null(&checkpoint_columns, "payload"),
                or_null(&checkpoint_columns, "recorded_at"),
            );
            // Written order (rowid) when the table has one; a WITHOUT ROWID
            // table falls back to its key order.
            let mut stmt = match tx.prepare(&format!("{select} ORDER BY rowid")) {
                Ok(stmt) => stmt,
                Err(_) => tx.prepare(&select).map_err(err)?,
            };
            let mut rows = stmt.query([name]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                detail.checkpoints.push(Checkpoint {
                    step_id: lenient_text(col(row, 0)).unwrap_or_default(),
                    resource_kind: lenient_text(col(row, 1)).unwrap_or_default(),
                    resource_id: lenient_text(col(row, 2)).unwrap_or_default(),
                    payload: lenient_text(col(row, 3)).unwrap_or_default(),
                    recorded_at: lenient_int(col(row, 4)),
                });
            }
        }
        if instance_columns.iter().any(|c| c == "instance_id") {
            let owner: Option<String> = tx
                .query_row(
                    "SELECT instance_id FROM instances WHERE name = ?1",
                    [name],
                    |row| Ok(lenient_text(col(row, 0))),
                )
                .optional()
                .map_err(err)?
                .flatten();
            if let Some(owner) = owner.filter(|o| !o.is_empty()) {
                read_birth(&tx, &owner, &mut detail).map_err(err)?;
            }
        }
        super::secrets::redact_detail_read(&tx, &mut detail).map_err(err)?;
        tx.commit().map_err(err)?;
        // Stable: rows recorded in the same second keep their written order.
        detail
            .checkpoints
            .sort_by_key(|c| c.recorded_at.unwrap_or(i64::MAX));
        Ok(Some(detail))
    }
}

/// The tables keyed by the birth (`owner_id`), read leniently: a missing
/// table or column reads as empty. Never `resources.payload`, never
/// `secret_history`.
fn read_birth(
    tx: &rusqlite::Transaction<'_>,
    owner: &str,
    detail: &mut InstanceDetail,
) -> rusqlite::Result<()> {
    let has = |table: &str, wanted: &[&str]| -> rusqlite::Result<bool> {
        let present = columns(tx, table)?;
        Ok(wanted.iter().all(|w| present.iter().any(|c| c == w)))
    };
    if has("resources", &["owner_id", "resource_key"])? {
        let present = columns(tx, "resources")?;
        let sql = format!(
            "SELECT {}, {}, {}, {}, {}, {}, {} FROM resources WHERE owner_id = ?1
             ORDER BY resource_key",
            or_null(&present, "resource_kind"),
            or_null(&present, "resource_id"),
            or_null(&present, "phase"),
            or_null(&present, "ownership"),
            or_null(&present, "provider"),
            or_null(&present, "step_id"),
            or_null(&present, "updated_at"),
        );
        let mut stmt = tx.prepare(&sql)?;
        let mut rows = stmt.query([owner])?;
        while let Some(row) = rows.next()? {
            let text = |i| lenient_text(col(row, i)).unwrap_or_default();
            detail.resources.push(Resource {
                kind: text(0),
                id: text(1),
                phase: text(2),
                ownership: text(3),
                provider: text(4),
                step_id: text(5),
                updated_at: lenient_int(col(row, 6)),
            });
        }
    }
    if has("placements", &["owner_id", "node", "provider"])? {
        let mut stmt =
            tx.prepare("SELECT node, provider FROM placements WHERE owner_id = ?1 ORDER BY node")?;
        let mut rows = stmt.query([owner])?;
        while let Some(row) = rows.next()? {
            detail.placements.push(Placement {
                node: lenient_text(col(row, 0)).unwrap_or_default(),
                provider: lenient_text(col(row, 1)).unwrap_or_default(),
            });
        }
    }
    if has(
        "instance_revisions",
        &["owner_id", "desired_revision", "applied_revision"],
    )? {
        detail.revision = tx
            .query_row(
                "SELECT desired_revision, applied_revision FROM instance_revisions
                 WHERE owner_id = ?1",
                [owner],
                |row| {
                    Ok(Revision {
                        desired: lenient_text(col(row, 0)).unwrap_or_default(),
                        applied: lenient_text(col(row, 1)),
                    })
                },
            )
            .optional()?;
    }
    if has(
        "observations",
        &["owner_id", "node", "evidence_json", "observed_at"],
    )? {
        let mut stmt = tx.prepare(
            "SELECT node, evidence_json, observed_at FROM observations WHERE owner_id = ?1
             ORDER BY node",
        )?;
        let mut rows = stmt.query([owner])?;
        while let Some(row) = rows.next()? {
            detail.observations.push(Observation::parse(
                lenient_text(col(row, 0)).unwrap_or_default(),
                &lenient_text(col(row, 1)).unwrap_or_default(),
                lenient_int(col(row, 2)),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Access;

    fn store_with(sql: &str) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch(sql).expect("schema");
        drop(conn);
        let store = Store::open(&path, Access::ReadOnly).expect("open");
        (dir, store)
    }

    const BASE: &str =
        "CREATE TABLE leases (instance TEXT, duration_secs INTEGER, expires_at INTEGER);
         CREATE TABLE op_locks (instance TEXT, operation TEXT, holder_pid INTEGER,
           holder_start_time INTEGER, acquired_at INTEGER);";

    #[test]
    fn old_store_without_definition_dir_or_checkpoints() {
        let (_dir, mut store) = store_with(&format!(
            "{BASE}
             CREATE TABLE instances (name TEXT PRIMARY KEY, substrate TEXT, status TEXT,
               definition TEXT, source_overrides TEXT, created_at INTEGER, tombstoned_at INTEGER);
             INSERT INTO instances VALUES ('a', 'local', 'active', NULL, '{{}}', 1, NULL);"
        ));
        let detail = store.instance_detail("a").expect("read").expect("a exists");
        assert_eq!(
            detail,
            InstanceDetail {
                definition: String::new(),
                definition_dir: String::new(),
                source_overrides: "{}".into(),
                substrate: "local".into(),
                logs_dir_name: "a".into(),
                checkpoints: vec![],
                ..InstanceDetail::default()
            }
        );
        assert_eq!(store.instance_detail("missing").expect("read"), None);
    }

    #[test]
    fn checkpoints_in_written_order_with_nulls() {
        let (_dir, mut store) = store_with(&format!(
            "{BASE}
             CREATE TABLE instances (name TEXT PRIMARY KEY, substrate TEXT, status TEXT,
               definition TEXT, source_overrides TEXT, created_at INTEGER, tombstoned_at INTEGER,
               definition_dir TEXT);
             CREATE TABLE checkpoints (instance TEXT, step_id TEXT, resource_kind TEXT,
               resource_id TEXT, payload TEXT, recorded_at INTEGER, PRIMARY KEY (instance, step_id));
             INSERT INTO instances VALUES ('a', 'local', 'active', '[stack]', NULL, 1, NULL, '/d');
             INSERT INTO checkpoints VALUES ('a', 'z-first', 'source', '/p', '{{}}', 5);
             INSERT INTO checkpoints VALUES ('a', 'a-second', 'process', 42, NULL, 5);
             INSERT INTO checkpoints VALUES ('a', 'm-undated', NULL, NULL, NULL, 'soon');
             INSERT INTO checkpoints VALUES ('a', 'b-earliest', 'action', 'x', '{{}}', 1);
             INSERT INTO checkpoints VALUES ('b', 'other', 'action', 'x', '{{}}', 1);"
        ));
        let detail = store.instance_detail("a").expect("read").expect("a exists");
        assert_eq!(detail.definition, "[stack]");
        assert_eq!(detail.definition_dir, "/d");
        assert_eq!(detail.source_overrides, "");
        let steps: Vec<&str> = detail
            .checkpoints
            .iter()
            .map(|c| c.step_id.as_str())
            .collect();
        assert_eq!(steps, ["b-earliest", "z-first", "a-second", "m-undated"]);
        assert_eq!(detail.checkpoints[2].resource_id, "42");
        assert_eq!(detail.checkpoints[2].payload, "");
        assert_eq!(detail.checkpoints[3].recorded_at, None);
    }
}
