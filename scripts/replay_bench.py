#!/usr/bin/env python3
"""`replay`'s first frame and its seeks, in a PTY (BENCHMARKS.md, "The flight recorder:
replay, seeks, `snapshot --at`, and the recorder's diff"): spawn
`stackless-tui replay --history DIR --at AT` at 120x40 and time from the
spawn to the first bytes holding the header's `replay` and to the first
holding a recorded row (ROW_TOKEN); then press each KEY RUNS times (after
the screen has been quiet for QUIET seconds) and time from the key to the
end of the redraw it causes (its last byte before QUIET of silence, so
that a frame drawn in pieces counts whole; its first byte beside it;
the 1 s tick's frame that changes no cell is not counted).
p50/p95/max in milliseconds.

    python3 scripts/replay_bench.py BIN DIR AT [RUNS] [ROW_TOKEN] [KEYS]
"""
import fcntl
import json
import os
import pty
import select
import statistics
import struct
import sys
import termios
import time

QUIET = 0.25
EMPTY_FRAME = b"\x1b[m\x1b[m\x1b[m\x1b[0m\x1b[?25l"


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(values):
    ms = [1000 * v for v in values]
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(pct(ms, 95), 1),
        "max_ms": round(max(ms), 1),
    }


def read_for(fd, secs):
    """Bytes read until `secs` pass with nothing, and the time of the last."""
    first, last, out = None, None, b""
    while True:
        ready, _, _ = select.select([fd], [], [], secs)
        if not ready:
            return out, first, last
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return out, first, last
        if not chunk:
            return out, first, last
        out += chunk
        # The 1 s tick's frame with no cell changed (19 bytes: the style
        # reset and the cursor hidden) is no redraw of the seek.
        if chunk.replace(EMPTY_FRAME, b""):
            last = time.perf_counter()
            first = first or last


def main():
    binary, history, at = sys.argv[1], sys.argv[2], sys.argv[3]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    row = (sys.argv[5] if len(sys.argv) > 5 else "inst-").encode()
    keys = sys.argv[6] if len(sys.argv) > 6 else "]}[{"
    home = os.environ.get("HOME", "/tmp")
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(TERM="xterm-256color", HOME=home, NO_COLOR="1")
        os.execv(binary, [binary, "--utc", "replay", "--history", history, "--at", at])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen, first_replay, first_row = b"", None, None
    deadline = start + 30
    while (first_replay is None or first_row is None) and time.perf_counter() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        seen += os.read(fd, 65536)
        now = time.perf_counter()
        if first_replay is None and b"replay" in seen:
            first_replay = now
        if first_row is None and row in seen:
            first_row = now
    result = {
        "first_frame_with_replay_ms": first_replay and round(1000 * (first_replay - start), 1),
        "first_frame_with_rows_ms": first_row and round(1000 * (first_row - start), 1),
    }
    read_for(fd, 1.0)
    for key in keys:
        times, firsts, empty = [], [], 0
        for _ in range(runs):
            read_for(fd, QUIET)
            sent = time.perf_counter()
            os.write(fd, key.encode())
            _, first, last = read_for(fd, QUIET)
            if last is None:
                empty += 1
                continue
            times.append(last - sent)
            firsts.append(first - sent)
        result[f"key {key}"] = summary(times) if times else None
        result[f"key {key} first byte"] = summary(firsts) if firsts else None
        result[f"key {key} no redraw"] = empty
    os.write(fd, b"q")
    time.sleep(0.3)
    try:
        os.kill(pid, 15)
    except OSError:
        pass
    os.waitpid(pid, 0)
    with open("/proc/loadavg") as f:
        result["load"] = f.read().split()[0]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
