//! The stackless 0.4.0 controller's durable queue (migration 8:
//! `operations` and `operation_events`; docs/stackless-releases.md, "Schema
//! 14"): every `up`, `down`, `verify` and `gc` is a row that goes queued ->
//! running -> succeeded / failed / cancelled / interrupted, with its
//! progress as events. Pure data.

use std::fmt;

/// How many finished operations a snapshot carries (the pane and
/// `snapshot --json` show the most recent ones).
pub const FINISHED_SHOWN: usize = 50;

/// Put the finished operations of `operations` (after the pending ones,
/// which keep the controller's order) in the order they finished: by
/// `updated_at` (0.4.0's `operations` table: set by `finish_operation`),
/// newest first; a tie keeps the order given (the store's newest rowid
/// first). A row cancelled just now (created long ago, still queued)
/// is the first finished row, not where its creation put it. The one
/// order the Operations pane and `snapshot` show.
pub fn order_finished(operations: &mut [Operation]) {
    let pending = pending_count(operations);
    if let Some(finished) = operations.get_mut(pending..) {
        finished.sort_by_key(|op| std::cmp::Reverse(op.updated_at));
    }
}

/// Where the Operations pane's selection goes when `after` replaces
/// `before` (both in the pane's order: pending first, then finished, newest
/// first: [`order_finished`]); `index` is the selection in `before`, the
/// result an index into `after` (0 when it is empty).
///
/// On the newest finished row (the top of the finished rows: the pending
/// ones are pinned above it) the selection stays on the newest finished
/// row, so rows that arrive never go above an untouched selection
/// (docs/keys.md: "new lines leave it where you put it unless it is on the
/// newest"); anywhere else it follows its operation by id; an id no longer
/// listed keeps the index, within the list. Before the first list
/// (`before` empty) the index is kept.
#[must_use]
pub fn reselect(before: &[Operation], index: usize, after: &[Operation]) -> usize {
    let last = after.len().saturating_sub(1);
    let Some(selected) = before.get(index) else {
        return index.min(last);
    };
    if !selected.status.is_pending() && index == pending_count(before) {
        return pending_count(after).min(last);
    }
    after
        .iter()
        .position(|op| op.id == selected.id)
        .unwrap_or_else(|| index.min(last))
}

/// How many operations of a list in the pane's order are pending (the
/// pinned rows on top).
fn pending_count(operations: &[Operation]) -> usize {
    operations
        .iter()
        .position(|op| !op.status.is_pending())
        .unwrap_or(operations.len())
}

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

/// The most events the operation overlay reads of one operation (an `up`
/// writes two per step, Started and Completed: 500 steps).
pub const EVENTS_SHOWN: usize = 1000;

/// One `operation_events` row as the operation overlay lists it (core-0.4.0
/// src/state/operation.rs:305-319; the engine's step progress,
/// core-0.4.0 src/engine/progress.rs:7-31).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpEvent {
    /// `operation_events.sequence`: the order the controller wrote them in.
    pub sequence: i64,
    /// `event`: `Started`, `Completed`, `Failed`, `Skipped`, the verify
    /// journal marker `VerificationJournal`, or newer; `?` when the JSON
    /// says none.
    pub event: String,
    /// The step, index and total of a step event.
    pub step: Option<StepProgress>,
    /// `code` of a failed step, when it says one.
    pub code: Option<String>,
    /// When it happened, unix ms ([`event_times`]: `at_epoch_ms`, else
    /// `recorded_at`).
    pub at_ms: Option<i64>,
    /// `duration_ms`: how long its step took (Completed, Failed).
    pub duration_ms: Option<i64>,
}

impl OpEvent {
    /// Read one row: its `sequence`, `event_json` and `recorded_at` (unix
    /// seconds). Never fails: text that is not JSON reads as an event `?`
    /// with only its `recorded_at`.
    #[must_use]
    pub fn parse(sequence: i64, event_json: &str, recorded_at: Option<i64>) -> Self {
        let value: Option<serde_json::Value> = serde_json::from_str(event_json).ok();
        let field = |name: &str| value.as_ref().and_then(|v| v.get(name));
        Self {
            sequence,
            event: field("event")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("?")
                .to_owned(),
            step: StepProgress::parse(event_json),
            code: field("code")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
            at_ms: event_times(event_json, recorded_at).map(|(_, at)| at),
            duration_ms: field("duration_ms")
                .and_then(serde_json::Value::as_i64)
                .filter(|d| *d >= 0),
        }
    }
}

/// What the operation overlay compares to know its event list is stale:
/// the operation's status, last change and newest step event. A new
/// snapshot with another key for the open operation re-reads its events.
#[must_use]
pub fn events_key(op: &Operation) -> (OpStatus, i64, Option<StepProgress>) {
    (op.status.clone(), op.updated_at, op.progress.clone())
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
    /// When the controller ran it, from its events (`None`: no event yet,
    /// e.g. still queued, or an `up` refused before its first step).
    pub ran: Option<Ran>,
}

/// When the controller ran an operation, unix milliseconds, from its
/// `operation_events` rows. The `operations` row keeps no start time (the
/// claim's `updated_at` is overwritten when it finishes, core-0.4.0
/// src/state/operation.rs:229-231), so the first event stands for it: its
/// step's start (`at_epoch_ms - duration_ms`, the engine's own clock,
/// core-0.4.0 src/engine/progress.rs:27-30), or its `recorded_at` (whole
/// seconds) for an event without them (the verify journal marker,
/// written at the claim: core-0.4.0 src/state/operation.rs:241-250).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ran {
    /// When its first step started (ms).
    pub started_ms: i64,
    /// When its newest event happened (ms): for a finished operation, its
    /// last step's end.
    pub last_ms: i64,
}

/// One event's times, unix ms: `(start, at)`: the step's start
/// (`at_epoch_ms - duration_ms`) and the event's own time (`at_epoch_ms`).
/// Both are `recorded_at * 1000` when the event carries no `at_epoch_ms`,
/// or one more than [`CLOCKS_APART`] seconds from its `recorded_at` (the
/// engine and the store read the same clock within the same step, so such
/// a time is not one stackless wrote; `None` then without a `recorded_at`).
#[must_use]
pub fn event_times(event_json: &str, recorded_at: Option<i64>) -> Option<(i64, i64)> {
    let value: Option<serde_json::Value> = serde_json::from_str(event_json).ok();
    let field = |name: &str| {
        value
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(serde_json::Value::as_i64)
    };
    let at = field("at_epoch_ms")
        .filter(|at| recorded_at.is_none_or(|r| (at.div_euclid(1000) - r).abs() <= CLOCKS_APART));
    match at {
        Some(at) => {
            let took = field("duration_ms").unwrap_or(0).clamp(0, at.max(0));
            Some((at.saturating_sub(took), at))
        }
        None => recorded_at.map(|s| (s.saturating_mul(1000), s.saturating_mul(1000))),
    }
}

/// How far (seconds) an event's `at_epoch_ms` may be from its
/// `recorded_at` and still be read ([`event_times`]).
pub const CLOCKS_APART: i64 = 2;

/// A run time in milliseconds as the words say it: `0.4s`, `9.9s` under
/// ten seconds (tenths, rounded down), else [`super::time::span`] (`12s`,
/// `3m 19s`).
#[must_use]
pub fn run_span(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 10_000 {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else {
        super::time::span(ms / 1000)
    }
}

impl Operation {
    /// How long it has run (pending: until `now`, unix seconds) or ran
    /// (finished: from its first step's start to its last event, or to its
    /// `updated_at` when that is later), in ms; `None` without an event
    /// ([`Ran`]).
    #[must_use]
    pub fn run_ms(&self, now: i64) -> Option<i64> {
        let ran = self.ran?;
        let end = if self.status.is_pending() {
            now.saturating_mul(1000)
        } else {
            // It ended after its last event and, to the second, when its
            // row was last updated (`finish_operation`).
            ran.last_ms.max(self.updated_at.saturating_mul(1000))
        };
        Some(end.saturating_sub(ran.started_ms).max(0))
    }

    /// Whole seconds it waited in the queue before its first step
    /// (`created_at` to [`Ran::started_ms`]); `None` without an event.
    #[must_use]
    pub fn queued_secs(&self) -> Option<i64> {
        let ran = self.ran?;
        Some(
            ran.started_ms
                .saturating_sub(self.created_at.saturating_mul(1000))
                .max(0)
                / 1000,
        )
    }

    /// What "took" says of a finished operation: its run time
    /// ([`Operation::run_ms`], [`run_span`]), or, with no event to tell
    /// the run from the wait (0.4.0 records steps for `up` only), at most
    /// the whole time since it was submitted: `≤24s`
    /// ([`Operation::age`]).
    #[must_use]
    pub fn took(&self, now: i64) -> String {
        self.run_ms(now).map_or_else(
            || match self.age(now) {
                0 => "<1s".to_owned(),
                age => format!("≤{}", super::time::span(age)),
            },
            run_span,
        )
    }

    /// [`Operation::took`] with the wait said apart: `0.4s, after 3m 19s
    /// queued` (the wait left out under a second); with no event to tell
    /// them apart, `≤24s (queue wait included)`.
    #[must_use]
    pub fn took_and_queued(&self, now: i64) -> String {
        let mut text = self.took(now);
        if self.ran.is_none() {
            text.push_str(" (queue wait included)");
        } else if let Some(queued) = self.queued_secs().filter(|q| *q > 0) {
            text.push_str(&format!(", after {} queued", super::time::span(queued)));
        }
        text
    }

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

    fn row(id: &str, status: OpStatus, created_at: i64, updated_at: i64) -> Operation {
        Operation {
            id: id.into(),
            instance: "alpha".into(),
            instance_id: None,
            verb: "up".into(),
            status,
            cancel_requested: false,
            created_at,
            updated_at,
            error_json: None,
            progress: None,
            ran: None,
        }
    }

    /// The finished rows go by when they finished, newest first: a row
    /// created first and cancelled last leads them; the pending rows keep
    /// their order; a tie keeps the order given.
    #[test]
    fn reselect_keeps_the_newest_and_follows_any_other_by_id() {
        let old = vec![
            row("a", OpStatus::Succeeded, 10, 20),
            row("b", OpStatus::Failed, 5, 8),
        ];
        let new = vec![
            row("q", OpStatus::Queued, 30, 30),
            row("n", OpStatus::Succeeded, 25, 26),
            row("a", OpStatus::Succeeded, 10, 20),
            row("b", OpStatus::Failed, 5, 8),
        ];
        assert_eq!(reselect(&old, 0, &new), 1);
        assert_eq!(reselect(&old, 1, &new), 3);
        assert_eq!(reselect(&new, 0, &old), 0);
        assert_eq!(reselect(&new, 1, &old), 0);
        assert_eq!(reselect(&[], 0, &new), 0);
        assert_eq!(reselect(&new, 3, &[]), 0);
        let gone = vec![row("z", OpStatus::Running, 1, 1)];
        assert_eq!(reselect(&new, 3, &gone), 0);
    }

    #[test]
    fn finished_operations_are_ordered_by_when_they_finished() {
        let mut ops = vec![
            row("queued-b", OpStatus::Queued, 50, 50),
            row("running-a", OpStatus::Running, 10, 60),
            // As the store lists them: newest rowid first.
            row("new", OpStatus::Succeeded, 90, 95),
            row("tie-1", OpStatus::Failed, 80, 85),
            row("tie-2", OpStatus::Failed, 70, 85),
            row("cancelled-now", OpStatus::Cancelled, 5, 100),
        ];
        order_finished(&mut ops);
        let ids: Vec<&str> = ops.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "queued-b",
                "running-a",
                "cancelled-now",
                "new",
                "tie-1",
                "tie-2"
            ]
        );
    }

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
            ran: None,
        };
        assert_eq!(op.age(103), 3);
        op.status = OpStatus::Succeeded;
        assert_eq!(op.age(1_000), 1);
    }

    #[test]
    fn events_parse_every_shape() {
        let started = OpEvent::parse(
            3,
            r#"{"event":"Started","instance":"demo","step_id":"start:web","step_kind":"start","node":"web","index":2,"total":3,"code":null,"at_epoch_ms":1760000000250,"duration_ms":null}"#,
            Some(1_760_000_000),
        );
        assert_eq!(started.sequence, 3);
        assert_eq!(started.event, "Started");
        assert_eq!(
            started.step.as_ref().map(StepProgress::text).as_deref(),
            Some("start:web 2/3")
        );
        assert_eq!(
            (started.at_ms, started.duration_ms, started.code),
            (Some(1_760_000_000_250), None, None)
        );
        let failed = OpEvent::parse(
            4,
            r#"{"event":"Failed","step_id":"start:web","index":2,"total":3,"code":"engine.step.failed","at_epoch_ms":1760000001250,"duration_ms":1000}"#,
            Some(1_760_000_001),
        );
        assert_eq!(
            (failed.duration_ms, failed.code.as_deref()),
            (Some(1000), Some("engine.step.failed"))
        );
        let journal = OpEvent::parse(
            1,
            r#"{"event":"VerificationJournal","version":1}"#,
            Some(1_760_000_000),
        );
        assert_eq!(
            (journal.event.as_str(), journal.step, journal.at_ms),
            ("VerificationJournal", None, Some(1_760_000_000_000))
        );
        let junk = OpEvent::parse(2, "not json", None);
        assert_eq!((junk.event.as_str(), junk.at_ms), ("?", None));
    }
}
