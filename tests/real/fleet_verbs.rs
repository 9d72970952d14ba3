//! `L` and `v` in the fleet view on a real stackless 0.4.0 host: the
//! console over two hosts behind the real sshd the tests start
//! ([`crate::sshd`]), `fleet-1` a copy of the 0.4.0 fixture, `fleet-2` a
//! real store with a real embedded controller ([`Stack`]). Each host's
//! agent (`serve --stdio`, started by `ssh -T`) runs the verb there with
//! the `--stackless` the console passes on; the store shows what it did
//! (`leases.expires_at`) and so does the screen.

use std::path::Path;
use std::time::Duration;

use crate::harness::{Role, Stack, unix_now};
use crate::pty::{BIN, Tui, UI, pane, utf8};
use crate::renew::{lease, next_second, program, verify_app};
use crate::sshd::Sshd;

/// How long a verb run on the real host may take to show (a renew
/// resumes the instance: its health gate through the proxy).
const RUN: Duration = Duration::from_secs(120);

/// The Instances pane's rows as `(host, name)`, in screen order.
fn instance_rows(screen: &vt100::Screen) -> Vec<(String, String)> {
    pane(screen, "Instances")
        .unwrap_or_default()
        .iter()
        .filter_map(|line| {
            let mut words = line.trim_start_matches('▶').split_whitespace();
            let (host, name) = (words.next()?, words.next()?);
            (host != "HOST").then(|| (host.to_owned(), name.to_owned()))
        })
        .collect()
}

/// The lease left on fleet-2's `checked` row (`9m 58s left`), in seconds.
fn row_lease(screen: &vt100::Screen) -> Option<i64> {
    let lines = pane(screen, "Instances")?;
    let line = lines.iter().find(|l| l.contains("fleet-2 checked "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let from = words.iter().position(|w| *w == "active")? + 1;
    let to = words.iter().position(|w| *w == "left")?;
    words.get(from..to)?.iter().try_fold(0, |total, word| {
        let (number, unit) = word.split_at(word.len().checked_sub(1)?);
        let number: i64 = number.parse().ok()?;
        let unit = match unit {
            "h" => 3600,
            "m" => 60,
            "s" => 1,
            _ => return None,
        };
        Some(total + number * unit)
    })
}

/// The Activity pane's lines, newest first, their time (`08:11:36`) left
/// out.
/// `10m 00s` or `9m 58s` as seconds.
fn countdown_secs(text: &str) -> Option<i64> {
    let (m, s) = text.split_once("m ")?;
    Some(m.parse::<i64>().ok()? * 60 + s.strip_suffix('s')?.parse::<i64>().ok()?)
}

fn activity(screen: &vt100::Screen) -> Vec<String> {
    pane(screen, "Activity")
        .unwrap_or_default()
        .iter()
        .filter_map(|line| {
            let line = line.trim();
            let (time, rest) = line.split_once(' ')?;
            (time.len() == 8 && time.as_bytes()[2] == b':').then(|| rest.trim().to_owned())
        })
        .collect()
}

/// The screen's last line (the flash line), trimmed.
fn flash(screen: &vt100::Screen) -> String {
    screen
        .contents()
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Every lease of the store at `path`: `(instance, expires_at)`, by name.
fn leases(path: &Path) -> Vec<(String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the fixture");
    let mut stmt = conn
        .prepare("SELECT instance, expires_at FROM leases ORDER BY instance")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// `text` with the boxes' borders gone and every run of whitespace one
/// space: a question wrapped over the dialog's lines reads as one line.
fn words(text: &str) -> String {
    text.replace(['║', '│'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The console over `fleet-1` (`fixture`) and `fleet-2` (`stack`'s
/// store), reaching both through `sshd`, the verbs run with `program`,
/// no reaper; shown once both are connected.
fn console(sshd: &Sshd, fixture: &Path, stack: &Stack, program: &str, empty: &Path) -> Tui {
    let db = stack.db_path();
    let config = sshd.fleet_config(&[("fleet-1", fixture, false), ("fleet-2", &db, false)]);
    let args = [
        "--controller",
        "ssh://fleet-1",
        "--controller",
        "ssh://fleet-2",
        "--ssh-config",
        utf8(&config),
        "--remote-bin",
        BIN,
        "--config",
        utf8(empty),
        "--no-reaper",
        "--stackless",
        program,
    ];
    let mut tui = Tui::spawn(&args, 120, 50);
    tui.wait_for(
        "stackless-tui fleet: 2 hosts · 2 connected · 9 instances",
        UI,
    );
    tui
}

/// On a real 0.4.0 host in the fleet view: `L` on `checked` asks to
/// renew it there at its recorded 10m, naming the host and the exact
/// argv; `y` runs it on fleet-2, whose store's lease moves (the same
/// 600 s, a later expiry) and the Activity pane says so; `v` asks to
/// verify it there, and `y` runs its `[stack.verify]` check, which
/// passes and renews the lease again.
#[test]
fn l_and_v_on_a_real_host_renew_and_verify_there() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let stack = Stack::new(Role::Embedded);
    let marker = verify_app(&stack);
    stack
        .up_app("checked", "10m", "verified", &[])
        .expect_code(0);
    std::fs::write(&marker, "").expect("marker");
    let program = program(&stack);
    let (fixture_dir, fixture) = crate::common::fixture("real-0.4.0-v14.db");
    let empty = fixture_dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let (duration, set) = lease(&stack, "checked");
    assert_eq!(duration, 600);
    let fixture_leases = leases(&fixture);

    let mut tui = console(&sshd, &fixture, &stack, &program, &empty);
    tui.send("/host:fleet-2 checked\r");
    tui.wait_until("fleet-2's checked alone", UI, |screen| {
        instance_rows(screen) == [("fleet-2".to_owned(), "checked".to_owned())]
    });
    // Two seconds after the lease was set (its countdown says so), so the
    // renewed one is told apart on screen and in the store.
    let shown = tui.wait_until("the countdown under 9m 59s", UI, |screen| {
        row_lease(screen).is_some_and(|left| left <= 598)
    });
    println!("before L:\n{}", shown.contents());

    tui.send("L");
    let question = format!(
        "Renew the lease of checked on fleet-2 to 10m (as recorded)? This runs there: \
         {program} up --name checked --lease 10m --json [y/N]"
    );
    let asked = tui.wait_until("the renew question", UI, |screen| {
        words(&screen.contents()).contains(&question)
    });
    println!("L:\n{}", asked.contents());
    let before = unix_now();
    tui.send("y");
    // The controller's own line about the `up` may come before or after
    // the operator's: any line of the pane.
    let renewed_prefix = "fleet-2 operator checked lease renewed: 10m, expires in ";
    let renewed = tui.wait_until("the renew's activity", RUN, |screen| {
        activity(screen)
            .iter()
            .any(|line| line.starts_with(renewed_prefix))
    });
    println!("after y:\n{}", renewed.contents());
    let after = unix_now();
    let (duration, renewed_at) = lease(&stack, "checked");
    assert_eq!(duration, 600);
    assert!(
        (before + 600..=after + 600).contains(&renewed_at),
        "{before} {renewed_at} {after}"
    );
    assert!(renewed_at > set, "{set} -> {renewed_at}");
    let lines = activity(&renewed);
    let left = lines
        .iter()
        .find_map(|line| line.strip_prefix(renewed_prefix))
        .and_then(countdown_secs);
    // Counted from the reply, a few seconds after the store's write on a
    // busy machine at most.
    assert!(
        left.is_some_and(|secs| (590..=600).contains(&secs)),
        "{lines:?}"
    );
    // The flash, while it is shown (it clears after 4 s: then the footer's
    // keys are the last line).
    let said = flash(&renewed);
    assert!(
        !said.starts_with('[') || said == "[info] fleet-2: renew requested for checked",
        "{said}"
    );
    // The row shows the store's new expiry: its countdown jumped back.
    tui.wait_until("the row's countdown at the renewed lease", UI, |screen| {
        row_lease(screen).is_some_and(|left| (left - (renewed_at - unix_now())).abs() <= 1)
    });

    // A second after the renewal, so the verify's renewal shows.
    next_second(renewed_at - duration);
    tui.send("v");
    let question = format!(
        "Verify checked on fleet-2? This runs there: {program} verify checked --json \
         (it renews the lease when it starts) [y/N]"
    );
    let asked = tui.wait_until("the verify question", UI, |screen| {
        words(&screen.contents()).contains(&question)
    });
    println!("v:\n{}", asked.contents());
    tui.send("y");
    let verified_prefix = "fleet-2 operator checked verified: ";
    let verified = tui.wait_until("the verify's activity", RUN, |screen| {
        activity(screen)
            .iter()
            .any(|line| line.starts_with(verified_prefix))
    });
    println!("after y:\n{}", verified.contents());
    let line = activity(&verified)
        .into_iter()
        .find(|line| line.starts_with(verified_prefix))
        .unwrap_or_default();
    let ms = line
        .strip_prefix("fleet-2 operator checked verified: default check passed (exit 0, ")
        .and_then(|rest| rest.split_once(" ms); lease renewed: "));
    assert!(
        ms.is_some_and(|(ms, left)| ms.parse::<u64>().is_ok()
            && left
                .strip_suffix(" left")
                .and_then(countdown_secs)
                .is_some_and(|secs| (590..=600).contains(&secs))),
        "{line}"
    );
    let said = flash(&verified);
    assert!(
        !said.starts_with('[') || said == "[info] fleet-2: verify requested for checked",
        "{said}"
    );
    let (duration, verified_at) = lease(&stack, "checked");
    assert_eq!(duration, 600);
    assert!(verified_at > renewed_at, "{renewed_at} -> {verified_at}");
    // Nothing ran on fleet-1.
    assert_eq!(leases(&fixture), fixture_leases);

    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    stack.shutdown();
    drop(sshd);
}
