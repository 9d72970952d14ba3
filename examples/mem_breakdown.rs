//! Where a whole snapshot's memory goes: reads `--state FILE` once with
//! the console's read (`Store::snapshot`) under a counting allocator and
//! prints the bytes live after it, the peak during it, and the live bytes
//! of each part (instances, operations, reap attempts, liveness), found by
//! dropping them one at a time. BENCHMARKS.md, "The console at 1M".
//!
//! `cargo run --release --example mem_breakdown -- FILE`

#![allow(clippy::unwrap_used, clippy::cast_precision_loss)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only
// the sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: as the caller's contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn mb(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn main() {
    let path = std::env::args().nth(1).expect("a store file");
    let mut store = stackless_tui::store::Store::open(
        std::path::Path::new(&path),
        stackless_tui::store::Access::ReadOnly,
    )
    .unwrap();
    let mut probe = stackless_tui::store::probe::SysinfoProbe::new();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let snapshot = store
        .snapshot(&mut stackless_tui::store::probe::CheckedProbe::new(
            &mut probe,
        ))
        .unwrap();
    let live = LIVE.load(Ordering::Relaxed) - before;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let n = snapshot.instances.len();
    println!(
        "instances {n}, operations {}, reap attempts {}, locks probed {}",
        snapshot.operations.len(),
        snapshot.reap_attempts.len(),
        snapshot.liveness.len()
    );
    println!(
        "size_of: Instance {} B, Arc<Instance> slot {} B, Operation {} B",
        size_of::<stackless_tui::model::Instance>(),
        size_of::<std::sync::Arc<stackless_tui::model::Instance>>(),
        size_of::<stackless_tui::model::Operation>()
    );
    println!(
        "snapshot live {} ({} B an instance); peak during the read {}",
        mb(live),
        live / n.max(1),
        mb(peak)
    );
    let mut rows =
        std::sync::Arc::try_unwrap(snapshot.rows.clone()).unwrap_or_else(|a| (*a).clone());
    drop(snapshot);
    let at = LIVE.load(Ordering::Relaxed);
    let ops = std::mem::take(&mut rows.operations);
    drop(ops);
    rows.reindex();
    let after_ops = LIVE.load(Ordering::Relaxed);
    let attempts = std::mem::take(&mut rows.reap_attempts);
    drop(attempts);
    let after_attempts = LIVE.load(Ordering::Relaxed);
    drop(rows);
    let after_rows = LIVE.load(Ordering::Relaxed);
    println!(
        "operations {}, reap attempts {}, instances {} ({} B an instance)",
        mb(at - after_ops),
        mb(after_ops - after_attempts),
        mb(after_attempts - after_rows),
        (after_attempts - after_rows) / n.max(1)
    );
}
