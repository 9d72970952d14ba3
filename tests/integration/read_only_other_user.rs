//! `--read-only` on a store owned by another user: works while the store's
//! `-wal`/`-shm` exist (its owner has it open), reads a cleanly closed WAL
//! store in a directory the reader cannot write immutably, refuses one
//! whose `-wal` holds commits it cannot index, and writes nothing.

use std::process::Command;
use std::time::Duration;

use crate::common::reader::{ReaderDir, as_reader, cleanly_closed_wal_store, is_root};

#[test]
fn another_users_store_is_readable_read_only() {
    if !is_root() || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv to act as another user");
        return;
    }
    let (dir, path) = crate::common::fixture("stackless-real-v4.db");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // The owner (root) has the store open: -wal and -shm exist, root's.
    let owner = rusqlite::Connection::open(&path).unwrap();
    owner
        .query_row("SELECT count(*) FROM instances", [], |r| r.get::<_, i64>(0))
        .unwrap();
    for file in ["state.db", "state.db-wal", "state.db-shm"] {
        let p = dir.path().join(file);
        assert!(p.exists(), "{file} exists while the owner has it open");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_stackless-tui"))
        .args(["snapshot", "--read-only", "--json", "--state"])
        .arg(&path)
        .env("HOME", "/nonexistent")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["instances"].as_array().unwrap().len(), 8);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    drop(owner);
}

const V5_ROWS: &str = "\
NAME     SUBSTRATE  STATUS      STAGE        LEASE        LOCK  BACKOFF              REAPER
alpha    local      active      web unknown  2d 19h left
charlie  local      tombstoned               tombstoned
delta    local      tombstoned               tombstoned
foxtrot  local      active                   1d 19h left        1 (retry in 1d 19h)
golf     local      active      web unknown  1d 19h left

GC
charlie  due for GC at 2026-12-08T09:50:48Z (in 8d 19h), collected by stackless's reaper or this console's reaper, whichever passes first
delta  due for GC at 2026-12-08T09:51:47Z (in 8d 19h), collected by stackless's reaper or this console's reaper, whichever passes first
";

#[test]
fn a_cleanly_closed_wal_store_in_a_directory_the_reader_cannot_write_is_read_immutably() {
    let Some(dir) = ReaderDir::new() else {
        return;
    };
    let path = cleanly_closed_wal_store(dir.path());
    let state = path.to_str().unwrap();
    let now = crate::common::CAPTURE.to_string();
    dir.lock();
    let before = dir.files();
    let out = as_reader(
        dir.root,
        &["--read-only", "--state", state, "snapshot", "--now", &now],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let header = format!(
        "store {state} · schema v5 · now {} ({now})\n",
        stackless_tui::model::time::rfc3339(crate::common::CAPTURE).unwrap()
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{header}{V5_ROWS}who reaps: nobody reaps now\n")
    );
    let shown = dir.path().display();
    assert_eq!(
        stderr,
        format!(
            "stackless-tui: read-only (immutable: dir not writable): {shown} is not writable by \
             this user, so SQLite cannot create the -shm a WAL store needs; the store has no \
             commits waiting in its -wal, so {state} was read as it is on disk, and nothing was \
             written.\n"
        )
    );
    let out = as_reader(
        dir.root,
        &["snapshot", "--json", "--read-only", "--state", state],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "charlie", "delta", "foxtrot", "golf"]);
    // Nothing was created, nothing written.
    assert_eq!(dir.files(), before);
}

#[test]
fn a_wal_with_commits_the_reader_cannot_index_is_refused_with_the_reason() {
    let Some(dir) = ReaderDir::new() else {
        return;
    };
    // A writer's -wal that was never checkpointed, without its -shm (a
    // copy, or a writer in exclusive locking mode): commits the file lacks.
    let scratch = tempfile::tempdir().unwrap();
    let source = cleanly_closed_wal_store(scratch.path());
    let writer = rusqlite::Connection::open(&source).unwrap();
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint = 0;
             UPDATE instances SET substrate = 'render' WHERE name = 'golf';",
        )
        .unwrap();
    let path = dir.path().join("state.db");
    std::fs::copy(&source, &path).unwrap();
    std::fs::copy(
        scratch.path().join("state.db-wal"),
        dir.path().join("state.db-wal"),
    )
    .unwrap();
    drop(writer);
    let state = path.to_str().unwrap();
    dir.lock();
    let before = dir.files();
    for args in [
        &["--read-only", "--state", state, "snapshot"][..],
        &["--read-only", "--state", state, "snapshot", "--json"][..],
    ] {
        let out = as_reader(dir.root, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        let shown = dir.path().display();
        assert_eq!(
            stderr,
            format!(
                "stackless-tui: cannot read {state} read-only: it is a WAL store whose \
                 {state}-wal holds commits not yet copied into it, and its directory {shown} is \
                 not writable by this user, so SQLite cannot create the {state}-shm index it \
                 needs to read them (reading the file alone would show stale rows; nothing was \
                 read or written). Run as a user who can write {shown} (the store's owner), or \
                 let the store's owner stop its writer or checkpoint it (sqlite3 {state} 'PRAGMA \
                 wal_checkpoint(TRUNCATE)') so it can be read as it is.\n"
            )
        );
        assert!(!stderr.contains("--read-only"), "{stderr}");
    }
    assert_eq!(dir.files(), before);
}
