//! Whether the write-ahead log beside a store file rewritten in place still
//! belongs to it, and setting one aside that does not.
//!
//! A file truncated, or a copy restored over it, *in place* keeps its
//! `-wal`: that log's frames are page images of the file as it was. `SQLite`
//! cannot tell (a WAL's header and frames carry salts of the log itself,
//! nothing of the database file's identity, sqlite.org/fileformat2.html
//! §4.1), so the next connection would replay them onto the restored copy
//! (leases renewed an hour later merged into a backup, or a "malformed"
//! file). Two things stop that:
//!
//! - every console connection is opened with
//!   `SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE` (`Store::connect`): closing the last
//!   of them never checkpoints an old log into whatever file is at the path
//!   by then (it did, when a copy was restored before the last old
//!   connection closed);
//! - the connection that sees the file truncated ([`truncated`]) records
//!   the log beside it ([`Mark`]: its inode and header salts,
//!   `epoch::Registration::bump`);
//!   before the file is opened again, [`check`] reads that log's committed
//!   frames ([`committed_pages`], checksums verified as `SQLite` does) and
//!   compares each page with the file: when they all match, the log is
//!   already in the file (a checkpoint) and replaying it changes nothing;
//!   when one differs, the log belongs to the old file. It is then set aside
//!   (hard-linked to `<path>-wal.stale-<unix seconds>`, then unlinked: the
//!   frames are kept, never deleted) when no other process has it open (no
//!   lock on its `-shm`), and otherwise the open is refused
//!   ([`StoreError::ForeignWal`]): the other process would go on using it.
//!
//! A log the other processes restarted since (other salts, another inode)
//! belongs to the new file and is read as usual.

use std::collections::BTreeMap;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use super::StoreError;

/// The identity of a write-ahead log: `(device, inode)` and its header's
/// two salts (a log restarted by a writer gets new salts).
pub type Mark = (u64, u64, u32, u32);

/// [`Mark`] of the log at `wal`, `None` when there is none or its header
/// is not a WAL header.
#[must_use]
pub fn mark(wal: &Path) -> Option<Mark> {
    use std::os::unix::fs::MetadataExt as _;
    let file = std::fs::File::open(wal).ok()?;
    let meta = file.metadata().ok()?;
    let mut header = [0_u8; 32];
    file.read_exact_at(&mut header, 0).ok()?;
    let (_, salts) = header_fields(&header)?;
    Some((meta.dev(), meta.ino(), salts.0, salts.1))
}

/// Whether the database file at `path` is cut short: empty, shorter than
/// its 100-byte header, not a database header any more, or shorter than
/// the page count its header gives (bytes 28..32 times the page size at
/// 16..18, trusted when the version-valid-for number at 92 equals the
/// change counter at 24, fileformat2.html §1.3.7). A checkpoint never
/// leaves a file so (it writes every page up to the committed size), so
/// this is evidence of a rewrite outside `SQLite`, where a changed size or
/// time alone is not (another process's checkpoint changes them too).
#[must_use]
pub fn truncated(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let mut header = [0_u8; 100];
    if len < 100 || file.read_exact_at(&mut header, 0).is_err() {
        return true;
    }
    if &header[..16] != b"SQLite format 3\0" {
        return true;
    }
    let be = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    be(92) == be(24) && len < u64::from(be(28)) * page_size
}

/// The page size and salts of a WAL header (32 bytes, big-endian fields:
/// magic `0x377f0682`/`0x377f0683`, version, page size, checkpoint
/// sequence, salt-1, salt-2, checksums; fileformat2.html §4.1).
fn header_fields(header: &[u8]) -> Option<(u32, (u32, u32))> {
    let be = |at: usize| {
        header
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_be_bytes)
    };
    let magic = be(0)?;
    if magic & !1 != 0x377f_0682 {
        return None;
    }
    Some((be(8)?, (be(16)?, be(20)?)))
}

/// `SQLite`'s WAL checksum over `data` (a multiple of 8 bytes), continued
/// from `(s1, s2)`; words read big-endian when the magic's low bit is set,
/// little-endian otherwise (fileformat2.html §4.2).
fn checksum(data: &[u8], big_endian: bool, (mut s1, mut s2): (u32, u32)) -> (u32, u32) {
    for pair in data.chunks_exact(8) {
        let word = |b: &[u8]| {
            let b: [u8; 4] = [b[0], b[1], b[2], b[3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        s1 = s1.wrapping_add(word(&pair[..4])).wrapping_add(s2);
        s2 = s2.wrapping_add(word(&pair[4..])).wrapping_add(s1);
    }
    (s1, s2)
}

/// The pages a log's committed frames hold: page size, and for each page
/// number the byte offset in `wal` of its newest image up to the last
/// valid commit frame. A frame is valid while its salts are the header's
/// and its cumulative checksum matches (`SQLite`'s recovery stops at the
/// first that is not, fileformat2.html §4.3). `None` for no WAL header.
/// Pure.
#[must_use]
pub fn committed_pages(wal: &[u8]) -> Option<(u32, BTreeMap<u32, usize>)> {
    let header = wal.get(..32)?;
    let (page_size, salts) = header_fields(header)?;
    let big_endian = header[3] & 1 == 1;
    let be = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let mut sums = checksum(&header[..24], big_endian, (0, 0));
    if sums != (be(header, 24), be(header, 28)) {
        return None;
    }
    let page = usize::try_from(page_size).ok()?;
    let (mut pending, mut committed) = (BTreeMap::new(), BTreeMap::new());
    let mut at = 32;
    while let Some(frame) = wal.get(at..at + 24 + page) {
        if (be(frame, 8), be(frame, 12)) != salts {
            break;
        }
        sums = checksum(&frame[..8], big_endian, sums);
        sums = checksum(&frame[24..], big_endian, sums);
        if sums != (be(frame, 16), be(frame, 20)) {
            break;
        }
        pending.insert(be(frame, 0), at + 24);
        if be(frame, 4) != 0 {
            committed.extend(std::mem::take(&mut pending));
        }
        at += 24 + page;
    }
    Some((page_size, committed))
}

/// Whether every committed page of the log `wal` is already the same in
/// the database file `db` (a log already checkpointed into it). An
/// unreadable file is not.
fn in_file(db: &Path, wal: &[u8]) -> bool {
    let Some((page_size, pages)) = committed_pages(wal) else {
        return true;
    };
    let Ok(file) = std::fs::File::open(db) else {
        return false;
    };
    let size = u64::from(page_size);
    let mut buf = vec![0_u8; usize::try_from(page_size).unwrap_or(0)];
    pages.iter().all(|(&pgno, &at)| {
        let offset = u64::from(pgno.saturating_sub(1)) * size;
        file.read_exact_at(&mut buf, offset).is_ok() && wal.get(at..at + buf.len()) == Some(&buf)
    })
}

/// Whether another process has the log's index open: any `SQLite`
/// connection in WAL mode holds a shared lock on the `-shm`'s "DMS" byte
/// (offset 128, `UNIX_SHM_DMS` in `os_unix.c`) while it is connected.
/// This process's own locks are not reported (`F_GETLK`), and none of its
/// connections to the old file is open when this is asked (`epoch`).
fn held_elsewhere(shm: &Path) -> bool {
    use std::os::fd::AsRawFd as _;
    let Ok(file) = std::fs::OpenOptions::new().read(true).write(true).open(shm) else {
        return false;
    };
    // SAFETY: a zeroed `flock` is a valid value; F_GETLK only fills it.
    let mut lock: nix::libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = nix::libc::F_WRLCK as _;
    lock.l_whence = nix::libc::SEEK_SET as _;
    lock.l_start = 128;
    lock.l_len = 1;
    // SAFETY: a valid open descriptor and a valid `flock` pointer.
    let rc = unsafe { nix::libc::fcntl(file.as_raw_fd(), nix::libc::F_GETLK, &raw mut lock) };
    rc == 0 && i32::from(lock.l_type) != nix::libc::F_UNLCK
}

/// Keep the log at `wal` as `<wal>.stale-<now>` (a name not taken: `-1`,
/// `-2`, ... appended), and remove it from the path.
fn set_aside(wal: &Path, now: i64) -> std::io::Result<PathBuf> {
    let mut name = wal.as_os_str().to_owned();
    name.push(format!(".stale-{now}"));
    let base = PathBuf::from(name);
    let mut target = base.clone();
    for n in 1.. {
        match std::fs::hard_link(wal, &target) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                let mut next = base.as_os_str().to_owned();
                next.push(format!("-{n}"));
                target = PathBuf::from(next);
            }
            Err(e) => return Err(e),
        }
    }
    std::fs::remove_file(wal)?;
    Ok(target)
}

/// Before `path` (a store rewritten in place) is opened again: the log
/// recorded when it was seen rewritten ([`super::epoch::rewritten_wal`]),
/// if it is still beside it, unchanged and with frames the file does not
/// have, is set aside, or refused when another process has it open. Gone,
/// restarted, or already in the file, it is forgotten.
///
/// # Errors
/// [`StoreError::ForeignWal`] (another process has it open),
/// [`StoreError::Unreadable`] (it could not be set aside).
pub fn check(path: &Path) -> Result<(), StoreError> {
    let Some(old) = super::epoch::rewritten_wal(path) else {
        return Ok(());
    };
    let wal_path = super::wal::sibling(path, "-wal");
    if mark(&wal_path) != Some(old) {
        super::epoch::forget_rewritten_wal(path);
        return Ok(());
    }
    let bytes = std::fs::read(&wal_path).unwrap_or_default();
    if in_file(path, &bytes) {
        super::epoch::forget_rewritten_wal(path);
        return Ok(());
    }
    if held_elsewhere(&super::wal::sibling(path, "-shm")) {
        return Err(StoreError::ForeignWal(path.to_owned(), wal_path));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let kept = set_aside(&wal_path, now)
        .map_err(|e| StoreError::Unreadable(wal_path.clone(), e.to_string()))?;
    tracing::warn!(
        "the write-ahead log beside {} belonged to the file before it was rewritten in place: set aside as {} (not replayed onto the new file)",
        path.display(),
        kept.display()
    );
    super::epoch::forget_rewritten_wal(path);
    super::epoch::note_set_aside(path, kept);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `frames` (page number, commit size, fill byte) with
    /// 8-byte pages, checksummed big-endian.
    fn log(frames: &[(u32, u32, u8)]) -> Vec<u8> {
        let mut wal = Vec::new();
        for word in [0x377f_0683_u32, 3_007_000, 8, 0, 11, 22] {
            wal.extend(word.to_be_bytes());
        }
        let mut sums = checksum(&wal, true, (0, 0));
        wal.extend(sums.0.to_be_bytes());
        wal.extend(sums.1.to_be_bytes());
        for &(pgno, commit, fill) in frames {
            let mut head = Vec::new();
            for word in [pgno, commit, 11, 22] {
                head.extend(word.to_be_bytes());
            }
            sums = checksum(&head[..8], true, sums);
            sums = checksum(&[fill; 8], true, sums);
            head.extend(sums.0.to_be_bytes());
            head.extend(sums.1.to_be_bytes());
            wal.extend(head);
            wal.extend([fill; 8]);
        }
        wal
    }

    #[test]
    fn committed_pages_are_the_newest_images_up_to_the_last_commit() {
        let wal = log(&[(1, 0, 1), (2, 2, 2), (1, 2, 3), (3, 0, 4)]);
        let (size, pages) = committed_pages(&wal).unwrap();
        assert_eq!(size, 8);
        // Page 1's second image (frame 3), page 2's; page 3 uncommitted.
        assert_eq!(
            pages.into_iter().collect::<Vec<_>>(),
            [(1, 32 + 2 * 32 + 24), (2, 32 + 32 + 24)]
        );
    }

    #[test]
    fn a_frame_with_a_bad_checksum_or_other_salts_ends_the_log() {
        let mut wal = log(&[(1, 1, 1), (2, 2, 2)]);
        let last = wal.len() - 1;
        wal[last] ^= 0xff;
        assert_eq!(committed_pages(&wal).unwrap().1.len(), 1);
        assert!(committed_pages(b"not a wal header at all, 32 byte").is_none());
    }

    #[test]
    fn a_log_already_in_the_file_belongs_to_it_and_one_that_differs_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        let wal = log(&[(1, 0, 1), (2, 2, 2)]);
        std::fs::write(&db, [[1_u8; 8], [2; 8]].concat()).unwrap();
        assert!(in_file(&db, &wal));
        std::fs::write(&db, [[1_u8; 8], [9; 8]].concat()).unwrap();
        assert!(!in_file(&db, &wal));
        std::fs::write(&db, [1_u8; 8]).unwrap();
        assert!(!in_file(&db, &wal), "a truncated file lacks page 2");
    }

    #[test]
    fn a_file_shorter_than_its_header_says_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (zeroblob(20000));")
            .unwrap();
        drop(conn);
        assert!(!truncated(&db));
        let len = std::fs::metadata(&db).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        file.set_len(len - 4096).unwrap();
        assert!(truncated(&db));
        file.set_len(0).unwrap();
        assert!(truncated(&db));
        assert!(
            !truncated(&dir.path().join("none.db")),
            "absent is not truncated"
        );
    }

    #[test]
    fn a_log_set_aside_keeps_its_bytes_under_a_name_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join("state.db-wal");
        std::fs::write(&wal, b"frames").unwrap();
        std::fs::write(dir.path().join("state.db-wal.stale-7"), b"other").unwrap();
        let kept = set_aside(&wal, 7).unwrap();
        assert_eq!(kept, dir.path().join("state.db-wal.stale-7-1"));
        assert_eq!(std::fs::read(&kept).unwrap(), b"frames");
        assert!(!wal.exists());
        assert_eq!(
            std::fs::read(dir.path().join("state.db-wal.stale-7")).unwrap(),
            b"other"
        );
    }
}
