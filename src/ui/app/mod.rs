//! The console's UI state and its reaction to events: selection, focus,
//! scrolling, the bounded and coalesced logs, the operator keys and the
//! confirmation dialog. Drawing lives in [`super::panes`]; this module never
//! touches the terminal.
//!
//! Where to look:
//! - this file: the [`App`] state, [`App::handle`] (one event in, maybe a
//!   [`Command`] out) and the read-only accessors the panes draw from;
//! - `config`: [`AppConfig`] (given at start) and [`Command`] (asked of the
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
mod command;
mod config;
mod copy;
mod detail;
mod flash;
mod fulltext;
mod help;
mod input;
mod log;
mod logs;
mod logs_search;
mod marks;
mod operations;
mod reaper;
mod rows;
mod status;
mod viewport;

use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

pub use command::CommandLine;
pub use config::{AppConfig, Command, TeardownInfo};
pub use flash::{FLASH_SECS, Flash, FlashLevel};
pub use fulltext::FullView;
pub use help::HelpView;
pub use input::WHEEL_STEP;
pub use log::{LOG_CAPACITY, Log, Logged};
pub use logs::{LogsView, ServiceTab};
pub use marks::{BULK_NAMES_SHOWN, Bulk};
pub use reaper::ReaperView;
pub use rows::SortKey;
pub(crate) use viewport::Viewport;

use flash::flash_live;

use super::Areas;
use super::detail::Detail;
use super::view::HelperState;
use crate::event::{Activity, Event, RoleState, StoreHealth, SupervisorNote};
use crate::model::controller::ControllerState;
use crate::model::{Instance, Operation, Snapshot};

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Focus {
    /// The instances table (top).
    #[default]
    Instances,
    /// The controller's operations (under Instances; only on stores with
    /// an `operations` table, stackless 0.4.0).
    Operations,
    /// The reap backoffs table (middle left).
    Backoffs,
    /// The helper supervisor log (middle right).
    Supervisor,
    /// The activity log (bottom).
    Activity,
}

impl Focus {
    /// The next pane in Tab order (Instances → Operations → Backoffs →
    /// Supervisor → Activity → Instances); `operations` false (a store
    /// without the pane) skips Operations.
    #[must_use]
    pub const fn next(self, operations: bool) -> Self {
        match self {
            Self::Instances if operations => Self::Operations,
            Self::Instances | Self::Operations => Self::Backoffs,
            Self::Backoffs => Self::Supervisor,
            Self::Supervisor => Self::Activity,
            Self::Activity => Self::Instances,
        }
    }

    /// The previous pane (Shift-Tab); `operations` as for [`Focus::next`].
    #[must_use]
    pub const fn previous(self, operations: bool) -> Self {
        match self {
            Self::Instances => Self::Activity,
            Self::Backoffs if operations => Self::Operations,
            Self::Backoffs | Self::Operations => Self::Instances,
            Self::Supervisor => Self::Backoffs,
            Self::Activity => Self::Supervisor,
        }
    }
}

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

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    config: AppConfig,
    now: i64,
    clock: Instant,
    snapshot: Arc<Snapshot>,
    loaded: bool,
    /// The snapshot replaced, until [`App::settle`] observes and frees it.
    retired: Option<Arc<Snapshot>>,
    health: StoreHealth,
    role: RoleState,
    controller: ControllerState,
    watch: Option<crate::event::WatchMode>,
    outbox: Vec<Activity>,
    focus: Focus,
    /// Positions into `snapshot.instances` of the rows shown, filtered and
    /// sorted. Rebuilt only when the snapshot, the filter or the sort
    /// changes (never per frame, never on a tick: lease order does not
    /// change with time).
    order: Vec<u32>,
    /// Every position, sorted by `sort` (rebuilt on a snapshot or a sort).
    sorted: Vec<u32>,
    /// What the filter searches, built on first use after a snapshot.
    haystacks: Option<Arc<Vec<String>>>,
    sort: SortKey,
    filter: String,
    filter_editing: bool,
    /// Why the filter cannot be read, while it cannot (no row is shown).
    filter_error: Option<String>,
    /// The sort's order reversed (`S`).
    reversed: bool,
    /// Marked instance names (`space`, Ctrl-A), kept sorted; `r` and `d`
    /// act on them when there are any. Names no longer in the store are
    /// dropped on each snapshot.
    marks: std::collections::BTreeSet<String>,
    /// The bulk `r`/`d` awaiting `y`/`N` confirmation.
    confirm_bulk: Option<marks::Bulk>,
    /// The selected row (an index into `order`).
    selected: usize,
    selected_name: Option<String>,
    backoff_selected: usize,
    backoff_name: Option<String>,
    supervisor: Log<SupervisorNote>,
    activity: Log<Activity>,
    confirm: Option<Instance>,
    /// The operation awaiting `y`/`N` confirmation of a cancel.
    confirm_cancel: Option<Operation>,
    /// When the open confirmation dialog began to be drawn first
    /// ([`App::drawn`]); `None` while none is open or before its frame.
    confirm_shown: Option<Instant>,
    /// The Operations pane's row (in `snapshot.operations`) and its id.
    op_selected: usize,
    op_id: Option<String>,
    /// The id of the operation shown in the operation overlay.
    op_open: Option<String>,
    /// Names this console tears down (or did lately), with the unix time
    /// until which a change seen on them is its own (`i64::MAX` in flight).
    own: std::collections::HashMap<String, i64>,
    /// The zone log times are shown in (UTC until the console sets the
    /// local one; `--utc` keeps UTC).
    zone: jiff::tz::TimeZone,
    /// The teardown command `Y` copies (`None`: the default template).
    down: Option<crate::reaper::DownCommand>,
    /// Command mode (`:`): the line and its history.
    command: CommandLine,
    help: bool,
    /// The help's scroll and search.
    help_view: HelpView,
    detail: Option<Detail>,
    /// The full-text view (Enter on a log line, `e`): over all but dialogs, help.
    full: Option<FullView>,
    /// The open logs view (over the detail view, if that is open too).
    logs: Option<LogsView>,
    /// The last logs session number given out.
    logs_session: u64,
    flash: Option<Flash>,
    no_color: bool,
    quitting: bool,
    counts: Counts,
    /// The wall clock's doubt as last checked (`Event::Pauses`): while set,
    /// the reaper and GC are paused and `r` is off.
    clock_doubt: Option<String>,
    /// Why the audit trail does not take writes, while it does not.
    audit_failure: Option<String>,
    /// Why the store does not record the reaper's failures, while it does
    /// not (`Event::Pauses`): the reaper is paused and `r`/`d` are off.
    unrecorded: Option<String>,
    /// Whether a helper is configured, read once from
    /// [`AppConfig::helper_line`].
    helper: HelperState,
    /// The teardown command (`d`'s dialog, the header's missing-program
    /// banner), set by the console at start.
    teardown: TeardownInfo,
    /// The reaper as this console controls it: the pause asked for (`P`)
    /// and the thread's last report.
    reaper: ReaperView,
    /// The focused pane has the whole body (`z`).
    zoom: bool,
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
        let helper = HelperState::from_helper_line(&config.helper_line);
        Self {
            helper,
            teardown: TeardownInfo::default(),
            reaper: ReaperView::default(),
            zoom: false,
            config,
            now,
            clock: Instant::now(),
            snapshot: Arc::new(Snapshot::default()),
            loaded: false,
            retired: None,
            health: StoreHealth::Ok,
            role: RoleState::Active,
            controller: ControllerState::default(),
            watch: None,
            outbox: Vec::new(),
            focus: Focus::Instances,
            order: Vec::new(),
            sorted: Vec::new(),
            haystacks: None,
            sort: SortKey::default(),
            filter: String::new(),
            filter_editing: false,
            filter_error: None,
            reversed: false,
            marks: std::collections::BTreeSet::new(),
            confirm_bulk: None,
            selected: 0,
            selected_name: None,
            backoff_selected: 0,
            backoff_name: None,
            supervisor: Log::default(),
            activity: Log::default(),
            confirm: None,
            confirm_cancel: None,
            confirm_shown: None,
            op_selected: 0,
            op_id: None,
            op_open: None,
            own: std::collections::HashMap::new(),
            zone: jiff::tz::TimeZone::UTC,
            down: None,
            command: CommandLine::default(),
            help: false,
            help_view: HelpView::default(),
            detail: None,
            full: None,
            logs: None,
            logs_session: 0,
            flash: None,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            quitting: false,
            counts: Counts::default(),
            clock_doubt: None,
            audit_failure: None,
            unrecorded: None,
            viewport: Cell::new(Viewport::default()),
            areas: Cell::new(None),
        }
    }

    /// Apply one event at time `now` (unix seconds). Returns a command for
    /// the console to carry out, if the event asked for one.
    pub fn handle(&mut self, event: Event, now: i64) -> Option<Command> {
        let command = self.apply(event, now);
        if self.context() != crate::ui::keys::Context::Confirm {
            self.confirm_shown = None;
        }
        command
    }

    fn apply(&mut self, event: Event, now: i64) -> Option<Command> {
        drop(self.settle());
        self.now = now;
        self.clock = Instant::now();
        match event {
            Event::Tick => {
                self.recount_expired();
                if self.flash.as_ref().is_some_and(|f| !flash_live(f, now)) {
                    self.flash = None;
                }
                self.recheck_logs()
            }
            Event::Snapshot(snapshot) => {
                let command = self.show_snapshot(snapshot, now);
                drop(self.settle());
                command
            }
            Event::StoreHealth(health) => {
                self.health = health;
                None
            }
            Event::Activity(activity) => {
                self.log_activity(activity);
                None
            }
            Event::Supervisor(note) => {
                self.supervisor
                    .push(note, |a, b| a.kind == b.kind && a.text == b.text);
                None
            }
            Event::Role(role) => {
                self.role = role;
                None
            }
            Event::Controller(controller) => {
                self.controller = controller;
                None
            }
            Event::Pauses(pauses) => {
                self.clock_doubt = pauses.clock;
                self.unrecorded = pauses.unrecorded;
                self.audit_failure = pauses.audit;
                None
            }
            Event::Logs(update) => {
                self.logs_update(update);
                None
            }
            Event::Reaper(status) => {
                self.reaper.status = Some(status);
                None
            }
            Event::Watch(mode) => {
                self.watch = Some(mode);
                None
            }
            Event::Terminate(_) => {
                self.quitting = true;
                Some(Command::Quit)
            }
            Event::Input(input) => self.input(input),
            Event::InputAt(input, read) => self.input_at(input, read),
        }
    }

    /// Whether `q`, Ctrl-C or a termination signal asked to quit.
    #[must_use]
    pub fn quitting(&self) -> bool {
        self.quitting
    }

    /// The snapshot on screen.
    #[must_use]
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The snapshot on screen, shared.
    #[must_use]
    pub fn snapshot_arc(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// Whether a snapshot has arrived yet.
    #[must_use]
    pub fn loaded(&self) -> bool {
        self.loaded
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

    /// The monotonic instant of the last event (for the store-busy duration
    /// and the supervisor's restart countdown).
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
        self.helper
    }

    /// Header counts.
    #[must_use]
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The selected row of the Instances table: an index into
    /// [`App::visible`] (meaningless when no row is shown).
    #[must_use]
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// The selected instance, if any row is shown.
    #[must_use]
    pub fn selected_instance(&self) -> Option<&Instance> {
        self.instance_at(self.selected)
    }

    /// The rows of the Instances table, filtered and sorted: positions into
    /// `snapshot().instances`.
    #[must_use]
    pub fn visible(&self) -> &[u32] {
        &self.order
    }

    /// The instance shown in table row `row`.
    #[must_use]
    pub fn instance_at(&self, row: usize) -> Option<&Instance> {
        let position = *self.order.get(row)?;
        self.snapshot
            .instances
            .get(position as usize)
            .map(std::sync::Arc::as_ref)
    }

    /// The active sort.
    #[must_use]
    pub fn sort(&self) -> SortKey {
        self.sort
    }

    /// The filter text (empty: no filter).
    #[must_use]
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// Whether the filter prompt has the keyboard (after `/`).
    #[must_use]
    pub fn filter_editing(&self) -> bool {
        self.filter_editing
    }

    /// The open detail view, if any.
    #[must_use]
    pub fn detail(&self) -> Option<&Detail> {
        self.detail.as_ref()
    }

    /// The flash message, while it is live (less than [`FLASH_SECS`] old at
    /// `now`).
    #[must_use]
    pub fn flash(&self) -> Option<&Flash> {
        self.flash.as_ref().filter(|f| flash_live(f, self.now))
    }

    /// Whether to draw without colours (`NO_COLOR`).
    #[must_use]
    pub fn no_color(&self) -> bool {
        self.no_color
    }

    /// Override the `NO_COLOR` decision made at [`App::new`]. There is no
    /// command-line flag for colour: outside tests, only the `NO_COLOR`
    /// environment variable (set and not empty) turns colour off.
    pub fn set_no_color(&mut self, no_color: bool) {
        self.no_color = no_color;
    }
    /// Index of the selected row in `snapshot().reap_attempts`.
    #[must_use]
    pub fn backoff_index(&self) -> usize {
        self.backoff_selected
    }

    /// The activity log.
    #[must_use]
    pub fn activity(&self) -> &Log<Activity> {
        &self.activity
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
        self.confirm.as_ref()
    }

    /// Whether the focused pane is zoomed to the whole body (`z`).
    #[must_use]
    pub const fn zoomed(&self) -> bool {
        self.zoom
    }

    /// Whether the help overlay is open.
    #[must_use]
    pub fn help_open(&self) -> bool {
        self.help
    }

    /// Operator actions the UI decided by itself since the last call
    /// (refusals, cancelled confirmations), for the audit trail.
    pub fn drain_outbox(&mut self) -> Vec<Activity> {
        std::mem::take(&mut self.outbox)
    }
}
