#!/usr/bin/env python3
"""The fleet view over the real OpenSSH: HOSTS hosts x PER_HOST instances.

One sshd on 127.0.0.1 (started here, its own keys, host key checking on),
HOSTS aliases in an ssh config, each reaching its own schema-14 store
(scripts/gen_v14_store.py, PER_HOST instances) through `SetEnv
STACKLESS_TUI_STATE`; the console runs `--fleet FILE` in a pseudo-terminal
(200x60) and its screen is read with pyte. Run from the repository root
after a release build:

    cargo build --release --bin stackless-tui
    pip install pyte   # the screen reader (the benchmark only)
    python3 scripts/fleet_bench.py --hosts 50 --per-host 2000

What it measures:

- start to every host's rows on screen: from fork until the header says
  `HOSTS connected` and `HOSTS*PER_HOST instances` (the Instances table is
  built from every host's first snapshot), then until the first row is
  drawn;
- change-to-screen: the table filtered to one instance of a random host
  (`/host:hNN name:inst-XXXXXX`, waited until `1/1`), then this script
  commits `UPDATE instances SET substrate = <token>` on that host's store;
  the clock runs from just before COMMIT until the token is on the screen
  (through that host's agent, its ssh, the console). p50/p95/max over
  CHANGES changes;
- the console's peak RSS (VmHWM) after all that;
- idle CPU: utime+stime of the console over IDLE seconds with every host
  connected and idle; also the ssh clients' and the agents' (they run on
  this machine here; on a real fleet each agent runs on its host);
- the floors: `ssh ALIAS true` for every host at once (OpenSSH alone),
  and the same fleet through `snapshot --follow` (no view), from
  fork to every host's `hello` and first `synced`;
- the bytes of one changed lease on the wire: a lease renewed on one host,
  the bytes its agent's stream carried for it (read on a separate
  `snapshot --follow` of that host through the same sshd).
"""

import argparse
import getpass
import json
import os
import pty
import random
import shutil
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import time
import select


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS, COLS = 60, 200


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """CPU seconds per thread name of `pid` (threads of one name summed)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = name.rstrip("0123456789") if name.startswith("fleet-") else name
        secs = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out[name] = out.get(name, 0) + secs
    return out


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def descendants(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except OSError:
            pass
    return out


def running(binary):
    """The pids running `binary` (the console and the agents)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/exe") == binary:
                pids.append(int(entry))
        except OSError:
            continue
    return pids


class Sshd:
    def __init__(self, work, hosts, stores):
        self.dir = os.path.join(work, "sshd")
        os.makedirs(self.dir, exist_ok=True)
        p = lambda n: os.path.join(self.dir, n)
        for key in ("host_key", "client_key"):
            if not os.path.exists(p(key)):
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", p(key)], check=True)
        shutil.copy(p("client_key.pub"), p("authorized_keys"))
        os.makedirs("/run/sshd", exist_ok=True) if os.geteuid() == 0 else None
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        user = getpass.getuser()
        with open(p("sshd_config"), "w") as f:
            f.write(f"ListenAddress 127.0.0.1\nPort {self.port}\nHostKey {p('host_key')}\n"
                    f"PidFile {p('sshd.pid')}\nAuthorizedKeysFile {p('authorized_keys')}\n"
                    f"AllowUsers {user}\nUsePAM no\nStrictModes no\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                    "PermitRootLogin prohibit-password\nPrintMotd no\nPrintLastLog no\n"
                    "LogLevel ERROR\nAcceptEnv STACKLESS_TUI_STATE\nMaxStartups 500\n")
        with open(p("host_key.pub")) as f:
            host_key = f.read().strip()
        with open(p("known_hosts"), "w") as f:
            f.write(f"[127.0.0.1]:{self.port} {host_key}\n")
        self.config = p("ssh_config")
        with open(self.config, "w") as f:
            for alias, store in zip(hosts, stores):
                f.write(f"Host {alias}\n  HostName 127.0.0.1\n  Port {self.port}\n  User {user}\n"
                        f"  IdentityFile {p('client_key')}\n  IdentitiesOnly yes\n  IdentityAgent none\n"
                        f"  UserKnownHostsFile {p('known_hosts')}\n  GlobalKnownHostsFile /dev/null\n"
                        "  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n"
                        f"  SetEnv STACKLESS_TUI_STATE={store}\n")
        self.proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", p("sshd_config")],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        sys.exit("sshd did not listen")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Console:
    def __init__(self, argv, env):
        try:
            import pyte
        except ImportError:
            sys.exit("fleet_bench.py needs pyte: pip install pyte")
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.started = time.monotonic()
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(argv[0], argv, env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        self.pid, self.fd = pid, fd

    def pump(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 1 << 20)
        except OSError:
            return False
        self.stream.feed(data)
        return True

    def text(self):
        return "\n".join(self.screen.display)

    def wait_for(self, test, timeout, every=0.01):
        """Poll the screen every `every` seconds (reading the console's
        output in between) until `test` holds; the time it first held."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if test(self.text()):
                return time.monotonic()
            until = time.monotonic() + every
            while self.pump(max(0.0, until - time.monotonic())) and time.monotonic() < until:
                pass
        raise TimeoutError(f"not on screen after {timeout}s:\n{self.text()}")

    def send(self, keys):
        os.write(self.fd, keys.encode())

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.pump(0.05)

    def quit(self):
        self.send("q")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.pump(0.05)
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def lease_bytes(binary, sshd, alias, store, home):
    """The bytes of one renewed lease in one host's stream."""
    env = dict(os.environ, HOME=home)
    proc = subprocess.Popen([binary, "--controller", f"ssh://{alias}", "--ssh-config", sshd.config,
                             "--remote-bin", binary, "--config", os.path.join(home, "empty.toml"),
                             "snapshot", "--follow"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=env)
    synced = 0
    while synced < 1:
        line = proc.stdout.readline()
        if not line:
            sys.exit("the follow stream ended")
        if b'"type":"synced"' in line:
            synced += 1
    db = sqlite3.connect(store, timeout=10)
    db.execute("UPDATE leases SET expires_at = expires_at + 60 WHERE instance = 'inst-000001'")
    db.commit()
    db.close()
    total = 0
    while True:
        line = proc.stdout.readline()
        if b'"type":"heartbeat"' in line:
            continue
        total += len(line)
        if b'"type":"synced"' in line:
            break
    proc.terminate()
    proc.wait()
    return total


def ssh_floor(sshd, hosts):
    """Seconds for one `ssh ALIAS true` per host, all at once: what
    OpenSSH alone costs this machine (sshd and the remote login shell
    included)."""
    t0 = time.monotonic()
    procs = [subprocess.Popen(["ssh", "-F", sshd.config, alias, "true"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for alias in hosts]
    for proc in procs:
        proc.wait()
    return round(time.monotonic() - t0, 2)


def follow_floor(binary, sshd, fleet, home, hosts):
    """The same fleet through `snapshot --follow` (no view): seconds from
    fork to every host's `hello`, and to every host's first `synced` (the
    floor the agents and ssh set)."""
    env = dict(os.environ, HOME=home)
    t0 = time.monotonic()
    proc = subprocess.Popen([binary, "--fleet", fleet, "--ssh-config", sshd.config, "--remote-bin", binary,
                             "--config", os.path.join(home, "empty.toml"), "snapshot", "--follow"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    hello, synced, out = set(), set(), {}
    for line in proc.stdout:
        if b'"type":"hello"' in line:
            hello.add(json.loads(line)["host"])
            if len(hello) == hosts:
                out["all_hello_secs"] = round(time.monotonic() - t0, 2)
        elif b'"type":"synced"' in line:
            synced.add(json.loads(line)["host"])
            if len(synced) == hosts:
                out["all_synced_secs"] = round(time.monotonic() - t0, 2)
                break
    proc.terminate()
    proc.wait()
    time.sleep(2)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/stackless-tui"))
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--per-host", type=int, default=2000)
    ap.add_argument("--changes", type=int, default=40)
    ap.add_argument("--idle-secs", type=int, default=60)
    ap.add_argument("--work", default="/tmp/fleet-bench")
    ap.add_argument("--json")
    ap.add_argument("--perf", help="perf record the console over the idle window into this file")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    os.makedirs(args.work, exist_ok=True)
    template = os.path.join(args.work, f"template-{args.per_host}.db")
    if not os.path.exists(template):
        log(f"generating a store of {args.per_host} instances")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/gen_v14_store.py"), template,
                        str(args.per_host), "0", "0"], check=True, stdout=subprocess.DEVNULL)
    hosts = [f"h{i:02d}" for i in range(1, args.hosts + 1)]
    stores = []
    for alias in hosts:
        store = os.path.join(args.work, f"{alias}.db")
        shutil.copy(template, store)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(store + suffix):
                os.remove(store + suffix)
        stores.append(store)
    sshd = Sshd(args.work, hosts, stores)
    home = tempfile.mkdtemp(prefix="fleet-bench-home-")
    open(os.path.join(home, "empty.toml"), "w").close()
    fleet = os.path.join(home, "fleet.toml")
    with open(fleet, "w") as f:
        for alias in hosts:
            f.write(f'[[host]]\ntarget = "ssh://{alias}"\n\n')
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TERM": "xterm-256color",
           "XDG_STATE_HOME": os.path.join(home, "state"), "TMPDIR": home}
    # --no-reaper is passed on to every agent: an idle fleet (the stores
    # hold expired instances and due backoffs, which reapers would work on
    # each minute).
    argv = [binary, "--fleet", fleet, "--ssh-config", sshd.config, "--remote-bin", binary,
            "--config", os.path.join(home, "empty.toml"), "--no-reaper"]
    results = {"hosts": args.hosts, "per_host": args.per_host}
    results["ssh_true_secs"] = ssh_floor(sshd, hosts)
    log(f"ssh ALIAS true, every host at once: {results['ssh_true_secs']} s")
    results["follow_floor"] = follow_floor(binary, sshd, fleet, home, args.hosts)
    log(f"snapshot --follow over the same fleet: {results['follow_floor']}")
    total = args.hosts * args.per_host
    console = Console(argv, env)
    try:
        t = console.wait_for(lambda s: f"{args.hosts} connected" in s and f"{total} instances" in s, 120,
                             every=0.05)
        results["all_rows_secs"] = round(t - console.started, 2)
        log(f"every host's rows: {results['all_rows_secs']} s")
        console.drain(3)
        rng = random.Random(42)
        latencies = []
        for k in range(args.changes):
            h = rng.randrange(args.hosts)
            i = rng.randrange(args.per_host)
            while i % 10 in (3, 6, 9):
                i = rng.randrange(args.per_host)
            name = f"inst-{i:06d}"
            console.send("\x1b")
            console.drain(0.05)
            console.send(f"/host:{hosts[h]} name:{name}\r")
            console.wait_for(lambda s: "Instances 1/1" in s and name in s, 20)
            token = f"t{k:03d}{rng.randrange(1000):03d}"
            db = sqlite3.connect(stores[h], timeout=10)
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE instances SET substrate = ? WHERE name = ?", (token, name))
            t0 = time.monotonic()
            db.commit()
            db.close()
            t1 = console.wait_for(lambda s: token in s, 20)
            latencies.append((t1 - t0) * 1000)
        results["change_ms"] = {"p50": round(statistics.median(latencies), 1),
                                "p95": round(pct(latencies, 95), 1),
                                "max": round(max(latencies), 1), "n": len(latencies)}
        log(f"change-to-screen: {results['change_ms']}")
        console.send("\x1b")
        console.drain(5)
        ssh = [p for p in descendants(console.pid)]
        agents = [p for p in running(binary) if p != console.pid]
        c0 = cpu_secs(console.pid)
        t0 = thread_cpu(console.pid)
        s0 = sum(cpu_secs(p) for p in ssh)
        a0 = sum(cpu_secs(p) for p in agents)
        perf = None
        if args.perf:
            # Where the idle time goes: samples of the console alone over
            # the idle window (`perf report -i FILE`).
            perf = subprocess.Popen(
                ["perf", "record", "-F", "999", "-g", "-o", args.perf, "-p", str(console.pid)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        console.drain(args.idle_secs)
        if perf is not None:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        results["idle_cpu_pct"] = {
            "console": round((cpu_secs(console.pid) - c0) / args.idle_secs * 100, 2),
            "ssh_clients": round((sum(cpu_secs(p) for p in ssh) - s0) / args.idle_secs * 100, 2),
            "agents": round((sum(cpu_secs(p) for p in agents) - a0) / args.idle_secs * 100, 2),
            "secs": args.idle_secs, "ssh_count": len(ssh), "agent_count": len(agents),
        }
        t1 = thread_cpu(console.pid)
        results["idle_cpu_pct"]["console_threads"] = {
            name: round((t1[name] - t0.get(name, 0)) / args.idle_secs * 100, 2)
            for name in t1 if t1[name] - t0.get(name, 0) > 0}
        log(f"idle CPU: {results['idle_cpu_pct']}")
        results["console_rss_mib"] = round(status_kib(console.pid, "VmRSS") / 1024, 1)
        results["console_peak_rss_mib"] = round(status_kib(console.pid, "VmHWM") / 1024, 1)
        log(f"console RSS {results['console_rss_mib']} MiB, peak {results['console_peak_rss_mib']} MiB")
    finally:
        console.quit()
    results["lease_bytes"] = lease_bytes(binary, sshd, hosts[0], stores[0], home)
    log(f"one renewed lease on the wire: {results['lease_bytes']} bytes")
    sshd.stop()
    print(json.dumps(results, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
