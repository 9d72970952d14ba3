#!/usr/bin/env bash
# Times the console's headless commands as whole processes on schema-14
# (stackless 0.4.0) stores of 1k, 10k and 100k instances (as many finished
# operations), beside the sqlite3 CLI running the snapshot's join on the
# same file in the same run (and, in the last column, the very statements
# the snapshot runs). Each of RUNS (5) runs of a command comes right after
# a run of the join (interleaved); the table gives the median seconds of
# each, the median of the per-pair ratios, and the highest peak RSS. Then
# the same on a history store (scripts/gen_v14_store.py)
# (100k instances, 1M operations, 3M events; about 0.5 GB, deleted after;
# HISTORY=0 skips it). Prints a Markdown table (for BENCHMARKS.md).
#
#   cargo build --release --locked --bin stackless-tui && bash scripts/time_commands.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/stackless-tui}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
JOIN="SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at, i.dirty,
  i.instance_id, i.resource_namespace, l.duration_secs, l.expires_at, o.operation,
  o.holder_pid, o.holder_start_time, o.acquired_at, o.holder_host, o.claim_id,
  r.attempts, r.last_error, r.next_retry_at
  FROM instances i LEFT JOIN leases l ON l.instance = i.name
  LEFT JOIN op_locks o ON o.instance = i.name
  LEFT JOIN reap_attempts r ON r.instance = i.name ORDER BY i.name;"

# The statements the snapshot itself runs (scripts/e2e_bench.py keeps them
# in step with the code): the second baseline column.
STATEMENTS=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import e2e_bench; print(e2e_bench.SNAPSHOT_SQL_V14)')

RUNS=${RUNS:-5}
# median "seconds rss_kb" of RUNS runs of the command (rss: the highest).
# A run that fails is not timed as a success: its exit status and stderr
# end the script.
best() {
  local kb_max=0 status
  : >"$WORK/all"
  for _ in $(seq "$RUNS"); do
    status=0
    /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" >/dev/null 2>"$WORK/err" || status=$?
    if [ "$status" != 0 ]; then
      echo "time_commands.sh: '$*' exited $status:" >&2
      cat "$WORK/err" >&2
      exit 1
    fi
    read -r s kb < <(tail -n 1 "$WORK/t")
    echo "$s" >>"$WORK/all"
    [ "$kb" -gt "$kb_max" ] && kb_max=$kb
  done
  echo "$(sort -n "$WORK/all" | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}') $kb_max"
}

# One timed run: "seconds rss_kb" of the command (a failure ends the script).
once() {
  local status=0
  /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" >/dev/null 2>"$WORK/err" || status=$?
  if [ "$status" != 0 ]; then
    echo "time_commands.sh: '$*' exited $status:" >&2
    cat "$WORK/err" >&2
    exit 1
  fi
  tail -n 1 "$WORK/t"
}

median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

row() { # label db
  local label=$1 db=$2
  read -r statements _ < <(best sqlite3 "$db" "$STATEMENTS")
  for cmd in "snapshot" "snapshot --json" "reap --once --dry-run"; do
    # Interleaved: each run of the command right after a run of its
    # baseline, so drift in the machine's speed moves both alike; the
    # ratio is the median of the per-pair ratios.
    local join=("$JOIN") flag=()
    [ "$cmd" = "snapshot --json" ] && flag=(-json)
    : >"$WORK/pairs"
    local kb_max=0
    for _ in $(seq "$RUNS"); do
      read -r b _ < <(once sqlite3 "${flag[@]}" "$db" "${join[@]}")
      # shellcheck disable=SC2086
      read -r s kb < <(once "$BIN" --state "$db" $cmd --down-cmd "true {name}")
      [ "$kb" -gt "$kb_max" ] && kb_max=$kb
      echo "$s $b" >>"$WORK/pairs"
    done
    s=$(awk '{print $1}' "$WORK/pairs" | median)
    b=$(awk '{print $2}' "$WORK/pairs" | median)
    ratio=$(awk '$2 > 0 {print $1 / $2}' "$WORK/pairs" | median)
    ratio=$(awk -v r="$ratio" 'BEGIN{ if (r != "") printf "%.1fx", r; else print "-" }')
    echo "| $label | \`$cmd\` | $s | $(awk "BEGIN{printf \"%.1f\", $kb_max/1024}") | $b | $ratio | $statements |"
  done
}

echo "| instances | command | seconds | peak RSS (MB) | sqlite3 join (s) | ratio | sqlite3, the snapshot's statements (s) |"
echo "|---|---|---|---|---|---|---|"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for n in 1000 10000 100000; do
  db="$WORK/v14-$n.db"
  python3 scripts/gen_v14_store.py "$db" "$n" "$n"
  row "$n" "$db"
  rm -f "$db"*
done
if [ "${HISTORY:-1}" != 0 ]; then
  db="$WORK/v14-hist.db"
  python3 scripts/gen_v14_store.py "$db" 100000 1000000 3
  row "100000 + 1M ops, 3M events" "$db"
  rm -f "$db"*
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
