//! Expired leases of the real stackless, reaped by this crate's reaper
//! through the real `down`, and by the real controller's own reaper.

use std::sync::Arc;
use std::time::Duration;

use stackless_tui::event::{ActivityKind, Actor};
use stackless_tui::model::Status;
use stackless_tui::model::envelope;
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::common;
use crate::harness::{Role, Stack, WAIT, unix_now, wait_until};

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

/// `(status, tombstoned_at)` of `name`'s row, and whether a lease is left.
fn row_state(stack: &Stack, name: &str) -> (String, Option<i64>, i64) {
    stack
        .db()
        .query_row(
            "SELECT status, tombstoned_at,
                    (SELECT count(*) FROM leases WHERE instance = ?1)
             FROM instances WHERE name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("instance row")
}

/// An embedded controller (no reaper of its own) and `--lease 5s`: once it
/// has expired, one pass of OUR reaper runs the real `down` and the row is
/// a tombstone.
#[test]
fn our_reaper_reaps_an_expired_lease_through_the_real_down() {
    let stack = Stack::new(Role::Embedded);
    stack.up("short", "5s").expect_code(0);
    let expires = expires_at(&stack, "short");
    wait_until("the lease to expire", WAIT, || {
        (unix_now() > expires).then_some(())
    });

    let runtime = common::runtime();
    let (mut reaper, log) = common::reaper_with(
        &stack.db_path(),
        stack.down_command(),
        Box::new(SysinfoProbe::new()),
        Arc::new(unix_now),
        &runtime,
        |config| config.down_timeout = Duration::from_secs(180),
    );
    let summary = reaper.pass();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        (summary.reaped, summary.failed, summary.errors),
        (1, 0, 0),
        "{log:#?}"
    );
    let kinds: Vec<_> = log
        .iter()
        .map(|a| (a.actor, a.kind, a.instance.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (Actor::Reaper, ActivityKind::Started, "short"),
            (Actor::Reaper, ActivityKind::Reaped, "short"),
        ]
    );
    assert_eq!(
        log[0].detail,
        // The whole argv, quoted as the `d` dialog shows it.
        format!(
            "{} --state-dir {} --proxy-port {} down short --json",
            stack.down_command().argv_for("short").expect("argv")[0],
            stack.state_dir().display(),
            stack.port
        )
    );
    assert!(
        log[1].detail.starts_with("down succeeded in "),
        "{}",
        log[1].detail
    );

    let (status, tombstoned_at, leases) = row_state(&stack, "short");
    assert_eq!((status.as_str(), leases), ("tombstoned", 0));
    assert!(tombstoned_at.is_some_and(|t| t >= expires));
    // The down the reaper ran is the controller's `down` operation.
    let downs: Vec<(String, String)> = {
        let conn = stack.db();
        let mut stmt = conn
            .prepare("SELECT status, result_json FROM operations WHERE instance = 'short' AND verb = 'down'")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    assert_eq!(downs.len(), 1, "{downs:?}");
    assert_eq!(downs[0].0, "succeeded");
    let result: serde_json::Value = serde_json::from_str(&downs[0].1).expect("result_json");
    assert_eq!(result["name"], "short");
    assert_eq!(result["status"], "Destroyed");

    let mut store = Store::open(&stack.db_path(), Access::ReadOnly).expect("open");
    let snapshot = store.snapshot(&mut SysinfoProbe::new()).expect("snapshot");
    let row = snapshot.rows.instance("short").expect("row");
    assert_eq!(row.status, Status::Tombstoned);
    assert_eq!(row.lease, None);
    assert!(snapshot.rows.reap_attempts.is_empty());

    // The real `down --json` envelope (0.4.0, spec §4.2), as our envelope
    // reader sees it: a success, not an error.
    let again = stack.down("short");
    again.expect_code(0);
    assert_eq!(
        again.json(),
        serde_json::json!({
            "schema_version": 2,
            "ok": true,
            "instance": "short",
            "outcome": "already_down"
        })
    );
    assert_eq!(envelope::parse_error(&again.stdout), None);
    // A second pass finds nothing to do.
    assert_eq!(reaper.pass().reaped, 0);
    drop(reaper);
    stack.shutdown();
}

/// An Operator controller with `--lease 5s`: restarted after the lease
/// expired (its first tick is immediate), its own reaper submits a `down`
/// operation, which succeeds and tombstones the row.
#[test]
fn the_controller_reaps_an_expired_lease() {
    let stack = Stack::new(Role::Operator);
    stack.up("ctl", "5s").expect_code(0);
    let expires = expires_at(&stack, "ctl");
    stack.stop_controller();
    wait_until("the lease to expire", WAIT, || {
        (unix_now() > expires).then_some(())
    });
    let before = Store::open(&stack.db_path(), Access::ReadOnly)
        .expect("open")
        .snapshot(&mut SysinfoProbe::new())
        .expect("snapshot");
    // Any lifecycle call spawns the controller again; `controller --json`
    // also says its reaper is on (spec §4.4).
    let info = stack.stackless(&["controller", "--json"]);
    info.expect_code(0);
    let info = info.json();
    assert_eq!(info["ok"], true);
    assert_eq!(info["result"]["version"], "0.4.0");
    assert_eq!(info["result"]["protocol"], 2);
    assert_eq!(info["result"]["lease_reaper"], true);
    assert!(stack.controller_pid().is_some());

    // The first tick is immediate; a 60 s tick is the fallback. The engine
    // tombstones the row before the operation is finished, so wait for both.
    let (status, result, cancel) = wait_until(
        "the controller's down of ctl to finish",
        Duration::from_secs(90),
        || {
            let finished: Option<(String, Option<String>, i64)> = stack
                .db()
                .query_row(
                    "SELECT status, result_json, cancel_requested FROM operations
                     WHERE instance = 'ctl' AND verb = 'down'
                       AND status NOT IN ('queued', 'running')",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .ok();
            finished
        },
    );
    let downs: i64 = stack
        .db()
        .query_row(
            "SELECT count(*) FROM operations WHERE instance = 'ctl' AND verb = 'down'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(downs, 1, "one down submitted by the controller's reaper");
    let (row_status, tombstoned_at, leases) = row_state(&stack, "ctl");
    assert_eq!((row_status.as_str(), leases), ("tombstoned", 0));
    assert!(tombstoned_at.is_some_and(|t| t >= expires));
    assert_eq!((status.as_str(), cancel), ("succeeded", 0));
    let result: serde_json::Value =
        serde_json::from_str(result.as_deref().expect("result_json")).expect("JSON");
    assert_eq!(result["name"], "ctl");
    assert_eq!(result["status"], "Destroyed");

    // What the console shows of it: observed events, not its own reap.
    let after = Store::open(&stack.db_path(), Access::ReadOnly)
        .expect("open")
        .snapshot(&mut SysinfoProbe::new())
        .expect("snapshot");
    let lines: Vec<(Actor, ActivityKind, String, String)> =
        stackless_tui::model::observe::changes(&before.rows, &after.rows)
            .iter()
            .map(|o| {
                let a = o.activity(0);
                (a.actor, a.kind, a.instance, a.detail)
            })
            .filter(|(_, _, name, _)| name == "ctl")
            .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        (lines[0].0, lines[0].1, lines[0].2.as_str()),
        (Actor::Observed, ActivityKind::Tombstoned, "ctl")
    );
    // Its lease had run out when the `down` was queued: its lease
    // reaper's.
    assert_eq!(
        (lines[1].0, lines[1].1, lines[1].2.as_str()),
        (Actor::Controller, ActivityKind::Reaped, "ctl")
    );
    assert!(
        lines[1]
            .3
            .starts_with("by its lease reaper (lease expired): down in "),
        "{lines:?}"
    );
    // No backoff rows in 0.4.0 (spec TL;DR 3).
    let attempts: i64 = stack
        .db()
        .query_row("SELECT count(*) FROM reap_attempts", [], |r| r.get(0))
        .expect("count");
    assert_eq!(attempts, 0);
    stack.shutdown();
}

/// What the console writes, stackless shows: a reap of ours that failed (a
/// `down` answering an error envelope) leaves `code: message` in
/// `reap_attempts.last_error`, and the real `stackless status NAME` prints
/// it on its `⚠ reap failed` line as it prints its own (stackless-0.4.0
/// src/client/report.rs:524-528, src/output.rs:363-364), not the whole JSON
/// envelope.
#[test]
fn the_real_status_shows_our_failed_reap_as_code_and_message() {
    let stack = Stack::new(Role::Embedded);
    stack.up("flaky", "5s").expect_code(0);
    let expires = expires_at(&stack, "flaky");
    wait_until("the lease to expire", WAIT, || {
        (unix_now() > expires).then_some(())
    });
    let envelope = stack.root().join("envelope.json");
    std::fs::write(
        &envelope,
        r#"{
  "ok": false,
  "error": {
    "schema_version": 2,
    "code": "engine.teardown.survivors",
    "message": "teardown of \"flaky\" left survivors: [\"process:web\"]",
    "instance": "flaky",
    "remediation": "re-run `stackless down` to retry",
    "context": {}
  }
}"#,
    )
    .expect("write envelope");
    let down = common::fake_down(
        stack.root(),
        &format!("cat '{}'; exit 1", envelope.display()),
    );
    let runtime = common::runtime();
    let (mut reaper, _log) = common::reaper_with(
        &stack.db_path(),
        down,
        Box::new(SysinfoProbe::new()),
        Arc::new(unix_now),
        &runtime,
        |_| {},
    );
    assert_eq!(reaper.pass().failed, 1);
    drop(reaper);
    let status = stack.stackless(&["status", "flaky"]);
    status.expect_code(0);
    assert!(
        status.stdout.lines().any(|l| l
            == "  ⚠ reap failed 1 time(s): engine.teardown.survivors: teardown of \"flaky\" \
                left survivors: [\"process:web\"] (retrying)"),
        "{}",
        status.stdout
    );
    stack.down("flaky").expect_code(0);
    stack.shutdown();
}
