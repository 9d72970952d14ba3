//! The one event enum that flows into the render loop. Every background
//! thread (store watcher, reaper, helper supervisor, operator actions) and the
//! terminal send [`Event`]s over one unbounded channel; the loop applies them
//! to the UI state in arrival order.

use std::sync::Arc;
use std::time::Instant;

use crate::model::Snapshot;
pub use crate::model::activity::{Activity, ActivityKind, Actor, OpRef};

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
    /// The I/O worker's answer to a read the UI asked for (the detail, the
    /// logs view's opens, scroll-back, searches and whole lines:
    /// `crate::console::io_worker`). Tagged with what it belongs to (the
    /// instance's name, the logs session): the UI drops answers to a view
    /// closed or opened again since.
    Answer(Answer),
    /// A fleet host's connection queued lines or was started (the console
    /// over a fleet, `crate::fleet::console`; never sent to the one-host
    /// console).
    Host(crate::model::fleet::wake::HostWake),
    /// The replay's reader (`crate::console::replay`): the recording as
    /// it was at the cursor (never sent to a live console).
    Replay(Box<crate::model::history::cursor::Frame>),
    /// Who records the store, in the header's words (`recording (7d,
    /// 256 MB)`, `recorded by pid 4242`, `not recording (--no-record)`):
    /// sent by the console at start (`crate::history::console`).
    Recording(String),
    /// The replay's reader: an instance's timeline read from the
    /// recording up to the cursor (`T`).
    Timeline(Box<crate::model::history::timeline::Shown>),
}

/// What the UI asks the I/O worker (`crate::console::io_worker`) to do: reads of
/// the store and of files, which never run on the render thread. Each read
/// is answered by an [`Event::Answer`] of the same name. Everything a
/// request needs travels in it (the logs' paths included), so the worker
/// keeps no copy of the UI's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Read `name`'s detail (`Store::instance_detail`, its services
    /// probed): asked for by Enter, and again on every new snapshot while
    /// the detail view is open (so it stays current). Answered by
    /// [`Answer::Detail`].
    OpenDetail {
        /// The instance as stored (may be hostile: use it only as a SQL
        /// parameter, never on a command line).
        name: String,
    },
    /// Open an instance's logs (`l`, or `G` after scrolling back so far
    /// that newer lines were dropped): `crate::logs::open_all`, answered by
    /// [`Answer::LogsOpened`], then follow them (the follower's lines come
    /// as `Event::Logs` of this session). Replaces any follower running.
    OpenLogs {
        /// Which open this is.
        session: u64,
        /// The logs directory to open.
        request: crate::model::logview::LogsRequest,
    },
    /// Read older lines of one service, before `before`
    /// (`crate::logs::history::older`): [`Answer::LogsOlder`].
    LogsOlder {
        /// The session the service index belongs to.
        session: u64,
        /// The service index (as opened).
        service: u16,
        /// Its log (`<dir>/<service>.log`, as the open found it).
        base: std::path::PathBuf,
        /// Read the lines before this position.
        before: crate::model::logtext::LinePos,
    },
    /// Read older lines of several services for the all-services tab: up
    /// to `want` before each position (`crate::logs::history::older_all`):
    /// [`Answer::LogsOlderAll`].
    LogsOlderAll {
        /// The session the service indexes belong to.
        session: u64,
        /// Every service's log, by service index.
        bases: Vec<std::path::PathBuf>,
        /// Per service index, read the lines before this position.
        reads: Vec<(u16, crate::model::logtext::LinePos)>,
        /// The most lines read per service.
        want: usize,
    },
    /// Search one service's older history (`n` past the lines held):
    /// backwards from `before` (`crate::logs::search::search_history`,
    /// bounded): [`Answer::LogsSearchOlder`].
    LogsSearchOlder {
        /// The session the service index belongs to.
        session: u64,
        /// The service index (as opened).
        service: u16,
        /// Its log.
        base: std::path::PathBuf,
        /// Search the lines before this position.
        before: crate::model::logtext::LinePos,
        /// The search, as typed.
        query: String,
        /// What the lines are redacted by before they are matched, as the
        /// view shows them (the snapshot's, `crate::model::redact`).
        redactor: std::sync::Arc<crate::model::redact::Redactor>,
    },
    /// Search one service's newer history (`N` past the lines held when
    /// newer lines were dropped): forwards from after `after`
    /// (`crate::logs::search::search_newer`, bounded):
    /// [`Answer::LogsSearchNewer`].
    LogsSearchNewer {
        /// The session the service index belongs to.
        session: u64,
        /// The service index (as opened).
        service: u16,
        /// Its log.
        base: std::path::PathBuf,
        /// Search the lines after this one (the newest held).
        after: crate::model::logtext::LinePos,
        /// The search, as typed.
        query: String,
        /// What the lines are redacted by before they are matched, as the
        /// view shows them (the snapshot's, `crate::model::redact`).
        redactor: std::sync::Arc<crate::model::redact::Redactor>,
    },
    /// Read the whole line that a piece of a long line belongs to (Enter
    /// or `e` on a `↪` piece) from its file
    /// (`crate::logs::history::whole_line_text`): [`Answer::LogsLineWhole`].
    LogsLineWhole {
        /// The session the service index belongs to.
        session: u64,
        /// The service index (as opened).
        service: u16,
        /// Its log.
        base: std::path::PathBuf,
        /// Where the piece starts.
        piece: crate::model::logtext::LinePos,
        /// The full-text view's title.
        title: String,
    },
    /// The logs view closed: stop following (no answer).
    CloseLogs,
    /// Read every event of one controller operation
    /// (`Store::operation_events`) for the operation overlay: asked for
    /// when it opens, and again when a snapshot shows the operation
    /// changed (so it follows a running one live, like `stackless
    /// operation wait`). Answered by [`Answer::OperationEvents`].
    OperationEvents {
        /// `operations.id` (used only as a SQL parameter).
        id: String,
    },
    /// Read the output of a verify that passed (its `log_path`, stackless
    /// 0.4.0 `verify.rs`), its last [`VERIFY_OUTPUT_BYTES`] at most, for
    /// the verify overlay. Answered by [`Answer::VerifyOutput`].
    VerifyOutput {
        /// The instance verified.
        instance: String,
        /// The check's output file, as stackless named it.
        path: std::path::PathBuf,
    },
}

/// How much of a verify's output file the overlay reads: its last 64 KiB.
pub const VERIFY_OUTPUT_BYTES: u64 = 64 * 1024;

/// The last bytes of a text file, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailText {
    /// The text (lossy UTF-8; from the first whole line when cut).
    pub text: String,
    /// Whether the file held more before it (the read was bounded).
    pub cut: bool,
}

/// A read the render loop handed to the I/O worker, answered. Each
/// variant names the request it answers (`crate::ui::Effect`).
#[derive(Debug, Clone)]
pub enum Answer {
    /// `name`'s detail: `Ok(Some(..))` read, `Ok(None)` no such instance,
    /// `Err(message)` the read failed (`StoreError::to_string()`).
    Detail {
        /// The instance asked for.
        name: String,
        /// What the read found.
        result: Result<Option<crate::model::services::DetailView>, String>,
    },
    /// The logs view opened: what was found and each service's tail.
    LogsOpened {
        /// The logs session asked for.
        session: u64,
        /// The tails.
        opened: crate::model::logview::Opened,
        /// Where each service's log is read from (by service index), for
        /// the scroll-back requests; empty for a service not followed.
        bases: Vec<std::path::PathBuf>,
    },
    /// Older lines of one service (oldest first) and where to go on from.
    LogsOlder {
        /// The logs session asked for.
        session: u64,
        /// The service index.
        service: u16,
        /// The lines read.
        lines: Vec<crate::model::logview::LogLine>,
        /// Where older lines are.
        older: crate::model::logview::Older,
    },
    /// Older lines of several services, for the all-services tab: per
    /// service, the lines (oldest first) and where to go on from.
    LogsOlderAll {
        /// The logs session asked for.
        session: u64,
        /// `(service, lines, older)` per service read.
        read: Vec<(
            u16,
            Vec<crate::model::logview::LogLine>,
            crate::model::logview::Older,
        )>,
    },
    /// A search into one service's older history (`n`).
    LogsSearchOlder {
        /// The logs session asked for.
        session: u64,
        /// The service index.
        service: u16,
        /// What the search found.
        result: crate::model::logview::HistorySearch,
    },
    /// A search into one service's newer history (`N`).
    LogsSearchNewer {
        /// The logs session asked for.
        session: u64,
        /// The service index.
        service: u16,
        /// What the search found.
        result: crate::model::logview::HistorySearch,
    },
    /// One operation's events, in the order written: `Err(message)` the
    /// read failed.
    OperationEvents {
        /// The operation asked for.
        id: String,
        /// What the read found.
        result: Result<Vec<crate::model::operation::OpEvent>, String>,
    },
    /// A passed verify's output: `Err(message)` the file could not be
    /// read. Redacted as it enters the App (`Redactor::child_tail`).
    VerifyOutput {
        /// The instance verified.
        instance: String,
        /// The file read.
        path: std::path::PathBuf,
        /// What the read found.
        result: Result<TailText, String>,
    },
    /// The whole line a piece of a long line belongs to, read again from
    /// its file.
    LogsLineWhole {
        /// The logs session asked for.
        session: u64,
        /// The full-text view's text.
        text: crate::model::fulltext::FullText,
    },
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
    /// `--reaper auto`: the controller with this pid runs stackless's lease
    /// reaper, so this console's reaper stands by (the role not held) and
    /// takes over when it stops or proves to have none.
    ControllerReaps {
        /// The controller's pid.
        pid: u32,
    },
    /// The operator paused this console's reaper (`P`): the role is given
    /// up so that another console, the controller or `reap --once` may
    /// reap meanwhile; who does, as last seen.
    Released {
        /// Who reaps now.
        now: crate::model::controller::Reaping,
    },
    /// This console's reaper is off (`--no-reaper`, `--reaper off`,
    /// read-only): who reaps instead, as seen every poll without taking
    /// any role.
    Watching {
        /// Who reaps now.
        now: crate::model::controller::Reaping,
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
    /// For [`SupervisorKind::BackingOff`]: when the next start is due (unix
    /// seconds, the back-off rounded up), so the pane counts down on the
    /// time it is drawn at (`App::now`, the clock every event is handled
    /// at).
    pub until: Option<i64>,
}
