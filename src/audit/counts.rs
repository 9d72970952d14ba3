//! The audit trail counted for metrics ([`counts`]): every line of
//! `audit.jsonl.1` then `audit.jsonl`, never through a symlink.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use crate::model::metrics::AuditCounts;
use crate::stop::StopToken;

/// How often [`watch_counts`] looks whether the audit trail changed.
pub const COUNTS_CHECK: Duration = Duration::from_millis(500);

/// The audit trail's counts as last read by the `audit-counts` thread
/// ([`watch_counts`]): whoever writes metrics (the metrics file, `serve
/// --stdio`'s `metrics`) takes them from here, so no read of the trail
/// (up to [`COUNT_BUDGET`] bytes a file) runs on its own thread.
#[derive(Debug, Clone, Default)]
pub struct CountsCache(Arc<Mutex<Option<Cached>>>);

/// One read of the trail: which (counted from 1) and what it found.
#[derive(Debug, Clone)]
struct Cached {
    read: u64,
    counts: Option<AuditCounts>,
}

impl CountsCache {
    /// The newest read: its number (it grows by one each read, so a
    /// writer sees a change) and its counts ([`counts`]: `None` when a
    /// file could not be read). `None` before the first read ended.
    #[must_use]
    pub fn get(&self) -> Option<(u64, Option<AuditCounts>)> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|cached| (cached.read, cached.counts.clone()))
    }

    /// Keep `counts` as the newest read.
    fn put(&self, counts: Option<AuditCounts>) {
        let mut cached = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let read = cached.as_ref().map_or(1, |c| c.read + 1);
        *cached = Some(Cached { read, counts });
    }
}

/// The trail's size and modification time (`None`: not there), not
/// through a symlink.
fn stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Start the `audit-counts` thread: the trail at `path` counted into
/// `cache` now, then again each time its size or modification time
/// changes (looked at each [`COUNTS_CHECK`]; a rotation shrinks it),
/// until `stop`.
///
/// # Errors
/// The thread could not be started.
pub fn watch_counts(path: PathBuf, cache: CountsCache, stop: StopToken) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("audit-counts".into())
        .spawn(move || {
            loop {
                let seen = stamp(&path);
                crate::fault::hold("audit-counts");
                cache.put(counts(&path));
                loop {
                    if stop.sleep(COUNTS_CHECK) {
                        return;
                    }
                    if stamp(&path) != seen {
                        break;
                    }
                }
            }
        })
        .map(|_| ())
}

/// The most bytes of one file [`counts`] reads: the trail rotates at
/// [`super::DEFAULT_CAP`], so this reads each whole with room to spare.
pub const COUNT_BUDGET: u64 = 4 * super::DEFAULT_CAP;

/// The fields of an audit line counted (unknown fields ignored).
#[derive(serde::Deserialize)]
struct Counted<'a> {
    #[serde(borrow)]
    actor: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    action: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    outcome: std::borrow::Cow<'a, str>,
    #[serde(default)]
    duration_ms: Option<u64>,
}

/// The teardowns recorded in the audit trail at `path` (`audit.jsonl`)
/// and its rotated `audit.jsonl.1`, counted ([`AuditCounts::add`]); a
/// line that does not parse is skipped, a file that is absent counts
/// nothing. `None` when a file is there but cannot be read (another
/// user's, a symlink, a directory): the counts would be short.
#[must_use]
pub fn counts(path: &Path) -> Option<AuditCounts> {
    crate::render_thread::assert_off("count the audit trail");
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    let mut counts = AuditCounts::default();
    for file in [PathBuf::from(rotated), path.to_path_buf()] {
        match count_file(&file, &mut counts) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    Some(counts)
}

/// Count the lines of the ordinary file at `path` (its last
/// [`COUNT_BUDGET`] bytes, from the first whole line; not through a
/// symlink or a hard link: [`super::read_back::read_end`]) into `counts`.
fn count_file(path: &Path, counts: &mut AuditCounts) -> std::io::Result<()> {
    let (bytes, _) = super::read_back::read_end(path, COUNT_BUDGET)?;
    for line in bytes.split(|&b| b == b'\n') {
        if let Ok(counted) = serde_json::from_slice::<Counted<'_>>(line) {
            counts.add(
                &counted.actor,
                &counted.action,
                &counted.outcome,
                counted.duration_ms,
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Lines of both files are counted, the rotated one too; other
    /// actions and unparsable lines are not.
    #[test]
    fn both_files_are_counted_by_actor_and_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(
            dir.path().join("audit.jsonl.1"),
            concat!(
                r#"{"unix":1,"actor":"reaper","instance":"a","action":"teardown","outcome":"started","reason":""}"#,
                "\n",
                r#"{"unix":2,"actor":"reaper","instance":"a","action":"teardown","outcome":"failed","reason":"x","duration_ms":2500}"#,
                "\n",
            ),
        )
        .unwrap();
        std::fs::write(
            &path,
            concat!(
                r#"{"unix":3,"actor":"operator","instance":"b","action":"teardown","outcome":"started","reason":""}"#,
                "\n",
                r#"{"unix":4,"actor":"operator","instance":"b","action":"teardown","outcome":"succeeded","reason":"","duration_ms":700}"#,
                "\n",
                r#"{"unix":5,"actor":"reaper","instance":"c","action":"skip","outcome":"locked","reason":""}"#,
                "\nnot json\n",
            ),
        )
        .unwrap();
        let counts = super::counts(&path).unwrap();
        assert_eq!(counts.teardowns("reaper", "attempted"), 1);
        assert_eq!(counts.teardowns("reaper", "failed"), 1);
        assert_eq!(counts.teardowns("reaper", "succeeded"), 0);
        assert_eq!(counts.teardowns("operator", "attempted"), 1);
        assert_eq!(counts.teardowns("operator", "succeeded"), 1);
        assert_eq!(counts.duration_sum["reaper"], 2.5);
        assert_eq!(counts.buckets["reaper"], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(counts.buckets["operator"], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    /// A trail that is a symlink is not read: the counts would not be
    /// this store's.
    #[test]
    fn a_symlinked_trail_is_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(dir.path().join("elsewhere"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &path).unwrap();
        assert_eq!(super::counts(&path), None);
        assert_eq!(
            super::counts(&dir.path().join("absent.jsonl")),
            Some(crate::model::metrics::AuditCounts::default())
        );
    }
}
