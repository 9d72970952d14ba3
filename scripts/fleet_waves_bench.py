#!/usr/bin/env python3
"""The fleet console over N hosts whose ssh never answers: time to the first
frame and key latency over the connection waves (BENCHMARKS.md).

A fake `ssh` (a shell script first on PATH) logs its start and sleeps, so
every host stays `connecting` until its 15 s of silence. The console runs in
a 120x40 pseudo-terminal; `?` is typed at fixed times after the start and
the clock runs until `help` arrives from the pty.

    python3 scripts/fleet_waves_bench.py [BIN] [HOSTS]
"""
import fcntl
import os
import pty
import select
import struct
import sys
import tempfile
import termios
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/stackless-tui"
HOSTS = int(sys.argv[2]) if len(sys.argv) > 2 else 500
KEYS_AT = [1, 3, 8, 14.8, 15.1, 15.4, 16, 18, 20, 31]

work = tempfile.mkdtemp(prefix="fleet-waves-")
os.makedirs(f"{work}/bin")
with open(f"{work}/bin/ssh", "w") as f:
    f.write(f"#!/bin/sh\necho \"$(date +%s) $*\" >> {work}/starts\nexec sleep 60\n")
os.chmod(f"{work}/bin/ssh", 0o755)
with open(f"{work}/fleet.toml", "w") as f:
    f.write("".join(f'[[host]]\ntarget = "ssh://h{i}"\n\n' for i in range(1, HOSTS + 1)))
open(f"{work}/config.toml", "w").close()
open(f"{work}/starts", "w").close()
env = {
    "PATH": f"{work}/bin:/usr/bin:/bin",
    "TERM": "xterm-256color",
    "HOME": work,
    "XDG_STATE_HOME": f"{work}/state",
}
bin_path = os.path.abspath(BIN)
t0 = time.time()
pid, fd = pty.fork()
if pid == 0:
    os.execve(bin_path, [bin_path, "--fleet", f"{work}/fleet.toml",
                         "--config", f"{work}/config.toml"], env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
buf = b""


def read_until(pattern, timeout):
    global buf
    end = time.time() + timeout
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.005)
        if ready:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                return False
            if pattern in buf:
                return True
    return False


shown = read_until(b"Hosts", 30)
print(f"first frame: {(time.time() - t0) * 1000:.0f} ms ({shown})")
for at in KEYS_AT:
    while time.time() - t0 < at:
        read_until(b"\x00", 0.05)
    buf = b""
    asked = time.time()
    os.write(fd, b"?")
    answered = read_until(b"help", 10)
    print(f"key at {at:5.1f} s: {(time.time() - asked) * 1000:.0f} ms ({answered})")
    os.write(fd, b"\x1b")
    read_until(b"\x00", 0.2)
with open(f"{work}/starts") as f:
    starts = [int(line.split()[0]) for line in f]
waves = {}
for second in starts:
    waves[second - starts[0]] = waves.get(second - starts[0], 0) + 1
print(f"ssh started: {len(starts)}, by second after the first: {waves}")
os.write(fd, b"q")
time.sleep(4)
