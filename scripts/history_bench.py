#!/usr/bin/env python3
"""The flight recorder's cost (docs/history.md; BENCHMARKS.md, "The
flight recorder"): `stackless-tui record` on a schema-14 store of N
instances, first idle (heartbeats only), then with one lease renewal
every INTERVAL seconds; the recorder's CPU (utime + stime from
/proc/PID/stat) and the bytes it wrote in each phase, and what that
makes at 1,000 changes an hour over a day; then `snapshot --json --at`
beside the live `snapshot --json` on the same store (median of RUNS).

    python3 scripts/history_bench.py BIN STORE [IDLE_SECS ACTIVE_SECS INTERVAL RUNS]
"""
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def recorded_bytes(history):
    return sum(
        os.path.getsize(os.path.join(history, n))
        for n in os.listdir(history)
        if n.startswith("seg-")
    )


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    binary, store = sys.argv[1], sys.argv[2]
    idle, active, interval, runs = (
        [int(a) for a in sys.argv[3:6]] + [int(sys.argv[6])]
        if len(sys.argv) > 6
        else [60, 180, 1, 5]
    )
    home = tempfile.mkdtemp()
    history = os.path.join(home, "history")
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home)
    rec = subprocess.Popen(
        [binary, "--state", store, "record", "--history", history],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # The first read and its keyframe: until the first segment is written.
    while not os.path.isdir(history) or recorded_bytes(history) == 0:
        time.sleep(0.2)
    time.sleep(3)
    first = recorded_bytes(history)
    cpu0, t0, b0 = cpu_secs(rec.pid), time.time(), recorded_bytes(history)
    time.sleep(idle)
    cpu1, t1, b1 = cpu_secs(rec.pid), time.time(), recorded_bytes(history)
    conn = sqlite3.connect(store)
    names = [r[0] for r in conn.execute("SELECT instance FROM leases")]
    changes = 0
    end = time.time() + active
    while time.time() < end:
        name = random.choice(names)
        conn.execute(
            "UPDATE leases SET expires_at = expires_at + 60 WHERE instance = ?", (name,)
        )
        conn.commit()
        changes += 1
        time.sleep(interval)
    time.sleep(3)
    cpu2, t2, b2 = cpu_secs(rec.pid), time.time(), recorded_bytes(history)
    rec.terminate()
    rec.wait()
    idle_cpu = (cpu1 - cpu0) / (t1 - t0)
    idle_bps = (b1 - b0) / (t1 - t0)
    per_change_cpu = ((cpu2 - cpu1) - idle_cpu * (t2 - t1)) / changes
    per_change_bytes = ((b2 - b1) - idle_bps * (t2 - t1)) / changes
    day_changes = 1000 * 24
    result = {
        "first_segment_bytes": first,
        "idle_cpu_pct": 100 * idle_cpu,
        "idle_bytes_per_sec": idle_bps,
        "changes": changes,
        "per_change_cpu_ms": 1000 * per_change_cpu,
        "per_change_bytes": per_change_bytes,
        "at_1000_per_hour_cpu_pct": 100 * (idle_cpu + per_change_cpu * 1000 / 3600),
        "at_1000_per_hour_bytes_per_day_without_keyframes": idle_bps * 86400
        + per_change_bytes * day_changes,
        "load_before_reads": load(),
    }
    at = str(int(t2) - 2)
    live, recorded = [], []
    for _ in range(runs):
        s = time.perf_counter()
        subprocess.run(
            [binary, "--state", store, "snapshot", "--json"],
            env=env, stdout=subprocess.DEVNULL, check=True,
        )
        live.append(time.perf_counter() - s)
        s = time.perf_counter()
        subprocess.run(
            [binary, "--state", store, "snapshot", "--json", "--at", at,
             "--history", history],
            env=env, stdout=subprocess.DEVNULL, check=True,
        )
        recorded.append(time.perf_counter() - s)
    result["live_snapshot_json_ms"] = 1000 * statistics.median(live)
    result["snapshot_at_ms"] = 1000 * statistics.median(recorded)
    result["load_after"] = load()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
