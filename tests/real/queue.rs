//! Against the real stackless 0.4.0 and the console in a PTY: `d` on an
//! instance whose `up` is running queues a `down` behind it (`stackless down
//! NAME --no-wait --json`), the Operations pane shows it queued, and the
//! controller runs it after the `up`; the operation overlay lists every step
//! event of that real `up` in the order `stackless operation get ID --json`
//! gives them.

use std::time::Duration;

use stackless_tui::model::{OpStatus, Snapshot};
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::harness::{Role, Stack, WAIT, wait_until};
use crate::pty::{Tui, UI};

fn snapshot(stack: &Stack) -> Snapshot {
    Store::open(&stack.db_path(), Access::ReadOnly)
        .expect("open")
        .snapshot(&mut SysinfoProbe::new())
        .expect("snapshot")
}

/// `--stackless` for the console: the real CLI against this stack's
/// embedded controller (its `--state-dir` and `--proxy-port`).
fn stackless_program(stack: &Stack) -> String {
    let script = stack.root().join("sl.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' --state-dir '{}' --proxy-port {} \"$@\"\n",
            crate::harness::real_stackless().display(),
            stack.state_dir().display(),
            stack.port
        ),
    )
    .expect("write script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// `(event, step_id, index, total)` of every event of operation `id`, as
/// `stackless operation get ID --json` gives them.
fn cli_events(stack: &Stack, id: &str) -> Vec<(String, String, i64, i64)> {
    let out = stack.stackless(&["operation", "get", id, "--json"]);
    out.expect_code(0);
    let json = out.json();
    json["result"]["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            let e = &e["event"];
            (
                e["event"].as_str().unwrap_or_default().to_owned(),
                e["step_id"].as_str().unwrap_or_default().to_owned(),
                e["index"].as_i64().unwrap_or_default(),
                e["total"].as_i64().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn d_on_a_running_up_queues_a_down_that_runs_after_it_and_the_overlay_lists_every_step() {
    let stack = Stack::new(Role::Embedded);
    // An `up` that sleeps 8 s in its prepare step.
    stack.write_app("slow", Some("sleep 8"));
    let up = stack.up_app("demo", "10m", "slow", &["--no-wait"]);
    up.expect_code(0);
    let up_id = up.json()["operation"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    wait_until("the up to run its prepare step", WAIT, || {
        let snap = snapshot(&stack);
        let up = snap.pending_operations().first()?.clone();
        let progress = up.progress?;
        (progress.step_id == "prepare:web" && snap.instance("demo").is_some()).then_some(())
    });

    let db = stack.db_path().display().to_string();
    let program = stackless_program(&stack);
    let down_cmd = stack.down_command().template().join(" ");
    let mut tui = Tui::spawn(
        &[
            "--state",
            &db,
            "--stackless",
            &program,
            "--down-cmd",
            &down_cmd,
            "--no-reaper",
        ],
        200,
        50,
    );
    tui.wait_for("up running", UI);
    tui.send("d");
    let question = tui.wait_for(
        "Queue a teardown of demo behind its running up? It runs after the current operation.",
        UI,
    );
    assert!(
        question.contains(&format!(
            "This runs: {program} down demo --no-wait --json [y/N]"
        )),
        "{question}"
    );
    tui.send("y");
    tui.wait_for("down queued behind its up (op ", UI);
    // The store says so while the up still runs: the Operations pane shows
    // the queued down.
    let queued = snapshot(&stack);
    let pending: Vec<(&str, &OpStatus)> = queued
        .pending_operations()
        .iter()
        .map(|op| (op.verb.as_str(), &op.status))
        .collect();
    assert_eq!(
        pending,
        [("up", &OpStatus::Running), ("down", &OpStatus::Queued)]
    );
    let down_id = queued.pending_operations()[1].id.clone();
    tui.wait_until("the queued down in the Operations pane", UI, |s| {
        s.contents()
            .lines()
            .any(|l| l.contains("down   demo") && l.contains("queued"))
    });

    // The controller runs it after the up: the instance ends tombstoned.
    let done = wait_until(
        "the down to run after the up",
        Duration::from_secs(120),
        || {
            let snap = snapshot(&stack);
            let finished = |id: &str| {
                snap.finished_operations()
                    .iter()
                    .find(|op| op.id == id)
                    .cloned()
            };
            Some((finished(&up_id)?, finished(&down_id)?))
        },
    );
    let (up_op, down_op) = done;
    assert_eq!(
        (&up_op.status, &down_op.status),
        (&OpStatus::Succeeded, &OpStatus::Succeeded)
    );
    // A `down` writes no step events: the rows' own times say the order
    // (the up ran to success, untouched; the down ended after it).
    assert!(
        down_op.updated_at >= up_op.updated_at,
        "the down ended at {} before the up at {}",
        down_op.updated_at,
        up_op.updated_at
    );
    assert!(
        down_op.created_at < up_op.updated_at,
        "{down_op:?} {up_op:?}"
    );
    let status: String = stack
        .db()
        .query_row(
            "SELECT status FROM instances WHERE name = 'demo'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(status, "tombstoned");

    // The overlay of the real up: every step event, in order, as the CLI
    // lists them.
    let expected = cli_events(&stack, &up_id);
    assert!(expected.len() >= 6, "{expected:?}");
    tui.send("\t");
    let row = snapshot(&stack)
        .operations
        .iter()
        .position(|op| op.id == up_id)
        .expect("the up is listed");
    for _ in 0..row {
        tui.send("j");
    }
    tui.send("\r");
    let heading = format!("events        {} in order (times UTC)", expected.len());
    let screen = tui.wait_for(&heading, UI);
    let shown: Vec<String> = screen
        .lines()
        .skip_while(|l| !l.contains(&heading))
        .skip(1)
        .take(expected.len())
        .map(|l| {
            // From the event's time (`HH:MM:SS.mmm`) to the overlay's
            // border: `TIME EVENT STEP I/N [TOOK]`, the time left out.
            let chars: Vec<char> = l.chars().collect();
            let at = (0..chars.len().saturating_sub(12)).find(|&i| {
                chars[i..i + 12].iter().enumerate().all(|(n, c)| match n {
                    2 | 5 => *c == ':',
                    8 => *c == '.',
                    _ => c.is_ascii_digit(),
                })
            });
            let rest: String = at.map_or_else(String::new, |i| chars[i + 12..].iter().collect());
            let inside = rest.split('║').next().unwrap_or_default();
            inside.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect();
    let want: Vec<String> = expected
        .iter()
        .map(|(event, step, index, total)| format!("{event} {step} {index}/{total}"))
        .collect();
    let without_durations: Vec<String> = shown
        .iter()
        .zip(&want)
        .map(|(line, want)| line.chars().take(want.len()).collect())
        .collect();
    assert_eq!(without_durations, want, "{screen}");
    // Every Completed line says how long its step took.
    for line in shown.iter().filter(|l| l.starts_with("Completed")) {
        assert!(line.ends_with("ms") || line.ends_with('s'), "{line}");
    }
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
    stack.shutdown();
}

/// `--dry-run`: `d` on an instance whose `up` runs says what it would run
/// and queues nothing; the `up` finishes alone and the instance stays.
#[test]
fn a_dry_run_d_behind_a_running_up_says_what_it_would_run() {
    let stack = Stack::new(Role::Embedded);
    stack.write_app("slow", Some("sleep 6"));
    stack
        .up_app("demo", "10m", "slow", &["--no-wait"])
        .expect_code(0);
    wait_until("the up to run its prepare step", WAIT, || {
        let snap = snapshot(&stack);
        let progress = snap.pending_operations().first()?.progress.clone()?;
        (progress.step_id == "prepare:web" && snap.instance("demo").is_some()).then_some(())
    });
    let db = stack.db_path().display().to_string();
    let program = stackless_program(&stack);
    let mut tui = Tui::spawn(
        &["--state", &db, "--stackless", &program, "--dry-run"],
        200,
        50,
    );
    tui.wait_for("up running", UI);
    tui.send("d");
    tui.wait_for("Queue a teardown of demo behind its running up?", UI);
    tui.send("y");
    tui.wait_for(
        &format!(
            "would reap: dry run: would run {program} down demo --no-wait --json (behind its up); nothing run"
        ),
        UI,
    );
    let snap = snapshot(&stack);
    let verbs: Vec<&str> = snap.operations.iter().map(|op| op.verb.as_str()).collect();
    assert_eq!(verbs, ["up"], "nothing queued");
    wait_until("the up to finish", Duration::from_secs(60), || {
        snapshot(&stack)
            .pending_operations()
            .is_empty()
            .then_some(())
    });
    let snap = snapshot(&stack);
    assert_eq!(snap.operations.len(), 1);
    assert_eq!(
        snap.instance("demo").map(|i| i.status.clone()),
        Some(stackless_tui::model::Status::Active)
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
    stack.shutdown();
}

/// A real 0.4.0 `up` of a three-service stack writes more step events than
/// the 80x24 overlay has rows for: its title counts them, `g` reaches the
/// oldest and `G` the newest, as the CLI lists them.
#[test]
fn the_overlay_of_a_real_multi_service_up_reaches_every_event() {
    let stack = Stack::new(Role::Embedded);
    let app = stack.write_app("many", None);
    let mut definition = String::from("[stack]\nname = \"tui-many\"\n");
    let mut sources = Vec::new();
    for service in ["web", "api", "worker"] {
        definition.push_str(&format!(
            "\n[services.{service}]\nsource = {{ repo = \"https://example.invalid/{service}\", ref = \"main\" }}\nhealth = {{ path = \"/\" }}\n\n[services.{service}.local]\nrun = \"python3 -m http.server $PORT --bind 127.0.0.1\"\n"
        ));
        sources.push(format!("{service}={}", app.display()));
    }
    let file = app.join("stackless.toml");
    std::fs::write(&file, definition).expect("write definition");
    let file = file.display().to_string();
    let mut args = vec!["up", "--name", "many", "--on", "local", "--file", &file];
    for source in &sources {
        args.extend(["--source", source.as_str()]);
    }
    args.extend(["--allow-host-execution", "--lease", "10m", "--json"]);
    stack.stackless(&args).expect_code(0);
    let up_id = snapshot(&stack)
        .operations
        .iter()
        .find(|op| op.verb == "up")
        .expect("the up")
        .id
        .clone();
    let expected = cli_events(&stack, &up_id);
    let n = expected.len();
    assert!(n > 12, "{expected:?}");
    let db = stack.db_path().display().to_string();
    let mut tui = Tui::spawn(&["--state", &db, "--no-reaper"], 80, 24);
    tui.wait_for("Operations", UI);
    tui.send("\t");
    tui.send("\r");
    tui.wait_for(&format!("-{n} of {n} "), UI);
    let step = |i: usize| {
        let (event, step, index, total) = &expected[i];
        format!("{event:<9}  {step} {index}/{total}")
    };
    tui.send("g");
    let top = tui.wait_for("· events 1-", UI);
    assert!(top.contains(&step(0)), "{top}");
    tui.send("G");
    let bottom = tui.wait_for(&format!("-{n} of {n} "), UI);
    assert!(bottom.contains(&step(n - 1)), "{bottom}");
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
    stack.shutdown();
}
