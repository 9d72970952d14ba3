//! Benchmarks for the per-instance look-ups that must not be linear in the
//! number of instances (docs: BENCHMARKS.md, "Linear lookups found in
//! review"), each at a size where a linear cost shows:
//!
//! - `lookups/filter_op/N`: a new snapshot of `N` instances, `N/10` of them
//!   with a pending controller operation, under the filter `op:pending`
//!   (`O(N x P)` before);
//! - `lookups/bulk_confirm/N`: `y` to a bulk `d` on `N` marked instances,
//!   `N/10` refused (operation pending), then the render loop's audit of
//!   the refusals (before: `M x P` checks, one `lstat` + `write` per
//!   refused line);
//! - `lookups/recheck_100/N`: 100 pre-teardown re-checks after a snapshot,
//!   on a schema-14 store of `N` instances each with a queued operation
//!   (before: two uncached `prepare`s and a walk of every pending row
//!   per call);
//! - `lookups/table/N`: `snapshot`'s table written for `N` instances
//!   (before: each instance's report built twice).
//!
//! Pure in-memory snapshots (no store) except `recheck`, which builds its
//! store from the 0.4.0 migrations in tests/fixtures/ddl/.
//!
//! `cargo bench --bench lookups` runs every size (1k, 10k);
//! `STACKLESS_BENCH_SIZES=10000` picks sizes. Under `cargo test
//! --all-targets` each runs once at 1k. No timing is asserted anywhere.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use stackless_tui::bench_support::{BENCH_NOW, app_config};
use stackless_tui::event::Event;
use stackless_tui::model::{
    Birth, Generation, Instance, Lease, OpStatus, Operation, Rows, Snapshot, Status,
};
use stackless_tui::recorder::{Forward, Recorder};
use stackless_tui::store::{Access, Store};
use stackless_tui::ui::App;

/// The 0.4.0 migrations, in order (as tests/common/stores.rs runs them).
const MIGRATIONS: [&str; 14] = [
    include_str!("../tests/fixtures/ddl/001_init.sql"),
    include_str!("../tests/fixtures/ddl/002_definition_dir.sql"),
    include_str!("../tests/fixtures/ddl/003_reaper.sql"),
    include_str!("../tests/fixtures/ddl/004_lock_host.sql"),
    include_str!("../tests/fixtures/ddl/005_dirty.sql"),
    include_str!("../tests/fixtures/ddl/006_operation_identity.sql"),
    include_str!("../tests/fixtures/ddl/007_resources.sql"),
    include_str!("../tests/fixtures/ddl/008_operations.sql"),
    include_str!("../tests/fixtures/ddl/009_stripe_contexts.sql"),
    include_str!("../tests/fixtures/ddl/010_secret_history.sql"),
    include_str!("../tests/fixtures/ddl/011_revisions.sql"),
    include_str!("../tests/fixtures/ddl/012_execution_grants.sql"),
    include_str!("../tests/fixtures/ddl/013_operation_inputs.sql"),
    include_str!("../tests/fixtures/ddl/014_placements.sql"),
];

fn sizes() -> Vec<usize> {
    if let Ok(list) = std::env::var("STACKLESS_BENCH_SIZES") {
        return list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
    }
    if std::env::args().any(|a| a == "--bench") {
        vec![1_000, 10_000]
    } else {
        vec![1_000]
    }
}

fn name(i: usize) -> String {
    format!("inst-{i:06}")
}

/// `n` active instances, leases expired, every tenth with a queued
/// operation (oldest first, as the store adapter orders them), then one
/// finished operation.
fn snapshot(n: usize) -> Arc<Snapshot> {
    let instances = (0..n)
        .map(|i| Instance {
            name: name(i),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(BENCH_NOW - 3_600),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 60,
                expires_at: BENCH_NOW - 60,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: Some(false),
            birth: Some(Birth::new(&format!("{i:032x}"), &format!("sl-{i:032x}"))),
        })
        .collect();
    let op = |i: usize, status: OpStatus| Operation {
        id: format!("op-{i:06}"),
        instance: name(i),
        instance_id: None,
        verb: "verify".into(),
        status,
        cancel_requested: false,
        created_at: BENCH_NOW - 10,
        updated_at: BENCH_NOW - 10,
        error_json: None,
        progress: None,
        ran: None,
    };
    let mut operations: Vec<Operation> = (0..n)
        .step_by(10)
        .map(|i| op(i, OpStatus::Queued))
        .collect();
    operations.push(op(1, OpStatus::Succeeded));
    let mut rows = Rows {
        generation: Generation::new(14),
        instances,
        ..Rows::default()
    };
    rows.operations = operations;
    Arc::new(Snapshot::from(rows))
}

fn key(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    let event = Event::Input(crossterm::event::Event::Key(KeyEvent::new(code, modifiers)));
    let _ = app.handle(event, BENCH_NOW);
}

fn app_with(snapshot: &Arc<Snapshot>, filter: &str) -> App {
    let mut app = App::new(app_config("/tmp/bench/state.db"), BENCH_NOW);
    app.handle(Event::Snapshot(Arc::clone(snapshot)), BENCH_NOW);
    if !filter.is_empty() {
        key(&mut app, KeyCode::Char('/'), KeyModifiers::NONE);
        for c in filter.chars() {
            key(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
        }
        key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    }
    app
}

/// A schema-14 store at `dir/state.db`: `n` active instances with leases,
/// `pending` of them with a queued operation, plus 10 finished ones.
fn v14_store(dir: &Path, n: usize, pending: usize) -> std::path::PathBuf {
    let path = dir.join("state.db");
    let conn = rusqlite::Connection::open(&path).expect("create");
    let _: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .expect("wal");
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        conn.execute_batch(&format!(
            "BEGIN; {sql} ; PRAGMA user_version = {}; COMMIT;",
            index + 1
        ))
        .expect("migration");
    }
    conn.execute_batch(&format!(
        "BEGIN;
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
         INSERT INTO instances (name, substrate, status, definition, created_at, dirty,
                                instance_id, resource_namespace)
         SELECT printf('inst-%06d', i), 'local', 'active', '[stack]', {c}, 0,
                printf('%032x', i), printf('sl-%032x', i) FROM n;
         INSERT INTO leases SELECT name, 60, {e} FROM instances;
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {plast})
         INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
         SELECT printf('op-%06d', i), printf('inst-%06d', i), 'verify', 'queued', 'null',
                {c} + i, {c} + i FROM n;
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9)
         INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
         SELECT printf('done-%06d', i), printf('inst-%06d', i), 'verify', 'succeeded', 'null',
                {c}, {c} FROM n;
         COMMIT;",
        last = n - 1,
        plast = pending.saturating_sub(1),
        c = BENCH_NOW - 3_600,
        e = BENCH_NOW - 60,
    ))
    .expect("rows");
    path
}

fn tune(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group("lookups");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10);
    group
}

fn lookups(c: &mut Criterion) {
    for n in sizes() {
        let snap = snapshot(n);
        let mut group = tune(c);
        let mut app = app_with(&snap, "op:pending");
        group.bench_with_input(BenchmarkId::new("filter_op", n), &n, |b, _| {
            b.iter(|| {
                app.handle(Event::Snapshot(Arc::clone(&snap)), BENCH_NOW);
                black_box(app.visible().len())
            });
        });
        let dir = tempfile::tempdir().expect("tempdir");
        let audit = stackless_tui::audit::AuditLog::open(
            &dir.path().join("stackless-tui/audit.jsonl"),
            u64::MAX,
        )
        .expect("audit");
        let recorder = Recorder::new(
            Some(Arc::new(std::sync::Mutex::new(audit))),
            Forward::Stdout,
        );
        group.bench_with_input(BenchmarkId::new("bulk_confirm", n), &n, |b, _| {
            b.iter_batched(
                || {
                    let mut app = app_with(&snap, "");
                    key(&mut app, KeyCode::Char('a'), KeyModifiers::CONTROL);
                    key(&mut app, KeyCode::Char('d'), KeyModifiers::NONE);
                    app
                },
                |mut app| {
                    let _ = app.handle(
                        Event::Input(crossterm::event::Event::Key(KeyEvent::new(
                            KeyCode::Char('y'),
                            KeyModifiers::NONE,
                        ))),
                        BENCH_NOW,
                    );
                    // What the render loop does with the UI's refusals.
                    for activity in app.drain_outbox() {
                        recorder.persist(&activity);
                    }
                    app
                },
                criterion::BatchSize::LargeInput,
            );
        });
        let store_dir = tempfile::tempdir().expect("tempdir");
        let path = v14_store(store_dir.path(), n, n);
        let mut store = Store::open(&path, Access::ReadOnly).expect("open");
        // A pass reads a snapshot, then re-checks each instance it acts on.
        let mut probe = stackless_tui::store::probe::FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        };
        store.snapshot(&mut probe).expect("snapshot");
        let names: Vec<String> = (0..n).step_by((n / 100).max(1)).map(name).collect();
        group.bench_with_input(BenchmarkId::new("recheck_100", n), &n, |b, _| {
            b.iter(|| {
                for name in &names {
                    black_box(store.recheck(name).expect("recheck"));
                }
            });
        });
        group.bench_with_input(BenchmarkId::new("table", n), &n, |b, _| {
            b.iter(|| {
                let mut out = Vec::with_capacity(n * 128);
                stackless_tui::headless::report::write_table(
                    &mut out,
                    &snap,
                    BENCH_NOW,
                    "/tmp/bench/state.db",
                    &std::collections::HashMap::new(),
                    &jiff::tz::TimeZone::UTC,
                    None,
                )
                .expect("write");
                black_box(out.len())
            });
        });
        group.finish();
    }
}

criterion_group!(benches, lookups);
criterion_main!(benches);
