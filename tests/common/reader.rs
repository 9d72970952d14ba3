//! A reader who cannot write the store's directory: as root, user 65534
//! through `setpriv` (root ignores directory modes); else this user, with
//! the directory's mode taking write away.

use std::process::Command;

/// Whether this process runs as root (`/proc/self/status` Uid line).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

/// A directory under `std::env::temp_dir()` that the reader can list and
/// read but not write: owned by root with mode 0755 when this runs as root
/// (the reader is then user 65534, [`as_reader`]), else this user's own
/// with mode 0555 ([`ReaderDir::lock`]; root ignores directory modes).
pub struct ReaderDir {
    dir: tempfile::TempDir,
    /// This runs as root (the reader is user 65534).
    pub root: bool,
}

impl ReaderDir {
    /// `None` (the test is skipped) as root without `setpriv`.
    pub fn new() -> Option<Self> {
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

    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Take away this user's write permission on the directory (not root:
    /// the reader is this user).
    pub fn lock(&self) {
        if !self.root {
            set_mode(self.path(), 0o555);
        }
    }

    /// The directory's files and their bytes, by name.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
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

pub fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Run the console binary with `args` as the reader: user 65534 through
/// `setpriv` when this runs as root, else this user.
pub fn as_reader(root: bool, args: &[&str]) -> std::process::Output {
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
        // Times in UTC whatever the machine's zone.
        .env("TZ", "UTC0")
        .output()
        .unwrap()
}

/// `tests/fixtures/real-0.3.0-v5.db` as `<dir>/state.db` (mode 0644), in
/// WAL mode, its connection closed: no `-wal` or `-shm` left.
pub fn cleanly_closed_wal_store(dir: &std::path::Path) -> std::path::PathBuf {
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
