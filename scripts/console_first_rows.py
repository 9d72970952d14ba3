#!/usr/bin/env python3
"""The console's first rows and its whole read on big stores, before and
after, beside the sqlite3 CLI reading the same rows, in one run.

For each store and each binary (rounds interleaved): the time from `fork`
to the first frame that shows the Instances pane's first rows (its default
order: the soonest leases; `e2e_bench.first_frame`), the time until the
whole read is on screen (the title's `tombstoned` count, which a partial
snapshot never shows), and `VmHWM` after `--settle` seconds. The sqlite3
CLI runs the whole join (`e2e_bench.SNAPSHOT_SQL_V14`) and the first
rows' query on the same file. Standard library only.

    python3 scripts/console_first_rows.py --bin before=OLD --bin after=NEW \\
        --store 1m=/tmp/v14-1m.db --store 100k=/tmp/v14-100k.db --rounds 2 \\
        --env STACKLESS_TUI_NO_RECORD=1
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_bench  # noqa: E402

HEAD_SQL = """SELECT i.name, i.substrate, i.status, l.expires_at, k.operation
FROM (SELECT instance AS name, expires_at AS at FROM leases
      ORDER BY expires_at, instance LIMIT 2000) h
JOIN instances i ON i.name = h.name
LEFT JOIN leases l ON l.instance = i.name
LEFT JOIN op_locks k ON k.instance = i.name
ORDER BY h.at, h.name;"""


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def one(binary, store, orders, settle):
    console = e2e_bench.Console(binary, store)
    first, _ = e2e_bench.first_frame(console, orders)
    whole = console.wait_for([b"tombstoned"], timeout=60)
    console.drain_for(max(0.0, settle - (time.perf_counter() - console.started)))
    hwm = console.status("VmHWM")
    console.quit()
    return {
        "first_rows_s": round(first - console.started, 3),
        "whole_s": round(whole - console.started, 3),
        "peak_rss_mb": round(hwm / 1024, 1),
    }


def cli(store, sql):
    t0 = time.perf_counter()
    subprocess.run(["/usr/bin/sqlite3", store, sql], stdout=subprocess.DEVNULL, check=True)
    return round(time.perf_counter() - t0, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", required=True, help="label=path")
    ap.add_argument("--store", action="append", required=True, help="label=path")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--settle", type=float, default=10.0, help="seconds before VmHWM")
    ap.add_argument("--env", action="append", metavar="K=V",
                    help="add to the console's environment (repeatable), e.g. STACKLESS_TUI_NO_RECORD=1")
    args = ap.parse_args()
    e2e_bench.parse_env(args.env)
    bins = [b.split("=", 1) for b in args.bin]
    stores = [s.split("=", 1) for s in args.store]
    out = {"load_start": load()}
    for slabel, store in stores:
        orders = e2e_bench.visible_orders(store)
        for _ in range(args.rounds):
            for blabel, binary in bins:
                r = one(binary, store, orders, args.settle)
                out.setdefault(f"{slabel} {blabel}", []).append(r)
                e2e_bench.log(f"{slabel} {blabel}: {r} (load {load()})")
            out.setdefault(f"{slabel} sqlite3 join s", []).append(
                cli(store, e2e_bench.SNAPSHOT_SQL_V14))
            out.setdefault(f"{slabel} sqlite3 first rows s", []).append(cli(store, HEAD_SQL))
    out["load_end"] = load()
    for key, runs in list(out.items()):
        if isinstance(runs, list) and runs and isinstance(runs[0], dict):
            out[key + " median"] = {
                k: statistics.median(r[k] for r in runs) for k in runs[0]
            }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
