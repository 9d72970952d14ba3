//! The audit trail read back at start: each instance's last finished
//! teardown (the reaper's or the operator's), from the end of
//! `audit.jsonl` and then `audit.jsonl.1`, bounded ([`READ_BACK`] bytes,
//! [`READ_BACK_INSTANCES`] instances), never following a symlink, its
//! reason, answer and stderr tail redacted as a child's answer is.

use std::path::{Path, PathBuf};

use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::redact::Redactor;

/// How many bytes from the end of the audit trail [`last_teardowns`] reads
/// (then from the end of `audit.jsonl.1`, in what is left of it).
pub const READ_BACK: u64 = 1 << 20;

/// The most instances [`last_teardowns`] gives back.
pub const READ_BACK_INSTANCES: usize = 200;

/// An audit line as read back (owned; unknown fields ignored).
#[derive(Debug, serde::Deserialize)]
struct Recorded {
    unix: i64,
    actor: String,
    instance: String,
    action: String,
    outcome: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    duration_ms: Option<u64>,
    #[serde(default)]
    stderr_tail: String,
    #[serde(default)]
    envelope: String,
}

impl Recorded {
    /// The finished teardown (the reaper's or the operator's) it records.
    fn teardown(self) -> Option<Activity> {
        if self.action != "teardown" || self.instance.is_empty() {
            return None;
        }
        let actor = match self.actor.as_str() {
            "reaper" => Actor::Reaper,
            "operator" => Actor::Operator,
            _ => return None,
        };
        let kind = match (self.outcome.as_str(), actor) {
            ("succeeded", Actor::Reaper) => ActivityKind::Reaped,
            ("succeeded", _) => ActivityKind::TornDown,
            ("failed", _) => ActivityKind::Failed,
            _ => return None,
        };
        // A trail an earlier console wrote before its children's answers
        // were redacted where they enter may hold credentials in clear:
        // read back through the same rules (`Redactor::child_output`).
        let rules = Redactor::default();
        let reason = rules.child_output(&self.reason);
        let mut activity = Activity::new(self.unix, actor, &self.instance, kind, reason)
            .with_envelope(&rules.child_output(&self.envelope));
        activity.stderr_tail = rules.child_tail(&self.stderr_tail);
        activity.duration = self.duration_ms.map(std::time::Duration::from_millis);
        activity.restored = true;
        Some(activity)
    }
}

/// The last `budget` bytes of the file at `path` (not followed through a
/// symlink; an ordinary file only), from the first whole line.
pub(super) fn read_end(path: &Path, budget: u64) -> std::io::Result<(Vec<u8>, u64)> {
    use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
    // A planted second name of the store is never opened: closing a
    // descriptor on it would drop this process's locks (`store::files`).
    crate::nofollow::not_hard_linked(path, |links| {
        format!("{} has {links} hard links: not read", path.display())
    })?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not an ordinary file"));
    }
    let start = meta.len().saturating_sub(budget);
    let mut bytes = vec![0; usize::try_from(meta.len() - start).unwrap_or(0)];
    file.read_exact_at(&mut bytes, start)?;
    if start > 0 {
        let first = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| n + 1);
        bytes.drain(..first);
    }
    Ok((bytes, meta.len() - start))
}

/// The newest finished teardown of each instance (the reaper's and the
/// operator's: reaped, torn down, failed; with its stderr tail and
/// `down --json` answer) recorded in the audit trail at `path`, read from
/// its end: at most `budget` bytes, from `audit.jsonl` then, for what is
/// left, `audit.jsonl.1`; at most [`READ_BACK_INSTANCES`], oldest first,
/// each marked [`Activity::restored`]. What cannot be read or parsed is
/// skipped (a console without its trail just starts without them).
#[must_use]
pub fn last_teardowns(path: &Path, budget: u64) -> Vec<Activity> {
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    let mut left = budget;
    let mut newest: std::collections::HashMap<String, Activity> = std::collections::HashMap::new();
    for file in [path.to_path_buf(), PathBuf::from(rotated)] {
        if left == 0 {
            break;
        }
        let Ok((bytes, read)) = read_end(&file, left) else {
            continue;
        };
        left -= read.min(left);
        // Lines are in time order: a later one of an instance wins, and
        // the newer file's are never replaced by the older file's.
        let mut here: std::collections::HashMap<String, Activity> =
            std::collections::HashMap::new();
        for line in bytes.split(|&b| b == b'\n') {
            let Some(activity) = serde_json::from_slice::<Recorded>(line)
                .ok()
                .and_then(Recorded::teardown)
            else {
                continue;
            };
            here.insert(activity.instance.clone(), activity);
        }
        for (name, activity) in here {
            newest.entry(name).or_insert(activity);
        }
    }
    let mut out: Vec<Activity> = newest.into_values().collect();
    out.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.instance.cmp(&b.instance)));
    out.truncate(READ_BACK_INSTANCES);
    out.reverse();
    out
}

/// Every finished teardown (the reaper's and the operator's: reaped, torn
/// down, failed) the audit trail at `path` records at `from..=to` (unix
/// seconds), oldest first: `audit.jsonl.1`, then `audit.jsonl`, each read
/// from its end (at most `budget` bytes of each), never through a
/// symlink, redacted as [`last_teardowns`]'s are. What `replay` merges
/// into its Activity and `T` (the recording holds other processes' lines,
/// the audit trail this console's own; docs/history.md, "Replay").
#[must_use]
pub fn teardowns_between(path: &Path, budget: u64, from: i64, to: i64) -> Vec<Activity> {
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    let mut out = Vec::new();
    for file in [PathBuf::from(rotated), path.to_path_buf()] {
        let Ok((bytes, _)) = read_end(&file, budget) else {
            continue;
        };
        for line in bytes.split(|&b| b == b'\n') {
            let Some(mut activity) = serde_json::from_slice::<Recorded>(line)
                .ok()
                .filter(|r| (from..=to).contains(&r.unix))
                .and_then(Recorded::teardown)
            else {
                continue;
            };
            activity.restored = false;
            out.push(activity);
        }
    }
    out.sort_by_key(|a| a.at);
    out
}

#[cfg(test)]
mod tests {
    /// A line an earlier console wrote with a child's credentials in clear
    /// is shown redacted.
    #[test]
    fn credentials_in_a_trail_written_before_are_redacted_when_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(
            &path,
            r#"{"unix":5,"actor":"reaper","instance":"golf","action":"teardown","outcome":"failed","reason":"provider.auth: token=CANARY3","stderr_tail":"Authorization: Bearer CANARY4\n","envelope":"{\"error\":{\"code\":\"provider.auth\",\"context\":{\"password\":\"CANARY1\"}}}"}
"#,
        )
        .unwrap();
        let back = super::last_teardowns(&path, super::READ_BACK);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].detail, "provider.auth: token=[redacted]");
        assert_eq!(back[0].stderr_tail, "Authorization: Bearer [redacted]\n");
        assert_eq!(
            back[0].envelope,
            r#"{"error":{"code":"provider.auth","context":{"password":"[redacted]"}}}"#
        );
    }

    /// The teardowns of a window, oldest first, from both files, redacted;
    /// lines outside it and other actions left out.
    #[test]
    fn the_teardowns_of_a_window_are_read_from_both_files_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(
            dir.path().join("audit.jsonl.1"),
            r#"{"unix":10,"actor":"reaper","instance":"alpha","action":"teardown","outcome":"succeeded","reason":"down succeeded in 2.0s","duration_ms":2000}
{"unix":3,"actor":"reaper","instance":"beta","action":"teardown","outcome":"succeeded","reason":"too early"}
"#,
        )
        .unwrap();
        std::fs::write(
            &path,
            r#"{"unix":20,"actor":"operator","instance":"golf","action":"teardown","outcome":"failed","reason":"provider.auth: token=CANARY3"}
{"unix":21,"actor":"reaper","instance":"golf","action":"start","outcome":"started"}
{"unix":40,"actor":"reaper","instance":"golf","action":"teardown","outcome":"succeeded","reason":"too late"}
"#,
        )
        .unwrap();
        let back = super::teardowns_between(&path, super::READ_BACK, 5, 30);
        let seen: Vec<(i64, String, String, String)> = back
            .iter()
            .map(|a| {
                (
                    a.at,
                    a.actor.to_string(),
                    a.instance.clone(),
                    format!("{} {}", a.kind, a.detail),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    10,
                    "reaper".to_owned(),
                    "alpha".to_owned(),
                    "reaped down succeeded in 2.0s".to_owned()
                ),
                (
                    20,
                    "operator".to_owned(),
                    "golf".to_owned(),
                    "failed provider.auth: token=[redacted]".to_owned()
                ),
            ]
        );
        assert!(back.iter().all(|a| !a.restored));
    }
}
