//! The logs view in a pseudo-terminal, on the real binary: `l` on an
//! instance with a logs directory shows its lines, a line appended to the
//! file appears while the view follows; and the demo's own logs.

use std::io::Write as _;
use std::time::Duration;

use crate::common::fixture;
use crate::harness::{Tui, UI, utf8};

const QUIT: Duration = Duration::from_secs(10);

#[test]
fn l_shows_the_logs_and_follows_an_appended_line() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let logs = dir.path().join("logs/hotel");
    std::fs::create_dir_all(&logs).unwrap();
    let web = logs.join("web.log");
    let text: String = (1..=80)
        .map(|i| {
            format!(
                "2026-12-01T10:{:02}:{:02}Z web line {i:02}\n",
                i / 60,
                i % 60
            )
        })
        .collect();
    std::fs::write(&web, text).unwrap();
    // After web's last line: the all tab merges the tails by timestamp.
    std::fs::write(
        logs.join("worker.log"),
        "2026-12-01T10:01:30Z worker ready\n",
    )
    .unwrap();
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 120, 40);
    tui.wait_for("hotel", UI);
    tui.select("hotel");
    tui.send("l");
    tui.wait_for_all(
        &["Logs: hotel", "web line 80", "worker ready", "● following"],
        UI,
    );
    let mut file = std::fs::OpenOptions::new().append(true).open(&web).unwrap();
    file.write_all(b"2026-12-01T11:00:00Z appended while following\n")
        .unwrap();
    drop(file);
    tui.wait_for("appended while following", UI);
    // The web tab, scrolled back: paused; G follows again.
    tui.send("\t");
    tui.wait_for(" web ", UI);
    tui.send("kk");
    tui.wait_for("‖ paused", UI);
    tui.send("G");
    tui.wait_for("● following", UI);
    tui.send("\x1b");
    tui.wait_gone("Logs: hotel", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}

#[test]
fn the_demo_has_logs_that_grow() {
    let mut tui = Tui::spawn(&["--demo", "v4"], 120, 40);
    tui.wait_for("api-gateway-dev", UI);
    tui.select("api-gateway-dev");
    tui.send("l");
    tui.wait_for_all(
        &[
            "Logs: api-gateway-dev",
            " gateway ",
            " redis ",
            "● following",
        ],
        UI,
    );
    // The demo writer appends a line every 2 s: request 40 is the first.
    tui.wait_for("GET /v1/orders/40 200", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
}
