//! The store's files are touched only through `SQLite` or `store::files`
//! while a connection lives (issue 20): the process keeps its locks
//! through every check the console makes, a store with two names is
//! refused, and an existing file is never given a schema.

use std::path::{Path, PathBuf};

use crate::common::stores;
use stackless_tui::store::files::{self, StoreFile};
use stackless_tui::store::wal::WalFacts;
use stackless_tui::store::{Access, FileState, Store, StoreError, walfile};

/// What opens a file (and closes it when dropped).
const OPENS: &[&str] = &[
    "File::open",
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
    ("src/nofollow.rs", "log files and the audit trail"),
    ("src/logs/mod.rs", "instance logs under <state_dir>/logs"),
    ("src/reaper/kernel_clock.rs", "/proc/stat, /proc/uptime"),
    (
        "src/controller/probe.rs",
        "controller.lock, daemon.persistence, /proc/locks",
    ),
    (
        "src/console/mod.rs",
        "the config file, read before any store is opened",
    ),
    ("src/demo/down.rs", "the demo's logs"),
    ("src/demo/seed.rs", "the demo's logs"),
    ("src/demo/logs.rs", "the demo's logs"),
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

#[test]
fn only_store_files_opens_a_store_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    sources(&root.join("src"), &mut all);
    let mut opening = Vec::new();
    for path in all {
        let text = std::fs::read_to_string(&path).expect("source");
        // The code that ships: a file's unit tests follow `#[cfg(test)]`.
        let shipped = text.split("#[cfg(test)]").next().unwrap_or_default();
        if OPENS.iter().any(|open| shipped.contains(open)) {
            let relative = path.strip_prefix(root).expect("under the root");
            opening.push(relative.to_string_lossy().into_owned());
        }
    }
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
    let ino = std::fs::metadata(path).expect("stat").ino().to_string();
    let pid = std::process::id().to_string();
    std::fs::read_to_string("/proc/locks")
        .expect("/proc/locks")
        .lines()
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(4) == Some(&pid.as_str())
                && fields
                    .get(5)
                    .and_then(|f| f.rsplit(':').next())
                    .is_some_and(|i| i == ino)
        })
        .count()
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
    assert!(
        matches!(&error, StoreError::NotStackless(_, table) if table == "instances"),
        "{error:?}"
    );
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), 0);
    // A path with nothing at it is created, with the v4 schema.
    let fresh = dir.path().join("new/state.db");
    let store = Store::open_or_create(&fresh).expect("created");
    assert_eq!(store.generation().user_version, 4);
}
