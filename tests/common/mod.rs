//! Shared test helpers: fixture copies, fake teardown scripts, a reaper with
//! a fixed clock; UI helpers in [`ui`]. Every test binary (tests/*/main.rs)
//! includes this folder as its `common` module.
#![allow(dead_code)]

pub mod builders;
pub mod protocol;
pub mod reader;
pub mod stores;
pub mod ui;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stackless_tui::event::Activity;
use stackless_tui::reaper::{DownCommand, JobRunner, Reaper, ReaperConfig};
use stackless_tui::recorder::{Forward, Recorder};
use stackless_tui::store::probe::HostProbe;
use stackless_tui::store::{Access, Store};

/// When the fixture stores were captured (tests/fixtures/README.md).
pub const CAPTURE: i64 = 1_795_960_686;

/// Copy `tests/fixtures/<name>` into a fresh temporary directory as
/// `state.db` (`SQLite` writes -wal/-shm beside a store, and fixtures must stay
/// pristine).
pub fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    fixture_as(name, "state.db")
}

/// Copy `tests/fixtures/<name>` into a fresh temporary directory as `file`,
/// writable by its owner (a fixture checked out read-only stays usable).
/// Every test's fixture copy is made here.
pub fn fixture_as(name: &str, file: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let target = dir.path().join(file);
    std::fs::copy(&source, &target).expect("copy fixture");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&target)
        .expect("metadata")
        .permissions()
        .mode();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode | 0o200))
        .expect("chmod u+w");
    (dir, target)
}

/// The store's tombstones made an hour old by the wall clock: a test that
/// runs a real reaper pass and is not about GC keeps them inside the
/// 7-day window (D14) whatever day it runs (the fixtures' tombstones,
/// from `CAPTURE`, fell due on 2026-12-06).
pub fn young_tombstones(path: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let conn = rusqlite::Connection::open(path).expect("open the copy");
    conn.execute(
        "UPDATE instances SET tombstoned_at = ?1 WHERE status = 'tombstoned'",
        [i64::try_from(now).expect("now") - 3_600],
    )
    .expect("young tombstones");
}

/// A fake `down`: a shell script that logs its argv (one line per call, each
/// element in brackets) to `<dir>/argv.log`, then runs `body`. `$NAME` is
/// the instance (the second argument). When it exits 0 it tombstones
/// `$NAME` in `<dir>/state.db` (if there is one), as a real `down` does:
/// the console verifies the row after a `down` that exited 0.
pub fn fake_down(dir: &Path, body: &str) -> DownCommand {
    let script = dir.join("fake-down.sh");
    let log = dir.join("argv.log");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nline=''\nfor a in \"$@\"; do line=\"$line[$a]\"; done\n# One write per call, so concurrent teardowns never interleave lines.\nprintf '%s\\n' \"$line\" >> '{}'\nNAME=\"$2\"\n{}\n{body}\n",
            log.display(),
            tombstone_on_success(&dir.join("state.db"))
        ),
    )
    .expect("write script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    DownCommand::from_argv(vec![
        script.display().to_string(),
        "down".into(),
        "{name}".into(),
        "--json".into(),
    ])
    .expect("template")
}

/// A shell `trap` that, when the script exits 0, tombstones `$NAME` in
/// `store` (when the file exists) with python3's sqlite3, as `down` would.
pub fn tombstone_on_success(store: &Path) -> String {
    format!(
        "tombstone() {{ status=$?; if [ \"$status\" = 0 ] && [ -f '{store}' ]; then python3 -c 'import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute(\"UPDATE instances SET status = ? , tombstoned_at = ? WHERE name = ? AND status = ?\", (\"tombstoned\", int(time.time()), sys.argv[2], \"active\")); c.commit()' '{store}' \"$NAME\"; fi; exit $status; }}\ntrap tombstone EXIT",
        store = store.display()
    )
}

/// The argv lines the fake `down` logged.
pub fn argv_log(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("argv.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A reaper over `path` with a fixed clock and a collecting report.
pub fn reaper(
    path: &Path,
    down: DownCommand,
    probe: Box<dyn HostProbe + Send>,
    now: i64,
    runtime: &tokio::runtime::Runtime,
) -> (Reaper, Arc<Mutex<Vec<Activity>>>) {
    reaper_with(path, down, probe, Arc::new(move || now), runtime, |_| {})
}

/// A reaper over `path` with any clock and a config tweak, and a collecting
/// report. (`_runtime`: the jobs no longer hold the console's runtime, each
/// teardown waits on one of its own; kept so the callers stay as they are.)
pub fn reaper_with(
    path: &Path,
    down: DownCommand,
    probe: Box<dyn HostProbe + Send>,
    clock: stackless_tui::reaper::jobs::Clock,
    _runtime: &tokio::runtime::Runtime,
    tweak: impl FnOnce(&mut ReaperConfig),
) -> (Reaper, Arc<Mutex<Vec<Activity>>>) {
    let store = Store::open(path, Access::ReadWrite).expect("open");
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    let mut config = ReaperConfig {
        down,
        tick: Duration::from_secs(60),
        down_timeout: Duration::from_secs(20),
        dry_run: false,
        concurrency: 2,
    };
    tweak(&mut config);
    let jobs = JobRunner::new(
        path.to_owned(),
        config,
        Recorder::new(None, Forward::Collect(sink)),
    )
    .with_test_clock(clock);
    (Reaper::new(store, probe, jobs), log)
}

/// A tokio runtime for teardown subprocesses.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

/// `/proc/locks` in one `read(2)`: the kernel lists every lock under its
/// lock within one read call, so the text is one consistent view. (Read in
/// small pieces, as `read_to_string` starts, a lock can fall between two
/// reads while other processes' locks come and go, and look missing.)
pub fn proc_locks() -> String {
    use std::io::Read as _;
    let mut file = std::fs::File::open("/proc/locks").expect("/proc/locks");
    let mut buf = vec![0_u8; 4 << 20];
    let n = file.read(&mut buf).expect("read /proc/locks");
    assert!(n < buf.len(), "/proc/locks longer than one read");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The POSIX locks `pid` holds on the inode `ino` (`/proc/locks`: `N:
/// POSIX ADVISORY READ|WRITE PID MAJ:MIN:INODE START END`).
pub fn locks_of(pid: u32, ino: u64) -> usize {
    proc_locks()
        .lines()
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let on = fields
                .iter()
                .position(|f| *f == "POSIX")
                .and_then(|at| fields.get(at + 3..at + 5));
            matches!(on, Some([p, file]) if *p == pid.to_string()
                && file.rsplit(':').next() == Some(&ino.to_string()))
        })
        .count()
}

/// The wall clock, unix seconds.
pub fn unix_now() -> i64 {
    stackless_tui::model::time::unix_now()
}

/// A teardown script (`<dir>/down.sh`) for `--down-cmd`: logs its instance
/// to `<dir>/calls.log` and the targets of its open descriptors to
/// `<dir>/fds.log`, then runs `body` (`$NAME` is the instance). Exit 0
/// tombstones the instance in another process, as `stackless down` does.
/// Returns the `--down-cmd` value.
pub fn counting_down(dir: &Path, body: &str) -> String {
    let script = dir.join("down.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nNAME=\"$2\"\n{}\necho \"$2\" >> '{calls}'\nfor fd in /proc/$$/fd/*; do readlink \"$fd\"; done >> '{fds}'\n{body}\n",
            tombstone_on_success(&dir.join("state.db")),
            calls = dir.join("calls.log").display(),
            fds = dir.join("fds.log").display(),
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{} down {{name}} --json", script.display())
}

/// The instances [`counting_down`] was called for, in order.
pub fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A stand-in for a 0.4.0 controller beside the store in `state_dir`: this
/// process holds `controller.lock` (an flock, as the controller does) and
/// answers the `controller` request on `daemon.sock` with `lease_reaper`.
/// Dropping it stops it as the controller stops: the lock released and
/// the socket removed.
pub fn fake_controller(state_dir: &Path, lease_reaper: bool) -> FakeController {
    use std::io::{BufRead as _, Write as _};
    let lock = std::fs::File::create(state_dir.join("controller.lock")).unwrap();
    lock.lock().unwrap();
    let socket = state_dir.join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut line = String::new();
            let _ = std::io::BufReader::new(stream.try_clone().unwrap()).read_line(&mut line);
            let _ = writeln!(
                stream,
                r#"{{"protocol":2,"version":"0.4.0","result":"control","response":{{"value":{{"version":"0.4.0","protocol":2,"lease_reaper":{lease_reaper},"persistent":false,"persistence_warning":null}}}}}}"#
            );
        }
    });
    FakeController {
        _lock: lock,
        socket,
    }
}

/// [`fake_controller`]'s lock and socket.
pub struct FakeController {
    _lock: std::fs::File,
    socket: PathBuf,
}

impl Drop for FakeController {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}
