//! The store adapter per schema generation (2, 4, 5, 6, 14): what each
//! reads, that nothing unknown is written and nothing migrated, and the
//! schema-14 queue read (exact rows, bounded query plans).

use crate::common::stores::{self, ALPHA_ID, CHARLIE_ID, SHARED_ERROR};
use crate::common::{CAPTURE, fixture};
use stackless_tui::model::generation::Era;
use stackless_tui::model::{Birth, OpStatus};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

fn vm() -> FixedProbe {
    FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    }
}

/// `(user_version, table count, schema sql)` of a store file, to compare
/// before and after the console touched it.
fn schema_of(path: &std::path::Path) -> (i64, Vec<String>) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let v = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT coalesce(sql, name) FROM sqlite_master ORDER BY name")
        .unwrap();
    let sql = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (v, sql)
}

#[test]
fn every_generation_opens_reads_what_it_knows_and_migrates_nothing() {
    struct Case {
        name: &'static str,
        make: fn() -> (tempfile::TempDir, std::path::PathBuf),
        era: Era,
        gc: bool,
        instances: usize,
        dirty_known: bool,
        birth_known: bool,
        operations: usize,
    }
    let cases = [
        Case {
            name: "v2",
            make: || fixture("older-v2.db"),
            era: Era::Older,
            gc: false,
            instances: 3,
            dirty_known: false,
            birth_known: false,
            operations: 0,
        },
        Case {
            name: "v4",
            make: || fixture("stackless-real-v4.db"),
            era: Era::Contract,
            gc: true,
            instances: 8,
            dirty_known: false,
            birth_known: false,
            operations: 0,
        },
        Case {
            name: "v5",
            make: stores::v5,
            era: Era::Contract,
            gc: true,
            instances: 5,
            dirty_known: true,
            birth_known: false,
            operations: 0,
        },
        Case {
            name: "v6",
            make: || fixture("newer-v6.db"),
            era: Era::Unreleased,
            gc: false,
            instances: 3,
            dirty_known: true,
            birth_known: false,
            operations: 0,
        },
        Case {
            name: "v14",
            make: stores::v14,
            era: Era::Controller,
            gc: false,
            instances: 5,
            dirty_known: true,
            birth_known: true,
            operations: 5,
        },
    ];
    for case in cases {
        let (_dir, path) = (case.make)();
        let before = schema_of(&path);
        let mut store = Store::open(&path, Access::ReadWrite).unwrap();
        assert_eq!(store.generation().era(), case.era, "{}", case.name);
        assert_eq!(store.generation().allows_gc(), case.gc, "{}", case.name);
        let snap = store.snapshot(&mut vm()).unwrap();
        assert_eq!(snap.instances.len(), case.instances, "{}", case.name);
        for instance in &snap.instances {
            assert_eq!(instance.dirty.is_some(), case.dirty_known, "{}", case.name);
            assert_eq!(instance.birth.is_some(), case.birth_known, "{}", case.name);
        }
        assert_eq!(snap.operations.len(), case.operations, "{}", case.name);
        let _ = store.recheck("alpha").unwrap();
        drop(store);
        assert_eq!(schema_of(&path), before, "{}: schema untouched", case.name);
    }
}

#[test]
fn v5_reads_dirty() {
    let (_dir, path) = stores::v5();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    assert_eq!(
        store.generation().release(),
        Some("stackless 0.2.0 or 0.3.0")
    );
    let snap = store.snapshot(&mut vm()).unwrap();
    assert_eq!(snap.instance("delta").unwrap().dirty, Some(true));
    assert_eq!(snap.instance("alpha").unwrap().dirty, Some(false));
}

#[test]
fn v14_reads_births_locks_and_the_queue_exactly() {
    let (_dir, path) = stores::v14();
    stores::exec(
        &path,
        &format!(
            "INSERT INTO op_locks VALUES ('delta', 'up', 77, 5, {}, 'vm', '0b7e6f5e-1c1a-4c55-9a43-6c9e3a1f2b10');",
            CAPTURE - 10
        ),
    );
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    assert_eq!(store.generation().release(), Some("stackless 0.4.0"));
    let snap = store.snapshot(&mut vm()).unwrap();
    let alpha = snap.instance("alpha").unwrap();
    assert_eq!(
        alpha.birth,
        Some(Birth::new(ALPHA_ID, &format!("sl-{ALPHA_ID}")))
    );
    let charlie = snap.instance("charlie").unwrap();
    assert_eq!(charlie.birth.as_ref().unwrap().instance_id(), CHARLIE_ID);
    assert_eq!(
        charlie.birth.as_ref().unwrap().resource_namespace(),
        "charlie"
    );
    let delta = snap.instance("delta").unwrap();
    assert_eq!(delta.dirty, Some(true));
    assert_eq!(
        delta.lock.as_ref().unwrap().claim_id.as_deref(),
        Some("0b7e6f5e-1c1a-4c55-9a43-6c9e3a1f2b10")
    );
    let ops: Vec<(&str, &str)> = snap
        .operations
        .iter()
        .map(|op| (op.id.as_str(), op.status.as_str()))
        .collect();
    assert_eq!(
        ops,
        [
            ("op-alpha-down", "running"),
            ("op-delta-up", "queued"),
            ("op-echo-verify", "succeeded"),
            ("op-bravo-up", "failed"),
            ("op-charlie-down", "succeeded"),
        ]
    );
    let running = snap.pending_operation("alpha").unwrap();
    assert_eq!(running.verb, "down");
    assert_eq!(running.status, OpStatus::Running);
    assert_eq!(running.created_at, CAPTURE - 50);
    assert_eq!(
        running
            .progress
            .as_ref()
            .map(stackless_tui::model::operation::StepProgress::text)
            .as_deref(),
        Some("start:web 2/3")
    );
    assert_eq!(snap.pending_operation("bravo"), None);
    assert_eq!(snap.pending_operations().len(), 2);
    let failed = &snap.finished_operations()[1];
    assert_eq!(failed.error_json.as_deref(), Some(SHARED_ERROR));
    assert_eq!(
        stackless_tui::model::envelope::parse_error(failed.error_json.as_deref().unwrap())
            .unwrap()
            .code,
        "engine.source_override.shared"
    );
    assert_eq!(failed.progress.as_ref().unwrap().event, "Failed");
    let verify = &snap.finished_operations()[0];
    assert_eq!(verify.progress, None, "the journal marker is no progress");
    // The recheck sees the birth and the pending operation.
    let recheck = store.recheck("alpha").unwrap().unwrap();
    assert_eq!(recheck.birth, alpha.birth);
    assert_eq!(
        recheck.pending,
        Some(("down".to_owned(), OpStatus::Running))
    );
    assert_eq!(store.recheck("bravo").unwrap().unwrap().pending, None);
}

#[test]
fn v14_finished_operations_are_capped_at_fifty_newest_first() {
    let (_dir, path) = stores::v14();
    let mut sql = String::from("BEGIN;");
    for n in 0..80 {
        sql.push_str(&format!(
            "INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
             VALUES ('bulk-{n:03}', 'echo', 'verify', 'succeeded', 'null', {t}, {t});",
            t = CAPTURE + n
        ));
    }
    sql.push_str("COMMIT;");
    stores::exec(&path, &sql);
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snap = store.snapshot(&mut vm()).unwrap();
    assert_eq!(snap.pending_operations().len(), 2);
    let finished = snap.finished_operations();
    assert_eq!(finished.len(), 50);
    assert_eq!(finished[0].id, "bulk-079");
    assert_eq!(finished[49].id, "bulk-030");
}

#[test]
fn v14_queue_reads_use_indices_never_a_full_scan() {
    let (_dir, path) = stores::v14();
    let store = Store::open(&path, Access::ReadOnly).unwrap();
    let plans = store.operation_query_plans().unwrap();
    let plan = |what: &str| {
        plans
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, lines)| lines.join(" | "))
            .unwrap()
    };
    let pending = plan("pending");
    assert!(
        pending.contains("USING INDEX operations_pending (status=?)"),
        "{pending}"
    );
    let finished = plan("finished");
    // A rowid-order walk stopped by the LIMIT: no sort of the whole table.
    assert!(finished.starts_with("SCAN operations"), "{finished}");
    assert!(!finished.contains("TEMP B-TREE"), "{finished}");
    for what in ["newest_event", "first_event", "events"] {
        let event = plan(what);
        assert!(
            event.contains("USING COVERING INDEX operation_event_cursor (operation_id=?)")
                || event.contains("USING INDEX operation_event_cursor (operation_id=?)"),
            "{what}: {event}"
        );
        assert!(!event.contains("TEMP B-TREE"), "{what}: {event}");
    }
}

/// The operation overlay's read: every event of one operation, in the
/// order written (`sequence`), from the real 0.4.0 store.
#[test]
fn v14_operation_events_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real-0.4.0-v14.db"
        ),
        &path,
    )
    .unwrap();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let events = store
        .operation_events("9b8fd650-07e8-4ff7-8cd7-0a952e02007b")
        .unwrap();
    type Shown = (i64, String, String, Option<i64>, Option<i64>);
    let shown: Vec<Shown> = events
        .iter()
        .map(|e| {
            (
                e.sequence,
                e.event.clone(),
                e.step
                    .as_ref()
                    .map(stackless_tui::model::operation::StepProgress::text)
                    .unwrap_or_default(),
                e.at_ms,
                e.duration_ms,
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                1,
                "Started".into(),
                "materialize:web 1/3".into(),
                Some(1_796_117_794_962),
                None
            ),
            (
                2,
                "Completed".into(),
                "materialize:web 1/3".into(),
                Some(1_796_117_794_993),
                Some(28)
            ),
            (
                3,
                "Started".into(),
                "start:web 2/3".into(),
                Some(1_796_117_795_009),
                None
            ),
            (
                4,
                "Completed".into(),
                "start:web 2/3".into(),
                Some(1_796_117_795_067),
                Some(50)
            ),
            (
                5,
                "Started".into(),
                "health:web 3/3".into(),
                Some(1_796_117_795_090),
                None
            ),
            (
                6,
                "Completed".into(),
                "health:web 3/3".into(),
                Some(1_796_117_795_743),
                Some(645)
            ),
        ]
    );
    assert_eq!(store.operation_events("no-such-id").unwrap(), []);
}

#[test]
fn v14_detail_reads_the_birth_never_payloads_or_secrets() {
    use stackless_tui::model::detail::{Placement, Resource, Revision};
    let (_dir, path) = stores::v14();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let detail = store.instance_detail("alpha").unwrap().unwrap();
    assert_eq!(
        detail.resources,
        vec![
            Resource {
                kind: "process".into(),
                id: "4242".into(),
                phase: "ready".into(),
                ownership: "owned".into(),
                provider: "local".into(),
                step_id: "start:web".into(),
                updated_at: Some(CAPTURE - 900),
            },
            Resource {
                kind: "stripe-environment".into(),
                id: "prj_1".into(),
                phase: "created".into(),
                ownership: "shared".into(),
                provider: "stripe".into(),
                step_id: String::new(),
                updated_at: Some(CAPTURE - 1000),
            },
        ]
    );
    assert_eq!(
        detail.placements,
        vec![
            Placement {
                node: "integration:stripe".into(),
                provider: "stripe".into()
            },
            Placement {
                node: "service:web".into(),
                provider: "local".into()
            },
        ]
    );
    let revision = detail.revision.clone().unwrap();
    assert_eq!(
        revision,
        Revision {
            desired: "rev-2".into(),
            applied: Some("rev-1".into())
        }
    );
    assert!(revision.pending());
    let web = &detail.observations[1];
    assert_eq!(web.node, "service:web");
    assert_eq!(web.readiness.as_deref(), Some("ready"));
    assert_eq!(web.existence.as_deref(), Some("present"));
    assert_eq!(web.configuration.as_deref(), Some("pending"));
    assert_eq!(web.observed_at, Some(CAPTURE - 86));
    // Evidence that is not JSON reads as unknown, not an error.
    assert_eq!(detail.observations[0].readiness, None);
    assert!(!format!("{detail:?}").contains("SECRET"));
    // delta: applied == desired, not pending; no resources.
    let delta = store.instance_detail("delta").unwrap().unwrap();
    assert!(!delta.revision.unwrap().pending());
    assert!(delta.resources.is_empty());
    // A v5 store has none of it.
    let (_d5, v5) = stores::v5();
    let detail = Store::open(&v5, Access::ReadOnly)
        .unwrap()
        .instance_detail("alpha")
        .unwrap()
        .unwrap();
    assert!(detail.resources.is_empty() && detail.revision.is_none());
}

/// Scale: 1,000,000 operations (10 pending) and 3,000,000 events; the
/// snapshot must stay bounded by the indices. `cargo test --release --test
/// integration -- --ignored v14_snapshot_scale --nocapture` prints the time.
#[test]
#[ignore = "builds a 4,000,000-row store; run by hand"]
fn v14_snapshot_scale() {
    let (_dir, path) = stores::v14();
    stores::exec(
        &path,
        "BEGIN;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
         INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
         SELECT 'gen-' || i, 'echo', 'verify',
                CASE WHEN i % 100000 = 0 THEN 'queued' ELSE 'succeeded' END,
                'null', i, i FROM n;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000)
         INSERT INTO operation_events (operation_id, event_json, recorded_at)
         SELECT 'gen-' || (1 + (i - 1) / 3),
                '{\"event\":\"Started\",\"step_id\":\"start:web\",\"index\":' || (1 + (i - 1) % 3) || ',\"total\":3}',
                i FROM n;
         COMMIT;",
    );
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let started = std::time::Instant::now();
    let snap = store.snapshot(&mut vm()).unwrap();
    let took = started.elapsed();
    eprintln!("v14 snapshot, 1M operations / 3M events: {took:?}");
    assert_eq!(snap.pending_operations().len(), 12);
    assert_eq!(snap.finished_operations().len(), 50);
    assert_eq!(snap.finished_operations()[0].id, "gen-999999");
    assert_eq!(
        snap.finished_operations()[0]
            .progress
            .as_ref()
            .unwrap()
            .text(),
        "start:web 3/3"
    );
    assert!(took < std::time::Duration::from_secs(1), "{took:?}");
}
