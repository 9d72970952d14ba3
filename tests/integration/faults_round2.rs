//! Faults round 2 (issue 14) without a terminal: an operator `r` that fails
//! while another process holds the store's write lock, a store truncated
//! and restored under a running reaper, planted symlinks.

use std::path::Path;
use std::time::Duration;

use crate::common::stores;
use crate::common::{CAPTURE, fake_down, reaper, runtime};
use stackless_tui::event::{ActivityKind, Actor};
use stackless_tui::reaper::Intent;
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
    // Longer than three tries at stackless's 5 s busy timeout.
    let holder = hold_write_lock(&path, Duration::from_secs(17));
    let job = reaper
        .teardowns()
        .spawn(alpha, None, Actor::Operator, Intent::Reap)
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
