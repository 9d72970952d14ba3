//! A real queued operation (spec §8.4), cancelled with the command line the
//! console's `c` runs: `stackless operation cancel ID --json`.

use crate::harness::{Output, Role, Stack, WAIT, wait_until};

/// The `operation` object of a `{"ok":true,"command":"operation",
/// "operation":{…}}` envelope (`--no-wait`, `operation cancel`).
fn operation(out: &Output) -> serde_json::Value {
    let envelope = out.json();
    assert_eq!(envelope["ok"], true, "{out:#?}");
    assert_eq!(envelope["command"], "operation", "{out:#?}");
    envelope["operation"].clone()
}

/// `(status, cancel_requested)` of operation `id`.
fn op_state(stack: &Stack, id: &str) -> (String, i64) {
    stack
        .db()
        .query_row(
            "SELECT status, cancel_requested FROM operations WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("operation row")
}

/// Whether the `prepare:web` step of operation `id` has started.
fn prepare_started(stack: &Stack, id: &str) -> bool {
    let conn = stack.db();
    let mut stmt = conn
        .prepare(
            "SELECT event_json FROM operation_events WHERE operation_id = ?1 ORDER BY sequence",
        )
        .expect("prepare");
    let events: Vec<String> = stmt
        .query_map([id], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    events.iter().any(|text| {
        serde_json::from_str::<serde_json::Value>(text)
            .is_ok_and(|e| e["step_id"] == "prepare:web" && e["event"] == "Started")
    })
}

/// A slow `up` (`prepare = "sleep 60"`) runs; `down --no-wait` queues behind
/// it (one op per name at a time); `operation cancel` of the queued down
/// exits 0 and the row is `cancelled`, the running up untouched.
#[test]
fn a_queued_operation_is_cancelled_by_the_cli() {
    let stack = Stack::new(Role::Embedded);
    stack.write_app("slow", Some("sleep 60"));
    let up = stack.up_app("demo", "10m", "slow", &["--no-wait"]);
    up.expect_code(0);
    let up = operation(&up);
    let up_id = up["id"].as_str().expect("id").to_owned();
    assert_eq!(
        (up["verb"].as_str(), up["instance"].as_str()),
        (Some("up"), Some("demo"))
    );
    wait_until("the up's prepare step to start", WAIT, || {
        prepare_started(&stack, &up_id).then_some(())
    });
    assert_eq!(op_state(&stack, &up_id), ("running".into(), 0));

    let down = stack.stackless(&["down", "demo", "--no-wait", "--json"]);
    down.expect_code(0);
    let down = operation(&down);
    let down_id = down["id"].as_str().expect("id").to_owned();
    assert_eq!(down["verb"], "down");
    assert_eq!(down["status"], "queued");
    assert_eq!(op_state(&stack, &down_id), ("queued".into(), 0));

    let cancel = stack.stackless(&["operation", "cancel", &down_id, "--json"]);
    cancel.expect_code(0);
    let cancelled = operation(&cancel);
    assert_eq!(cancelled["id"], down_id.as_str());
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["cancel_requested"], true);
    assert_eq!(cancelled["result"], serde_json::Value::Null);
    assert_eq!(op_state(&stack, &down_id), ("cancelled".into(), 1));
    let (result, error, output_version): (Option<String>, Option<String>, i64) = stack
        .db()
        .query_row(
            "SELECT result_json, error_json, output_version FROM operations WHERE id = ?1",
            [&down_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("row");
    assert_eq!((result, error, output_version), (None, None, 0));
    // The running up is not affected.
    assert_eq!(op_state(&stack, &up_id), ("running".into(), 0));

    // A cancelled operation cancelled again: printed unchanged, exit 0.
    let again = stack.stackless(&["operation", "cancel", &down_id, "--json"]);
    again.expect_code(0);
    assert_eq!(operation(&again)["status"], "cancelled");
    // An unknown id: `cli.bad_argument`, exit 1.
    let unknown = stack.stackless(&[
        "operation",
        "cancel",
        "00000000-0000-4000-8000-000000000000",
        "--json",
    ]);
    unknown.expect_code(1);
    assert_eq!(unknown.json()["error"]["code"], "cli.bad_argument");

    // A running up accepts a cancel request and stays running until its
    // next step boundary; the harness then stops the controller and kills
    // the `sleep`.
    let cancel_up = stack.stackless(&["operation", "cancel", &up_id, "--json"]);
    cancel_up.expect_code(0);
    let requested = operation(&cancel_up);
    assert_eq!(requested["status"], "running");
    assert_eq!(requested["cancel_requested"], true);
    assert_eq!(op_state(&stack, &up_id), ("running".into(), 1));
    stack.shutdown();
}
