#!/usr/bin/env python3
"""The console's CPU while a logs view (`l`) is open on an instance whose
logs directory holds many files (listing a million files every second
costs about 28 % of a CPU, so an unchanged directory is not listed
again). Standard library only; run from the repository root:

    cargo build --release --locked --bin stackless-tui
    python3 scripts/logs_dir_cpu.py [BINARY [FILES [SECONDS]]]

BINARY defaults to target/release/stackless-tui, FILES to 1,000,000,
SECONDS to 30. What it does (terminal 200x60, `--no-reaper`, on a copy of
tests/fixtures/stackless-real-v4.db in /tmp):

- writes `<state_dir>/logs/alpha/web.log` (12 lines, the last a marker)
  and FILES empty files beside it (`f0000000` ..., made with mknod);
- starts the console, sorts by name (`s`), selects alpha (`g`), waits 3 s,
  then measures the console's CPU (utime + stime from /proc) for SECONDS
  with the list alone;
- presses `l`, waits for the marker (the logs view's first screen), waits
  3 s, measures the CPU again for SECONDS with the logs view open;
- quits and removes the directory.

Prints one markdown table row: files, CPU % of one core with the list,
with the logs view open, and the load average.
"""

import os
import shutil
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_bench import Console  # noqa: E402

MARKER = b"logs-dir-cpu-marker"


def cpu_percent(console, seconds):
    cpu0, t0 = console.cpu_seconds(), time.perf_counter()
    console.drain_for(seconds)
    cpu1, t1 = console.cpu_seconds(), time.perf_counter()
    return 100 * (cpu1 - cpu0) / (t1 - t0)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/stackless-tui"
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
    root = tempfile.mkdtemp(prefix="logs-dir-cpu-", dir="/tmp")
    try:
        store = os.path.join(root, "state.db")
        shutil.copy("tests/fixtures/stackless-real-v4.db", store)
        logs = os.path.join(root, "logs", "alpha")
        os.makedirs(logs)
        with open(os.path.join(logs, "web.log"), "wb") as f:
            f.write(b"2026-12-01T11:20:00Z INFO GET /v1/orders 200 12ms\n" * 11)
            f.write(MARKER + b"\n")
        t0 = time.perf_counter()
        for i in range(files):
            os.mknod(os.path.join(logs, f"f{i:07}"), 0o600 | stat.S_IFREG)
        made = time.perf_counter() - t0
        print(f"made {files:,} files in {made:.1f} s", file=sys.stderr)
        console = Console(binary, store)
        console.wait_for([b"alpha", b"golf"])
        os.write(console.fd, b"s")
        console.drain_for(0.3)
        os.write(console.fd, b"g")
        console.drain_for(3.0)
        listed = cpu_percent(console, seconds)
        since = len(console.buf)
        os.write(console.fd, b"l")
        console.wait_for([MARKER], since=since, timeout=120)
        console.drain_for(3.0)
        viewing = cpu_percent(console, seconds)
        console.quit()
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        print("| files in the logs dir | CPU, list only | CPU, logs view open | load |")
        print("|---|---|---|---|")
        print(f"| {files:,} | {listed:.1f} % | {viewing:.1f} % | {load} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
