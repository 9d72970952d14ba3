//! End-to-end operator flows in a pseudo-terminal: filter, detail view and
//! back, and a mouse click selecting a row.

use std::time::Duration;

use crate::common::fixture;
use crate::harness::{Tui, UI, selected_instance, utf8};

const QUIT: Duration = Duration::from_secs(10);

#[test]
fn filter_then_enter_then_esc() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 120, 40);
    tui.wait_for("schema v4", UI);
    tui.wait_for("golf", UI);
    tui.send("/");
    tui.send("gol");
    tui.wait_for("1/1 match \"gol\" (filtered from 8)", UI);
    let screen = tui.contents();
    assert!(!screen.contains("alpha"), "filtered out:\n{screen}");
    tui.send("\r"); // keep the filter
    tui.send("\r"); // open the detail view of the only match
    tui.wait_for("Checkpoints (", UI);
    let detail = tui.contents();
    assert!(detail.contains("Reap attempt"), "{detail}");
    assert!(detail.contains("Esc back"), "{detail}");
    tui.send("\x1b"); // back
    tui.wait_for("1/1 match \"gol\" (filtered from 8)", UI);
    tui.send("\x1b"); // clear the filter
    tui.wait_until("the filter is cleared", UI, |s| {
        let text = s.contents();
        text.contains("alpha") && !text.contains("match \"gol\"")
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn a_mouse_click_selects_the_row_under_it() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 120, 40);
    tui.wait_for("hotel", UI);
    let screen = tui.screen();
    let (row, _) = screen
        .contents()
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains(" hotel "))
        .expect("hotel's row");
    assert_ne!(selected_instance(&screen).as_deref(), Some("hotel"));
    // SGR mouse: left press and release at column 10 of that row (1-based).
    let y = row + 1;
    tui.send(format!("\x1b[<0;10;{y}M\x1b[<0;10;{y}m"));
    tui.wait_until("hotel is selected by the click", UI, |s| {
        selected_instance(s).as_deref() == Some("hotel")
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

/// The console creates the store at stackless's default path where stackless
/// would (nothing there, no `--read-only`), and says so in its Activity
/// pane.
#[test]
fn the_console_says_it_created_the_default_store() {
    let mut tui = Tui::spawn(&["--no-reaper"], 200, 40);
    let path = tui.home().join("state/stackless/state.db");
    let line = format!(
        "operator store: no store at {}: created an empty one, as stackless would",
        path.display()
    );
    let activity = tui.wait_in_pane("Activity", "created an empty one", UI);
    assert!(
        activity.iter().any(|l| l.trim_end().ends_with(&line)),
        "{activity:#?}"
    );
    assert!(path.exists());
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}
