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
