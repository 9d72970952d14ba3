//! Write a large, reproducible stackless v4 store for benchmarks and load
//! tests (see `stackless_tui::bench_support` for the mix of rows).
//!
//! ```sh
//! cargo run --release --example gen_store -- --instances 100000 --seed 42 --out /tmp/s100k.db
//! ```
//!
//! The same `--instances`, `--seed`, `--now` and `--host` always write the
//! same rows. `--now` defaults to the current time (leases and backoffs are
//! spread around it); `--host` defaults to this machine's hostname as
//! `sysinfo` reports it, so the console probes the local half of the locks.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use stackless_tui::bench_support::{GenSpec, generate};

/// Generate a stackless v4 state store with N instances.
#[derive(Debug, Parser)]
struct Args {
    /// Number of instances (1 to 1,000,000).
    #[arg(long, default_value_t = 10_000)]
    instances: usize,
    /// PRNG seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where to write the store.
    #[arg(long)]
    out: PathBuf,
    /// Unix seconds the leases are spread around (default: now).
    #[arg(long)]
    now: Option<i64>,
    /// `holder_host` of the local locks (default: this machine's hostname).
    #[arg(long)]
    host: Option<String>,
    /// Replace `--out` (and its -wal/-shm) if it exists.
    #[arg(long)]
    force: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.instances == 0 || args.instances > 1_000_000 {
        eprintln!("gen_store: --instances must be 1 to 1000000");
        return ExitCode::from(2);
    }
    if args.out.exists() {
        if !args.force {
            eprintln!(
                "gen_store: {} exists (pass --force to replace it)",
                args.out.display()
            );
            return ExitCode::from(2);
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut p = args.out.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
    let spec = GenSpec {
        instances: args.instances,
        seed: args.seed,
        now: args
            .now
            .unwrap_or_else(stackless_tui::model::time::unix_now),
        host: args
            .host
            .or_else(sysinfo::System::host_name)
            .unwrap_or_else(|| "localhost".to_owned()),
    };
    let started = Instant::now();
    match generate(&args.out, &spec) {
        Ok(s) => {
            let bytes = std::fs::metadata(&args.out).map_or(0, |m| m.len());
            println!(
                "{}: {} instances ({} active, {} expired, {} tombstoned, {} past GC window), \
                 {} locks ({} on {}), {} backoffs, {} checkpoints; seed {} now {}; \
                 {:.1} MB in {:.2} s",
                args.out.display(),
                s.instances,
                s.active,
                s.expired,
                s.tombstoned,
                s.gc_due,
                s.locked,
                s.locked_local,
                spec.host,
                s.backoffs,
                s.checkpoints,
                spec.seed,
                spec.now,
                bytes as f64 / 1e6,
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen_store: {e}");
            ExitCode::FAILURE
        }
    }
}
