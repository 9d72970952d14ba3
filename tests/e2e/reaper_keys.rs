//! `P` and `R` through the real binary in a pseudo-terminal: the header's
//! schedule and last pass, a pass at once on `R` (an instance expired
//! behind the console's back is reaped long before the 1 h tick), and `P`
//! pausing and resuming, said in the header; `z` zooming the focused pane.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{fixture, tombstone_on_success, unix_now};
use crate::harness::{Tui, UI, utf8};

/// A `down` that tombstones the instance (as stackless does) and logs it.
fn down(dir: &Path) -> String {
    let script = dir.join("down.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nNAME=\"$2\"\n{}\necho \"$2\" >> '{}'\nexit 0\n",
            tombstone_on_success(&dir.join("state.db")),
            dir.join("calls.log").display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{} down {{name}} --json", script.display())
}

#[test]
fn r_runs_a_pass_at_once_and_p_pauses_and_resumes() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = down(dir.path());
    // Nothing expired at first: the first pass reaps nothing.
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute("UPDATE leases SET expires_at = ?1", [unix_now() + 86_400])
        .expect("renew every lease");
    crate::common::young_tombstones(&path);
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1h", "--down-cmd", &down],
        120,
        40,
    );
    tui.wait_for("schema v4", UI);
    tui.wait_for("reaper: every 1h  │  next pass in 59m 5", UI);
    tui.wait_for("· last: 0 reaped, 0 failed, 0 skipped  │  helper: none", UI);

    // bravo expires behind the console's back; R reaps it now, not in an
    // hour.
    conn.execute(
        "UPDATE leases SET expires_at = ?1 WHERE instance = 'bravo'",
        [unix_now() - 10],
    )
    .expect("expire bravo");
    let asked = Instant::now();
    tui.send("R");
    tui.wait_for("[info] reaper pass asked for: it runs now", UI);
    tui.wait_for("· last: 1 reaped, 0 failed, 0 skipped  │", UI);
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    let calls = std::fs::read_to_string(dir.path().join("calls.log")).unwrap_or_default();
    assert_eq!(calls, "bravo\n");

    // P: paused, in the header; no countdown while paused.
    tui.send("P");
    let screen = tui.wait_for("reaper: paused (P resumes)  │  helper: none", UI);
    assert!(!screen.contains("next pass in"), "{screen}");
    // R while paused runs nothing.
    tui.send("R");
    tui.wait_for(
        "[warn] the reaper is paused: P resumes it (and runs a pass)",
        UI,
    );
    // The footer says so once the flash is gone.
    tui.wait_for("(reaper paused: P resumes)", UI);
    // P again: resumed, a pass at once, the countdown back.
    tui.send("P");
    tui.wait_for("reaper: every 1h  │  next pass in 59m 5", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
}

#[test]
fn z_zooms_the_focused_pane_and_back() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--no-reaper", "--read-only"],
        100,
        30,
    );
    tui.wait_for("schema v4", UI);
    tui.wait_for("golf", UI);
    assert!(tui.contents().contains("Backoffs (1)"));
    tui.send("z");
    tui.wait_until("Instances zoomed", UI, |s| {
        let text = s.contents();
        text.contains("Instances") && !text.contains("Backoffs") && !text.contains("Activity")
    });
    // Every instance row fits, the 40-character auto name whole.
    let screen = tui.contents();
    assert!(
        screen.contains("duo-79882653-fd55-4b17-bf19-d4afc89a2b5e "),
        "{screen}"
    );
    // Tab: the zoom follows the focus.
    tui.send("\t");
    tui.wait_until("Backoffs zoomed", UI, |s| {
        let text = s.contents();
        text.contains("Backoffs (1)") && !text.contains("Instances")
    });
    tui.send("z");
    tui.wait_until("back to every pane", UI, |s| {
        let text = s.contents();
        text.contains("Instances") && text.contains("Backoffs (1)") && text.contains("Activity")
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
}
