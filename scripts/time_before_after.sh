#!/usr/bin/env bash
# Builds of the console side by side on one store, as whole processes,
# each run interleaved with the sqlite3 CLI's snapshot join (-json) on the
# same file: RUNS (7) runs of each; the median run's seconds and peak RSS.
#   OLD=path/to/stackless-tui NEW=target/release/stackless-tui \
#     bash scripts/time_before_after.sh STORE.db
# BINS="label=path label=path ..." times those builds instead of OLD and
# NEW (before and after), in that order, e.g.
#   BINS="counts=/tmp/tui-counts main=/tmp/tui-final after=target/release/stackless-tui"
# WHAT="reap --once --dry-run" (one command, or several joined by ",")
# times only those. The load average is printed before and after.
set -u
DB=$1; RUNS=${RUNS:-7}
if [ -z "${BINS:-}" ]; then
  OLD=${OLD:?the build before}; NEW=${NEW:-target/release/stackless-tui}
  BINS="before=$OLD after=$NEW"
fi
read -r -a PAIRS <<< "$BINS"
JOIN="SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at, i.dirty, i.instance_id, i.resource_namespace, l.duration_secs, l.expires_at, o.operation, o.holder_pid, o.holder_start_time, o.acquired_at, o.holder_host, o.claim_id, r.attempts, r.last_error, r.next_retry_at FROM instances i LEFT JOIN leases l ON l.instance = i.name LEFT JOIN op_locks o ON o.instance = i.name LEFT JOIN reap_attempts r ON r.instance = i.name ORDER BY i.name;"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
t() { /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" >/dev/null 2>/dev/null; cat "$WORK/t"; }
med() { sort -n -k1 "$1" | awk '{a[NR]=$1; m[NR]=$2} END {print a[int((NR+1)/2)] "s", m[int((NR+1)/2)]/1024 " MB"}'; }
IFS=, read -r -a WHATS <<< "${WHAT:-snapshot,snapshot --json,reap --once --dry-run}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for what in "${WHATS[@]}"; do
  : > "$WORK/s"
  for n in "${!PAIRS[@]}"; do : > "$WORK/b$n"; done
  for i in $(seq "$RUNS"); do
    for n in "${!PAIRS[@]}"; do
      # shellcheck disable=SC2086 # $what is a command and its words
      t "${PAIRS[$n]#*=}" $what --state "$DB" >> "$WORK/b$n"
    done
    t sqlite3 -json "$DB" "$JOIN" >> "$WORK/s"
  done
  line="$what"
  for n in "${!PAIRS[@]}"; do line="$line | ${PAIRS[$n]%%=*}: $(med "$WORK/b$n")"; done
  echo "$line | sqlite3 -json join: $(med "$WORK/s")"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
