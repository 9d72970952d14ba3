//! A re-read keeps the rows that did not change from the read before it
//! (`store::row_reuse`: two snapshots at 100,000 instances did not fit the
//! console's 60 MB): unchanged rows are shared, changed ones read afresh,
//! the earlier snapshot never altered, and the result always equal to a
//! read that shares nothing.

use std::sync::Arc;

use crate::common::fixture;
use crate::common::stores::exec;
use stackless_tui::model::{Instance, Lease, Snapshot, Status};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

fn vm() -> FixedProbe {
    FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    }
}

fn read(path: &std::path::Path) -> Snapshot {
    Store::open(path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut vm())
        .unwrap()
}

fn row<'a>(snapshot: &'a Snapshot, name: &str) -> &'a Arc<Instance> {
    snapshot
        .instances
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("{name} is read"))
}

/// The rows by value, owned (nothing shared with the snapshot).
fn owned(snapshot: &Snapshot) -> Vec<Instance> {
    snapshot.instances.iter().map(|i| (**i).clone()).collect()
}

#[test]
fn an_unchanged_reread_shares_every_row_across_connections() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let first = store.snapshot(&mut vm()).unwrap();
    let again = store.snapshot(&mut vm()).unwrap();
    // Another connection to the same file (the reaper's beside the
    // watcher's) shares them too.
    let other = read(&path);
    assert_eq!(first.instances.len(), 8);
    // One copy of each substrate's text for the whole read.
    let local = &first.instances[0].substrate;
    assert_eq!(&**local, "local");
    assert!(first.instances.iter().all(|i| i.substrate.ptr_eq(local)));
    for (a, (b, c)) in first
        .instances
        .iter()
        .zip(again.instances.iter().zip(other.instances.iter()))
    {
        assert!(Arc::ptr_eq(a, b), "{} is shared", a.name);
        assert!(Arc::ptr_eq(a, c), "{} is shared", a.name);
    }
}

#[test]
fn changed_rows_are_read_afresh_and_the_earlier_snapshot_is_untouched() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let first = read(&path);
    let before = owned(&first);
    exec(
        &path,
        "UPDATE instances SET substrate = 'render' WHERE name = 'alpha';
         DELETE FROM leases WHERE instance = 'hotel';
         UPDATE leases SET expires_at = 1900000000 WHERE instance = 'india';
         INSERT INTO op_locks (instance, operation, holder_pid, holder_start_time, acquired_at, holder_host, claim_id)
             VALUES ('foxtrot', 'down', 4242, 1700000000, 1700000001, 'vm', 'op-1');
         UPDATE instances SET status = 'tombstoned', tombstoned_at = 1796000000 WHERE name = 'golf';",
    );
    let next = read(&path);
    assert_eq!(
        owned(&first),
        before,
        "the earlier snapshot is as it was read"
    );
    // The same names: the earlier order, unsorted, still by name.
    let names: Vec<_> = next.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "alpha", "bravo", "charlie", "delta", "foxtrot", "golf", "hotel", "india"
        ]
    );
    for name in ["alpha", "hotel", "india", "foxtrot", "golf"] {
        assert!(
            !Arc::ptr_eq(row(&first, name), row(&next, name)),
            "{name} changed: read afresh"
        );
    }
    for name in ["bravo", "charlie", "delta"] {
        assert!(
            Arc::ptr_eq(row(&first, name), row(&next, name)),
            "{name} did not change: shared"
        );
    }
    assert_eq!(&*row(&next, "alpha").substrate, "render");
    assert_eq!(row(&next, "hotel").lease, None);
    assert_eq!(
        row(&next, "india").lease,
        Some(Lease {
            duration_secs: row(&first, "india").lease.unwrap().duration_secs,
            expires_at: 1_900_000_000,
        })
    );
    let lock = row(&next, "foxtrot").lock.as_deref().unwrap();
    assert_eq!(
        (
            lock.operation.as_str(),
            lock.holder_pid,
            lock.claim_id.as_deref()
        ),
        ("down", 4242, Some("op-1"))
    );
    assert_eq!(row(&next, "golf").status, Status::Tombstoned);
    assert_eq!(row(&next, "golf").tombstoned_at, Some(1_796_000_000));
    // And the lock goes again.
    exec(&path, "DELETE FROM op_locks WHERE instance = 'foxtrot';");
    let last = read(&path);
    assert_eq!(row(&last, "foxtrot").lock, None);
    assert!(Arc::ptr_eq(row(&next, "bravo"), row(&last, "bravo")));
}

#[test]
fn a_sharing_read_equals_a_read_that_shares_nothing() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let first = read(&path);
    // A new birth in place, a name gone and a new one, a lease renewed,
    // then VACUUM, which renumbers the rowids the reuse walks by: a row at
    // the same rowid now has another name and must not be taken for it.
    exec(
        &path,
        "UPDATE instances SET instance_id = 'ffffffffffffffffffffffffffffffff',
             resource_namespace = 'sl-ffffffffffffffffffffffffffffffff' WHERE name = 'bravo';
         DELETE FROM instances WHERE name = 'alpha';
         INSERT INTO instances (name, substrate, status, definition, created_at, instance_id, resource_namespace)
             VALUES ('zulu', 'local', 'active', '{}', 1796000000, 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', 'sl-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee');
         INSERT INTO leases (instance, duration_secs, expires_at) VALUES ('zulu', 3600, 1796003600);
         UPDATE leases SET expires_at = expires_at + 60 WHERE instance = 'golf';
         VACUUM;",
    );
    let shared = read(&path);
    let shared_rows = owned(&shared);
    drop((first, shared));
    // Nothing holds the earlier rows now: this read builds every row.
    let fresh = read(&path);
    assert_eq!(shared_rows, owned(&fresh));
    let names: Vec<_> = shared_rows.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bravo", "charlie", "delta", "foxtrot", "golf", "hotel", "india", "zulu"
        ]
    );
    let bravo = shared_rows[0].birth.as_ref().unwrap();
    assert_eq!(bravo.instance_id(), "ffffffffffffffffffffffffffffffff");
    assert_eq!(
        shared_rows[7].lease,
        Some(Lease {
            duration_secs: 3600,
            expires_at: 1_796_003_600
        })
    );
}

#[test]
fn names_that_swap_rowids_are_sorted_again() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let first = read(&path);
    // A hand-made swap (stackless never renames): the same names, each at
    // the other's rowid, so the earlier read's name order no longer holds.
    exec(
        &path,
        "PRAGMA foreign_keys = OFF;
         UPDATE instances SET name = 'swap' WHERE name = 'alpha';
         UPDATE instances SET name = 'alpha' WHERE name = 'india';
         UPDATE instances SET name = 'india' WHERE name = 'swap';",
    );
    let swapped = read(&path);
    let names: Vec<_> = swapped.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "alpha", "bravo", "charlie", "delta", "foxtrot", "golf", "hotel", "india"
        ]
    );
    let shared_rows = owned(&swapped);
    drop((first, swapped));
    assert_eq!(shared_rows, owned(&read(&path)));
}

#[test]
fn a_table_without_rowids_or_with_a_rowid_column_is_read_without_the_hint() {
    for ddl in [
        "CREATE TABLE instances (name TEXT PRIMARY KEY, substrate TEXT, status TEXT,
             created_at INTEGER, tombstoned_at INTEGER) WITHOUT ROWID",
        "CREATE TABLE instances (name TEXT, substrate TEXT, status TEXT,
             created_at INTEGER, tombstoned_at INTEGER, rowid INTEGER)",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        exec(
            &path,
            &format!(
                "{ddl};
                 CREATE TABLE leases (instance TEXT PRIMARY KEY, duration_secs INTEGER,
                     expires_at INTEGER);
                 CREATE TABLE op_locks (instance TEXT PRIMARY KEY, operation TEXT,
                     holder_pid INTEGER, holder_start_time INTEGER, acquired_at INTEGER);
                 INSERT INTO instances (name, substrate, status, created_at)
                     VALUES ('b', 'local', 'active', 1), ('a', 'local', 'active', 2);
                 PRAGMA user_version = 4;"
            ),
        );
        let first = read(&path);
        let names: Vec<_> = first.instances.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["a", "b"], "{ddl}");
        let again = read(&path);
        assert_eq!(owned(&first), owned(&again), "{ddl}");
    }
}

/// Two first reads of one file at once (the console's watcher and its
/// reaper at start-up) share their rows: the second waits for the first
/// to publish instead of building every row again.
#[test]
fn two_first_reads_at_once_share_their_rows() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let start = Arc::new(std::sync::Barrier::new(2));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (path, start) = (path.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                let mut store = Store::open(&path, Access::ReadOnly).unwrap();
                start.wait();
                store.snapshot(&mut vm()).unwrap()
            })
        })
        .collect();
    let snapshots: Vec<Snapshot> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    for (a, b) in snapshots[0]
        .instances
        .iter()
        .zip(snapshots[1].instances.iter())
    {
        assert!(Arc::ptr_eq(a, b), "{} is shared", a.name);
    }
}
