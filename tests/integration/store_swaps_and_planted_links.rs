//! The store changed under a running console, and files planted as
//! symlinks, without a terminal: an operator `r` that fails while another
//! process holds the store's write lock, a store truncated and restored (or
//! moved over, or its schema changed) in place under a running reaper and
//! watcher, a failure that cannot be recorded, planted symlinks refused.

use std::path::Path;
use std::time::Duration;

use crate::common::stores;
use crate::common::{CAPTURE, fake_down, reaper, runtime};
use stackless_tui::event::{ActivityKind, Actor};
use stackless_tui::reaper::{Intent, Job};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

fn vm_probe() -> Box<FixedProbe> {
    Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    })
}

fn snapshot(path: &Path) -> stackless_tui::model::Snapshot {
    Store::open(path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut *vm_probe())
        .unwrap()
}

/// The next event from the watcher that `want` takes, within 20 s
/// (polled every 10 ms).
///
/// # Panics
/// At the deadline, naming `what`.
fn wait_event(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<stackless_tui::event::Event>,
    what: &str,
    want: impl Fn(&stackless_tui::event::Event) -> bool,
) -> stackless_tui::event::Event {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        match rx.try_recv() {
            Ok(event) if want(&event) => return event,
            Ok(_) => {}
            Err(_) => {
                assert!(std::time::Instant::now() < deadline, "no {what}");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// alpha's lease expiry in a watcher's snapshot.
fn alpha_expiry(event: &stackless_tui::event::Event) -> Option<i64> {
    match event {
        stackless_tui::event::Event::Snapshot(s) => s
            .instance("alpha")
            .and_then(|i| i.lease)
            .map(|l| l.expires_at),
        _ => None,
    }
}

/// Hold the store's write lock (`BEGIN IMMEDIATE`) on a connection of its
/// own for `hold`, as another stackless process would; returns once taken.
fn hold_write_lock(path: &Path, hold: Duration) -> std::thread::JoinHandle<()> {
    let path = path.to_owned();
    let (taken, wait) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        taken.send(()).unwrap();
        std::thread::sleep(hold);
        conn.execute_batch("COMMIT").unwrap();
    });
    wait.recv().unwrap();
    handle
}

#[test]
fn an_operator_reap_that_fails_while_the_store_is_busy_is_still_recorded() {
    let rt = runtime();
    let (dir, path) = stores::v5();
    let down = fake_down(dir.path(), "echo boom >&2; exit 1");
    let (reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let seen = snapshot(&path);
    let alpha = seen.instance("alpha").unwrap().clone();
    // Longer than three tries at the jobs' busy timeout (stackless's 5 s,
    // here a short one: the same retries, in a fraction of the time).
    let busy = Duration::from_millis(250);
    let holder = hold_write_lock(&path, busy * 5);
    let job = reaper
        .jobs()
        .clone()
        .with_busy_timeout(busy)
        .spawn(Job {
            instance: alpha,
            attempt: None,
            actor: Actor::Operator,
            intent: Intent::Reap,
        })
        .expect("started");
    let kind = job.join().unwrap();
    holder.join().unwrap();
    assert_eq!(kind, Some(ActivityKind::Failed));
    let attempt = snapshot(&path)
        .reap_attempt("alpha")
        .cloned()
        .expect("recorded");
    assert_eq!(attempt.attempts, 1);
    let last = log.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last.kind, ActivityKind::Failed);
    assert!(
        last.detail.contains("(attempt 1, retry at "),
        "{}",
        last.detail
    );
}

#[test]
fn a_store_truncated_then_restored_in_place_is_reaped_again_without_another_writer() {
    let rt = runtime();
    let (dir, path) = stores::v5();
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    let good = dir.path().join("good.db");
    std::fs::copy(&path, &good).unwrap();
    let down = fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    // A first pass on the whole store (the reaper has read it), with
    // nothing to reap: every lease renewed.
    stores::exec(
        &path,
        &format!("UPDATE leases SET expires_at = {}", CAPTURE + 3600),
    );
    assert_eq!(reaper.pass().reaped, 0);
    // Everything in the main file, the write-ahead log empty: what a copy
    // of the file alone restores is the whole store.
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    // Truncated under the reaper: its passes fail.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(100)
        .unwrap();
    assert!(reaper.pass().errors > 0, "{:?}", log.lock().unwrap());
    // A good copy put back over it, in place (same inode), and nobody else
    // writes: the next pass reads the restored store and reaps what it has
    // expired (alpha and bravo).
    std::fs::copy(&good, &path).unwrap();
    let summary = reaper.pass();
    assert_eq!(
        (summary.reaped, summary.errors),
        (2, 0),
        "{:#?}",
        log.lock().unwrap()
    );
}

/// A file outside the state directory that a planted link points at.
fn bait(dir: &Path) -> std::path::PathBuf {
    let target = dir.join("outside");
    std::fs::create_dir_all(&target).unwrap();
    let file = target.join("precious");
    std::fs::write(&file, "keep").unwrap();
    file
}

#[test]
fn an_audit_trail_planted_as_a_symlink_is_refused_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    let precious = bait(outside.path());
    // The file itself a link.
    let state = tempfile::tempdir().unwrap();
    let path = stackless_tui::audit::default_path(state.path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&precious, &path).unwrap();
    let error = stackless_tui::audit::AuditLog::open(&path, 1 << 20).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is a symbolic link: refusing to follow it"),
        "{error}"
    );
    // Its directory a link.
    let state = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("outside"),
        state.path().join("stackless-tui"),
    )
    .unwrap();
    let path = stackless_tui::audit::default_path(state.path());
    assert!(stackless_tui::audit::AuditLog::open(&path, 1 << 20).is_err());
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
    assert!(!outside.path().join("outside/audit.jsonl").exists());
}

#[test]
fn role_lock_files_and_the_roles_dir_planted_as_symlinks_are_refused() {
    use stackless_tui::roles::{CONSOLE_ROLE, Refused, Wanted, record};
    let outside = tempfile::tempdir().unwrap();
    let precious = bait(outside.path());
    let state = tempfile::tempdir().unwrap();
    let roles = state.path().join("stackless-tui/roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::os::unix::fs::symlink(&precious, roles.join("console.lock")).unwrap();
    let mut wanted = Wanted::new(&roles, CONSOLE_ROLE);
    match wanted.try_take(&record()) {
        Err(Refused::Error(text)) => assert!(text.contains("is a symbolic link"), "{text}"),
        other => panic!("{other:?}"),
    }
    // The roles directory itself a link.
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(state.path().join("stackless-tui")).unwrap();
    let roles = state.path().join("stackless-tui/roles");
    std::os::unix::fs::symlink(outside.path().join("outside"), &roles).unwrap();
    let mut wanted = Wanted::new(&roles, CONSOLE_ROLE);
    assert!(matches!(wanted.try_take(&record()), Err(Refused::Error(_))));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
    let planted: Vec<_> = std::fs::read_dir(outside.path().join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(planted, ["precious"], "nothing created through the links");
}

#[test]
fn gc_never_follows_a_logs_dir_planted_as_a_symlink() {
    let rt = runtime();
    for planted in ["logs/charlie", "logs"] {
        let outside = tempfile::tempdir().unwrap();
        let precious = bait(outside.path());
        let (dir, path) = stores::v5();
        let link = dir.path().join(planted);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        if planted == "logs" {
            // <state_dir>/logs -> outside/, where charlie/ holds the bait.
            std::fs::create_dir_all(outside.path().join("charlie")).unwrap();
            std::fs::write(outside.path().join("charlie/precious"), "keep").unwrap();
            std::os::unix::fs::symlink(outside.path(), &link).unwrap();
        } else {
            std::os::unix::fs::symlink(precious.parent().unwrap(), &link).unwrap();
        }
        let down = fake_down(dir.path(), "exit 0");
        let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
        let summary = reaper.pass();
        assert_eq!(summary.collected, 0, "{planted}");
        assert!(
            snapshot(&path).instance("charlie").is_some(),
            "tombstone kept"
        );
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep");
        if planted == "logs" {
            assert!(
                outside.path().join("charlie/precious").exists(),
                "{planted}"
            );
        }
        let refused = log
            .lock()
            .unwrap()
            .iter()
            .find(|a| a.instance == "charlie")
            .cloned()
            .expect("charlie reported");
        assert_eq!(refused.kind, ActivityKind::Refused);
        assert!(
            refused.detail.contains("is a symbolic link"),
            "{}",
            refused.detail
        );
    }
}

#[test]
fn a_store_whose_schema_changes_in_place_is_learned_again_by_the_reaper() {
    let rt = runtime();
    let (dir, path) = stores::v5();
    let down = fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    stores::exec(
        &path,
        &format!("UPDATE leases SET expires_at = {}", CAPTURE + 3600),
    );
    assert_eq!(reaper.pass().reaped, 0);
    // Another process rewrites user_version to 2 in place (same inode),
    // and alpha's lease runs out.
    stores::exec(
        &path,
        &format!(
            "PRAGMA user_version = 2; UPDATE leases SET expires_at = {} WHERE instance = 'alpha'",
            CAPTURE - 10
        ),
    );
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (0, 0));
    assert!(
        crate::common::argv_log(dir.path()).is_empty(),
        "no teardown"
    );
    let details: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .map(|a| a.detail.clone())
        .collect();
    assert!(
        details.contains(&"the store's schema changed from v5 to v2: reopened it".to_owned()),
        "{details:?}"
    );
    assert!(
        details.contains(
            &"reaper paused: schema v2 predates reap bookkeeping; nothing is torn down until stackless upgrades the store"
                .to_owned()
        ),
        "{details:?}"
    );
    // Upgraded again: the reaper runs again at its next pass.
    stores::exec(&path, "PRAGMA user_version = 5;");
    assert_eq!(reaper.pass().reaped, 1);
}

#[test]
fn the_watcher_shows_a_store_restored_in_place_without_another_writer() {
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
    let mut next = |want: &dyn Fn(&Event) -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            match rx.try_recv() {
                Ok(event) if want(&event) => return Some(event),
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        None
    };
    assert_eq!(
        alpha_expiry(&next(&|e| matches!(e, Event::Snapshot(_))).unwrap()),
        Some(CAPTURE - 100)
    );
    // Renewed, then everything checkpointed into the main file.
    stores::exec(
        &path,
        "UPDATE leases SET expires_at = 42 WHERE instance = 'alpha'; PRAGMA wal_checkpoint(TRUNCATE);",
    );
    assert!(next(&|e| alpha_expiry(e) == Some(42)).is_some());
    // Truncated, then the good copy restored in place; nobody commits.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(100)
        .unwrap();
    // Nothing the watcher sends says it looked at the truncated file
    // (nobody commits): a probe period and a half, so it did at least once.
    std::thread::sleep(stackless_tui::store::watcher::PROBE_EVERY * 3 / 2);
    std::fs::copy(&good, &path).unwrap();
    assert!(
        next(&|e| alpha_expiry(e) == Some(CAPTURE - 100)).is_some(),
        "the restored rows are shown"
    );
    stop.cancel();
    handle.join().unwrap();
}

/// A store that stops accepting writes (read-only, disk full, an I/O
/// error) while the reaper runs: simulated by triggers that make every
/// `reap_attempts` write fail, as a full disk would, on the store's own
/// connection. The failed teardown cannot be recorded, so nothing backs
/// off: the reaper must pause instead of tearing the same instances down
/// every tick, and resume (recording what it owed) once writes succeed.
#[test]
fn a_reap_failure_that_cannot_be_recorded_pauses_the_reaper_until_writes_succeed() {
    let rt = runtime();
    let (dir, path) = stores::v5();
    let down = fake_down(dir.path(), "echo boom >&2; exit 1");
    // One teardown at a time, so the order is exact: alpha fails and is
    // not recorded; bravo, next in the same pass, is refused.
    let (mut reaper, log) = crate::common::reaper_with(
        &path,
        down,
        vm_probe(),
        std::sync::Arc::new(|| CAPTURE),
        &rt,
        |c| c.concurrency = 1,
    );
    stores::exec(
        &path,
        "CREATE TRIGGER full_i BEFORE INSERT ON reap_attempts BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
         CREATE TRIGGER full_u BEFORE UPDATE ON reap_attempts BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    );
    let first = reaper.pass();
    assert_eq!(
        (first.reaped, first.failed),
        (0, 1),
        "{:#?}",
        log.lock().unwrap()
    );
    assert_eq!(
        crate::common::argv_log(dir.path()),
        ["[down][alpha][--json]"]
    );
    let why = format!("state store {}: database or disk is full", path.display());
    let bravo: Vec<(ActivityKind, String)> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.instance == "bravo")
        .map(|a| (a.kind, a.detail.clone()))
        .collect();
    assert_eq!(
        bravo,
        [(
            ActivityKind::Refused,
            format!(
                "failures cannot be recorded in the store ({why}); nothing is torn down until the store accepts writes"
            )
        )]
    );
    // Three more passes: nothing is torn down again.
    for _ in 0..3 {
        let summary = reaper.pass();
        assert_eq!((summary.reaped, summary.failed), (0, 0));
    }
    assert_eq!(crate::common::argv_log(dir.path()).len(), 1);
    let said: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::Skipped)
        .map(|a| a.detail.clone())
        .collect();
    assert_eq!(
        said,
        [format!(
            "reaper paused: failures cannot be recorded in the store ({why}); nothing is torn down until the store accepts writes"
        )]
    );
    assert_eq!(reaper.jobs().unrecorded_reason(), Some(why));
    // The store accepts writes again: alpha's failure owed is recorded
    // (attempt 1, backing off), and the reaper resumes: bravo, never torn
    // down, is now, and its failure recorded.
    stores::exec(&path, "DROP TRIGGER full_i; DROP TRIGGER full_u;");
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (0, 1));
    assert_eq!(reaper.jobs().unrecorded_reason(), None);
    let seen = snapshot(&path);
    for name in ["alpha", "bravo"] {
        let attempt = seen.reap_attempt(name).expect("recorded");
        assert_eq!(attempt.attempts, 1, "{name}");
        assert_eq!(attempt.next_retry_at, CAPTURE + 60, "{name}");
    }
    assert_eq!(
        crate::common::argv_log(dir.path()),
        ["[down][alpha][--json]", "[down][bravo][--json]"]
    );
    let resumed = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.detail.starts_with("the store accepts writes again"))
        .map(|a| a.detail.clone())
        .collect::<Vec<_>>();
    assert_eq!(
        resumed,
        ["the store accepts writes again: 1 failed reap recorded; reaper resumed"]
    );
}

/// Truncate the store (to 0 bytes, or partly) under a running watcher and
/// reaper, wait, then restore a good copy in place: every connection of
/// the console to the broken file is closed before any is opened again, so
/// no new one attaches to the stale shared index. The old file's
/// write-ahead log (leases renewed an hour ahead) is never replayed onto
/// the restored copy, however late the last old connection closes (no
/// connection checkpoints on close): it is set aside, kept, and said. A
/// separate connection reads the restored store and the reaper reaps again.
#[test]
fn a_store_truncated_under_the_watcher_and_the_reaper_is_readable_by_all_once_restored() {
    use stackless_tui::event::{Event, StoreHealth};
    let rt = runtime();
    for len in [0_u64, 20_000] {
        let (dir, path) = stores::v5();
        stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
        let good = dir.path().join("good.db");
        std::fs::copy(&path, &good).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = stackless_tui::stop::StopToken::new();
        let watcher =
            stackless_tui::store::watcher::spawn(path.clone(), Access::ReadWrite, tx, stop.clone())
                .unwrap();
        let down = fake_down(dir.path(), "exit 0");
        let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
        stores::exec(
            &path,
            &format!("UPDATE leases SET expires_at = {}", CAPTURE + 3600),
        );
        assert_eq!(reaper.pass().reaped, 0);
        // The watcher has read the renewed leases: its connection is open
        // on the file when it is truncated.
        wait_event(&mut rx, "the watcher's read of the renewed leases", |e| {
            alpha_expiry(e) == Some(CAPTURE + 3600)
        });
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len)
            .unwrap();
        // Until both the watcher and a reaper pass found the file broken,
        // no pass reaps.
        let mut health = Vec::new();
        let mut failed_passes = 0;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while health.is_empty() || failed_passes == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "{len}: {health:?} {failed_passes}"
            );
            let summary = reaper.pass();
            assert_eq!(summary.reaped, 0);
            failed_passes += usize::from(summary.errors > 0);
            while let Ok(event) = rx.try_recv() {
                if let Event::StoreHealth(StoreHealth::Error(text)) = event {
                    health.push(text);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if len == 0 {
            // Said by whichever connection saw it first (here the reaper's
            // pass).
            let empty = format!("the store file {} is empty (truncated?)", path.display());
            let said = log.lock().unwrap().iter().any(|a| a.detail == empty);
            assert!(said || health.contains(&empty), "{health:?}");
        }
        assert!(
            !health.iter().any(|h| h.contains("busy")),
            "{len}: {health:?}"
        );
        std::fs::copy(&good, &path).unwrap();
        // Within a few seconds (the watcher polls, the old connections
        // close, then the file is opened afresh) the reaper reaps alpha and
        // bravo, expired in the good copy.
        let mut reaped = 0;
        let deadline = std::time::Instant::now() + Duration::from_secs(8);
        while reaped < 2 && std::time::Instant::now() < deadline {
            reaped += reaper.pass().reaped;
            std::thread::sleep(Duration::from_millis(200));
        }
        assert_eq!(reaped, 2, "{len}: {:#?}", log.lock().unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        let count: i64 = conn
            .query_row("SELECT count(*) FROM instances", [], |r| r.get(0))
            .unwrap();
        // charlie, a tombstone past 7 days, was collected too.
        assert_eq!(count, 4, "{len}");
        drop(conn);
        // The old log was set aside with its frames, and the reaper said so.
        let kept: Vec<u64> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("state.db-wal.stale-")
            })
            .map(|e| e.metadata().unwrap().len())
            .collect();
        // What must hold is above: the renewed leases were never replayed
        // onto the restored copy (alpha and bravo reaped). Most runs get
        // there by setting the old log aside, kept and said; in some
        // interleavings the old log is gone before the restore (a
        // connection restarted it on the cut file), and nothing is left
        // to set aside.
        assert!(kept.len() <= 1, "{len}: {kept:?}");
        if let [kept] = kept[..] {
            assert!(kept > 32, "{len}: {kept}");
            let said = log.lock().unwrap().iter().any(|a| {
                a.detail
                    .contains("its old write-ahead log was set aside as ")
            });
            assert!(said, "{len}: {:#?}", log.lock().unwrap());
        }
        stop.cancel();
        watcher.join().unwrap();
    }
}

/// Move a copy of another store over the live one (`mv x.db state.db`)
/// while the watcher and the reaper hold it, with commits still in the old
/// file's write-ahead log: the console closes every connection to the old
/// file before it opens the new one, so the old log is never replayed onto
/// the new file. After the console reopened it and stopped, the new file
/// is byte for byte what was moved in.
#[test]
fn a_store_moved_over_the_live_one_is_never_merged_with_the_old_write_ahead_log() {
    use stackless_tui::event::{Event, StoreHealth};
    let rt = runtime();
    for (other, version) in [(stores::v14(), 14), (stores::v5(), 5)] {
        let (dir, path) = stores::v5();
        let (other_dir, other_path) = other;
        stores::exec(
            &other_path,
            &format!(
                // Nothing to reap or collect in it: the console must not
                // write to it at all.
                "UPDATE leases SET expires_at = {}; UPDATE instances SET tombstoned_at = {} WHERE status = 'tombstoned'; PRAGMA wal_checkpoint(TRUNCATE);",
                CAPTURE + 7200,
                CAPTURE - 60
            ),
        );
        let moved_in = dir.path().join("x.db");
        std::fs::copy(&other_path, &moved_in).unwrap();
        let expected = std::fs::read(&moved_in).unwrap();
        drop(other_dir);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = stackless_tui::stop::StopToken::new();
        let watcher =
            stackless_tui::store::watcher::spawn(path.clone(), Access::ReadWrite, tx, stop.clone())
                .unwrap();
        let down = fake_down(dir.path(), "exit 0");
        let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
        // Commits in the live file's log (renewed leases; and a v5 row the
        // new file does not have).
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(&format!(
                "PRAGMA wal_autocheckpoint = 0; UPDATE leases SET expires_at = {}; DELETE FROM instances WHERE name = 'echo';",
                CAPTURE + 3600
            ))
            .unwrap();
            // Closed without a checkpoint: the frames stay in the log.
            conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )
            .unwrap();
        }
        assert_eq!(reaper.pass().reaped, 0);
        // The watcher has read the old file's log (the renewed leases).
        wait_event(&mut rx, "the watcher's read of the renewed leases", |e| {
            alpha_expiry(e) == Some(CAPTURE + 3600)
        });
        std::fs::rename(&moved_in, &path).unwrap();
        let stale = format!(
            "the store file {p} was replaced, but {p}-wal (and its -shm) belong to the old file: opening it would apply the old file's commits to the new one. Stop stackless and this console, then remove {p}-wal and the -shm beside it (or put the old file back)",
            p = path.display()
        );
        let mut health = Vec::new();
        let mut seen = None;
        // A snapshot counts once the watcher said the file was replaced:
        // the ones before are of the old file.
        let mut drain = |health: &mut Vec<String>, seen: &mut Option<i64>| {
            while let Ok(event) = rx.try_recv() {
                match event {
                    Event::Snapshot(s) if !health.is_empty() => {
                        *seen = Some(s.generation.user_version);
                    }
                    Event::StoreHealth(StoreHealth::Error(h)) => health.push(h),
                    _ => {}
                }
            }
        };
        // The old log is still beside the new file: nothing is opened.
        // Until both the watcher and the reaper said so, then three more
        // passes: none reaps, and the watcher sends nothing of the new
        // file.
        let reaper_said = |log: &std::sync::Mutex<Vec<stackless_tui::event::Activity>>| {
            log.lock().unwrap().iter().any(|a| a.detail == stale)
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut after = 0;
        while after < 3 {
            assert!(
                std::time::Instant::now() < deadline,
                "v{version}: {health:?}"
            );
            assert_eq!(reaper.pass().reaped, 0, "{version}");
            drain(&mut health, &mut seen);
            if !health.is_empty() && reaper_said(&log) {
                after += 1;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(health, std::slice::from_ref(&stale), "v{version}");
        assert!(
            log.lock().unwrap().iter().any(|a| a.detail == stale),
            "v{version}: {:#?}",
            log.lock().unwrap()
        );
        assert_eq!(seen, None, "v{version}");
        assert!(std::fs::read(&path).unwrap() == expected, "v{version}");
        // The operator removes them, as told: the new file is opened.
        std::fs::remove_file(dir.path().join("state.db-wal")).unwrap();
        let _ = std::fs::remove_file(dir.path().join("state.db-shm"));
        let deadline = std::time::Instant::now() + Duration::from_secs(8);
        while seen != Some(version) && std::time::Instant::now() < deadline {
            assert_eq!(reaper.pass().reaped, 0, "{version}");
            drain(&mut health, &mut seen);
            std::thread::sleep(Duration::from_millis(200));
        }
        assert_eq!(
            seen,
            Some(version),
            "v{version}: the watcher shows the new file"
        );
        stop.cancel();
        watcher.join().unwrap();
        drop(reaper);
        assert!(
            std::fs::read(&path).unwrap() == expected,
            "v{version}: the file moved in is unchanged"
        );
        let wal = std::fs::metadata(dir.path().join("state.db-wal")).map_or(0, |m| m.len());
        assert!(
            wal <= 32,
            "v{version}: no old frames left to replay ({wal} bytes)"
        );
    }
}
