//! The store adapter on every fixture generation and every broken-store case.

use crate::common::{CAPTURE, fixture};
use stackless_tui::model::generation::Era;
use stackless_tui::model::{Liveness, Status};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store, StoreError};

fn vm() -> FixedProbe {
    FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    }
}

#[test]
fn real_v4_store_reads_exactly() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    assert_eq!(store.generation().user_version, 4);
    let snap = store.snapshot(&mut vm()).unwrap();
    let names: Vec<_> = snap.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "alpha",
            "bravo",
            "charlie",
            "delta",
            "duo-79882653-fd55-4b17-bf19-d4afc89a2b5e",
            "echo",
            "golf",
            "hotel"
        ]
    );
    let golf = snap.instance("golf").unwrap();
    assert_eq!(golf.lease.unwrap().expires_at - CAPTURE, -332);
    assert_eq!(golf.lease.unwrap().duration_secs, 60);
    let attempt = snap.reap_attempt("golf").unwrap();
    assert_eq!((attempt.attempts, attempt.last_error.as_str()), (3, "}"));
    assert_eq!(attempt.next_retry_at - CAPTURE, 173);
    let echo = snap.instance("echo").unwrap();
    let lock = echo.lock.as_ref().unwrap();
    assert_eq!(
        (
            lock.operation.as_str(),
            lock.holder_pid,
            lock.holder_host.as_deref()
        ),
        ("up", 15180, Some("vm"))
    );
    assert_eq!(snap.lock_liveness("echo"), Some(&Liveness::StalePidGone));
    let charlie = snap.instance("charlie").unwrap();
    assert_eq!(charlie.status, Status::Tombstoned);
    assert_eq!(charlie.lease, None);
    assert!(snap.instances.iter().all(|i| i.anomalies.is_empty()));
}

#[test]
fn reading_never_rewrites_the_file() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let before = std::fs::read(&path).unwrap();
    {
        let mut store = Store::open(&path, Access::ReadWrite).unwrap();
        store.snapshot(&mut vm()).unwrap();
        store.recheck("golf").unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn older_v2_store_is_shown_with_reaper_off() {
    let (_dir, path) = fixture("older-v2.db");
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let generation = store.generation();
    assert_eq!(generation.user_version, 2);
    assert_eq!(generation.era(), Era::Older);
    assert!(!generation.allows_reaper());
    assert_eq!(
        generation.banner().unwrap(),
        "store schema v2 is older than v4: reaper and write keys are off. Run any `stackless` command (e.g. `stackless list`) to upgrade the store."
    );
    let snap = store.snapshot(&mut vm()).unwrap();
    assert_eq!(snap.instances.len(), 3);
    assert!(snap.reap_attempts.is_empty());
    let lock = snap
        .instance("legacy-expired")
        .unwrap()
        .lock
        .clone()
        .unwrap();
    assert_eq!(lock.holder_host, None);
    assert_eq!(lock.holder_pid, 4242);
    // Writes are refused, and user_version is untouched.
    let err = store
        .record_reap_failure("legacy-expired", "x", CAPTURE)
        .unwrap_err();
    assert!(matches!(err, StoreError::ReadOnly(_)));
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 2);
}

#[test]
fn newer_v6_store_keeps_reaper_leaves_gc() {
    let (_dir, path) = fixture("newer-v6.db");
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let generation = store.generation();
    assert_eq!(generation.era(), Era::Unreleased);
    assert!(generation.allows_reaper());
    assert!(!generation.allows_gc());
    let snap = store.snapshot(&mut vm()).unwrap();
    assert_eq!(snap.instances.len(), 3);
    let attempt = snap.reap_attempt("future-expired").unwrap();
    assert_eq!(attempt.attempts, 2);
    let reason = stackless_tui::model::envelope::read_reason(&attempt.last_error);
    assert_eq!(
        reason.summary,
        "render.api.unavailable: Render API answered 503"
    );
    assert_eq!(reason.remediation.as_deref(), Some("retry later"));
    assert!(matches!(
        store.delete_tombstone("future-old", i64::MAX),
        Err(StoreError::ReadOnly(_))
    ));
    // The reaper's own row can still be written, and user_version stays 6.
    store
        .record_reap_failure("future-expired", "boom", CAPTURE)
        .unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 6);
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'operations'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1, "unknown tables survive");
    let dirty_column: i64 = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('instances') WHERE name = 'dirty'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dirty_column, 1, "unknown columns survive");
}

#[test]
fn created_schema_matches_real_stackless() {
    let dir = tempfile::tempdir().unwrap();
    let created = dir.path().join("nested/dir/state.db");
    let store = Store::open_or_create(&created).unwrap();
    assert_eq!(store.generation().user_version, 4);
    drop(store);
    let (_fx, real) = fixture("stackless-real-v4.db");
    let schema = |p: &std::path::Path| -> Vec<(String, String)> {
        let conn = rusqlite::Connection::open(p).unwrap();
        let mut stmt = conn
            .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(schema(&created), schema(&real));
    let conn = rusqlite::Connection::open(&created).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn missing_path_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.db");
    let err = Store::open(&path, Access::ReadWrite).unwrap_err();
    assert_eq!(err, StoreError::NotFound(path.clone()));
    assert!(err.to_string().contains(&path.display().to_string()));
    assert!(!path.exists(), "a --state path is never created");
}

#[test]
fn directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path(), Access::ReadWrite).unwrap_err();
    assert_eq!(err, StoreError::IsDirectory(dir.path().to_owned()));
}

#[test]
fn garbage_file_is_not_a_database_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let garbage = b"this is not sqlite, it is a shopping list\n".repeat(200);
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path, Access::ReadWrite).unwrap_err();
    assert_eq!(err, StoreError::NotADatabase(path.clone()));
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
}

#[test]
fn sqlite_without_stackless_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
        .unwrap();
    let err = Store::open(&path, Access::ReadWrite).unwrap_err();
    assert_eq!(
        err,
        StoreError::NotStackless(path.clone(), "instances".into())
    );
}

#[test]
fn read_only_store_reads_and_refuses_writes() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let before = std::fs::read(&path).unwrap();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    assert_eq!(store.snapshot(&mut vm()).unwrap().instances.len(), 8);
    assert!(matches!(
        store.record_reap_failure("golf", "x", CAPTURE),
        Err(StoreError::ReadOnly(_))
    ));
    assert!(matches!(
        store.clear_reap_failure("golf"),
        Err(StoreError::ReadOnly(_))
    ));
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn busy_store_is_a_typed_error_and_reads_continue() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    store
        .set_busy_timeout(std::time::Duration::from_millis(100))
        .unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; UPDATE instances SET substrate = substrate;")
        .unwrap();
    // WAL: the snapshot still reads while another process writes.
    assert_eq!(store.snapshot(&mut vm()).unwrap().instances.len(), 8);
    let err = store.record_reap_failure("golf", "x", CAPTURE).unwrap_err();
    assert!(err.is_busy(), "{err:?}");
    other.execute_batch("ROLLBACK").unwrap();
    let row = store.record_reap_failure("golf", "x", CAPTURE).unwrap();
    assert_eq!(row.attempts, 4);
}

#[test]
fn hostile_rows_read_without_panicking() {
    let (_dir, path) = fixture("hostile.db");
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snap = store.snapshot(&mut vm()).unwrap();
    assert_eq!(snap.instances.len(), 7);
    let attempt = snap.reap_attempt("ok-neighbour").unwrap();
    assert!(attempt.last_error.len() >= 5000);
    assert!(attempt.last_error.contains('\0'));
}

#[test]
fn default_path_follows_xdg_then_home() {
    use stackless_tui::store::default_path;
    assert_eq!(
        default_path(Some("/x/state"), Some("/home/o")).unwrap(),
        std::path::PathBuf::from("/x/state/stackless/state.db")
    );
    assert_eq!(
        default_path(Some("relative"), Some("/home/o")).unwrap(),
        std::path::PathBuf::from("/home/o/.local/state/stackless/state.db")
    );
    assert_eq!(default_path(None, None), None);
}

#[test]
fn non_strict_store_with_nulls_and_extremes_renders_safely() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE instances (name, substrate, status, definition, source_overrides, created_at, tombstoned_at, definition_dir);
         CREATE TABLE leases (instance, duration_secs, expires_at);
         CREATE TABLE op_locks (instance, operation, holder_pid, holder_start_time, acquired_at, holder_host);
         CREATE TABLE reap_attempts (instance, attempts, last_error, next_retry_at);
         INSERT INTO instances VALUES ('nulls', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
         INSERT INTO instances VALUES ('far', 'local', 'active', '', '{}', 'yesterday', NULL, '');
         INSERT INTO leases VALUES ('nulls', NULL, NULL);
         INSERT INTO leases VALUES ('far', 60, 9223372036854775807);
         INSERT INTO op_locks VALUES ('far', 'up', -5, NULL, 0, 'vm');
         INSERT INTO reap_attempts VALUES ('far', 9223372036854775807, NULL, 'soon');
         PRAGMA user_version = 4;",
    )
    .unwrap();
    drop(conn);
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snap = store.snapshot(&mut vm()).unwrap();
    let nulls = snap.instance("nulls").unwrap();
    assert_eq!(nulls.lease, None);
    assert!(!nulls.anomalies.is_empty());
    let far = snap.instance("far").unwrap();
    assert_eq!(far.lease.unwrap().expires_at, i64::MAX);
    assert_eq!(snap.lock_liveness("far"), Some(&Liveness::StalePidGone));
    let attempt = snap.reap_attempt("far").unwrap();
    assert_eq!(attempt.attempts, i64::MAX);
    assert_eq!(attempt.next_retry_at, i64::MIN);
    let plan = stackless_tui::reaper::decision::plan(&snap, CAPTURE, true);
    assert!(plan.reaps.is_empty(), "far's lease runs until i64::MAX");
}

#[test]
fn an_empty_file_is_never_given_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, b"").unwrap();
    assert_eq!(
        Store::open(&path, Access::ReadOnly).unwrap_err(),
        StoreError::NoSchema(std::fs::canonicalize(&path).unwrap())
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        0,
        "read-only never creates"
    );
    // An existing file is not a store to create (a schema written through a
    // second name of stackless's store was checkpointed over it).
    let error = Store::open(&path, Access::ReadWrite).unwrap_err();
    assert_eq!(
        error,
        StoreError::NoSchema(std::fs::canonicalize(&path).unwrap())
    );
    assert!(
        error
            .to_string()
            .contains("never writes a schema into an existing file"),
        "{error}"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        0,
        "read-write writes nothing into it either"
    );
}

#[test]
fn devices_and_fifos_are_not_stores() {
    let err = Store::open(std::path::Path::new("/dev/null"), Access::ReadWrite).unwrap_err();
    assert_eq!(err, StoreError::NotAFile("/dev/null".into()));
    assert!(err.to_string().contains("not a regular file"));
}

#[test]
fn a_symlinked_store_lives_in_its_real_directory() {
    let (dir, real) = fixture("stackless-real-v4.db");
    let home = tempfile::tempdir().unwrap();
    let link = home.path().join("state.db");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let store = Store::open(&link, Access::ReadOnly).unwrap();
    assert_eq!(
        store.state_dir(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}

/// A lock holder that exited and was not waited for by its parent (a
/// zombie) is not alive, as stackless 0.4.0 decides
/// (`ProcessStamp::is_alive` leaves zombies out): the lock is stale, and
/// the instance is not skipped as locked.
#[test]
fn a_zombie_lock_holder_is_not_alive() {
    use stackless_tui::store::probe::{HostProbe as _, SysinfoProbe};
    let (_dir, path) = fixture("stackless-real-v4.db");
    let mut child = std::process::Command::new("sh")
        .args(["-c", "exit 0"])
        .spawn()
        .expect("spawn sh");
    let pid = child.id();
    // Exited, not waited for: `Z` in /proc/PID/stat.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'))
    }) {
        assert!(std::time::Instant::now() < deadline, "no zombie");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut probe = SysinfoProbe::new();
    let started = probe
        .start_time(pid)
        .expect("a zombie keeps its start time");
    let host = probe.host_name().expect("a hostname").to_owned();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE op_locks SET holder_pid = ?1, holder_start_time = ?2, holder_host = ?3
             WHERE instance = 'echo'",
            rusqlite::params![pid, i64::try_from(started).unwrap(), host],
        )
        .unwrap();
    let snap = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut probe)
        .unwrap();
    assert_eq!(snap.lock_liveness("echo"), Some(&Liveness::StalePidGone));
    child.wait().unwrap();
}

/// The console never writes a secret into `reap_attempts.last_error`, a
/// column `stackless status` prints: the values of `secret_history` are
/// redacted in the write's own transaction, plain text and JSON envelopes
/// alike.
#[test]
fn a_secret_in_a_failed_reap_is_never_written_to_the_store() {
    let (_dir, path) = crate::common::stores::v14();
    let name: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT name FROM instances WHERE status = 'active' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    crate::common::stores::exec(
        &path,
        "INSERT INTO secret_history (owner_id, value) VALUES ('x', 'sk_canary_41');",
    );
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let row = store
        .record_reap_failure(&name, "provider.auth: token sk_canary_41 rejected", CAPTURE)
        .unwrap();
    assert_eq!(row.last_error, "provider.auth: token [redacted] rejected");
    drop(store);
    let stored: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT last_error FROM reap_attempts WHERE instance = ?1",
            [&name],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, "provider.auth: token [redacted] rejected");
}
