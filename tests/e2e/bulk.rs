//! End-to-end (the real binary in a pseudo-terminal): marks and a bulk `r`
//! with a refused member, command mode, field filters, and `y`/`Y` copying
//! through OSC 52 (the exact bytes read from the PTY), also `y` on a detail
//! field.

use std::time::Duration;

use crate::common::stores::exec;
use crate::common::{argv_log, fake_down, fixture};
use crate::harness::{Tui, UI, contains, selected_instance, utf8};

const QUIT: Duration = Duration::from_secs(10);

/// The real v4 store with echo's lock moved to another host (held: `r`
/// refuses it) and a fake `down` that logs its argv and exits 0.
fn console(extra: &[&str]) -> (tempfile::TempDir, Tui, String) {
    let (dir, path) = fixture("stackless-real-v4.db");
    exec(
        &path,
        "UPDATE op_locks SET holder_host = 'elsewhere' WHERE instance = 'echo';",
    );
    fake_down(dir.path(), "exit 0");
    let script = dir.path().join("fake-down.sh");
    let down = format!("{} down {{name}} --json", script.display());
    let mut args = vec!["--state", utf8(&path), "--no-reaper", "--down-cmd", &down];
    args.extend_from_slice(extra);
    let tui = Tui::spawn(&args, 120, 40);
    let script = script.display().to_string();
    (dir, tui, script)
}

#[test]
fn marks_and_bulk_r_list_the_refused_member() {
    let (dir, mut tui, _) = console(&["--reap-concurrency", "1"]);
    tui.wait_for("golf", UI);
    tui.send(":sort name\r");
    tui.wait_for("NAME▲", UI);
    tui.send("g ");
    tui.send("j ");
    tui.send(":echo\r");
    tui.wait_until("echo selected", UI, |s| {
        selected_instance(s).as_deref() == Some("echo")
    });
    tui.send(" ");
    tui.wait_for("3 marked", UI);
    let screen = tui.contents();
    assert!(screen.contains("● alpha"), "{screen}");
    assert!(screen.contains("● bravo"), "{screen}");
    assert!(screen.contains("● echo"), "{screen}");
    tui.send("r");
    // The refused member is named before `y`, with why.
    tui.wait_for(
        "Reap 2 of 3 marked instances (alpha, bravo, echo)? Refused, not run: echo: locked (foreign host). [y/N]",
        UI,
    );
    tui.send("y");
    tui.wait_for("locked (foreign host)", UI);
    let ran = tui.poll_until(UI, |_| argv_log(dir.path()).len() == 2);
    assert!(ran.is_some(), "{:?}", argv_log(dir.path()));
    let mut ran = argv_log(dir.path());
    ran.sort();
    assert!(ran[0].contains("[down][alpha][--json]"), "{ran:?}");
    assert!(ran[1].contains("[down][bravo][--json]"), "{ran:?}");
    let screen = tui.contents();
    assert!(!screen.contains("3 marked"), "marks cleared:\n{screen}");
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn commands_and_field_filters() {
    let (_dir, mut tui, _) = console(&[]);
    tui.wait_for("golf", UI);
    tui.send("/status:tombstoned\r");
    tui.wait_for("1/2 match \"status:tombstoned\" (filtered from 8)", UI);
    tui.send("\x1b");
    tui.wait_for("filter cleared", UI);
    tui.wait_gone("match \"status:tombstoned\"", UI);
    tui.send(":filter lock:held !substrate:render\r");
    tui.wait_for(
        "1/1 match \"lock:held !substrate:render\" (filtered from 8)",
        UI,
    );
    assert!(tui.contents().contains(" echo "));
    tui.send(":filter\r");
    tui.send(":sort reap desc\r");
    tui.wait_for("REAP▼", UI);
    tui.send(":pause\r");
    // This console runs no reaper (--no-reaper): `:pause` says so, as `P` does.
    tui.wait_for("the reaper does not run in this console", UI);
    tui.send(":down Bad_Name\r");
    tui.wait_for("\"Bad_Name\" is not a DNS-safe name", UI);
    tui.send(":re\t");
    tui.wait_for(":reap▏  [reap] renew resume", UI);
    tui.send("\x1b");
    tui.wait_gone(":reap▏", UI);
    tui.send(":q\r");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn y_copies_the_name_and_capital_y_the_down_command_through_osc_52() {
    let (_dir, mut tui, script) = console(&[]);
    tui.wait_for("golf", UI);
    tui.send(":golf\r");
    tui.wait_until("golf selected", UI, |s| {
        selected_instance(s).as_deref() == Some("golf")
    });
    tui.send("y");
    // A copy is "sent", not "copied" (the terminal may drop OSC 52); how to
    // allow it is said with the first copy.
    tui.wait_for(
        "OSC 52 sent; not pasted? allow clipboard access (OSC 52) in the terminal · golf",
        UI,
    );
    assert!(
        contains(&tui.raw(), b"\x1b]52;c;Z29sZg==\x07"),
        "no OSC 52 for golf"
    );
    tui.send("Y");
    tui.wait_until("the down command sent", UI, |s| {
        let text = s.contents();
        text.contains("(OSC 52): ") && !text.contains("(OSC 52): golf")
    });
    let line = format!("{script} down golf --json");
    let expected = format!(
        "\x1b]52;c;{}\x07",
        stackless_tui::ui::clipboard::base64(line.as_bytes())
    );
    assert!(
        contains(&tui.raw(), expected.as_bytes()),
        "no OSC 52 for {line}"
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn y_in_the_detail_view_copies_the_field_under_the_cursor_through_osc_52() {
    // --utc: the copied time does not depend on the machine's zone.
    let (_dir, mut tui, _) = console(&["--utc"]);
    tui.wait_for("golf", UI);
    tui.send(":golf\r");
    tui.wait_until("golf selected", UI, |s| {
        selected_instance(s).as_deref() == Some("golf")
    });
    tui.send("\r");
    tui.wait_for("▶ name", UI);
    let mut moves = 0;
    while !tui.contents().contains("▶ expires_at") {
        tui.send("j");
        moves += 1;
        assert!(moves < 20, "no expires_at field:\n{}", tui.contents());
        std::thread::sleep(Duration::from_millis(100));
    }
    tui.send("y");
    // golf's lease (the fixture): expires_at 1795960354.
    tui.wait_for(
        "OSC 52 sent; not pasted? allow clipboard access (OSC 52) in the terminal · lease expires_at: 2026-11-29T13:52:34Z",
        UI,
    );
    assert!(
        contains(&tui.raw(), b"\x1b]52;c;MjAyNi0xMS0yOVQxMzo1MjozNFo=\x07"),
        "no OSC 52 for the expires_at field"
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn log_times_are_local_with_the_zone_named_and_utc_with_the_flag() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let args = ["--state", utf8(&path), "--no-reaper"];
    let tz = [("TZ", "CET-1CEST,M3.5.0,M10.5.0/3")];
    let mut tui = Tui::spawn_env(&args, &tz, 120, 40);
    tui.wait_for("Activity (CET)", UI);
    tui.wait_for("Supervisor (CET)", UI);
    // The detail view: golf's lease (expires_at 1795960354) in CET.
    tui.send(":golf\r");
    tui.wait_until("golf selected", UI, |s| {
        selected_instance(s).as_deref() == Some("golf")
    });
    tui.send("\r");
    tui.wait_for("expires_at       2026-11-29 14:52:34 CET (expired", UI);
    tui.wait_for("materialize:web  source  2026-11-29 14:51:34 CET", UI);
    // The full text of the detail view.
    tui.send("e");
    tui.wait_for("Detail · golf", UI);
    tui.wait_for("2026-11-29 14:52:34 CET", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    let mut args = args.to_vec();
    args.push("--utc");
    let mut tui = Tui::spawn_env(&args, &tz, 120, 40);
    tui.wait_for("Activity (UTC)", UI);
    tui.send(":golf\r");
    tui.wait_until("golf selected", UI, |s| {
        selected_instance(s).as_deref() == Some("golf")
    });
    tui.send("\r");
    tui.wait_for("expires_at       2026-11-29T13:52:34Z (expired", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}
