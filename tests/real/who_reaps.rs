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
    // The metrics say who reaps as the table does, of the real 0.4.0 store.
    let out = stack.tui(&["--state", &db, "snapshot", "--format", "openmetrics"]);
    assert_eq!(out.code, Some(0));
    for line in [
        "\nstackless_store_up 1\n",
        "\nstackless_store_schema_version 14\n",
        "\nstackless_instances{status=\"active\",substrate=\"local\"} 1\n",
        "\nstackless_reaper_info{by=\"controller\"} 1\n",
    ] {
        assert!(out.stdout.contains(line), "{line} in\n{}", out.stdout);
    }
    assert!(out.stdout.ends_with("\n# EOF\n"), "{}", out.stdout);

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

/// The console's teardown beside an Operator controller: a wrapper that
/// logs `start NAME` to `<root>/calls.log` and runs the real `down NAME
/// --json` with the stack's env (no flags: an Operator controller starts
/// when none runs, with its lease reaper).
fn operator_down(stack: &Stack) -> String {
    let script = stack.root().join("operator-down.sh");
    let root = stack.root().display().to_string();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             export HOME='{root}' XDG_STATE_HOME='{root}' XDG_CONFIG_HOME='{root}/config' \
             STACKLESS_PROXY_PORT='{port}' STACKLESS_NO_SELF_UPDATE=1 STACKLESS_BIN='{bin}'\n\
             echo \"start $2\" >> '{root}/calls.log'\n\
             exec '{bin}' down \"$2\" --json\n",
            port = stack.port,
            bin = crate::harness::real_stackless().display(),
        ),
    )
    .expect("wrapper");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{} down {{name}} --json", script.display())
}

/// How many `down` operations the store holds for each of `names`.
fn downs(stack: &Stack, names: &[String]) -> Vec<i64> {
    let db = stack.db();
    names
        .iter()
        .map(|name| {
            db.query_row(
                "SELECT count(*) FROM operations WHERE verb = 'down' AND instance = ?1",
                [name],
                |r| r.get(0),
            )
            .expect("count")
        })
        .collect()
}

/// The rounds of [`expiries_with_controller_stops`]: 1 in `cargo test`,
/// `STACKLESS_TUI_HANDOVER_ROUNDS` for the measurement (RELIABILITY.md).
fn rounds() -> usize {
    std::env::var("STACKLESS_TUI_HANDOVER_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Beside an Operator controller that is stopped while leases run out:
/// the console takes over and reaps; its first `down` starts the
/// controller again, whose lease reaper reaps the rest. The console asks
/// who reaps before each teardown, so it runs exactly one `down` a round
/// and the instances it did not tear down get exactly one `down`
/// operation each (the controller's). The `down` of the instance the
/// console tore down races the new controller's first pass inside
/// stackless itself: counted and printed, the figure in RELIABILITY.md.
#[test]
fn expiries_with_controller_stops_get_one_down_each_from_the_console() {
    let stack = Stack::new(Role::Operator);
    let db = stack.db_path().display().to_string();
    let down = operator_down(&stack);
    let args = [
        "--state",
        db.as_str(),
        "--tick",
        "2s",
        // Two slots (the default): the first `down` must still run alone,
        // as it starts the controller.
        "--reap-concurrency",
        "2",
        "--down-cmd",
        down.as_str(),
        "--down-timeout",
        "180s",
    ];
    let mut tui: Option<Tui> = None;
    let mut console_downs = Vec::new();
    let mut doubles = 0;
    let mut expiries = 0;
    for round in 0..rounds() {
        let names: Vec<String> = (0..3).map(|i| format!("r{round}-{i}")).collect();
        for name in &names {
            stack.write_app(name, None);
            stack.up_app(name, "6s", name, &[]).expect_code(0);
        }
        let last = expires_at(&stack, &names[2]);
        // The console once the store exists; it stands by while the
        // controller (started by `up`) reaps.
        let tui = tui.get_or_insert_with(|| Tui::spawn(&args, 200, 40));
        tui.wait_for("standing by", UI);
        stack.stop_controller();
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        loop {
            let active: i64 = stack
                .db()
                .query_row(
                    "SELECT count(*) FROM instances WHERE status = 'active' AND name LIKE ?1",
                    [format!("r{round}-%")],
                    |r| r.get(0),
                )
                .expect("count");
            if unix_now() > last && active == 0 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: {active} still active; calls {:?}; screen:\n{}",
                std::fs::read_to_string(stack.root().join("calls.log")).unwrap_or_default(),
                tui.screen().contents()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        let calls = std::fs::read_to_string(stack.root().join("calls.log")).unwrap_or_default();
        let ran: Vec<&str> = calls
            .lines()
            .filter_map(|l| l.strip_prefix("start "))
            .filter(|n| n.starts_with(&format!("r{round}-")))
            .collect();
        assert_eq!(ran.len(), 1, "the console's teardowns this round: {ran:?}");
        let counts = downs(&stack, &names);
        for (name, count) in names.iter().zip(&counts) {
            if name != ran[0] {
                assert_eq!(*count, 1, "{name}: {counts:?}");
            }
        }
        doubles += counts.iter().filter(|c| **c > 1).count();
        expiries += names.len();
        console_downs.push(ran[0].to_owned());
    }
    eprintln!(
        "handover: {expiries} expiries, {doubles} with two downs, console ran {}",
        console_downs.len()
    );
    let mut tui = tui.expect("the console ran");
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(30)), 0);
    stack.shutdown();
}

/// The controller's finished `down`s in the metrics are the ones the real
/// 0.4.0 store's `operations` table holds, by outcome.
#[test]
fn the_controller_s_downs_in_the_metrics_are_the_store_s() {
    let stack = Stack::new(Role::Operator);
    stack.up("gone", "1h").expect_code(0);
    stack.down("gone").expect_code(0);
    let db = stack.db_path().display().to_string();
    let out = stack.tui(&["--state", &db, "snapshot", "--format", "openmetrics"]);
    assert_eq!(out.code, Some(0));
    let conn = stack.db();
    let mut held = Vec::new();
    for outcome in ["succeeded", "failed"] {
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM operations WHERE verb = 'down' AND status = ?1",
                [outcome],
                |r| r.get(0),
            )
            .expect("count");
        let line = format!(
            "\nstackless_controller_teardowns{{actor=\"controller\",outcome=\"{outcome}\"}} {n}\n"
        );
        assert!(out.stdout.contains(&line), "{line} in\n{}", out.stdout);
        held.push(n);
    }
    assert_eq!(held, [1, 0]);
    stack.shutdown();
}
