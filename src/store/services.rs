//! The I/O half of [`crate::model::services`]: probe each service process
//! (the lock holders' probe, [`HostProbe`]: pid plus start time) and look
//! at its log file (`<state_dir>/logs/<dir>/<service>.log`, metadata only,
//! never following a symlink), for the detail view and `snapshot --json`;
//! plus the two queries of the process checkpoints: every instance's
//! (`snapshot --json`) and the active instances' pids and start times (the
//! watcher's Instances mark).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::OptionalExtension as _;
use rusqlite::types::ValueRef;

use super::lenient::{col, lenient_int, lenient_text};
use super::probe::HostProbe;
use super::{Store, StoreError};
use crate::model::detail::{Checkpoint, InstanceDetail};
use crate::model::name::is_dns_safe;
use crate::model::services::{self, DetailView, LogState};

/// `detail` with its services (from what it read: checkpoints,
/// placements, observations): each process probed with `probe`, each log
/// found under `state_dir`.
pub fn observe(detail: InstanceDetail, state_dir: &Path, probe: &mut dyn HostProbe) -> DetailView {
    crate::render_thread::assert_off("probe the services");
    let logs = logs_dir(state_dir, &detail.logs_dir_name);
    let services = services::services(
        &detail,
        &detail.substrate,
        logs.as_deref(),
        |pid| probe.live_start_time(pid),
        stat_log,
    );
    DetailView { detail, services }
}

/// `<state_dir>/logs/<dir>` as text, when `dir` is DNS-safe (a namespace
/// `sl-<hex>` or a name: nothing else forms a path) and the path is UTF-8.
#[must_use]
pub fn logs_dir(state_dir: &Path, dir: &str) -> Option<String> {
    if !is_dns_safe(dir) {
        return None;
    }
    state_dir.join("logs").join(dir).to_str().map(str::to_owned)
}

/// What is at `path`: its size and mtime when it is a regular file. Never
/// follows a symlink, neither the file nor the two directories above it
/// (`logs/` and `logs/<dir>/`, which stackless creates as plain
/// directories).
#[must_use]
pub fn stat_log(path: &str) -> LogState {
    let path = Path::new(path);
    let dirs = [path.parent(), path.parent().and_then(Path::parent)];
    for dir in dirs.into_iter().flatten() {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return LogState::Refused(format!("{} is a symlink: not followed", dir.display()));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return LogState::Missing,
            Err(e) => return LogState::Refused(e.to_string()),
        }
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            LogState::Refused("a symlink: not followed".into())
        }
        Ok(meta) if !meta.is_file() => LogState::Refused("not a regular file".into()),
        Ok(meta) => LogState::Present {
            size: meta.len(),
            modified: meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_secs()).ok()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => LogState::Missing,
        Err(e) => LogState::Refused(e.to_string()),
    }
}

/// One instance's rows that `snapshot --json`'s `services` need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceRows {
    /// Its process checkpoints (`start:%`, kind `process`).
    pub checkpoints: Vec<Checkpoint>,
    /// `substrate`.
    pub substrate: String,
    /// `resource_namespace` when the store has it (schema 7+), else the
    /// name.
    pub logs_dir_name: String,
}

impl Store {
    /// Every instance's last observations (schema 11+, `observations`:
    /// what stackless last observed of each service, the input of its
    /// stage), by instance name through its birth (`instance_id`), for the
    /// names between `range` when given, in one read transaction; empty
    /// before schema 11.
    ///
    /// # Errors
    /// `SQLite` errors.
    pub fn observations_between(
        &mut self,
        range: Option<(&str, &str)>,
    ) -> Result<HashMap<String, Vec<crate::model::detail::Observation>>, StoreError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let tx = self.conn.transaction().map_err(err)?;
        let readable = tx
            .prepare("SELECT o.node FROM observations o JOIN instances i ON i.instance_id = o.owner_id LIMIT 0")
            .is_ok();
        let mut out: HashMap<String, Vec<crate::model::detail::Observation>> = HashMap::new();
        if !readable {
            return Ok(out);
        }
        let sql = format!(
            "SELECT i.name, o.node, o.evidence_json, o.observed_at
             FROM observations o JOIN instances i ON i.instance_id = o.owner_id {}
             ORDER BY i.name, o.node",
            if range.is_some() {
                "WHERE i.name BETWEEN ?1 AND ?2"
            } else {
                ""
            }
        );
        let mut stmt = tx.prepare_cached(&sql).map_err(err)?;
        let mut rows = match range {
            Some((first, last)) => stmt.query([first, last]),
            None => stmt.query([]),
        }
        .map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let text = |i| lenient_text(col(row, i)).unwrap_or_default();
            out.entry(text(0))
                .or_default()
                .push(crate::model::detail::Observation::parse(
                    text(1),
                    &text(2),
                    lenient_int(col(row, 3)),
                ));
        }
        Ok(out)
    }

    /// Every instance's process checkpoints (only the active instances'
    /// when `active_only`), by instance name, in one read transaction
    /// (empty when the store has no `checkpoints` table).
    ///
    /// # Errors
    /// `SQLite` errors.
    pub fn service_rows(
        &mut self,
        active_only: bool,
    ) -> Result<HashMap<String, ServiceRows>, StoreError> {
        self.service_rows_between(active_only, None)
    }

    /// Whether the `checkpoints` table declares a collation (then a range
    /// of names, [`Store::service_rows_between`], need not match byte
    /// order). An unreadable schema reads as `true` (read whole).
    #[must_use]
    pub fn checkpoints_collate(&self) -> bool {
        self.conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'",
                [],
                |row| Ok(lenient_text(col(row, 0)).unwrap_or_default()),
            )
            .optional()
            .map_or(true, |sql| {
                sql.is_some_and(|sql| sql.to_ascii_lowercase().contains("collate"))
            })
    }

    /// [`Store::service_rows`] of the instances named `first..=last` only
    /// (byte order, as `SQLite`'s `BINARY` compares; `None`: all), read
    /// through the `checkpoints` primary key: `snapshot --json` reads a
    /// batch of names at a time instead of every checkpoint at once.
    ///
    /// # Errors
    /// `SQLite` errors.
    pub fn service_rows_between(
        &mut self,
        active_only: bool,
        range: Option<(&str, &str)>,
    ) -> Result<HashMap<String, ServiceRows>, StoreError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let tx = self.conn.transaction().map_err(err)?;
        let has_table = |table: &str| -> rusqlite::Result<bool> {
            tx.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get::<_, i64>(0),
            )
            .map(|n| n > 0)
        };
        if !has_table("checkpoints").map_err(err)? {
            return Ok(HashMap::new());
        }
        let namespace = tx
            .prepare("SELECT resource_namespace FROM instances LIMIT 0")
            .is_ok();
        let sql = format!(
            "SELECT c.instance, c.step_id, c.resource_kind, c.resource_id, c.payload,
                    c.recorded_at, i.substrate, {}
             FROM checkpoints c JOIN instances i ON i.name = c.instance
             WHERE c.resource_kind = 'process' AND c.step_id LIKE 'start:%' {} {}
             ORDER BY c.instance, c.step_id",
            if namespace {
                "i.resource_namespace"
            } else {
                "NULL"
            },
            if active_only {
                "AND i.status = 'active'"
            } else {
                ""
            },
            if range.is_some() {
                "AND c.instance BETWEEN ?1 AND ?2"
            } else {
                ""
            }
        );
        let mut out: HashMap<String, ServiceRows> = HashMap::new();
        {
            let mut stmt = tx.prepare_cached(&sql).map_err(err)?;
            let mut rows = match range {
                Some((first, last)) => stmt.query([first, last]),
                None => stmt.query([]),
            }
            .map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let text = |i| lenient_text(col(row, i)).unwrap_or_default();
                let name = text(0);
                let entry = out.entry(name.clone()).or_insert_with(|| ServiceRows {
                    checkpoints: Vec::new(),
                    substrate: text(6),
                    logs_dir_name: lenient_text(col(row, 7))
                        .filter(|n| !n.is_empty())
                        .unwrap_or(name),
                });
                entry.checkpoints.push(Checkpoint {
                    step_id: text(1),
                    resource_kind: text(2),
                    resource_id: text(3),
                    payload: text(4),
                    recorded_at: lenient_int(col(row, 5)),
                });
            }
        }
        tx.commit().map_err(err)?;
        Ok(out)
    }
}

/// The service observations (`service:<name>` nodes) of the active
/// instances with no service process recorded (services on another
/// substrate, or a failed `up`'s), each handed to `each` as read, by
/// instance then node: what decides their stage when no process does
/// ([`crate::model::readiness::stage`] with no process). Nothing before
/// schema 11 (no `observations`).
///
/// # Errors
/// An `SQLite` error.
pub fn each_unrecorded_observation(
    store: &mut Store,
    mut each: impl FnMut(String, crate::model::detail::Observation),
) -> Result<(), StoreError> {
    let path = store.path.clone();
    let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
    let tx = store.conn.transaction().map_err(err)?;
    let readable = tx
        .prepare(
            "SELECT o.node FROM observations o JOIN instances i ON i.instance_id = o.owner_id \
             JOIN checkpoints c ON c.instance = i.name LIMIT 0",
        )
        .is_ok();
    if !readable {
        return Ok(());
    }
    {
        let mut stmt = tx
            .prepare(
                "SELECT i.name, o.node, o.evidence_json, o.observed_at
                 FROM observations o JOIN instances i ON i.instance_id = o.owner_id
                 WHERE i.status = 'active' AND o.node LIKE 'service:%'
                   AND NOT EXISTS (SELECT 1 FROM checkpoints c
                                   WHERE c.instance = i.name AND c.resource_kind = 'process'
                                     AND c.step_id LIKE 'start:%')
                 ORDER BY i.name, o.node",
            )
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let text = |i| lenient_text(col(row, i)).unwrap_or_default();
            each(
                text(0),
                crate::model::detail::Observation::parse(
                    text(1),
                    &text(2),
                    lenient_int(col(row, 3)),
                ),
            );
        }
    }
    tx.commit().map_err(err)?;
    Ok(())
}

/// The recorded service processes of the active instances, as the
/// watcher probes them: each `(instance, record)` handed to `each` as it is
/// read (nothing is collected: at 100,000 instances there are 70,000), by
/// instance then service; `stop` is checked between rows. Returns whether
/// the read went to its end (`false`: an `SQLite` error or `stop` ended it
/// early, and what was handed out is partial).
pub fn each_active_record(
    store: &mut Store,
    stop: &crate::stop::StopToken,
    each: impl FnMut(String, services::StartRecord),
) -> bool {
    read_active_records(store, stop, each).is_ok() && !stop.is_cancelled()
}

fn read_active_records(
    store: &mut Store,
    stop: &crate::stop::StopToken,
    mut each: impl FnMut(String, services::StartRecord),
) -> rusqlite::Result<()> {
    let tx = store.conn.transaction()?;
    let exists: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'",
        [],
        |row| row.get(0),
    )?;
    if exists == 0 {
        return Ok(());
    }
    {
        let mut stmt = tx.prepare(
            "SELECT c.instance, c.step_id, c.payload
             FROM checkpoints c JOIN instances i ON i.name = c.instance
             WHERE c.resource_kind = 'process' AND c.step_id LIKE 'start:%'
               AND i.status = 'active'
             ORDER BY c.instance, c.step_id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            if stop.is_cancelled() {
                break;
            }
            let ValueRef::Text(step) = col(row, 1) else {
                continue;
            };
            let ValueRef::Text(payload) = col(row, 2) else {
                continue;
            };
            // Decoded as `lenient_text` does, borrowed when valid UTF-8.
            let (step, payload) = (
                String::from_utf8_lossy(step),
                String::from_utf8_lossy(payload),
            );
            // The one parser (the detail view's and snapshot --json's).
            let Some(record) = services::start_record(&step, "process", &payload) else {
                continue;
            };
            each(lenient_text(col(row, 0)).unwrap_or_default(), record);
        }
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_stat_ed_never_through_a_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let logs = dir.path().join("logs").join("sl-1");
        std::fs::create_dir_all(&logs).expect("mkdir");
        std::fs::write(logs.join("web.log"), "one\ntwo\n").expect("write");
        std::os::unix::fs::symlink("/etc/passwd", logs.join("evil.log")).expect("symlink");
        let path = |name: &str| logs.join(name).to_str().expect("utf-8").to_owned();
        assert!(matches!(
            stat_log(&path("web.log")),
            LogState::Present {
                size: 8,
                modified: Some(_)
            }
        ));
        assert_eq!(
            stat_log(&path("evil.log")),
            LogState::Refused("a symlink: not followed".into())
        );
        assert_eq!(stat_log(&path("api.log")), LogState::Missing);
        std::os::unix::fs::symlink(&logs, dir.path().join("logs").join("sl-2")).expect("link");
        let through = dir.path().join("logs/sl-2/web.log");
        assert!(matches!(
            stat_log(through.to_str().expect("utf-8")),
            LogState::Refused(why) if why.ends_with("is a symlink: not followed")
        ));
        assert_eq!(logs_dir(dir.path(), "../etc"), None);
        assert_eq!(
            logs_dir(Path::new("/s"), "sl-abc").as_deref(),
            Some("/s/logs/sl-abc")
        );
    }

    /// The Instances row's count reads start records with the
    /// detail view's parser: a pid or start time written as a string or a
    /// float is left out here too.
    #[test]
    fn active_records_use_the_one_parser() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let source = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real-0.4.0-v14.db"
        );
        std::fs::copy(source, &path).expect("copy");
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            r#"UPDATE checkpoints SET payload = '{"pid":"19240","start_time":1796117794}'
                 WHERE instance = 'alpha' AND step_id = 'start:web';
               UPDATE checkpoints SET payload = '{"pid":19261,"start_time":1796117795.5}'
                 WHERE instance = 'hotel' AND step_id = 'start:web';"#,
        )
        .expect("update");
        drop(conn);
        let mut store = Store::open(&path, crate::store::Access::ReadOnly).expect("store");
        let mut names: Vec<String> = Vec::new();
        let stop = crate::stop::StopToken::new();
        assert!(each_active_record(&mut store, &stop, |name, record| {
            names.push(format!("{name}:{}:{}", record.service, record.pid));
        }));
        assert_eq!(names, ["golf:web:28530", "india:web:19587"]);
        // A cancelled read stops before its first row.
        stop.cancel();
        let mut after_stop = 0;
        assert!(!each_active_record(&mut store, &stop, |_, _| after_stop += 1));
        assert_eq!(after_stop, 0);
    }
}
