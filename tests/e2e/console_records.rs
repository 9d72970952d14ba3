//! The console records its store by default (docs/history.md, "The
//! console records"): a change made while it runs is read back by
//! `snapshot --json --at`; a second console on the same store says who
//! records; `--no-record` writes no history directory.

use std::time::Duration;

use crate::common::{fixture, unix_now};
use crate::harness::{Tui, UI, poll, run_plain, utf8};

const QUIT: Duration = Duration::from_secs(10);

/// How long a change takes at most to be in the recording (seen by the
/// watcher, then flushed each second).
const RECORDED: Duration = Duration::from_secs(20);

/// `snapshot --json --at AT` of the recording beside `store`.
fn snapshot_at(store: &std::path::Path, at: i64) -> (Option<i32>, String, String) {
    let (code, out, err) = run_plain(
        &[
            "--state",
            utf8(store),
            "snapshot",
            "--json",
            "--at",
            &at.to_string(),
        ],
        &[],
    );
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn the_console_records_a_change_and_a_second_console_says_who_records() {
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let history = dir.path().join("stackless-tui").join("history");
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 200, 40);
    tui.wait_for_all(&["hotel", "recording (7d, 256 MB)"], UI);
    let before = unix_now();
    // The recording's times are seconds: the change is made in a later
    // second than `before`, so the store at `before` is without it.
    poll(
        "the next second",
        UI,
        || (unix_now() > before).then_some(()),
        String::new,
    );
    // A lease no run of the fixture has: alpha's, set while recorded.
    let marked = before + 987_654;
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute(
        "UPDATE leases SET expires_at = ?1 WHERE instance = 'alpha'",
        [marked],
    )
    .expect("alpha's lease");
    drop(conn);
    let needle = format!("\"expires_at\": {marked}");
    let seen = poll(
        "the change in the recording",
        RECORDED,
        || {
            let now = unix_now();
            let (_, out, _) = snapshot_at(&path, now);
            out.contains(&needle).then_some(now)
        },
        || snapshot_at(&path, unix_now()).2,
    );
    // A second console on the same store: the first holds the recording.
    let mut second = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 200, 40);
    second.wait_for(&format!("recorded by pid {}", tui.pid()), UI);
    second.send("q");
    assert_eq!(second.wait_exit(QUIT), 0);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    let (code, out, err) = snapshot_at(&path, seen);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(&needle), "{out}");
    let (code, out, err) = snapshot_at(&path, before);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"name\": \"alpha\""), "{out}");
    assert!(!out.contains(&needle), "{out}");
    assert!(history.join("index.json").is_file());
}

#[test]
fn no_record_writes_no_history_directory() {
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--no-reaper", "--no-record"],
        200,
        40,
    );
    tui.wait_for_all(&["hotel", "not recording (--no-record)"], UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    // The console keeps its audit trail beside it: no history there.
    assert!(dir.path().join("stackless-tui").is_dir());
    assert!(!dir.path().join("stackless-tui").join("history").exists());
}
