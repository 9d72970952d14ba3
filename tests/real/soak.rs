//! The soak beside the real stackless 0.4.0 (issue 20): the real CLI and
//! its (embedded) controller create instances with short leases; the
//! console, in a pseudo-terminal, reaps them through the real `down`,
//! some teardowns failing once; leases are renewed by the real `verify`
//! and by an outside `sqlite3` writer; the controller is stopped and
//! started again; `stackless list`, `stackless-tui snapshot --json` and
//! other `sqlite3` clients come and go. At the end the store is whole,
//! every teardown the console ran is in its audit trail exactly once with
//! its effect in the store, every failure it recorded is in
//! `reap_attempts` (or was cleared by a later success), nothing was torn
//! down twice, and no renewed instance was torn down.
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
    wait_until(
        "every expired instance reaped or backed off, no teardown running",
        Duration::from_secs(240),
        || {
            let log = calls(&stack);
            let running = log.iter().filter(|c| c.0 == "start").count()
                != log.iter().filter(|c| c.0 == "end" || c.0 == "fail").count();
            let open = sqlite(
                &db,
                "SELECT count(*) FROM instances WHERE status = 'active' AND name NOT LIKE 'keep-%'
                   AND name NOT IN (SELECT instance FROM reap_attempts)",
            );
            (!running && open.trim() == "0").then_some(())
        },
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(30)), 0);

    let log = calls(&stack);
    let mut started_per: BTreeMap<String, usize> = BTreeMap::new();
    for (verb, name, _) in &log {
        if verb == "start" {
            *started_per.entry(name.clone()).or_default() += 1;
        }
    }
    counts.teardowns_run = started_per.values().sum();
    let succeeded: Vec<&String> = log
        .iter()
        .filter(|c| c.0 == "end" && c.2 == Some(0))
        .map(|c| &c.1)
        .collect();
    let failed: Vec<&String> = log
        .iter()
        .filter(|c| c.0 == "fail" || (c.0 == "end" && c.2 != Some(0)))
        .map(|c| &c.1)
        .collect();
    counts.teardowns_succeeded = succeeded.len();
    counts.teardowns_failed = failed.len();
    // Nothing torn down twice: one success at most per instance, and no
    // teardown started after its success.
    let unique: BTreeSet<_> = succeeded.iter().collect();
    counts.torn_down_twice = succeeded.len() - unique.len()
        + started_per
            .iter()
            .filter(|(n, c)| **c > 1 + usize::from(n.starts_with("fail-")))
            .count();
    counts.renewed_torn_down = started_per
        .keys()
        .filter(|n| n.starts_with("keep-"))
        .count();

    // The audit trail: every teardown's outcome exactly once.
    let audit = std::fs::read_to_string(stack.state_dir().join("stackless-tui/audit.jsonl"))
        .expect("audit trail");
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let audited = |outcome: &str| -> Vec<String> {
        let mut names: Vec<String> = lines
            .iter()
            .filter(|l| l["action"] == "teardown" && l["outcome"] == outcome)
            .map(|l| l["instance"].as_str().unwrap_or_default().to_owned())
            .collect();
        names.sort();
        names
    };
    let (audited_ok, audited_failed) = (audited("succeeded"), audited("failed"));
    counts.audited_succeeded = audited_ok.len();
    counts.audited_failed = audited_failed.len();
    let mut sorted_ok: Vec<String> = succeeded.iter().map(|s| (*s).clone()).collect();
    sorted_ok.sort();
    let mut sorted_failed: Vec<String> = failed.iter().map(|s| (*s).clone()).collect();
    sorted_failed.sort();

    // Each success's effect in the store; each failure in reap_attempts
    // or cleared by a later success.
    let status = |name: &str| {
        sqlite(
            &db,
            &format!("SELECT status FROM instances WHERE name = '{name}'"),
        )
    };
    for name in &sorted_ok {
        assert_eq!(status(name), "tombstoned\n", "{name} torn down");
    }
    for name in &sorted_failed {
        let row = sqlite(
            &db,
            &format!("SELECT attempts FROM reap_attempts WHERE instance = '{name}'"),
        );
        if sorted_ok.contains(name) {
            assert_eq!(row, "", "{name}'s backoff cleared by its success");
            counts.failures_cleared_by_a_later_success += 1;
        } else if row.trim().parse::<i64>().is_ok_and(|a| a >= 1) {
            counts.failures_in_reap_attempts += 1;
        } else {
            counts.lost_writes += 1;
        }
    }
    counts.integrity_check = sqlite(&db, "PRAGMA integrity_check").trim().to_owned();
    let report = serde_json::to_string_pretty(&counts).expect("json");
    println!("SOAK {report}");
    if let Ok(path) = std::env::var("STACKLESS_TUI_SOAK_REPORT") {
        std::fs::write(path, &report).expect("report");
    }
    assert_eq!(counts.integrity_check, "ok");
    assert_eq!(audited_ok, sorted_ok, "every success audited exactly once");
    assert_eq!(
        audited_failed, sorted_failed,
        "every failure audited exactly once"
    );
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
