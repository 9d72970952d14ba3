//! A real failed `up` (spec §8.3, `engine.source_override.shared`): the
//! failed operation in the store, and our snapshot of that store.

use stackless_tui::model::Status;
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::harness::{Role, Stack};

/// `a` pins `web=<app>`; `b` pinning the same checkout fails with
/// `engine.source_override.shared`, leaving a `failed` up operation and an
/// active `b` row with no lease. Both our snapshot and `stackless-tui
/// snapshot --json` read that store.
#[test]
fn a_failed_up_leaves_a_failed_operation() {
    let stack = Stack::new(Role::Embedded);
    stack.up("a", "10m").expect_code(0);
    let failed = stack.up("b", "10m");
    failed.expect_code(1);
    let envelope = failed.json();
    assert_eq!(envelope["ok"], false);
    assert_eq!(envelope["error"]["schema_version"], 2);
    assert_eq!(envelope["error"]["code"], "engine.source_override.shared");

    let (status, error, instance_id, output_version): (String, String, Option<String>, i64) = stack
        .db()
        .query_row(
            "SELECT status, error_json, instance_id, output_version FROM operations
             WHERE instance = 'b' AND verb = 'up'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("exactly one up operation on b");
    assert_eq!(status, "failed");
    assert_eq!(output_version, 1);
    assert_eq!(instance_id, None, "failed before admission: never bound");
    let error: serde_json::Value = serde_json::from_str(&error).expect("error_json");
    assert_eq!(error["schema_version"], 2);
    assert_eq!(error["code"], "engine.source_override.shared");
    assert_eq!(error["message"], envelope["error"]["message"]);
    let message = error["message"].as_str().expect("message");
    assert!(
        message.ends_with("is already pinned by active instance \"a\""),
        "{message}"
    );

    // The rows as our store reads them: `b` active with no lease.
    let mut store = Store::open(&stack.db_path(), Access::ReadOnly).expect("open");
    let snapshot = store.snapshot(&mut SysinfoProbe::new()).expect("snapshot");
    let names: Vec<_> = snapshot
        .rows
        .instances
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let a = snapshot.rows.instance("a").expect("a");
    let b = snapshot.rows.instance("b").expect("b");
    assert_eq!(
        (&a.status, a.lease.map(|l| l.duration_secs)),
        (&Status::Active, Some(600))
    );
    assert_eq!((&b.status, b.lease), (&Status::Active, None));
    assert!(b.lock.is_none());

    // `stackless-tui snapshot --json` on that store.
    let db = stack.db_path().display().to_string();
    let out = stack.tui(&["--state", &db, "snapshot", "--json"]);
    out.expect_code(0);
    let report = out.json();
    assert_eq!(report["store_user_version"], 14);
    let instances = report["instances"].as_array().expect("instances");
    let shown: Vec<_> = instances
        .iter()
        .map(|i| (i["name"].clone(), i["status"].clone(), i["lease"].is_null()))
        .collect();
    assert_eq!(
        shown,
        [
            ("a".into(), "active".into(), false),
            ("b".into(), "active".into(), true),
        ]
    );
    assert_eq!(instances[1]["reaper"], serde_json::Value::Null);
    // The failed up, with its real envelope, under `operations`.
    let ops = report["operations"].as_array().expect("operations");
    let failed: Vec<_> = ops
        .iter()
        .filter(|o| o["status"] == "failed")
        .map(|o| {
            (
                o["instance"].clone(),
                o["verb"].clone(),
                o["error"]["code"].clone(),
                o["error"]["schema_version"].clone(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [(
            "b".into(),
            "up".into(),
            "engine.source_override.shared".into(),
            2.into()
        )]
    );

    stack.down("a").expect_code(0);
    stack.down("b").expect_code(0);
    stack.shutdown();
}
