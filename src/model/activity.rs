//! What the reaper, the operator's keys and other processes did to an
//! instance: one [`Activity`] is one line of the Activity pane, one audit
//! line and one log line (see `crate::recorder`). Pure data, no I/O.

use std::fmt;

/// Who did something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The background reaper (stackless §6 rules).
    Reaper,
    /// The operator, from a key.
    Operator,
    /// The stackless controller (0.4.0), as observed in the store: an
    /// operation of its queue that finished between two snapshots.
    Controller,
    /// Someone else, as observed in the store between two snapshots (an
    /// instance that appeared or was tombstoned by another process).
    Observed,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Reaper => "reaper",
            Self::Operator => "operator",
            Self::Controller => "controller",
            Self::Observed => "observed",
        })
    }
}

/// A dry run's line for a tombstone GC would collect (D14): a
/// [`ActivityKind::WouldReap`] that runs no teardown command.
pub(crate) const WOULD_GC_TOMBSTONE: &str = "would GC tombstone";

/// What happened to an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActivityKind {
    /// A teardown started.
    Started,
    /// A teardown succeeded (`down` exited 0); the reap-attempt row was
    /// cleared.
    Reaped,
    /// The operator's `d` succeeded (`down` exited 0).
    TornDown,
    /// Skipped: a live operation (or a foreign host) holds the lock, or `down`
    /// answered `state.lock.held`.
    SkippedLocked,
    /// Skipped: a previous failure's backoff has not run out.
    WaitingBackoff,
    /// Skipped: left to the stackless controller (v14): a queued or running
    /// operation on the instance (`operation pending (down running)`), or
    /// tombstones due that the controller collects.
    Skipped,
    /// The teardown failed; the attempt was recorded with a backoff.
    Failed,
    /// A tombstone past 7 days was garbage-collected (D14).
    Collected,
    /// Refused without acting (hostile name, key rules, store generation).
    Refused,
    /// Aborted: the instance changed between the decision and the teardown.
    Aborted,
    /// `--dry-run`: the reaper would have reaped this instance.
    WouldReap,
    /// The reaper itself hit an error (store busy, unreadable).
    Error,
    /// A controller operation was cancelled (`stackless operation cancel`
    /// took: a queued one is cancelled, a running `up` stops at its next
    /// step), or one was observed to end cancelled.
    Cancelled,
    /// The operator's cancel was recorded on a running operation
    /// (`stackless operation cancel` on a running `up`: its status stays
    /// `running`, it stops at its next step). `Cancelled` only once the
    /// store shows the operation cancelled.
    CancelRequested,
    /// A controller operation was observed to succeed.
    Succeeded,
    /// The operator's `d` put a `down` in the controller's queue behind the
    /// instance's pending operation (`stackless down NAME --no-wait`,
    /// stackless 0.4.0).
    Queued,
    /// A controller operation was observed to end interrupted (a controller
    /// restart under an unjournaled `verify`).
    Interrupted,
    /// An instance was observed to appear (or a tombstoned name to be born
    /// again).
    Appeared,
    /// An instance was observed to be tombstoned by another process.
    Tombstoned,
    /// `reap --once` was interrupted (an operator's signal, or the
    /// `--controller` launcher gone): a running teardown was stopped (its
    /// group got TERM, then KILL) or queued ones were not started; nothing
    /// is recorded in the store. Audited as `teardown`/`interrupted`.
    Stopped,
    /// Who reaps changed: this console's reaper stood by for the
    /// controller's lease reaper, took over, or gave its role up while
    /// paused (`P`). The detail says who reaps now.
    Role,
    /// The operator's renew took (`stackless up --name NAME --lease D`,
    /// stackless 0.4.0): the detail says for how long.
    Renewed,
    /// The operator's renew did not take: stackless refused (its envelope
    /// kept) or did not answer.
    RenewFailed,
    /// The operator's verify passed (`stackless verify NAME`): the check,
    /// and the lease it renewed.
    Verified,
    /// The operator's verify failed: the failing check and its
    /// remediation (the envelope kept), or why it did not run.
    VerifyFailed,
    /// `--dry-run`: what the operator's renew or verify would have run.
    WouldRun,
    /// The console found no store at stackless's default path and created
    /// an empty one there, as stackless does on its first run (said once,
    /// at start).
    StoreCreated,
}

impl ActivityKind {
    /// The command whose `--json` answer an entry of this kind keeps (its
    /// envelope): `up --json` for a renew (0.4.0 renews with `up --name
    /// NAME --lease D`), `verify --json` for a verify, `down --json` for
    /// every other (a teardown's).
    #[must_use]
    pub const fn answered_by(self) -> &'static str {
        match self {
            Self::Renewed | Self::RenewFailed => "up --json",
            Self::Verified | Self::VerifyFailed => "verify --json",
            _ => "down --json",
        }
    }
}

impl fmt::Display for ActivityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Started => "tearing down",
            Self::Reaped => "reaped",
            Self::TornDown => "torn down",
            Self::SkippedLocked => "skipped: locked",
            Self::WaitingBackoff => "waiting out backoff",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
            Self::Collected => "GC'd",
            Self::Refused => "refused",
            Self::Aborted => "aborted",
            Self::WouldReap => "would reap",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
            Self::CancelRequested => "cancel requested",
            Self::Succeeded => "succeeded",
            Self::Queued => "queued",
            Self::Interrupted => "interrupted",
            Self::Appeared => "appeared",
            Self::Tombstoned => "tombstoned",
            Self::Stopped => "stopped",
            Self::Role => "role",
            Self::Renewed => "lease renewed",
            Self::RenewFailed => "renew failed",
            Self::Verified => "verified",
            Self::VerifyFailed => "verify failed",
            Self::WouldRun => "would run",
            Self::StoreCreated => "store",
        })
    }
}

/// Most bytes of a failed teardown's envelope an entry keeps
/// ([`Activity::envelope`]): 64 KiB, far beyond any real envelope, and
/// bounded for the 500 entries the Activity log keeps.
pub(crate) const ENVELOPE_KEPT: usize = 64 * 1024;

impl Activity {
    /// Keep `envelope` (a failed teardown's answer) on this entry, cut at a
    /// character boundary to [`ENVELOPE_KEPT`] bytes.
    #[must_use]
    pub fn with_envelope(mut self, envelope: &str) -> Self {
        let mut end = envelope.len().min(ENVELOPE_KEPT);
        while !envelope.is_char_boundary(end) {
            end -= 1;
        }
        self.envelope = envelope[..end].to_owned();
        self
    }
}

/// One line of the activity pane (and, later, of the audit trail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// Unix seconds when it happened.
    pub at: i64,
    /// Who acted.
    pub actor: Actor,
    /// The instance name as stored (sanitized only when drawn). Empty for
    /// pass-wide entries such as a busy store.
    pub instance: String,
    /// What happened.
    pub kind: ActivityKind,
    /// Details: the failure reason, the lock case, the retry time, ...
    pub detail: String,
    /// The teardown's stderr tail, kept for the log (not drawn in the row).
    pub stderr_tail: String,
    /// A failed teardown's answer as `down --json` gave it (the whole
    /// error envelope as compact JSON when stdout parsed, else its last
    /// line or the exit reason: `envelope::failure_reason`), at most
    /// [`ENVELOPE_KEPT`] bytes, for the full-text view (the operator can
    /// read the whole failure, not only its cut line).
    /// Empty for other entries.
    pub envelope: String,
    /// How long the action took (teardowns), for the audit trail.
    pub duration: Option<std::time::Duration>,
    /// Read back from the audit trail when the console started (a teardown
    /// an earlier console ran), not something that happened since.
    pub restored: bool,
    /// The controller operation this entry tells of (an observed outcome,
    /// the operator's queued teardown), `None` for any other entry.
    pub operation: Option<OpRef>,
    /// A bulk action's refusals, each its own entry (refused ones are
    /// listed with their reason), when this entry stands for
    /// them in the audit trail: the trail writes one line per entry of the
    /// batch, in one write, and not this entry's own (measured: one
    /// `lstat` and one `write` per refused line froze the render thread). The log gets this entry's one line. Empty for every
    /// other entry.
    pub batch: Vec<Activity>,
}

impl Activity {
    /// Replace `redactor`'s values in the texts that came from a teardown
    /// or the store (detail, stderr tail, envelope by field, each entry of
    /// a batch), before it is audited, logged or shown
    /// (`crate::model::redact`). The instance name is left as it is, as
    /// stackless leaves `instance`.
    pub fn redact(&mut self, redactor: &super::redact::Redactor) {
        if redactor.may_change(&self.envelope) {
            self.envelope = redactor.json_text(&self.envelope);
        }
        for entry in &mut self.batch {
            entry.redact(redactor);
        }
        if redactor.is_empty() {
            return;
        }
        self.detail = redactor.text(&self.detail);
        // The tail is the last 4 KiB of stderr: it may begin inside a value.
        self.stderr_tail = redactor.cut_text(&self.stderr_tail, true, false);
    }

    /// An entry with no stderr.
    #[must_use]
    pub fn new(
        at: i64,
        actor: Actor,
        instance: &str,
        kind: ActivityKind,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            at,
            actor,
            instance: instance.to_owned(),
            kind,
            detail: detail.into(),
            stderr_tail: String::new(),
            envelope: String::new(),
            duration: None,
            restored: false,
            operation: None,
            batch: Vec::new(),
        }
    }

    /// This entry, telling of the controller operation `operation`.
    #[must_use]
    pub fn with_operation(mut self, operation: OpRef) -> Self {
        self.operation = Some(operation);
        self
    }

    /// Whether `newer` repeats this entry, so the Activity log folds it
    /// into this line (`x2`, counted exactly): the same actor, instance
    /// and kind, and the same detail, or, for two outcomes of controller
    /// operations, the same verb and error (their run and queue times
    /// differ from one operation to the next: the controller's lease
    /// reaper retrying a failing `down` is one line, `x5`).
    #[must_use]
    pub fn repeats(&self, newer: &Self) -> bool {
        self.actor == newer.actor
            && self.instance == newer.instance
            && self.kind == newer.kind
            && (self.detail == newer.detail
                || matches!(
                    (&self.operation, &newer.operation),
                    (Some(a), Some(b)) if a.verb == b.verb && a.error == b.error
                ))
    }

    /// Whether `newer` repeats this failure with other lines between them,
    /// so the Activity log folds it into this line and moves the line to
    /// the newest place (the controller's lease reaper failing every
    /// minute on four instances in turn is four lines, each counted
    /// exactly): both failures, and [`Activity::repeats`] (the same actor,
    /// instance, kind and error).
    #[must_use]
    pub fn repeats_apart(&self, newer: &Self) -> bool {
        self.kind == ActivityKind::Failed && self.repeats(newer)
    }

    /// Whether this entry is a failed teardown, what the Activity title's
    /// `failed` counts: a `down` this console ran (the reaper's, the
    /// operator's `d`), or a controller `down` operation that failed (its
    /// lease reaper's, the operator's queued one). A failed `up`, renew
    /// or verify is no teardown (stackless §6: a reap is a `down`).
    #[must_use]
    pub fn is_failed_teardown(&self) -> bool {
        self.kind == ActivityKind::Failed
            && self.operation.as_ref().is_none_or(|op| op.verb == "down")
    }
}

/// The controller operation an Activity entry tells of (stackless 0.4.0
/// `operations` rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpRef {
    /// `operations.id`.
    pub id: String,
    /// `operations.verb`: `up`, `down`, `verify`, `gc`.
    pub verb: String,
    /// Its error's `code: message` (`error_json`), empty when none.
    pub error: String,
}
