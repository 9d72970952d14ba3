//! `--read-only` on a store owned by another user: works while the store's
//! `-wal`/`-shm` exist (its owner has it open), writes nothing.

use std::process::Command;
use std::time::Duration;

/// Whether this process runs as root (`/proc/self/status` Uid line).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

#[test]
fn another_users_store_is_readable_read_only() {
    if !is_root() || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv to act as another user");
        return;
    }
    let (dir, path) = crate::common::fixture("stackless-real-v4.db");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // The owner (root) has the store open: -wal and -shm exist, root's.
    let owner = rusqlite::Connection::open(&path).unwrap();
    owner
        .query_row("SELECT count(*) FROM instances", [], |r| r.get::<_, i64>(0))
        .unwrap();
    for file in ["state.db", "state.db-wal", "state.db-shm"] {
        let p = dir.path().join(file);
        assert!(p.exists(), "{file} exists while the owner has it open");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_stackless-tui"))
        .args(["snapshot", "--read-only", "--json", "--state"])
        .arg(&path)
        .env("HOME", "/nonexistent")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["instances"].as_array().unwrap().len(), 8);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    drop(owner);
}

/// A directory under `std::env::temp_dir()` that the reader can list and
/// read but not write: owned by root with mode 0755 when this runs as root
/// (the reader is then user 65534, [`as_reader`]), else this user's own
/// with mode 0555 ([`ReaderDir::lock`]; root ignores directory modes).
struct ReaderDir {
    dir: tempfile::TempDir,
    root: bool,
}

impl ReaderDir {
    /// `None` (the test is skipped) as root without `setpriv`.
    fn new() -> Option<Self> {
        let root = is_root();
        if root && Command::new("setpriv").arg("--version").output().is_err() {
            eprintln!("skipped: needs setpriv to act as another user");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("stackless-tui-ro-")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        set_mode(dir.path(), 0o755);
        Some(Self { dir, root })
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Take away this user's write permission on the directory (not root:
    /// the reader is this user).
    fn lock(&self) {
        if !self.root {
            set_mode(self.path(), 0o555);
        }
    }

    /// The directory's files and their bytes, by name.
    fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    }
}

impl Drop for ReaderDir {
    fn drop(&mut self) {
        set_mode(self.dir.path(), 0o755);
    }
}

fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Run the console binary with `args` as the reader: user 65534 through
/// `setpriv` when this runs as root, else this user.
fn as_reader(root: bool, args: &[&str]) -> std::process::Output {
    let exe = env!("CARGO_BIN_EXE_stackless-tui");
    let mut command = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", exe]);
        c
    } else {
        Command::new(exe)
    };
    command
        .args(args)
        .env("HOME", "/nonexistent")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("STACKLESS_STATE_URL")
        .output()
        .unwrap()
}

/// `tests/fixtures/real-0.3.0-v5.db` as `<dir>/state.db` (mode 0644), in
/// WAL mode, its connection closed: no `-wal` or `-shm` left.
fn cleanly_closed_wal_store(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("state.db");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-0.3.0-v5.db"),
        &path,
    )
    .unwrap();
    set_mode(&path, 0o644);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    drop(conn);
    for file in ["state.db-wal", "state.db-shm"] {
        assert!(!dir.join(file).exists(), "{file} is gone once closed");
    }
    path
}

const V5_ROWS: &str = "\
NAME     SUBSTRATE  STATUS      LEASE        LOCK  BACKOFF              REAPER
alpha    local      active      2d 19h left
charlie  local      tombstoned  tombstoned
delta    local      tombstoned  tombstoned
foxtrot  local      active      1d 19h left        1 (retry in 1d 19h)
golf     local      active      1d 19h left
";

#[test]
fn a_cleanly_closed_wal_store_in_a_directory_the_reader_cannot_write_is_read_immutably() {
    let Some(dir) = ReaderDir::new() else {
        return;
    };
    let path = cleanly_closed_wal_store(dir.path());
    let state = path.to_str().unwrap();
    let now = crate::common::CAPTURE.to_string();
    dir.lock();
    let before = dir.files();
    let out = as_reader(
        dir.root,
        &["--read-only", "--state", state, "snapshot", "--now", &now],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), V5_ROWS);
    let shown = dir.path().display();
    assert_eq!(
        stderr,
        format!(
            "stackless-tui: read-only (immutable: dir not writable): {shown} is not writable by \
             this user, so SQLite cannot create the -shm a WAL store needs; the store has no \
             commits waiting in its -wal, so {state} was read as it is on disk, and nothing was \
             written.\n"
        )
    );
    let out = as_reader(
        dir.root,
        &["snapshot", "--json", "--read-only", "--state", state],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "charlie", "delta", "foxtrot", "golf"]);
    // Nothing was created, nothing written.
    assert_eq!(dir.files(), before);
}

#[test]
fn a_wal_with_commits_the_reader_cannot_index_is_refused_with_the_reason() {
    let Some(dir) = ReaderDir::new() else {
        return;
    };
    // A writer's -wal that was never checkpointed, without its -shm (a
    // copy, or a writer in exclusive locking mode): commits the file lacks.
    let scratch = tempfile::tempdir().unwrap();
    let source = cleanly_closed_wal_store(scratch.path());
    let writer = rusqlite::Connection::open(&source).unwrap();
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint = 0;
             UPDATE instances SET substrate = 'render' WHERE name = 'golf';",
        )
        .unwrap();
    let path = dir.path().join("state.db");
    std::fs::copy(&source, &path).unwrap();
    std::fs::copy(
        scratch.path().join("state.db-wal"),
        dir.path().join("state.db-wal"),
    )
    .unwrap();
    drop(writer);
    let state = path.to_str().unwrap();
    dir.lock();
    let before = dir.files();
    for args in [
        &["--read-only", "--state", state, "snapshot"][..],
        &["--read-only", "--state", state, "snapshot", "--json"][..],
    ] {
        let out = as_reader(dir.root, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        let shown = dir.path().display();
        assert_eq!(
            stderr,
            format!(
                "stackless-tui: cannot read {state} read-only: it is a WAL store whose \
                 {state}-wal holds commits not yet copied into it, and its directory {shown} is \
                 not writable by this user, so SQLite cannot create the {state}-shm index it \
                 needs to read them (reading the file alone would show stale rows; nothing was \
                 read or written). Run as a user who can write {shown} (the store's owner), or \
                 let the store's owner stop its writer or checkpoint it (sqlite3 {state} 'PRAGMA \
                 wal_checkpoint(TRUNCATE)') so it can be read as it is.\n"
            )
        );
        assert!(!stderr.contains("--read-only"), "{stderr}");
    }
    assert_eq!(dir.files(), before);
}
