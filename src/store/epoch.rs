//! The console's connections on one store file, counted per *epoch*.
//!
//! `SQLite` shares one wal-index (`-shm` mapping, the inode's lock state)
//! among every connection of a process on the same file. When the file is
//! rewritten outside `SQLite` (truncated, a copy restored in place) or
//! replaced, a connection opened again while another connection of this
//! process is still open attaches to that stale index and fails (`disk I/O
//! error`, `malformed`) for as long as any old connection stays open: the
//! watcher, the reaper, the detail reader and the jobs reopening in turn
//! kept one open at every moment, and the store stayed unreadable until the
//! console quit.
//!
//! So: the connection that sees a broken or changed file bumps the path's
//! epoch ([`Registration::bump`]); every holder drops its connection when
//! it sees its epoch is old ([`Registration::stale`], checked at each use
//! and each poll); and [`register`] (a new open) waits until no connection
//! of an older epoch is open. Process-wide, keyed by the canonical path.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

#[derive(Debug, Default)]
struct Entry {
    /// The current epoch: opens register under it.
    epoch: u64,
    /// Open connections per epoch.
    open: HashMap<u64, usize>,
    /// A store was opened at the path (not only tried).
    opened: bool,
    /// `(device, inode)` of the `-wal` that belonged to a file replaced
    /// under the console ([`Registration::bump_replaced`]): while the same
    /// log, with frames, is at the path, nothing is opened (it would be
    /// replayed onto the new file).
    old_wal: Option<(u64, u64)>,
    /// The write-ahead log beside the file when it was seen rewritten in
    /// place ([`Registration::bump`]): checked before the file is opened
    /// again (`store::walfile::check`).
    rewritten_wal: Option<super::walfile::Mark>,
    /// Where that log was set aside, until the reaper says so.
    set_aside: Option<PathBuf>,
    /// `(device, inode)` of the file the current epoch's connections
    /// opened ([`Registration::confirm`]): a path that names another file
    /// now was replaced under them, seen or not yet ([`replaced_under`]).
    identity: Option<(u64, u64)>,
}

fn registry() -> std::sync::MutexGuard<'static, HashMap<PathBuf, Entry>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, Entry>>> = OnceLock::new();
    REGISTRY
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// One open connection, counted until dropped (drop it after the
/// connection itself: `Store` declares it after its `conn`).
#[derive(Debug)]
pub struct Registration {
    path: PathBuf,
    epoch: u64,
}

impl Registration {
    /// Whether another connection saw the file broken or changed since this
    /// one was opened: drop it (and open again once the others have).
    #[must_use]
    pub fn stale(&self) -> bool {
        registry()
            .get(&self.path)
            .is_some_and(|entry| entry.epoch != self.epoch)
    }

    /// Mark the path as a store this process has opened ([`known`]), on
    /// the file `identity` (`(device, inode)`): the first open of an epoch
    /// records it.
    pub fn confirm(&self, identity: Option<(u64, u64)>) {
        if let Some(entry) = registry().get_mut(&self.path) {
            entry.opened = true;
            if entry.epoch == self.epoch && entry.identity.is_none() {
                entry.identity = identity;
            }
        }
    }

    /// Say the file is broken or changed: every connection of this epoch
    /// is to be dropped before any is opened again. A second bump by
    /// another holder of the same epoch is a no-op.
    ///
    /// When the file is found truncated (`store::walfile::truncated`), the
    /// write-ahead log beside it now is recorded: it holds page images of
    /// the file as it was (`store::walfile`).
    pub fn bump(&self) {
        let wal = super::walfile::truncated(&self.path)
            .then(|| super::walfile::mark(&self.path))
            .flatten();
        if let Some(entry) = registry().get_mut(&self.path)
            && entry.epoch == self.epoch
        {
            entry.epoch += 1;
            entry.identity = None;
            if wal.is_some() {
                entry.rewritten_wal = wal;
            }
        }
    }
}

impl Registration {
    /// [`Registration::bump`] for a file replaced at its path (another
    /// inode): `wal` is the `(device, inode)` of the write-ahead log this
    /// connection last saw beside the old file; it belongs to the old file.
    pub fn bump_replaced(&self, wal: Option<(u64, u64)>) {
        if let Some(entry) = registry().get_mut(&self.path)
            && entry.epoch == self.epoch
        {
            entry.epoch += 1;
            entry.identity = None;
            entry.old_wal = wal;
        }
    }
}

/// Whether connections of this process are open on another file than the
/// one `path` names now (`now`: its `(device, inode)`): it was replaced
/// under them, and the `-wal` beside it is still the old file's (their
/// `SQLite` keeps it), whether or not a holder has seen it yet.
#[must_use]
pub fn replaced_under(path: &Path, now: Option<(u64, u64)>) -> bool {
    registry().get(path).is_some_and(|entry| {
        entry.identity.is_some_and(|was| Some(was) != now)
            && entry.open.get(&entry.epoch).is_some_and(|n| *n > 0)
    })
}

/// The `(device, inode)` of the write-ahead log that belonged to a file
/// replaced at `path`, if one was seen.
#[must_use]
pub fn old_wal(path: &Path) -> Option<(u64, u64)> {
    registry().get(path).and_then(|entry| entry.old_wal)
}

/// Forget the old write-ahead log of `path` (it is gone, or empty).
pub fn forget_old_wal(path: &Path) {
    if let Some(entry) = registry().get_mut(path) {
        entry.old_wal = None;
    }
}

/// The write-ahead log recorded when `path` was seen rewritten in place.
#[must_use]
pub fn rewritten_wal(path: &Path) -> Option<super::walfile::Mark> {
    registry().get(path).and_then(|entry| entry.rewritten_wal)
}

/// Before `path` is opened again: the log recorded when it was seen
/// rewritten in place, if any, checked ([`super::walfile::check`]: set
/// aside when it still holds frames the new file does not have), then
/// forgotten, and where it was set aside noted ([`take_set_aside`]). Kept
/// when the check fails, to be checked again at the next open.
///
/// # Errors
/// As [`super::walfile::check`].
pub fn check_rewritten_wal(path: &Path) -> Result<(), super::StoreError> {
    let Some(old) = rewritten_wal(path) else {
        return Ok(());
    };
    let checked = super::walfile::check(path, old)?;
    forget_rewritten_wal(path);
    if let super::walfile::Checked::SetAside(kept) = checked {
        note_set_aside(path, kept);
    }
    Ok(())
}

/// Forget it (gone, restarted, already in the file, or set aside).
pub fn forget_rewritten_wal(path: &Path) {
    if let Some(entry) = registry().get_mut(path) {
        entry.rewritten_wal = None;
    }
}

/// Say that the old log of `path` was set aside as `kept`.
pub fn note_set_aside(path: &Path, kept: PathBuf) {
    if let Some(entry) = registry().get_mut(path) {
        entry.set_aside = Some(kept);
    }
}

/// Where the old log of `path` was set aside since this was last asked.
#[must_use]
pub fn take_set_aside(path: &Path) -> Option<PathBuf> {
    registry()
        .get_mut(path)
        .and_then(|entry| entry.set_aside.take())
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut registry = registry();
        if let Some(entry) = registry.get_mut(&self.path)
            && let Some(count) = entry.open.get_mut(&self.epoch)
        {
            *count = count.saturating_sub(1);
            if *count == 0 {
                entry.open.remove(&self.epoch);
                if entry.epoch == self.epoch {
                    // The next open of this epoch learns the file anew.
                    entry.identity = None;
                }
            }
            if entry.open.is_empty() {
                // The last connection of this process to the path is
                // closed, and none opens before this lock is let go (an
                // open registers first): the descriptors kept on its files
                // can be closed without dropping any lock
                // (`store::files`).
                super::files::release(&self.path);
            }
        }
    }
}

/// Close the descriptors kept on `path`'s files (`store::files`) when no
/// connection of this process to it is open: after an open that failed
/// before it registered, so a console retrying a store it cannot open does
/// not keep the files of every inode it met.
pub fn release_if_idle(path: &Path) {
    let registry = registry();
    if registry.get(path).is_none_or(|entry| entry.open.is_empty()) {
        super::files::release(path);
    }
}

/// Whether this process opened `path` before (then a file found empty is a
/// truncation, not a new store).
#[must_use]
pub fn known(path: &Path) -> bool {
    registry().get(path).is_some_and(|entry| entry.opened)
}

/// Register a new connection on `path` under its current epoch.
///
/// # Errors
/// `Err(n)` while `n` connections of an older epoch are still open: open
/// nothing yet (their holders drop them at their next poll).
pub fn register(path: &Path) -> Result<Registration, usize> {
    let mut registry = registry();
    let entry = registry.entry(path.to_owned()).or_default();
    let epoch = entry.epoch;
    let older: usize = entry
        .open
        .iter()
        .filter(|(e, _)| **e != epoch)
        .map(|(_, n)| n)
        .sum();
    if older > 0 {
        return Err(older);
    }
    *entry.open.entry(epoch).or_default() += 1;
    Ok(Registration {
        path: path.to_owned(),
        epoch,
    })
}

/// Wait up to `settle` for the connections of older epochs to close, then
/// register.
///
/// # Errors
/// As [`register`], once `settle` has passed.
pub fn register_within(path: &Path, settle: std::time::Duration) -> Result<Registration, usize> {
    let started = std::time::Instant::now();
    loop {
        match register(path) {
            Err(_) if started.elapsed() < settle => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bump_holds_new_opens_until_every_old_connection_is_dropped() {
        let path = Path::new("/epoch-test/state.db");
        let a = register(path).unwrap();
        let b = register(path).unwrap();
        assert!(!a.stale());
        a.bump();
        b.bump();
        assert!(a.stale() && b.stale());
        assert_eq!(register(path).unwrap_err(), 2);
        drop(a);
        assert_eq!(register(path).unwrap_err(), 1);
        drop(b);
        let c = register(path).unwrap();
        assert!(!c.stale());
        assert!(!known(path), "tried, not opened");
        c.confirm(Some((1, 2)));
        assert!(known(path));
        assert!(!replaced_under(path, Some((1, 2))));
        assert!(replaced_under(path, Some((1, 3))));
        assert!(replaced_under(path, None));
        c.bump();
        assert!(
            !replaced_under(path, Some((1, 3))),
            "a new epoch opens anew"
        );
    }
}
