//! `reap --once --dry-run` made cheap without saying anything a real pass
//! would not: its re-checks share one read transaction
//! (`Store::begin_read`), still after the decision's snapshot, so a change
//! committed in between is reported exactly as a real pass reports it; its
//! lines are buffered and come out whole and in order.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::stores;
use crate::common::{CAPTURE, argv_log, fake_down, reaper_with, runtime};
use stackless_tui::model::OpStatus;
use stackless_tui::store::probe::{FixedProbe, HostProbe};
use stackless_tui::store::{Access, Recheck, Store};

/// A probe that commits `sql` on a connection of its own the first time the
/// snapshot asks for the host name: after the snapshot's read transaction,
/// before any re-check (another process changing the store between the
/// decision and the teardown).
struct ChangesTheStore {
    path: PathBuf,
    sql: &'static str,
    done: AtomicBool,
    inner: FixedProbe,
}

impl HostProbe for ChangesTheStore {
    fn host_name(&self) -> Option<&str> {
        if !self.done.swap(true, Ordering::SeqCst) {
            stores::exec(&self.path, self.sql);
        }
        self.inner.host_name()
    }

    fn start_time(&mut self, pid: u32) -> Option<u64> {
        self.inner.start_time(pid)
    }
}

/// Renews bravo's lease and queues an `up` on foxtrot.
const CHANGE: &str = "UPDATE leases SET expires_at = expires_at + 3600 WHERE instance = 'bravo';
 INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
 VALUES ('late', 'foxtrot', 'up', 'queued', 'null', 1795960686, 1795960686);";

/// The v14 scenario plus foxtrot and golf, both expired at [`CAPTURE`],
/// and `padding` active instances with an hour left (`pad-000`, ...).
fn store_with(padding: usize) -> (tempfile::TempDir, PathBuf) {
    let (dir, path) = stores::v14();
    for i in 0..padding {
        stores::exec(
            &path,
            &format!(
                "INSERT INTO instances (name, substrate, status, definition, created_at, dirty,
                   instance_id, resource_namespace)
                 VALUES ('pad-{i:03}', 'local', 'active', '[stack]', {c}, 0, '{i:032x}', 'sl-{i:032x}');
                 INSERT INTO leases VALUES ('pad-{i:03}', 3600, {e});",
                c = CAPTURE - 1000,
                e = CAPTURE + 3600,
            ),
        );
    }
    stores::exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, dirty,
               instance_id, resource_namespace)
             VALUES ('foxtrot', 'local', 'active', '[stack]', {c}, 0, '{f}', 'sl-{f}'),
                    ('golf', 'local', 'active', '[stack]', {c}, 0, '{g}', 'sl-{g}');
             INSERT INTO leases VALUES ('foxtrot', 60, {e}), ('golf', 60, {e});",
            c = CAPTURE - 1000,
            e = CAPTURE - 300,
            f = "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0",
            g = "a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9",
        ),
    );
    (dir, path)
}

fn store() -> (tempfile::TempDir, PathBuf) {
    store_with(0)
}

/// One pass over a fresh [`store_with`] `padding` changed by [`CHANGE`]
/// between decision and re-checks: the lines `reap --once` prints, and the
/// fake `down`'s argv log.
fn pass(dry_run: bool, padding: usize) -> (Vec<String>, Vec<String>) {
    let rt = runtime();
    let (dir, path) = store_with(padding);
    let probe = ChangesTheStore {
        path: path.clone(),
        sql: CHANGE,
        done: AtomicBool::new(false),
        inner: FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        },
    };
    let down = fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = reaper_with(
        &path,
        down,
        Box::new(probe),
        std::sync::Arc::new(|| CAPTURE),
        &rt,
        |c| c.dry_run = dry_run,
    );
    reaper.pass();
    let lines = log
        .lock()
        .unwrap()
        .iter()
        .map(stackless_tui::recorder::line)
        .collect();
    (lines, argv_log(dir.path()))
}

/// What the dry run of [`pass`] prints, the worklist read at once (3 of 7
/// instances, `BULK_SHARE`) or re-checked name by name (3 of 67).
const DRY: [&str; 5] = [
    "reaper alpha skipped: operation pending (down running)",
    "reaper bravo aborted: lease changed since the decision; not torn down",
    "reaper foxtrot aborted: operation pending (up queued) since the decision; not torn down",
    "reaper golf would reap: dry run: nothing run",
    "reaper  skipped: GC: 1 tombstone due: the controller collects them",
];

#[test]
fn a_dry_run_reports_a_change_since_the_decision_as_a_real_pass_does() {
    let (dry, ran) = pass(true, 0);
    assert!(ran.is_empty(), "{ran:?}");
    assert_eq!(dry, DRY);
    let (dry, ran) = pass(true, 60);
    assert!(ran.is_empty(), "{ran:?}");
    assert_eq!(dry, DRY);
    // The real pass re-checks each instance in a fresh transaction right
    // before its teardown, and aborts the same two with the same words
    // (its teardown jobs run side by side: in either order).
    let (real, ran) = pass(false, 0);
    assert_eq!(ran, ["[down][golf][--json]"]);
    let aborted = |lines: &[String]| -> Vec<String> {
        let mut found: Vec<String> = lines
            .iter()
            .filter(|l| l.contains(" aborted: "))
            .cloned()
            .collect();
        found.sort();
        found
    };
    assert_eq!(aborted(&real), aborted(&dry));
    assert!(
        real.iter().any(|l| l.starts_with("reaper golf reaped: ")),
        "{real:?}"
    );
}

#[test]
fn rechecks_inside_one_read_see_the_state_it_began_with() {
    let (_dir, path) = store();
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    store.begin_read().unwrap();
    let bravo = store.recheck("bravo").unwrap().unwrap();
    stores::exec(&path, CHANGE);
    assert_eq!(store.recheck("bravo").unwrap().unwrap(), bravo);
    assert_eq!(store.recheck("foxtrot").unwrap().unwrap().pending, None);
    // A name with an operation pending is re-read with the operation's
    // verb and status, inside the same read.
    assert_eq!(
        store.recheck("alpha").unwrap().unwrap().pending,
        Some(("down".to_owned(), OpStatus::Running))
    );
    store.end_read();
    let renewed = store.recheck("bravo").unwrap().unwrap().lease.unwrap();
    assert_eq!(renewed.expires_at, bravo.lease.unwrap().expires_at + 3600);
    assert_eq!(
        store.recheck("foxtrot").unwrap().unwrap().pending,
        Some(("up".to_owned(), OpStatus::Queued))
    );
    // Ended twice, or never begun: nothing to do.
    store.end_read();
}

/// The scans of `Store::begin_read_of` call a name unchanged exactly when
/// its `Store::recheck` in the same read equals the decision's rows with
/// nothing pending, on every kind of store there is; on the hostile one
/// (declined or not) never a name that differs.
#[test]
fn a_name_read_at_once_is_unchanged_exactly_when_its_recheck_says_so() {
    let probe = || FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    let mut stores: Vec<(String, tempfile::TempDir, PathBuf)> = [
        "stackless-real-v4.db",
        "real-0.2.0-v5.db",
        "real-0.3.0-v5.db",
        "real-0.4.0-v14.db",
        "hostile.db",
    ]
    .into_iter()
    .map(|name| {
        let (dir, path) = crate::common::fixture(name);
        (name.to_owned(), dir, path)
    })
    .collect();
    let (dir, path) = store();
    stores.push(("v14 scenario".into(), dir, path));
    for (what, _dir, path) in &stores {
        let mut store = Store::open(path, Access::ReadWrite).unwrap();
        let snapshot = store.snapshot(&mut probe()).unwrap();
        let seen: Vec<_> = snapshot
            .rows
            .instances
            .iter()
            .map(|i| (&**i, snapshot.reap_attempt(&i.name)))
            .collect();
        store.begin_read_of(&seen, seen.len()).unwrap();
        let mut unchanged = 0;
        for (instance, attempt) in &seen {
            let decided = Recheck {
                status: instance.status.clone(),
                lease: instance.lease,
                lock: instance.lock.as_deref().cloned(),
                attempt: attempt.cloned(),
                birth: instance.birth.clone(),
                created_at: instance.created_at,
                pending: None,
            };
            let same = store.recheck(&instance.name).unwrap() == Some(decided);
            let said = store.unchanged_in_read(&instance.name);
            assert!(same || !said, "{what}: {} said unchanged", instance.name);
            if what != "hostile.db" {
                assert_eq!(said, same, "{what}: {}", instance.name);
            }
            unchanged += usize::from(said);
        }
        if what != "hostile.db" {
            assert!(unchanged > 0, "{what}: nothing read at once");
        }
        store.end_read();
        assert!(seen.iter().all(|(i, _)| !store.unchanged_in_read(&i.name)));
    }
}

/// A hand-made store without keys: `twin` twice (with different leases),
/// a lease keyed by a number, a lock row twice. Nothing there is called
/// unchanged that its re-check does not find unchanged.
#[test]
fn a_store_without_keys_is_left_to_the_rechecks_where_rows_could_pair_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    stores::exec(
        &path,
        "CREATE TABLE instances (name, substrate, status, definition, source_overrides, created_at, tombstoned_at, definition_dir);
         CREATE TABLE leases (instance, duration_secs, expires_at);
         CREATE TABLE op_locks (instance, operation, holder_pid, holder_start_time, acquired_at, holder_host);
         CREATE TABLE reap_attempts (instance, attempts, last_error, next_retry_at);
         INSERT INTO instances VALUES ('twin', 'local', 'active', '', '{}', 1, NULL, '');
         INSERT INTO instances VALUES ('twin', 'local', 'active', '', '{}', 2, NULL, '');
         INSERT INTO instances VALUES ('solo', 'local', 'active', '', '{}', 1, NULL, '');
         INSERT INTO leases VALUES ('twin', 60, 10), ('twin', 60, 20), ('solo', 60, 10);
         PRAGMA user_version = 4;",
    );
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let snapshot = store
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap();
    let seen: Vec<_> = snapshot
        .rows
        .instances
        .iter()
        .map(|i| (&**i, None))
        .collect();
    // The join repeats twin (two rows, each with two leases).
    assert_eq!(seen.iter().filter(|(i, _)| i.name == "twin").count(), 4);
    store.begin_read_of(&seen, seen.len()).unwrap();
    for (instance, _) in &seen {
        assert!(
            !store.unchanged_in_read(&instance.name),
            "{}",
            instance.name
        );
    }
    store.end_read();
    // Without the twin, the lease keyed by a number stops the scans too.
    stores::exec(
        &path,
        "DELETE FROM instances WHERE name = 'twin'; DELETE FROM leases WHERE instance = 'twin';
         INSERT INTO leases VALUES (7, 60, 10);",
    );
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let snapshot = store
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap();
    let seen: Vec<_> = snapshot
        .rows
        .instances
        .iter()
        .map(|i| (&**i, None))
        .collect();
    store.begin_read_of(&seen, seen.len()).unwrap();
    assert!(!store.unchanged_in_read("solo"));
    store.end_read();
    // And without it, solo is read at once.
    stores::exec(&path, "DELETE FROM leases WHERE instance = 7;");
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let snapshot = store
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap();
    let seen: Vec<_> = snapshot
        .rows
        .instances
        .iter()
        .map(|i| (&**i, None))
        .collect();
    store.begin_read_of(&seen, seen.len()).unwrap();
    assert!(store.unchanged_in_read("solo"));
    store.end_read();
}

/// Expired instances `inst-0000`.. (leases ran out a minute ago, real
/// time), enough lines for several of the dry run's 64 KiB buffers.
const MANY: usize = 3000;

fn many_expired(dir: &Path) -> PathBuf {
    let path = stores::migrated(dir, 14);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    stores::exec(
        &path,
        &format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
             INSERT INTO instances (name, substrate, status, definition, created_at, dirty,
               instance_id, resource_namespace)
             SELECT printf('inst-%04d', i), 'local', 'active', '[stack]', {created}, 0,
               printf('%032x', i), printf('sl-%032x', i) FROM n;
             INSERT INTO leases SELECT name, 60, {expired} FROM instances;",
            last = MANY - 1,
            created = now - 3600,
            expired = now - 60,
        ),
    );
    path
}

#[test]
fn reap_once_dry_run_prints_every_line_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = many_expired(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .env_remove("STACKLESS_STATE_URL")
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .env("XDG_STATE_HOME", "/nonexistent-state")
        .env_remove("STACKLESS_TUI_FAULT")
        .env_remove("STACKLESS_TUI_CLOCK_OFFSET")
        .args(["reap", "--once", "--dry-run", "--down-cmd", "true {name}"])
        .arg("--state")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    let expected: String = (0..MANY)
        .map(|i| format!("reaper inst-{i:04} would reap: dry run: nothing run\n"))
        .collect();
    assert!(expected.len() > 2 * 65_536);
    assert!(
        String::from_utf8_lossy(&out.stdout) == expected,
        "stdout differs: {} bytes, expected {}",
        out.stdout.len(),
        expected.len()
    );
}

/// A dry run whose store took no commit since the decision's snapshot
/// (the same `PRAGMA data_version` on the same connection) re-checks
/// against the rows that snapshot read, so the store is read once: every
/// name is unchanged, even in a worklist too small to be read at once. A
/// commit in between (another connection's), or a read with no snapshot
/// before it, leaves each name to its re-check.
#[test]
fn a_store_unchanged_since_the_snapshot_is_read_once_and_a_commit_between_is_rechecked() {
    let probe = || FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    let (_dir, path) = store_with(100);
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let snapshot = store.snapshot(&mut probe()).unwrap();
    let instances = snapshot.rows.instances.len();
    let golf = snapshot.rows.instance("golf").unwrap();
    let seen = vec![(golf, snapshot.reap_attempt("golf"))];
    assert!(
        seen.len() * stackless_tui::store::BULK_SHARE < instances,
        "below the share read at once"
    );
    store.begin_read_of(&seen, instances).unwrap();
    assert!(store.unchanged_in_read("golf"));
    store.end_read();
    assert!(!store.unchanged_in_read("golf"));
    // A second read after the same snapshot: not known (the snapshot's
    // version is used once).
    store.begin_read_of(&seen, instances).unwrap();
    assert!(!store.unchanged_in_read("golf"));
    store.end_read();
    // A commit between the snapshot and the read, on another row.
    let snapshot = store.snapshot(&mut probe()).unwrap();
    stores::exec(
        &path,
        "UPDATE leases SET expires_at = expires_at + 1 WHERE instance = 'bravo'",
    );
    let golf = snapshot.rows.instance("golf").unwrap();
    let seen = vec![(golf, snapshot.reap_attempt("golf"))];
    store.begin_read_of(&seen, instances).unwrap();
    assert!(!store.unchanged_in_read("golf"));
    store.end_read();
}
