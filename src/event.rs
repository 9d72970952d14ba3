//! The one event enum that flows into the render loop. Every background
//! thread (store watcher, reaper, helper supervisor, operator actions) and the
//! terminal send [`Event`]s over one unbounded channel; the loop applies them
//! to the UI state in arrival order.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::model::Snapshot;

/// The sending half every producer holds.
pub type EventSender = tokio::sync::mpsc::UnboundedSender<Event>;
/// The receiving half the render loop owns.
pub type EventReceiver = tokio::sync::mpsc::UnboundedReceiver<Event>;

/// Everything the render loop reacts to.
#[derive(Debug, Clone)]
pub enum Event {
    /// A terminal event (key, mouse, resize).
    Input(crossterm::event::Event),
    /// One second passed: countdowns move, nothing is re-read.
    Tick,
    /// A fresh consistent snapshot from the watcher (shared, never copied per
    /// frame).
    Snapshot(Arc<Snapshot>),
    /// The store's health changed (busy, unreadable, back to normal).
    StoreHealth(StoreHealth),
    /// Something the reaper or an operator action did.
    Activity(Activity),
    /// Something the helper supervisor reported.
    Supervisor(SupervisorNote),
    /// A termination signal arrived (SIGTERM, SIGHUP, SIGINT): quit cleanly.
    Terminate(&'static str),
    /// This console became the active one for its store, or is standing by.
    Role(RoleState),
}

/// Whether this console runs the reaper and the helper supervisor. One
/// console per store does (it holds the succession role `console` in
/// `<state_dir>/stackless-tui/roles/`); any other watches and takes keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleState {
    /// This console holds the `console` role: reaper and helper run here
    /// (unless turned off by flags).
    Active,
    /// Another console holds the role; this one runs neither and takes over
    /// within a tick of that console exiting or dying.
    Standby {
        /// The active console's pid, when its claim record says.
        pid: Option<u32>,
    },
}

/// The store watcher's view of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreHealth {
    /// Reads succeed.
    Ok,
    /// Another process has held a lock since this instant; the last snapshot
    /// is still shown.
    Busy(Instant),
    /// The store cannot be read right now (the message says why); the watcher
    /// retries every second.
    Error(String),
}

/// Who did something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The background reaper (stackless §6 rules).
    Reaper,
    /// The operator, from a key.
    Operator,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Reaper => "reaper",
            Self::Operator => "operator",
        })
    }
}

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
}

impl fmt::Display for ActivityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Started => "tearing down",
            Self::Reaped => "reaped",
            Self::TornDown => "torn down",
            Self::SkippedLocked => "skipped: locked",
            Self::WaitingBackoff => "waiting out backoff",
            Self::Failed => "failed",
            Self::Collected => "GC'd",
            Self::Refused => "refused",
            Self::Aborted => "aborted",
            Self::WouldReap => "would reap",
            Self::Error => "error",
        })
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
    /// How long the action took (teardowns), for the audit trail.
    pub duration: Option<std::time::Duration>,
}

impl Activity {
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
            duration: None,
        }
    }
}

/// What kind of thing the helper supervisor reported (succession's
/// `supervision::Event`, owned, plus what this console did about it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SupervisorKind {
    /// The role is held by someone to leave alone (our own helper, or an
    /// unidentified tenant within its grace).
    Occupied,
    /// A tenant of a finished run is in the way.
    Superseded,
    /// An unidentified tenant is in the way.
    SupersededAnonymously,
    /// The helper started.
    Started,
    /// The helper exited.
    Exited,
    /// The helper command could not be spawned.
    SpawnFailed,
    /// Waiting before the next start.
    BackingOff,
    /// An eviction was attempted (outcome in the text).
    Evicted,
    /// The console stopped the helper (quit).
    Stopped,
}

/// One supervisor event, timestamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorNote {
    /// Unix seconds when it was reported.
    pub at: i64,
    /// What kind of event.
    pub kind: SupervisorKind,
    /// succession's ready-made line (its `Display`), or this console's.
    pub text: String,
    /// For [`SupervisorKind::BackingOff`]: when the next start is due, so the
    /// pane can count down live.
    pub until: Option<Instant>,
}
