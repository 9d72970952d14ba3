//! The state-store adapter: opens stackless's `SQLite` file exactly as stackless
//! does (WAL, `busy_timeout` 5 s, `foreign_keys = ON`), reads whole
//! consistent snapshots, and writes only the reaper's own rows
//! (`reap_attempts`, and GC deletes). Everything here is I/O; decisions live
//! in `crate::reaper::decision` and `crate::model`.

mod checked;
pub mod detail;
pub mod epoch;
pub(crate) mod error;
pub mod files;
mod layout;
mod lenient;
mod look;
pub mod operations;
pub mod probe;
mod queue_seen;
mod read;
mod recheck_all;
mod row_reuse;
pub(crate) mod schema;
mod secrets;
pub(crate) mod seed;
pub mod services;
mod services_reader;
pub(crate) mod wake;
pub mod wal;
pub mod walfile;
pub mod watcher;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

pub use error::StoreError;
pub use read::head::{HEAD_FROM_BYTES, HEAD_ROWS};
pub use read::probe_liveness;
pub use read::stream::{StreamReader, StreamStop};
pub use recheck_all::{BULK_SHARE, Seen};
pub use write::Recheck;

use crate::model::Generation;
use layout::{Layout, create_schema, is_empty, read_generation, read_layout};

/// How long a statement waits on another process's lock before failing with
/// `SQLITE_BUSY` (stackless opens with 5 s).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the console may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The reaper's rows may be written.
    ReadWrite,
    /// Opened with `SQLITE_OPEN_READONLY`: nothing is written, not even the
    /// journal mode.
    ReadOnly,
}

/// The stackless default store path: `$XDG_STATE_HOME/stackless/state.db`
/// when `XDG_STATE_HOME` is set and absolute, else
/// `$HOME/.local/state/stackless/state.db` (contract, "Where the file is").
/// `None` when neither variable gives an absolute directory.
#[must_use]
pub fn default_path(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    if let Some(xdg) = xdg_state_home.filter(|x| Path::new(x).is_absolute()) {
        return Some(Path::new(xdg).join("stackless").join("state.db"));
    }
    home.filter(|h| Path::new(h).is_absolute())
        .map(|h| Path::new(h).join(".local/state/stackless/state.db"))
}

/// An open state store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    generation: Generation,
    layout: Layout,
    access: Access,
    /// `(device, inode)` of the file when it was opened: a store deleted or
    /// replaced under us is noticed by comparing (the open connection would
    /// otherwise go on reading the unlinked file forever).
    identity: Option<(u64, u64)>,
    /// The last look at the file ([`look::Look`]: its size and time, this
    /// connection's `data_version`, the wal-index's checkpoint marks),
    /// taken when [`Store::file_state`] looked and after each snapshot
    /// read that found nothing amiss: a file rewritten in place outside
    /// `SQLite` (truncated, a copy restored over it) changes the first
    /// while no checkpoint marks it ([`look::rewritten`]), and this
    /// connection's cache would go on serving the old pages.
    stamp: look::Looks,
    /// Whether this connection can write: opened read-write and `SQLite` did
    /// not fall back to read-only (file permissions, a read-only mount).
    writable: bool,
    /// Read with `immutable=1` ([`wal::ReadMode::Immutable`]): a read-only
    /// WAL store in a directory this user cannot write. `SQLite` does not
    /// notice changes then; [`Store::file_state`] does.
    immutable: bool,
    /// `(device, inode)` of the `-wal` beside the file, as last seen while
    /// it was the same file: a log left by a file that was then replaced
    /// is told from one the new file's writers made ([`epoch`]).
    wal: Option<(u64, u64)>,
    /// What this connection's last snapshot read of the controller's
    /// queue (`operations::QueueMemory`).
    queue: operations::QueueMemory,
    /// [`Store::recheck`]'s statement for this layout, built once
    /// (formatting it per re-check costs 5 % of a dry run).
    recheck_sql: String,
    /// The names a dry run's scans found unchanged
    /// ([`Store::begin_read_of`]), until [`Store::end_read`].
    held: Option<recheck_all::Held>,
    /// What the last snapshot read saw of the file's version, when its
    /// rows are paired as [`Store::recheck`] pairs them: `PRAGMA
    /// data_version` (changes with each commit of another connection) and
    /// this connection's `total_changes()`; and the names it saw an
    /// operation pending on. A dry run's read that finds both unchanged
    /// reads the same rows ([`Store::begin_read_of`]).
    snapshot_version: Option<((i64, i64), recheck_all::Held)>,
    /// Why this store is closed ([`Store::close`], [`Store::closed_by`]):
    /// every checked call then fails with [`StoreError::Closed`] and this
    /// reason, not with what the placeholder connection would say.
    closed: Option<String>,
    /// This connection in the path's count of open connections
    /// ([`epoch`]); `None` once [`Store::close`]d. Declared last: dropped
    /// after `conn` is closed.
    registration: Option<epoch::Registration>,
}

/// How long an open waits for this console's other connections to a file
/// that changed to close ([`epoch`]) before giving up until its next try.
pub const SETTLE: Duration = Duration::from_secs(1);

use look::file_stamp;

/// Whether the file at a store's path is still the one it opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// Same file.
    Same,
    /// Nothing at the path any more (file or directory removed).
    Gone,
    /// A different file is at the path now (deleted and re-created, or
    /// moved into place): reopen it.
    Replaced,
    /// The same file, rewritten outside `SQLite` (its size or modification
    /// time changed while no other connection committed: truncated, or a
    /// copy restored over it in place), or, read immutably, changed at all
    /// (its size or time, or frames in its `-wal`: a writer started):
    /// reopen it, the connection's cache is stale.
    Rewritten,
    /// Another process changed the schema in place (a stackless upgrade:
    /// `PRAGMA user_version` is not the generation read at open): reopen
    /// it, so the generation, the layout and what the console may do are
    /// learned again.
    Migrated {
        /// The generation read at open.
        was: i64,
        /// `user_version` now.
        now: i64,
    },
}

impl FileState {
    /// Why the file is read anew, in the words a reopened snapshot carries
    /// ([`crate::model::Snapshot::reopened`]; the stream's `reset.reason`):
    /// `None` for [`FileState::Same`] and [`FileState::Gone`].
    #[must_use]
    pub const fn reopen_reason(self) -> Option<&'static str> {
        match self {
            Self::Same | Self::Gone => None,
            Self::Replaced => Some("the store file was replaced: another file is at its path"),
            Self::Rewritten => {
                Some("the store file was rewritten in place (restored from a copy, or truncated)")
            }
            Self::Migrated { .. } => Some("the store's schema changed in place"),
        }
    }
}

/// Refuse to open `path` while the write-ahead log beside it is the one a
/// replaced file left ([`epoch::old_wal`]) and holds frames: `SQLite` would
/// replay them onto the new file (a "malformed" store, or old rows merged
/// silently). Gone or empty, it is forgotten.
fn stale_wal_check(path: &Path) -> Result<(), StoreError> {
    let Some(old) = epoch::old_wal(path) else {
        return Ok(());
    };
    let wal_path = files::StoreFile::Wal.path(path);
    let frames = wal::has_frames(std::fs::symlink_metadata(&wal_path).ok().map(|m| m.len()));
    if frames && file_identity(&wal_path) == Some(old) {
        return Err(StoreError::StaleWal(path.to_owned(), wal_path));
    }
    epoch::forget_old_wal(path);
    Ok(())
}

use crate::nofollow::file_identity;

impl Store {
    /// Open an existing store at `path`.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::IsDirectory`],
    /// [`StoreError::NotADatabase`], [`StoreError::NotStackless`],
    /// [`StoreError::Unreadable`] (permissions; read-only:
    /// [`StoreError::UnreadableReadOnly`]), read-only only
    /// [`StoreError::WalUnreadable`] and [`StoreError::ShmUnavailable`]
    /// (a WAL store in a directory this user cannot write, `wal`), or
    /// another `SQLite` error. A read-only open creates no file.
    pub fn open(path: &Path, access: Access) -> Result<Self, StoreError> {
        crate::render_thread::assert_off("open the store");
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound(path.to_owned()));
            }
            Err(e) if access == Access::ReadOnly => {
                return Err(StoreError::UnreadableReadOnly(
                    path.to_owned(),
                    e.to_string(),
                ));
            }
            Err(e) => return Err(StoreError::Unreadable(path.to_owned(), e.to_string())),
            Ok(m) if m.is_dir() => return Err(StoreError::IsDirectory(path.to_owned())),
            Ok(m) if !m.is_file() => return Err(StoreError::NotAFile(path.to_owned())),
            // `SQLite` names the -wal and -shm after the path it was given:
            // a file reached through two names has two logs, each replayed
            // over the other's commits (sqlite.org "How To Corrupt An
            // SQLite Database File": multiple links to the same file).
            // Refused, as stackless itself never makes one.
            Ok(m) if std::os::unix::fs::MetadataExt::nlink(&m) > 1 => {
                return Err(StoreError::HardLinked(
                    path.to_owned(),
                    std::os::unix::fs::MetadataExt::nlink(&m),
                ));
            }
            Ok(_) => {}
        }
        // A symlinked store lives where its target is: `<state_dir>` (logs,
        // roles) must be the real directory, or GC would delete the wrong
        // logs and two consoles would not see each other.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let path = path.as_path();
        let opened = Self::open_canonical(path, access);
        if opened.is_err() {
            // The files looked at for an open that failed are let go when
            // no other connection of this process needs them kept.
            epoch::release_if_idle(path);
        }
        opened
    }

    /// [`Store::open`] of the canonical `path`.
    fn open_canonical(path: &Path, access: Access) -> Result<Self, StoreError> {
        if access == Access::ReadWrite {
            return Self::open_file(path, access, false);
        }
        // A read-only open never creates a file: a WAL store whose `-shm`
        // this user cannot create is read as it is, or refused (`wal`).
        let facts = wal::WalFacts::of(path);
        let immutable = match wal::read_mode(&facts) {
            wal::ReadMode::Normal => false,
            wal::ReadMode::Immutable => true,
            wal::ReadMode::Refuse => return Err(wal::refusal(path)),
        };
        Self::open_file(path, access, immutable)
            .map_err(|e| wal::read_only_failure(path, &facts, e))
    }

    /// [`Store::open`] of the canonical `path`, immutably or not.
    fn open_file(path: &Path, access: Access, immutable: bool) -> Result<Self, StoreError> {
        if epoch::known(path) && file_stamp(path).is_some_and(|(len, _, _)| len == 0) {
            // Opened before in this process, and now empty: truncated. Not
            // a new store to create (that is for start-up only).
            return Err(StoreError::Empty(path.to_owned()));
        }
        let registration = epoch::register_within(path, SETTLE)
            .map_err(|n| StoreError::Settling(path.to_owned(), n))?;
        if epoch::replaced_under(path, file_identity(path)) {
            // Another file moved over the path under this process's open
            // connections, before any of them saw it: the `-wal` beside it
            // is the old file's. Noted as a holder that sees it notes it.
            registration.bump_replaced(file_identity(&files::StoreFile::Wal.path(path)));
            drop(registration);
            stale_wal_check(path)?;
            return Err(StoreError::Replaced(path.to_owned()));
        }
        stale_wal_check(path)?;
        epoch::check_rewritten_wal(path)?;
        let identity = file_identity(path);
        // Everything is checked on a connection that writes nothing (no
        // journal-mode change), so a file that is not a stackless store is
        // left exactly as it was.
        let probe = Self::connect(path, Access::ReadOnly, false, immutable)?;
        let generation = read_generation(&probe, path)?;
        if generation.user_version == 0 && is_empty(&probe, path)? {
            // An existing file is never given a schema (one written
            // through a second name of stackless's store would be
            // checkpointed over it). Only `open_or_create` makes a store,
            // in a file it created itself.
            return Err(StoreError::NoSchema(path.to_owned()));
        }
        let layout = read_layout(&probe, path, generation)?;
        drop(probe);
        let conn = Self::connect(path, access, false, immutable)?;
        let stamp = look::Looks::new(look::Look::take(path, None));
        let writable = access == Access::ReadWrite
            && !conn
                .is_readonly(rusqlite::MAIN_DB)
                .map_err(|e| StoreError::sqlite(path, &e))?;
        registration.confirm(identity);
        let wal = file_identity(&files::StoreFile::Wal.path(path));
        Ok(Self {
            conn,
            path: path.to_owned(),
            generation,
            layout,
            access,
            identity,
            stamp,
            writable,
            immutable,
            wal,
            queue: operations::QueueMemory::default(),
            recheck_sql: write::recheck_sql(layout),
            held: None,
            snapshot_version: None,
            closed: None,
            registration: Some(registration),
        })
    }

    /// Whether another of this console's connections saw the file broken or
    /// changed since this one opened it ([`epoch`]): drop it (or
    /// [`Store::close`] it) and open the path again.
    #[must_use]
    pub fn stale(&self) -> bool {
        self.registration
            .as_ref()
            .is_none_or(epoch::Registration::stale)
    }

    /// Say the file is broken or changed (a read error that is not `Busy`):
    /// every connection of this console to it is to be closed before any is
    /// opened again ([`epoch`]).
    pub fn invalidate(&self) {
        if let Some(registration) = &self.registration {
            registration.bump();
        }
    }

    /// Close the connection now, keeping the rest (path, generation) for
    /// what is said meanwhile; every later read fails until the holder opens
    /// the path again. [`Store::stale`] is then `true`.
    pub fn close(&mut self) {
        if let Ok(memory) = Connection::open_in_memory() {
            drop(std::mem::replace(&mut self.conn, memory));
            self.registration = None;
            self.closed = Some("closed by this console, not opened again yet".into());
        }
    }

    /// [`Store::close`]d, and not opened again because of `error`: every
    /// checked call now fails with it ([`StoreError::Closed`]).
    pub fn closed_by(&mut self, error: &StoreError) {
        self.close();
        self.closed = Some(error.to_string());
    }

    /// Open the store at `path`, creating it with the stackless v4 schema when
    /// the file does not exist (as stackless does on first run). Used for the
    /// default path and for `--demo`; an existing file is opened as it is.
    ///
    /// # Errors
    /// As [`Store::open`], plus I/O errors creating the parent directory.
    pub fn open_or_create(path: &Path) -> Result<Self, StoreError> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Self::open(path, Access::ReadWrite);
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| StoreError::Unreadable(parent.to_owned(), e.to_string()))?;
        }
        match files::create_new(path) {
            Ok(()) => {}
            // Another process made it meanwhile: it is theirs, opened as is.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Self::open(path, Access::ReadWrite);
            }
            Err(e) => return Err(StoreError::Unreadable(path.to_owned(), e.to_string())),
        }
        // Counted like every connection (`epoch`): the files kept open for
        // the path are not let go under it.
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let registration = epoch::register_within(&canonical, SETTLE)
            .map_err(|n| StoreError::Settling(canonical.clone(), n))?;
        let mut conn = Self::connect(&canonical, Access::ReadWrite, false, false)?;
        create_schema(&mut conn, &canonical)?;
        drop(conn);
        drop(registration);
        Self::open(path, Access::ReadWrite)
    }

    /// A connection to `path`; `immutable` (read-only only) opens
    /// `file:<path>?immutable=1`, which takes no lock and creates nothing.
    fn connect(
        path: &Path,
        access: Access,
        create: bool,
        immutable: bool,
    ) -> Result<Connection, StoreError> {
        let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        flags |= match access {
            Access::ReadWrite => OpenFlags::SQLITE_OPEN_READ_WRITE,
            Access::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
        };
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = if immutable && access == Access::ReadOnly {
            Connection::open_with_flags(wal::immutable_uri(path), flags)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .map_err(|e| StoreError::sqlite(path, &e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| StoreError::sqlite(path, &e))?;
        // Closing never checkpoints (`walfile`): the last close would
        // write the log into whatever file is at the path by then.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(|e| StoreError::sqlite(path, &e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| StoreError::sqlite(path, &e))?;
        if access == Access::ReadWrite {
            // stackless opens in WAL; a store it wrote is WAL already, so this
            // is a no-op there. It is what lets readers and the reaper's
            // writes proceed side by side.
            let _mode: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                .map_err(|e| StoreError::sqlite(path, &e))?;
        }
        Ok(conn)
    }

    /// Whether the path still names the file this store opened, as this
    /// connection read it: not deleted, not replaced, not rewritten outside
    /// `SQLite`, not migrated to another schema. Anything but
    /// [`FileState::Same`] means: drop this store and open the path again
    /// (or wait, when it is gone).
    pub fn file_state(&mut self) -> FileState {
        let state = self.file_state_now();
        match state {
            FileState::Same => self.wal = file_identity(&files::StoreFile::Wal.path(&self.path)),
            FileState::Replaced => {
                if let Some(registration) = &self.registration {
                    registration.bump_replaced(self.wal);
                }
            }
            _ => self.invalidate(),
        }
        state
    }

    /// `Ok` while the path names the file this connection opened (a
    /// `stat`, no descriptor); else [`FileState::Replaced`] is noted as
    /// [`Store::file_state`] notes it, and the error says whether the old
    /// log stands beside the new file ([`StoreError::StaleWal`]) or not
    /// ([`StoreError::Replaced`]).
    pub(super) fn same_file(&mut self) -> Result<(), StoreError> {
        if self.immutable || file_identity(&self.path) == self.identity {
            return Ok(());
        }
        let _ = self.file_state();
        stale_wal_check(&self.path)?;
        Err(StoreError::Replaced(self.path.clone()))
    }

    fn file_state_now(&mut self) -> FileState {
        if self.stale() {
            // Another connection of this console saw the file change.
            return FileState::Rewritten;
        }
        match file_identity(&self.path) {
            None => return FileState::Gone,
            Some(now) if Some(now) == self.identity => {}
            Some(_) => return FileState::Replaced,
        }
        if self.immutable {
            return self.immutable_state();
        }
        let version = self.data_version().ok();
        if let Ok(user_version) = read_generation(&self.conn, &self.path)
            && user_version.user_version != self.generation.user_version
        {
            return FileState::Migrated {
                was: self.generation.user_version,
                now: user_version.user_version,
            };
        }
        let now = look::Look::take(&self.path, version);
        if self.stamp.look(now) {
            FileState::Rewritten
        } else {
            FileState::Same
        }
    }

    /// After a snapshot read: take a new look at the file to compare the
    /// next [`Store::file_state`] with, unless the file changed in a way
    /// no commit explains since the last look ([`look::rewritten`]): that
    /// is noted, [`Store::rewritten_under_read`] says so and the next
    /// `file_state` is [`FileState::Rewritten`]. A copy restored in place
    /// just after a commit is then told from the commit's own write,
    /// however soon after it came. Immutable reads keep the look taken at
    /// open (any change is theirs to see).
    pub(super) fn note_read(&mut self) {
        if self.immutable {
            return;
        }
        let version = self.data_version().ok();
        if let Some(now) = look::Look::take(&self.path, version) {
            self.stamp.after_read(now);
        }
    }

    /// The last snapshot read found the file rewritten in place since the
    /// last look ([`Store::note_read`]): its rows may mix the old file's
    /// cached pages with the new file's. Drop them and open the path
    /// again ([`Store::file_state`] says [`FileState::Rewritten`]).
    #[must_use]
    pub fn rewritten_under_read(&self) -> bool {
        self.stamp.rewritten_under_read()
    }

    /// [`Store::file_state`] of an immutable read, after the identity:
    /// `SQLite` sees no change, so any change of the file's size or time,
    /// or frames in its `-wal`, is [`FileState::Rewritten`].
    fn immutable_state(&mut self) -> FileState {
        let stamp = file_stamp(&self.path);
        let was = self.stamp.file();
        let frames = wal::has_frames(
            std::fs::symlink_metadata(files::StoreFile::Wal.path(&self.path))
                .ok()
                .map(|m| m.len()),
        );
        if frames || stamp != was {
            FileState::Rewritten
        } else {
            FileState::Same
        }
    }

    /// Whether the store is read with `immutable=1` (read-only, a WAL
    /// store in a directory this user cannot write,
    /// [`wal::ReadMode::Immutable`]): changes are seen by reopening.
    #[must_use]
    pub fn immutable(&self) -> bool {
        self.immutable
    }

    /// The file this store was opened from.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `<state_dir>`: the store file's parent directory (per-instance logs
    /// live in `<state_dir>/logs/<instance>/`).
    #[must_use]
    pub fn state_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }

    /// The schema generation read at open.
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// Whether this connection can write the file (opened read-write, and
    /// `SQLite` did not open it read-only because the file or its
    /// directory is not writable by this process). Learned at each open.
    #[must_use]
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// How the store was opened.
    #[must_use]
    pub fn access(&self) -> Access {
        self.access
    }

    /// Set a different busy timeout for this connection (the watcher uses a
    /// short one so a long write transaction elsewhere shows as "busy"
    /// quickly instead of stalling the snapshot thread for 5 s).
    ///
    /// # Errors
    /// The `SQLite` error.
    pub fn set_busy_timeout(&self, timeout: Duration) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(timeout)
            .map_err(|e| StoreError::sqlite(&self.path, &e))
    }

    /// `PRAGMA data_version`: changes whenever another connection commits.
    ///
    /// # Errors
    /// The `SQLite` error (`StoreError::Busy` when locked).
    pub fn data_version(&self) -> Result<i64, StoreError> {
        // Cached: the watcher asks every 4 ms for 60 ms after each wake-up,
        // and preparing it afresh was a twentieth of its time (measured).
        self.conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .map_err(|e| StoreError::sqlite(&self.path, &e))
    }

    /// Whether another connection holds the write lock right now: tries
    /// `BEGIN IMMEDIATE` with this connection's busy timeout and rolls back
    /// at once, writing nothing. In WAL mode readers are never blocked, so
    /// this is the only way to tell the operator that the store is busy (and
    /// that the reaper's writes will wait). Read-only stores answer `Ok`.
    ///
    /// # Errors
    /// [`StoreError::Busy`] while another process holds a write transaction;
    /// other `SQLite` errors.
    pub fn probe_write_lock(&mut self) -> Result<(), StoreError> {
        if self.access == Access::ReadOnly {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| StoreError::sqlite(&self.path, &e))?;
        tx.rollback()
            .map_err(|e| StoreError::sqlite(&self.path, &e))
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        if self.access == Access::ReadOnly {
            return Err(StoreError::ReadOnly(
                "the store was opened read-only".into(),
            ));
        }
        if !self.generation.allows_reaper() {
            return Err(StoreError::ReadOnly(format!(
                "schema v{} predates reap bookkeeping; run any stackless command to upgrade",
                self.generation.user_version
            )));
        }
        Ok(())
    }

    /// Direct access for tests only (their set-up and checks): compiled only
    /// with the dev-only features (Cargo.toml), never in a release build.
    /// The demo and the benches seed through `store::seed`.
    #[cfg(any(test, feature = "test-support", feature = "bench-support"))]
    #[doc(hidden)]
    #[must_use]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}
