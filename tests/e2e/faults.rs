//! End-to-end faults with the real binary in pseudo-terminals: two consoles
//! on one store, `kill -9` of the active one (also mid-teardown), a panic in
//! each thread, and the audit trail on a signal.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::fixture;
use crate::harness::{BIN, ENTER_ALT, LEAVE_ALT, Tui, UI, contains, rfind, utf8};

const QUIT: Duration = Duration::from_secs(10);

fn kill9(tui: &Tui) {
    tui.signal(nix::sys::signal::Signal::SIGKILL)
        .expect("kill -9");
}

fn restored(tui: &Tui) {
    let raw = tui.raw();
    let entered = rfind(&raw, ENTER_ALT).expect("the console entered the alternate screen");
    let left = rfind(&raw, LEAVE_ALT).expect("and left it");
    assert!(left > entered, "the alternate screen was left last");
    assert!(!tui.screen().alternate_screen());
}

/// After a panic: the terminal is not left on the alternate screen (the
/// console may not have entered it at all when the panic came first), and
/// nothing was drawn after the report.
fn restored_after_panic(tui: &Tui, report: &[u8]) {
    let raw = tui.raw();
    assert!(
        !tui.screen().alternate_screen(),
        "left on the alternate screen"
    );
    if let Some(entered) = rfind(&raw, ENTER_ALT) {
        let left = rfind(&raw, LEAVE_ALT).expect("left the alternate screen");
        assert!(left > entered, "the alternate screen was left last");
    }
    let at = rfind(&raw, report).expect("the report is printed");
    assert!(
        !contains(&raw[at..], b"\x1b[?1049h") && !contains(&raw[at..], "Instances".as_bytes()),
        "no frame is drawn after the report"
    );
}

/// A teardown script that succeeds at once (tombstoning the instance in
/// `<dir>/state.db`, as `down` does) and logs its argv.
fn fast_down(dir: &Path) -> String {
    let script = dir.join("down.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nNAME=\"$2\"\n{}\necho \"$2\" >> '{}'\nexit 0\n",
            crate::common::tombstone_on_success(&dir.join("state.db")),
            dir.join("calls.log").display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{} down {{name}} --json", script.display())
}

#[test]
fn a_second_console_stands_by_and_takes_over_after_kill_9() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fast_down(dir.path());
    let unix_now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64
    };
    // Whenever this runs, nothing is expired at first (the fixture's leases
    // run out one by one after its capture).
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute("UPDATE leases SET expires_at = ?1", [unix_now() + 86_400])
        .expect("renew every lease");
    // The first console's reaper waits an hour between passes after its
    // first one, so anything reaped later is the second console's doing.
    let first = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1h", "--down-cmd", &down],
        120,
        40,
    );
    let mut first = first;
    first.wait_for("schema v4", UI);
    first.wait_for("golf", UI);
    let mut second = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        120,
        40,
    );
    let banner = format!("standby: active console is pid {}", first.pid());
    second.wait_for(&banner, UI);
    // The header says who runs the reaper: the role lock's holder.
    second.wait_for(
        &format!("reaper: run by another console (pid {})", first.pid()),
        UI,
    );
    assert!(!first.contents().contains("standby"));

    // Renew-and-expire bravo behind both consoles' backs: only an active
    // reaper with a 1 s tick can reap it.
    let past = unix_now() - 10;
    conn.execute(
        "UPDATE leases SET expires_at = ?1 WHERE instance = 'bravo'",
        [past],
    )
    .expect("expire bravo");
    std::thread::sleep(Duration::from_secs(3));
    let calls = std::fs::read_to_string(dir.path().join("calls.log")).unwrap_or_default();
    assert!(
        !calls.contains("bravo"),
        "a standby console never reaps: {calls}"
    );

    let killed = Instant::now();
    kill9(&first);
    second.wait_gone("standby", Duration::from_secs(10));
    second.wait_for("bravo", UI);
    second.wait_until(
        "the new active console reaps bravo",
        Duration::from_secs(15),
        |s| s.contents().contains("reaper bravo reaped"),
    );
    assert!(killed.elapsed() < Duration::from_secs(15));
    second.send("q");
    assert_eq!(second.wait_exit(QUIT), 0);
}

#[test]
fn kill_9_mid_teardown_leaves_a_consistent_store() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    // The demo's teardown: 1.5 s, then it tombstones the instance itself.
    let down = format!("{BIN} demo-down --state {} {{name}} --json", utf8(&path));
    let mut console = Tui::spawn(
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
    console.wait_until("a teardown starts", UI, |s| {
        s.contents().contains("tearing down")
    });
    kill9(&console);
    // The teardown is in its own process group: it finishes on its own
    // (its tombstone is written), and only it.
    let conn = rusqlite::Connection::open(&path).expect("open");
    let count = || -> i64 {
        conn.query_row(
            "SELECT count(*) FROM instances WHERE status = 'tombstoned' AND name NOT IN ('charlie', 'delta')",
            [],
            |r| r.get(0),
        )
        .expect("count")
    };
    let deadline = std::time::Instant::now() + UI;
    while count() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(count(), 1, "the interrupted teardown completed");
    let (ok,): (String,) = conn
        .query_row("PRAGMA integrity_check", [], |r| Ok((r.get(0)?,)))
        .expect("integrity");
    assert_eq!(ok, "ok");
    drop(conn);
    // The next console picks up where it stopped.
    let mut next = Tui::spawn(
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
    next.wait_for("schema v4", UI);
    assert!(
        !next.contents().contains("standby"),
        "the dead console's role is free"
    );
    next.send("q");
    assert_eq!(next.wait_exit(QUIT), 0);
}

#[test]
fn a_panic_in_any_thread_restores_the_terminal_and_exits_101() {
    for point in ["render", "reaper", "watcher", "supervisor"] {
        let fault = format!("panic:{point}");
        let mut tui = Tui::spawn_env(
            &["--demo", "v4"],
            &[("STACKLESS_TUI_FAULT", &fault)],
            120,
            40,
        );
        let code = tui.wait_exit(Duration::from_secs(30));
        assert_eq!(code, 101, "a panic in the {point} thread exits 101");
        let report = format!("injected fault: panic in the {point} thread");
        restored_after_panic(&tui, report.as_bytes());
        tui.wait_family_gone("demo-helper", Duration::from_secs(5));
    }
}

#[test]
fn sigterm_is_written_to_the_audit_trail() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fast_down(dir.path());
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--down-cmd", &down], 120, 40);
    tui.wait_until("golf is reaped", UI, |s| {
        s.contents().contains("reaper golf reaped")
    });
    tui.signal(nix::sys::signal::Signal::SIGTERM)
        .expect("SIGTERM");
    assert_eq!(tui.wait_exit(QUIT), 0);
    restored(&tui);
    let audit =
        std::fs::read_to_string(dir.path().join("stackless-tui/audit.jsonl")).expect("audit");
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.first().unwrap()["action"], "start");
    let golf: Vec<_> = lines.iter().filter(|l| l["instance"] == "golf").collect();
    assert!(golf.iter().any(|l| l["action"] == "teardown"
        && l["outcome"] == "succeeded"
        && l["actor"] == "reaper"
        && l["duration_ms"].is_number()));
    let last = lines.last().unwrap();
    assert_eq!(last["actor"], "console");
    assert_eq!(last["action"], "stop");
    // A teardown the reaper started after golf's may still run at the
    // signal: it is named (`SIGTERM; left running: hotel`).
    let reason = last["reason"].as_str().unwrap_or_default();
    assert!(
        reason == "SIGTERM" || reason.starts_with("SIGTERM; left running: "),
        "{reason}"
    );
}

/// `P` is no hidden global pause. A paused console gives the `console` role
/// up: a standby console takes over and reaps, its header and the paused
/// one's say who reaps now, `reap --once` from another shell reaps while
/// nobody else does, and `P` again takes the role back once it is free.
#[test]
fn a_paused_console_gives_its_role_up_and_says_who_reaps() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fast_down(dir.path());
    let unix_now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64
    };
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute("UPDATE leases SET expires_at = ?1", [unix_now() + 86_400])
        .expect("renew every lease");
    let args = |tick: &'static str| {
        vec![
            "--state".to_owned(),
            utf8(&path).to_owned(),
            "--tick".to_owned(),
            tick.to_owned(),
            "--down-cmd".to_owned(),
            down.clone(),
        ]
    };
    let first_args = args("1h");
    let first_args: Vec<&str> = first_args.iter().map(String::as_str).collect();
    let mut first = Tui::spawn(&first_args, 200, 40);
    first.wait_for("reaper: every 1h", UI);
    let second_args = args("1s");
    let second_args: Vec<&str> = second_args.iter().map(String::as_str).collect();
    let mut second = Tui::spawn(&second_args, 200, 40);
    second.wait_for(
        &format!("reaper: run by another console (pid {})", first.pid()),
        UI,
    );

    // A console whose reaper is off takes no role and says who reaps.
    let mut off_args = args("1h");
    off_args.push("--no-reaper".to_owned());
    let off_args: Vec<&str> = off_args.iter().map(String::as_str).collect();
    let mut watcher = Tui::spawn(&off_args, 200, 40);
    watcher.wait_for(
        &format!(
            "reaper: off (--no-reaper); console pid {} reaps now",
            first.pid()
        ),
        UI,
    );
    watcher.send("q");
    assert_eq!(watcher.wait_exit(QUIT), 0);

    // P: the first gives the role up, the second takes it within a poll.
    first.send("P");
    second.wait_gone("standby", Duration::from_secs(10));
    first.wait_for(
        &format!(
            "reaper: paused (P resumes); console pid {} reaps now",
            second.pid()
        ),
        UI,
    );
    conn.execute(
        "UPDATE leases SET expires_at = ?1 WHERE instance = 'bravo'",
        [unix_now() - 10],
    )
    .expect("expire bravo");
    second.wait_until(
        "the second console reaps bravo",
        Duration::from_secs(15),
        |s| s.contents().contains("reaper bravo reaped"),
    );

    // The second quits: nobody reaps, and the paused one says so.
    second.send("q");
    assert_eq!(second.wait_exit(QUIT), 0);
    first.wait_for("reaper: paused (P resumes); nobody reaps now", UI);
    // reap --once from another shell is not blocked by the paused console.
    conn.execute(
        "UPDATE leases SET expires_at = ?1 WHERE instance = 'hotel'",
        [unix_now() - 10],
    )
    .expect("expire hotel");
    let (code, stdout, stderr) = crate::harness::run_plain(
        &[
            "--state",
            utf8(&path),
            "--down-cmd",
            &down,
            "reap",
            "--once",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&stdout);
    assert_eq!(
        code,
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&stderr)
    );
    assert!(stdout.contains("reaper hotel reaped"), "{stdout}");
    assert!(!stdout.contains("nothing done"), "{stdout}");

    // P again: the role is free, so this console reaps again.
    first.send("P");
    first.wait_for("reaper: every 1h", UI);
    first.send("q");
    assert_eq!(first.wait_exit(QUIT), 0);
}

/// A dry run beside a controller that runs its lease reaper stands by as a
/// real reaper does (`--reaper auto`), so its `would reap` lines say what
/// would be done; it goes on once the controller is gone.
#[test]
fn a_dry_run_stands_by_for_the_controllers_lease_reaper() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let controller = crate::common::fake_controller(dir.path(), true);
    let mut tui = Tui::spawn(
        &[
            "--state",
            utf8(&path),
            "--tick",
            "1s",
            "--dry-run",
            "--down-cmd",
            "true {name}",
        ],
        200,
        40,
    );
    tui.wait_for(
        &format!(
            "reaper: the controller reaps (pid {}); standing by",
            std::process::id()
        ),
        UI,
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(!tui.contents().contains("would reap"), "{}", tui.contents());
    // The controller stops (its lock released): the dry run goes on.
    drop(controller);
    tui.wait_for("would reap", Duration::from_secs(15));
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}
