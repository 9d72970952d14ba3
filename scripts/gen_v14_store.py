#!/usr/bin/env python3
"""Make a schema-14 (stackless 0.4.0) store of N instances for timing the
console's whole commands: built from the real migrations in
tests/fixtures/ddl/, every instance with a birth and a lease (a tenth
expired), a dead-pid lock on one in 50, a reap attempt on one in 100, and
OPS finished operations (one in 10 failed, with a real schema-2 error
object) plus EVENTS step events each (1 by default).

    python3 scripts/gen_v14_store.py OUT.db N [OPS [EVENTS]]

The history store of issue 13 (100k instances, 1M operations, 3M events,
about 1 GB, a minute or two):

    python3 scripts/gen_v14_store.py /tmp/v14-hist.db 100000 1000000 3
"""
import os
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DDL = os.path.join(ROOT, "tests", "fixtures", "ddl")
NOW = 1_796_118_148
ERROR = ('{"schema_version":2,"code":"engine.teardown.survivors","message":"teardown left survivors",'
         '"remediation":"run `stackless down NAME` again","context":{}}')


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
        for i in range(n):
            iid = f"{i:032x}"
            rows.append((f"inst-{i:06d}", "local", "active", "[stack]\nname='x'\n", "{}",
                         NOW - 3600, None, "", 0, iid, f"sl-{iid}"))
        db.executemany(
            "INSERT INTO instances (name, substrate, status, definition, source_overrides, created_at,"
            " tombstoned_at, definition_dir, dirty, instance_id, resource_namespace)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
        db.executemany("INSERT INTO leases VALUES (?,?,?)",
                       ((f"inst-{i:06d}", 3600, NOW - 60 if i % 10 == 0 else NOW + 3600 + i)
                        for i in range(n)))
        db.executemany(
            "INSERT INTO op_locks (instance, operation, holder_pid, holder_start_time, acquired_at,"
            " holder_host, claim_id) VALUES (?,?,?,?,?,?,?)",
            ((f"inst-{i:06d}", "up", 4_194_305, 1, NOW - 10, "vm", "c") for i in range(0, n, 50)))
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
            "INSERT INTO operation_events (operation_id, event_json, recorded_at) VALUES (?,?,?)",
            ((f"op-{j:08d}", '{"event":"Completed","step_id":"start:web","index":%d,"total":%d}'
              % (e + 1, events), NOW - ops + j)
             for j in range(ops) for e in range(events)))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


if __name__ == "__main__":
    main()
