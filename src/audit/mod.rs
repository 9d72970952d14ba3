//! The audit trail: every teardown, skip, failure, GC and key action as one
//! JSON line in `<state_dir>/stackless-tui/audit.jsonl`, rotated to
//! `audit.jsonl.1` at a size cap. Append-only; a write failure is reported
//! once and never stops the console.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::model::activity::{Activity, ActivityKind, Actor};

mod counts;
mod read_back;
pub use counts::{COUNT_BUDGET, COUNTS_CHECK, CountsCache, counts, watch_counts};
pub use read_back::{READ_BACK, READ_BACK_INSTANCES, last_teardowns, teardowns_between};

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
    /// `refused`, `would-reap`, `collected`, `error`, `ok`, `left-running`
    /// (a teardown still running when the console stopped).
    pub outcome: &'a str,
    /// The reason or detail.
    pub reason: &'a str,
    /// Milliseconds, for finished teardowns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u128>,
    /// The teardown's stderr tail, when it had one.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub stderr_tail: &'a str,
    /// A failed teardown's `down --json` answer
    /// ([`Activity::envelope`]), when it had one.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub envelope: &'a str,
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
        ActivityKind::Skipped => ("skip", "controller"),
        ActivityKind::Collected => ("gc", "collected"),
        ActivityKind::Refused => ("refuse", "refused"),
        ActivityKind::Error => ("error", "error"),
        ActivityKind::Cancelled => ("operation", "cancelled"),
        ActivityKind::CancelRequested => ("operation", "cancel-requested"),
        ActivityKind::Succeeded => ("operation", "succeeded"),
        ActivityKind::Queued => ("operation", "queued"),
        ActivityKind::Interrupted => ("operation", "interrupted"),
        ActivityKind::Appeared => ("observe", "appeared"),
        ActivityKind::Tombstoned => ("observe", "tombstoned"),
        ActivityKind::Stopped => ("teardown", "interrupted"),
        ActivityKind::Role => ("role", "reaper"),
        ActivityKind::Renewed => ("lease", "renewed"),
        ActivityKind::RenewFailed => ("lease", "failed"),
        ActivityKind::Verified => ("verify", "passed"),
        ActivityKind::VerifyFailed => ("verify", "failed"),
        ActivityKind::WouldRun => ("dry-run", "would-run"),
        ActivityKind::StoreCreated => ("store", "created"),
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
    /// Open (create) the log at `path`, creating its directory. Neither is
    /// ever followed through a symbolic link ([`crate::nofollow`]).
    ///
    /// # Errors
    /// The I/O error, or the refusal of a symbolic link at `path` or its
    /// directory.
    pub fn open(path: &Path, cap: u64) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            crate::nofollow::real_dir(dir)?;
        }
        let file = crate::nofollow::append(path)?;
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
        let mut text = String::new();
        encode(line, &mut text)?;
        if self.size > 0 && self.size + text.len() as u64 > self.cap {
            self.rotate()?;
        }
        self.write(&text)
    }

    /// Append many lines in as few writes as the cap allows: one, unless
    /// the lines pass the cap, where the file is rotated between two lines
    /// exactly as [`AuditLog::append`] line by line would (a bulk action's
    /// refusals: one write, not one per line, off the render thread's time).
    ///
    /// # Errors
    /// The I/O error; lines after it are not written.
    pub fn append_all<'a>(
        &mut self,
        lines: impl IntoIterator<Item = Line<'a>>,
    ) -> std::io::Result<()> {
        let mut text = String::new();
        let mut line_text = String::new();
        for line in lines {
            line_text.clear();
            encode(&line, &mut line_text)?;
            let pending = self.size + text.len() as u64;
            if pending > 0 && pending + line_text.len() as u64 > self.cap {
                if !text.is_empty() {
                    self.write(&text)?;
                    text.clear();
                }
                self.rotate()?;
            }
            text.push_str(&line_text);
        }
        if text.is_empty() {
            return Ok(());
        }
        self.write(&text)
    }

    /// Move the file to `<path>.1` and start a new one.
    fn rotate(&mut self) -> std::io::Result<()> {
        self.file = None;
        let mut rotated = self.path.clone().into_os_string();
        rotated.push(".1");
        std::fs::rename(&self.path, &rotated)?;
        self.file = Some(crate::nofollow::append(&self.path)?);
        self.size = 0;
        Ok(())
    }

    /// Write `text` (whole lines) at the end of the file, starting a new
    /// file first when this one was removed.
    fn write(&mut self, text: &str) -> std::io::Result<()> {
        let len = text.len() as u64;
        if self.file.is_some() && std::fs::symlink_metadata(&self.path).is_err() {
            // The file (or its directory) was removed: start a new one
            // rather than write into a deleted inode, but only while the
            // state directory itself exists (a removed store directory is
            // not re-created by the audit trail).
            let dir = self.path.parent();
            if dir
                .and_then(Path::parent)
                .is_some_and(|state| !state.is_dir())
            {
                return Err(std::io::Error::other("the state directory is gone"));
            }
            if let Some(dir) = dir {
                crate::nofollow::real_dir(dir)?;
            }
            self.file = Some(crate::nofollow::append(&self.path)?);
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
    /// An entry with a [`Activity::batch`] appends the batch's lines
    /// instead, in one write ([`AuditLog::append_all`]).
    ///
    /// # Errors
    /// The I/O error.
    pub fn activity(&mut self, activity: &Activity) -> std::io::Result<()> {
        if activity.batch.is_empty() {
            self.append(&activity_line(activity))
        } else {
            self.append_all(activity.batch.iter().map(activity_line))
        }
    }

    /// Append a teardown the console left running when it stopped: actor
    /// `console`, action `teardown`, outcome `left-running`. Its `down`
    /// runs on in its own process group holding the instance's lock; its
    /// outcome is in the store (the instance tombstoned, or a reap attempt
    /// recorded by the next reaper), not in this trail.
    ///
    /// # Errors
    /// The I/O error.
    pub fn left_running(&mut self, at: i64, instance: &str, reason: &str) -> std::io::Result<()> {
        self.left_running_as(at, instance, "teardown", reason)
    }

    /// Append a `left-running` line for `action` (`teardown`, `lease` for a
    /// renew, `verify`) still running when the console stopped.
    ///
    /// # Errors
    /// The I/O error.
    pub fn left_running_as(
        &mut self,
        at: i64,
        instance: &str,
        action: &str,
        reason: &str,
    ) -> std::io::Result<()> {
        self.append(&Line {
            time: crate::model::time::rfc3339_or_raw(at),
            unix: at,
            actor: "console",
            instance,
            action,
            outcome: "left-running",
            reason,
            duration_ms: None,
            stderr_tail: "",
            envelope: "",
        })
    }

    /// Append a console lifecycle line (`start`/`stop`).
    ///
    /// # Errors
    /// The I/O error.
    pub fn console(&mut self, at: i64, action: &str, reason: &str) -> std::io::Result<()> {
        self.append(&Line {
            time: crate::model::time::rfc3339_or_raw(at),
            unix: at,
            actor: "console",
            instance: "",
            action,
            outcome: if reason.starts_with("panic") {
                "panic"
            } else if reason.starts_with("error") {
                "error"
            } else {
                "ok"
            },
            reason,
            duration_ms: None,
            stderr_tail: "",
            envelope: "",
        })
    }
}

/// The audit line of one activity.
fn activity_line(activity: &Activity) -> Line<'_> {
    let (action, outcome) = classify(activity.kind);
    let actor = match activity.actor {
        Actor::Reaper => "reaper",
        Actor::Operator => "operator",
        Actor::Controller => "controller",
        Actor::Observed => "observed",
    };
    Line {
        time: crate::model::time::rfc3339_or_raw(activity.at),
        unix: activity.at,
        actor,
        instance: &activity.instance,
        action,
        outcome,
        reason: &activity.detail,
        duration_ms: activity.duration.map(|d| d.as_millis()),
        stderr_tail: &activity.stderr_tail,
        envelope: &activity.envelope,
    }
}

/// `line` as JSON, escaped for terminals, plus a newline, appended to
/// `out`.
fn encode(line: &Line<'_>, out: &mut String) -> std::io::Result<()> {
    let json = serde_json::to_string(line).map_err(std::io::Error::other)?;
    escape_for_terminals(&json, out);
    out.push('\n');
    Ok(())
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

/// `json` with DEL, C1 controls and bidirectional controls written as
/// `\uXXXX` escapes, appended to `out`: the same JSON value, but safe to
/// `cat` or `tail` in a terminal (`serde_json` escapes only C0 controls).
/// No allocation beyond `out`'s growth (it once made a `String` per
/// character).
fn escape_for_terminals(json: &str, out: &mut String) {
    use std::fmt::Write as _;
    out.reserve(json.len());
    for c in json.chars() {
        match c {
            '\u{7f}'..='\u{9f}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => {
                // Writing to a `String` cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_teardown_of_each_instance_is_read_back_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path, 4000).unwrap();
        let mut failed = Activity::new(100, Actor::Reaper, "golf", ActivityKind::Failed, "boom")
            .with_envelope("{\"code\":\"engine.teardown.survivors\"}");
        failed.stderr_tail = "warn: left web\n\u{1b}[31mred\n".into();
        log.activity(&failed).unwrap();
        log.activity(&Activity::new(
            90,
            Actor::Operator,
            "alpha",
            ActivityKind::TornDown,
            "",
        ))
        .unwrap();
        log.console(110, "start", "pid 1").unwrap();
        log.activity(&Activity::new(
            120,
            Actor::Reaper,
            "beta",
            ActivityKind::Started,
            "",
        ))
        .unwrap();
        // Enough lines to rotate: golf's and alpha's move to .1.
        for i in 0..20 {
            log.activity(&Activity::new(
                200 + i,
                Actor::Reaper,
                "echo",
                ActivityKind::SkippedLocked,
                "x",
            ))
            .unwrap();
        }
        let mut newer = Activity::new(300, Actor::Reaper, "alpha", ActivityKind::Reaped, "");
        newer.stderr_tail = "bye\n".into();
        log.activity(&newer).unwrap();
        let back = last_teardowns(&path, READ_BACK);
        let seen: Vec<(&str, ActivityKind, i64)> = back
            .iter()
            .map(|a| (a.instance.as_str(), a.kind, a.at))
            .collect();
        assert_eq!(
            seen,
            [
                ("golf", ActivityKind::Failed, 100),
                ("alpha", ActivityKind::Reaped, 300)
            ]
        );
        assert!(back.iter().all(|a| a.restored));
        assert_eq!(back[0].stderr_tail, "warn: left web\n\u{1b}[31mred\n");
        assert_eq!(back[0].envelope, "{\"code\":\"engine.teardown.survivors\"}");
        assert_eq!(back[1].stderr_tail, "bye\n");
        // Bounded: a budget that holds only the newest lines.
        let back = last_teardowns(&path, 200);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].instance, "alpha");
        assert!(last_teardowns(&dir.path().join("none.jsonl"), READ_BACK).is_empty());
    }

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

    /// A batch is written as the same bytes,
    /// and rotated at the same lines, as line by line.
    #[test]
    fn a_batch_writes_and_rotates_as_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<Activity> = (0..9)
            .map(|n| {
                Activity::new(
                    1_795_960_686 + n,
                    Actor::Operator,
                    &format!("inst-{n}\u{202e}"),
                    ActivityKind::Refused,
                    "refused: locked (alive)",
                )
            })
            .collect();
        let mut single = AuditLog::open(&dir.path().join("a/audit.jsonl"), 700).unwrap();
        for entry in &entries {
            single.activity(entry).unwrap();
        }
        let mut batched = AuditLog::open(&dir.path().join("b/audit.jsonl"), 700).unwrap();
        let mut summary = Activity::new(0, Actor::Operator, "", ActivityKind::Refused, "9 refused");
        summary.batch = entries;
        batched.activity(&summary).unwrap();
        for name in ["audit.jsonl", "audit.jsonl.1"] {
            let a = std::fs::read_to_string(dir.path().join("a").join(name)).unwrap();
            let b = std::fs::read_to_string(dir.path().join("b").join(name)).unwrap();
            assert_eq!(a, b, "{name}");
            assert!(a.contains("\\u202e\","), "{a}");
        }
        assert!(
            !std::fs::read_to_string(dir.path().join("b/audit.jsonl"))
                .unwrap()
                .contains("9 refused")
        );
    }

    #[test]
    fn hostile_text_is_escaped_but_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path, DEFAULT_CAP).unwrap();
        let name = "bidi-\u{202e}evil\u{1b}[2J\u{7f}";
        log.activity(&Activity::new(
            0,
            Actor::Operator,
            name,
            ActivityKind::Refused,
            "x",
        ))
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("bidi-\\u202eevil\\u001b[2J\\u007f"), "{text}");
        assert!(!text.contains('\u{202e}') && !text.contains('\u{1b}'));
        let value: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(value["instance"], name, "nothing is lost");
    }

    #[test]
    fn a_removed_log_is_started_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/sub/audit.jsonl");
        let mut log = AuditLog::open(&path, DEFAULT_CAP).unwrap();
        std::fs::remove_dir_all(dir.path().join("state/sub")).unwrap();
        log.console(1, "stop", "test").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
        // The whole state directory removed: nothing is re-created.
        std::fs::remove_dir_all(dir.path().join("state")).unwrap();
        assert!(log.console(2, "stop", "test").is_err());
        assert!(!dir.path().join("state").exists());
    }

    #[test]
    fn a_hard_link_is_refused_and_nothing_is_appended_to_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep\n").unwrap();
        let path = dir.path().join("stackless-tui/audit.jsonl");
        std::fs::create_dir(dir.path().join("stackless-tui")).unwrap();
        std::fs::hard_link(&victim, &path).unwrap();
        let refusal = format!(
            "{} has 2 hard links: refusing to append to it (remove the link; the console creates a plain file there)",
            path.display()
        );
        let error = AuditLog::open(&path, DEFAULT_CAP).err().unwrap();
        assert_eq!(error.to_string(), refusal);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    }
}

/// How many activities not yet written are kept to write once the audit
/// trail takes writes again (the oldest is dropped past this).
pub const OWED_KEPT: usize = 1000;

/// Whether the audit trail takes writes, shared by the recorder (which
/// writes through it) and the reaper (which pauses while it does not:
/// acting without a record of it is what the audit trail exists to
/// prevent). An append that fails (disk full, an I/O error, a rotation
/// refused: a symbolic or hard link planted at the path, a name it cannot
/// take) keeps the line owed and the error; [`Health::retry`] (each reaper
/// pass) and every later append write the owed lines first, in order, and
/// clear the error once one succeeds.
#[derive(Debug, Clone, Default)]
pub struct Health(Arc<Mutex<HealthState>>);

#[derive(Debug, Default)]
struct HealthState {
    log: Option<Shared>,
    owed: std::collections::VecDeque<Activity>,
    error: Option<String>,
}

impl Health {
    /// The health of `log` (none: nothing to write, never failing).
    #[must_use]
    pub fn new(log: Option<Shared>) -> Self {
        Self(Arc::new(Mutex::new(HealthState {
            log,
            ..HealthState::default()
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HealthState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Append `activity` after the lines owed; kept owed when it fails.
    pub fn record(&self, activity: &Activity) {
        let mut state = self.state();
        if state.log.is_none() {
            return;
        }
        state.owed.push_back(activity.clone());
        if state.owed.len() > OWED_KEPT {
            state.owed.pop_front();
        }
        flush(&mut state);
    }

    /// Write the lines owed, if any (the probe that the trail takes
    /// writes again).
    pub fn retry(&self) {
        let mut state = self.state();
        if !state.owed.is_empty() {
            flush(&mut state);
        }
    }

    /// Why the audit trail does not take writes, while it does not.
    #[must_use]
    pub fn failure(&self) -> Option<String> {
        self.state().error.clone()
    }
}

fn flush(state: &mut HealthState) {
    let Some(log) = state.log.clone() else {
        return;
    };
    while let Some(next) = state.owed.front() {
        match record(&log, next) {
            Ok(()) => {
                state.owed.pop_front();
                state.error = None;
            }
            Err(error) => {
                state.error = Some(error.to_string());
                return;
            }
        }
    }
}
