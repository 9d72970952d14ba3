//! Nothing written is lost: the console never drops `SQLite`'s locks on the
//! store it has open, so no outside process that commits and closes can
//! checkpoint and unlink the `-wal`/`-shm` under it, its own writes reach
//! the file, and a lease renewed elsewhere is seen.
//!
//! Every outside process here is python3's `sqlite3`, which commits and
//! closes as `stackless down` and the `sqlite3` CLI do (the last
//! connection to close checkpoints and deletes the log).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::stores::{exec, migrated};
use crate::common::{calls, counting_down as down, locks_of, unix_now};
use crate::harness::{Tui, UI, utf8};

const QUIT: Duration = Duration::from_secs(10);

/// Run `script` in another process (python3, `sqlite3` module) with the
/// store's path as `sys.argv[1]`; its stdout.
fn python(path: &Path, script: &str) -> String {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// One query in another process, which then closes (a read-only client,
/// as an operator's `sqlite3 state.db 'SELECT ...'`).
fn outside_query(path: &Path, sql: &str) -> String {
    python(
        path,
        &format!(
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=30)\nfor row in c.execute({sql:?}): print('|'.join(map(str, row)))\nc.close()"
        ),
    )
}

/// One write in another process, committed, then closed.
fn outside_write(path: &Path, sql: &str) {
    python(
        path,
        &format!(
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=30)\nc.executescript({sql:?})\nc.commit()\nc.close()"
        ),
    );
}

/// The `(device-independent) inode` of `path`.
fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).expect("stat").ino()
}

/// The console on `path` in a 120x40 pseudo-terminal: a reaper pass every
/// second, `command` as its `down`.
fn console(path: &Path, command: &str) -> Tui {
    Tui::spawn(
        &["--state", utf8(path), "--tick", "1s", "--down-cmd", command],
        120,
        40,
    )
}

/// A v5 store with `alpha` (expired: its teardown fails, so the reaper
/// writes a backoff row every pass it retries), `delta` (an hour left)
/// and `echo` (a day left).
fn store(dir: &Path) -> PathBuf {
    let path = migrated(dir, 5);
    let now = unix_now();
    exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty)
               VALUES ('alpha', 'local', 'active', '[stack]', {c}, NULL, 0),
                      ('delta', 'local', 'active', '[stack]', {c}, NULL, 0),
                      ('echo', 'local', 'active', '[stack]', {c}, NULL, 0);
             INSERT INTO leases VALUES ('alpha', 60, {a}), ('delta', 3600, {d}), ('echo', 86400, {e});",
            c = now - 1000,
            a = now - 100,
            d = now + 3600,
            e = now + 86_400,
        ),
    );
    path
}

/// With the watcher, the reaper (retrying a failing teardown every pass),
/// the services reader and the detail reader all running, the console
/// holds its shared lock on the store and the "DMS" lock on its `-shm` at
/// every sample, and an outside writer that commits and closes leaves the
/// `-wal` and `-shm` in place (on main, the first services read dropped
/// both locks, and the outside close deleted the log under the console).
#[test]
fn the_console_holds_its_locks_through_every_periodic_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = store(dir.path());
    let command = down(dir.path(), "echo 'no such stack' >&2\nexit 1");
    let mut tui = console(&path, &command);
    tui.wait_for_all(&["alpha", "delta", "echo", "attempt"], UI);
    // Start-up has settled (its first connections closed and the long-lived
    // ones opened).
    std::thread::sleep(Duration::from_secs(1));
    let pid = tui.pid();
    let db = inode(&path);
    let shm = inode(&dir.path().join("state.db-shm"));
    let (mut samples, mut missing) = (0, Vec::new());
    let started = Instant::now();
    let mut step = 0;
    while started.elapsed() < Duration::from_secs(12) {
        let at = started.elapsed();
        // Enter opens the detail reader; an outside client reads, writes
        // and closes.
        if step == 0 && at > Duration::from_secs(2) {
            tui.send("j\r");
            step = 1;
        } else if step == 1 && at > Duration::from_secs(4) {
            tui.send("\x1b");
            outside_query(&path, "SELECT count(*) FROM instances");
            outside_write(
                &path,
                &format!(
                    "UPDATE leases SET expires_at = {} WHERE instance = 'echo';",
                    unix_now() + 7200
                ),
            );
            step = 2;
        }
        samples += 1;
        let (on_db, on_shm) = (locks_of(pid, db), locks_of(pid, shm));
        if on_db == 0 || on_shm == 0 {
            missing.push((at, on_db, on_shm));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(samples > 100, "{samples}");
    assert_eq!(
        missing,
        [],
        "samples without the console's locks; the screen:\n{}",
        tui.contents()
    );
    assert!(dir.path().join("state.db-wal").exists(), "-wal kept");
    assert!(dir.path().join("state.db-shm").exists(), "-shm kept");
    assert_eq!(
        inode(&dir.path().join("state.db-shm")),
        shm,
        "the same index"
    );
    // The outside write was seen, and the failures the reaper recorded are
    // in the file for everyone.
    let renewed = unix_now() + 7200;
    assert!(
        outside_query(
            &path,
            "SELECT expires_at FROM leases WHERE instance = 'echo'"
        )
        .trim()
        .parse::<i64>()
        .is_ok_and(|e| (renewed - 20..=renewed).contains(&e))
    );
    let attempts: i64 = outside_query(
        &path,
        "SELECT attempts FROM reap_attempts WHERE instance = 'alpha'",
    )
    .trim()
    .parse()
    .expect("alpha's backoff row is in the file");
    assert!(attempts >= 1);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    assert_eq!(outside_query(&path, "PRAGMA integrity_check").trim(), "ok");
}

/// The issue's reproduction: two expired instances; one teardown commits
/// its tombstone from another process and exits (as `stackless down`),
/// the other fails. The failure row the console writes reaches the file
/// (read by another process while it runs, and after it quits), the store
/// is whole, and no teardown inherits a descriptor of the store.
#[test]
fn a_failure_row_written_beside_an_outside_commit_reaches_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = migrated(dir.path(), 4);
    let now = unix_now();
    exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at)
               VALUES ('alpha', 'local', 'active', '[stack]', {c}, NULL),
                      ('bravo', 'local', 'active', '[stack]', {c}, NULL);
             INSERT INTO leases VALUES ('alpha', 60, {a}), ('bravo', 60, {b});",
            c = now - 1000,
            a = now - 100,
            b = now - 200,
        ),
    );
    // alpha's teardown waits until the console's periodic reads have run,
    // then commits (on exit 0) and closes; bravo's fails after it.
    let command = down(
        dir.path(),
        "sleep 3\nif [ \"$NAME\" = bravo ]; then sleep 2; echo 'compose down failed' >&2; exit 1; fi\nexit 0",
    );
    let mut tui = Tui::spawn(
        &[
            "--state",
            utf8(&path),
            "--tick",
            "60s",
            "--down-cmd",
            &command,
        ],
        120,
        40,
    );
    tui.wait_for_all(&["attempt 1", "tombstoned"], Duration::from_secs(40));
    let read = || {
        outside_query(
            &path,
            "SELECT instance, attempts, last_error IS NOT NULL FROM reap_attempts",
        )
    };
    assert_eq!(
        read(),
        "bravo|1|1\n",
        "the failure row, seen by another process"
    );
    assert_eq!(
        outside_query(&path, "SELECT name, status FROM instances ORDER BY name"),
        "alpha|tombstoned\nbravo|active\n"
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    assert_eq!(read(), "bravo|1|1\n", "still there after quit");
    assert_eq!(outside_query(&path, "PRAGMA integrity_check"), "ok\n");
    let mut teardowns = calls(dir.path());
    teardowns.sort();
    assert_eq!(teardowns, ["alpha", "bravo"]);
    let fds = std::fs::read_to_string(dir.path().join("fds.log")).expect("fds.log");
    let inherited: Vec<_> = fds
        .lines()
        .filter(|target| target.contains("state.db"))
        .collect();
    assert_eq!(
        inherited,
        Vec::<&str>::new(),
        "no store descriptor inherited"
    );
}

/// The issue's worst case: an operator runs read-only queries beside the
/// console, then another process renews a lease about to run out. The
/// console sees the renewal and never tears the instance down (on main it
/// read its stale index and reaped it).
#[test]
fn a_lease_renewed_beside_outside_readers_is_never_reaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = migrated(dir.path(), 5);
    let now = unix_now();
    exec(
        &path,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty)
               VALUES ('charlie', 'local', 'active', '[stack]', {c}, NULL, 0);
             INSERT INTO leases VALUES ('charlie', 60, {e});",
            c = now - 1000,
            e = now + 15,
        ),
    );
    let command = down(dir.path(), "exit 0");
    let mut tui = console(&path, &command);
    tui.wait_for("charlie", UI);
    std::thread::sleep(Duration::from_secs(2));
    outside_query(&path, "SELECT count(*) FROM instances");
    let renewed = unix_now() + 3600;
    // The renewing process stays connected past the old expiry, as the
    // stackless controller does: its commit is in the log, not yet in the
    // file.
    let mut renewer = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import sqlite3, sys, time\nc = sqlite3.connect(sys.argv[1], timeout=30)\nc.execute('UPDATE leases SET expires_at = {renewed} WHERE instance = ?', ('charlie',))\nc.commit()\nprint('renewed', flush=True)\ntime.sleep(21)\nc.close()"
        ))
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut said = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(renewer.stdout.as_mut().expect("stdout")),
        &mut said,
    )
    .expect("renewed");
    assert_eq!(said, "renewed\n");
    outside_query(&path, "SELECT expires_at FROM leases");
    // Past the old expiry, with a pass every second.
    while unix_now() < now + 21 {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(calls(dir.path()), Vec::<String>::new(), "nothing torn down");
    assert!(renewer.wait().expect("renewer").success());
    assert_eq!(
        outside_query(
            &path,
            "SELECT status, expires_at FROM instances JOIN leases ON instance = name"
        ),
        format!("active|{renewed}\n")
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    assert_eq!(outside_query(&path, "PRAGMA integrity_check"), "ok\n");
}

/// A log cut short under the console (an outside `truncate` of the
/// `-wal`): the next read that needs its frames fails with `disk I/O
/// error`. That error breaks the connection: every connection of the
/// console to the file is dropped and opened afresh (on main, every pass
/// failed with the same error until restart), the console says so, and
/// its next failure row reaches the file.
#[test]
fn a_disk_io_error_reopens_every_connection_and_writes_reach_the_file_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = store(dir.path());
    let times = dir.path().join("times.log");
    let command = down(
        dir.path(),
        &format!(
            "date +%s >> '{}'\necho 'no such stack' >&2\nexit 1",
            times.display()
        ),
    );
    let mut tui = console(&path, &command);
    tui.wait_for("attempt 1", UI);
    // The retry comes due in a few seconds; then the log loses its frames.
    outside_write(
        &path,
        &format!(
            "UPDATE reap_attempts SET next_retry_at = {} WHERE instance = 'alpha';",
            unix_now() + 3
        ),
    );
    let wal = dir.path().join("state.db-wal");
    assert!(std::fs::metadata(&wal).expect("-wal").len() > 4096);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&wal)
        .expect("-wal")
        .set_len(42)
        .expect("truncate");
    tui.wait_for_all(
        &["disk I/O error", "the store is readable again: reopened it"],
        Duration::from_secs(40),
    );
    // The teardown runs again after the error (the recovered file lost the
    // log's rows), and its failure is recorded: seen by another process,
    // its retry a backoff after that teardown.
    let second = || {
        std::fs::read_to_string(&times)
            .unwrap_or_default()
            .lines()
            .nth(1)
            .and_then(|t| t.parse::<i64>().ok())
    };
    let retry = || {
        outside_query(
            &path,
            "SELECT next_retry_at FROM reap_attempts WHERE instance = 'alpha'",
        )
        .trim()
        .parse::<i64>()
        .unwrap_or(0)
    };
    let started = Instant::now();
    while second().is_none_or(|at| retry() < at + 59) && started.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    let at = second().expect("a second teardown after the error");
    assert!(
        retry() >= at + 59,
        "its failure is in the file: retry at {} (teardown at {at})",
        retry()
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);
    assert_eq!(outside_query(&path, "PRAGMA integrity_check"), "ok\n");
}
