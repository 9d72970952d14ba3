//! Faults round 2 (issue 14) with the real binary in pseudo-terminals: an
//! input burst longer than crossterm's 1 KiB read, a store swapped for an
//! older schema under a running console, a wall clock already wrong at
//! start-up, a signal while teardowns run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::stores::{exec, migrated};
use crate::harness::{Tui, UI, selected_instance, utf8};

const QUIT: Duration = Duration::from_secs(10);

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// A v5 store with `count` active instances `n0001`.. whose leases run out
/// in that order, a day or more from now (nothing is reaped).
fn many_instances(dir: &Path, count: usize) -> PathBuf {
    let path = migrated(dir, 5);
    let now = unix_now();
    exec(
        &path,
        &format!(
            "WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < {count})
             INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty)
               SELECT printf('n%04d', i), 'local', 'active', '[stack]', {now}, NULL, 0 FROM seq;
             INSERT INTO leases (instance, duration_secs, expires_at)
               SELECT name, 86400, {now} + 86400 + rowid FROM instances;"
        ),
    );
    path
}

#[test]
fn a_burst_of_2000_keys_is_processed_without_another_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = many_instances(dir.path(), 1500);
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 120, 40);
    tui.wait_until("the first row selected", UI, |s| {
        selected_instance(s).as_deref() == Some("n0001")
    });
    // One write: the PTY delivers it as one burst, longer than crossterm's
    // 1 KiB read.
    tui.send("j".repeat(2000));
    tui.wait_until("the selection on the last row", UI, |s| {
        selected_instance(s).as_deref() == Some("n1500")
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}
