//! The logs follower's notifications: a watch (not recursive) on the
//! instance's logs directory, on its parent and, while that is missing, on
//! the state dir, each watched again when the directory at its path was
//! made again (another inode, whose events the old watch never gets).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::key_of;
use crate::model::logtext::FileKey;

/// The identity of the directory at `path` (not through a symlink).
pub(super) fn dir_key(path: &std::path::Path) -> Option<FileKey> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|meta| key_of(&meta))
}

/// Notifications (not recursive), each one a wake, on the instance's logs
/// directory and on its parent (`<state_dir>/logs`, which sees the
/// directory removed and made again), and on the state dir while that
/// parent is missing. A directory made again is another inode, whose
/// events the old watch never gets: [`Watches::rearm`], on every wake,
/// watches each path again when what is there changed.
pub(super) struct Watches {
    watcher: notify::RecommendedWatcher,
    /// The logs dir, its parent, that one's parent; each with the identity
    /// watched (`None`: not watched).
    paths: [(PathBuf, Option<FileKey>); 3],
}

impl Watches {
    /// Watch `dir` (and the rest): `None` when notifications cannot be
    /// set up on `dir` (then the follower polls).
    /// `renamed` is set when a notification may mean a name in `dir`
    /// changed: an entry made, removed or renamed there, or events lost.
    pub(super) fn new(
        dir: &std::path::Path,
        wake: mpsc::Sender<()>,
        renamed: Arc<AtomicBool>,
    ) -> Option<Self> {
        use notify::Watcher as _;
        let watched = dir.to_path_buf();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if names_may_change(event.as_ref().ok(), &watched) {
                    renamed.store(true, Ordering::Release);
                }
                let _ = wake.send(());
            })
            .ok()?;
        watcher
            .watch(dir, notify::RecursiveMode::NonRecursive)
            .ok()?;
        let parent = dir.parent().map(std::path::Path::to_path_buf)?;
        let top = parent.parent().map(std::path::Path::to_path_buf)?;
        let mut watches = Self {
            watcher,
            paths: [
                (dir.to_path_buf(), dir_key(dir)),
                (parent, None),
                (top, None),
            ],
        };
        watches.rearm();
        Some(watches)
    }

    /// Watch again each directory made again since it was watched (the
    /// state dir only while the logs dir's parent is missing). Whether
    /// anything changed. A pass that changed something is run again (at
    /// most [`REARM_PASSES`] times): a directory made after a watch on its
    /// parent was added wakes the follower, one made before is seen by the
    /// next pass, so none falls between the two.
    pub(super) fn rearm(&mut self) -> bool {
        let mut changed = false;
        for _ in 0..REARM_PASSES {
            if !self.rearm_pass() {
                break;
            }
            changed = true;
        }
        changed
    }

    /// One pass of [`Watches::rearm`], parents first.
    fn rearm_pass(&mut self) -> bool {
        use notify::Watcher as _;
        let mut changed = false;
        for index in [1, 2, 0] {
            let (path, armed) = &self.paths[index];
            let now = dir_key(path);
            let wanted = if index == 2 {
                self.paths[1].1.is_none().then_some(now).flatten()
            } else {
                now
            };
            if wanted == *armed {
                continue;
            }
            let path = path.clone();
            if armed.is_some() {
                let _ = self.watcher.unwatch(&path);
            }
            let watched = wanted.is_some()
                && self
                    .watcher
                    .watch(&path, notify::RecursiveMode::NonRecursive)
                    .is_ok();
            self.paths[index].1 = wanted.filter(|_| watched);
            changed = true;
        }
        changed
    }
}

/// Whether a notification (`None`: an error) may mean a name in `dir`
/// changed: an entry of `dir` made, removed or renamed (or an event of a
/// kind not told), or events lost (the queue overflowed: rescan).
fn names_may_change(event: Option<&notify::Event>, dir: &std::path::Path) -> bool {
    use notify::EventKind;
    use notify::event::ModifyKind;
    let Some(event) = event else {
        return true;
    };
    if event.need_rescan() {
        return true;
    }
    let naming = matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Name(_) | ModifyKind::Any)
            | EventKind::Any
            | EventKind::Other
    );
    naming && (event.paths.is_empty() || event.paths.iter().any(|path| path.parent() == Some(dir)))
}

/// How many passes [`Watches::rearm`] makes at most on one wake (each
/// level of the three directories can appear during the one before).
const REARM_PASSES: usize = 4;
