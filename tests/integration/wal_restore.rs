//! A store truncated and restored in place while one of the console's
//! connections to the old file is still open: the old file's write-ahead
//! log is never written into, nor replayed onto, the restored copy, however
//! late the old connection closes.

use crate::common::CAPTURE;
use crate::common::stores;
use stackless_tui::store::{Access, FileState, Store};

fn expires(path: &std::path::Path) -> Vec<i64> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare("SELECT expires_at FROM leases ORDER BY instance")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The old connection closes *after* the good copy is back: before the fix
/// its close checkpointed the old log (leases renewed 2 hours ahead) into
/// the restored copy. Now nothing is written at close; the next open finds
/// the old log, its pages not in the file, and sets it aside, kept.
#[test]
fn an_old_connection_closing_after_a_restore_in_place_writes_nothing_into_the_copy() {
    let (dir, path) = stores::v5();
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    let good = dir.path().join("good.db");
    std::fs::copy(&path, &good).unwrap();
    let good_expires = expires(&good);
    let mut old = Store::open(&path, Access::ReadWrite).unwrap();
    assert_eq!(old.file_state(), FileState::Same);
    // Another process renews every lease; its frames stay in the log (the
    // console's connection is open, so its close does not checkpoint).
    stores::exec(
        &path,
        &format!("UPDATE leases SET expires_at = {}", CAPTURE + 7777),
    );
    assert_eq!(old.file_state(), FileState::Same);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(20_000)
        .unwrap();
    assert_eq!(old.file_state(), FileState::Rewritten);
    std::fs::copy(&good, &path).unwrap();
    // The last old connection closes now, late.
    drop(old);
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        bytes == std::fs::read(&good).unwrap(),
        "nothing written into the copy"
    );
    let store = Store::open(&path, Access::ReadWrite).unwrap();
    drop(store);
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("state.db-wal.stale-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(std::fs::metadata(dir.path().join(&kept[0])).unwrap().len() > 32);
    assert_eq!(
        stackless_tui::store::epoch::take_set_aside(&std::fs::canonicalize(&path).unwrap()),
        Some(std::fs::canonicalize(dir.path()).unwrap().join(&kept[0]))
    );
    // The restored copy reads as it was copied: the renewals are not in it.
    assert_eq!(expires(&path), good_expires);
    assert!(
        !good_expires.contains(&(CAPTURE + 7777)),
        "{good_expires:?}"
    );
}

/// A log that belongs to the file (nothing truncated: a schema changed in
/// place, another process's commits pending in the log) is never set aside.
#[test]
fn a_log_with_pending_commits_is_kept_in_place_when_nothing_was_truncated() {
    let (dir, path) = stores::v5();
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    stores::exec(
        &path,
        &format!(
            "PRAGMA user_version = 2; UPDATE leases SET expires_at = {}",
            CAPTURE + 60
        ),
    );
    assert!(matches!(store.file_state(), FileState::Migrated { .. }));
    store.close();
    drop(Store::open(&path, Access::ReadWrite).unwrap());
    assert!(
        !std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().contains(".stale-"))
    );
    assert!(expires(&path).iter().all(|&e| e == CAPTURE + 60));
}

/// A store error the reaper meets at every pass is said (and audited) once,
/// then once more when it clears, with the count of repeats, never once per
/// tick.
#[test]
fn a_store_error_is_said_once_and_again_when_it_clears_with_its_repeats() {
    let rt = crate::common::runtime();
    let (dir, path) = stores::v5();
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    let good = dir.path().join("good.db");
    std::fs::copy(&path, &good).unwrap();
    let down = crate::common::fake_down(dir.path(), "exit 0");
    let probe = Box::new(stackless_tui::store::probe::FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    });
    let (mut reaper, log) = crate::common::reaper(&path, down, probe, CAPTURE, &rt);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    for _ in 0..6 {
        assert_eq!(reaper.pass().reaped, 0);
    }
    let canonical = std::fs::canonicalize(&path).unwrap();
    let empty = format!(
        "the store file {} is empty (truncated?)",
        canonical.display()
    );
    let errors: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == stackless_tui::event::ActivityKind::Error)
        .map(|a| a.detail.clone())
        .collect();
    assert_eq!(
        errors.iter().filter(|e| **e == empty).count(),
        1,
        "{errors:#?}"
    );
    std::fs::copy(&good, &path).unwrap();
    let mut reaped = 0;
    for _ in 0..5 {
        reaped += reaper.pass().reaped;
        if reaped == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(reaped, 2);
    let cleared: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.detail.starts_with("the store error cleared"))
        .map(|a| a.detail.clone())
        .collect();
    assert_eq!(cleared.len(), 1, "{:#?}", log.lock().unwrap());
    assert!(
        cleared[0].ends_with(&format!("after it was said): {empty}")),
        "{}",
        cleared[0]
    );
}

/// A copy restored in place right after another process's commit, before
/// anything looked at the file again: the commit's read takes a new look
/// at the file, so the restore after it is told apart (the file changed
/// while the wal-index marks no checkpoint), however soon it came. A
/// commit checkpointed into the file is not a rewrite.
#[test]
fn a_copy_restored_in_place_right_after_a_commit_is_a_rewrite_and_a_checkpoint_is_not() {
    let (dir, path) = stores::v5();
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    let good = dir.path().join("good.db");
    std::fs::copy(&path, &good).unwrap();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let mut probe = stackless_tui::store::probe::FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    assert_eq!(store.file_state(), FileState::Same);
    // A commit checkpointed into the file: SQLite wrote it.
    stores::exec(
        &path,
        "UPDATE leases SET expires_at = 41 WHERE instance = 'alpha'; PRAGMA wal_checkpoint(TRUNCATE);",
    );
    store.snapshot(&mut probe).unwrap();
    assert_eq!(store.file_state(), FileState::Same);
    // A commit, read, then the copy restored over the file at once.
    stores::exec(
        &path,
        "UPDATE leases SET expires_at = 42 WHERE instance = 'alpha'",
    );
    let read = store.snapshot(&mut probe).unwrap();
    assert_eq!(
        read.instance("alpha")
            .and_then(|i| i.lease)
            .map(|l| l.expires_at),
        Some(42)
    );
    std::fs::write(&path, std::fs::read(&good).unwrap()).unwrap();
    assert_eq!(store.file_state(), FileState::Rewritten);
    drop(store);
    // A commit, the copy restored before anything read the commit, then
    // the commit's read: that read keeps the look from before.
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    assert_eq!(store.file_state(), FileState::Same);
    stores::exec(
        &path,
        "UPDATE leases SET expires_at = 43 WHERE instance = 'alpha'",
    );
    let bytes = std::fs::read(&good).unwrap();
    std::io::Write::write_all(
        &mut std::fs::OpenOptions::new().write(true).open(&path).unwrap(),
        &bytes,
    )
    .unwrap();
    store.snapshot(&mut probe).unwrap();
    assert_eq!(store.file_state(), FileState::Rewritten);
}

/// The watcher reads a copy restored in place right after a commit it
/// read (within one probe period of it) anew: its next snapshot says the
/// file was rewritten in place and holds what a fresh read of the file
/// holds (`SQLite` replays the log's commit onto the copy, for every
/// reader alike).
#[test]
fn the_watcher_reads_a_copy_restored_in_place_right_after_a_commit_anew() {
    use stackless_tui::event::Event;
    let (dir, path) = stores::v5();
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    let good = dir.path().join("good.db");
    std::fs::copy(&path, &good).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadWrite, tx, stop.clone())
            .unwrap();
    let mut next = |want: &dyn Fn(&stackless_tui::model::Snapshot) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            match rx.try_recv() {
                Ok(Event::Snapshot(s)) if want(&s) => return Some(s),
                Ok(_) => {}
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
        None
    };
    let alpha = |s: &stackless_tui::model::Snapshot| {
        s.instance("alpha")
            .and_then(|i| i.lease)
            .map(|l| l.expires_at)
    };
    assert!(
        next(&|s| alpha(s) == Some(CAPTURE - 100)).is_some(),
        "the first snapshot"
    );
    stores::exec(
        &path,
        "UPDATE leases SET expires_at = 42 WHERE instance = 'alpha'",
    );
    assert!(
        next(&|s| alpha(s) == Some(42)).is_some(),
        "the commit is read"
    );
    std::fs::write(&path, std::fs::read(&good).unwrap()).unwrap();
    let anew = next(&|s| s.reopened.is_some()).expect("the restored file is read anew");
    assert_eq!(
        anew.reopened,
        Some("the store file was rewritten in place (restored from a copy, or truncated)")
    );
    stop.cancel();
    handle.join().unwrap();
    let fresh = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut stackless_tui::store::probe::FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap();
    assert_eq!(alpha(&anew), alpha(&fresh));
    assert_eq!(anew.instances.len(), fresh.instances.len());
}
