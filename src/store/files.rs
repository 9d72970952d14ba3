//! The one module with raw access to a store's files: the database file,
//! its `-wal` and its `-shm`. Everything else reaches them through
//! `SQLite`, or through the functions here.
//!
//! **Why.** `SQLite`'s locks on those files are POSIX advisory locks, and
//! they belong to the *process*: closing any descriptor on a file drops
//! every lock the process holds on it, those of its open `SQLite`
//! connections included (sqlite.org "How To Corrupt An `SQLite` Database
//! File" §2.2). A console that opened the store file to read its header
//! and closed it again lost the shared lock its connections hold on the
//! database (and, through the `-shm`, the "DMS" lock that says "a
//! connection is open here"); the next outside process to close believed
//! itself the last, checkpointed and unlinked the `-wal` and `-shm` under
//! the console, whose later commits went into an unlinked log and were
//! lost (sqlite.org "How To Corrupt An `SQLite` Database File" §2.2).
//!
//! **The rule** (`docs/ARCHITECTURE.md`, "The store's files"): a store
//! file is opened here at most once per inode, `O_RDONLY | O_CLOEXEC |
//! O_NOFOLLOW | O_NONBLOCK`, and that descriptor stays open for as long as
//! any connection of this process to the store lives. It is closed only
//! by [`release`], which `store::epoch` calls under its own lock when the
//! last registered connection to the path has closed: no connection of
//! this process then holds a lock to drop, and none can open meanwhile
//! (an open registers under that same lock first). Everything is read
//! with `pread` in pieces of at most a page ([`MAX_PIECE`] bytes), so a
//! 300 MB log never lands in memory whole. Path operations that open no
//! descriptor (`stat`, `link`, `unlink`) are safe and also live here when
//! they touch the store's files.
//!
//! A test (`tests/integration/store_files.rs`) fails when a file under
//! `src/` other than this one opens a file in a way that could reach a
//! store path.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{FileExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

/// The largest piece read at once: `SQLite`'s largest page (64 KiB) plus
/// a WAL frame header (24 bytes).
pub const MAX_PIECE: usize = 65_536 + 24;

/// Which of a store's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreFile {
    /// The database file itself (`state.db`).
    Db,
    /// Its write-ahead log (`state.db-wal`).
    Wal,
    /// Its wal-index (`state.db-shm`).
    Shm,
}

impl StoreFile {
    /// The suffix `SQLite` appends to the database path.
    #[must_use]
    pub const fn suffix(self) -> &'static str {
        match self {
            Self::Db => "",
            Self::Wal => "-wal",
            Self::Shm => "-shm",
        }
    }

    /// Its path beside the store at `store`.
    #[must_use]
    pub fn path(self, store: &Path) -> PathBuf {
        let mut name = store.as_os_str().to_owned();
        name.push(self.suffix());
        PathBuf::from(name)
    }
}

/// Whether `path` names one of the files of the store at `store` (the
/// database, its `-wal` or `-shm`), by `(device, inode)` without following
/// a symlink at `path`: a file someone else names (a child's answer) must
/// not be opened and closed by anything but this module while a
/// connection is open. Only `stat`s; a path that cannot be read is not one.
#[must_use]
pub fn names_a_store_file(store: &Path, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(named) = std::fs::symlink_metadata(path) else {
        return false;
    };
    [StoreFile::Db, StoreFile::Wal, StoreFile::Shm]
        .into_iter()
        .filter_map(|which| std::fs::metadata(which.path(store)).ok())
        .any(|meta| meta.dev() == named.dev() && meta.ino() == named.ino())
}

/// One descriptor kept open: which file, its `(device, inode)`.
#[derive(Debug)]
struct Kept {
    which: StoreFile,
    key: (u64, u64),
    file: File,
}

/// Kept descriptors per canonical store path.
type Registry = HashMap<PathBuf, Vec<Kept>>;

fn registry() -> MutexGuard<'static, Registry> {
    static KEPT: OnceLock<Mutex<Registry>> = OnceLock::new();
    KEPT.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The store's files, opened (or found open) under the registry's lock:
/// see [`with`].
pub struct Files<'a> {
    store: &'a Path,
    kept: MutexGuard<'static, Registry>,
}

/// A file [`Files::open`] found: an index into the kept descriptors.
#[derive(Debug, Clone, Copy)]
pub struct Opened(usize);

impl Files<'_> {
    /// The descriptor on the file at `which`'s path now: the kept one for
    /// its inode, or a new one, kept from now on. `None` when there is no
    /// such file, it cannot be opened, or it is not a regular file (a
    /// symlink is not followed; a FIFO does not block the open).
    pub fn open(&mut self, which: StoreFile) -> Option<Opened> {
        let path = which.path(self.store);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let key = (meta.dev(), meta.ino());
        let kept = self.kept.entry(self.store.to_owned()).or_default();
        if let Some(at) = kept.iter().position(|k| k.which == which && k.key == key) {
            return Some(Opened(at));
        }
        if !meta.is_file() {
            return None;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
            .open(&path)
            .ok()?;
        // The inode opened (the path may have changed since the stat). Kept
        // whatever it is: closing it could drop a lock.
        let key = file.metadata().map_or(key, |m| (m.dev(), m.ino()));
        kept.push(Kept { which, key, file });
        Some(Opened(kept.len() - 1))
    }

    /// The file [`Files::open`] returned.
    ///
    /// # Panics
    /// Never for an [`Opened`] of this same [`with`] call.
    #[must_use]
    pub fn file(&self, opened: Opened) -> &File {
        &self.kept[self.store][opened.0].file
    }

    /// `open` then `file`, for one file at a time.
    pub fn get(&mut self, which: StoreFile) -> Option<&File> {
        let opened = self.open(which)?;
        Some(self.file(opened))
    }
}

/// Run `f` with the store's files at `store` (its canonical path), under
/// the lock that [`release`] takes: a descriptor `f` uses is not closed
/// meanwhile, and none is closed when `f` ends.
pub fn with<T>(store: &Path, f: impl FnOnce(&mut Files<'_>) -> T) -> T {
    crate::render_thread::assert_off("read the store's files");
    let mut files = Files {
        store,
        kept: registry(),
    };
    f(&mut files)
}

/// Close the descriptors kept for `store`. Only for `store::epoch`, under
/// its lock, when no connection of this process to `store` is open.
pub(super) fn release(store: &Path) {
    let gone = registry().remove(store);
    drop(gone);
}

/// How many descriptors are kept for `store` (for tests and logs).
#[must_use]
pub fn kept(store: &Path) -> usize {
    registry().get(store).map_or(0, Vec::len)
}

/// Read exactly `buf.len()` bytes at `offset`, in pieces of at most
/// [`MAX_PIECE`].
///
/// # Errors
/// The I/O error, or `UnexpectedEof` past the end.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut at = offset;
    for piece in buf.chunks_mut(MAX_PIECE) {
        file.read_exact_at(piece, at)?;
        at += piece.len() as u64;
    }
    Ok(())
}

/// The first `N` bytes of the store's file `which`, and its size; `None`
/// when it is absent or shorter than `N` bytes (then `Some((None, len))`).
#[must_use]
pub fn head<const N: usize>(store: &Path, which: StoreFile) -> Option<(Option<[u8; N]>, u64)> {
    with(store, |files| {
        let file = files.get(which)?;
        let len = file.metadata().map_or(0, |m| m.len());
        let mut header = [0_u8; N];
        let read = read_at(file, &mut header, 0).ok().map(|()| header);
        Some((read, len))
    })
}

/// Whether another process has the wal-index of `store` open: any
/// `SQLite` connection in WAL mode holds a shared lock on the `-shm`'s
/// "DMS" byte (offset 128, `UNIX_SHM_DMS` in `os_unix.c`) while it is
/// connected. This process's own locks are not reported (`F_GETLK`).
/// No `-shm` at all: no. One that cannot be looked at (permissions, not a
/// regular file, the lock query failing): yes, as the caller must then
/// leave the log alone.
#[must_use]
pub fn shm_held_elsewhere(store: &Path) -> bool {
    use std::os::fd::AsRawFd as _;
    with(store, |files| {
        let Some(file) = files.get(StoreFile::Shm) else {
            return std::fs::symlink_metadata(StoreFile::Shm.path(store)).is_ok();
        };
        // SAFETY: a zeroed `flock` is a valid value; F_GETLK only fills it.
        let mut lock: nix::libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = nix::libc::F_WRLCK as _;
        lock.l_whence = nix::libc::SEEK_SET as _;
        lock.l_start = 128;
        lock.l_len = 1;
        // SAFETY: a valid open descriptor and a valid `flock` pointer.
        let rc = unsafe { nix::libc::fcntl(file.as_raw_fd(), nix::libc::F_GETLK, &raw mut lock) };
        rc != 0 || i32::from(lock.l_type) != nix::libc::F_UNLCK
    })
}

/// Keep the log of `store` as `<store>-wal.stale-<now>` (a name not
/// taken: `-1`, `-2`, ... appended), and remove it from its path. Opens
/// nothing (`link`, `unlink`): a descriptor kept on the log stays valid.
///
/// # Errors
/// The I/O error of the link or the unlink.
pub fn set_aside_wal(store: &Path, now: i64) -> std::io::Result<PathBuf> {
    let wal = StoreFile::Wal.path(store);
    let mut name = wal.as_os_str().to_owned();
    name.push(format!(".stale-{now}"));
    let base = PathBuf::from(name);
    let mut target = base.clone();
    for n in 1.. {
        match std::fs::hard_link(&wal, &target) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                let mut next = base.as_os_str().to_owned();
                next.push(format!("-{n}"));
                target = PathBuf::from(next);
            }
            Err(e) => return Err(e),
        }
    }
    std::fs::remove_file(&wal)?;
    Ok(target)
}

/// Create an empty file at `path`, failing when anything is there
/// (`O_CREAT | O_EXCL`, no symlink followed), for a new store. Its
/// descriptor is closed at once: the inode is new, so no connection of
/// this process can hold a lock on it.
///
/// # Errors
/// The I/O error (`AlreadyExists` when the path is taken).
pub fn create_new(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_naming_a_store_file_is_told_by_its_inode() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("state.db");
        std::fs::write(&store, b"db").unwrap();
        std::fs::write(StoreFile::Wal.path(&store), b"wal").unwrap();
        let other = dir.path().join("out.txt");
        std::fs::write(&other, b"output").unwrap();
        let hard = dir.path().join("hard-link");
        std::fs::hard_link(StoreFile::Wal.path(&store), &hard).unwrap();
        let soft = dir.path().join("soft-link");
        std::os::unix::fs::symlink(&store, &soft).unwrap();
        assert!(names_a_store_file(&store, &store));
        assert!(names_a_store_file(&store, &StoreFile::Wal.path(&store)));
        assert!(
            names_a_store_file(&store, &hard),
            "another name, same inode"
        );
        assert!(!names_a_store_file(&store, &other));
        assert!(
            !names_a_store_file(&store, &soft),
            "a symlink is not followed (and the reader refuses it)"
        );
        assert!(!names_a_store_file(&store, &dir.path().join("missing")));
    }

    #[test]
    fn one_descriptor_per_inode_kept_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("state.db");
        std::fs::write(&store, b"SQLite format 3\0and more").unwrap();
        let (first, len) = head::<16>(&store, StoreFile::Db).unwrap();
        assert_eq!(first, Some(*b"SQLite format 3\0"));
        assert_eq!(len, 24);
        assert_eq!(head::<32>(&store, StoreFile::Db).unwrap().0, None);
        assert_eq!(kept(&store), 1, "the same inode is opened once");
        assert!(head::<4>(&store, StoreFile::Wal).is_none(), "no -wal");
        // Replaced at its path: the new inode gets its own descriptor, the
        // old one stays open.
        std::fs::remove_file(&store).unwrap();
        std::fs::write(&store, b"other").unwrap();
        assert_eq!(head::<5>(&store, StoreFile::Db).unwrap().0, Some(*b"other"));
        assert_eq!(kept(&store), 2);
        release(&store);
        assert_eq!(kept(&store), 0);
    }

    #[test]
    fn a_symlink_or_a_fifo_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("state.db");
        std::fs::write(dir.path().join("secret"), b"secret").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), StoreFile::Wal.path(&store)).unwrap();
        nix::unistd::mkfifo(&StoreFile::Shm.path(&store), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(head::<4>(&store, StoreFile::Wal).is_none());
        assert!(head::<4>(&store, StoreFile::Shm).is_none());
        assert!(
            shm_held_elsewhere(&store),
            "a -shm that cannot be looked at may be in use"
        );
        assert_eq!(kept(&store), 0);
        std::fs::remove_file(StoreFile::Shm.path(&store)).unwrap();
        assert!(!shm_held_elsewhere(&store), "no -shm: nobody");
    }

    #[test]
    fn a_log_set_aside_keeps_its_bytes_under_a_name_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("state.db");
        let wal = dir.path().join("state.db-wal");
        std::fs::write(&wal, b"frames").unwrap();
        std::fs::write(dir.path().join("state.db-wal.stale-7"), b"other").unwrap();
        let kept = set_aside_wal(&store, 7).unwrap();
        assert_eq!(kept, dir.path().join("state.db-wal.stale-7-1"));
        assert_eq!(std::fs::read(&kept).unwrap(), b"frames");
        assert!(!wal.exists());
        assert_eq!(
            std::fs::read(dir.path().join("state.db-wal.stale-7")).unwrap(),
            b"other"
        );
    }

    #[test]
    fn create_new_never_touches_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        create_new(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        std::fs::write(&path, b"kept").unwrap();
        assert_eq!(
            create_new(&path).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"kept");
    }
}
