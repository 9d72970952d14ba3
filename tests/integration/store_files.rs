//! The store's files are touched only through `SQLite` or `store::files`
//! while a connection lives (`SQLite`'s POSIX locks are per process:
//! closing any descriptor on the file drops them): the process keeps its
//! locks through every check the console makes, a store with two names is
//! refused, and an existing file is never given a schema.

use std::path::{Path, PathBuf};

use crate::common::stores;
use stackless_tui::store::files::{self, StoreFile};
use stackless_tui::store::wal::WalFacts;
use stackless_tui::store::{Access, FileState, Store, StoreError, walfile};

/// What opens a file (and closes it when dropped).
const OPENS: &[&str] = &[
    "File::open",
    "File::options",
    "File::create",
    "OpenOptions",
    "fs::read(",
    "fs::read_to_string",
    "fs::write(",
    "fs::copy(",
    "libc::open(",
    "libc::openat(",
    "fcntl::open(",
    "fcntl::openat(",
];

/// The files under `src/` that open files, and what they open: never a
/// store's database, `-wal` or `-shm`, but in `src/store/files.rs`. A new
/// one fails [`only_store_files_opens_a_store_file`] until it is looked at
/// and listed here.
const ALLOWED: &[(&str, &str)] = &[
    ("src/store/files.rs", "the store's files: the one place"),
    ("src/audit/read_back.rs", "the audit trail"),
    (
        "src/console/io_worker.rs",
        "a verify's output file, never one of the store's (store::files::names_a_store_file)",
    ),
    ("src/nofollow.rs", "log files and the audit trail"),
    ("src/logs/mod.rs", "instance logs under <state_dir>/logs"),
    ("src/reaper/kernel_clock.rs", "/proc/stat, /proc/uptime"),
    (
        "src/controller/probe.rs",
        "controller.lock, daemon.persistence, /proc/locks",
    ),
    (
        "src/dispatch.rs",
        "the config file, read before any store is opened",
    ),
    (
        "src/launcher/mod.rs",
        "the config file's launcher keys, read before anything local starts",
    ),
    ("src/demo/down.rs", "the demo's logs"),
    ("src/demo/seed.rs", "the demo's logs"),
    ("src/demo/v14.rs", "the 0.4.0 demo's logs"),
    (
        "src/demo/stackless.rs",
        "the 0.4.0 demo's stackless wrapper script",
    ),
    ("src/demo/logs.rs", "the demo's logs"),
    (
        "src/history/files.rs",
        "the flight recorder's history directory: segments, index, lock",
    ),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A `tests.rs` its parent (`mod.rs`, or `NAME.rs` beside a `NAME/`
/// directory) declares `#[cfg(test)]\nmod tests;`: code that never ships.
fn test_module(path: &Path) -> bool {
    if path.file_name().is_none_or(|n| n != "tests.rs") {
        return false;
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    let parent = if dir.join("mod.rs").is_file() {
        dir.join("mod.rs")
    } else {
        dir.with_extension("rs")
    };
    std::fs::read_to_string(parent).is_ok_and(|t| t.contains("#[cfg(test)]\nmod tests;"))
}

#[test]
fn only_store_files_opens_a_store_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    sources(&root.join("src"), &mut all);
    let (mut opening, mut connecting) = (Vec::new(), Vec::new());
    for path in all {
        if test_module(&path) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        // The code that ships: a file's unit tests are its last item,
        // `#[cfg(test)] mod tests`.
        let shipped = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let relative = path
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .into_owned();
        if OPENS.iter().any(|open| shipped.contains(open)) {
            opening.push(relative.clone());
        }
        // Every SQLite connection is opened by `Store::connect`, under a
        // registration (`store::epoch`): the kept descriptors are let go
        // only when none is open.
        if shipped.contains("Connection::open") {
            connecting.push(relative);
        }
    }
    assert_eq!(connecting, ["src/store/mod.rs"], "where connections open");
    opening.sort();
    let mut allowed: Vec<String> = ALLOWED.iter().map(|(f, _)| (*f).to_owned()).collect();
    allowed.sort();
    assert_eq!(
        opening, allowed,
        "the files that open files; in src/store only files.rs may"
    );
}

/// The POSIX locks this process holds on the inode of `path`.
fn own_locks(path: &Path) -> usize {
    use std::os::unix::fs::MetadataExt as _;
    crate::common::locks_of(
        std::process::id(),
        std::fs::metadata(path).expect("stat").ino(),
    )
}

/// Every check the console makes on a store it has open, run beside an
/// open connection: after each, the process still holds its shared lock
/// on the file and its lock on the `-shm`, and an outside writer that
/// commits and closes leaves the log in place.
#[test]
fn every_check_on_an_open_store_keeps_the_process_locks() {
    let (dir, path) = stores::v5();
    let path = std::fs::canonicalize(&path).expect("canonical");
    let mut store = Store::open(&path, Access::ReadWrite).expect("open");
    store.data_version().expect("a read");
    let shm = dir.path().join("state.db-shm");
    let held = |what: &str| {
        assert!(own_locks(&path) >= 1, "the file's lock, after {what}");
        assert!(own_locks(&shm) >= 1, "the index's lock, after {what}");
    };
    held("the open");
    drop(Store::open(&path, Access::ReadOnly).expect("a read-only open"));
    held("a read-only open and close (services, detail readers)");
    assert!(!walfile::truncated(&path));
    held("the truncation check of a bump");
    let _ = walfile::mark(&path);
    held("reading the log's header");
    assert!(WalFacts::of(&path).wal_mode);
    held("reading the file's header");
    assert!(!files::shm_held_elsewhere(&path));
    held("looking for another process on the index");
    assert_eq!(store.file_state(), FileState::Same);
    held("the file-state check");
    drop(Store::open(&path, Access::ReadWrite).expect("a second writer"));
    held("another read-write open and close (jobs, leader)");
    assert!(files::kept(&path) >= 2, "the descriptors stay open");
    // An outside writer commits and closes: it is not the last
    // connection, so it neither checkpoints nor deletes the log.
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('UPDATE leases SET expires_at = expires_at + 1'); c.commit(); c.close()",
        ])
        .arg(&path)
        .output()
        .expect("python3");
    assert!(out.status.success(), "{out:?}");
    assert!(dir.path().join("state.db-wal").exists(), "the log is kept");
    assert!(shm.exists(), "the index is kept");
    drop(store);
    assert_eq!(files::kept(&path), 0, "let go with the last connection");
}

/// `ln state.db alias/state.db; --state alias/state.db`: refused, and
/// nothing is written beside either name.
#[test]
fn a_store_with_two_names_is_refused_and_left_alone() {
    let (dir, path) = stores::v5();
    stores::exec(&path, "PRAGMA wal_checkpoint(TRUNCATE);");
    let alias = dir.path().join("alias");
    std::fs::create_dir(&alias).expect("mkdir");
    let link = alias.join("state.db");
    std::fs::hard_link(&path, &link).expect("link");
    let before = std::fs::read(&path).expect("bytes");
    for access in [Access::ReadWrite, Access::ReadOnly] {
        let error = Store::open(&link, access).expect_err("refused");
        assert_eq!(
            error,
            StoreError::HardLinked(std::fs::canonicalize(&link).expect("canonical"), 2)
        );
        assert!(
            error.to_string().contains("2 names (hard links)"),
            "{error}"
        );
        assert!(Store::open(&path, access).is_err(), "nor by its first name");
    }
    assert_eq!(std::fs::read(&path).expect("bytes"), before);
    assert!(!StoreFile::Wal.path(&link).exists(), "no log for the alias");
    assert!(!StoreFile::Shm.path(&link).exists());
}

/// An existing empty file at `--state` is not a store to create: refused,
/// and left empty (only a file the console creates itself gets a schema).
#[test]
fn an_existing_empty_file_is_never_given_a_schema() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    std::fs::write(&path, b"").expect("empty");
    let error = Store::open(&path, Access::ReadWrite).expect_err("refused");
    assert_eq!(
        error,
        StoreError::NoSchema(std::fs::canonicalize(&path).expect("canonical"))
    );
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), 0);
    // A path with nothing at it is created, with the v4 schema.
    let fresh = dir.path().join("new/state.db");
    let store = Store::open_or_create(&fresh).expect("created");
    assert_eq!(store.generation().user_version, 4);
}

/// A write the store rejects (a trigger's constraint on the GC delete) says
/// nothing of the connection: the reaper says the error once, keeps its
/// connection, and reopens nothing pass after pass (an earlier draft
/// reopened every connection each second and wrote three audit lines a
/// pass).
#[test]
fn a_rejected_write_keeps_the_connection_and_is_said_once() {
    let rt = crate::common::runtime();
    let (dir, path) = stores::v5();
    stores::exec(
        &path,
        "CREATE TRIGGER keep BEFORE DELETE ON instances BEGIN SELECT RAISE(ABORT, 'kept by policy'); END;",
    );
    let down = crate::common::fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = crate::common::reaper_with(
        &path,
        down,
        Box::new(stackless_tui::store::probe::SysinfoProbe::new()),
        std::sync::Arc::new(|| crate::common::CAPTURE),
        &rt,
        |_| {},
    );
    for _ in 0..3 {
        reaper.pass();
    }
    let lines: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.instance.is_empty() || a.instance == "charlie")
        .map(|a| a.detail.clone())
        .collect();
    let kept: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("kept by policy"))
        .collect();
    assert_eq!(
        kept,
        [&format!(
            "GC: state store {}: kept by policy",
            std::fs::canonicalize(&path).expect("canonical").display()
        )],
        "said once: {lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("reopened")),
        "nothing reopened: {lines:#?}"
    );
    assert!(!reaper_store_stale(&path), "no epoch change");
}

/// Whether a connection opened now would be told to reopen at once.
fn reaper_store_stale(path: &Path) -> bool {
    Store::open(path, Access::ReadOnly).map_or(true, |store| store.stale())
}

/// While a teardown's `down` runs (up to `--down-timeout`), this process
/// holds no descriptor on the store: a change of the file meanwhile (an
/// I/O error, a restore) waits for no teardown before every connection
/// reopens. The outcome is then recorded on a fresh connection.
#[test]
fn no_descriptor_on_the_store_is_held_while_down_runs() {
    use stackless_tui::event::ActivityKind;
    let (dir, path) = stores::v5();
    let path = std::fs::canonicalize(&path).expect("canonical");
    let held = dir.path().join("held.log");
    // The parent's (this test process's) descriptors, as the script sees
    // them while it runs.
    let down = crate::common::fake_down(
        dir.path(),
        &format!(
            "for fd in /proc/$PPID/fd/*; do readlink \"$fd\"; done > '{}'\necho boom >&2\nexit 1",
            held.display()
        ),
    );
    let (kind, _log) = reap_alpha(&path, down);
    assert_eq!(kind, Some(ActivityKind::Failed));
    let seen = std::fs::read_to_string(&held).expect("held.log");
    assert!(
        seen.lines().count() >= 3,
        "the parent's descriptors: {seen}"
    );
    let on_store: Vec<&str> = seen
        .lines()
        .filter(|target| target.starts_with(&*path.to_string_lossy()))
        .collect();
    assert_eq!(on_store, Vec::<&str>::new(), "held while down ran");
    // Recorded after it, on a fresh connection.
    let attempts: i64 = rusqlite::Connection::open(&path)
        .expect("open")
        .query_row(
            "SELECT attempts FROM reap_attempts WHERE instance = 'alpha'",
            [],
            |r| r.get(0),
        )
        .expect("recorded");
    assert_eq!(attempts, 1);
}

/// A hard link to the store planted where the console opens other files
/// (a service log, the audit trail, the controller's files) is refused
/// before it is opened: closing a descriptor on it would drop the
/// process's locks on the store.
#[test]
fn a_link_to_the_store_planted_elsewhere_is_never_opened() {
    let (dir, path) = stores::v5();
    let path = std::fs::canonicalize(&path).expect("canonical");
    let store = Store::open(&path, Access::ReadWrite).expect("open");
    store.data_version().expect("a read");
    let logs = dir.path().join("logs/alpha");
    std::fs::create_dir_all(&logs).expect("logs");
    let roles = dir.path().join("stackless-tui/roles");
    std::fs::create_dir_all(&roles).expect("roles");
    let planted = [
        logs.join("web.log"),
        dir.path().join("audit.jsonl"),
        dir.path().join("daemon.persistence"),
        dir.path().join("controller.lock"),
        dir.path().join("audit.jsonl.1"),
        roles.join("console.lock"),
    ];
    for link in &planted {
        std::fs::hard_link(&path, link).expect("link");
    }
    let shm = dir.path().join("state.db-shm");
    let error = stackless_tui::logs::open_log(&planted[0]).expect_err("refused");
    assert!(error.to_string().contains("hard links: refused"), "{error}");
    assert!(stackless_tui::nofollow::append(&planted[1]).is_err());
    let controller = stackless_tui::controller::probe::probe(dir.path());
    assert_eq!(controller.persistence_warning, None);
    assert!(stackless_tui::audit::last_teardowns(&planted[1], 1 << 20).is_empty());
    // The role's lock: a first console takes it, a standby asks again.
    let record = stackless_tui::roles::record();
    for _ in 0..2 {
        let taken = stackless_tui::roles::Wanted::new(&roles, "console").try_take(&record);
        assert!(!matches!(taken, Ok(true)), "a linked lock file is refused");
    }
    assert!(own_locks(&path) >= 1, "the file's lock is kept");
    assert!(own_locks(&shm) >= 1, "the index's lock is kept");
    drop(store);
}

/// A store that cannot be opened again after a `down` that exited 0 (a
/// backup tool made a second name of it meanwhile): nothing could check the
/// row, so the teardown is not counted as torn down, and its failure is
/// owed with the true reason (an earlier draft said "reaped", with a "no
/// such table" error from the closed connection).
#[test]
fn a_down_that_cannot_be_checked_is_not_counted_as_torn_down() {
    use stackless_tui::event::ActivityKind;
    let (dir, path) = stores::v5();
    let path = std::fs::canonicalize(&path).expect("canonical");
    let down = crate::common::fake_down(
        dir.path(),
        &format!("trap - EXIT\nln '{0}' '{0}.bak'\nexit 0", path.display()),
    );
    let (kind, log) = reap_alpha(&path, down);
    assert_eq!(
        kind,
        Some(ActivityKind::Failed),
        "{:#?}",
        log.lock().unwrap()
    );
    let last = log.lock().unwrap().last().expect("a line").detail.clone();
    assert!(
        last.starts_with("down exited 0 in ")
            && last.contains("but the store could not be read to check it (the store ")
            && last.contains("has 2 names (hard links)")
            && last.contains("not counted as torn down (not recorded: the store "),
        "{last}"
    );
    assert!(!last.contains("no such table"), "{last}");
}

/// The operator's `r` on `alpha` (expired at [`crate::common::CAPTURE`])
/// through a reaper with `down`, on this thread: its outcome and the
/// reaper's Activity lines.
fn reap_alpha(
    path: &Path,
    down: stackless_tui::reaper::DownCommand,
) -> (
    Option<stackless_tui::event::ActivityKind>,
    std::sync::Arc<std::sync::Mutex<Vec<stackless_tui::event::Activity>>>,
) {
    let rt = crate::common::runtime();
    let before = Store::open(path, Access::ReadOnly)
        .expect("open")
        .snapshot(&mut stackless_tui::store::probe::SysinfoProbe::new())
        .expect("snapshot");
    let alpha = before.instance("alpha").expect("alpha").clone();
    let (mut reaper, log) = crate::common::reaper_with(
        path,
        down,
        Box::new(stackless_tui::store::probe::SysinfoProbe::new()),
        std::sync::Arc::new(|| crate::common::CAPTURE),
        &rt,
        |_| {},
    );
    let kind = reaper.reap(
        &alpha,
        None,
        stackless_tui::event::Actor::Operator,
        stackless_tui::reaper::Intent::Reap,
    );
    (kind, log)
}
