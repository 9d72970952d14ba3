#!/usr/bin/env python3
"""What `serve --stdio` costs on the wire and on the host
(docs/protocol.md).

Runs the release binary's `serve --stdio --no-reaper` on a copy of a
store, reads its stdout on a thread, and measures: the first snapshot
(bytes, seconds to the first `synced`, beside the sqlite3 CLI reading
the same rows in the same run; the rows sent in the 2 s after it), a minute idle (bytes, CPU seconds), one
lease renewed and 1,000 leases renewed by another process (bytes of that
group), and the agent's RSS; then the interactive console (in a PTY,
`--no-reaper`) idle for the same minute beside it (CPU, RSS).

    python3 scripts/protocol_bench.py --bin target/release/stackless-tui \
        --store /tmp/v14-100k.db [--idle 60]

`--first-only N` measures only the first snapshot: N rounds, each the
sqlite3 CLI's read then every `--bin` given (repeat `--bin` for a build
before and after), interleaved; the median seconds to the first
`synced` and the agent's peak RSS then, beside the CLI's median. The
reader parses every line in Python (its time is in that figure); each
round also runs each `--bin` once more read by a bytes-only reader (no
parsing: the time until the first `{"type":"synced"` line's bytes
arrive), `first_synced_raw_secs`, and the next group's `synced` if one
comes within 2 s of it (the services' dead counts, which follow the first
group as a delta: `second_synced_raw_secs`, `bytes_by_second_synced`).

The store is made by `cargo run --release --example gen_store --
--instances 100000 --seed 42 --out /tmp/s100k.db` (schema 4) or
`python3 scripts/gen_v14_store.py` (schema 14).
"""

import argparse
import json
import os
import pty
import select
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def rss_kib(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Reader(threading.Thread):
    """Every line of the agent's stdout with its arrival time."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.lines = []  # (time, bytes, message)
        self.lock = threading.Lock()

    def run(self):
        for raw in self.stream:
            message = json.loads(raw)
            with self.lock:
                self.lines.append((time.monotonic(), len(raw), message))

    def count(self):
        with self.lock:
            return len(self.lines)

    def wait_synced(self, after, timeout=120):
        """Index just past the first `synced` at or after line `after`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for i in range(after, len(self.lines)):
                    if self.lines[i][2]["type"] == "synced":
                        return i + 1
            time.sleep(0.01)
        raise SystemExit("no synced within the timeout")

    def group_bytes(self, start, end):
        with self.lock:
            part = self.lines[start:end]
        return sum(b for _, b, m in part if m["type"] in ("rows", "synced", "reset"))


def renew(path, count):
    db = sqlite3.connect(path, timeout=30)
    names = [r[0] for r in db.execute("SELECT instance FROM leases ORDER BY instance LIMIT ?", (count,))]
    with db:
        db.executemany("UPDATE leases SET expires_at = expires_at + 3600 WHERE instance = ?", [(n,) for n in names])
    db.close()


def sqlite_cli_secs(path):
    start = time.monotonic()
    subprocess.run(
        ["sqlite3", path, "SELECT i.*, l.* FROM instances i LEFT JOIN leases l ON l.instance = i.name;"],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return time.monotonic() - start


def agent(binary, store, home, idle):
    started = time.monotonic()
    proc = subprocess.Popen(
        [binary, "--state", store, "--no-reaper", "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, HOME=home, XDG_STATE_HOME=home, XDG_CONFIG_HOME=home),
    )
    reader = Reader(proc.stdout)
    reader.start()
    first = reader.wait_synced(0)
    out = {"first_synced_secs": round(reader.lines[first - 1][0] - started, 2)}
    out["first_snapshot_bytes"] = reader.group_bytes(0, first)
    time.sleep(2)  # the services' re-probe
    out["next_2s_bytes"] = reader.group_bytes(first, reader.count())
    mark = reader.count()
    cpu0 = cpu_secs(proc.pid)
    time.sleep(idle)
    with reader.lock:
        idle_lines = reader.lines[mark:]
    out["idle_secs"] = idle
    out["idle_bytes"] = sum(b for _, b, _ in idle_lines)
    out["idle_messages"] = sorted({m["type"] for _, _, m in idle_lines})
    out["idle_cpu_secs"] = round(cpu_secs(proc.pid) - cpu0, 2)
    for n in (1, 1000):
        mark = reader.count()
        renew(store, n)
        end = reader.wait_synced(mark)
        out[f"renew_{n}_bytes"] = reader.group_bytes(mark, end)
    out["rss_kib"] = rss_kib(proc.pid)
    out["peak_rss_kib"] = rss_kib(proc.pid, "VmHWM")
    proc.stdin.close()
    proc.wait(timeout=30)
    out["exit"] = proc.returncode
    return out


def console(binary, store, home, idle):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(HOME=home, XDG_STATE_HOME=home, XDG_CONFIG_HOME=home, TERM="xterm-256color")
        os.execv(binary, [binary, "--state", store, "--no-reaper"])
    drained = threading.Event()

    def drain():
        while not drained.is_set():
            try:
                if not os.read(fd, 65536):
                    return
            except OSError:
                return

    threading.Thread(target=drain, daemon=True).start()
    time.sleep(8)  # the first snapshot, the services' read
    cpu0 = cpu_secs(pid)
    time.sleep(idle)
    out = {"idle_cpu_secs": round(cpu_secs(pid) - cpu0, 2), "rss_kib": rss_kib(pid), "peak_rss_kib": rss_kib(pid, "VmHWM")}
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    drained.set()
    return out


def first_synced(binary, store, home):
    """Seconds to the agent's first `synced`, and its peak RSS (KiB) then."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [binary, "--state", store, "--no-reaper", "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, HOME=home, XDG_STATE_HOME=home, XDG_CONFIG_HOME=home),
    )
    reader = Reader(proc.stdout)
    reader.start()
    first = reader.wait_synced(0)
    secs = reader.lines[first - 1][0] - started
    peak = rss_kib(proc.pid, "VmHWM")
    proc.stdin.close()
    proc.wait(timeout=30)
    return secs, peak


def first_synced_raw(binary, store, home):
    """Seconds until the first `synced` line's bytes arrive, nothing
    parsed: stdout read in large chunks and searched for the line."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [binary, "--state", store, "--no-reaper", "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, HOME=home, XDG_STATE_HOME=home, XDG_CONFIG_HOME=home),
    )
    needle = b'\n{"type":"synced"'
    fd = proc.stdout.fileno()
    # (seconds, bytes read) at each `synced` seen: the first group's, then
    # a second group's within 2 s of it (the services' dead counts).
    marks, tail, total = [], b"", 0
    while len(marks) < 2:
        wait = None if not marks else max(0.0, marks[0][0] + 2 - (time.monotonic() - started))
        if marks and not select.select([fd], [], [], wait)[0]:
            break
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise SystemExit("stdout ended before a synced")
        total += len(chunk)
        joined = tail + chunk
        at = joined.find(needle)
        tail = chunk[-len(needle):]
        if at >= 0:
            marks.append((time.monotonic() - started, total))
            # A second `synced` in the same read: another group's.
            if len(marks) < 2 and needle in joined[at + len(needle):]:
                marks.append((time.monotonic() - started, total))
            tail = b""
    proc.stdin.close()
    proc.stdout.close()
    proc.wait(timeout=30)
    return marks


def first_only(args):
    def median(xs):
        return sorted(xs)[(len(xs) - 1) // 2]

    with tempfile.TemporaryDirectory() as home:
        store = os.path.join(home, "state.db")
        shutil.copy(args.store, store)
        cli, runs = [], {b: [] for b in args.bin}
        raw = {b: [] for b in args.bin}
        for _ in range(args.first_only):
            cli.append(sqlite_cli_secs(store))
            for b in args.bin:
                runs[b].append(first_synced(b, store, home))
                raw[b].append(first_synced_raw(b, store, home))
        result = {"sqlite3_cli_secs": round(median(cli), 3), "rounds": args.first_only}
        for b, rs in runs.items():
            secs = median([s for s, _ in rs])
            result[b] = {
                "first_synced_secs": round(secs, 3),
                "ratio": round(secs / median(cli), 2),
                "first_synced_raw_secs": round(median([m[0][0] for m in raw[b]]), 3),
                "raw_ratio": round(median([m[0][0] for m in raw[b]]) / median(cli), 2),
                "bytes_by_first_synced": raw[b][0][0][1],
            }
            second = [m[1] for m in raw[b] if len(m) > 1]
            result[b] |= {
                # The next group within 2 s (the services' dead counts):
                # when its `synced` came, and the bytes read by then.
                "second_synced_raw_secs": round(median([s for s, _ in second]), 3) if second else None,
                "bytes_by_second_synced": second[0][1] if second else None,
                "peak_rss_mb": round(median([p for _, p in rs]) / 1024, 1),
            }
    print(json.dumps(result, indent=2))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, action="append")
    parser.add_argument("--store", required=True)
    parser.add_argument("--idle", type=int, default=60)
    parser.add_argument("--first-only", type=int, default=0)
    args = parser.parse_args()
    if args.first_only:
        first_only(args)
        return
    args.bin = args.bin[0]
    with tempfile.TemporaryDirectory() as home:
        store = os.path.join(home, "state.db")
        shutil.copy(args.store, store)
        rows = sqlite3.connect(store).execute("SELECT count(*) FROM instances").fetchone()[0]
        result = {"instances": rows, "sqlite3_cli_secs": round(sqlite_cli_secs(store), 2)}
        result["agent"] = agent(args.bin, store, home, args.idle)
        result["console"] = console(args.bin, store, home, args.idle)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
