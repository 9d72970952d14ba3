#!/usr/bin/env bash
# Re-measure every figure in BENCHMARKS.md on this machine and rewrite its
# table: criterion benchmarks, then the end-to-end pty measurements, then the
# report. About 10 minutes on 2 cores; run it on an otherwise idle machine
# (the table records the load average).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --bin stackless-tui --example gen_store
cargo bench --bench scale
python3 scripts/e2e_bench.py \
    --bin "$target/release/stackless-tui" \
    --gen "$target/release/examples/gen_store" \
    --workdir "$target/e2e-bench" \
    --json "$target/e2e-bench.json"
python3 scripts/bench_report.py \
    --criterion "$target/criterion" \
    --e2e "$target/e2e-bench.json" \
    --write BENCHMARKS.md
