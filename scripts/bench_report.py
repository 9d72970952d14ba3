#!/usr/bin/env python3
"""Turn one run's criterion results and end-to-end figures into the table in
BENCHMARKS.md (standard library only).

    python3 scripts/bench_report.py --criterion target/criterion \
        --e2e target/e2e-bench.json --write BENCHMARKS.md

Every row carries the sqlite3 CLI baseline measured in the same run at the
same size (criterion's `sqlite3_cli` for the benchmarks, the e2e script's own
CLI runs for the end-to-end rows) and the ratio to it. With --write, the text
between the `bench-table` markers in the file is replaced; otherwise the table
is printed.
"""

import argparse
import json
import os
import sys

START = "<!-- bench-table:start -->"
END = "<!-- bench-table:end -->"
SIZES = [1_000, 10_000, 100_000]
LABEL = {1_000: "1k", 10_000: "10k", 100_000: "100k"}
BENCH_CMD = "`cargo bench --bench scale`"
E2E_CMD = "`python3 scripts/e2e_bench.py`"


def criterion(root, bench, n):
    """Median time in ms of scale/<bench>/<n>, or None."""
    path = os.path.join(root, "scale", bench, str(n), "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["median"]["point_estimate"] / 1e6
    except (OSError, KeyError, ValueError):
        return None


def ms(v):
    if v is None:
        return "n/a"
    if v < 0.01:
        return f"{v * 1000:.2f} µs"
    if v < 1:
        return f"{v * 1000:.0f} µs"
    return f"{v:.1f} ms" if v < 100 else f"{v:.0f} ms"


def ratio(value, base):
    if value is None or not base:
        return "n/a"
    return f"{value / base:.2f}x"


def verdict(ok):
    return "met" if ok else "**missed**"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--criterion", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion"))
    ap.add_argument("--e2e", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "e2e-bench.json"))
    ap.add_argument("--write", help="replace the table between the markers in this file")
    args = ap.parse_args()

    rows = []
    head = "| figure | size | measured | target | verdict | sqlite3 CLI, same run | ratio to it | command |"
    sep = "|---|---|---|---|---|---|---|---|"
    cli = {n: criterion(args.criterion, "sqlite3_cli", n) for n in SIZES}

    def bench_rows(bench, title, target=None, check=None, at=None):
        for n in SIZES:
            v = criterion(args.criterion, bench, n)
            if v is None:
                continue
            t, ver = "", ""
            if target and (at is None or n == at):
                t, ver = target, verdict(check(v, n))
            rows.append(f"| {title} | {LABEL[n]} | {ms(v)} | {t} | {ver} | {ms(cli[n])} | {ratio(v, cli[n])} | {BENCH_CMD} |")

    bench_rows("snapshot_read", "snapshot read (`Store::snapshot`, fixed probe)",
               "<= 2x sqlite3 CLI", lambda v, n: cli[n] is not None and v <= 2 * cli[n], at=100_000)
    bench_rows("snapshot_read_watcher_probe", "snapshot read with the watcher's probe (sysinfo behind `kill(pid, 0)`)")
    bench_rows("snapshot_read_sysinfo_only", "snapshot read with sysinfo alone (the watcher's probe before)")
    bench_rows("snapshot_drop", "freeing a replaced snapshot (render thread)")
    bench_rows("snapshot_clone", "copying a snapshot (watcher, when only a liveness changed)")
    bench_rows("sqlite3_cli_join", "sqlite3 CLI, the old LEFT JOIN query (for comparison)")
    for bench, title in [("dead_pid_sysinfo", "one liveness probe of a dead pid, sysinfo alone"),
                         ("dead_pid_checked", "one liveness probe of a dead pid, `CheckedProbe` (watcher)")]:
        path = os.path.join(args.criterion, "probe", bench, "new", "estimates.json")
        try:
            with open(path) as f:
                v = json.load(f)["median"]["point_estimate"] / 1e6
            rows.append(f"| {title} | any | {ms(v)} | | | | | {BENCH_CMD} |")
        except (OSError, KeyError, ValueError):
            pass
    bench_rows("view_model_apply", "view model build (new snapshot into `App`: sort, filter, counts)")
    bench_rows("view_rows_visible", "view rows for one screen (25 `instance_row`s)")
    bench_rows("tick_event", "countdown tick (`Event::Tick` into `App`)")
    bench_rows("frame_200x60", "one frame, `TestBackend` 200x60",
               "<= 2 ms", lambda v, n: v <= 2.0, at=100_000)
    bench_rows("tick_and_frame_200x60", "tick + frame, clock moving, 200x60")
    bench_rows("reaper_plan", "one reaper planning pass (`decision::plan`)")

    e2e = {}
    try:
        with open(args.e2e) as f:
            e2e = json.load(f)
    except OSError:
        print(f"no {args.e2e}: end-to-end rows left out", file=sys.stderr)
    base = e2e.get("sqlite3_cli_ms", {})
    b10 = base.get("10k", {}).get("ms")
    b100 = base.get("100k", {}).get("ms")
    rss100 = base.get("100k", {}).get("peak_rss_mb")
    if "latency_10k" in e2e:
        r = e2e["latency_10k"]
        rows.append(f"| change-to-screen latency p50 ({r['changes']} changes, pty) | 10k | {r['p50_ms']} ms | | | {ms(b10)} | {ratio(r['p50_ms'], b10)} | {E2E_CMD} |")
        rows.append(f"| change-to-screen latency p95 | 10k | {r['p95_ms']} ms | <= 150 ms | {verdict(r['p95_ms'] <= 150)} | {ms(b10)} | {ratio(r['p95_ms'], b10)} | {E2E_CMD} |")
    if "idle_10k" in e2e:
        r = e2e["idle_10k"]
        rows.append(f"| idle CPU over {r['seconds']:.0f} s (all threads; {r['wakeups_per_s']} wakeups/s, {r['pty_bytes_per_s']:.0f} B/s to the terminal) | 10k | {r['cpu_percent_of_one_core']} % of one core | <= 1 % | {verdict(r['cpu_percent_of_one_core'] <= 1)} | {ms(b10)} per read | {ratio(r['cpu_seconds'] * 1000 / r['seconds'], b10)} (CPU ms per s / one read) | {E2E_CMD} |")
    if "idle_100k" in e2e:
        r = e2e["idle_100k"]
        rows.append(f"| idle CPU over {r['seconds']:.0f} s | 100k | {r['cpu_percent_of_one_core']} % of one core | | | {ms(b100)} per read | {ratio(r['cpu_seconds'] * 1000 / r['seconds'], b100)} (CPU ms per s / one read) | {E2E_CMD} |")
    if "rss_100k" in e2e:
        r = e2e["rss_100k"]
        rows.append(f"| peak RSS (VmHWM after first frame + 5 re-reads) | 100k | {r['peak_rss_mb']} MB | <= 100 MB | {verdict(r['peak_rss_mb'] <= 100)} | {rss100} MB peak RSS | {ratio(r['peak_rss_mb'], rss100)} | {E2E_CMD} |")
        lat = sorted(r["change_latency_ms"])
        if lat:
            rows.append(f"| change-to-screen latency, median of {len(lat)} | 100k | {lat[len(lat) // 2]} ms | | | {ms(b100)} | {ratio(lat[len(lat) // 2], b100)} | {E2E_CMD} |")
        rows.append(f"| start-up to first complete frame, 1 run | 100k | {r['startup_ms']} ms | | | {ms(b100)} | {ratio(r['startup_ms'], b100)} | {E2E_CMD} |")
    if "startup_10k" in e2e:
        r = e2e["startup_10k"]
        rows.append(f"| start-up to first complete frame (median of {r['runs']}; max {r['max_ms']} ms) | 10k | {r['median_ms']} ms | <= 150 ms | {verdict(r['median_ms'] <= 150)} | {ms(b10)} | {ratio(r['median_ms'], b10)} | {E2E_CMD} |")

    # The six targets of the performance issue, first.
    targets = []

    def target(name, value, shown, limit, limit_text):
        if value is None:
            targets.append(f"| {name} | n/a | {limit_text} | n/a | |")
            return
        targets.append(f"| {name} | {shown} | {limit_text} | {verdict(value <= limit)} | {limit / value:.1f}x headroom |" if value else f"| {name} | {shown} | {limit_text} | met | |")

    lat = e2e.get("latency_10k", {})
    target("change-to-screen p95 at 10k", lat.get("p95_ms"), f"{lat.get('p95_ms')} ms", 150, "<= 150 ms")
    frame = criterion(args.criterion, "frame_200x60", 100_000)
    target("one frame at 100k (200x60)", frame, ms(frame), 2.0, "<= 2 ms")
    snap = criterion(args.criterion, "snapshot_read", 100_000)
    if snap is not None and cli[100_000]:
        r = snap / cli[100_000]
        target("snapshot read at 100k vs sqlite3 CLI", r, f"{ms(snap)} = {r:.2f}x the CLI's {ms(cli[100_000])}", 2.0, "<= 2x")
    idle = e2e.get("idle_10k", {})
    target("idle CPU at 10k", idle.get("cpu_percent_of_one_core"), f"{idle.get('cpu_percent_of_one_core')} % of one core", 1.0, "<= 1 %")
    rss = e2e.get("rss_100k", {})
    target("peak RSS at 100k", rss.get("peak_rss_mb"), f"{rss.get('peak_rss_mb')} MB", 100, "<= 100 MB")
    start = e2e.get("startup_10k", {})
    target("start-up to first frame at 10k", start.get("median_ms"), f"{start.get('median_ms')} ms", 150, "<= 150 ms")

    machine = e2e.get("machine", {})
    note = (f"\nMachine: {machine.get('cpus', os.cpu_count())} CPUs, Linux {machine.get('kernel', os.uname().release)}; "
            f"load average at the start and end of the end-to-end run: "
            f"{', '.join(f'{x:.2f}' for x in machine.get('loadavg_at_start', [])[:1])} / "
            f"{', '.join(f'{x:.2f}' for x in machine.get('loadavg_at_end', [])[:1])}.\n")
    summary = "\n".join(["| target | measured | limit | verdict | |", "|---|---|---|---|---|", *targets])
    table = summary + "\n\nEvery figure:\n\n" + "\n".join([head, sep, *rows]) + "\n" + note
    if args.write:
        with open(args.write) as f:
            text = f.read()
        if START not in text or END not in text:
            sys.exit(f"{args.write} has no {START} ... {END} markers")
        before, rest = text.split(START, 1)
        _, after = rest.split(END, 1)
        with open(args.write, "w") as f:
            f.write(before + START + "\n" + table + END + after)
        print(f"wrote the table into {args.write}", file=sys.stderr)
    else:
        print(table)


if __name__ == "__main__":
    main()
