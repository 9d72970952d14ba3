//! The soak beside the real stackless 0.4.0: the real CLI and its
//! (embedded) controller create instances with short leases; the console,
//! in a pseudo-terminal, reaps them through the real `down`, some teardowns
//! failing once; leases are renewed by the real `verify` and by an outside
//! `sqlite3` writer; the controller is stopped and started again;
//! `stackless list`, `stackless-tui snapshot --json` and other `sqlite3`
//! clients come and go. At the end the store is whole, every teardown the
//! console ran is in its audit trail exactly once with its effect in the
//! store, every failure it recorded is in `reap_attempts` (or was cleared
//! by a later success), nothing was torn down twice, and no renewed
//! instance was torn down.
//!
//! `cargo test --locked` runs it for [`DEFAULT_SECS`];
//! `scripts/soak.sh` runs it for 30 minutes
//! (`STACKLESS_TUI_SOAK_SECS=1800`) and writes the counts
//! (`STACKLESS_TUI_SOAK_REPORT`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{Role, Stack, unix_now, wait_until};
use crate::pty::Tui;

/// The short soak's length in `cargo test` (seconds of creating and
/// reaping; the settling after it is extra).
const DEFAULT_SECS: u64 = 40;

fn soak_secs() -> u64 {
    std::env::var("STACKLESS_TUI_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECS)
}

/// The teardown the console runs: logs `start NAME`, then for a `fail-*`
/// instance's first teardown `fail NAME` and exit 1 (a teardown that
/// fails); else the real `down` (the embedded controller's flags), then
/// `end NAME RC`.
fn wrapper(stack: &Stack) -> String {
    let script = stack.root().join("soak-down.sh");
    let bin = crate::harness::real_stackless();
    let root = stack.root();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             export HOME='{root}' XDG_STATE_HOME='{root}' XDG_CONFIG_HOME='{root}/config' \
             STACKLESS_PROXY_PORT='{port}' STACKLESS_NO_SELF_UPDATE=1 STACKLESS_BIN='{bin}'\n\
             name=\"$2\"\n\
             echo \"start $name\" >> '{root}/calls.log'\n\
             case \"$name\" in fail-*)\n\
               if [ ! -e '{root}/failed-'\"$name\" ]; then\n\
                 : > '{root}/failed-'\"$name\"\n\
                 echo \"fail $name\" >> '{root}/calls.log'\n\
                 echo 'soak: this teardown fails once' >&2\n\
                 exit 1\n\
               fi;;\n\
             esac\n\
             '{bin}' --state-dir '{state}' --proxy-port '{port}' down \"$name\" --json\n\
             rc=$?\n\
             echo \"end $name $rc\" >> '{root}/calls.log'\n\
             exit $rc\n",
            root = root.display(),
            bin = bin.display(),
            state = stack.state_dir().display(),
            port = stack.port,
        ),
    )
    .expect("wrapper");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{} down {{name}} --json", script.display())
}

/// An outside `sqlite3` client (python3's module, as the CLI would):
/// runs `sql`, commits, closes; its output.
fn sqlite(path: &Path, sql: &str) -> String {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=30)\nfor row in c.execute({sql:?}): print('|'.join(map(str, row)))\nc.commit()\nc.close()"
        ))
        .arg(path)
        .output()
        .expect("python3");
    assert!(out.status.success(), "sqlite client: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The calls log: `(verb, name, rc)` per line.
fn calls(stack: &Stack) -> Vec<(String, String, Option<i32>)> {
    std::fs::read_to_string(stack.root().join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let mut words = line.split(' ');
            (
                words.next().unwrap_or_default().to_owned(),
                words.next().unwrap_or_default().to_owned(),
                words.next().and_then(|rc| rc.parse().ok()),
            )
        })
        .collect()
}

/// `daemon stop` of the running controller, waiting for that process to
/// exit (the console's own `down` may start another one meanwhile, as any
/// CLI call does). Whether one was running.
fn stop_controller(stack: &Stack) -> bool {
    let Some(pid) = stack.controller_pid() else {
        return false;
    };
    let out = stack
        .command(&crate::harness::real_stackless())
        .args(["daemon", "stop"])
        .output()
        .expect("daemon stop");
    assert!(out.status.success(), "daemon stop: {out:?}");
    wait_until("the controller to exit", Duration::from_secs(120), || {
        // Gone, or a zombie no one has reaped yet.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next());
        matches!(state, None | Some("Z" | "X")).then_some(())
    });
    true
}

/// The real `up` of `name` from a checkout of its own (a `--source`
/// path is pinned by one active instance at a time).
fn up(stack: &Stack, name: &str, lease: &str) {
    let app = stack.write_app(name, None);
    // A proof contract, so `verify` can pass (and renew the lease).
    let definition = std::fs::read_to_string(app.join("stackless.toml")).expect("definition");
    std::fs::write(
        app.join("stackless.toml"),
        definition.replacen(
            "[stack]\nname = \"tui-test\"\n",
            "[stack]\nname = \"tui-test\"\n\n[stack.verify]\nrun = \"true\"\n",
            1,
        ),
    )
    .expect("definition");
    stack.up_app(name, lease, name, &[]).expect_code(0);
}

/// With `STACKLESS_TUI_SOAK_KEEP=DIR`: the wrapper's calls, the audit
/// trail and the final rows, kept for a look after the stack is gone.
fn keep_artifacts(stack: &Stack, audit: &str) {
    let Ok(dir) = std::env::var("STACKLESS_TUI_SOAK_KEEP") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("keep dir");
    let calls = std::fs::read_to_string(stack.root().join("calls.log")).unwrap_or_default();
    std::fs::write(dir.join("calls.log"), calls).expect("calls");
    std::fs::write(dir.join("audit.jsonl"), audit).expect("audit");
    let rows = sqlite(
        &stack.db_path(),
        "SELECT name, status, tombstoned_at, (SELECT attempts FROM reap_attempts WHERE instance = name) FROM instances ORDER BY name",
    );
    std::fs::write(dir.join("rows.txt"), rows).expect("rows");
}

/// What the soak counts, written to the report.
#[derive(Debug, Default, serde::Serialize)]
struct Counts {
    seconds: u64,
    created: usize,
    teardowns_run: usize,
    teardowns_succeeded: usize,
    teardowns_failed: usize,
    audited_succeeded: usize,
    audited_failed: usize,
    failures_in_reap_attempts: usize,
    failures_cleared_by_a_later_success: usize,
    renewals_by_verify: usize,
    renewals_by_sqlite: usize,
    controller_restarts: usize,
    outside_readers: usize,
    torn_down_twice: usize,
    /// Instances whose teardown ran more than once (a failure, then a
    /// retry): not a double teardown.
    retried: usize,
    /// Teardowns whose outcome the console judged otherwise than the exit
    /// status (a `down` that exited 0 with the row still active).
    outcome_disagreements: usize,
    renewed_torn_down: usize,
    lost_writes: usize,
    integrity_check: String,
}

#[test]
fn a_soak_beside_the_real_stackless_leaves_the_store_whole() {
    let secs = soak_secs();
    let stack = Stack::new(Role::Embedded);
    let db = stack.db_path();
    let mut counts = Counts {
        seconds: secs,
        ..Counts::default()
    };
    // The kept instances: renewed all along, never to be torn down.
    for keep in ["keep-verify", "keep-sqlite"] {
        up(&stack, keep, "25s");
    }
    let down = wrapper(&stack);
    let db_arg = db.display().to_string();
    let mut tui = Tui::spawn(
        &[
            "--state",
            &db_arg,
            "--tick",
            "2s",
            "--down-cmd",
            &down,
            "--down-timeout",
            "180s",
        ],
        120,
        40,
    );
    tui.wait_for("keep-verify", crate::pty::UI);
    let started = Instant::now();
    let mut created: BTreeSet<String> = BTreeSet::new();
    let mut round = 0;
    while started.elapsed() < Duration::from_secs(secs) {
        round += 1;
        let name = if round % 3 == 0 {
            format!("fail-{round}")
        } else {
            format!("s-{round}")
        };
        up(&stack, &name, "3s");
        created.insert(name);
        // Renewed by the real keepalive.
        let verify = stack.stackless(&["verify", "keep-verify", "--json"]);
        verify.expect_code(0);
        counts.renewals_by_verify += 1;
        // Every other round the controller stops, so the outside clients
        // below are the only other connections: each that closes is, to
        // SQLite, the last one unless the console holds its locks.
        if round % 2 == 0 && stop_controller(&stack) {
            counts.controller_restarts += 1;
        }
        // Renewed by an outside writer; readers come and go.
        sqlite(&db, "SELECT count(*) FROM instances");
        sqlite(
            &db,
            &format!(
                "UPDATE leases SET expires_at = {} WHERE instance = 'keep-sqlite'",
                unix_now() + 25
            ),
        );
        counts.renewals_by_sqlite += 1;
        stack
            .tui(&["snapshot", "--json", "--state", &db_arg])
            .expect_code(0);
        sqlite(&db, "SELECT count(*) FROM reap_attempts");
        // `list` starts the controller again when it is stopped.
        stack.stackless(&["list", "--json"]).expect_code(0);
        counts.outside_readers += 4;
    }
    counts.created = created.len();
    // Every short lease has run out: wait for each to be torn down or
    // recorded as failed, and for no teardown to be running.
    let teardown_running = || {
        let log = calls(&stack);
        // Every teardown finished, as the wrapper and as the console saw
        // it (the console records a success after `down` exits): one
        // outcome line for each `started` one.
        let audit = std::fs::read_to_string(stack.state_dir().join("stackless-tui/audit.jsonl"))
            .unwrap_or_default();
        let audited = |outcome: &str| {
            audit
                .lines()
                .filter(|l| {
                    l.contains("\"action\":\"teardown\"")
                        && l.contains(&format!("\"outcome\":\"{outcome}"))
                })
                .count()
        };
        log.iter().filter(|c| c.0 == "start").count()
            != log.iter().filter(|c| c.0 == "end" || c.0 == "fail").count()
            || 2 * audited("started") != audited("")
    };
    wait_until(
        "every expired instance reaped or backed off, no teardown running",
        Duration::from_secs(240),
        || {
            let open = sqlite(
                &db,
                "SELECT count(*) FROM instances WHERE status = 'active' AND name NOT LIKE 'keep-%'
                   AND name NOT IN (SELECT instance FROM reap_attempts)",
            );
            (!teardown_running() && open.trim() == "0").then_some(())
        },
    );
    // A backed-off instance is retried when its backoff runs out: pause
    // the reaper (P) so no pass starts a teardown between this check and
    // the quit, then let one that started meanwhile finish.
    tui.send("P");
    tui.wait_for("reaper: paused", Duration::from_secs(10));
    wait_until("no teardown running", Duration::from_secs(120), || {
        (!teardown_running()).then_some(())
    });
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(30)), 0);

    let log = calls(&stack);
    let audit = std::fs::read_to_string(stack.state_dir().join("stackless-tui/audit.jsonl"))
        .expect("audit trail");
    keep_artifacts(&stack, &audit);
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // Per instance, in order: the wrapper's view and the audit trail's.
    let mut ran: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (verb, name, rc) in &log {
        let what = match (verb.as_str(), rc) {
            ("start", _) => "started",
            ("end", Some(0)) => "succeeded",
            _ => "failed",
        };
        ran.entry(name.clone()).or_default().push(what.to_owned());
    }
    let mut audited: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in lines.iter().filter(|l| l["action"] == "teardown") {
        let name = line["instance"].as_str().unwrap_or_default().to_owned();
        audited.entry(name).or_default().push((
            line["outcome"].as_str().unwrap_or_default().to_owned(),
            line["reason"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    let outcomes = |name: &str| -> Vec<String> {
        audited
            .get(name)
            .map(|v| v.iter().map(|(o, _)| o.clone()).collect())
            .unwrap_or_default()
    };
    let count = |v: &[String], what: &str| v.iter().filter(|o| *o == what).count();
    let status = |name: &str| {
        sqlite(
            &db,
            &format!("SELECT status FROM instances WHERE name = '{name}'"),
        )
    };
    let mut mismatched = Vec::new();
    for (name, wrapper) in &ran {
        let console = outcomes(name);
        counts.teardowns_run += count(wrapper, "started");
        counts.teardowns_succeeded += count(wrapper, "succeeded");
        counts.teardowns_failed += count(wrapper, "failed");
        counts.audited_succeeded += count(&console, "succeeded");
        counts.audited_failed += count(&console, "failed");
        // Every teardown the console ran is in its audit trail exactly
        // once, with the outcome the wrapper saw.
        let finished = |v: &[String]| -> Vec<String> {
            v.iter()
                .filter(|o| *o == "succeeded" || *o == "failed")
                .cloned()
                .collect()
        };
        let (ran_finished, audited_finished) = (finished(wrapper), finished(&console));
        if count(wrapper, "started") != count(&console, "started")
            || ran_finished.len() != audited_finished.len()
        {
            mismatched.push(format!("{name}: ran {wrapper:?}, audited {console:?}"));
        } else if ran_finished != audited_finished {
            // `down` exited 0 but the row said otherwise (silence is not
            // success), or the like: counted, not a fault of the store.
            counts.outcome_disagreements += 1;
        }
        // Torn down twice: two successes, or a teardown after one.
        let first_success = console.iter().position(|o| o == "succeeded");
        if count(&console, "succeeded") > 1
            || first_success.is_some_and(|at| console[at..].iter().any(|o| o == "started"))
        {
            counts.torn_down_twice += 1;
        }
        if count(wrapper, "started") > 1 {
            counts.retried += 1;
        }
        if name.starts_with("keep-") {
            counts.renewed_torn_down += 1;
        }
        // Each success's effect is in the store.
        if first_success.is_some() && status(name) != "tombstoned\n" {
            mismatched.push(format!("{name}: succeeded but {:?}", status(name)));
        }
        // A failure the console said it recorded ("(attempt N, retry at")
        // and that is still its last word on an instance still active is
        // in reap_attempts with that count: else the write was lost.
        let last_failed = audited.get(name).and_then(|v| {
            v.iter()
                .rev()
                .find(|(o, _)| o == "succeeded" || o == "failed")
                .filter(|(o, _)| o == "failed")
                .and_then(|(_, reason)| {
                    let at = reason.rfind("(attempt ")? + "(attempt ".len();
                    reason[at..].split(',').next()?.parse::<i64>().ok()
                })
        });
        if let Some(attempts) = last_failed {
            let row = sqlite(
                &db,
                &format!("SELECT attempts FROM reap_attempts WHERE instance = '{name}'"),
            );
            if row.trim().parse::<i64>().ok() == Some(attempts) {
                counts.failures_in_reap_attempts += 1;
            } else if status(name) == "active\n" {
                counts.lost_writes += 1;
                mismatched.push(format!("{name}: attempt {attempts} said, row {row:?}"));
            }
        } else if count(&console, "failed") > 0 {
            counts.failures_cleared_by_a_later_success += 1;
        }
    }
    counts.integrity_check = sqlite(&db, "PRAGMA integrity_check").trim().to_owned();
    let report = serde_json::to_string_pretty(&counts).expect("json");
    println!("SOAK {report}");
    if let Ok(path) = std::env::var("STACKLESS_TUI_SOAK_REPORT") {
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("report {path}: {e}"));
    }
    assert_eq!(counts.integrity_check, "ok");
    assert_eq!(mismatched, Vec::<String>::new(), "{report}");
    assert_eq!(counts.lost_writes, 0, "{report}");
    assert_eq!(counts.torn_down_twice, 0, "{report}");
    assert_eq!(counts.renewed_torn_down, 0, "{report}");
    assert!(counts.teardowns_succeeded >= 1, "{report}");
    assert!(counts.teardowns_failed >= 1, "{report}");
    for keep in ["keep-verify", "keep-sqlite"] {
        assert_eq!(status(keep), "active\n", "{keep} renewed, never reaped");
    }
    drop(tui);
    stack.shutdown();
}
