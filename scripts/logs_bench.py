#!/usr/bin/env python3
"""The logs view (`l`) on a 1 KiB and a 1 GiB log: time to the first screen
and the console's RSS. Standard library only; run from the repository root
after a release build of the binary alone:

    cargo build --release --locked --bin stackless-tui
    python3 scripts/logs_bench.py

What it does, for each size (a fresh console each, terminal 200x60,
`--no-reaper`, on a copy of tests/fixtures/stackless-real-v4.db):

- writes `<state_dir>/logs/alpha/web.log` in /tmp: 1 KiB (13 lines) or
  1 GiB (timestamped request lines, 1 MiB blocks), its last line a marker;
  or 1 GiB of one line (no newline at all), the marker starting its last
  4 KiB (the unended last part the view shows first);
  evicts it from the page cache (posix_fadvise DONTNEED) before every open,
  so each open reads from disk;
- sorts by name (`s`), selects alpha (`g`), then 5 times: presses `l` and
  times until the marker line's bytes arrive from the pty (the first screen
  of the logs view), then Esc;
- reads VmHWM (peak RSS) and VmRSS from /proc before the first `l` and
  after the last.

The 1 GiB file is deleted at the end (only one such file exists at a time).
Prints a markdown table.
"""

import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_bench import Console  # noqa: E402

MARKER = b"tail-marker-end-of-log"
LINE = b"2026-12-01T11:20:00Z INFO  GET /v1/orders/1234567 200 12ms upstream=orders-7f9c\n"


def write_log(path, size, one_line=False):
    with open(path, "wb") as f:
        if one_line:
            block = (LINE[:-1] + b" ") * ((1 << 20) // len(LINE))
            written = 0
            tail = MARKER + b" " * (4096 - len(MARKER))
            while written + len(block) + len(tail) < size:
                f.write(block)
                written += len(block)
            f.write(b"x" * (size - written - len(tail)))
            f.write(tail)
            return
        if size <= 1 << 10:
            f.write(LINE * 12)
        else:
            block = LINE * ((1 << 20) // len(LINE))
            written = 0
            while written + len(block) < size:
                f.write(block)
                written += len(block)
            f.write(LINE * ((size - written) // len(LINE) - 1))
        f.write(b"2026-12-01T11:59:59Z " + MARKER + b"\n")


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def measure(binary, size, runs=5, one_line=False):
    root = tempfile.mkdtemp(prefix="logs-bench-", dir="/tmp")
    try:
        store = os.path.join(root, "state.db")
        shutil.copy("tests/fixtures/stackless-real-v4.db", store)
        logs = os.path.join(root, "logs", "alpha")
        os.makedirs(logs)
        web = os.path.join(logs, "web.log")
        write_log(web, size, one_line)
        actual = os.path.getsize(web)
        console = Console(binary, store)
        console.wait_for([b"alpha", b"golf"])
        console.drain_for(1.0)
        before = console.status("VmHWM")
        console.fd and os.write(console.fd, b"s")
        console.drain_for(0.3)
        os.write(console.fd, b"g")
        console.drain_for(0.3)
        times = []
        for _ in range(runs):
            evict(web)
            since = len(console.buf)
            t0 = time.perf_counter()
            os.write(console.fd, b"l")
            seen = console.wait_for([MARKER], since=since, timeout=30)
            times.append((seen - t0) * 1000)
            console.drain_for(0.3)
            os.write(console.fd, b"\x1b")
            console.drain_for(0.5)
        hwm, rss = console.status("VmHWM"), console.status("VmRSS")
        console.quit()
        return {
            "bytes": actual,
            "first_screen_ms": times,
            "median_ms": statistics.median(times),
            "max_ms": max(times),
            "hwm_before_mb": before / 1024,
            "hwm_after_mb": hwm / 1024,
            "rss_after_mb": rss / 1024,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/stackless-tui"
    results = [
        ("1 KiB", measure(binary, 1 << 10)),
        ("1 GiB", measure(binary, 1 << 30)),
        ("1 GiB, one line", measure(binary, 1 << 30, one_line=True)),
    ]
    print("| log | size (bytes) | `l` to first screen, median of 5 (max) | peak RSS before `l` | peak RSS after 5 opens | RSS after |")
    print("|---|---|---|---|---|---|")
    for label, r in results:
        print(
            f"| {label} | {r['bytes']:,} | {r['median_ms']:.1f} ms ({r['max_ms']:.1f} ms) "
            f"| {r['hwm_before_mb']:.1f} MB | {r['hwm_after_mb']:.1f} MB | {r['rss_after_mb']:.1f} MB |"
        )
    with open("/proc/loadavg") as f:
        print(f"\nload average: {f.read().split()[0]}; runs: " + "; ".join(
            f"{label}: " + ", ".join(f"{t:.1f}" for t in r["first_screen_ms"]) for label, r in results))


if __name__ == "__main__":
    main()
