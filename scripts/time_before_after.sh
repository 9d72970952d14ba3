#!/usr/bin/env bash
# Two builds of the console side by side on one store, as whole processes,
# each run interleaved with the sqlite3 CLI's snapshot join (-json) on the
# same file: RUNS (7) runs of each; the median run's seconds and peak RSS.
#   OLD=path/to/stackless-tui NEW=target/release/stackless-tui \
#     bash scripts/time_before_after.sh STORE.db
# WHAT="reap --once --dry-run" (one command, or several joined by ",")
# times only those.
set -u
DB=$1; RUNS=${RUNS:-7}
OLD=${OLD:?the build before}; NEW=${NEW:-target/release/stackless-tui}
JOIN="SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at, i.dirty, i.instance_id, i.resource_namespace, l.duration_secs, l.expires_at, o.operation, o.holder_pid, o.holder_start_time, o.acquired_at, o.holder_host, o.claim_id, r.attempts, r.last_error, r.next_retry_at FROM instances i LEFT JOIN leases l ON l.instance = i.name LEFT JOIN op_locks o ON o.instance = i.name LEFT JOIN reap_attempts r ON r.instance = i.name ORDER BY i.name;"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
t() { /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" >/dev/null 2>/dev/null; cat "$WORK/t"; }
IFS=, read -r -a WHATS <<< "${WHAT:-snapshot,snapshot --json,reap --once --dry-run}"
for what in "${WHATS[@]}"; do
  : > "$WORK/o"; : > "$WORK/n"; : > "$WORK/s"
  for i in $(seq $RUNS); do
    t $OLD $what --state $DB >> "$WORK/o"
    t $NEW $what --state $DB >> "$WORK/n"
    t sqlite3 -json $DB "$JOIN" >> "$WORK/s"
  done
  med() { sort -n -k1 $1 | awk '{a[NR]=$1; m[NR]=$2} END {print a[int((NR+1)/2)] "s", m[int((NR+1)/2)]/1024 " MB"}'; }
  echo "$what | before: $(med "$WORK/o") | after: $(med "$WORK/n") | sqlite3 -json join: $(med "$WORK/s")"
done
