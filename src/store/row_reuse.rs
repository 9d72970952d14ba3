//! The instance rows of a store file's last read, offered to its next read
//! (measured: at 100,000 instances the console held two whole copies of the
//! rows, the snapshot on screen and the one being read, 95.5 MB against a
//! 60 MB target; and every re-read allocated and freed some 400,000 strings
//! for rows that had not changed).
//!
//! Each snapshot of a file publishes a weak reference to its rows and, for
//! each instance row, its `rowid` and its position. The next read of the
//! same file (any connection of this process: the watcher's, the reaper's)
//! walks the `instances` table in rowid order beside that list, and where
//! the row at the same rowid has the same name and every column the same as
//! the row read last time (`read::unchanged`), it keeps the earlier row's
//! `Arc` instead of building a new one. The rowid is only a hint for where
//! to look: nothing is kept unless every column compares equal, so a
//! `VACUUM` that renumbers rowids, a file replaced at the same inode, or a
//! hand-made table without rowids costs the saving, never correctness.
//!
//! The reference is weak: once no snapshot holds those rows, they are freed
//! as before and the next read builds every row afresh.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::model::Rows;

/// One instance row of a published read: its `rowid` in `instances` and its
/// position in [`Rows::instances`], ordered by rowid. A read with a rowid
/// past `u32::MAX` (never in a store stackless wrote: rowids count rows)
/// publishes no places.
pub(super) type RowPlace = (u32, u32);

/// The rows of a file's last read, while some snapshot still holds them.
pub(super) struct Previous {
    /// The rows.
    pub rows: Arc<Rows>,
    /// Where each row was, by rowid.
    pub places: Arc<Vec<RowPlace>>,
}

struct Kept {
    rows: Weak<Rows>,
    places: Arc<Vec<RowPlace>>,
}

/// Store files (`(device, inode)`) this process has read, at most
/// [`FILES_KEPT`] (a process watches one store, tests open many), each with
/// its last [`READS_KEPT`] reads, newest last.
static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// The files a read with nothing to share from is under way on (the
/// console's first watcher read and its reaper's first pass start
/// together: each built every row, two whole copies at start-up, 95 MB at
/// 100,000 instances). A second such read of the same file waits for the
/// first to publish, then shares its rows.
static READING: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());
static READ_DONE: std::sync::Condvar = std::sync::Condvar::new();

/// How long a read waits for another read of the same file to publish
/// before it reads on its own.
const WAIT_FOR_READ: std::time::Duration = std::time::Duration::from_secs(5);

/// Marks a read with nothing to share from as under way; dropped when it
/// ends (published or failed), which wakes any read waiting for it.
pub(super) struct Reading((u64, u64));

impl Drop for Reading {
    fn drop(&mut self) {
        let mut reading = READING.lock().unwrap_or_else(PoisonError::into_inner);
        reading.retain(|file| *file != self.0);
        drop(reading);
        READ_DONE.notify_all();
    }
}

/// [`previous`], or, when there is none and another read of `file` is
/// under way, what that read publishes (waiting up to [`WAIT_FOR_READ`]).
/// With nothing to share, the caller's read is marked under way until the
/// returned [`Reading`] is dropped.
pub(super) fn previous_or_wait(file: (u64, u64)) -> (Option<Previous>, Option<Reading>) {
    let deadline = std::time::Instant::now() + WAIT_FOR_READ;
    let mut reading = READING.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if let Some(found) = previous(file) {
            return (Some(found), None);
        }
        if !reading.contains(&file) {
            reading.push(file);
            return (None, Some(Reading(file)));
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return (None, None);
        }
        reading = READ_DONE
            .wait_timeout(reading, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// Each file's kept reads, newest last.
type Registry = HashMap<(u64, u64), Vec<Kept>>;

const FILES_KEPT: usize = 16;

/// Reads kept per file: the console's reaper reads the file too, and its
/// rows are gone at the end of its pass; the watcher's, still on screen,
/// must stay on offer after it (otherwise the watcher's next read shares
/// nothing and two whole copies exist again, once per reaper tick).
const READS_KEPT: usize = 2;

/// The newest read of `file` whose rows a snapshot still holds.
pub(super) fn previous(file: (u64, u64)) -> Option<Previous> {
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry
        .as_ref()?
        .get(&file)?
        .iter()
        .rev()
        .find_map(|kept| {
            Some(Previous {
                rows: kept.rows.upgrade()?,
                places: Arc::clone(&kept.places),
            })
        })
}

/// Publish `rows`, just read from `file`, with each instance row's place.
pub(super) fn publish(file: (u64, u64), rows: &Arc<Rows>, places: Vec<RowPlace>) {
    let kept = Kept {
        rows: Arc::downgrade(rows),
        // Not `into()` an `Arc<[_]>`: that would copy the list.
        places: Arc::new(places),
    };
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = registry.get_or_insert_with(HashMap::new);
    if registry.len() >= FILES_KEPT && !registry.contains_key(&file) {
        registry.clear();
    }
    let reads = registry.entry(file).or_default();
    // Reads whose rows are gone are of no use (and hold their places).
    reads.retain(|read| read.rows.strong_count() > 0);
    reads.push(kept);
    if reads.len() > READS_KEPT {
        reads.remove(0);
    }
}

/// Forget `file`'s last read (this read could not say where its rows were).
pub(super) fn forget(file: (u64, u64)) {
    let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(registry) = registry.as_mut() {
        registry.remove(&file);
    }
}

/// Walks a [`Previous`] read's rows in rowid order beside a scan of the
/// table in rowid order: each look-up is a step forward, not a search.
pub(super) struct Candidates<'a> {
    previous: &'a Previous,
    cursor: usize,
}

impl<'a> Candidates<'a> {
    pub(super) fn new(previous: &'a Previous) -> Self {
        Self {
            previous,
            cursor: 0,
        }
    }

    /// The earlier row at `rowid` and its position in the earlier read, if
    /// there was one. Rowids asked for out of order find nothing (the scan
    /// is in rowid order; anything else only loses the saving).
    pub(super) fn at(&mut self, rowid: i64) -> Option<(u32, &'a Arc<crate::model::Instance>)> {
        let places = &self.previous.places;
        let Ok(rowid) = u32::try_from(rowid) else {
            return None;
        };
        while places.get(self.cursor).is_some_and(|&(r, _)| r < rowid) {
            self.cursor += 1;
        }
        let &(found, position) = places.get(self.cursor)?;
        if found != rowid {
            return None;
        }
        let row = self
            .previous
            .rows
            .instances
            .get(usize::try_from(position).ok()?)?;
        Some((position, row))
    }

    /// How many rows the earlier read had.
    pub(super) fn len(&self) -> usize {
        self.previous.rows.instances.len()
    }
}
