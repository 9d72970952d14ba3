//! The audit trail: every teardown, skip, failure, GC and key action as one
//! JSON line in `<state_dir>/stackless-tui/audit.jsonl`, rotated to
//! `audit.jsonl.1` at a size cap. Append-only; a write failure is reported
//! once and never stops the console.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::event::{Activity, ActivityKind, Actor};

/// Rotate when the file would grow past this (bytes).
pub const DEFAULT_CAP: u64 = 5 * 1024 * 1024;

/// `<state_dir>/stackless-tui/audit.jsonl`.
#[must_use]
pub fn default_path(state_dir: &Path) -> PathBuf {
    state_dir.join("stackless-tui").join("audit.jsonl")
}

/// One audit line.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Line<'a> {
    /// RFC 3339 UTC time.
    pub time: String,
    /// Unix seconds.
    pub unix: i64,
    /// `reaper`, `operator` or `console`.
    pub actor: &'a str,
    /// The instance name as stored (JSON-escaped by serde; may be empty).
    pub instance: &'a str,
    /// `teardown`, `skip`, `gc`, `refuse`, `error`, `start`, `stop`.
    pub action: &'a str,
    /// `started`, `succeeded`, `failed`, `locked`, `backoff`, `aborted`,
    /// `refused`, `would-reap`, `collected`, `error`, `ok`.
    pub outcome: &'a str,
    /// The reason or detail.
    pub reason: &'a str,
    /// Milliseconds, for finished teardowns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u128>,
    /// The teardown's stderr tail, when it had one.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub stderr_tail: &'a str,
}

/// `(action, outcome)` for an activity kind.
#[must_use]
pub fn classify(kind: ActivityKind) -> (&'static str, &'static str) {
    match kind {
        ActivityKind::Started => ("teardown", "started"),
        ActivityKind::Reaped | ActivityKind::TornDown => ("teardown", "succeeded"),
        ActivityKind::Failed => ("teardown", "failed"),
        ActivityKind::Aborted => ("teardown", "aborted"),
        ActivityKind::WouldReap => ("teardown", "would-reap"),
        ActivityKind::SkippedLocked => ("skip", "locked"),
        ActivityKind::WaitingBackoff => ("skip", "backoff"),
        ActivityKind::Collected => ("gc", "collected"),
        ActivityKind::Refused => ("refuse", "refused"),
        ActivityKind::Error => ("error", "error"),
    }
}

/// An append-only JSON-lines file with rotation.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    cap: u64,
    file: Option<File>,
    size: u64,
}

impl AuditLog {
    /// Open (create) the log at `path`, creating its directory.
    ///
    /// # Errors
    /// The I/O error.
    pub fn open(path: &Path, cap: u64) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_owned(),
            cap,
            file: Some(file),
            size,
        })
    }

    /// Append one line, rotating first when it would pass the cap.
    ///
    /// # Errors
    /// The I/O error.
    pub fn append(&mut self, line: &Line<'_>) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        let len = text.len() as u64;
        if self.size > 0 && self.size + len > self.cap {
            self.file = None;
            let mut rotated = self.path.clone().into_os_string();
            rotated.push(".1");
            std::fs::rename(&self.path, &rotated)?;
            self.file = Some(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)?,
            );
            self.size = 0;
        }
        let Some(file) = self.file.as_mut() else {
            return Err(std::io::Error::other("audit log is closed"));
        };
        file.write_all(text.as_bytes())?;
        self.size += len;
        Ok(())
    }

    /// Append an [`Activity`].
    ///
    /// # Errors
    /// The I/O error.
    pub fn activity(&mut self, activity: &Activity) -> std::io::Result<()> {
        let (action, outcome) = classify(activity.kind);
        let actor = match activity.actor {
            Actor::Reaper => "reaper",
            Actor::Operator => "operator",
        };
        self.append(&Line {
            time: rfc3339(activity.at),
            unix: activity.at,
            actor,
            instance: &activity.instance,
            action,
            outcome,
            reason: &activity.detail,
            duration_ms: activity.duration.map(|d| d.as_millis()),
            stderr_tail: &activity.stderr_tail,
        })
    }

    /// Append a console lifecycle line (`start`/`stop`).
    ///
    /// # Errors
    /// The I/O error.
    pub fn console(&mut self, at: i64, action: &str, reason: &str) -> std::io::Result<()> {
        self.append(&Line {
            time: rfc3339(at),
            unix: at,
            actor: "console",
            instance: "",
            action,
            outcome: "ok",
            reason,
            duration_ms: None,
            stderr_tail: "",
        })
    }
}

/// A shared audit log (the reaper, its jobs and the render loop all write).
pub type Shared = Arc<Mutex<AuditLog>>;

/// Append `activity` to `log`, ignoring (but not hiding: returns it) errors.
///
/// # Errors
/// The I/O error, for the caller to report once.
pub fn record(log: &Shared, activity: &Activity) -> std::io::Result<()> {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .activity(activity)
}

fn rfc3339(at: i64) -> String {
    u64::try_from(at)
        .ok()
        .filter(|s| *s < 253_402_300_800)
        .map_or_else(
            || at.to_string(),
            |s| {
                humantime::format_rfc3339_seconds(
                    std::time::UNIX_EPOCH + std::time::Duration::from_secs(s),
                )
                .to_string()
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_and_rotate_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path, 600).unwrap();
        let mut activity = Activity::new(
            1_795_960_686,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "engine.teardown.survivors: left \"web\"",
        );
        activity.duration = Some(std::time::Duration::from_millis(1500));
        log.activity(&activity).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"time\":\"2026-11-29T13:58:06Z\",\"unix\":1795960686,\"actor\":\"reaper\",\"instance\":\"golf\",\"action\":\"teardown\",\"outcome\":\"failed\",\"reason\":\"engine.teardown.survivors: left \\\"web\\\"\",\"duration_ms\":1500}\n"
        );
        for _ in 0..5 {
            log.activity(&activity).unwrap();
        }
        let rotated = std::fs::read_to_string(dir.path().join("audit.jsonl.1")).unwrap();
        assert!(rotated.lines().count() >= 2);
        assert!(std::fs::metadata(&path).unwrap().len() <= 600);
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(value["instance"], "golf");
        }
    }
}
