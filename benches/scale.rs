//! Benchmarks at scale: snapshot read (with the sqlite3 CLI running the same
//! queries on the same file as the baseline), view model build, one frame
//! rendered to a 200x60 `TestBackend`, and one reaper planning pass, each at
//! 1k, 10k and 100k instances (stores from `bench_support::generate`, seed
//! 42, fixed `now`).
//!
//! `cargo bench --bench scale` runs everything (about 3 minutes on 2 cores).
//! Under `cargo test --all-targets` criterion runs each benchmark once, and
//! only at 1k (no `--bench` argument), so tests stay fast.
//! `STACKLESS_BENCH_SIZES=1000,10000` picks sizes.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use stackless_tui::bench_support::{BENCH_NOW, GenSpec, app_config, generate};
use stackless_tui::event::Event;
use stackless_tui::model::Snapshot;
use stackless_tui::reaper::decision;
use stackless_tui::store::probe::CheckedProbe;
use stackless_tui::store::probe::{FixedProbe, HostProbe, SysinfoProbe};
use stackless_tui::store::{Access, Store};
use stackless_tui::ui::{self, App, view};

/// The sqlite3 CLI used as the baseline.
const SQLITE3: &str = "/usr/bin/sqlite3";

/// Exactly the statements `Store::snapshot` runs on a v4 store written by
/// stackless, in one read transaction (keep in step with
/// `scan_instances` in src/store/mod.rs).
const SNAPSHOT_SQL: &str = "BEGIN;
SELECT sql FROM sqlite_master
WHERE type = 'table' AND name IN ('instances', 'leases', 'op_locks');
SELECT count(*) FROM instances;
SELECT name, substrate, status, created_at, tombstoned_at FROM instances;
SELECT instance, duration_secs, expires_at FROM leases;
SELECT instance, operation, holder_pid, holder_start_time, acquired_at, holder_host
FROM op_locks;
SELECT instance, attempts, last_error, next_retry_at
FROM reap_attempts ORDER BY instance;
COMMIT;";

/// The single `LEFT JOIN ... ORDER BY name` query the snapshot used before
/// (and still uses on stores where a byte-wise merge could differ), for
/// comparison.
const JOIN_SQL: &str = "BEGIN;
SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at,
       l.instance, l.duration_secs, l.expires_at,
       k.instance, k.operation, k.holder_pid, k.holder_start_time,
       k.acquired_at, k.holder_host
FROM instances i
LEFT JOIN leases l ON l.instance = i.name
LEFT JOIN op_locks k ON k.instance = i.name
ORDER BY i.name;
SELECT instance, attempts, last_error, next_retry_at
FROM reap_attempts ORDER BY instance;
COMMIT;";

fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn sizes() -> Vec<usize> {
    if let Ok(list) = std::env::var("STACKLESS_BENCH_SIZES") {
        return list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
    }
    if full_run() {
        vec![1_000, 10_000, 100_000]
    } else {
        vec![1_000]
    }
}

fn host() -> String {
    sysinfo::System::host_name().unwrap_or_else(|| "localhost".to_owned())
}

struct Fixture {
    n: usize,
    _dir: tempfile::TempDir,
    path: PathBuf,
    snapshot: Arc<Snapshot>,
}

fn fixture(n: usize) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    generate(
        &path,
        &GenSpec {
            instances: n,
            seed: 42,
            now: BENCH_NOW,
            host: host(),
        },
    )
    .expect("generate");
    let mut store = Store::open(&path, Access::ReadOnly).expect("open");
    let snapshot = Arc::new(store.snapshot(&mut fixed_probe()).expect("snapshot"));
    Fixture {
        n,
        _dir: dir,
        path,
        snapshot,
    }
}

fn fixed_probe() -> FixedProbe {
    FixedProbe {
        host: Some(host()),
        processes: Vec::new(),
    }
}

fn sqlite3_cli(path: &Path, sql: &str) {
    let status = Command::new(SQLITE3)
        .arg(path)
        .arg(sql)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run sqlite3");
    assert!(status.success());
}

fn app_with(snapshot: &Arc<Snapshot>) -> App {
    let mut app = App::new(app_config("/tmp/bench/state.db"), BENCH_NOW);
    app.handle(Event::Snapshot(Arc::clone(snapshot)), BENCH_NOW);
    app
}

fn tune(
    c: &mut Criterion,
    n: usize,
) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let _ = n;
    let mut group = c.benchmark_group("scale");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    if n >= 100_000 {
        group.sample_size(20);
    } else {
        group.sample_size(50);
    }
    group
}

fn benches(c: &mut Criterion) {
    let have_cli = Path::new(SQLITE3).exists();
    for n in sizes() {
        let f = fixture(n);
        let mut group = tune(c, n);

        // 1. Snapshot read: what the watcher does on every change.
        {
            let mut store = Store::open(&f.path, Access::ReadOnly).expect("open");
            let mut probe = fixed_probe();
            // The snapshots are dropped outside the timing (the console
            // drops a snapshot on the render thread when the next one
            // replaces it: `snapshot_drop` below).
            group.bench_function(BenchmarkId::new("snapshot_read", n), |b| {
                b.iter_with_large_drop(|| store.snapshot(&mut probe).expect("snapshot"));
            });
            // With the probe the watcher uses: sysinfo behind a kill(pid, 0)
            // check (the local half of the locks name pids that cannot
            // exist).
            let mut sys = SysinfoProbe::new();
            group.bench_function(BenchmarkId::new("snapshot_read_watcher_probe", n), |b| {
                b.iter_with_large_drop(|| {
                    store
                        .snapshot(&mut CheckedProbe::new(&mut sys))
                        .expect("snapshot")
                });
            });
            // With sysinfo alone (what the watcher did before).
            group.bench_function(BenchmarkId::new("snapshot_read_sysinfo_only", n), |b| {
                b.iter_with_large_drop(|| store.snapshot(&mut sys).expect("snapshot"));
            });
        }
        // What a replaced snapshot costs to free, and to copy (the watcher
        // copies the whole snapshot when only a lock's liveness changed).
        group.bench_function(BenchmarkId::new("snapshot_drop", n), |b| {
            b.iter_batched(
                || (*f.snapshot).clone(),
                drop,
                criterion::BatchSize::LargeInput,
            );
        });
        group.bench_function(BenchmarkId::new("snapshot_clone", n), |b| {
            b.iter_with_large_drop(|| (*f.snapshot).clone());
        });
        // Baseline: the sqlite3 CLI running the same statements on the same
        // file (a process per run, output to /dev/null).
        if have_cli {
            group.bench_function(BenchmarkId::new("sqlite3_cli", n), |b| {
                b.iter(|| sqlite3_cli(&f.path, SNAPSHOT_SQL));
            });
            group.bench_function(BenchmarkId::new("sqlite3_cli_join", n), |b| {
                b.iter(|| sqlite3_cli(&f.path, JOIN_SQL));
            });
        }

        // 2. View model build: a new snapshot applied to the UI state
        // (selection, counts), then the rows a frame shows.
        {
            let mut app = app_with(&f.snapshot);
            group.bench_function(BenchmarkId::new("view_model_apply", n), |b| {
                b.iter(|| {
                    app.handle(Event::Snapshot(Arc::clone(&f.snapshot)), BENCH_NOW);
                    black_box(app.counts())
                });
            });
            let snapshot = &f.snapshot;
            group.bench_function(BenchmarkId::new("view_rows_visible", n), |b| {
                b.iter(|| {
                    let rows: Vec<_> = snapshot
                        .instances
                        .iter()
                        .take(25)
                        .map(|i| {
                            view::instance_row(
                                i,
                                snapshot.lock_liveness(&i.name),
                                snapshot.reap_attempt(&i.name),
                                BENCH_NOW,
                            )
                        })
                        .collect();
                    black_box(rows)
                });
            });
            // A countdown tick: what the render loop does every second
            // before drawing.
            group.bench_function(BenchmarkId::new("tick_event", n), |b| {
                b.iter(|| black_box(app.handle(Event::Tick, BENCH_NOW)));
            });
        }

        // 3. One frame to a 200x60 TestBackend.
        {
            let app = app_with(&f.snapshot);
            let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
            group.bench_function(BenchmarkId::new("frame_200x60", n), |b| {
                b.iter(|| {
                    terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
                });
            });
            // A tick followed by its frame, with the clock moving (so
            // countdown cells change and the diff is not empty).
            let mut app = app_with(&f.snapshot);
            let mut now = BENCH_NOW;
            group.bench_function(BenchmarkId::new("tick_and_frame_200x60", n), |b| {
                b.iter(|| {
                    now += 1;
                    app.handle(Event::Tick, now);
                    terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
                });
            });
        }

        // 4. One reaper planning pass.
        group.bench_function(BenchmarkId::new("reaper_plan", n), |b| {
            b.iter(|| black_box(decision::plan(&f.snapshot, BENCH_NOW, true)));
        });
        group.finish();
        eprintln!(
            "scale: {} instances, {} locks, {} backoffs",
            f.n,
            f.snapshot.liveness.len(),
            f.snapshot.reap_attempts.len()
        );
    }
}

/// One liveness probe of a pid that no process has: what the watcher pays
/// per dead local lock holder, every second and on every snapshot.
fn probes(c: &mut Criterion) {
    let mut group = c.benchmark_group("probe");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let mut sys = SysinfoProbe::new();
    let dead = u32::try_from(stackless_tui::bench_support::IMPOSSIBLE_PID_BASE).expect("pid");
    group.bench_function("dead_pid_sysinfo", |b| {
        b.iter(|| black_box(sys.start_time(black_box(dead))));
    });
    group.bench_function("dead_pid_checked", |b| {
        let mut checked = CheckedProbe::new(&mut sys);
        b.iter(|| black_box(checked.start_time(black_box(dead))));
    });
    group.finish();
}

criterion_group!(scale, benches, probes);
criterion_main!(scale);
