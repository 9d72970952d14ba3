//! A real `up`: the row stackless 0.4.0 writes, as this crate reads it.

use stackless_tui::model::Status;
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::harness::{Role, Stack, survivors, unix_now};

/// `up --lease 10m` → one active local instance with a 600 s lease in our
/// snapshot of a schema-14 store, and a birth (`instance_id`,
/// `resource_namespace`) in the row.
#[test]
fn up_appears_in_the_snapshot_with_its_birth() {
    let stack = Stack::new(Role::Embedded);
    let before = unix_now();
    let up = stack.up("demo", "10m");
    let after = unix_now();
    up.expect_code(0);
    let envelope = up.json();
    assert_eq!(envelope["schema_version"], 2);
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["instance"], "demo");
    assert_eq!(envelope["substrate"], "local");
    let instance_id = envelope["instance_id"]
        .as_str()
        .expect("instance_id")
        .to_owned();
    // The harness sees what it must stop: the embedded controller and the
    // service, both found by the stack's root.
    let running: Vec<String> = survivors(stack.root())
        .into_iter()
        .map(|s| s.cmdline)
        .collect();
    assert!(
        running
            .iter()
            .any(|c| c.contains("real_stackless daemon run --state-dir")
                && c.ends_with("--embedded")),
        "{running:#?}"
    );
    assert!(
        running.iter().any(|c| c.contains("-m http.server")),
        "{running:#?}"
    );

    let mut store = Store::open(&stack.db_path(), Access::ReadOnly).expect("open");
    let snapshot = store.snapshot(&mut SysinfoProbe::new()).expect("snapshot");
    let rows = &snapshot.rows;
    assert_eq!(rows.generation.user_version, 14);
    assert_eq!(rows.instances.len(), 1);
    let demo = rows.instance("demo").expect("demo");
    assert_eq!(&*demo.substrate, "local");
    assert_eq!(demo.status, Status::Active);
    assert_eq!(demo.tombstoned_at, None);
    assert!(demo.anomalies.is_empty(), "{:?}", demo.anomalies);
    assert!(demo.lock.is_none(), "up released its lock: {:?}", demo.lock);
    let lease = demo.lease.expect("lease");
    assert_eq!(lease.duration_secs, 600);
    // Renewed to the full duration at the end of `up` (spec §8.2).
    assert!(
        (before + 600..=after + 600).contains(&lease.expires_at),
        "expires_at {} not in {}..={}",
        lease.expires_at,
        before + 600,
        after + 600
    );
    let created = demo.created_at.expect("created_at");
    assert!((before..=after).contains(&created), "created_at {created}");

    // The birth, in the row (spec §6): a new 0.4.0 birth is `sl-<id>`.
    let (id, namespace, dirty): (String, String, i64) = stack
        .db()
        .query_row(
            "SELECT instance_id, resource_namespace, dirty FROM instances WHERE name = 'demo'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("birth");
    assert_eq!(id, instance_id);
    assert_eq!(id.len(), 32);
    assert!(
        id.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{id}"
    );
    assert_eq!(namespace, format!("sl-{id}"));
    assert_eq!(dirty, 0);
    // Our snapshot reads the same birth.
    let birth = demo.birth.as_ref().expect("a v14 row has a birth");
    assert_eq!(birth.instance_id(), id);
    assert_eq!(birth.resource_namespace(), namespace);

    // The up operation the controller ran, succeeded and bound to the birth.
    let (verb, status, bound): (String, String, Option<String>) = stack
        .db()
        .query_row(
            "SELECT verb, status, instance_id FROM operations WHERE instance = 'demo'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("one operation");
    assert_eq!((verb.as_str(), status.as_str()), ("up", "succeeded"));
    assert_eq!(bound.as_deref(), Some(id.as_str()));

    // The headless snapshot of the same store.
    let db = stack.db_path().display().to_string();
    let out = stack.tui(&["--state", &db, "snapshot", "--json"]);
    out.expect_code(0);
    let report = out.json();
    assert_eq!(report["store_user_version"], 14);
    let instances = report["instances"].as_array().expect("instances");
    assert_eq!(instances.len(), 1);
    assert_eq!(instances[0]["name"], "demo");
    assert_eq!(instances[0]["status"], "active");
    assert_eq!(instances[0]["substrate"], "local");
    assert_eq!(instances[0]["lease"]["duration_secs"], 600);
    assert_eq!(instances[0]["lease"]["expired"], false);
    assert_eq!(instances[0]["reaper"], serde_json::Value::Null);

    stack.down("demo").expect_code(0);
    stack.shutdown();
}
