//! The console's UI state and its reaction to events: selection, focus,
//! scrolling, the bounded and coalesced logs, the operator keys and the
//! confirmation dialog. Drawing lives in [`super::panes`]; this module never
//! touches the terminal.
//!
//! Where to look:
//! - this file: the [`App`] state, [`App::handle`] (one event in, maybe a
//!   [`Effect`] out) and the read-only accessors the panes draw from;
//! - `config`: [`AppConfig`] (given at start) and [`Effect`] (asked of the
//!   console);
//! - `input`: key and mouse handling, paging and scrolling;
//! - `actions`: what Enter, `r`, `d` and `y` act on, and their checks;
//! - `detail`: the detail view's field cursor (`j`/`k`) and `y` on a field;
//! - `rows`: the Instances rows (sort, filter, selection across snapshots);
//! - `operations`: the Operations pane's selection and overlay, `c` (cancel
//!   an operation) and the changes observed between snapshots;
//! - `logs`: the logs view (`l`): tabs, follow/pause, scroll-back, search;
//! - `flash`: the footer's flash message and the operator's own activity;
//! - `log`: the bounded, coalescing [`Log`] of the Supervisor and Activity
//!   panes;
//! - `fulltext`: the full-text view of a cut line ([`FullView`]);
//! - `status`: what the header and its banners read (role, clock doubt,
//!   why `r`/`d` are off, the reaper's text, teardown, health, zone).

mod actions;
mod answers;
mod bulk;
mod command;
mod command_line;
mod config;
mod copy;
mod detail;
mod flash;
mod fleet;
mod fleet_command;
mod fleet_filter;
mod fleet_question;
pub mod focus;
mod full_view;
mod fulltext;
mod help;
mod help_view;
pub mod host_view;
mod input;
mod layers;
mod log;
mod logs;
mod logs_search;
mod logs_view;
mod marks;
mod mouse;
mod operation_view;
mod operations;
pub mod over_fleet;
mod reaper;
mod remote;
pub mod replay;
mod rows;
mod status;
mod verb_question;
mod verbs;
mod viewport;

use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

pub use bulk::{BULK_NAMES_SHOWN, Bulk};
pub use command_line::CommandLine;
pub use config::{AppConfig, Effect, HelperMode, ReaperMode, TeardownInfo};
pub use flash::{FLASH_SECS, Flash, FlashLevel};
pub use fleet_question::FleetQuestion;
pub use focus::Focus;
pub use full_view::FullView;
pub use help_view::HelpView;
pub use host_view::{HostView, ToView};
pub use input::WHEEL_STEP;
pub use layers::{Confirm, Layer, LayerKind, Layers, Question};
pub use log::{LOG_CAPACITY, Log, Logged};
pub use logs_view::{LogsView, ServiceTab};
pub use operation_view::{OpEvents, OperationView};
pub(crate) use operations::AFTER_ALL;
pub use reaper::ReaperView;
pub use remote::Accepted;
pub use replay::ReplayView;
use rows::InstancesTable;
pub use rows::SortKey;
pub use verb_question::VerbQuestion;
pub(crate) use viewport::Viewport;

use flash::flash_live;

use super::Areas;
use super::detail::Detail;
use super::view::HelperState;
use crate::event::{Activity, Event, RoleState, StoreHealth, SupervisorNote};
use crate::model::controller::ControllerState;
use crate::model::{Instance, Snapshot};

/// Counts for the header, computed once per snapshot (and per tick for the
/// expired count), never per frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Instances with status `active`.
    pub active: usize,
    /// Instances with status `tombstoned`.
    pub tombstoned: usize,
    /// Active instances whose lease has expired at `now`.
    pub expired: usize,
}

/// The snapshot on screen, what is derived from it once per snapshot, and
/// where its rows come from when not the store (a fleet, a replay).
#[derive(Debug)]
struct Shown {
    snapshot: Arc<Snapshot>,
    /// The snapshot replaced, until [`App::settle`] observes and frees it.
    retired: Option<Arc<Snapshot>>,
    /// Whether a snapshot arrived yet.
    loaded: bool,
    /// The header's counts (the expired count per tick).
    counts: Counts,
    /// Over a fleet: its hosts' rows, links and view ([`App::over_fleet`]),
    /// instead of the snapshot.
    fleet: Option<Box<crate::ui::app::over_fleet::FleetState>>,
    /// The cursors of the Activity and Hosts panes over a fleet (the
    /// Operations and Backoffs panes' are the App's [`Selection`]s).
    fleet_cursors: FleetCursors,
    /// A frame is owed by the App itself (over a fleet): the terminal was
    /// resized, or a key changed the App's own layers over the fleet (the
    /// help); otherwise a frame is owed only when the fleet's rows changed.
    owed: bool,
    /// The replay's cursor (`stackless-tui replay`); `None` live.
    replay: Option<replay::ReplayView>,
}

/// The cursors over a fleet of the panes that have no [`Selection`] of
/// the App's: rows from the top (Hosts) or from the newest (Activity).
#[derive(Debug, Default, Clone, Copy)]
struct FleetCursors {
    /// The Activity pane's line, counted from the newest (0).
    activity: usize,
    /// The Hosts pane's row.
    hosts: usize,
}

/// A pane's selected row, followed into a new snapshot by its key (the
/// instance name of a backoff, the id of an operation).
#[derive(Debug, Default)]
struct Selection {
    /// The row (an index into the snapshot's list).
    index: usize,
    /// Its key, to find it again after a new snapshot.
    key: Option<String>,
}

/// What the header and its banners say about the store, the role, the
/// controller and the reaper, as the background threads last reported.
#[derive(Debug)]
struct Status {
    health: StoreHealth,
    role: RoleState,
    controller: ControllerState,
    /// How the watcher learns of commits (`None` until it says).
    watch: Option<crate::event::WatchMode>,
    /// Who records the store, in words (`Event::Recording`; `None`:
    /// not said, as in replay and over a fleet).
    recording: Option<String>,
    /// The wall clock's doubt as last checked (`Event::Pauses`): while set,
    /// the reaper and GC are paused and `r` is off.
    clock_doubt: Option<String>,
    /// Why the audit trail does not take writes, while it does not.
    audit_failure: Option<String>,
    /// Why the store does not record the reaper's failures, while it does
    /// not (`Event::Pauses`): the reaper is paused and `r`/`d` are off.
    unrecorded: Option<String>,
    /// The reaper as this console controls it: the pause asked for (`P`)
    /// and the thread's last report.
    reaper: ReaperView,
}

/// What the console sets once at start (besides [`AppConfig`]).
#[derive(Debug)]
struct Settings {
    /// Whether a helper is configured (the Supervisor pane's empty state).
    helper: HelperState,
    /// The teardown command (`d`'s dialog, the header's missing-program
    /// banner).
    teardown: TeardownInfo,
    /// The teardown command `Y` copies (`None`: the default template).
    down: Option<crate::reaper::DownCommand>,
    /// The zone log times are shown in (UTC until the console sets the
    /// local one; `--utc` keeps UTC).
    zone: jiff::tz::TimeZone,
    /// The stackless program renew and verify run (`--stackless`).
    stackless: String,
    /// `--dry-run`: renew and verify only say what they would run (the
    /// question says "would run").
    dry_run: bool,
    /// Whether a copy's flash has said how to let OSC 52 through (said
    /// once a session: [`App::sent_to_clipboard`]).
    clipboard_told: bool,
    /// Whether the console runs inside tmux (`TMUX` set): only then does
    /// the first copy's flash suggest tmux's `set-clipboard`.
    under_tmux: bool,
    /// The pid of the demo's controller stand-in (`--demo`: a thread of
    /// this console playing 0.4.0's controller, with no lease reaper),
    /// shown as the controller while no real one is probed.
    controller_stand_in: Option<u32>,
}

/// How the screen is arranged by the operator's keys.
#[derive(Debug, Default, Clone, Copy)]
struct Arrangement {
    /// The focused pane has the whole body (`z`).
    zoom: bool,
    /// The header's banners put away into one line (`b`).
    banners_away: bool,
}

/// What this console itself did, told apart from what other processes did
/// to the same store (the Activity pane's actors and its title's counts).
#[derive(Debug, Default)]
struct Ours {
    /// Names this console tears down (or did lately), with the unix time
    /// until which a change seen on them is its own (`i64::MAX` in flight).
    names: std::collections::HashMap<String, i64>,
    /// The controller `down` operations this console's teardowns submitted
    /// (stackless 0.4.0), told apart from the controller's own.
    downs: crate::model::observe::OwnDowns,
    /// The controller `down`s that finished in the hour before the first
    /// whole snapshot (logged as no line), for the Activity title's counts
    /// ([`crate::model::observe::finished_downs_last_hour`]); `None` until
    /// that snapshot.
    before_start: Option<Vec<Activity>>,
}

/// The whole UI state: the snapshot shown, the panes' tables, the layers
/// over them, and what the background threads last reported. Changed only
/// through [`App::handle`] (and the start-up setters).
#[derive(Debug)]
pub struct App {
    config: AppConfig,
    settings: Settings,
    /// The time of the last event (unix seconds).
    now: i64,
    /// The monotonic instant of the last event.
    clock: Instant,
    shown: Shown,
    status: Status,
    /// Operator actions the UI decided by itself, for the audit trail.
    outbox: Vec<Activity>,
    focus: Focus,
    /// The Instances table: order, sort, filter, marks, selection.
    instances: InstancesTable,
    /// The Backoffs pane's row.
    backoffs: Selection,
    /// The Operations pane's row.
    operations: Selection,
    supervisor: Log<SupervisorNote>,
    activity: Log<Activity>,
    /// What this console itself did, told apart from what others did.
    ours: Ours,
    /// The views over the panes, bottom first: the top one takes the keys
    /// and is drawn last.
    layers: Layers,
    /// The command lines run before (`:`), oldest first.
    command_history: Vec<String>,
    /// The last logs session number given out.
    logs_session: u64,
    flash: Option<Flash>,
    quitting: bool,
    /// How the screen is arranged: zoomed, banners put away.
    arrangement: Arrangement,
    pub(crate) viewport: Cell<Viewport>,
    /// The layout of the last full frame (`None` before it, or while the
    /// terminal is too small): where mouse events land.
    pub(crate) areas: Cell<Option<Areas>>,
}

impl App {
    /// A fresh UI at `now` (unix seconds), showing an empty snapshot until the
    /// watcher's first one arrives. Reads `NO_COLOR` (set and not empty: no
    /// colours) once, here.
    #[must_use]
    pub fn new(config: AppConfig, now: i64) -> Self {
        let helper = config.helper.state();
        Self {
            settings: Settings {
                helper,
                teardown: TeardownInfo::default(),
                down: None,
                zone: jiff::tz::TimeZone::UTC,
                stackless: crate::controller::cancel::DEFAULT_PROGRAM.to_owned(),
                dry_run: false,
                clipboard_told: false,
                under_tmux: false,
                controller_stand_in: None,
            },
            config,
            now,
            clock: Instant::now(),
            shown: Shown {
                snapshot: Arc::new(Snapshot::default()),
                retired: None,
                loaded: false,
                counts: Counts::default(),
                fleet: None,
                fleet_cursors: FleetCursors::default(),
                owed: false,
                replay: None,
            },
            status: Status {
                health: StoreHealth::Ok,
                role: RoleState::Active,
                controller: ControllerState::default(),
                watch: None,
                recording: None,
                clock_doubt: None,
                audit_failure: None,
                unrecorded: None,
                reaper: ReaperView::default(),
            },
            outbox: Vec::new(),
            focus: Focus::Instances,
            instances: InstancesTable::default(),
            backoffs: Selection::default(),
            operations: Selection::default(),
            supervisor: Log::default(),
            activity: Log::default(),
            ours: Ours::default(),
            layers: Layers::default(),
            command_history: Vec::new(),
            logs_session: 0,
            flash: None,
            quitting: false,
            arrangement: Arrangement::default(),
            viewport: Cell::new(Viewport::default()),
            areas: Cell::new(None),
        }
    }

    /// Apply one event at time `now` (unix seconds). Returns a command for
    /// the console to carry out, if the event asked for one.
    pub fn handle(&mut self, event: Event, now: i64) -> Option<Effect> {
        self.apply(event, now)
    }

    fn apply(&mut self, event: Event, now: i64) -> Option<Effect> {
        if self.shown.fleet.is_some() {
            self.now = now;
            return self.fleet_event(event, now.saturating_mul(1000));
        }
        drop(self.settle());
        self.now = self.replay_now(&event, now);
        self.clock = Instant::now();
        match event {
            Event::Tick => self.tick(),
            // The rows first: the frame does not wait for the Activity
            // lines of what changed or the old snapshot's freeing
            // ([`App::settle`], which the render loop calls after the
            // frame, and every event before it applies).
            Event::Snapshot(snapshot) => self.show_snapshot(snapshot),
            Event::StoreHealth(health) => {
                self.status.health = health;
                None
            }
            Event::Activity(activity) => {
                let read_output = self.show_verify(&activity);
                self.log_activity(activity);
                read_output
            }
            Event::Supervisor(note) => {
                self.supervisor
                    .push(note, |a, b| a.kind == b.kind && a.text == b.text);
                None
            }
            Event::Role(role) => {
                self.status.role = role;
                None
            }
            Event::Controller(controller) => {
                self.controller_probed(controller);
                None
            }
            Event::Pauses(pauses) => {
                self.status.clock_doubt = pauses.clock;
                self.status.unrecorded = pauses.unrecorded;
                self.status.audit_failure = pauses.audit;
                None
            }
            Event::Logs(mut update) => {
                crate::model::logview::redact_update(&mut update, &self.shown.snapshot.redactor);
                self.logs_update(update);
                None
            }
            Event::Reaper(status) => {
                self.reaper_reported(status);
                None
            }
            Event::Watch(mode) => {
                self.status.watch = Some(mode);
                None
            }
            Event::Recording(words) => {
                self.status.recording = Some(words);
                None
            }
            Event::Answer(answer) => {
                self.take_answer(answer);
                None
            }
            // A fleet host's connection: the fleet's loop takes it.
            Event::Host(_) => None,
            Event::Replay(frame) => self.show_replay(*frame),
            Event::Timeline(shown) => {
                self.show_timeline(&shown);
                None
            }
            Event::Terminate(_) => {
                self.quitting = true;
                Some(Effect::Quit)
            }
            Event::Input(input) => self.input(input),
            Event::InputAt(input, read) => self.input_at(input, read),
        }
    }

    /// One second passed: the expired rows recounted, a flash whose time
    /// is up put away, the logs view's watch looked at again.
    fn tick(&mut self) -> Option<Effect> {
        self.recount_expired();
        if self
            .flash
            .as_ref()
            .is_some_and(|f| !flash_live(f, self.wall_now()))
        {
            self.flash = None;
        }
        self.recheck_logs()
    }

    /// Whether `q`, Ctrl-C or a termination signal asked to quit.
    #[must_use]
    pub fn quitting(&self) -> bool {
        self.quitting
    }

    /// The snapshot on screen.
    #[must_use]
    pub fn snapshot(&self) -> &Snapshot {
        &self.shown.snapshot
    }

    /// The snapshot on screen, shared (tests: the one `Arc`, never a
    /// copy).
    #[cfg(feature = "test-support")]
    #[doc(hidden)]
    #[must_use]
    pub fn snapshot_arc(&self) -> &Arc<Snapshot> {
        &self.shown.snapshot
    }

    /// Whether a snapshot has arrived yet.
    #[must_use]
    pub fn loaded(&self) -> bool {
        self.shown.loaded
    }

    /// The configuration given at start.
    #[must_use]
    pub fn config(&self) -> &AppConfig {
        &self.config
    }

    /// The time of the last event (unix seconds): what countdowns count from.
    #[must_use]
    pub fn now(&self) -> i64 {
        self.now
    }

    /// The monotonic instant of the last event (for the store-busy
    /// duration).
    #[must_use]
    pub fn clock(&self) -> Instant {
        self.clock
    }

    /// The focused pane.
    #[must_use]
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// Whether a helper is configured (the Supervisor pane's empty state).
    #[must_use]
    pub fn helper(&self) -> HelperState {
        self.settings.helper
    }

    /// Header counts.
    #[must_use]
    pub fn counts(&self) -> Counts {
        self.shown.counts
    }

    /// The selected row of the Instances table: an index into
    /// [`App::visible`] (meaningless when no row is shown).
    #[must_use]
    pub fn selected_index(&self) -> usize {
        self.instances.selected
    }

    /// The selected instance, if any row is shown.
    #[must_use]
    pub fn selected_instance(&self) -> Option<&Instance> {
        self.instance_at(self.instances.selected)
    }

    /// The rows of the Instances table, filtered and sorted: positions into
    /// `snapshot().instances`.
    #[must_use]
    pub fn visible(&self) -> &[u32] {
        &self.instances.order
    }

    /// The instance shown in table row `row`.
    #[must_use]
    pub fn instance_at(&self, row: usize) -> Option<&Instance> {
        let position = *self.instances.order.get(row)?;
        self.shown
            .snapshot
            .instances
            .get(position as usize)
            .map(std::sync::Arc::as_ref)
    }

    /// The active sort.
    #[must_use]
    pub fn sort(&self) -> SortKey {
        self.instances.sort
    }

    /// The filter text (empty: no filter).
    #[must_use]
    pub fn filter(&self) -> &str {
        &self.instances.filter
    }

    /// Whether the filter prompt has the keyboard (after `/`).
    #[must_use]
    pub fn filter_editing(&self) -> bool {
        self.layers.has(LayerKind::Filter)
    }

    /// The open detail view, if any.
    #[must_use]
    pub fn detail(&self) -> Option<&Detail> {
        self.layers.detail()
    }

    /// The views over the panes, bottom first.
    #[must_use]
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The flash message, while it is live (less than [`FLASH_SECS`] old at
    /// `now`).
    #[must_use]
    pub fn flash(&self) -> Option<&Flash> {
        self.flash
            .as_ref()
            .filter(|f| flash_live(f, self.wall_now()))
    }

    /// Whether to draw without colours (`NO_COLOR`).
    #[must_use]
    pub fn no_color(&self) -> bool {
        self.config.no_color
    }

    /// Index of the selected row in `snapshot().reap_attempts`.
    #[must_use]
    pub fn backoff_index(&self) -> usize {
        self.backoffs.index
    }

    /// The activity log.
    #[must_use]
    pub fn activity(&self) -> &Log<Activity> {
        &self.activity
    }

    /// The controller `down`s that finished in the hour before the first
    /// whole snapshot, newest first, as lines not logged
    /// ([`crate::model::observe::finished_downs_last_hour`]): the Activity
    /// title counts them beside the log's lines. Empty before that snapshot.
    #[must_use]
    pub fn downs_before_start(&self) -> &[Activity] {
        self.ours.before_start.as_deref().unwrap_or_default()
    }

    /// The supervisor log.
    #[must_use]
    pub fn supervisor(&self) -> &Log<SupervisorNote> {
        &self.supervisor
    }

    /// The instance awaiting `y`/`N` confirmation of a teardown, if the
    /// dialog is open.
    #[must_use]
    pub fn confirming(&self) -> Option<&Instance> {
        match &self.layers.confirm()?.question {
            Question::TearDown(instance) => Some(instance),
            _ => None,
        }
    }

    /// The instance awaiting `y`/`N` confirmation of a reap (`r`), if the
    /// dialog is open.
    #[must_use]
    pub fn confirming_reap(&self) -> Option<&Instance> {
        match &self.layers.confirm()?.question {
            Question::Reap(instance) => Some(instance),
            _ => None,
        }
    }

    /// Whether the focused pane is zoomed to the whole body (`z`).
    #[must_use]
    pub const fn zoomed(&self) -> bool {
        self.arrangement.zoom
    }

    /// Whether the header's banners are put away into one line (`b`).
    #[must_use]
    pub const fn banners_away(&self) -> bool {
        self.arrangement.banners_away
    }

    /// Whether the help overlay is open.
    #[must_use]
    pub fn help_open(&self) -> bool {
        self.layers.has(LayerKind::Help)
    }

    /// Open the confirmation dialog for `question` (not shown yet: keys
    /// read before its first frame do not answer it).
    pub(super) fn ask(&mut self, question: Question) {
        self.layers.open(Layer::Confirm(Confirm {
            question,
            shown: None,
        }));
    }

    /// Keep every Activity line from now on for
    /// [`App::drain_activity_journal`] (`serve --stdio`: each line sent
    /// once).
    pub fn start_activity_journal(&mut self) {
        self.activity.start_journal();
    }

    /// The Activity lines logged since the last call, oldest first: what
    /// the recorder sent, the refusals, and what other processes were seen
    /// to change (after [`App::settle`]).
    pub fn drain_activity_journal(&mut self) -> Vec<Activity> {
        self.activity.drain_journal()
    }

    /// Operator actions the UI decided by itself since the last call
    /// (refusals, cancelled confirmations), for the audit trail.
    pub fn drain_outbox(&mut self) -> Vec<Activity> {
        std::mem::take(&mut self.outbox)
    }
}
