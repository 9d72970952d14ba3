//! `reap --once --dry-run` made cheap (issue 13) without saying anything a
//! real pass would not: its re-checks share one read transaction
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
use stackless_tui::store::{Access, Store};

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

/// The v14 scenario plus foxtrot and golf, both expired at [`CAPTURE`].
fn store() -> (tempfile::TempDir, PathBuf) {
    let (dir, path) = stores::v14();
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

/// One pass over a fresh [`store`] changed by [`CHANGE`] between decision
/// and re-checks: the lines `reap --once` prints, and the fake `down`'s
/// argv log.
fn pass(dry_run: bool) -> (Vec<String>, Vec<String>) {
    let rt = runtime();
    let (dir, path) = store();
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

#[test]
fn a_dry_run_reports_a_change_since_the_decision_as_a_real_pass_does() {
    let (dry, ran) = pass(true);
    assert!(ran.is_empty(), "{ran:?}");
    assert_eq!(
        dry,
        [
            "reaper alpha skipped: operation pending (down running)",
            "reaper bravo aborted: lease changed since the decision; not torn down",
            "reaper foxtrot aborted: operation pending (up queued) since the decision; not torn down",
            "reaper golf would reap: dry run: nothing run",
            "reaper  skipped: GC: 1 tombstone due: the controller collects them",
        ]
    );
    // The real pass re-checks each instance in a fresh transaction right
    // before its teardown, and aborts the same two with the same words
    // (its teardown jobs run side by side: in either order).
    let (real, ran) = pass(false);
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
