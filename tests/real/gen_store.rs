//! The generated schema-14 stores the benchmarks run on
//! (`scripts/gen_v14_store.py`) are stores the real stackless 0.4.0
//! accepts: its `list` parses every instance's definition
//! (stackless-core-0.4.0 src/def/parse.rs, `def.parse.schema` otherwise).

use std::process::Command;

use crate::harness::{Role, Stack};

/// `gen_v14_store.py` for 20 instances (10 operations, 1 event each) at
/// the stack's store, then the real `stackless list --json` on it: exit 0,
/// `ok`, every instance listed.
#[test]
fn a_generated_v14_store_is_listed_by_the_real_stackless() {
    let stack = Stack::new(Role::Embedded);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_v14_store.py");
    let made = Command::new("python3")
        .arg(&script)
        .arg(stack.db_path())
        .args(["20", "10"])
        .output()
        .expect("python3");
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let listed = stack.stackless(&["list", "--json"]);
    listed.expect_code(0);
    let doc = listed.json();
    assert_eq!(doc["ok"], true, "{doc:#}");
    let names: Vec<&str> = doc["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    let wanted: Vec<String> = (0..20).map(|i| format!("inst-{i:06}")).collect();
    assert_eq!(names, wanted);
    stack.shutdown();
}
