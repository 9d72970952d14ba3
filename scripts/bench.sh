#!/usr/bin/env bash
# Re-measure every figure in BENCHMARKS.md on this machine and rewrite its
# table: criterion benchmarks, then the end-to-end pty measurements, then the
# report. About 8 minutes on 2 cores. Run it on an otherwise idle machine:
# each phase first waits (up to 5 minutes) for the 1-minute load average to
# drop below 0.5, and the table records the load average it ran under.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"

quiet() {
    for _ in $(seq 60); do
        awk '{ exit !($1 < 0.5) }' /proc/loadavg && return
        sleep 5
    done
    echo "bench.sh: load average still $(cut -d' ' -f1 /proc/loadavg); measuring anyway" >&2
}

cargo build --release --example gen_store
cargo bench --bench scale --no-run
quiet
cargo bench --bench scale
# The binary a user gets, built last: building the benches (or tests, or the
# binary together with an example) leaves target/release/stackless-tui built
# with the dev targets' test-only features (Cargo.toml).
cargo build --release --bin stackless-tui
quiet
python3 scripts/e2e_bench.py \
    --bin "$target/release/stackless-tui" \
    --gen "$target/release/examples/gen_store" \
    --workdir "$target/e2e-bench" \
    --json "$target/e2e-bench.json"
python3 scripts/bench_report.py \
    --criterion "$target/criterion" \
    --e2e "$target/e2e-bench.json" \
    --write BENCHMARKS.md
