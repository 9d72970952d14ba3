//! End-to-end: the real `stackless-tui` binary in a pseudo-terminal, read
//! back through a terminal emulator (vt100). Each test drives what an
//! operator would do and asserts the exact text the console shows, its exit
//! status, and that the terminal is given back as it was found.

use std::time::Duration;

use crate::common::fixture;
use crate::harness::{self, ENTER_ALT, LEAVE_ALT, Tui, UI, contains, pane, rfind, run_plain, utf8};

/// How long a quit may take (the helper gets up to 3 s between TERM and
/// KILL).
const QUIT: Duration = Duration::from_secs(10);

/// The demo store's instances (src/demo/seed.rs).
const DEMO_NAMES: [&str; 12] = [
    "api-gateway-dev",
    "billing-sandbox",
    "checkout-preview",
    "docs-site-pr-412",
    "feature-flags-demo",
    "flaky-gpu-worker",
    "inventory-sync",
    "legacy-auth-spike",
    "marketing-preview",
    "ml-feature-store",
    "orders-e2e",
    "payments-staging",
];

/// The footer's keys (the line may go on with more).
const FOOTER: &str = "↑↓/jk select  Tab pane  r reap  d down  ? help  q quit";

/// `text` with every run of spaces folded into one (for lines laid out in
/// padded columns).
fn squeeze(text: &str) -> String {
    text.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long a demo helper may outlive the console (it should not at all:
/// the console stops it before exiting; an orphaned helper notices within
/// 200 ms).
const HELPER_GONE: Duration = Duration::from_secs(1);

/// How long a teardown the console left running may take to finish (the
/// demo's takes 1.5 s).
const DESCENDANTS_GONE: Duration = Duration::from_secs(10);

/// After exit: the emulator is back on the main screen with the cursor
/// shown, and the last thing the alternate screen saw was it being left.
fn assert_terminal_restored(tui: &Tui) {
    let screen = tui.screen();
    assert!(
        !screen.alternate_screen(),
        "still on the alternate screen after exit:\n{}",
        screen.contents()
    );
    assert!(
        !screen.hide_cursor(),
        "the cursor is still hidden after exit"
    );
    assert_eq!(
        tui.raw_mode(),
        Some(false),
        "the terminal is left in raw mode (no echo or no line editing)"
    );
    let raw = tui.raw();
    let entered = rfind(&raw, ENTER_ALT).expect("the console never entered the alternate screen");
    let left = rfind(&raw, LEAVE_ALT).expect("the console never left the alternate screen");
    assert!(
        left > entered,
        "the last alternate-screen sequence is an enter, not a leave"
    );
    assert!(
        contains(&raw[left..], b"\x1b[?25h"),
        "the cursor is not shown again after leaving the alternate screen: {:?}",
        String::from_utf8_lossy(&raw[left..])
    );
}

/// Quit with `q` and check the exit status and the terminal.
fn quit(tui: &mut Tui) {
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0, "q must exit 0");
    assert_terminal_restored(tui);
}

/// The pid in the Supervisor pane's newest `helper started, pid N` line.
fn helper_pid(lines: &[String]) -> u32 {
    lines
        .iter()
        .rev()
        .find_map(|l| l.split("helper started, pid ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no `helper started, pid N` line in {lines:#?}"))
}

/// The Instances row of `name`, borders stripped, if it is on screen.
fn find_row(screen: &vt100::Screen, name: &str) -> Option<String> {
    pane(screen, "Instances")?
        .into_iter()
        .find(|l| l.trim_start_matches('▶').split_whitespace().next() == Some(name))
}

/// The Instances row of `name`; panics when it is not on screen.
fn instance_row(screen: &vt100::Screen, name: &str) -> String {
    find_row(screen, name).unwrap_or_else(|| panic!("no {name} row:\n{}", screen.contents()))
}

/// flaky-gpu-worker's Backoffs row: (ATTEMPTS, RETRY), e.g. `(2, "retry in
/// 9s")` or `(3, "retry in 3m 50s")`.
fn flaky_backoff(screen: &vt100::Screen) -> Option<(u32, String)> {
    pane(screen, "Backoffs")?.iter().find_map(|l| {
        let rest = l.trim_start_matches('▶').trim_start();
        let rest = rest.strip_prefix("flaky-gpu-worker ")?.trim_start();
        let (attempts, rest) = rest.split_once(' ')?;
        Some((attempts.parse().ok()?, rest.trim_start().to_owned()))
    })
}

/// Whether a RETRY cell says the retry is at least 4 s away.
fn retry_far(retry: &str) -> bool {
    let Some(after) = retry.strip_prefix("retry in ") else {
        return false;
    };
    let first = after.split_whitespace().next().unwrap_or_default();
    first.ends_with('m')
        || first.ends_with('h')
        || first.ends_with('d')
        || first
            .strip_suffix('s')
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n >= 4)
}

/// The whole operator story on the demo store at 120x40: the reaper's first
/// pass, the helper, `r` on an instance whose teardown fails, `d` cancelled
/// then confirmed, help, `q`; then a clean terminal and no process left.
#[test]
fn demo_end_to_end_120x40() {
    let mut tui = Tui::spawn(&["--demo", "v4"], 120, 40);

    // Header and the seeded store.
    let screen = tui.wait_for_all(&["schema v4", "api-gateway-dev", FOOTER], UI);
    assert_eq!(tui.raw_mode(), Some(true), "the console runs in raw mode");
    let top: Vec<&str> = screen.lines().take(2).collect();
    assert!(
        top[0].starts_with("stackless-tui  │  demo store ")
            && top[0].contains(utf8(tui.home()))
            // `│  watch: inotify` is the first item dropped when the long
            // demo path leaves no room for it.
            && top[0].contains("/state.db  │  schema v4"),
        "header line 1: {:?}",
        top[0]
    );
    // The reaper's schedule sits after its line once it has reported
    // (`next pass in 4s · last: ...`).
    assert!(
        top[1].starts_with("reaper: every 5s  │  ")
            && top[1].contains("helper: stackless-tui demo-helper  │  sort: lease expiry"),
        "header line 2: {:?}",
        top[1]
    );
    let footer = screen.lines().last().unwrap_or_default();
    assert!(footer.starts_with(FOOTER), "footer: {footer:?}");

    // The reaper's first pass: the long-expired instance is reaped, the
    // 8-day-old tombstone garbage-collected.
    tui.wait_in_pane(
        "Activity",
        "reaper orders-e2e reaped: down succeeded in",
        UI,
    );
    let activity = tui.wait_in_pane(
        "Activity",
        "reaper legacy-auth-spike GC'd: tombstone older than 7 days deleted with its logs",
        UI,
    );
    assert!(
        activity
            .iter()
            .any(|l| l.contains("reaper orders-e2e tearing down: /")
                && l.contains("/stackless-tui demo-down --state ")),
        "no `tearing down` before `reaped`: {activity:#?}"
    );
    // GC'd: the row leaves the Instances pane.
    tui.wait_until("legacy-auth-spike to leave the Instances pane", UI, |s| {
        !harness::instance_rows(s)
            .iter()
            .any(|(_, n)| n == "legacy-auth-spike")
    });
    // Reaped: the row stays, tombstoned (once the watcher has re-read the
    // store).
    tui.wait_until("orders-e2e tombstoned in the Instances pane", UI, |s| {
        find_row(s, "orders-e2e").is_some_and(|r| r.contains(" tombstoned "))
    });

    // The helper supervisor started the demo helper; the process scan used
    // at the end finds the console by its environment.
    let supervisor = tui.wait_in_pane("Supervisor", "helper started, pid ", UI);
    helper_pid(&supervisor);
    let family = tui.family();
    assert!(
        family.iter().any(|(pid, _)| *pid == tui.pid()),
        "the console pid {} is not found by its environment: {family:#?}",
        tui.pid()
    );

    // `r` on the flaky instance: its teardown always leaves a survivor.
    tui.select("flaky-gpu-worker");
    assert!(
        instance_row(&tui.screen(), "flaky-gpu-worker").starts_with("▶ flaky-gpu-worker "),
        "flaky-gpu-worker is not selected"
    );
    // The seed's backoff runs out 12 s after start, when the reaper retries
    // (and fails) on its own. Press `r` while that retry is not about to
    // happen, so the operator's teardown does not meet the reaper's (on a
    // fast machine this is at once: `retry in 9s`).
    let screen = tui.wait_until(
        "flaky-gpu-worker's retry to be at least 4 s away",
        UI,
        |s| flaky_backoff(s).is_some_and(|(_, retry)| retry_far(&retry)),
    );
    let (attempts_before, _) = flaky_backoff(&screen).expect("flaky-gpu-worker in Backoffs");
    assert!(attempts_before >= 2, "the seed has 2 failed attempts");
    // `r` asks first, naming the instance and the backoff it skips.
    tui.send("r");
    let screen = tui.wait_for("Reap flaky-gpu-worker (lease expired", UI);
    assert!(screen.contains("Confirm reap"), "{screen}");
    assert!(
        screen.contains(&format!(
            "This skips its backoff after {attempts_before} failed reaps:"
        )),
        "{screen}"
    );
    tui.send("y");
    tui.wait_gone("Confirm reap", UI);
    let activity = tui.wait_in_pane(
        "Activity",
        "operator flaky-gpu-worker failed: engine.teardown.survivors: teardown of \"flaky-gpu-worker\" left survivors",
        UI,
    );
    assert!(
        activity
            .iter()
            .any(|l| l.contains("operator flaky-gpu-worker tearing down: /")
                && l.contains("/stackless-tui demo-down")),
        "{activity:#?}"
    );
    // The failure is recorded: one more attempt, and a new backoff.
    tui.wait_until(
        "flaky-gpu-worker's attempts to go up in Backoffs",
        UI,
        |s| {
            flaky_backoff(s).is_some_and(|(n, retry)| n == attempts_before + 1 && retry_far(&retry))
        },
    );

    // `d` on a healthy instance, cancelled with `n`.
    tui.select("checkout-preview");
    tui.send("d");
    // The dialog names the demo's real teardown command (this binary's
    // `demo-down`), not a generic `stackless down`.
    let dialog = "Tear down checkout-preview? This runs:";
    let screen = tui.wait_for(dialog, UI);
    assert!(screen.contains("Confirm teardown"), "{screen}");
    assert!(screen.contains("demo-down"), "{screen}");
    assert!(!screen.contains("This runs stackless down"), "{screen}");
    tui.send("n");
    tui.wait_in_pane(
        "Activity",
        "operator checkout-preview aborted: cancelled",
        UI,
    );
    let screen = tui.screen();
    assert!(
        !screen.contents().contains("Tear down checkout-preview?")
            && !screen.contents().contains("Confirm teardown"),
        "the dialog is still open:\n{}",
        screen.contents()
    );
    let row = instance_row(&screen, "checkout-preview");
    assert!(
        row.contains(" active "),
        "cancelled but not active: {row:?}"
    );

    // `d` again, confirmed with `y`.
    tui.send("d");
    tui.wait_for(dialog, UI);
    tui.send("y");
    tui.wait_gone("Confirm teardown", UI);
    let activity = tui.wait_in_pane(
        "Activity",
        "operator checkout-preview torn down: down succeeded in",
        UI,
    );
    assert!(
        activity
            .iter()
            .any(|l| l.contains("operator checkout-preview tearing down: /")
                && l.contains("/stackless-tui demo-down")),
        "{activity:#?}"
    );
    tui.wait_until("checkout-preview tombstoned", UI, |s| {
        find_row(s, "checkout-preview").is_some_and(|r| r.contains(" tombstoned "))
    });

    // Help opens and closes.
    tui.send("?");
    tui.wait_until("the help overlay", UI, |s| {
        let help = squeeze(&s.contents());
        help.contains("Help (Esc or ? closes)")
            && help.contains(
                "d tear the selected instance down, queued behind a pending op (asks y/N)",
            )
            && help.contains("r reap the selected instance now (expired, not locked; asks y/N)")
    });
    // Its last lines, below the fold at 40 rows.
    tui.send("G");
    tui.wait_until("the end of the help", UI, |s| {
        let help = squeeze(&s.contents());
        help.contains("q / Ctrl-C quit")
            && help.contains(
                "y / other key confirm / refuse a reap, a teardown, a cancel, a renew or a verify",
            )
    });
    tui.send("\x1b");
    tui.wait_until("the help overlay to close", UI, |s| {
        let text = s.contents();
        !text.contains("Help (Esc or ? closes)")
            && !text.contains("q / Ctrl-C")
            && text.contains("api-gateway-dev")
    });

    // Quit while a helper is running (it lives 8 s, then restarts after a
    // backoff), so there is one to stop.
    let screen = tui.wait_until("a running helper", UI, |s| running_helper(s).is_some());
    let helper = running_helper(&screen).expect("running helper");
    assert!(
        tui.family().iter().any(|(pid, _)| *pid == helper),
        "helper pid {helper} not found by its environment: {:#?}",
        tui.family()
    );

    quit(&mut tui);
    // The console stops its helper before it exits; every other descendant
    // (a teardown still finishing) is gone soon after.
    tui.wait_family_gone("demo-helper", HELPER_GONE);
    if let Some(cmdline) = harness::cmdline(helper) {
        assert!(
            !cmdline.contains("demo-helper"),
            "helper pid {helper} survives the console: {cmdline}"
        );
    }
    tui.wait_family_gone("", DESCENDANTS_GONE);
}

/// The helper pid when the Supervisor pane's newest line is `helper
/// started, pid N` and that process is alive.
fn running_helper(screen: &vt100::Screen) -> Option<u32> {
    let lines = pane(screen, "Supervisor")?;
    let newest = lines.iter().rev().find(|l| !l.trim().is_empty())?;
    let pid: u32 = newest
        .split("helper started, pid ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    harness::cmdline(pid)
        .is_some_and(|c| c.contains("demo-helper"))
        .then_some(pid)
}

/// The demo at 80x24 renders without a panic, shows the footer, every
/// demo name whole (LEASE and LOCK take their short forms first), and
/// quits with 0.
#[test]
fn demo_at_80x24() {
    let mut tui = Tui::spawn(&["--demo", "v4"], 80, 24);
    let screen = tui.wait_for(FOOTER, UI);
    assert!(screen.contains("Instances"), "{screen}");
    let screen = tui.wait_until("the instance rows", UI, |s| {
        harness::instance_rows(s).len() >= 5
    });
    let rows = harness::instance_rows(&screen);
    for (_, name) in &rows {
        assert!(
            DEMO_NAMES.contains(&name.as_str()),
            "{name:?} is not a whole demo instance name:\n{}",
            screen.contents()
        );
    }
    assert_eq!(
        rows.iter().filter(|(selected, _)| *selected).count(),
        1,
        "{}",
        screen.contents()
    );
    // The first reaper pass draws into the narrow Activity pane too.
    tui.wait_in_pane(
        "Activity",
        "reaper orders-e2e reaped: down succeeded in",
        UI,
    );
    let last = tui.contents();
    let lines: Vec<&str> = last.lines().collect();
    assert_eq!(lines.len(), 24, "{last}");
    assert!(lines[23].starts_with(FOOTER), "footer: {:?}", lines[23]);
    assert!(tui.alive(), "the console died at 80x24");
    quit(&mut tui);
}

/// Whether the pane titled `title` spans all `cols` columns (drawn for this
/// width, not left over from another).
fn full_width(screen: &vt100::Screen, title: &str, cols: u16) -> bool {
    harness::pane_rect(screen, title)
        .is_some_and(|(_, left, _, right)| left == 0 && right == cols - 1)
}

/// Resizing: down to the minimum, below it (a message), back up, then a
/// storm of resizes; the console survives and quits with 0.
#[test]
fn resizes() {
    let mut tui = Tui::spawn(&["--demo", "v4"], 120, 40);
    tui.wait_for("api-gateway-dev", UI);

    tui.resize(60, 15);
    let screen = tui.wait_until("the 60x15 layout", UI, |s| {
        let text = s.contents();
        text.lines().count() == 15
            && full_width(s, "Instances", 60)
            && text.lines().last().is_some_and(|l| l.starts_with(FOOTER))
    });
    assert!(!screen.contents().contains("terminal too small"));

    tui.resize(40, 10);
    let screen = tui.wait_until("the too-small message", UI, |s| {
        s.contents()
            .contains("terminal too small: 40x10, needs 60x15")
    });
    assert!(
        !screen.contents().contains("Instances"),
        "panes drawn at 40x10:\n{}",
        screen.contents()
    );

    tui.resize(100, 30);
    let screen = tui.wait_until("the Instances pane back at 100x30", UI, |s| {
        full_width(s, "Instances", 100)
            && pane(s, "Instances").is_some_and(|p| p.iter().any(|l| l.contains("api-gateway-dev")))
    });
    assert!(
        !screen.contents().contains("terminal too small"),
        "{}",
        screen.contents()
    );

    // 50 resizes as fast as the PTY takes them, through tiny (down to the
    // 0x0 some containers report), odd and large sizes.
    let sizes = [
        (1, 1),
        (59, 15),
        (60, 14),
        (200, 60),
        (61, 16),
        (20, 5),
        (132, 43),
        (80, 24),
        (2, 200),
        (300, 3),
        (0, 0),
    ];
    for i in 0..50 {
        let (cols, rows) = sizes[i % sizes.len()];
        tui.resize(cols, rows);
    }
    assert!(tui.alive(), "the console died during the resize storm");
    tui.resize(120, 40);
    let screen = tui.wait_until("a full redraw at 120x40", UI, |s| {
        full_width(s, "Instances", 120)
            && full_width(s, "Activity", 120)
            && pane(s, "Instances").is_some_and(|p| p.iter().any(|l| l.contains("api-gateway-dev")))
            && s.contents().lines().count() == 40
    });
    assert!(
        !screen.contents().contains("terminal too small"),
        "{}",
        screen.contents()
    );
    assert!(tui.alive());
    quit(&mut tui);
}

/// Ctrl-C (a key in raw mode), SIGTERM and SIGHUP all quit with 0 and give
/// the terminal back.
#[test]
fn ctrl_c_and_signals_quit_cleanly() {
    let mut tui = Tui::spawn(&["--demo"], 120, 40);
    tui.wait_for("api-gateway-dev", UI);
    tui.send([0x03]);
    assert_eq!(tui.wait_exit(QUIT), 0, "Ctrl-C must exit 0");
    assert_terminal_restored(&tui);
    tui.wait_family_gone("demo-helper", HELPER_GONE);
    tui.wait_family_gone("", DESCENDANTS_GONE);

    for signal in [
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGHUP,
    ] {
        let mut tui = Tui::spawn(&["--demo"], 120, 40);
        tui.wait_for("api-gateway-dev", UI);
        tui.wait_in_pane("Supervisor", "helper started, pid ", UI);
        tui.signal(signal).expect("kill");
        assert_eq!(tui.wait_exit(QUIT), 0, "{signal} must exit 0");
        assert_terminal_restored(&tui);
        tui.wait_family_gone("demo-helper", HELPER_GONE);
        tui.wait_family_gone("", DESCENDANTS_GONE);
    }
}

/// Closing the terminal (its window, an ssh connection): the console gets
/// SIGHUP with a terminal it can no longer write to, and must still exit 0,
/// stop its helper and remove the demo's temporary store.
#[test]
fn terminal_hang_up_exits_cleanly() {
    let mut tui = Tui::spawn(&["--demo"], 120, 40);
    tui.wait_for("api-gateway-dev", UI);
    tui.wait_in_pane("Supervisor", "helper started, pid ", UI);
    let tmp = tui.home().join("tmp");
    let demo_dirs = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("stackless-tui-demo-"))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(demo_dirs().len(), 1, "the demo store is in TMPDIR");
    tui.hang_up();
    assert_eq!(tui.wait_exit(QUIT), 0, "a hung-up console must exit 0");
    tui.wait_family_gone("demo-helper", HELPER_GONE);
    tui.wait_family_gone("", DESCENDANTS_GONE);
    assert_eq!(
        demo_dirs(),
        Vec::<String>::new(),
        "the demo's temporary store is left behind"
    );
}

/// A second console on the demo's store stands by; when the demo quits (and
/// deletes its temporary directory) the standby must not take the console
/// role in the directory being deleted and bring it back: the demo keeps
/// its roles until it has exited.
#[test]
fn a_console_taking_over_after_the_demo_quits_leaves_its_directory_gone() {
    let mut demo = Tui::spawn(&["--demo"], 120, 40);
    demo.wait_for("api-gateway-dev", UI);
    let tmp = demo.home().join("tmp");
    let dirs: Vec<std::path::PathBuf> = std::fs::read_dir(&tmp)
        .expect("TMPDIR")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("stackless-tui-demo-"))
        })
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let store = dirs[0].join("state.db");
    let mut other = Tui::spawn(&["--state", utf8(&store)], 120, 40);
    other.wait_for("standby: active console is pid", UI);
    // A teardown in flight when the demo quits: it waits for it (up to 5 s)
    // before deleting its directory, time enough for the standby's polls.
    demo.send(":api-gateway-dev\r");
    demo.send("d");
    demo.wait_for("Tear down api-gateway-dev?", UI);
    demo.send("y");
    demo.wait_for("operator api-gateway-dev tearing down", UI);
    demo.send("q");
    // The standby never becomes the active console while the demo's
    // directory is still there.
    let deadline = std::time::Instant::now() + QUIT;
    while dirs[0].exists() {
        assert!(
            !other.contents().contains("reaper: every"),
            "took over while the demo's directory was being deleted:\n{}",
            other.contents()
        );
        assert!(std::time::Instant::now() < deadline, "the demo never left");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(demo.wait_exit(QUIT), 0);
    other.wait_for("is gone", UI);
    // Several of the standby's polls (500 ms) after the demo exited.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !dirs[0].exists(),
        "the demo's directory came back: {:?}",
        std::fs::read_dir(&dirs[0]).map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
    );
    other.send("q");
    assert_eq!(other.wait_exit(QUIT), 0);
}

/// A store error exits 2 before the terminal is touched: the message names
/// the path and the cause, and not one escape byte is written.
#[test]
fn store_errors_leave_the_terminal_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, "this is not a database\n".repeat(400)).expect("write");
    let missing = "/nonexistent/x.db";
    // (arguments, extra environment, what the message must say)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, Vec<&'a str>);
    let cases: [Case; 4] = [
        (
            vec!["--state", missing],
            vec![],
            vec![missing, "does not exist"],
        ),
        (
            vec!["--state", utf8(dir.path())],
            vec![],
            vec![utf8(dir.path()), "is a directory"],
        ),
        (
            vec!["--state", utf8(&garbage)],
            vec![],
            vec![utf8(&garbage), "is not a SQLite database"],
        ),
        (
            vec![],
            vec![("STACKLESS_STATE_URL", "libsql://x")],
            vec![
                "STACKLESS_STATE_URL is set (libsql://x): stackless 0.4.0 moved fleets",
                "a 0.3.0 libsql remote store cannot be read by this console",
                "`stackless-tui --controller ssh://HOST`",
            ],
        ),
    ];
    for (args, env, expected) in &cases {
        // In a terminal: nothing but the message.
        let mut tui = Tui::spawn_env(args, env, 120, 40);
        assert_eq!(tui.wait_exit(UI), 2, "{args:?} {env:?}");
        let raw = tui.raw();
        let text = String::from_utf8_lossy(&raw);
        assert!(
            text.starts_with("stackless-tui: "),
            "{args:?} {env:?}: {text:?}"
        );
        for needle in expected {
            assert!(
                text.contains(needle),
                "{args:?} {env:?}: no {needle:?} in {text:?}"
            );
        }
        assert!(
            !raw.contains(&0x1b),
            "{args:?} {env:?}: an escape byte reached the terminal: {text:?}"
        );
        assert!(!tui.screen().alternate_screen());

        // Without a terminal: stdout empty, the message on stderr.
        let (code, stdout, stderr) = run_plain(args, env);
        assert_eq!(code, Some(2), "{args:?} {env:?}");
        assert!(
            stdout.is_empty(),
            "{args:?} {env:?}: stdout {:?}",
            String::from_utf8_lossy(&stdout)
        );
        let stderr = String::from_utf8_lossy(&stderr);
        for needle in expected {
            assert!(stderr.contains(needle), "{args:?}: {stderr:?}");
        }
        assert!(!stderr.contains('\x1b'), "{args:?}: {stderr:?}");
    }
}

/// The raw output holds none of hostile.db's control strings.
fn assert_inert(raw: &[u8], screen: &str) {
    for (what, needle) in [
        ("clear-screen sequence", &b"\x1b[2J"[..]),
        ("window-title sequence", b"\x1b]0;pwned"),
        ("colour sequence", b"\x1b[31mRED"),
        ("RTL override U+202E", "\u{202e}".as_bytes()),
        ("NUL", b"\0"),
    ] {
        assert!(
            !contains(raw, needle),
            "the store's {what} {needle:?} reached the terminal raw; screen:\n{screen}"
        );
    }
}

/// A store full of terminal escapes, NULs and bidi overrides: none of them
/// reaches the terminal raw; each is drawn as a visible placeholder, and the
/// well-behaved neighbour is still shown.
#[test]
fn hostile_store_is_drawn_inert() {
    let (_dir, path) = fixture("hostile.db");
    // ok-neighbour's lease ran out after the fixture's capture; renew it so
    // that `r` meets a live lease whenever this runs.
    let later = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 86_400;
    rusqlite::Connection::open(&path)
        .expect("open the copy")
        .execute(
            "UPDATE leases SET expires_at = ?1 WHERE instance = 'ok-neighbour'",
            [i64::try_from(later).expect("time")],
        )
        .expect("renew ok-neighbour");
    let pwned = std::path::Path::new("/tmp/stackless-tui-pwned-a");
    let pwned_before = pwned.exists();
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 120, 40);
    // Every pane that shows store text has drawn: all 7 names in Instances,
    // the hostile last_error's row in Backoffs.
    tui.wait_until("the 7 instances and the backoff", UI, |s| {
        harness::instance_rows(s).len() == 7
            && pane(s, "Backoffs").is_some_and(|p| p.iter().any(|l| l.contains("ok-neighbour")))
    });
    // Each hostile string is drawn as visible placeholders (the rest of the
    // frame is already in the PTY: a short wait).
    let drawn = tui.poll_until(Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("reaper: off (--no-reaper)")
            && find_row(s, "evil␛[2J␛]0;pwned␇").is_some_and(|r| r.contains(" active "))
            && find_row(s, "x;").is_some_and(|r| r.contains("x; touch /tmp/stackless-tui-pwned-a"))
            && pane(s, "Backoffs").is_some_and(|p| {
                p.iter().any(|l| {
                    l.contains("ok-neighbour") && l.contains("line one␊line two␛[31mRED␛[0m␍␀")
                })
            })
    });
    assert_inert(&tui.raw(), &tui.contents());
    if drawn.is_none() {
        panic!(
            "the hostile strings are not drawn as placeholders:\n{}",
            tui.contents()
        );
    }
    // U+202E becomes U+FFFD, which vt100 declines to draw: look at the bytes.
    assert!(
        contains(&tui.raw(), "bidi-\u{fffd}evil".as_bytes()),
        "the bidi override was not replaced by U+FFFD"
    );

    // The keys refuse a name that is not DNS-safe; nothing is run.
    tui.select("x;");
    tui.send("r");
    tui.wait_in_pane(
        "Activity",
        "operator x; touch /tmp/stackless-tui-pwned-a refused: not a DNS-safe name",
        UI,
    );
    tui.send("d");
    let activity = tui.wait_in_pane(
        "Activity",
        "x2 operator x; touch /tmp/stackless-tui-pwned-a refused: not a DNS-safe name",
        UI,
    );
    assert!(
        !activity.iter().any(|l| l.contains("tearing down")),
        "{activity:#?}"
    );
    assert!(!tui.contents().contains("Confirm teardown"));
    // The well-behaved neighbour still works (its lease has time left, so
    // `r` is refused for that reason, not for its name).
    tui.select("ok-neighbour");
    tui.send("r");
    tui.wait_in_pane(
        "Activity",
        "operator ok-neighbour refused: lease has not expired (use d to tear down)",
        UI,
    );
    quit(&mut tui);
    // Nothing raw in the whole session either.
    assert_inert(&tui.raw(), "(after exit)");
    if !pwned_before {
        assert!(!pwned.exists(), "a store name was run as a shell command");
    }
}

/// `--read-only`: no reaper, `r` and `d` refused with the reason, and the
/// store file byte-for-byte unchanged.
#[test]
fn read_only_refuses_writes_and_changes_nothing() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let before = std::fs::read(&path).expect("read store");
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--read-only"], 120, 40);
    tui.wait_for_all(
        &["reaper: off (read-only); nobody reaps now  │  helper: none"],
        UI,
    );
    // golf's lease expired long ago: in a writable store `r` would reap it.
    tui.wait_until("the fixture's instances", UI, |s| {
        harness::instance_rows(s).iter().any(|(_, n)| n == "golf")
    });
    tui.select("golf");
    tui.send("r");
    let refusal =
        "operator golf refused: the store is open read-only (--read-only): r, d, L and v are off";
    let activity = tui.wait_in_pane("Activity", refusal, UI);
    assert!(
        !activity.iter().any(|l| l.contains("tearing down")),
        "{activity:#?}"
    );
    // `d` is refused the same way (folded into the same line), no dialog.
    tui.send("d");
    tui.wait_in_pane("Activity", &format!("x2 {refusal}"), UI);
    assert!(!tui.contents().contains("Confirm teardown"));
    quit(&mut tui);
    let after = std::fs::read(&path).expect("read store");
    assert!(
        before == after,
        "the read-only console changed the store file"
    );
}
