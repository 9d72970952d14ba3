#!/usr/bin/env bash
# Create real stackless state stores with the released CLIs (0.2.0, 0.3.0,
# 0.4.0) for tests/fixtures/real-*.db, plus the --json envelopes 0.4.0 prints.
#
#   scripts/make-real-fixtures.sh [0.2.0|0.3.0|0.4.0 ...]   (default: all three)
#
# Binaries (install with `cargo install stackless --version X --locked
# --root /opt/stackless-X`):
#   STACKLESS_020=/opt/stackless-0.2.0/bin/stackless
#   STACKLESS_030=/opt/stackless-0.3.0/bin/stackless
#   STACKLESS_040=/opt/stackless-0.4.0/bin/stackless
# 0.2.0 and 0.3.0 do not link on rustc 1.95 (duplicate SQLite symbols from
# libsql-ffi and libsqlite3-sys); install them with
#   RUSTFLAGS="-C link-arg=-Wl,--allow-multiple-definition" cargo install ...
# FIXTURES_OUT (default tests/fixtures) receives the stores and envelopes/.
#
# Every run is hermetic: a private HOME (=> ~/.local/state/stackless, the
# state dir stackless derives from XDG_STATE_HOME/HOME), private XDG dirs, a
# free STACKLESS_PROXY_PORT, STACKLESS_NO_SELF_UPDATE=1. The daemon is the
# *operator* daemon (no --state-dir flag: an explicit state dir makes the CLI
# spawn an embedded daemon without the lease reaper). Services are host
# processes: `python3 -m http.server $PORT --bind 127.0.0.1`.
#
# Paths under the private HOME are rewritten to /home/operator in the copies.
# The script stops the daemon, kills every process it started (found by the
# private root in their cmdline / cwd / environment) and checks none is left.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${FIXTURES_OUT:-$REPO/tests/fixtures}
STACKLESS_020=${STACKLESS_020:-/opt/stackless-0.2.0/bin/stackless}
STACKLESS_030=${STACKLESS_030:-/opt/stackless-0.3.0/bin/stackless}
STACKLESS_040=${STACKLESS_040:-/opt/stackless-0.4.0/bin/stackless}
PY_REAL=$(python3 -c 'import sys; print(sys.executable)')
GIT=$(command -v git)
CHATTR=$(command -v chattr)

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

free_port() {
  "$PY_REAL" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# jget FILE PYEXPR — evaluate PYEXPR against the JSON document `d` in FILE.
jget() {
  "$PY_REAL" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# run NAME CMD... — run a CLI command from the current directory, stdout to
# $RUN/out/NAME.json, stderr to NAME.err, exit status to NAME.rc. Never fails.
run() {
  local name=$1; shift
  local rc=0
  "$@" >"$RUN/out/$name.json" 2>"$RUN/out/$name.err" || rc=$?
  echo "$rc" >"$RUN/out/$name.rc"
  log "$name: exit $rc"
  return 0
}

# Processes this run started: daemon (--state-dir $RUN/... on its cmdline),
# services (cwd under $RUN), helpers (environment names $RUN).
# The script's own children (this scan, `tr`, `sleep`) inherit the private
# HOME too: descendants of the script are not counted.
our_pids() {
  "$PY_REAL" - "$RUN" "$$" <<'EOF'
import os, sys
root = sys.argv[1].encode()
script = int(sys.argv[2])
def ppid(p):
    try:
        return int(open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0
def ours(p):
    while p > 1:
        if p == script:
            return True
        p = ppid(p)
    return False
for pid in filter(str.isdigit, os.listdir('/proc')):
    p = int(pid)
    if ours(p):
        continue
    try:
        cmd = open(f'/proc/{pid}/cmdline', 'rb').read()
        env = open(f'/proc/{pid}/environ', 'rb').read()
        try:
            cwd = os.readlink(f'/proc/{pid}/cwd').encode()
        except OSError:
            cwd = b''
    except OSError:
        continue
    if root in cmd or cwd.startswith(root) or b'HOME=' + root in env:
        print(p)
EOF
}

stop_everything() {
  log "stopping daemon"
  "$SL" daemon stop >/dev/null 2>&1 || true
  local pids tries=0 waited=0
  # Let the daemon drain and exit on its own first.
  while pgrep -f -- "daemon run --state-dir $STATE" >/dev/null && [ $waited -lt 15 ]; do
    sleep 1; waited=$((waited + 1))
  done
  while :; do
    pids=$(our_pids | tr '\n' ' ')
    [ -z "${pids// /}" ] && break
    tries=$((tries + 1))
    if [ $tries -gt 20 ]; then
      log "processes still alive after SIGKILL: $pids"; ps -o pid,ppid,cmd -p "$(echo $pids | tr ' ' ,)" >&2 || true
      return 1
    fi
    if [ $tries -le 5 ]; then sig=TERM; else sig=KILL; fi
    log "kill -$sig $pids"
    # shellcheck disable=SC2086
    kill -s $sig $pids 2>/dev/null || true
    sleep 1
  done
  log "no process of this run is left"
}

# A service checkout: index.html + stackless.toml pinned with --source.
make_app() { # DIR NEEDLE
  local dir=$1 needle=$2
  mkdir -p "$dir"
  printf '<html><body>hello-fixture %s</body></html>\n' "$(basename "$dir")" >"$dir/index.html"
  cat >"$dir/stackless.toml" <<EOF
[stack]
name = "fixture"

[services.web]
source = { repo = "https://example.invalid/fixture-web", ref = "main" }
root_origin = true
health = { path = "/", contains = "$needle" }

[services.web.local]
run = "python3 -m http.server \$PORT --bind 127.0.0.1"
EOF
}

# A service whose source stackless materializes itself (file:// git repo), so
# the instance owns sources/<name>/web — which `chattr +i` can make survive.
make_git_app() { # DIR REPO
  local dir=$1 repo=$2
  mkdir -p "$repo" "$dir"
  printf '<html><body>hello-fixture git</body></html>\n' >"$repo/index.html"
  (cd "$repo" && "$GIT" init -q -b main && "$GIT" add index.html &&
    "$GIT" -c user.name=fixture -c user.email=fixture@invalid commit -q -m fixture)
  cat >"$dir/stackless.toml" <<EOF
[stack]
name = "fixture"

[services.web]
source = { repo = "file://$repo", ref = "main" }
root_origin = true
health = { path = "/", contains = "hello-fixture" }

[services.web.local]
run = "python3 -m http.server \$PORT --bind 127.0.0.1"
EOF
}

# up NAME APPDIR LEASE [extra flags] — create an instance pinned to APPDIR.
up() {
  local name=$1 app=$2 lease=$3; shift 3
  (cd "$app" && run "up-$name" "$SL" up --name "$name" --file "$app/stackless.toml" \
    --on local --source "web=$app" --lease "$lease" $HOSTEXEC "$@" --json)
}

# up_git NAME APPDIR LEASE — create an instance whose source is materialized.
up_git() {
  local name=$1 app=$2 lease=$3
  (cd "$app" && run "up-$name" "$SL" up --name "$name" --file "$app/stackless.toml" \
    --on local --lease "$lease" $HOSTEXEC --json)
}

# up_dirty NAME APPDIR WORKTREE LEASE — 0.4.0 rejects file:// repos; a
# `--dirty` pin snapshots a git work tree into sources/<name>/web/snapshots.
up_dirty() {
  local name=$1 app=$2 tree=$3 lease=$4
  (cd "$app" && run "up-$name" "$SL" up --name "$name" --file "$app/stackless.toml" \
    --on local --source "web=$tree" --dirty --lease "$lease" $HOSTEXEC --json)
}

protect_source() { # NAME — make the materialized checkout undeletable
  local f ns
  # 0.4.0 keys instance-owned space by resource_namespace (sl-<instance_id>).
  ns=$(db "SELECT resource_namespace FROM instances WHERE name='$1'" 2>/dev/null || echo "$1")
  [ -d "$STATE/sources/$ns" ] || ns=$1
  f=$(find "$STATE/sources/$ns" -type f -name index.html 2>/dev/null | head -1)
  [ -n "$f" ] || { log "no materialized source for $1"; find "$STATE" -maxdepth 3 >&2; return 1; }
  "$CHATTR" +i "$f"
  PROTECTED+=("$f")
  log "chattr +i $f"
}

unprotect() {
  local f
  for f in "${PROTECTED[@]}"; do "$CHATTR" -i "$f" 2>/dev/null || true; done
}

db() { "$PY_REAL" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(sys.argv[2]).fetchone()[0])' "$STATE/state.db" "$1"; }

wait_for() { # DESCRIPTION TIMEOUT_SECS SQL_RETURNING_NONZERO_WHEN_DONE
  local what=$1 budget=$2 sql=$3 start=$SECONDS
  while :; do
    if [ "$(db "$sql" 2>/dev/null || echo 0)" != 0 ]; then log "$what: done after $((SECONDS - start)) s"; return 0; fi
    if [ $((SECONDS - start)) -ge "$budget" ]; then log "$what: not after $budget s"; return 1; fi
    sleep 3
  done
}

capture() { # DEST
  local dest=$1 tmp
  tmp=$(mktemp "$RUN/capture.XXXX.db")
  "$PY_REAL" - "$STATE/state.db" "$tmp" "$HOME" <<'EOF'
import shutil, sqlite3, sys
src, dst, home = sys.argv[1:]
c = sqlite3.connect(src)
c.execute('PRAGMA wal_checkpoint(TRUNCATE)')
c.close()
shutil.copyfile(src, dst)
c = sqlite3.connect(dst)
tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
changed = 0
for t in tables:
    for col in c.execute(f'PRAGMA table_info("{t}")').fetchall():
        name = col[1]
        cur = c.execute(f'UPDATE "{t}" SET "{name}" = replace("{name}", ?, ?) '
                        f'WHERE typeof("{name}") = \'text\' AND instr("{name}", ?) > 0',
                        (home, '/home/operator', home))
        changed += cur.rowcount
c.commit()
c.execute('VACUUM')
c.execute('PRAGMA wal_checkpoint(TRUNCATE)')
mode = c.execute('PRAGMA journal_mode').fetchone()[0]
uv = c.execute('PRAGMA user_version').fetchone()[0]
c.close()
print(f'rewrote {changed} value(s); journal_mode={mode}; user_version={uv}', file=sys.stderr)
EOF
  rm -f "$tmp-wal" "$tmp-shm"
  chmod 644 "$tmp"
  mv "$tmp" "$dest"
  log "wrote $dest"
}

save_envelope() { # NAME DEST — copy an observed stdout, home paths rewritten
  sed "s#$HOME#/home/operator#g" "$RUN/out/$1.json" >"$OUT/envelopes/$2"
  log "envelope $2 (exit $(cat "$RUN/out/$1.rc"))"
}

setup() { # VERSION BINARY
  VERSION=$1 SL=$2
  [ -x "$SL" ] || { log "missing binary $SL"; return 1; }
  RUN=/tmp/stackless-fixture-$VERSION
  if [ -e "$RUN" ]; then
    find "$RUN" -type f -exec "$CHATTR" -i {} + 2>/dev/null || true
    rm -rf "$RUN"
  fi
  mkdir -p "$RUN/out" "$RUN/home/operator"
  export HOME=$RUN/home/operator
  export XDG_STATE_HOME=$HOME/.local/state XDG_CONFIG_HOME=$HOME/.config
  export XDG_DATA_HOME=$HOME/.local/share XDG_CACHE_HOME=$HOME/.cache
  export XDG_RUNTIME_DIR=$RUN/runtime
  mkdir -p "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR" "$HOME/bin"
  chmod 700 "$XDG_RUNTIME_DIR"
  chmod 700 "$HOME"
  ln -sf "$PY_REAL" "$HOME/bin/python3"
  export PATH=$HOME/bin:/usr/local/bin:/usr/bin:/bin
  export STACKLESS_NO_SELF_UPDATE=1
  STACKLESS_PROXY_PORT=$(free_port); export STACKLESS_PROXY_PORT
  unset STACKLESS_CONTROLLER STACKLESS_STATE_URL STACKLESS_STATE_TOKEN STACKLESS_BIN DBUS_SESSION_BUS_ADDRESS || true
  STATE=$XDG_STATE_HOME/stackless
  SRC=$HOME/src
  PROTECTED=()
  log "stackless $VERSION ($("$SL" --version)) root $RUN proxy port $STACKLESS_PROXY_PORT"
  trap 'unprotect; stop_everything || true' EXIT
}

finish() { # DEST
  stop_everything
  CAPTURE=$(date +%s)
  capture "$1"
  unprotect
  trap - EXIT
  echo "CAPTURE $VERSION $CAPTURE $(basename "$1")"
}

# ---------------------------------------------------------------- 0.2 / 0.3
schema5() { # VERSION BINARY
  setup "$1" "$2"
  HOSTEXEC=
  for n in alpha charlie delta golf; do make_app "$SRC/$n" hello-fixture; done
  make_git_app "$SRC/foxtrot" "$SRC/repos/web"

  up alpha "$SRC/alpha" 24h                     # healthy, long lease
  up charlie "$SRC/charlie" 1h                  # torn down below
  (cd "$SRC/charlie" && run down-charlie "$SL" down charlie --json)
  up delta "$SRC/delta" 20s                     # reaped by the daemon
  up_git foxtrot "$SRC/foxtrot" 20s             # its reap fails
  protect_source foxtrot
  (cd "$SRC/alpha" && run list "$SL" list --json)

  wait_for "delta reaped" 200 "SELECT count(*) FROM instances WHERE name='delta' AND status='tombstoned'"
  wait_for "foxtrot reap failed" 200 "SELECT count(*) FROM reap_attempts WHERE instance='foxtrot'"
  (cd "$SRC/alpha" && run status-foxtrot "$SL" status foxtrot --json)
  (cd "$SRC/alpha" && run list-after "$SL" list --json)

  up golf "$SRC/golf" 15s                       # expires after the daemon stops
  stop_everything
  save_envelope down-charlie "$VERSION-down-success.json"
  save_envelope status-foxtrot "$VERSION-status-reap-failed.json"
  sleep 45
  finish "$OUT/real-$VERSION-v5.db"
  cp -r "$RUN/out" "/tmp/stackless-fixture-out-$VERSION"
}

# ------------------------------------------------------------------- 0.4.0
v040() {
  setup 0.4.0 "$STACKLESS_040"
  HOSTEXEC=--allow-host-execution
  for n in alpha charlie delta foxtrot golf; do make_app "$SRC/$n" hello-fixture; done
  for n in hotel india; do make_app "$SRC/$n" never-served; done
  make_git_app "$SRC/repos" "$SRC/repos/web"

  up alpha "$SRC/alpha" 24h                     # healthy, long lease
  # Health never passes: fails after the 300 s budget (local.health_failed).
  (cd "$SRC/hotel" && run up-hotel-nowait "$SL" up --name hotel --file "$SRC/hotel/stackless.toml" \
    --on local --source "web=$SRC/hotel" --lease 6h $HOSTEXEC --no-wait --json)
  HOTEL_OP=$(jget "$RUN/out/up-hotel-nowait.json" 'd["operation"]["id"]')
  # Same --source dir as alpha: engine.source_override.shared.
  (cd "$SRC/alpha" && run up-bravo-shared "$SL" up --name bravo --file "$SRC/alpha/stackless.toml" \
    --on local --source "web=$SRC/alpha" --lease 2h $HOSTEXEC --json)
  up charlie "$SRC/charlie" 1h
  (cd "$SRC/charlie" && run down-charlie "$SL" down charlie --json)
  (cd "$SRC/charlie" && run down-charlie-again "$SL" down charlie --json)
  (cd "$SRC/charlie" && run down-unknown "$SL" down nosuch --json)
  up delta "$SRC/delta" 20s                     # reaped by the controller
  up_dirty foxtrot "$SRC/foxtrot" "$SRC/repos/web" 20s   # its reaps fail (survivor)
  protect_source foxtrot
  # Cancel an up while it waits for health.
  (cd "$SRC/india" && run up-india-nowait "$SL" up --name india --file "$SRC/india/stackless.toml" \
    --on local --source "web=$SRC/india" --lease 3h $HOSTEXEC --no-wait --json)
  INDIA_OP=$(jget "$RUN/out/up-india-nowait.json" 'd["operation"]["id"]')
  sleep 5
  (cd "$SRC/alpha" && run operation-cancel "$SL" operation cancel "$INDIA_OP" --json)
  sleep 25
  (cd "$SRC/alpha" && run down-foxtrot-survivors "$SL" down foxtrot --json)

  wait_for "delta reaped" 200 "SELECT count(*) FROM instances WHERE name='delta' AND status='tombstoned'"
  wait_for "hotel up failed" 420 "SELECT count(*) FROM operations WHERE id='$HOTEL_OP' AND status='failed'"
  # One failed down is the operator's; wait for one the controller submitted.
  wait_for "controller reap of foxtrot failed" 200 \
    "SELECT count(*) >= 2 FROM operations WHERE instance='foxtrot' AND verb='down' AND status='failed'"
  (cd "$SRC/india" && run operation-cancel-terminal "$SL" operation cancel "$INDIA_OP" --json)

  (cd "$SRC/alpha" && run list "$SL" list --json)
  (cd "$SRC/alpha" && run status-alpha "$SL" status alpha --json)
  (cd "$SRC/alpha" && run status-foxtrot "$SL" status foxtrot --json)
  (cd "$SRC/alpha" && run operation-list "$SL" operation list --json)
  (cd "$SRC/alpha" && run operation-get-hotel "$SL" operation get "$HOTEL_OP" --json)
  (cd "$SRC/alpha" && run operation-get-india "$SL" operation get "$INDIA_OP" --json)
  (cd "$SRC/alpha" && run controller "$SL" controller --json)

  up golf "$SRC/golf" 15s                       # expires after the controller stops
  stop_everything
  local pair
  for pair in up-alpha:up-success up-hotel-nowait:up-no-wait \
      up-bravo-shared:up-source-override-shared-error \
      down-charlie:down-success down-charlie-again:down-already-down \
      down-unknown:down-not-found-error down-foxtrot-survivors:down-survivors-error \
      operation-cancel:operation-cancel operation-cancel-terminal:operation-cancel-terminal \
      operation-list:operation-list operation-get-hotel:operation-get-health-failed \
      operation-get-india:operation-get-cancelled list:list status-alpha:status-alpha \
      status-foxtrot:status-foxtrot-reap-failed controller:controller; do
    save_envelope "${pair%%:*}" "0.4.0-${pair#*:}.json"
  done
  sleep 45
  finish "$OUT/real-0.4.0-v14.db"
  cp -r "$RUN/out" /tmp/stackless-fixture-out-0.4.0
}

mkdir -p "$OUT/envelopes"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0.4.0 0.3.0 0.2.0)
for v in "${versions[@]}"; do
  case $v in
    0.2.0) schema5 0.2.0 "$STACKLESS_020" ;;
    0.3.0) schema5 0.3.0 "$STACKLESS_030" ;;
    0.4.0) v040 ;;
    *) log "unknown version $v"; exit 2 ;;
  esac
done
