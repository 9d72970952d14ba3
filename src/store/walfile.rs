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
use std::path::Path;

use super::StoreError;
use super::files::{self, StoreFile};

/// The identity of a write-ahead log: `(device, inode)` and its header's
/// two salts (a log restarted by a writer gets new salts).
pub type Mark = (u64, u64, u32, u32);

/// [`Mark`] of the log beside the store at `store`, `None` when there is
/// none or its header is not a WAL header. Read through `store::files`.
#[must_use]
pub fn mark(store: &Path) -> Option<Mark> {
    use std::os::unix::fs::MetadataExt as _;
    files::with(store, |files| {
        let file = files.get(StoreFile::Wal)?;
        let meta = file.metadata().ok()?;
        let mut header = [0_u8; 32];
        files::read_at(file, &mut header, 0).ok()?;
        let (_, salts) = header_fields(&header)?;
        Some((meta.dev(), meta.ino(), salts.0, salts.1))
    })
}

/// Whether the database file at `store` is cut short: empty, shorter than
/// its 100-byte header, not a database header any more, or shorter than
/// the page count its header gives (bytes 28..32 times the page size at
/// 16..18, trusted when the version-valid-for number at 92 equals the
/// change counter at 24, fileformat2.html §1.3.7). A checkpoint never
/// leaves a file so (it writes every page up to the committed size), so
/// this is evidence of a rewrite outside `SQLite`, where a changed size or
/// time alone is not (another process's checkpoint changes them too).
/// Read through `store::files` (never a descriptor opened and closed).
#[must_use]
pub fn truncated(store: &Path) -> bool {
    let Some((header, len)) = files::head::<100>(store, StoreFile::Db) else {
        return false;
    };
    let Some(header) = header.filter(|_| len >= 100) else {
        return true;
    };
    truncated_header(&header, len)
}

/// [`truncated`]'s rule on a file's first 100 bytes and its length. Pure.
#[must_use]
pub fn truncated_header(header: &[u8; 100], len: u64) -> bool {
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

/// Bytes read at an offset: a kept descriptor (`store::files`) or, in
/// tests, a slice. `None` past the end or on an error.
pub trait ReadAt {
    /// Fill `buf` from `offset`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Option<()>;
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Option<()> {
        let at = usize::try_from(offset).ok()?;
        buf.copy_from_slice(self.get(at..at.checked_add(buf.len())?)?);
        Some(())
    }
}

impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Option<()> {
        files::read_at(self, buf, offset).ok()
    }
}

/// The pages a log's committed frames hold: page size, and for each page
/// number the byte offset in the log of its newest image up to the last
/// valid commit frame. A frame is valid while its salts are the header's
/// and its cumulative checksum matches (`SQLite`'s recovery stops at the
/// first that is not, fileformat2.html §4.3). `None` for no WAL header.
/// Reads one frame at a time (at most a page and its 24-byte header in
/// memory, whatever the log's size: a 309 MB log read whole peaked at
/// 614 MB).
#[must_use]
pub fn committed_pages<R: ReadAt + ?Sized>(wal: &R) -> Option<(u32, BTreeMap<u32, u64>)> {
    let mut header = [0_u8; 32];
    wal.read_at(&mut header, 0)?;
    let (page_size, salts) = header_fields(&header)?;
    let big_endian = header[3] & 1 == 1;
    let be = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let mut sums = checksum(&header[..24], big_endian, (0, 0));
    if sums != (be(&header, 24), be(&header, 28)) {
        return None;
    }
    let page = usize::try_from(page_size).ok()?;
    if !(512..=65_536).contains(&page) || !page.is_power_of_two() {
        return None;
    }
    let (mut pending, mut committed) = (BTreeMap::new(), BTreeMap::new());
    let mut frame = vec![0_u8; 24 + page];
    let mut at: u64 = 32;
    while wal.read_at(&mut frame, at).is_some() {
        if (be(&frame, 8), be(&frame, 12)) != salts {
            break;
        }
        sums = checksum(&frame[..8], big_endian, sums);
        sums = checksum(&frame[24..], big_endian, sums);
        if sums != (be(&frame, 16), be(&frame, 20)) {
            break;
        }
        pending.insert(be(&frame, 0), at + 24);
        if be(&frame, 4) != 0 {
            committed.extend(std::mem::take(&mut pending));
        }
        at += 24 + page as u64;
    }
    Some((page_size, committed))
}

/// Whether every committed page of the log `wal` is already the same in
/// the database file `db` (a log already checkpointed into it). An
/// unreadable file is not. One page of each in memory at a time.
fn in_file<D: ReadAt + ?Sized, W: ReadAt + ?Sized>(db: &D, wal: &W) -> bool {
    let Some((page_size, pages)) = committed_pages(wal) else {
        return true;
    };
    let size = u64::from(page_size);
    let page = usize::try_from(page_size).unwrap_or(0);
    let (mut in_db, mut in_wal) = (vec![0_u8; page], vec![0_u8; page]);
    pages.iter().all(|(&pgno, &at)| {
        let offset = u64::from(pgno.saturating_sub(1)) * size;
        db.read_at(&mut in_db, offset).is_some()
            && wal.read_at(&mut in_wal, at).is_some()
            && in_db == in_wal
    })
}

/// What became of the log `old` beside a store rewritten in place
/// ([`check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// Gone, restarted, or already in the file: nothing to keep of it.
    Forget,
    /// Set aside under this name (not replayed onto the new file).
    SetAside(std::path::PathBuf),
}

/// Before `path` (a store rewritten in place) is opened again: the log
/// `old`, recorded when it was seen rewritten (the caller keeps it:
/// `super::epoch`), if it is still beside it, unchanged and with frames
/// the file does not have, is set aside, or refused when another process
/// has it open. Gone, restarted, or already in the file, it is to be
/// forgotten. Every file is read through `store::files`.
///
/// # Errors
/// [`StoreError::ForeignWal`] (another process has it open),
/// [`StoreError::Unreadable`] (it could not be set aside).
pub fn check(path: &Path, old: Mark) -> Result<Checked, StoreError> {
    let wal_path = StoreFile::Wal.path(path);
    if mark(path) != Some(old) {
        return Ok(Checked::Forget);
    }
    let already = files::with(path, |files| {
        let (Some(db), Some(wal)) = (files.open(StoreFile::Db), files.open(StoreFile::Wal)) else {
            // No file to compare with: nothing to replay it onto.
            return true;
        };
        in_file(files.file(db), files.file(wal))
    });
    if already {
        return Ok(Checked::Forget);
    }
    if files::shm_held_elsewhere(path) {
        return Err(StoreError::ForeignWal(path.to_owned(), wal_path));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let kept = files::set_aside_wal(path, now)
        .map_err(|e| StoreError::Unreadable(wal_path.clone(), e.to_string()))?;
    tracing::warn!(
        "the write-ahead log beside {} belonged to the file before it was rewritten in place: set aside as {} (not replayed onto the new file)",
        path.display(),
        kept.display()
    );
    Ok(Checked::SetAside(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest page `SQLite` accepts in a log header.
    const PAGE: usize = 512;

    /// A log of `frames` (page number, commit size, fill byte) with
    /// 512-byte pages, checksummed big-endian.
    fn log(frames: &[(u32, u32, u8)]) -> Vec<u8> {
        let mut wal = Vec::new();
        for word in [0x377f_0683_u32, 3_007_000, PAGE as u32, 0, 11, 22] {
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
            sums = checksum(&[fill; PAGE], true, sums);
            head.extend(sums.0.to_be_bytes());
            head.extend(sums.1.to_be_bytes());
            wal.extend(head);
            wal.extend([fill; PAGE]);
        }
        wal
    }

    const FRAME: u64 = 24 + PAGE as u64;

    #[test]
    fn committed_pages_are_the_newest_images_up_to_the_last_commit() {
        let wal = log(&[(1, 0, 1), (2, 2, 2), (1, 2, 3), (3, 0, 4)]);
        let (size, pages) = committed_pages(wal.as_slice()).unwrap();
        assert_eq!(size, 512);
        // Page 1's second image (frame 3), page 2's; page 3 uncommitted.
        assert_eq!(
            pages.into_iter().collect::<Vec<_>>(),
            [(1, 32 + 2 * FRAME + 24), (2, 32 + FRAME + 24)]
        );
    }

    #[test]
    fn a_frame_with_a_bad_checksum_or_other_salts_ends_the_log() {
        let mut wal = log(&[(1, 1, 1), (2, 2, 2)]);
        let last = wal.len() - 1;
        wal[last] ^= 0xff;
        assert_eq!(committed_pages(wal.as_slice()).unwrap().1.len(), 1);
        assert!(committed_pages(&b"not a wal header at all, 32 byte"[..]).is_none());
    }

    #[test]
    fn a_header_with_a_page_size_sqlite_refuses_is_no_log() {
        let mut wal = log(&[(1, 1, 1)]);
        wal[8..12].copy_from_slice(&8_u32.to_be_bytes());
        let sums = checksum(&wal[..24], true, (0, 0));
        wal[24..28].copy_from_slice(&sums.0.to_be_bytes());
        wal[28..32].copy_from_slice(&sums.1.to_be_bytes());
        assert!(committed_pages(wal.as_slice()).is_none());
    }

    #[test]
    fn a_log_already_in_the_file_belongs_to_it_and_one_that_differs_does_not() {
        let wal = log(&[(1, 0, 1), (2, 2, 2)]);
        let db = [[1_u8; PAGE], [2; PAGE]].concat();
        assert!(in_file(db.as_slice(), wal.as_slice()));
        let db = [[1_u8; PAGE], [9; PAGE]].concat();
        assert!(!in_file(db.as_slice(), wal.as_slice()));
        assert!(
            !in_file(&[1_u8; PAGE][..], wal.as_slice()),
            "a truncated file lacks page 2"
        );
    }

    /// A reader that refuses any read larger than a frame: the log is
    /// walked in pieces, never read whole (a 309 MB log read at once
    /// peaked at 614 MB).
    struct Pieces<'a>(&'a [u8]);

    impl ReadAt for Pieces<'_> {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> Option<()> {
            assert!(buf.len() <= files::MAX_PIECE, "{} bytes at once", buf.len());
            self.0.read_at(buf, offset)
        }
    }

    #[test]
    fn a_long_log_is_read_a_frame_at_a_time() {
        let frames: Vec<_> = (1..=400).map(|p| (p, p, (p % 250) as u8)).collect();
        let wal = log(&frames);
        assert!(wal.len() > 200 * 1024);
        let db: Vec<u8> = (1..=400_u32)
            .flat_map(|p| [(p % 250) as u8; PAGE])
            .collect();
        assert_eq!(committed_pages(&Pieces(&wal)).unwrap().1.len(), 400);
        assert!(in_file(&Pieces(&db), &Pieces(&wal)));
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
}
