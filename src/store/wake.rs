//! The watcher's wake-up: the kernel says when the store file or its
//! `-wal` changed (inotify on the store's directory through the `notify`
//! crate, filtered to those two names), so a commit by another process is
//! read within milliseconds instead of at the next 100 ms poll.
//! `PRAGMA data_version` still decides whether anything was committed (a
//! checkpoint touches the file too). Where no watch can be set (a network
//! file system, a directory that cannot be watched) the watcher polls.

use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify::Watcher as _;

use crate::stop::StopToken;

/// `STACKLESS_TUI_WATCH=poll` turns the watch off (the poll is used, as
/// where no watch can be set): for comparing the two, and for file systems
/// whose notifications cannot be trusted.
pub(crate) const ENV: &str = "STACKLESS_TUI_WATCH";

/// A change noticed, and the sleeper to wake for it.
#[derive(Default)]
struct Slot {
    /// A change came since the last [`Wake::wait`] returned.
    pending: bool,
    /// Woken by this process ([`Nudge`]), not by a change.
    nudged: bool,
    /// The token the watcher sleeps on now (a child of its stop token).
    sleeper: Option<StopToken>,
}

/// Woken by the kernel when the store changes. Dropping it ends the watch.
pub(crate) struct Wake {
    slot: Arc<Mutex<Slot>>,
    _watcher: notify::RecommendedWatcher,
}

impl Wake {
    /// Watch the directory of the store at `path` for changes to the store
    /// file and its `-wal`. `None` when no watch can be set (or
    /// [`ENV`] is `poll`).
    #[must_use]
    pub(crate) fn watch(path: &Path) -> Option<Self> {
        if std::env::var_os(ENV).is_some_and(|v| v == "poll") {
            return None;
        }
        let name = path.file_name()?.to_owned();
        let mut wal = name.clone();
        wal.push("-wal");
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => Path::new(".").to_path_buf(),
        };
        let slot = Arc::new(Mutex::new(Slot::default()));
        let handler_slot = Arc::clone(&slot);
        let names: [OsString; 2] = [name, wal];
        let handler = move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else {
                // An overflowed queue or an error: wake, data_version decides.
                wake(&handler_slot);
                return;
            };
            if matches!(event.kind, notify::EventKind::Access(_)) {
                return;
            }
            let ours = event.paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|n| names.iter().any(|ours| ours == n))
            });
            if ours || event.need_rescan() {
                wake(&handler_slot);
            }
        };
        let mut watcher = notify::recommended_watcher(handler).ok()?;
        watcher
            .watch(&dir, notify::RecursiveMode::NonRecursive)
            .ok()?;
        Some(Self {
            slot,
            _watcher: watcher,
        })
    }

    /// Sleep up to `timeout`, until a change is noticed (at once if one came
    /// since the last call) or `stop` is cancelled.
    pub(crate) fn wait(&self, stop: &StopToken, timeout: Duration) -> Woke {
        let sleeper = stop.child();
        {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            if std::mem::take(&mut slot.pending) {
                slot.nudged = false;
                return Woke::Changed;
            }
            if std::mem::take(&mut slot.nudged) {
                return Woke::Nudged;
            }
            slot.sleeper = Some(sleeper.clone());
        }
        let _ = sleeper.sleep(timeout);
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        slot.sleeper = None;
        let changed = std::mem::take(&mut slot.pending);
        let nudged = std::mem::take(&mut slot.nudged);
        drop(slot);
        if stop.is_cancelled() {
            Woke::Stopped
        } else if changed {
            Woke::Changed
        } else if nudged {
            Woke::Nudged
        } else {
            Woke::Timeout
        }
    }

    /// A handle another thread of this process wakes [`Wake::wait`] with
    /// ([`Woke::Nudged`]: something of its own is ready; the store has not
    /// changed).
    #[must_use]
    pub(crate) fn nudger(&self) -> Nudge {
        Nudge(Arc::clone(&self.slot))
    }
}

/// Wakes a [`Wake::wait`] from another thread (see [`Wake::nudger`]).
#[derive(Clone)]
pub(crate) struct Nudge(Arc<Mutex<Slot>>);

impl Nudge {
    /// Wake the waiter now, or its next wait at once.
    pub(crate) fn nudge(&self) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.nudged = true;
        if let Some(sleeper) = &slot.sleeper {
            sleeper.cancel();
        }
    }
}

/// Why [`Wake::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// The store or its `-wal` changed.
    Changed,
    /// The time ran out.
    Timeout,
    /// Another thread of this process has something ready ([`Nudge`]).
    Nudged,
    /// The stop token was cancelled.
    Stopped,
}

fn wake(slot: &Mutex<Slot>) {
    let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
    slot.pending = true;
    if let Some(sleeper) = &slot.sleeper {
        sleeper.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write to the `-wal` wakes the sleeper; so does the stop token.
    #[test]
    fn a_wal_write_wakes_and_stop_wakes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        std::fs::write(&path, b"").unwrap();
        let wake = Wake::watch(&path).expect("inotify works here");
        let stop = StopToken::new();
        std::fs::write(dir.path().join("state.db-wal"), b"x").unwrap();
        // Returns because it was woken: an hour's timeout otherwise.
        assert_eq!(wake.wait(&stop, Duration::from_secs(3600)), Woke::Changed);
        // One write may come as several events (create, modify, close):
        // the ones after the first wake at once, then the stop ends a wait.
        let canceller = stop.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            canceller.cancel();
        });
        let mut woke = Vec::new();
        loop {
            let why = wake.wait(&stop, Duration::from_secs(3600));
            woke.push(why);
            if why != Woke::Changed || woke.len() > 8 {
                break;
            }
        }
        assert_eq!(woke.last(), Some(&Woke::Stopped), "{woke:?}");
        thread.join().unwrap();
    }
}
