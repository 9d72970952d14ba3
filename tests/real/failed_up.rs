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

    readiness_as_stackless_derives_it(&stack);

    stack.down("a").expect_code(0);
    stack.down("b").expect_code(0);
    stack.shutdown();
}

/// Each instance's per-service stage as the console derives it (its probe
/// and the last observation) is the one `stackless list --json` and `status
/// NAME --json` give; the row of the failed `up` (`b`: active, no lease,
/// never reaped) is marked, and its services `unknown` (none recorded) show
/// on its row.
fn readiness_as_stackless_derives_it(stack: &Stack) {
    use stackless_tui::model::readiness::failed_up;
    use stackless_tui::store::services;

    let list = stack.stackless(&["list", "--json"]);
    list.expect_code(0);
    let list = list.json();
    let stages = |instance: &serde_json::Value| -> Vec<(String, String)> {
        instance["services"]
            .as_array()
            .expect("services")
            .iter()
            .map(|s| {
                (
                    s["service"].as_str().expect("service").to_owned(),
                    s["stage"].as_str().expect("stage").to_owned(),
                )
            })
            .collect()
    };
    let listed = |name: &str| {
        list["instances"]
            .as_array()
            .expect("instances")
            .iter()
            .find(|i| i["name"] == name)
            .map(stages)
            .expect("listed")
    };
    let status_b = stack.stackless(&["status", "b", "--json"]);
    status_b.expect_code(0);
    assert_eq!(stages(&status_b.json()), [("web".into(), "unknown".into())]);
    assert_eq!(listed("b"), [("web".to_owned(), "unknown".to_owned())]);
    assert_eq!(listed("a"), [("web".to_owned(), "healthy".to_owned())]);

    let mut store = Store::open(&stack.db_path(), Access::ReadOnly).expect("open");
    let mut probe = stackless_tui::store::probe::checked_sysinfo();
    for name in ["a", "b"] {
        let detail = store.instance_detail(name).expect("read").expect("exists");
        let view = services::observe(detail, &stack.state_dir(), probe.as_mut());
        let ours: Vec<(String, String)> = view
            .services
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    stackless_tui::model::readiness::service_stage(s, false)
                        .as_str()
                        .to_owned(),
                )
            })
            .collect();
        assert_eq!(ours, listed(name), "{name}: {:#?}", view.services);
    }

    // `snapshot --json` gives each service the same stage.
    let db = stack.db_path().display().to_string();
    let out = stack.tui(&["--state", &db, "snapshot", "--json"]);
    out.expect_code(0);
    let doc = out.json();
    for name in ["a", "b"] {
        let instance = doc["instances"]
            .as_array()
            .and_then(|all| all.iter().find(|i| i["name"] == name))
            .expect("in the snapshot");
        let shown: Vec<(String, String)> = instance["services"]
            .as_array()
            .expect("services")
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().expect("name").to_owned(),
                    s["stage"].as_str().expect("stage").to_owned(),
                )
            })
            .collect();
        assert_eq!(shown, listed(name), "{name}: {instance:#}");
    }

    // The rows: `b` is the failed `up`'s, with no service recorded.
    let snapshot = store.snapshot(&mut SysinfoProbe::new()).expect("snapshot");
    let row = |name: &str| {
        let instance = snapshot.rows.instance(name).expect("row");
        failed_up(
            instance,
            snapshot.pending_operation(name).is_some(),
            snapshot
                .lock_liveness(name)
                .is_some_and(stackless_tui::model::Liveness::held),
        )
    };
    assert_eq!((row("a"), row("b")), (false, true));
    let mut recorded: Vec<String> = Vec::new();
    let stop = stackless_tui::stop::StopToken::new();
    assert!(services::each_active_record(
        &mut store,
        &stop,
        |name, _| {
            recorded.push(name);
        }
    ));
    assert_eq!(recorded, ["a"], "b recorded no service process");
}
