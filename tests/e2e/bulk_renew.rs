//! A bulk renew through the real binary in a pseudo-terminal, on a copy of
//! the real stackless 0.4.0 store: two marked instances recorded 10m and
//! 2h; `L` renews each at its own lease (the argv a fake `--stackless`
//! logs), and a typed 10m that would cut the 2h lease short asks for it
//! apart, where `n` leaves it alone.

use std::path::Path;

use crate::common::{fixture, unix_now};
use crate::harness::{Tui, UI, utf8};

/// A fake `stackless` that logs its argv (`[up][--name][alpha]...`) and
/// exits 0.
fn fake_stackless(dir: &Path) -> String {
    let script = dir.join("fake-stackless.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nline=''\nfor a in \"$@\"; do line=\"$line[$a]\"; done\nprintf '%s\\n' \"$line\" >> '{}'\nexit 0\n",
            dir.join("argv.log").display()
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// The open question's text, from its `Renew` on, its wrapped lines
/// joined by one space (the focused pane's double border is read too, so
/// the text before the question is dropped).
fn question(screen: &vt100::Screen) -> String {
    let joined = screen
        .contents()
        .lines()
        .filter_map(|l| l.strip_prefix('║'))
        .map(|l| l.trim_end_matches('║').trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    joined
        .find("Renew ")
        .map_or_else(String::new, |at| joined[at..].to_owned())
}

fn argv(dir: &Path) -> Vec<String> {
    crate::common::argv_log(dir)
}

#[test]
fn a_bulk_renew_keeps_each_lease_and_asks_a_shorter_one_apart() {
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let now = unix_now();
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.execute(
        "UPDATE leases SET duration_secs = 600, expires_at = ?1 WHERE instance = 'alpha'",
        [now + 590],
    )
    .expect("alpha 10m");
    conn.execute(
        "UPDATE leases SET duration_secs = 7200, expires_at = ?1 WHERE instance = 'hotel'",
        [now + 7_190],
    )
    .expect("hotel 2h");
    drop(conn);
    let program = fake_stackless(dir.path());
    let mut tui = Tui::spawn(
        &[
            "--state",
            utf8(&path),
            "--no-reaper",
            "--stackless",
            &program,
        ],
        120,
        40,
    );
    tui.wait_for("hotel", UI);
    tui.send(":alpha\r ");
    tui.send(":hotel\r ");
    tui.wait_for("2 marked", UI);
    tui.send("L");
    tui.wait_for(":renew alpha hotel", UI);
    tui.send("\r");
    let screen = tui.wait_until("the bulk question", UI, |s| question(s).contains("[y/N]"));
    let asked = question(&screen);
    assert!(
        asked.starts_with("Renew the leases of 2 instances (alpha, hotel)?"),
        "{asked}"
    );
    assert!(
        asked.contains("Each lease now -> after: alpha 9m "),
        "{asked}"
    );
    assert!(asked.contains(" -> 10m, hotel 1h 59m"), "{asked}");
    assert!(asked.contains(" -> 2h. This runs: "), "{asked}");
    assert!(!asked.contains("shorter"), "{asked}");
    tui.send("y");
    let logged = tui.poll_until(UI, |_| argv(dir.path()).len() == 2);
    assert!(logged.is_some(), "{:?}", argv(dir.path()));
    let mut ran = argv(dir.path());
    ran.sort();
    assert_eq!(
        ran,
        [
            "[up][--name][alpha][--lease][10m][--json]",
            "[up][--name][hotel][--lease][2h][--json]"
        ]
    );

    // One duration typed for both: hotel's lease would get shorter.
    tui.send(":renew alpha hotel 10m\r");
    // The new question, not the last one still drawn.
    let screen = tui.wait_until("alpha's question", UI, |s| {
        question(s).starts_with("Renew alpha's lease") && question(s).contains("[y/N]")
    });
    let asked = question(&screen);
    assert!(asked.starts_with("Renew alpha's lease for 10m?"), "{asked}");
    assert!(
        asked.contains("Shorter, asked apart after this y: hotel 1h 59m -> 10m (shorter)."),
        "{asked}"
    );
    tui.send("y");
    let screen = tui.wait_until("hotel's own question", UI, |s| {
        question(s).starts_with("Renew hotel's lease for 10m?")
    });
    let asked = question(&screen);
    assert!(
        asked.contains("then in 10m: shorter than what is left."),
        "{asked}"
    );
    tui.send("n");
    tui.wait_for("renew cancelled", UI);
    let logged = tui.poll_until(UI, |_| argv(dir.path()).len() == 3);
    assert!(logged.is_some(), "{:?}", argv(dir.path()));
    assert_eq!(
        argv(dir.path())[2],
        "[up][--name][alpha][--lease][10m][--json]"
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0);
    assert_eq!(argv(dir.path()).len(), 3, "{:?}", argv(dir.path()));
}
