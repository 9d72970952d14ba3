//! How a read-only open reads a WAL store whose directory this user cannot
//! write. `SQLite` reads a WAL store through its `-shm` index; when the
//! index does not exist (the last connection closed cleanly and removed
//! it) and the directory is not writable (another user's store, a
//! read-only mount), `SQLite` cannot create it, and every read fails with
//! "attempt to write a readonly database". Such a store is read with
//! `immutable=1` (no locks, no `-shm`, no `-wal`, no file created) when
//! nothing is in its `-wal` that the file itself lacks; else the open is
//! refused with the reason ([`StoreError::WalUnreadable`]).
//!
//! [`read_mode`] is the pure rule; [`WalFacts::of`] gathers what it needs.

use std::path::{Path, PathBuf};

use super::StoreError;

/// A WAL file's header is 32 bytes; frames (commits) follow it.
pub const WAL_HEADER_BYTES: u64 = 32;

/// What the files beside a store say, for [`read_mode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalFacts {
    /// The database header's read and write versions are 2 (bytes 18 and
    /// 19: a WAL store, sqlite.org/fileformat2.html §1.3.3).
    pub wal_mode: bool,
    /// `<path>-shm` exists (a connection has the store open, or one did).
    pub shm: bool,
    /// The size of `<path>-wal` in bytes, `None` when there is none.
    pub wal_bytes: Option<u64>,
    /// This process may create files in the store's directory
    /// (`eaccess(dir, W_OK)`: permissions, a read-only mount).
    pub dir_writable: bool,
}

/// How a read-only connection reads the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Open as usual (`SQLite` finds or creates what it needs).
    Normal,
    /// `file:...?immutable=1`: the file is read as it is, no lock taken,
    /// no file created; `SQLite` will not notice later changes (the
    /// watcher reopens on them: [`super::FileState::Rewritten`]).
    Immutable,
    /// `<path>-wal` holds frames the file lacks, and without a `-shm`
    /// (which cannot be created) `SQLite` cannot read them: an immutable
    /// read would show stale rows.
    Refuse,
}

/// The pure rule, for a read-only open: a WAL store in a directory this
/// user cannot write is read immutably when its `-wal` is absent or holds
/// no frame (no more than its header: the file is the whole store, with
/// or without a `-shm`, which `SQLite` could not use read-only without a
/// `-wal` anyway); when the `-wal` holds frames it is read as usual
/// through an existing `-shm` (its writer's), and refused without one.
/// Every other store opens as usual.
#[must_use]
pub const fn read_mode(facts: &WalFacts) -> ReadMode {
    if !facts.wal_mode || facts.dir_writable {
        return ReadMode::Normal;
    }
    if !has_frames(facts.wal_bytes) {
        ReadMode::Immutable
    } else if facts.shm {
        ReadMode::Normal
    } else {
        ReadMode::Refuse
    }
}

/// Whether a `-wal` of `bytes` (`None`: none) holds any frame.
#[must_use]
pub const fn has_frames(bytes: Option<u64>) -> bool {
    matches!(bytes, Some(b) if b > WAL_HEADER_BYTES)
}

impl WalFacts {
    /// Look at `path` (the canonical store path), its `-shm` and `-wal`
    /// and its directory. Reads the first 20 bytes of the file (through
    /// `store::files`); writes nothing.
    #[must_use]
    pub fn of(path: &Path) -> Self {
        // Through `store::files`: a descriptor opened here and closed
        // would drop this process's locks on the file (POSIX locks are the
        // process's: `docs/ARCHITECTURE.md`, "The store's files").
        let wal_mode = matches!(
            super::files::head::<20>(path, super::files::StoreFile::Db),
            Some((Some(header), _)) if header[18] == 2 && header[19] == 2
        );
        let dir = parent(path);
        Self {
            wal_mode,
            shm: std::fs::symlink_metadata(super::files::StoreFile::Shm.path(path)).is_ok(),
            wal_bytes: std::fs::symlink_metadata(super::files::StoreFile::Wal.path(path))
                .ok()
                .map(|m| m.len()),
            dir_writable: dir_writable(&dir),
        }
    }
}

fn parent(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Whether this process (its effective ids) may create files in `dir`.
fn dir_writable(dir: &Path) -> bool {
    use nix::unistd::AccessFlags;
    #[cfg(target_os = "linux")]
    let allowed = nix::unistd::eaccess(dir, AccessFlags::W_OK | AccessFlags::X_OK);
    #[cfg(not(target_os = "linux"))]
    let allowed = nix::unistd::access(dir, AccessFlags::W_OK | AccessFlags::X_OK);
    allowed.is_ok()
}

/// `file:<path>?immutable=1`, the path percent-encoded (RFC 3986 path
/// characters kept), for `SQLITE_OPEN_URI`.
#[must_use]
pub fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let mut uri = String::from("file:");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The refusal for [`ReadMode::Refuse`] at `path`.
#[must_use]
pub fn refusal(path: &Path) -> StoreError {
    StoreError::WalUnreadable {
        path: path.to_owned(),
        dir: parent(path),
    }
}

/// A read-only open that `SQLite` refused (`error`, already classified):
/// its message must not advise `--read-only`, which was given. A WAL store
/// in a directory this user cannot write is [`StoreError::ShmUnavailable`];
/// an unreadable file is [`StoreError::UnreadableReadOnly`].
#[must_use]
pub fn read_only_failure(path: &Path, facts: &WalFacts, error: StoreError) -> StoreError {
    match error {
        StoreError::Unreadable(p, detail) if facts.wal_mode && !facts.dir_writable => {
            StoreError::ShmUnavailable {
                path: p,
                dir: parent(path),
                detail,
            }
        }
        StoreError::Unreadable(p, detail) => StoreError::UnreadableReadOnly(p, detail),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: WalFacts = WalFacts {
        wal_mode: true,
        shm: false,
        wal_bytes: None,
        dir_writable: false,
    };

    #[test]
    fn a_cleanly_closed_wal_store_in_a_directory_not_writable_is_read_immutably() {
        assert_eq!(read_mode(&CLEAN), ReadMode::Immutable);
        for bytes in [0, WAL_HEADER_BYTES] {
            let facts = WalFacts {
                wal_bytes: Some(bytes),
                ..CLEAN
            };
            assert_eq!(read_mode(&facts), ReadMode::Immutable, "{bytes}");
        }
    }

    #[test]
    fn a_wal_with_frames_is_read_through_its_index_or_refused_without_one() {
        let facts = WalFacts {
            wal_bytes: Some(WAL_HEADER_BYTES + 1),
            ..CLEAN
        };
        assert_eq!(read_mode(&facts), ReadMode::Refuse);
        assert_eq!(
            read_mode(&WalFacts { shm: true, ..facts }),
            ReadMode::Normal
        );
        // A -shm left without frames to read: the file is the store.
        assert_eq!(
            read_mode(&WalFacts { shm: true, ..CLEAN }),
            ReadMode::Immutable
        );
    }

    #[test]
    fn everything_else_opens_as_usual() {
        for facts in [
            WalFacts {
                wal_mode: false,
                ..CLEAN
            },
            WalFacts {
                dir_writable: true,
                wal_bytes: Some(4096),
                ..CLEAN
            },
            WalFacts {
                dir_writable: true,
                ..CLEAN
            },
        ] {
            assert_eq!(read_mode(&facts), ReadMode::Normal, "{facts:?}");
        }
    }

    #[test]
    fn a_read_only_failure_never_advises_read_only() {
        let path = Path::new("/srv/st/state.db");
        let failed = || StoreError::Unreadable(path.to_owned(), "denied".into());
        let shm = read_only_failure(path, &CLEAN, failed());
        let file = read_only_failure(
            path,
            &WalFacts {
                dir_writable: true,
                ..CLEAN
            },
            failed(),
        );
        assert!(matches!(shm, StoreError::ShmUnavailable { .. }), "{shm:?}");
        assert_eq!(
            file,
            StoreError::UnreadableReadOnly(path.to_owned(), "denied".into())
        );
        for error in [shm, file, refusal(path)] {
            assert!(!error.to_string().contains("--read-only"), "{error}");
        }
        assert!(failed().to_string().contains("--read-only"));
    }

    #[test]
    fn the_uri_encodes_what_a_uri_would_read() {
        assert_eq!(
            immutable_uri(Path::new("/srv/a b/st?te#1%.db")),
            "file:/srv/a%20b/st%3Fte%231%25.db?immutable=1"
        );
    }
}
