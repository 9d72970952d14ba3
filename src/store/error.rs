//! Typed store errors: callers branch on them (the watcher shows `Busy` as a
//! banner and keeps the last snapshot; start-up turns the rest into a
//! one-paragraph message and exit status 2).

use std::path::{Path, PathBuf};

/// Why the store could not be opened, read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The path does not exist.
    #[error(
        "no stackless state store at {0}: the file does not exist. Check the --state path, \
         or omit --state to use the stackless default path."
    )]
    NotFound(PathBuf),
    /// The path is a directory.
    #[error(
        "{0} is a directory, not a stackless state store. Point --state at the state.db file \
         inside it (usually <dir>/state.db)."
    )]
    IsDirectory(PathBuf),
    /// Not a regular file (a FIFO, a device such as /dev/null, a socket).
    #[error(
        "{0} is not a regular file (a device, FIFO or socket), so it cannot be a stackless \
         state store. Point --state at stackless's state.db."
    )]
    NotAFile(PathBuf),
    /// `SQLite` says the file is not a database (or is encrypted/corrupt).
    #[error(
        "{0} is not a SQLite database (the file is corrupt or something else). Point --state at \
         stackless's state.db; do not let this console or stackless write to this file."
    )]
    NotADatabase(PathBuf),
    /// A `SQLite` database without the stackless tables.
    #[error(
        "{0} is a SQLite database but not a stackless state store (no `{1}` table). Point --state \
         at stackless's state.db (default: $XDG_STATE_HOME/stackless/state.db)."
    )]
    NotStackless(PathBuf, String),
    /// The file or its directory cannot be read (permissions, I/O).
    #[error(
        "cannot read {0}: {1}. Check the file's permissions, or use --read-only for a store \
         owned by another user."
    )]
    Unreadable(PathBuf, String),
    /// A read-only open (`--read-only`, `snapshot`) of a store the file
    /// permissions keep from this user: the advice never names
    /// `--read-only`, which was given.
    #[error(
        "cannot read {0} even read-only: {1}. This user needs read permission on the file and \
         search permission on every directory above it: run as the store's owner or a user in \
         its group, or ask the owner to grant read access."
    )]
    UnreadableReadOnly(PathBuf, String),
    /// A read-only open of a WAL store without a `-shm` index in a
    /// directory this user cannot write, whose `-wal` holds frames
    /// (commits not yet in the file): `SQLite` needs the index to read
    /// them and cannot create it, and an immutable read of the file alone
    /// would show stale rows ([`super::wal::ReadMode::Refuse`]).
    #[error(
        "cannot read {path} read-only: it is a WAL store whose {path}-wal holds commits not yet \
         copied into it, and its directory {dir} is not writable by this user, so SQLite cannot \
         create the {path}-shm index it needs to read them (reading the file alone would show \
         stale rows; nothing was read or written). Run as a user who can write {dir} (the \
         store's owner), or let the store's owner stop its writer or checkpoint it (sqlite3 \
         {path} 'PRAGMA wal_checkpoint(TRUNCATE)') so it can be read as it is."
    )]
    WalUnreadable {
        /// The store.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// A read-only open of a WAL store in a directory this user cannot
    /// write that `SQLite` refused anyway (it needs `-shm`/`-wal` files it
    /// cannot create there).
    #[error(
        "cannot read {path} read-only ({detail}): it is a WAL store and its directory {dir} is \
         not writable by this user, so SQLite cannot create the -shm and -wal files it needs \
         beside it. Run as a user who can write {dir} (the store's owner), or let the store's \
         owner stop its writer or checkpoint it (sqlite3 {path} 'PRAGMA \
         wal_checkpoint(TRUNCATE)') so it can be read as it is."
    )]
    ShmUnavailable {
        /// The store.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
        /// `SQLite`'s message.
        detail: String,
    },
    /// The store file has more than one name (a hard link): `SQLite` names
    /// the `-wal` and `-shm` after the path, so each name would get its
    /// own log and one would be checkpointed over the other's commits.
    #[error(
        "{0} has {1} names (hard links): SQLite keeps a write-ahead log per name, so reading \
         it through one name could write an old log over commits made through the other. \
         Remove the extra name (keep stackless's own state.db), then open that."
    )]
    HardLinked(PathBuf, u64),
    /// A store this console had open is now an empty file: truncated (a
    /// new, empty store is only created at start-up).
    #[error("the store file {0} is empty (truncated?)")]
    Empty(PathBuf),
    /// The file changed under this console, and some of its connections to
    /// the old file are still open: nothing is opened again until they are
    /// closed (`store::epoch`), or the new connection would read a stale
    /// index and fail.
    #[error(
        "the store file {0} changed: waiting for {1} of this console's connections to the old file to close before reopening it"
    )]
    Settling(PathBuf, usize),
    /// The store file was replaced (another file moved over it) while its
    /// write-ahead log, with commits of the old file, is still beside it:
    /// opening the new file would replay the old file's commits onto it.
    /// Nothing is opened, and nothing deleted.
    #[error(
        "the store file {0} was replaced, but {1} (and its -shm) belong to the old file: opening it would apply the old file's commits to the new one. Stop stackless and this console, then remove {1} and the -shm beside it (or put the old file back)"
    )]
    StaleWal(PathBuf, PathBuf),
    /// The store file was rewritten in place (truncated, a copy restored
    /// over it) and its write-ahead log, with page images of the old file,
    /// is open in another process: it can be neither replayed onto the new
    /// file nor set aside (`store::walfile`). Nothing is opened.
    #[error(
        "the store file {0} was rewritten in place, but {1} holds the old file's commits and another process has it open (or its -shm cannot be examined): opening the store would apply them to the new file. Stop stackless (and any program using the store); the console then sets {1} aside and reads the file as it is"
    )]
    ForeignWal(PathBuf, PathBuf),
    /// The path names another file than the one this connection opened
    /// (another store moved over it): what this connection reads is the
    /// old file's, and nothing is acted on by it. It is opened again (the
    /// new file, or [`StoreError::StaleWal`] while the old log is beside
    /// it).
    #[error(
        "the store file {0} was replaced since this console opened it: nothing is acted on until it is opened again"
    )]
    Replaced(PathBuf),
    /// Another process held a lock past the busy timeout.
    #[error("the store {0} is busy: another process holds a write transaction")]
    Busy(PathBuf),
    /// A write was refused by this console's own rules.
    #[error("write refused: {0}")]
    ReadOnly(String),
    /// `STACKLESS_STATE_URL` is set: stackless 0.3.0's libsql remote store.
    /// stackless 0.4.0 refuses it too (`RemoteDisabled`: "use
    /// `STACKLESS_CONTROLLER=ssh://host` and unset `STACKLESS_STATE_URL`",
    /// `stackless-core-0.4.0/src/state/error.rs`); its fleets are a
    /// controller reached over SSH, which `--controller` reaches. The text
    /// is the URL without its query or user part (a token never shown).
    #[error(
        "STACKLESS_STATE_URL is set ({0}): stackless 0.4.0 moved fleets from a shared libsql \
         database to a controller reached over SSH (STACKLESS_CONTROLLER=ssh://HOST), and a \
         0.3.0 libsql remote store cannot be read by this console. Run the console where the \
         controller is: `stackless-tui --controller ssh://HOST` (or set STACKLESS_CONTROLLER), \
         or unset STACKLESS_STATE_URL to open this machine's local store."
    )]
    RemoteUnsupported(String),
    /// The store refused a write for what was written or where, not for
    /// the connection: a constraint (a trigger's `RAISE`, a foreign key)
    /// or a full disk (`SQLITE_CONSTRAINT`, `SQLITE_FULL`). The connection
    /// stays ([`StoreError::breaks_connection`]).
    #[error("state store {0}: {1}")]
    Rejected(PathBuf, String),
    /// This console closed its connection and could not open the store
    /// again (the reason): nothing was read or written.
    #[error("the store {0} could not be opened again: {1}")]
    Closed(PathBuf, String),
    /// An existing file with no schema at all (0 bytes, or an empty
    /// database): never given one by this console (`docs/ARCHITECTURE.md`,
    /// "The store's files").
    #[error(
        "{0} exists but holds no stackless schema yet (an empty database: a first run of \
         stackless that did not finish, or a file made by hand). This console never writes a \
         schema into an existing file: run any stackless command (`stackless list`) to create \
         the store there, or point --state at stackless's state.db."
    )]
    NoSchema(PathBuf),
    /// Any other `SQLite` failure.
    #[error("state store {0}: {1}")]
    Sqlite(PathBuf, String),
}

impl StoreError {
    /// Classify a `rusqlite` error for `path`.
    #[must_use]
    pub fn sqlite(path: &Path, error: &rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        if let rusqlite::Error::SqliteFailure(failure, _) = error {
            match failure.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                    return Self::Busy(path.to_owned());
                }
                ErrorCode::NotADatabase => return Self::NotADatabase(path.to_owned()),
                ErrorCode::ConstraintViolation | ErrorCode::DiskFull => {
                    return Self::Rejected(path.to_owned(), error.to_string());
                }
                ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly => {
                    return Self::Unreadable(path.to_owned(), error.to_string());
                }
                _ => {}
            }
        }
        Self::Sqlite(path.to_owned(), error.to_string())
    }

    /// Whether the connection that met this error is not to be trusted
    /// again: every connection of this process to the file is then dropped
    /// and opened afresh (`store::epoch`; else a `disk I/O error` leaves
    /// every pass failing until restart). Every error does so (an I/O
    /// error, a corrupt page, a file no longer a database or empty, a
    /// schema changed under the connection), but a lock conflict
    /// (`Busy`: retry), a write the store rejected (`Rejected`: a
    /// constraint, a full disk) and this console's own refusals
    /// (`ReadOnly`), which say nothing of the connection.
    #[must_use]
    pub const fn breaks_connection(&self) -> bool {
        !matches!(self, Self::Busy(_) | Self::Rejected(..) | Self::ReadOnly(_))
    }

    /// Whether this is a transient lock conflict (retry on the next tick).
    #[must_use]
    pub const fn is_busy(&self) -> bool {
        matches!(self, Self::Busy(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    /// What the file did to the connection breaks it; a lock
    /// conflict, a full disk or a constraint leave it as it is.
    #[test]
    fn a_failing_file_breaks_the_connection_a_rejected_write_does_not() {
        let path = Path::new("/s/state.db");
        let broken = |code| StoreError::sqlite(path, &failure(code)).breaks_connection();
        assert!(broken(rusqlite::ffi::SQLITE_IOERR_SHORT_READ));
        assert!(broken(rusqlite::ffi::SQLITE_IOERR));
        assert!(broken(rusqlite::ffi::SQLITE_CORRUPT));
        assert!(broken(rusqlite::ffi::SQLITE_NOTADB));
        assert!(
            broken(rusqlite::ffi::SQLITE_ERROR),
            "no such table: relearn"
        );
        assert!(StoreError::Empty(path.to_owned()).breaks_connection());
        for kept in [
            rusqlite::ffi::SQLITE_BUSY,
            rusqlite::ffi::SQLITE_FULL,
            rusqlite::ffi::SQLITE_CONSTRAINT_TRIGGER,
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY,
        ] {
            assert!(!broken(kept), "{kept}");
        }
        assert!(!StoreError::ReadOnly("no".into()).breaks_connection());
        assert_eq!(
            StoreError::sqlite(path, &failure(rusqlite::ffi::SQLITE_FULL)).to_string(),
            "state store /s/state.db: Error code 13: database or disk is full"
        );
    }
}
