#!/usr/bin/env bash
# Every performance target of the round (BENCHMARKS.md, "The round's
# targets in one run"), before and after, in one run, each beside the
# sqlite3 CLI on the same file, the load printed between the parts:
#   BEFORE=path/to/old/stackless-tui AFTER=target/release/stackless-tui \
#     S100K=/tmp/v14-100k.db S1M=/tmp/v14-1m.db bash scripts/perf_targets.sh
# The stores are `python3 scripts/gen_v14_store.py OUT N N` (what the real
# 0.4.0 accepts); they are copied (never written) into WORK (default
# /tmp/perf-targets, removed at the end: the 1M copy is 1.3 GB).
# FLEET=0 skips the fleet's idle CPU (50 local agents, about 3 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${BEFORE:?the build before}
AFTER=${AFTER:-target/release/stackless-tui}
S100K=${S100K:?a v14 store of 100,000 instances}
S1M=${S1M:?a v14 store of 1,000,000 instances}
WORK=${WORK:-/tmp/perf-targets}
RUNS=${RUNS:-5}
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
load() { echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"; }
cp "$S100K" "$WORK/100k.db"
cp "$S1M" "$WORK/1m.db"
BINS="before=$BEFORE after=$AFTER"

echo "== headless, 100k"; load
BINS=$BINS RUNS=$RUNS WHAT="snapshot --json,snapshot,reap --once --dry-run" \
  bash scripts/time_before_after.sh "$WORK/100k.db"
echo "== headless, 1M"; load
BINS=$BINS RUNS=3 WHAT="snapshot --json,reap --once --dry-run" \
  bash scripts/time_before_after.sh "$WORK/1m.db"
echo "== the agent's first synced, 100k"; load
python3 scripts/protocol_bench.py --bin "$BEFORE" --bin "$AFTER" \
  --store "$WORK/100k.db" --first-only "$RUNS"
echo "== the console, 1M and 100k, recording on and off"; load
python3 scripts/console_first_rows.py --bin "before=$BEFORE" --bin "after=$AFTER" \
  --store "1m=$WORK/1m.db" --store "100k=$WORK/100k.db" --rounds 2 --settle 10
python3 scripts/console_first_rows.py --bin "before=$BEFORE" --bin "after=$AFTER" \
  --store "1m=$WORK/1m.db" --env STACKLESS_TUI_NO_RECORD=1 --rounds 2 --settle 10
if [ "${FLEET:-1}" != 0 ]; then
  echo "== the fleet view idle, 50 hosts"; load
  for bin in "$BEFORE" "$AFTER"; do
    python3 scripts/fleet_bench.py --bin "$bin" --hosts 50 --per-host 2000 \
      --changes 40 --idle-secs 60 --work "$WORK/fleet"
  done
fi
load
