//! Who reaps a store beside the real stackless 0.4.0: the console's reaper
//! stands by while an Operator controller runs its lease reaper, takes over
//! beside an embedded one (which has none), and a paused console gives its
//! role up so that `reap --once` from another shell reaps the expired lease
//! through the real `down`.

use std::time::Duration;

use stackless_tui::controller::probe::probe;

use crate::harness::{Role, Stack, WAIT, unix_now, wait_until};
use crate::pty::{Tui, UI};

/// The lease's `expires_at` as stored.
fn expires_at(stack: &Stack, name: &str) -> i64 {
    stack
        .db()
        .query_row(
            "SELECT expires_at FROM leases WHERE instance = ?1",
            [name],
            |r| r.get(0),
        )
        .expect("lease")
}

/// `--down-cmd` for the console: the real `down` of this stack's embedded
/// controller.
fn down_cmd(stack: &Stack) -> String {
    stack.down_command().template().join(" ")
}

#[test]
fn beside_an_operator_controller_the_console_stands_by() {
    let stack = Stack::new(Role::Operator);
    stack.up("long", "1h").expect_code(0);
    let pid = stack.controller_pid().expect("the controller runs");
    // Learnt as `stackless controller` learns it: the controller says so.
    let state = probe(&stack.state_dir());
    assert_eq!((state.pid, state.lease_reaper), (Some(pid), Some(true)));

    let db = stack.db_path().display().to_string();
    let out = stack.tui(&[
        "--state",
        &db,
        "--down-cmd",
        "true {name}",
        "reap",
        "--once",
    ]);
    assert_eq!(out.code, Some(0));
    assert_eq!(
        out.stdout.clone(),
        format!(
            "the stackless controller (pid {pid}) runs its lease reaper and reaps this store; nothing done (--reaper always reaps here too)\n"
        )
    );

    let mut tui = Tui::spawn(&["--state", &db, "--down-cmd", "true {name}"], 200, 40);
    tui.wait_for(
        &format!("reaper: the controller reaps (pid {pid}); standing by"),
        UI,
    );
    tui.wait_for(
        &format!("standby: the stackless controller (pid {pid}) runs its lease reaper"),
        UI,
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
    stack.shutdown();
}

#[test]
fn beside_an_embedded_controller_the_console_reaps_and_a_pause_gives_way() {
    let stack = Stack::new(Role::Embedded);
    stack.up("short", "15s").expect_code(0);
    let expires = expires_at(&stack, "short");
    let pid = stack.controller_pid().expect("the controller runs");
    let state = probe(&stack.state_dir());
    assert_eq!((state.pid, state.lease_reaper), (Some(pid), Some(false)));

    let db = stack.db_path().display().to_string();
    let down = down_cmd(&stack);
    let mut tui = Tui::spawn(
        &[
            "--state",
            &db,
            "--tick",
            "1h",
            "--down-cmd",
            &down,
            "--down-timeout",
            "180s",
        ],
        200,
        40,
    );
    // Nobody else reaps: the console does, and the header says why.
    tui.wait_for(
        &format!("controller: pid {pid}, no lease reaper (embedded)"),
        UI,
    );
    tui.wait_for("reaper: every 1h", UI);
    // P gives the role up: nobody reaps now, and the header says so.
    tui.send("P");
    tui.wait_for("reaper: paused (P resumes); nobody reaps now", UI);
    wait_until("the lease to expire", WAIT, || {
        (unix_now() > expires).then_some(())
    });
    // reap --once from another shell is not blocked by the paused console.
    let out = stack.tui(&[
        "--state",
        &db,
        "--down-cmd",
        &down,
        "--down-timeout",
        "180s",
        "reap",
        "--once",
    ]);
    let stdout = out.stdout.clone();
    assert_eq!(out.code, Some(0), "{stdout}{}", out.stderr.clone());
    assert!(
        stdout.contains("reaper short reaped: down succeeded"),
        "{stdout}"
    );
    let status: String = stack
        .db()
        .query_row(
            "SELECT status FROM instances WHERE name = 'short'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(status, "tombstoned");
    // P again: the role is free, so the console reaps again.
    tui.send("P");
    tui.wait_for("reaper: every 1h", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
    stack.shutdown();
}
