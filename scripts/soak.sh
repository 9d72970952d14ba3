#!/usr/bin/env bash
# The soak beside the real stackless 0.4.0, long version:
# tests/real/soak.rs for SOAK_SECS seconds (1800 by default) of creating,
# renewing and reaping, then its checks: PRAGMA integrity_check, every
# teardown the console ran audited exactly once with its effect in the
# store, every recorded failure in reap_attempts (or cleared by a later
# success), nothing torn down twice, no renewed instance torn down.
# The counts go to $out/soak.json, the test's output to $out/soak.log, and
# the wrapper's calls, the audit trail and the final rows to $out/artifacts/.
#   bash scripts/soak.sh            # 30 minutes
#   SOAK_SECS=300 bash scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
out="$target/soak"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cargo build --locked --example real_stackless
echo "soak.sh: $(date -u +%FT%TZ) start, ${SOAK_SECS:-1800} s" | tee "$out/soak.log"
STACKLESS_TUI_SOAK_SECS="${SOAK_SECS:-1800}" \
STACKLESS_TUI_SOAK_REPORT="$out/soak.json" \
STACKLESS_TUI_SOAK_KEEP="$out/artifacts" \
    cargo test --locked --test real soak:: -- --nocapture 2>&1 | tee -a "$out/soak.log"
echo "soak.sh: $(date -u +%FT%TZ) end" | tee -a "$out/soak.log"
cat "$out/soak.json"
