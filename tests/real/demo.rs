//! The 0.4.0 demo's store (`--demo`, `stackless_tui::demo::v14`) is one the
//! real stackless 0.4.0 accepts: its `list` parses every instance's
//! definition (stackless-core-0.4.0 src/def/parse.rs), its `status` reads
//! a birth, and its `operation list` reads the seeded queue.

use stackless_tui::demo::{LiveHolder, v14};

use crate::harness::{Role, Stack, unix_now};

/// The demo's instances, by name, as `list` orders them.
const NAMES: [&str; 12] = [
    "api-gateway-dev",
    "billing-sandbox",
    "checkout-preview",
    "docs-site-pr-412",
    "flaky-gpu-worker",
    "inventory-sync",
    "marketing-preview",
    "ml-feature-store",
    "ml-training-run",
    "orders-e2e",
    "payments-staging",
    "preview-pr-88",
];

#[test]
fn the_demo_store_is_read_by_the_real_stackless() {
    let stack = Stack::new(Role::Embedded);
    let holder = LiveHolder {
        pid: std::process::id(),
        start_time: 1,
        host: "demo-box".into(),
    };
    v14::seed(&stack.db_path(), unix_now(), &holder).unwrap();

    let listed = stack.stackless(&["list", "--json"]);
    listed.expect_code(0);
    let doc = listed.json();
    assert_eq!(doc["ok"], true, "{doc:#}");
    let mut names: Vec<&str> = doc["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, NAMES);

    let status = stack.stackless(&["status", "checkout-preview", "--json"]);
    status.expect_code(0);
    let doc = status.json();
    assert_eq!(doc["substrate"], "render", "{doc:#}");
    assert_eq!(doc["status"], "active", "{doc:#}");

    let ops = stack.stackless(&["operation", "list", "--json"]);
    ops.expect_code(0);
    let doc = ops.json();
    let ops = doc["result"].as_array().expect("operations");
    let mut listed: Vec<&str> = ops.iter().filter_map(|o| o["id"].as_str()).collect();
    listed.sort_unstable();
    let db = stack.db();
    let mut seeded: Vec<String> = db
        .prepare("SELECT id FROM operations ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    seeded.sort_unstable();
    assert_eq!(listed, seeded, "{doc:#}");
    assert_eq!(listed.len(), 18);
    // The real controller ran the queue: the seeded failures read back
    // with their codes.
    let mut codes: Vec<(&str, &str)> = ops
        .iter()
        .filter_map(|o| Some((o["instance"].as_str()?, o["error"]["code"].as_str()?)))
        .filter(|(name, _)| *name == "preview-pr-88" || *name == "flaky-gpu-worker")
        .collect();
    codes.sort_unstable();
    assert_eq!(
        codes,
        [
            ("flaky-gpu-worker", "engine.teardown.survivors"),
            ("preview-pr-88", "local.health_failed")
        ]
    );
    stack.shutdown();
}
