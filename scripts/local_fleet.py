#!/usr/bin/env python3
"""A fleet of local hosts to try the fleet view on one machine.

Starts an OpenSSH server on 127.0.0.1 (its own host key, your user, host
key checking on) and writes an ssh config with one alias per store, each
alias reaching its own copy of a store through `SetEnv
STACKLESS_TUI_STATE` (the sshd accepts that one variable). Then prints the
command that opens the fleet view, and keeps sshd running until Ctrl-C.

    python3 scripts/local_fleet.py                 # 3 hosts: the fixtures' 0.4.0, 0.3.0, v4 stores
    python3 scripts/local_fleet.py a.db b.db ...   # one host per store (copied)

Needs /usr/sbin/sshd (Debian: openssh-server) and ssh-keygen. The teardown
the printed command passes on is the demo's (`stackless-tui demo-down`),
so `r` and `d` really tombstone an instance in that host's copy.
"""

import argparse
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet_bench import Sshd, ROOT  # noqa: E402

FIXTURES = ["real-0.4.0-v14.db", "real-0.3.0-v5.db", "stackless-real-v4.db"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stores", nargs="*")
    ap.add_argument("--dir", default="/tmp/stackless-local-fleet")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/stackless-tui"))
    args = ap.parse_args()
    stores = args.stores or [os.path.join(ROOT, "tests/fixtures", f) for f in FIXTURES]
    os.makedirs(args.dir, exist_ok=True)
    hosts, copies = [], []
    for i, store in enumerate(stores, 1):
        alias = f"fleet-{i}"
        home = os.path.join(args.dir, alias)
        os.makedirs(home, exist_ok=True)
        copy = os.path.join(home, "state.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(copy + suffix):
                os.remove(copy + suffix)
        shutil.copy(store, copy)
        hosts.append(alias)
        copies.append(copy)
    sshd = Sshd(args.dir, hosts, copies)
    fleet = os.path.join(args.dir, "fleet.toml")
    with open(fleet, "w") as f:
        for alias in hosts:
            f.write(f'[[host]]\ntarget = "ssh://{alias}"\n\n')
    binary = os.path.abspath(args.bin)
    print(f"sshd on 127.0.0.1:{sshd.port}; hosts: {', '.join(hosts)} (stores under {args.dir})")
    print("the fleet view:")
    print(f"  {binary} --fleet {fleet} --ssh-config {sshd.config} --remote-bin {binary} "
          f"--down-cmd '{binary} demo-down {{name}} --json'")
    print("Ctrl-C stops sshd.", flush=True)
    try:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while sshd.proc.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        sshd.stop()


if __name__ == "__main__":
    main()
