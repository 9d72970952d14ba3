//! `snapshot --json`'s per-service `stage` is the real `stackless list
//! --json`'s, on a copy of the real 0.4.0 store made on another machine
//! (its process records name logs under another state dir, which 0.4.0's
//! local provider refuses to observe: `unknown`, not `absent`).

use crate::harness::{Role, Stack};

/// `(instance, service, stage)` of every service of every instance.
fn stages(doc: &serde_json::Value, service_key: &str) -> Vec<(String, String, String)> {
    let mut all = Vec::new();
    for instance in doc["instances"].as_array().expect("instances") {
        let name = instance["name"].as_str().expect("name");
        for service in instance["services"].as_array().expect("services") {
            all.push((
                name.to_owned(),
                service[service_key].as_str().expect("service").to_owned(),
                service["stage"].as_str().expect("stage").to_owned(),
            ));
        }
    }
    all.sort();
    all
}

#[test]
fn snapshot_stages_are_the_real_lists_on_a_copied_0_4_0_store() {
    let stack = Stack::new(Role::Embedded);
    std::fs::create_dir_all(stack.state_dir()).expect("state dir");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real-0.4.0-v14.db"
        ),
        stack.db_path(),
    )
    .expect("copy");
    let listed = stack.stackless(&["list", "--json"]);
    listed.expect_code(0);
    let listed = stages(&listed.json(), "service");
    let db = stack.db_path().display().to_string();
    let out = stack.tui(&["--state", &db, "snapshot", "--json"]);
    out.expect_code(0);
    let doc = out.json();
    let ours: Vec<_> = stages(&doc, "name")
        .into_iter()
        .filter(|(name, ..)| listed.iter().any(|(n, ..)| n == name))
        .collect();
    assert_eq!(ours, listed, "{doc:#}");
    // The processes recorded on the other machine: dead here, `unknown`.
    for name in ["alpha", "golf", "hotel", "india"] {
        assert!(
            listed.contains(&(name.into(), "web".into(), "unknown".into())),
            "{name}: {listed:?}"
        );
    }
    stack.shutdown();
}
