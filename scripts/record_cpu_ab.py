#!/usr/bin/env python3
"""Two builds of `stackless-tui record` on one store at once, fed the same
commits (BENCHMARKS.md, "The flight recorder:
replay, seeks, `snapshot --at`, and the recorder's diff"): both idle for IDLE seconds, then one lease
renewal every INTERVAL seconds for ACTIVE seconds; each recorder's CPU
(utime + stime from /proc/PID/stat) per phase, the per-change cost (the
active phase less the idle rate, over the changes) and what that makes
at 1,000 changes an hour. Both share the machine's load alike.

    python3 scripts/record_cpu_ab.py BIN_A BIN_B STORE [IDLE ACTIVE INTERVAL]
"""
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def start(binary, store):
    home = tempfile.mkdtemp()
    history = os.path.join(home, "history")
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home)
    proc = subprocess.Popen(
        [binary, "--state", store, "record", "--history", history],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return proc, history


def main():
    a, b, store = sys.argv[1:4]
    idle, active, interval = (
        [float(x) for x in sys.argv[4:7]] if len(sys.argv) > 6 else [30, 60, 0.2]
    )
    recs = {name: start(binary, store) for name, binary in (("a", a), ("b", b))}
    for _, history in recs.values():
        while not os.path.isdir(history) or not any(
            n.startswith("seg-") for n in os.listdir(history)
        ):
            time.sleep(0.2)
    time.sleep(3)
    result = {"load_start": load()}
    c0 = {k: cpu_secs(p.pid) for k, (p, _) in recs.items()}
    t0 = time.time()
    time.sleep(idle)
    c1 = {k: cpu_secs(p.pid) for k, (p, _) in recs.items()}
    t1 = time.time()
    conn = sqlite3.connect(store)
    names = [r[0] for r in conn.execute("SELECT instance FROM leases")]
    changes, end = 0, time.time() + active
    while time.time() < end:
        conn.execute(
            "UPDATE leases SET expires_at = expires_at + 60 WHERE instance = ?",
            (random.choice(names),),
        )
        conn.commit()
        changes += 1
        time.sleep(interval)
    time.sleep(3)
    c2 = {k: cpu_secs(p.pid) for k, (p, _) in recs.items()}
    t2 = time.time()
    for proc, _ in recs.values():
        proc.terminate()
        proc.wait()
    result["changes"] = changes
    for k in recs:
        idle_rate = (c1[k] - c0[k]) / (t1 - t0)
        per_change = ((c2[k] - c1[k]) - idle_rate * (t2 - t1)) / changes
        result[k] = {
            "idle_cpu_pct": round(100 * idle_rate, 3),
            "per_change_cpu_ms": round(1000 * per_change, 2),
            "at_1000_per_hour_cpu_pct": round(100 * (idle_rate + per_change * 1000 / 3600), 3),
        }
    result["load_end"] = load()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
