#!/usr/bin/env python3
"""End-to-end measurements of the real stackless-tui binary in a pseudo-terminal.

Standard library only. Run from the repository root after a release build:

    cargo build --release --example gen_store
    cargo build --release --bin stackless-tui
    python3 scripts/e2e_bench.py --json target/e2e-bench.json

(Two builds: a binary built together with an example, a bench or a test
gets their test-only features, see Cargo.toml.)

What it measures (terminal 200x60, `--no-reaper`, stores written by
examples/gen_store.rs with seed 42 around the current time):

- change-to-screen latency at 10k: another process (this script, through the
  sqlite3 module) commits `UPDATE instances SET substrate = <token>` on the
  selected (first) instance; the clock runs from just before COMMIT until the
  token appears in the bytes the console writes to the pty. p50/p95/max over
  100 changes, spaced 150-350 ms apart (seeded), so the poll phase is random.
- idle CPU at 10k: utime+stime of the whole process (all threads) over 60 s,
  after the first frame and a 3 s settle; countdowns keep ticking. The same
  at 100k over 20 s, for information (--idle-100k-secs).
- peak RSS at 100k: VmHWM after the first frame and 5 committed changes (each
  makes the watcher re-read the whole store while the old snapshot is still
  on screen).
- start-up to first complete frame at 10k: from fork to the moment the names
  of the 1st and 16th instance rows are on the screen (in lease-expiry order,
  the pane's default, or by name); median of 10 starts.
- the sqlite3 CLI running the snapshot's statements on the same files (the
  baseline the ratios in BENCHMARKS.md are taken against).

Every figure is printed as a markdown table and, with --json, written out.
"""

import argparse
import fcntl
import json
import os
import pty
import random
import select
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import termios
import time

ROWS, COLS = 60, 200
# The statements Store::snapshot runs on a stackless v4 store (keep in step
# with scan_instances in src/store/mod.rs and benches/scale.rs).
SNAPSHOT_SQL = """BEGIN;
SELECT sql FROM sqlite_master
WHERE type = 'table' AND name IN ('instances', 'leases', 'op_locks');
SELECT count(*) FROM instances;
SELECT name, substrate, status, created_at, tombstoned_at FROM instances;
SELECT instance, duration_secs, expires_at FROM leases;
SELECT instance, operation, holder_pid, holder_start_time, acquired_at, holder_host
FROM op_locks;
SELECT instance, attempts, last_error, next_retry_at
FROM reap_attempts ORDER BY instance;
COMMIT;"""
# The statements Store::snapshot runs on a schema-14 store (stackless 0.4.0;
# keep in step with src/store/read/mod.rs, read/scan.rs, operations.rs and
# queue_seen.rs): the three scans with the later columns, reap attempts,
# the pending and the 50 newest finished operations, the newest event of
# each finished one, and the queue's watermark.
SNAPSHOT_SQL_V14 = """BEGIN;
SELECT name, sql FROM sqlite_master
WHERE type = 'table' AND name IN ('instances', 'leases', 'op_locks');
SELECT count(*) FROM instances;
SELECT name, substrate, status, created_at, tombstoned_at, dirty, instance_id,
       resource_namespace, rowid FROM instances;
SELECT instance, duration_secs, expires_at FROM leases;
SELECT instance, operation, holder_pid, holder_start_time, acquired_at, holder_host,
       claim_id FROM op_locks;
SELECT instance, attempts, last_error, next_retry_at
FROM reap_attempts ORDER BY instance;
SELECT id, instance, instance_id, verb, status, cancel_requested, created_at,
       updated_at, error_json
FROM operations WHERE status IN ('queued', 'running') ORDER BY created_at, rowid;
SELECT id, instance, instance_id, verb, status, cancel_requested, created_at,
       updated_at, error_json,
       (SELECT event_json FROM operation_events e WHERE e.operation_id = o.id
        ORDER BY sequence DESC LIMIT 1)
FROM operations o WHERE status NOT IN ('queued', 'running') ORDER BY rowid DESC LIMIT 50;
SELECT rowid, id FROM operations ORDER BY rowid DESC LIMIT 1;
COMMIT;"""
# The single LEFT JOIN query it used before (and still uses where a byte-wise
# merge could differ from SQL's `=`).
JOIN_SQL = """BEGIN;
SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at,
       l.instance, l.duration_secs, l.expires_at,
       k.instance, k.operation, k.holder_pid, k.holder_start_time,
       k.acquired_at, k.holder_host
FROM instances i
LEFT JOIN leases l ON l.instance = i.name
LEFT JOIN op_locks k ON k.instance = i.name
ORDER BY i.name;
SELECT instance, attempts, last_error, next_retry_at
FROM reap_attempts ORDER BY instance;
COMMIT;"""


# Added to every console's environment (`--env K=V`, repeatable), e.g.
# `STACKLESS_TUI_NO_RECORD=1` to measure the console without its recorder.
EXTRA_ENV = {}


def parse_env(pairs):
    """`K=V` strings into `EXTRA_ENV`; a pair without `=` is an error."""
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--env {pair!r}: expected KEY=VALUE")
        EXTRA_ENV[key] = value


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Console:
    """stackless-tui running in a pty of ROWS x COLS."""

    def __init__(self, binary, store, extra=()):
        self.buf = bytearray()
        argv = [binary, "--state", store, "--no-reaper", *extra]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.path.dirname(os.path.abspath(store)),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            **EXTRA_ENV,
        }
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # child: the pty is stdin/stdout/stderr and controlling tty
            try:
                fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
                os.execve(binary, argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd

    def pump(self, timeout):
        """Read whatever arrives within `timeout` seconds; returns bytes read."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return 0
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            return 0
        self.buf += chunk
        return len(chunk)

    def wait_for(self, needles, since=0, timeout=30.0):
        """Block until every needle (bytes) occurs in the output after offset
        `since`; returns the perf_counter time it was seen."""
        deadline = time.perf_counter() + timeout
        while True:
            if all(self.buf.find(n, since) >= 0 for n in needles):
                return time.perf_counter()
            left = deadline - time.perf_counter()
            if left <= 0:
                tail = bytes(self.buf[-400:])
                raise TimeoutError(f"never saw {needles!r}; output tail {tail!r}")
            self.pump(min(left, 0.05))

    def drain_for(self, seconds):
        end = time.perf_counter() + seconds
        total = 0
        while (left := end - time.perf_counter()) > 0:
            total += self.pump(left)
        return total

    def cpu_seconds(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def status(self, key):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])  # kB
        return None

    def context_switches(self):
        total = 0
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                            total += int(line.split()[1])
            except OSError:
                pass
        return total

    def quit(self):
        try:
            os.write(self.fd, b"q")
        except OSError:
            pass
        deadline = time.perf_counter() + 5
        while time.perf_counter() < deadline:
            self.pump(0.05)
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if done:
                break
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def visible_orders(store):
    """The first 20 instance names in each order the Instances pane may open
    with: by lease expiry (soonest first, no lease last, ties by name) and by
    name."""
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    by_lease = [r[0] for r in conn.execute(
        "SELECT i.name FROM instances i LEFT JOIN leases l ON l.instance = i.name "
        "ORDER BY l.expires_at IS NULL, l.expires_at, i.name LIMIT 20")]
    by_name = [r[0] for r in conn.execute("SELECT name FROM instances ORDER BY name LIMIT 20")]
    conn.close()
    return [by_lease, by_name]


def first_frame(console, orders):
    """Wait for the first complete frame: the 1st and 16th rows of the
    Instances pane, in whichever order it shows them. Returns (time seen,
    names in screen order)."""
    deadline = time.perf_counter() + 30
    while True:
        for names in orders:
            if console.buf.find(names[0].encode()) >= 0 and console.buf.find(names[15].encode()) >= 0:
                return time.perf_counter(), names
        if time.perf_counter() > deadline:
            raise TimeoutError(f"no complete frame; output tail {bytes(console.buf[-400:])!r}")
        console.pump(0.05)


def token(k):
    """6 letters, upper case for even k and lower case for odd k: every cell
    differs from the previous token's, so the console rewrites all six
    (ratatui only writes the cells that changed) and the token shows up
    contiguous in the byte stream."""
    letters = []
    v = k + 7919
    for _ in range(6):
        letters.append(chr(ord("A") + v % 26))
        v //= 26
    t = "".join(letters)
    return t if k % 2 == 0 else t.lower()


def commit_substrate(conn, name, value):
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE instances SET substrate = ? WHERE name = ?", (value, name))
    t0 = time.perf_counter()
    conn.execute("COMMIT")
    return t0, time.perf_counter()


def writer(store):
    conn = sqlite3.connect(store, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA journal_mode = WAL")
    return conn


def pct(values, p):
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def measure_latency(binary, store, changes, seed, label):
    orders = visible_orders(store)
    console = Console(binary, store)
    _, names = first_frame(console, orders)
    console.drain_for(1.0)
    conn = writer(store)
    rng = random.Random(seed)
    lat, commits = [], []
    try:
        for k in range(changes):
            console.drain_for(rng.uniform(0.15, 0.35))
            tok = token(k)
            since = len(console.buf)
            t0, t1 = commit_substrate(conn, names[0], tok)
            seen = console.wait_for([tok.encode()], since=since, timeout=10)
            lat.append((seen - t0) * 1000)
            commits.append((t1 - t0) * 1000)
    finally:
        conn.close()
        console.quit()
    result = {
        "changes": changes,
        "p50_ms": round(pct(lat, 50), 1),
        "p95_ms": round(pct(lat, 95), 1),
        "max_ms": round(max(lat), 1),
        "min_ms": round(min(lat), 1),
        "commit_p50_ms": round(pct(commits, 50), 2),
    }
    log(f"latency {label}: {result}")
    return result


def measure_idle(binary, store, seconds, label="10k"):
    orders = visible_orders(store)
    console = Console(binary, store)
    first_frame(console, orders)
    console.drain_for(3.0)
    cpu0, cs0, out0, t0 = console.cpu_seconds(), console.context_switches(), len(console.buf), time.perf_counter()
    console.drain_for(seconds)
    cpu1, cs1, out1, t1 = console.cpu_seconds(), console.context_switches(), len(console.buf), time.perf_counter()
    threads = len(os.listdir(f"/proc/{console.pid}/task"))
    rss = console.status("VmRSS")
    console.quit()
    wall = t1 - t0
    result = {
        "seconds": round(wall, 1),
        "cpu_seconds": round(cpu1 - cpu0, 3),
        "cpu_percent_of_one_core": round(100 * (cpu1 - cpu0) / wall, 3),
        "wakeups_per_s": round((cs1 - cs0) / wall, 1),
        "pty_bytes_per_s": round((out1 - out0) / wall, 1),
        "threads": threads,
        "rss_mb": round(rss / 1024, 1) if rss else None,
    }
    log(f"idle {label}: {result}")
    return result


def measure_rss(binary, store, changes):
    orders = visible_orders(store)
    console = Console(binary, store)
    t, names = first_frame(console, orders)
    startup_ms = (t - console.started) * 1000
    console.drain_for(1.0)
    after_first = console.status("VmHWM")
    conn = writer(store)
    lat = []
    try:
        for k in range(changes):
            tok = token(1000 + k)
            since = len(console.buf)
            t0, _ = commit_substrate(conn, names[0], tok)
            seen = console.wait_for([tok.encode()], since=since, timeout=30)
            lat.append((seen - t0) * 1000)
            console.drain_for(0.3)
    finally:
        conn.close()
    hwm, rss = console.status("VmHWM"), console.status("VmRSS")
    console.quit()
    result = {
        "peak_rss_mb": round(hwm / 1024, 1),
        "peak_rss_after_first_frame_mb": round(after_first / 1024, 1),
        "rss_at_end_mb": round(rss / 1024, 1),
        "startup_ms": round(startup_ms, 1),
        "change_latency_ms": [round(x, 1) for x in lat],
    }
    log(f"rss 100k: {result}")
    return result


def measure_startup(binary, store, runs):
    orders = visible_orders(store)
    times = []
    for _ in range(runs):
        console = Console(binary, store)
        t, _ = first_frame(console, orders)
        times.append((t - console.started) * 1000)
        console.quit()
        time.sleep(0.3)
    result = {
        "runs": runs,
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
    }
    log(f"startup: {result}")
    return result


def sqlite3_baseline(store, sql=SNAPSHOT_SQL, runs=7):
    """Median wall time (ms) of the sqlite3 CLI running `sql` on `store`,
    output to /dev/null, process start included; and its peak RSS (MB),
    taken with /usr/bin/time when that exists (a child forked from this
    Python process would inherit Python's high-water mark)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(["/usr/bin/sqlite3", store, sql], stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    rss = None
    if os.path.exists("/usr/bin/time"):
        out = subprocess.run(["/usr/bin/time", "-f", "%M", "/usr/bin/sqlite3", store, sql],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        rss = round(int(out.stderr.strip().splitlines()[-1]) / 1024, 1)
    return {"ms": round(statistics.median(times), 2), "peak_rss_mb": rss}


def generate(gen, n, out, seed):
    if gen == "v14":
        # scripts/gen_v14_store.py: a schema-14 store (stackless 0.4.0).
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_v14_store.py")
        subprocess.run([sys.executable, script, out, str(n), str(n)], check=True, stdout=sys.stderr)
        return
    subprocess.run([gen, "--instances", str(n), "--seed", str(seed), "--out", out, "--force"],
                   check=True, stdout=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/stackless-tui")
    ap.add_argument("--gen", default="target/release/examples/gen_store",
                    help="the store generator, or v14 for scripts/gen_v14_store.py")
    ap.add_argument("--workdir", default="target/e2e-bench")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--idle-secs", type=float, default=60)
    ap.add_argument("--idle-100k-secs", type=float, default=20,
                    help="idle CPU at 100k too (informational; 0 skips)")
    ap.add_argument("--startup-runs", type=int, default=10)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", help="comma list: latency,idle,rss,startup,baseline")
    ap.add_argument("--env", action="append", metavar="K=V",
                    help="add to the console's environment (repeatable), e.g. STACKLESS_TUI_NO_RECORD=1")
    args = ap.parse_args()
    parse_env(args.env)
    only = set(args.only.split(",")) if args.only else {"latency", "idle", "rss", "startup", "baseline"}
    binary = os.path.abspath(args.bin)
    os.makedirs(args.workdir, exist_ok=True)
    s10k = os.path.join(args.workdir, "s10k.db")
    s100k = os.path.join(args.workdir, "s100k.db")

    results = {"machine": {"cpus": os.cpu_count(), "kernel": os.uname().release,
                           "loadavg_at_start": os.getloadavg()}}
    # Fresh stores each run: latency and rss write to them.
    generate(args.gen, 10_000, s10k, args.seed)
    generate(args.gen, 100_000, s100k, args.seed)
    if "baseline" in only:
        sql = SNAPSHOT_SQL_V14 if args.gen == "v14" else SNAPSHOT_SQL
        results["sqlite3_cli_ms"] = {
            "10k": sqlite3_baseline(s10k, sql),
            "100k": sqlite3_baseline(s100k, sql),
        }
        results["sqlite3_cli_join_ms"] = {
            "10k": sqlite3_baseline(s10k, JOIN_SQL),
            "100k": sqlite3_baseline(s100k, JOIN_SQL, runs=3),
        }
        log(f"sqlite3 CLI: {results['sqlite3_cli_ms']} (join query: {results['sqlite3_cli_join_ms']})")
    if "startup" in only:
        results["startup_10k"] = measure_startup(binary, s10k, args.startup_runs)
        results["startup_100k"] = measure_startup(binary, s100k, max(3, args.startup_runs // 2))
    if "latency" in only:
        results["latency_10k"] = measure_latency(binary, s10k, args.changes, args.seed, "10k")
    if "idle" in only:
        generate(args.gen, 10_000, s10k, args.seed)
        results["idle_10k"] = measure_idle(binary, s10k, args.idle_secs)
    if "rss" in only:
        results["rss_100k"] = measure_rss(binary, s100k, 9)
    if "idle" in only and args.idle_100k_secs > 0:
        generate(args.gen, 100_000, s100k, args.seed)
        results["idle_100k"] = measure_idle(binary, s100k, args.idle_100k_secs, "100k")
    results["machine"]["loadavg_at_end"] = os.getloadavg()

    rows = []
    if "latency_10k" in results:
        r = results["latency_10k"]
        rows.append(("change-to-screen p50 / p95 at 10k", f"{r['p50_ms']} / {r['p95_ms']} ms", "p95 <= 30 ms"))
    if "idle_10k" in results:
        r = results["idle_10k"]
        rows.append(("idle CPU at 10k (60 s)", f"{r['cpu_percent_of_one_core']} % of one core", "<= 0.5 %"))
    if "rss_100k" in results:
        r = results["rss_100k"]
        rows.append(("peak RSS at 100k", f"{r['peak_rss_mb']} MB", "<= 60 MB"))
    if "startup_10k" in results:
        r = results["startup_10k"]
        rows.append(("start-up to first frame at 10k", f"{r['median_ms']} ms (median)", "<= 150 ms"))
    if "startup_100k" in results:
        r = results["startup_100k"]
        rows.append(("start-up to first frame at 100k", f"{r['median_ms']} ms (median)", "<= 250 ms"))
    if "rss_100k" in results:
        lat = sorted(results["rss_100k"]["change_latency_ms"])
        rows.append(("change-to-screen median at 100k", f"{lat[len(lat) // 2]} ms", "<= 200 ms"))
    print("| figure | measured | target |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
