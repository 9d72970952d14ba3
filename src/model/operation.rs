//! The stackless 0.4.0 controller's durable queue (migration 8:
//! `operations` and `operation_events`; docs/stackless-releases.md, "Schema
//! 14"): every `up`, `down`, `verify` and `gc` is a row that goes queued ->
//! running -> succeeded / failed / cancelled / interrupted, with its
//! progress as events. Pure data.

use std::fmt;

/// How many finished operations a snapshot carries (the pane and
/// `snapshot --json` show the most recent ones).
pub const FINISHED_SHOWN: usize = 50;

/// `operations.status`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OpStatus {
    /// Waiting in the queue.
    Queued,
    /// Being executed by the controller.
    Running,
    /// Finished well.
    Succeeded,
    /// Finished with an error (`error_json`).
    Failed,
    /// Cancelled (`stackless operation cancel`).
    Cancelled,
    /// Stopped by a controller restart and not resumable.
    Interrupted,
    /// Any other text (a newer stackless), shown as stored, never acted on.
    Other(String),
}

impl OpStatus {
    /// Parse the stored text; unknown values are kept.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "succeeded" => Self::Succeeded,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            "interrupted" => Self::Interrupted,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The text as stored.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
            Self::Other(other) => other,
        }
    }

    /// Queued or running: the controller's reaper skips the instance, and
    /// `c` may cancel it.
    #[must_use]
    pub const fn is_pending(&self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }
}

impl fmt::Display for OpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The newest step event of an operation (`operation_events.event_json`,
/// the engine's step progress: `{"event":"Started","step_id":"start:web",
/// "index":2,"total":3,...}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepProgress {
    /// `Started`, `Skipped`, `Completed`, `Failed` (or newer).
    pub event: String,
    /// The step, e.g. `start:web`.
    pub step_id: String,
    /// 1-based index of the step.
    pub index: i64,
    /// Steps in the plan.
    pub total: i64,
}

impl StepProgress {
    /// Parse one `operation_events.event_json`: the engine's step progress
    /// (core-0.4.0/src/engine/progress.rs:7-31), e.g.
    /// `{"event":"Started","step_id":"start:web","index":2,"total":3,...}`.
    /// `None` for any other shape (the verify journal marker
    /// `{"event":"VerificationJournal","version":1}`, a newer event, text
    /// that is not JSON): such an event shows no progress.
    #[must_use]
    pub fn parse(event_json: &str) -> Option<Self> {
        let value: serde_json::Value = serde_json::from_str(event_json).ok()?;
        Some(Self {
            event: value.get("event")?.as_str()?.to_owned(),
            step_id: value.get("step_id")?.as_str()?.to_owned(),
            index: value.get("index")?.as_i64()?,
            total: value.get("total")?.as_i64()?,
        })
    }

    /// `start:web 2/3` (unsanitized: the UI sanitizes when it draws).
    #[must_use]
    pub fn text(&self) -> String {
        format!("{} {}/{}", self.step_id, self.index, self.total)
    }
}

/// One `operations` row (never `request_json`: it may carry secrets).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Operation {
    /// `id`: a uuid chosen by the submitter.
    pub id: String,
    /// `instance`: the name at submit time.
    pub instance: String,
    /// `instance_id` (migration 10): the birth it ran on, once bound.
    pub instance_id: Option<String>,
    /// `verb`: `up`, `down`, `verify`, `gc` (or newer).
    pub verb: String,
    /// `status`.
    pub status: OpStatus,
    /// `cancel_requested`: a cancel was asked for (a running `up` stops at
    /// its next step).
    pub cancel_requested: bool,
    /// Unix seconds it was submitted.
    pub created_at: i64,
    /// Unix seconds of its last change (for a finished one: when it ended).
    pub updated_at: i64,
    /// `error_json` as stored (a schema-2 error object), for a failure.
    pub error_json: Option<String>,
    /// The newest step event, if any.
    pub progress: Option<StepProgress>,
}

impl Operation {
    /// Seconds since it was submitted (pending) or how long it ran
    /// (finished), never negative.
    #[must_use]
    pub fn age(&self, now: i64) -> i64 {
        if self.status.is_pending() {
            now.saturating_sub(self.created_at).max(0)
        } else {
            self.updated_at.saturating_sub(self.created_at).max(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_and_pending_is_queued_or_running() {
        for text in [
            "queued",
            "running",
            "succeeded",
            "failed",
            "cancelled",
            "interrupted",
            "x",
        ] {
            assert_eq!(OpStatus::parse(text).as_str(), text);
        }
        assert!(OpStatus::Queued.is_pending());
        assert!(OpStatus::Running.is_pending());
        assert!(!OpStatus::Failed.is_pending());
        assert!(!OpStatus::Other("queued ".into()).is_pending());
    }

    #[test]
    fn progress_parses_the_engine_shape_and_tolerates_others() {
        let started = StepProgress::parse(
            r#"{"event":"Started","instance":"demo","step_id":"start:web","step_kind":"start","node":"web","index":2,"total":3,"code":null,"at_epoch_ms":1760000000000,"duration_ms":null}"#,
        )
        .expect("a step event");
        assert_eq!(started.event, "Started");
        assert_eq!(started.text(), "start:web 2/3");
        for other in [
            r#"{"event":"VerificationJournal","version":1}"#,
            r#"{"event":"Started","step_id":"x","index":"2","total":3}"#,
            "[1,2]",
            "not json",
            "",
        ] {
            assert_eq!(StepProgress::parse(other), None, "{other}");
        }
    }

    #[test]
    fn progress_text_and_age() {
        let progress = StepProgress {
            event: "Started".into(),
            step_id: "start:web".into(),
            index: 2,
            total: 3,
        };
        assert_eq!(progress.text(), "start:web 2/3");
        let mut op = Operation {
            id: "1".into(),
            instance: "alpha".into(),
            instance_id: None,
            verb: "down".into(),
            status: OpStatus::Running,
            cancel_requested: false,
            created_at: 100,
            updated_at: 101,
            error_json: None,
            progress: Some(progress),
        };
        assert_eq!(op.age(103), 3);
        op.status = OpStatus::Succeeded;
        assert_eq!(op.age(1_000), 1);
    }
}
