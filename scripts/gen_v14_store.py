#!/usr/bin/env python3
"""Make a schema-14 (stackless 0.4.0) store of N instances for timing the
console's whole commands: built from the real migrations in
tests/fixtures/ddl/, every instance with a birth and a ~340-byte
definition; three in ten tombstoned (no lease, no checkpoints), the
others with a lease (a tenth expired) and the three checkpoints a local
`up` records (materialize, a `start:` process checkpoint with a pid that
cannot exist, health), as the real 0.4.0 store in tests/fixtures has
them; a dead-pid lock on one active instance in 50, a reap attempt on
one in 100, an operation queued on one in 200, and OPS finished
operations (one in 10 failed, with a real schema-2 error object) plus
EVENTS step events each (1 by default).

    python3 scripts/gen_v14_store.py OUT.db N [OPS [EVENTS]]

The history store the benchmarks use (100k instances, 1M operations,
3M events, about 1 GB, a minute or two):

    python3 scripts/gen_v14_store.py /tmp/v14-hist.db 100000 1000000 3
"""
import os
import sqlite3
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DDL = os.path.join(ROOT, "tests", "fixtures", "ddl")
# The store is made around the current time (GEN_NOW=unix seconds to fix
# it): a fixed one would have every lease expired a few hours later.
NOW = int(os.environ.get("GEN_NOW", time.time()))
# A ~340-byte definition of two services in the shape the real 0.4.0
# accepts (stackless-core-0.4.0 src/def/model.rs: `source` a table,
# `health` a table and required of a service, how it runs under
# `[services.NAME.local]`, ordering by `depends_on`): `stackless list`
# parses every instance's definition and refuses the store otherwise
# (`def.parse.schema`); tests/real/gen_store.rs checks it.
DEFINITION = (
    "[stack]\nname = 'x'\n\n"
    "[services.web]\nsource = { repo = 'https://example.invalid/web' }\n"
    "health = { path = '/healthz' }\n"
    "env = { NODE_ENV = 'production', LOG_LEVEL = 'info' }\n"
    "[services.web.local]\nrun = 'npm run start -- --port $PORT'\n\n"
    "[services.worker]\nkind = 'worker'\ndepends_on = { web = 'ready' }\n"
    "[services.worker.local]\nrun = 'python -m worker'\n")
ERROR = ('{"schema_version":2,"code":"engine.teardown.survivors","message":"teardown left survivors",'
         '"remediation":"run `stackless down NAME` again","context":{}}')


def tombstoned(i):
    """Three in ten instances are tombstoned."""
    return i % 10 in (3, 6, 9)


def checkpoints(i):
    """The checkpoints of one local instance's `up` (materialize, start,
    health), its process a pid that cannot exist (4194305 > pid_max)."""
    name = f"inst-{i:06d}"
    start = ('{"pid":4194305,"start_time":1796117794,"command":{"pid":4194305,'
             '"start_time":1796117794,"cookie":"8c230466-2bef-4f92-b8a3-10375b7593de"},'
             '"port":41325,"host":"127.0.0.1"}')
    return [
        (name, "materialize:web", "source", f"/home/operator/src/{name}",
         '{"path":"/home/operator/src/%s","root_applied":false,"overridden":true}' % name,
         NOW - 3600),
        (name, "start:web", "process", "4194305", start, NOW - 3590),
        (name, "health:web", "health", "web", "{}", NOW - 3580),
    ]


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    ops = int(sys.argv[3]) if len(sys.argv) > 3 else n
    events = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if os.path.exists(out):
        os.remove(out)
    db = sqlite3.connect(out)
    for name in sorted(os.listdir(DDL)):
        db.executescript(open(os.path.join(DDL, name)).read())
    db.execute("PRAGMA user_version = 14")
    db.execute("PRAGMA journal_mode = wal")
    with db:
        rows = []
        definition = DEFINITION
        for i in range(n):
            iid = f"{i:032x}"
            dead = tombstoned(i)
            rows.append((f"inst-{i:06d}", "local", "tombstoned" if dead else "active", definition,
                         "{}", NOW - 3600, NOW - 600 if dead else None, "", 0, iid, f"sl-{iid}"))
        db.executemany(
            "INSERT INTO instances (name, substrate, status, definition, source_overrides, created_at,"
            " tombstoned_at, definition_dir, dirty, instance_id, resource_namespace)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        db.executemany("INSERT INTO leases VALUES (?,?,?)",
                       ((f"inst-{i:06d}", 3600, NOW - 60 if i % 10 == 0 else NOW + 3600 + i)
                        for i in range(n) if not tombstoned(i)))
        db.executemany(
            "INSERT INTO checkpoints (instance, step_id, resource_kind, resource_id, payload,"
            " recorded_at) VALUES (?,?,?,?,?,?)",
            (row for i in range(n) if not tombstoned(i) for row in checkpoints(i)))
        db.executemany(
            "INSERT INTO op_locks (instance, operation, holder_pid, holder_start_time, acquired_at,"
            " holder_host, claim_id) VALUES (?,?,?,?,?,?,?)",
            ((f"inst-{i:06d}", "up", 4_194_305, 1, NOW - 10, "vm", "c")
             for i in range(0, n, 50) if not tombstoned(i)))
        db.executemany("INSERT INTO reap_attempts VALUES (?,?,?,?)",
                       ((f"inst-{i:06d}", 2, ERROR, NOW + 120) for i in range(0, n, 100)))
        db.executemany(
            "INSERT INTO operations (id, instance, verb, status, request_json, result_json, error_json,"
            " cancel_requested, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            ((f"op-{j:08d}", f"inst-{j % n:06d}", "down" if j % 2 else "up",
              "failed" if j % 10 == 0 else "succeeded", "{}", None,
              ERROR if j % 10 == 0 else None, 0, NOW - ops + j, NOW - ops + j + 1)
             for j in range(ops)))
        db.executemany(
            "INSERT INTO operations (id, instance, verb, status, request_json, result_json, error_json,"
            " cancel_requested, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            ((f"queued-{i:08d}", f"inst-{i:06d}", "verify", "queued", "{}", None, None, 0,
              NOW - 5, NOW - 5)
             for i in range(0, n, 200) if not tombstoned(i)))
        db.executemany(
            "INSERT INTO operation_events (operation_id, event_json, recorded_at) VALUES (?,?,?)",
            ((f"op-{j:08d}", '{"event":"Completed","step_id":"start:web","index":%d,"total":%d}'
              % (e + 1, events), NOW - ops + j)
             for j in range(ops) for e in range(events)))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


if __name__ == "__main__":
    main()
