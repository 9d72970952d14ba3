//! Hostile conditions with the real binary in pseudo-terminals: an input
//! burst longer than crossterm's 1 KiB read (and pastes near the
//! destructive keys), a store swapped for an older schema under a running
//! console, a wall clock already wrong at start-up, a signal while
//! teardowns run, planted symlinks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::stores::{exec, migrated};
use crate::common::{calls, counting_down, fixture, unix_now};
use crate::harness::{Tui, UI, selected_instance, utf8};

const QUIT: Duration = Duration::from_secs(10);

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
fn a_burst_of_2000_keys_or_120_wheel_events_is_processed_without_another_key() {
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
    // 120 wheel-down events over the Instances pane in one write (SGR
    // mouse, 11 bytes each: 1320 bytes), 3 rows each.
    tui.send("g");
    tui.wait_until("the first row selected again", UI, |s| {
        selected_instance(s).as_deref() == Some("n0001")
    });
    tui.send("\x1b[<65;10;6M".repeat(120));
    tui.wait_until("the selection 360 rows down", UI, |s| {
        selected_instance(s).as_deref() == Some("n0361")
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn a_signal_with_teardowns_running_records_them_as_left_running() {
    for signal in [
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGHUP,
    ] {
        let (dir, path) = fixture("stackless-real-v4.db");
        let down = counting_down(dir.path(), "sleep 4\nexit 0");
        let mut tui = Tui::spawn(
            &[
                "--state",
                utf8(&path),
                "--down-cmd",
                &down,
                "--reap-concurrency",
                "1",
            ],
            120,
            40,
        );
        tui.wait_until("a teardown starts", UI, |s| {
            s.contents().contains("tearing down")
        });
        let running = calls(dir.path());
        assert_eq!(running.len(), 1, "one teardown at a time: {running:?}");
        let name = running[0].clone();
        tui.signal(signal).expect("signal");
        assert_eq!(tui.wait_exit(QUIT), 0);
        let audit =
            std::fs::read_to_string(dir.path().join("stackless-tui/audit.jsonl")).expect("audit");
        let lines: Vec<serde_json::Value> = audit
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let errors: Vec<_> = lines.iter().filter(|l| l["outcome"] == "error").collect();
        assert!(errors.is_empty(), "no false errors on {signal}: {errors:?}");
        assert!(
            lines.iter().any(|l| l["instance"] == name.as_str()
                && l["action"] == "teardown"
                && l["outcome"] == "left-running"),
            "{name}'s teardown is recorded as left running on {signal}: {audit}"
        );
        let last = lines.last().expect("a line");
        assert_eq!(last["action"], "stop");
        assert_eq!(last["reason"], format!("{signal}; left running: {name}"));
    }
}

#[test]
fn a_store_swapped_for_an_older_schema_under_a_running_console_runs_no_teardown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let now = unix_now();
    let path = migrated(dir.path(), 5);
    exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty)
               VALUES ('fresh', 'local', 'active', '[stack]', {now}, NULL, 0);
             INSERT INTO leases VALUES ('fresh', 86400, {});",
            now + 86_400
        ),
    );
    let down = counting_down(dir.path(), "exit 1");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        120,
        40,
    );
    tui.wait_for_all(&["schema v5", "reaper: every 1s", "fresh"], UI);
    // A schema-2 store (before reap bookkeeping) with two expired
    // instances, written beside the store and renamed over it.
    let older = tempfile::tempdir().expect("tempdir");
    let v2 = migrated(older.path(), 2);
    exec(
        &v2,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at)
               VALUES ('old1', 'local', 'active', '[stack]', {now}, NULL),
                      ('old2', 'local', 'active', '[stack]', {now}, NULL);
             INSERT INTO leases VALUES ('old1', 60, {e}), ('old2', 60, {e});
             PRAGMA wal_checkpoint(TRUNCATE);",
            e = now - 600
        ),
    );
    let beside = dir.path().join("state.db.new");
    std::fs::copy(&v2, &beside).expect("copy beside");
    std::fs::rename(&beside, &path).expect("rename over the store");
    let screen = tui.wait_for_all(&["schema v2", "old1", "reaper: off (schema v2)"], UI);
    assert!(!screen.contains("every 1s"), "{screen}");
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(calls(dir.path()), Vec::<String>::new(), "no teardown runs");
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn a_console_started_with_the_clock_a_year_ahead_reaps_and_collects_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let now = unix_now();
    let path = migrated(dir.path(), 5);
    exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty)
               VALUES ('soon', 'local', 'active', '[stack]', {now}, NULL, 0),
                      ('gone', 'local', 'tombstoned', '[stack]', {c}, {t}, 0);
             INSERT INTO leases VALUES ('soon', 3600, {e});",
            c = now - 2 * 86_400,
            t = now - 86_400,
            e = now + 50 * 60
        ),
    );
    std::fs::create_dir_all(dir.path().join("logs/gone")).expect("logs");
    let down = counting_down(dir.path(), "exit 0");
    let year = (365 * 86_400).to_string();
    let mut tui = Tui::spawn_env(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        &[("STACKLESS_TUI_CLOCK_OFFSET", &year)],
        120,
        40,
    );
    tui.wait_for_all(
        &[
            "reaper: paused (clock looks wrong)",
            "clock looks wrong: the wall clock is 1y 000d ahead of the kernel",
            "soon",
        ],
        UI,
    );
    // `r` on soon (its lease looks a year gone to this clock) is refused.
    tui.select("soon");
    tui.send("r");
    tui.wait_for("r is off until it looks right", UI);
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(calls(dir.path()), Vec::<String>::new(), "nothing torn down");
    let conn = rusqlite::Connection::open(&path).expect("open");
    let tombstones: i64 = conn
        .query_row(
            "SELECT count(*) FROM instances WHERE name = 'gone'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(tombstones, 1, "the one-day-old tombstone is not collected");
    assert!(dir.path().join("logs/gone").is_dir(), "nor its logs");
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn audit_and_console_log_planted_as_symlinks_are_refused_on_screen() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let outside = tempfile::tempdir().expect("tempdir");
    let precious = outside.path().join("precious");
    std::fs::write(&precious, "keep").expect("bait");
    let ours = dir.path().join("stackless-tui");
    std::fs::create_dir_all(&ours).expect("dir");
    std::os::unix::fs::symlink(&precious, ours.join("audit.jsonl")).expect("link");
    std::os::unix::fs::symlink(&precious, ours.join("console.log")).expect("link");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--no-reaper", "--log-level", "info"],
        160,
        40,
    );
    tui.wait_for_all(
        &[
            "audit trail unavailable:",
            "console log unavailable:",
            "audit.jsonl is a symbolic link",
        ],
        UI,
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    assert_eq!(std::fs::read_to_string(&precious).expect("bait"), "keep");
}

#[test]
fn a_console_started_on_schema_2_reaps_once_stackless_upgrades_the_store_in_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let now = unix_now();
    let path = migrated(dir.path(), 2);
    exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at)
               VALUES ('old1', 'local', 'active', '[stack]', {now}, NULL);
             INSERT INTO leases VALUES ('old1', 60, {});",
            now - 600
        ),
    );
    let down = counting_down(dir.path(), "exit 0");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        120,
        40,
    );
    tui.wait_for_all(&["schema v2", "reaper: off (schema v2)", "old1"], UI);
    tui.wait_for("(r/d off: schema v2 is older", UI);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(calls(dir.path()), Vec::<String>::new(), "nothing on v2");
    // What any stackless command does on open: migrations 3-5 in place.
    for (index, sql) in crate::common::stores::MIGRATIONS
        .iter()
        .enumerate()
        .skip(2)
        .take(3)
    {
        exec(
            &path,
            &format!(
                "BEGIN; {sql} ; PRAGMA user_version = {}; COMMIT;",
                index + 1
            ),
        );
    }
    tui.wait_for_all(&["schema v5", "reaper: every 1s"], UI);
    tui.wait_until("old1 is torn down", UI, |_| !calls(dir.path()).is_empty());
    assert_eq!(calls(dir.path())[0], "old1");
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

/// Pasted text is never run as keys: a paste of `dy` (bracketed, as a
/// terminal sends it) opens no dialog and tears nothing down.
#[test]
fn a_pasted_dy_never_opens_or_answers_the_teardown_confirmation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = many_instances(dir.path(), 3);
    let down = counting_down(dir.path(), "exit 0");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        120,
        40,
    );
    tui.wait_until("the first row selected", UI, |s| {
        selected_instance(s).as_deref() == Some("n0001")
    });
    // A bracketed paste: text, not keys. No dialog opens: a key sent after
    // it (`j`, the next row) is handled after it, and nothing opened.
    tui.send("\x1b[200~dy\x1b[201~");
    tui.send("j");
    tui.wait_until("the key after the paste", UI, |s| {
        selected_instance(s).as_deref() == Some("n0002")
    });
    assert!(!tui.contents().contains("Tear down n0001?"));
    assert_eq!(calls(dir.path()), Vec::<String>::new());
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    assert_eq!(calls(dir.path()), Vec::<String>::new());
}

/// A destructive confirmation is answered only by a key pressed once it is
/// on screen: `dy` written in one go (typed ahead, an unbracketed paste)
/// opens the dialog and the `y` queued behind the `d` is dropped; the
/// dialog stays and nothing is torn down until a `y` comes after it. The
/// same for the bulk `d` on marked instances.
#[test]
fn a_dy_burst_in_one_write_opens_the_dialog_but_never_answers_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = many_instances(dir.path(), 3);
    let down = counting_down(dir.path(), "exit 0");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        120,
        40,
    );
    tui.wait_until("the first row selected", UI, |s| {
        selected_instance(s).as_deref() == Some("n0001")
    });
    tui.send("dy");
    tui.wait_for("Tear down n0001?", UI);
    std::thread::sleep(Duration::from_millis(1500));
    let screen = tui.contents();
    assert!(screen.contains("Tear down n0001?"), "still asked: {screen}");
    assert_eq!(calls(dir.path()), Vec::<String>::new(), "nothing torn down");
    // A `y` pressed once the dialog is on screen answers it.
    tui.send("y");
    tui.wait_until("n0001 torn down", UI, |_| calls(dir.path()) == ["n0001"]);
    tui.wait_gone("Tear down n0001?", UI);
    // The bulk `d`: mark n0002 and n0003, then `dy` in one write.
    tui.select("n0002");
    tui.send(" ");
    tui.send("j");
    tui.send(" ");
    tui.wait_for("● n0003", UI);
    tui.send("dy");
    let question = "Tear down 2 marked instances (n0002, n0003)?";
    tui.wait_for(question, UI);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(tui.contents().contains(question), "still asked");
    assert_eq!(calls(dir.path()), ["n0001"]);
    tui.send("y");
    tui.wait_until("the marked instances torn down", UI, |_| {
        let mut seen = calls(dir.path());
        seen.sort();
        seen == ["n0001", "n0002", "n0003"]
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}
