#!/usr/bin/env bash
# Re-measure the figures of BENCHMARKS.md on this machine, in one run:
#   1. the headless commands as whole processes beside the sqlite3 CLI
#      (scripts/time_commands.sh: schema-14 stores of 1k, 10k, 100k, then
#      the history store) -> $out/commands.md;
#   2. the console end to end in a pty (scripts/e2e_bench.py on schema-14
#      stores) -> $out/e2e.md, $out/e2e.json, and its log $out/e2e.log;
#   3. unless CRITERION=0, the criterion benchmarks and the round-1 table
#      (scripts/bench_report.py rewrites it in BENCHMARKS.md).
# The load average is recorded at the start and end of each phase
# ($out/load.txt). Each phase first waits (up to QUIET_WAIT seconds, 300
# by default) for the 1-minute load average to drop below 0.5.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
out="$target/bench"
mkdir -p "$out"
: >"$out/load.txt"

quiet() {
    local waited=0
    while ! awk '{ exit !($1 < 0.5) }' /proc/loadavg; do
        if [ "$waited" -ge "${QUIET_WAIT:-300}" ]; then
            echo "bench.sh: load average still $(cut -d' ' -f1 /proc/loadavg); measuring anyway" >&2
            return
        fi
        sleep 5
        waited=$((waited + 5))
    done
}
load() { echo "$1: $(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/load.txt"; }

# The binary a user gets, built alone: building it together with the
# benches, tests or examples gives it their test-only features (Cargo.toml).
nice -n 19 cargo build --release --locked --bin stackless-tui
quiet
load "commands start"
BIN="$target/release/stackless-tui" bash scripts/time_commands.sh >"$out/commands.md"
load "commands end"
quiet
load "e2e start"
python3 scripts/e2e_bench.py \
    --bin "$target/release/stackless-tui" \
    --gen v14 \
    --idle-100k-secs 0 \
    --workdir "$target/e2e-bench" \
    --json "$out/e2e.json" >"$out/e2e.md" 2>"$out/e2e.log"
load "e2e end"
if [ "${CRITERION:-1}" != 0 ]; then
    nice -n 19 cargo build --release --example gen_store
    nice -n 19 cargo bench --bench scale --no-run
    quiet
    load "criterion start"
    cargo bench --bench scale
    load "criterion end"
    python3 scripts/bench_report.py \
        --criterion "$target/criterion" \
        --e2e "$out/e2e.json" \
        --write BENCHMARKS.md
fi
cat "$out/load.txt" "$out/commands.md" "$out/e2e.md"
