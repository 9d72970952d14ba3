//! The one event enum that flows into the render loop. Every background
//! thread (store watcher, reaper, helper supervisor, operator actions) and the
//! terminal send [`Event`]s over one unbounded channel; the loop applies them
//! to the UI state in arrival order.

use std::sync::Arc;
use std::time::Instant;

use crate::model::Snapshot;
pub use crate::model::activity::{Activity, ActivityKind, Actor};

/// The sending half every producer holds.
pub type EventSender = tokio::sync::mpsc::UnboundedSender<Event>;
/// The receiving half the render loop owns.
pub type EventReceiver = tokio::sync::mpsc::UnboundedReceiver<Event>;

/// Everything the render loop reacts to.
#[derive(Debug, Clone)]
pub enum Event {
    /// A terminal event (key, mouse, resize) with no read instant: taken
    /// as read now (tests, and anything not from the terminal thread).
    Input(crossterm::event::Event),
    /// A terminal event from the `terminal-input` thread, with the instant
    /// its burst was read (`console::input`): a key read before a
    /// confirmation dialog was first drawn does not answer it
    /// (`model::confirm`).
    InputAt(crossterm::event::Event, Instant),
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
    /// The stackless controller serving the store changed (started, stopped,
    /// another pid, its persistence warning); sent by the watcher.
    Controller(crate::model::controller::ControllerState),
    /// Why the reaper (and the operator's `r`/`d`) is held, all reasons
    /// at once (`crate::model::reaper_status::PauseReasons`): a wall clock
    /// that looks wrong, a failed reap the store would not record, an
    /// audit trail that does not take writes. Sent by whoever learns of a
    /// change (`crate::recorder::Reporter`): the clock watch (every
    /// second) and the reaper's pass, the teardown jobs, the recorder.
    Pauses(crate::model::reaper_status::PauseReasons),
    /// New lines, a rotation or truncation note, or the watch mode of the
    /// open logs view; sent by the `logs-follower` thread (`crate::logs`).
    Logs(crate::model::logview::LogUpdate),
    /// This console's reaper thread: paused by the operator or not, when
    /// its next pass is due, the last pass's totals
    /// (`crate::reaper::control`). Sent at each pass start, when a pass
    /// finishes and when the pause changes.
    Reaper(crate::model::reaper_status::ReaperStatus),
    /// How the watcher learns of commits (sent once it knows): woken by the
    /// file system, or polling. Shown in the header.
    Watch(WatchMode),
}

/// How the store watcher notices other processes' commits
/// (`crate::store::watcher`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// Woken by the kernel (inotify through the `notify` crate) when the
    /// store file or its `-wal` changes; `PRAGMA data_version` confirms.
    Notify,
    /// No watch could be set (a network file system, a directory that
    /// cannot be watched, `STACKLESS_TUI_WATCH=poll`): `data_version`
    /// polled every this long.
    Poll(std::time::Duration),
}

impl WatchMode {
    /// The header's text: `watch: inotify`, `watch: poll 100ms`.
    #[must_use]
    pub fn label(self) -> String {
        match self {
            Self::Notify => "watch: inotify".to_owned(),
            Self::Poll(every) => format!("watch: poll {}ms", every.as_millis()),
        }
    }
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
    /// The role could not be taken for another reason (a planted link,
    /// permissions: `crate::roles::Refused::Error`): the reaper does not
    /// run here; the role thread tries again every poll.
    Unavailable {
        /// Why, as the role thread said it.
        reason: String,
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
