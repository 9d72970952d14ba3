//! How [`super::Store::file_state`] tells a store file rewritten outside
//! `SQLite` (truncated, a copy restored over it in place) from one written
//! by `SQLite` itself: two looks at the file, compared by [`rewritten`].
//!
//! **The rule.** In WAL mode `SQLite` writes the database file only while
//! it checkpoints (sqlite.org "Write-Ahead Logging" §2.2: commits go to
//! the `-wal`), and a checkpoint marks the wal-index (`-shm`) first:
//! `nBackfillAttempted` (offset 128) before it copies a page, `nBackfill`
//! (offset 96) after, the log's salt (offset 32) when it is restarted
//! (`wal.c`, `walCheckpoint`, `walRestartHdr`). So a file whose size or
//! modification time (to the nanosecond) changed while those did not was
//! written by something else, whatever commits came meanwhile. Without a
//! wal-index (a rollback-journal store), the file changing while this
//! connection's `PRAGMA data_version` did not (no other connection
//! committed) is the sign.

use std::path::Path;

use super::files::{self, StoreFile};

/// A file's size and modification time (seconds, nanoseconds).
pub(super) type Stamp = (u64, i64, i64);

/// The store file's size and modification time, by `stat` (no
/// descriptor).
pub(super) fn file_stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.mtime(), m.mtime_nsec()))
}

/// What the wal-index says of the log's checkpoints (`wal.c`'s
/// `WalIndexHdr` and `WalCkptInfo`, native byte order, compared only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Checkpoint {
    /// The log's salt (bytes 32..40): new when the log is restarted.
    pub salt: [u8; 8],
    /// `mxFrame` (bytes 16..20): the last valid frame, 0 for an empty log.
    pub max_frame: u32,
    /// `nBackfill` (96..100) and `nBackfillAttempted` (128..132).
    pub backfill: [u8; 8],
}

/// Whether a checkpoint ran (or may have) between the marks `was` and
/// `now`: a backfill mark moved; or the log's salt changed while it held
/// frames or is empty now (a `RESTART`/`TRUNCATE` checkpoint restarts
/// it). A salt that changed from an empty log to one with frames is a
/// writer's first commit into it (`walWriteFrames`), no checkpoint.
#[must_use]
pub(super) fn checkpointed(was: &Checkpoint, now: &Checkpoint) -> bool {
    if was.backfill != now.backfill {
        return true;
    }
    was.salt != now.salt && (was.max_frame > 0 || now.max_frame == 0)
}

/// One look at the store file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Look {
    /// The file's size and modification time.
    pub file: Stamp,
    /// This connection's `PRAGMA data_version` then (`None`: not read).
    pub version: Option<i64>,
    /// The wal-index's checkpoint marks then; `None` when the file is not
    /// in WAL mode or has no `-shm`.
    pub checkpoint: Option<Checkpoint>,
}

impl Look {
    /// Look at the store at `path` (its canonical path), this connection's
    /// `data_version` being `version` (read before this call: a commit
    /// that lands meanwhile is then newer than the look, never older). The
    /// wal-index is read before the file is `stat`ed, so a checkpoint that
    /// starts in between is seen by the next look. `None` when the file
    /// cannot be `stat`ed.
    pub(super) fn take(path: &Path, version: Option<i64>) -> Option<Self> {
        let checkpoint = checkpoint_marks(path);
        let file = file_stamp(path)?;
        Some(Self {
            file,
            version,
            checkpoint,
        })
    }
}

/// The wal-index's checkpoint marks of the store at `path`, read through
/// [`files`] (never a descriptor opened and closed here); `None` when the
/// file's header does not say WAL or there is no `-shm` to read.
fn checkpoint_marks(path: &Path) -> Option<Checkpoint> {
    let (Some(header), _) = files::head::<20>(path, StoreFile::Db)? else {
        return None;
    };
    if header[18] != 2 || header[19] != 2 {
        return None;
    }
    let (Some(shm), _) = files::head::<132>(path, StoreFile::Shm)? else {
        return None;
    };
    let mut salt = [0_u8; 8];
    salt.copy_from_slice(&shm[32..40]);
    let mut backfill = [0_u8; 8];
    backfill[..4].copy_from_slice(&shm[96..100]);
    backfill[4..].copy_from_slice(&shm[128..132]);
    Some(Checkpoint {
        salt,
        max_frame: u32::from_ne_bytes([shm[16], shm[17], shm[18], shm[19]]),
        backfill,
    })
}

/// The looks a connection took at its file: the last one, and whether a
/// snapshot read found the file rewritten since it ([`Looks::after_read`]).
#[derive(Debug, Default)]
pub(super) struct Looks {
    last: Option<Look>,
    rewritten: bool,
}

impl Looks {
    /// Starting from the look taken at open.
    pub(super) fn new(first: Option<Look>) -> Self {
        Self {
            last: first,
            rewritten: false,
        }
    }

    /// The file's size and time at the last look.
    pub(super) fn file(&self) -> Option<Stamp> {
        self.last.map(|look| look.file)
    }

    /// A snapshot read found the file rewritten since the last look: its
    /// rows may mix the old file's cached pages with the new file's.
    pub(super) fn rewritten_under_read(&self) -> bool {
        self.rewritten
    }

    /// [`super::Store::file_state`]'s look `now`: whether the file was
    /// rewritten since the last look (or a read found it so); `now`
    /// becomes the last look.
    pub(super) fn look(&mut self, now: Option<Look>) -> bool {
        let was = std::mem::replace(&mut self.last, now);
        let noted = std::mem::take(&mut self.rewritten);
        noted || matches!((was, now), (Some(was), Some(now)) if rewritten(&was, &now))
    }

    /// The look `now`, taken after a snapshot read: the last look unless
    /// the file was rewritten since the last one, which is then noted
    /// (the next [`Looks::look`] says so) and the last look kept.
    pub(super) fn after_read(&mut self, now: Look) {
        if self.last.is_some_and(|was| rewritten(&was, &now)) {
            self.rewritten = true;
        } else if !self.rewritten {
            self.last = Some(now);
        }
    }
}

/// Whether the file was rewritten outside `SQLite` between the looks `was`
/// and `now` (the module's rule): its stamp changed while no checkpoint
/// was marked in the wal-index ([`checkpointed`]), or, without a wal-index, while no other
/// connection committed.
#[must_use]
pub(super) fn rewritten(was: &Look, now: &Look) -> bool {
    if was.file == now.file {
        return false;
    }
    match (was.checkpoint, now.checkpoint) {
        (Some(before), Some(after)) => !checkpointed(&before, &after),
        _ => was.version == now.version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: Stamp = (4096, 1_700_000_000, 5);

    fn look(file: Stamp, version: i64, checkpoint: Option<u8>) -> Look {
        Look {
            file,
            version: Some(version),
            checkpoint: checkpoint.map(|c| Checkpoint {
                salt: [1; 8],
                max_frame: 3,
                backfill: [c; 8],
            }),
        }
    }

    #[test]
    fn a_salt_new_with_a_first_commit_into_an_empty_log_is_no_checkpoint() {
        let marks = |salt: u8, max_frame: u32, backfill: u8| Checkpoint {
            salt: [salt; 8],
            max_frame,
            backfill: [backfill; 8],
        };
        assert!(!checkpointed(&marks(0, 0, 0), &marks(7, 2, 0)));
        assert!(checkpointed(&marks(0, 0, 0), &marks(7, 0, 0)));
        assert!(checkpointed(&marks(1, 4, 0), &marks(7, 2, 0)));
        assert!(checkpointed(&marks(1, 4, 0), &marks(1, 4, 4)));
        assert!(!checkpointed(&marks(1, 4, 0), &marks(1, 9, 0)));
    }

    #[test]
    fn an_unchanged_file_is_never_rewritten() {
        assert!(!rewritten(&look(FILE, 1, Some(0)), &look(FILE, 2, Some(0))));
        assert!(!rewritten(&look(FILE, 1, None), &look(FILE, 1, None)));
    }

    #[test]
    fn a_wal_file_changed_without_a_checkpoint_is_rewritten_even_after_commits() {
        let later = (4096, 1_700_000_000, 6);
        assert!(rewritten(&look(FILE, 1, Some(0)), &look(later, 7, Some(0))));
        assert!(!rewritten(
            &look(FILE, 1, Some(0)),
            &look(later, 7, Some(1))
        ));
    }

    #[test]
    fn without_a_wal_index_a_change_with_no_commit_is_rewritten() {
        let shorter = (100, 1_700_000_000, 5);
        assert!(rewritten(&look(FILE, 1, None), &look(shorter, 1, None)));
        assert!(!rewritten(&look(FILE, 1, None), &look(shorter, 2, None)));
        assert!(rewritten(&look(FILE, 1, Some(0)), &look(shorter, 1, None)));
    }

    #[test]
    fn a_rewrite_a_read_found_is_said_by_the_next_look_once() {
        let restored = (4096, 1_700_000_001, 0);
        let mut looks = Looks::new(Some(look(FILE, 1, Some(0))));
        looks.after_read(look(FILE, 2, Some(0)));
        assert!(!looks.rewritten_under_read());
        looks.after_read(look(restored, 3, Some(0)));
        assert!(looks.rewritten_under_read());
        assert_eq!(looks.file(), Some(FILE));
        assert!(looks.look(Some(look(restored, 3, Some(0)))));
        assert!(!looks.rewritten_under_read());
        assert!(!looks.look(Some(look(restored, 3, Some(0)))));
    }
}
