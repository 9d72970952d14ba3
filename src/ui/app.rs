//! The console's UI state and its reaction to events: selection, focus,
//! scrolling, the bounded and coalesced logs, the operator keys and the
//! confirmation dialog. Drawing lives in [`super::panes`]; this module never
//! touches the terminal.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::Areas;
use super::detail::{Detail, DetailText, Loaded};
use crate::event::{Activity, ActivityKind, Actor, Event, RoleState, StoreHealth, SupervisorNote};
use crate::model::{Instance, Snapshot, Status, envelope};
use crate::reaper::decision::{may_reap_now, may_tear_down};
use crate::store::detail::InstanceDetail;

/// How many entries the activity and supervisor logs keep (oldest dropped
/// first).
pub const LOG_CAPACITY: usize = 500;

/// Rows moved by PgUp/PgDn before the first frame reports a pane height.
const DEFAULT_PAGE: usize = 10;

/// Rows (or log lines) one mouse-wheel notch moves.
pub const WHEEL_STEP: isize = 3;

/// How long a flash message stays in the footer, in seconds of the app's
/// clock (`now`).
pub const FLASH_SECS: i64 = 4;

/// What the console wiring needs to know that the snapshot does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// The store path as shown in the header (sanitized when drawn).
    pub store_label: String,
    /// The reaper's state for the header, e.g. `reaper: every 5s`,
    /// `reaper: off (--no-reaper)`, `reaper: off (read-only)`.
    pub reaper_line: String,
    /// The helper for the header, e.g. `helper: demo-helper`, `helper: none`
    /// (a line ending in `none` selects the "no helper configured" empty
    /// state of the Supervisor pane).
    pub helper_line: String,
    /// `Err(reason)` when `r` and `d` are disabled (read-only store, older
    /// schema); the reason is logged as a refusal when either is pressed.
    pub write_keys: Result<(), String>,
}

/// Something the console must carry out for the UI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Reap this instance now (operator `r`; the key rules passed at the
    /// time of the key press, on the snapshot then shown).
    Reap {
        /// The instance as the snapshot showed it.
        instance: Instance,
    },
    /// Tear this instance down (operator `d`, confirmed with `y`).
    TearDown {
        /// The instance as the snapshot showed it at confirmation.
        instance: Instance,
    },
    /// Read `name`'s detail (`Store::instance_detail`) and hand the result to
    /// [`App::show_detail`]. Asked for by Enter, and again on every new
    /// snapshot while the detail view is open (so it stays current).
    OpenDetail {
        /// The instance as stored (may be hostile: use it only as a SQL
        /// parameter, never on a command line).
        name: String,
    },
    /// Quit (`q`, Ctrl-C, or a termination signal).
    Quit,
}

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Focus {
    /// The instances table (top).
    #[default]
    Instances,
    /// The reap backoffs table (middle left).
    Backoffs,
    /// The helper supervisor log (middle right).
    Supervisor,
    /// The activity log (bottom).
    Activity,
}

impl Focus {
    /// The next pane in Tab order (Instances → Backoffs → Supervisor →
    /// Activity → Instances).
    #[must_use]
    pub const fn next(self) -> Self {
        match self {
            Self::Instances => Self::Backoffs,
            Self::Backoffs => Self::Supervisor,
            Self::Supervisor => Self::Activity,
            Self::Activity => Self::Instances,
        }
    }

    /// The previous pane (Shift-Tab).
    #[must_use]
    pub const fn previous(self) -> Self {
        match self {
            Self::Instances => Self::Activity,
            Self::Backoffs => Self::Instances,
            Self::Supervisor => Self::Backoffs,
            Self::Activity => Self::Supervisor,
        }
    }
}

/// The order of the Instances table (`s` cycles through them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortKey {
    /// Soonest lease expiry first; instances without a lease (tombstones)
    /// last; ties by name.
    #[default]
    LeaseExpiry,
    /// By name (byte order, as stored).
    Name,
    /// By substrate, then name.
    Substrate,
    /// Most reap attempts first, then name.
    ReapAttempts,
}

impl SortKey {
    /// The next order in the `s` cycle.
    #[must_use]
    pub const fn next(self) -> Self {
        match self {
            Self::LeaseExpiry => Self::Name,
            Self::Name => Self::Substrate,
            Self::Substrate => Self::ReapAttempts,
            Self::ReapAttempts => Self::LeaseExpiry,
        }
    }

    /// How the header names it: `lease expiry`, `name`, `substrate`,
    /// `reap attempts`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::LeaseExpiry => "lease expiry",
            Self::Name => "name",
            Self::Substrate => "substrate",
            Self::ReapAttempts => "reap attempts",
        }
    }
}

/// How a flash message is styled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlashLevel {
    /// Something was done or asked for.
    Info,
    /// Refused, skipped, cancelled.
    Warning,
    /// Failed.
    Error,
}

/// A one-line message in the footer that clears itself [`FLASH_SECS`] after
/// `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// How to style it.
    pub level: FlashLevel,
    /// The message (unsanitized: it may quote store text; drawing
    /// sanitizes).
    pub text: String,
    /// When it was raised (unix seconds, the app's `now`).
    pub at: i64,
}

/// A log entry with how many identical entries were folded into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged<T> {
    /// The newest of the folded entries (its time, and for a supervisor
    /// back-off its `until`).
    pub entry: T,
    /// How many entries were folded into this one (1 = not coalesced).
    pub count: u32,
}

/// A bounded log whose last entry absorbs equal newcomers, with a scroll
/// position counted from the bottom (0 = following the newest entry).
#[derive(Debug, Clone)]
pub struct Log<T> {
    entries: VecDeque<Logged<T>>,
    scroll_up: usize,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            scroll_up: 0,
        }
    }
}

impl<T> Log<T> {
    /// Append `entry`, or fold it into the last entry when `same(last, entry)`.
    fn push(&mut self, entry: T, same: impl Fn(&T, &T) -> bool) {
        if let Some(last) = self.entries.back_mut()
            && same(&last.entry, &entry)
        {
            last.entry = entry;
            last.count = last.count.saturating_add(1);
            return;
        }
        self.entries.push_back(Logged { entry, count: 1 });
        if self.entries.len() > LOG_CAPACITY {
            self.entries.pop_front();
        }
        if self.scroll_up > 0 {
            // The operator scrolled up: keep the same lines in view.
            self.scroll_up = (self.scroll_up + 1).min(self.entries.len().saturating_sub(1));
        }
    }

    /// The entries, oldest first.
    #[must_use]
    pub fn entries(&self) -> &VecDeque<Logged<T>> {
        &self.entries
    }

    /// The newest entry.
    #[must_use]
    pub fn last(&self) -> Option<&Logged<T>> {
        self.entries.back()
    }

    /// How many entries the view is scrolled up from the newest (0 = sticky
    /// at the bottom).
    #[must_use]
    pub fn scroll_up(&self) -> usize {
        self.scroll_up
    }

    fn scroll_by(&mut self, delta: isize, visible: usize) {
        let max = self.entries.len().saturating_sub(visible.max(1));
        let current = self.scroll_up.min(max);
        self.scroll_up = current.saturating_add_signed(delta).min(max);
    }
}

/// Layout facts the last frame measured, so keys can page and the tables can
/// keep a stable scroll window. Written by drawing (through `Cell`), read by
/// key handling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Viewport {
    /// First instance row drawn.
    pub instances_offset: usize,
    /// Instance data rows that fit (0 before the first frame).
    pub instances_rows: usize,
    /// First backoff row drawn.
    pub backoffs_offset: usize,
    /// Backoff data rows that fit.
    pub backoffs_rows: usize,
    /// Supervisor lines that fit.
    pub supervisor_rows: usize,
    /// Activity lines that fit.
    pub activity_rows: usize,
    /// Detail document lines that fit.
    pub detail_rows: usize,
    /// Detail document length, as last drawn.
    pub detail_len: usize,
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
    health: StoreHealth,
    role: RoleState,
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
    /// The selected row (an index into `order`).
    selected: usize,
    selected_name: Option<String>,
    backoff_selected: usize,
    backoff_name: Option<String>,
    supervisor: Log<SupervisorNote>,
    activity: Log<Activity>,
    confirm: Option<Instance>,
    help: bool,
    detail: Option<Detail>,
    flash: Option<Flash>,
    no_color: bool,
    quitting: bool,
    counts: Counts,
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
        Self {
            config,
            now,
            clock: Instant::now(),
            snapshot: Arc::new(Snapshot::default()),
            loaded: false,
            health: StoreHealth::Ok,
            role: RoleState::Active,
            outbox: Vec::new(),
            focus: Focus::Instances,
            order: Vec::new(),
            sorted: Vec::new(),
            haystacks: None,
            sort: SortKey::default(),
            filter: String::new(),
            filter_editing: false,
            selected: 0,
            selected_name: None,
            backoff_selected: 0,
            backoff_name: None,
            supervisor: Log::default(),
            activity: Log::default(),
            confirm: None,
            help: false,
            detail: None,
            flash: None,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            quitting: false,
            counts: Counts::default(),
            viewport: Cell::new(Viewport::default()),
            areas: Cell::new(None),
        }
    }

    /// Apply one event at time `now` (unix seconds). Returns a command for
    /// the console to carry out, if the event asked for one.
    pub fn handle(&mut self, event: Event, now: i64) -> Option<Command> {
        self.now = now;
        self.clock = Instant::now();
        match event {
            Event::Tick => {
                self.recount_expired();
                if self.flash.as_ref().is_some_and(|f| !flash_live(f, now)) {
                    self.flash = None;
                }
                None
            }
            Event::Snapshot(snapshot) => {
                self.set_snapshot(snapshot);
                // Keep an open detail view current.
                self.detail.as_ref().map(|d| Command::OpenDetail {
                    name: d.name.clone(),
                })
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
            Event::Terminate(_) => {
                self.quitting = true;
                Some(Command::Quit)
            }
            Event::Input(crossterm::event::Event::Key(key)) => self.key(key),
            Event::Input(crossterm::event::Event::Mouse(mouse)) => {
                self.mouse(mouse);
                None
            }
            // Resize: the next frame lays out again. Focus, paste: not used.
            Event::Input(_) => None,
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

    /// Whether this console is the active one for its store.
    #[must_use]
    pub fn role(&self) -> &RoleState {
        &self.role
    }

    /// The store's health as last reported.
    #[must_use]
    pub fn health(&self) -> &StoreHealth {
        &self.health
    }

    /// The focused pane.
    #[must_use]
    pub fn focus(&self) -> Focus {
        self.focus
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
        self.snapshot.instances.get(position as usize)
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

    /// Override the `NO_COLOR` decision made at [`App::new`] (tests, a
    /// `--no-color` flag).
    pub fn set_no_color(&mut self, no_color: bool) {
        self.no_color = no_color;
    }

    /// The answer to [`Command::OpenDetail`]: `Ok(Some(detail))` read,
    /// `Ok(None)` no such instance, `Err(message)` the read failed (e.g.
    /// `StoreError::to_string()`). Ignored when the detail view was closed or
    /// moved to another instance meanwhile. The scroll position and the
    /// payload toggle are kept (a refresh does not jump).
    pub fn show_detail(&mut self, name: &str, result: Result<Option<InstanceDetail>, String>) {
        let Some(detail) = self.detail.as_mut().filter(|d| d.name == name) else {
            return;
        };
        let first = detail.loaded == Loaded::Loading;
        let flash = match result {
            Ok(Some(read)) => {
                detail.loaded = Loaded::Ready(Box::new(DetailText::new(&read)));
                None
            }
            Ok(None) => {
                let was_gone = detail.loaded == Loaded::Gone;
                detail.loaded = Loaded::Gone;
                (!was_gone).then(|| {
                    (
                        FlashLevel::Warning,
                        format!("{name} is no longer in the store"),
                    )
                })
            }
            // A failed refresh (a busy store) keeps what was read before,
            // quietly: the header's store banner already says why.
            Err(_) if !first => None,
            Err(message) => {
                let text = format!("cannot read {name}: {message}");
                detail.loaded = Loaded::Failed(message);
                Some((FlashLevel::Error, text))
            }
        };
        if let Some((level, text)) = flash {
            self.set_flash(level, text);
        }
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

    /// Whether the help overlay is open.
    #[must_use]
    pub fn help_open(&self) -> bool {
        self.help
    }

    fn set_snapshot(&mut self, snapshot: Arc<Snapshot>) {
        self.snapshot = snapshot;
        self.loaded = true;
        self.haystacks = None;
        self.resort();
        let instances = &self.snapshot.instances;
        let attempts = &self.snapshot.reap_attempts;
        self.backoff_selected = reselect(
            attempts.len(),
            self.backoff_selected,
            self.backoff_name.as_deref(),
            |name| {
                attempts
                    .binary_search_by(|a| a.instance.as_str().cmp(name))
                    .ok()
            },
        );
        self.backoff_name = attempts
            .get(self.backoff_selected)
            .map(|a| a.instance.clone());
        let (mut active, mut tombstoned) = (0, 0);
        for instance in instances {
            match instance.status {
                Status::Active => active += 1,
                Status::Tombstoned => tombstoned += 1,
                Status::Other(_) => {}
            }
        }
        self.counts.active = active;
        self.counts.tombstoned = tombstoned;
        self.recount_expired();
    }

    /// Sort every instance by the active key into `sorted` (on a new
    /// snapshot or sort only), then filter.
    fn resort(&mut self) {
        let snapshot = &self.snapshot;
        let instances = &snapshot.instances;
        // A store cannot hold 2^32 instances in memory; the rest are cut
        // rather than wrapped.
        let len = u32::try_from(instances.len()).unwrap_or(u32::MAX);
        let mut sorted: Vec<u32> = (0..len).collect();
        let at = |p: u32| &instances[p as usize];
        // Ties by position: name order (the snapshot is sorted by name).
        match self.sort {
            SortKey::Name => {}
            SortKey::LeaseExpiry => sorted.sort_by_cached_key(|&p| {
                let lease = at(p).lease;
                (lease.is_none(), lease.map_or(0, |l| l.expires_at), p)
            }),
            SortKey::Substrate => {
                sorted.sort_by(|&a, &b| at(a).substrate.cmp(&at(b).substrate));
            }
            SortKey::ReapAttempts => sorted.sort_by_cached_key(|&p| {
                let attempts = snapshot.reap_attempt(&at(p).name).map_or(0, |a| a.attempts);
                (Reverse(attempts), p)
            }),
        }
        self.sorted = sorted;
        self.refilter();
    }

    /// Filter `sorted` into the rows shown (on a new snapshot, sort, or a
    /// filter that is not a longer version of the last one).
    fn refilter(&mut self) {
        if self.filter.is_empty() {
            self.order.clone_from(&self.sorted);
        } else {
            let needle = self.filter.to_lowercase();
            let haystacks = self.haystacks();
            let order = self
                .sorted
                .iter()
                .copied()
                .filter(|&p| {
                    haystacks
                        .get(p as usize)
                        .is_some_and(|h| h.contains(&needle))
                })
                .collect();
            self.order = order;
        }
        self.reselect_row();
    }

    /// The filter grew by typing: keep only the rows that still match (the
    /// order stays sorted).
    fn narrow_order(&mut self) {
        let needle = self.filter.to_lowercase();
        let haystacks = self.haystacks();
        let mut order = std::mem::take(&mut self.order);
        order.retain(|&p| {
            haystacks
                .get(p as usize)
                .is_some_and(|h| h.contains(&needle))
        });
        self.order = order;
        self.reselect_row();
    }

    /// What the filter searches, per instance: `name␀substrate␀status`
    /// lower-cased (the filter never holds a NUL, so no match spans two
    /// fields). Built on the first filter after a snapshot, then reused.
    fn haystacks(&mut self) -> Arc<Vec<String>> {
        if let Some(haystacks) = &self.haystacks {
            return Arc::clone(haystacks);
        }
        let built: Arc<Vec<String>> = Arc::new(
            self.snapshot
                .instances
                .iter()
                .map(|i| {
                    format!("{}\0{}\0{}", i.name, i.substrate, i.status.as_str()).to_lowercase()
                })
                .collect(),
        );
        self.haystacks = Some(Arc::clone(&built));
        built
    }

    /// After the rows changed: select the same instance again when it is
    /// shown, else stay at the same row (clamped) and follow that one. With
    /// no row shown (a filter matching nothing) the name is kept, so
    /// clearing the filter brings the selection back.
    fn reselect_row(&mut self) {
        let instances = &self.snapshot.instances;
        let found = self
            .selected_name
            .as_deref()
            .and_then(|name| {
                instances
                    .binary_search_by(|i| i.name.as_str().cmp(name))
                    .ok()
            })
            .and_then(|at| u32::try_from(at).ok())
            .and_then(|at| self.order.iter().position(|&p| p == at));
        self.selected = found.unwrap_or_else(|| step(self.selected, 0, self.order.len()));
        if found.is_none() && !self.order.is_empty() {
            self.selected_name = self.selected_instance().map(|i| i.name.clone());
        }
    }

    fn set_flash(&mut self, level: FlashLevel, text: String) {
        self.flash = Some(Flash {
            level,
            text,
            at: self.now,
        });
    }

    fn recount_expired(&mut self) {
        let now = self.now;
        self.counts.expired = self
            .snapshot
            .instances
            .iter()
            .filter(|i| i.status == Status::Active && i.lease.is_some_and(|l| l.expired(now)))
            .count();
    }

    fn log_activity(&mut self, activity: Activity) {
        if activity.actor == Actor::Operator {
            let (level, text) = flash_for(&activity);
            self.set_flash(level, text);
        }
        self.activity.push(activity, |a, b| {
            a.actor == b.actor
                && a.instance == b.instance
                && a.kind == b.kind
                && a.detail == b.detail
        });
    }

    /// Log an operator action decided here (a refusal, a cancel) and keep
    /// it for the console to append to the audit trail.
    fn log_local(&mut self, activity: Activity) {
        self.outbox.push(activity.clone());
        self.log_activity(activity);
    }

    /// Operator actions the UI decided by itself since the last call
    /// (refusals, cancelled confirmations), for the audit trail.
    pub fn drain_outbox(&mut self) -> Vec<Activity> {
        std::mem::take(&mut self.outbox)
    }

    fn refuse(&mut self, instance: &str, detail: String) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            instance,
            ActivityKind::Refused,
            detail,
        ));
    }

    fn key(&mut self, key: KeyEvent) -> Option<Command> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
            self.quitting = true;
            return Some(Command::Quit);
        }
        if let Some(instance) = self.confirm.take() {
            return self.confirm_key(key, &instance);
        }
        if self.help {
            match key.code {
                KeyCode::Esc | KeyCode::Char('?') => self.help = false,
                KeyCode::Char('q') if !ctrl => {
                    self.quitting = true;
                    return Some(Command::Quit);
                }
                _ => {}
            }
            return None;
        }
        if self.filter_editing {
            self.filter_key(key, ctrl);
            return None;
        }
        if ctrl || key.modifiers.contains(KeyModifiers::ALT) {
            return None;
        }
        if self.detail.is_some() {
            return self.detail_key(key);
        }
        match key.code {
            KeyCode::Char('q') => {
                self.quitting = true;
                return Some(Command::Quit);
            }
            KeyCode::Char('?') => self.help = true,
            KeyCode::Tab => self.focus = self.focus.next(),
            KeyCode::BackTab => self.focus = self.focus.previous(),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::PageUp => self.move_by(-self.page()),
            KeyCode::PageDown => self.move_by(self.page()),
            KeyCode::Home | KeyCode::Char('g') => self.move_by(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.move_by(isize::MAX / 2),
            KeyCode::Char('r') => return self.reap_key(),
            KeyCode::Char('d') => self.down_key(),
            KeyCode::Char('/') => {
                self.focus = Focus::Instances;
                self.filter_editing = true;
            }
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                self.resort();
                self.set_flash(FlashLevel::Info, format!("sort: {}", self.sort.label()));
            }
            KeyCode::Enter => return self.open_detail(),
            KeyCode::Esc if !self.filter.is_empty() => self.clear_filter(),
            _ => {}
        }
        None
    }

    /// Keys while the filter prompt is open: text edits the filter (the rows
    /// follow every key), Enter keeps it, Esc clears it, arrows move the
    /// selection.
    fn filter_key(&mut self, key: KeyEvent, ctrl: bool) {
        match key.code {
            KeyCode::Enter => {
                self.filter_editing = false;
                let text = if self.filter.is_empty() {
                    "no filter".to_owned()
                } else {
                    format!(
                        "filter \"{}\": {} of {} match",
                        self.filter,
                        self.order.len(),
                        self.snapshot.instances.len()
                    )
                };
                self.set_flash(FlashLevel::Info, text);
            }
            KeyCode::Esc => {
                self.filter_editing = false;
                self.clear_filter();
            }
            KeyCode::Backspace if self.filter.pop().is_some() => self.refilter(),
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::PageUp => self.move_by(-self.page()),
            KeyCode::PageDown => self.move_by(self.page()),
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                self.filter.push(c);
                self.narrow_order();
            }
            _ => {}
        }
    }

    fn clear_filter(&mut self) {
        if self.filter.is_empty() {
            return;
        }
        self.filter.clear();
        self.refilter();
        self.set_flash(FlashLevel::Info, "filter cleared".into());
    }

    /// Enter: the detail view of the selected instance (or, in the Backoffs
    /// pane, of the selected backoff's instance).
    fn open_detail(&mut self) -> Option<Command> {
        let name = match self.focus {
            Focus::Backoffs => self
                .snapshot
                .reap_attempts
                .get(self.backoff_selected)
                .map(|a| a.instance.clone()),
            Focus::Instances => self.selected_instance().map(|i| i.name.clone()),
            Focus::Supervisor | Focus::Activity => return None,
        };
        let Some(name) = name else {
            self.set_flash(FlashLevel::Warning, "no instance selected".into());
            return None;
        };
        self.detail = Some(Detail {
            name: name.clone(),
            loaded: Loaded::Loading,
            scroll: 0,
            payloads: false,
        });
        Some(Command::OpenDetail { name })
    }

    /// Keys while the detail view is open.
    fn detail_key(&mut self, key: KeyEvent) -> Option<Command> {
        match key.code {
            KeyCode::Esc => self.detail = None,
            KeyCode::Char('q') => {
                self.quitting = true;
                return Some(Command::Quit);
            }
            KeyCode::Char('?') => self.help = true,
            KeyCode::Up | KeyCode::Char('k') => self.scroll_detail(-1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_detail(1),
            KeyCode::PageUp => self.scroll_detail(-self.detail_page()),
            KeyCode::PageDown => self.scroll_detail(self.detail_page()),
            KeyCode::Home | KeyCode::Char('g') => self.scroll_detail(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.scroll_detail(isize::MAX / 2),
            KeyCode::Char('p') => {
                if let Some(detail) = &mut self.detail {
                    detail.payloads = !detail.payloads;
                    let text = if detail.payloads {
                        "payloads shown"
                    } else {
                        "payloads hidden"
                    };
                    self.set_flash(FlashLevel::Info, text.into());
                }
            }
            KeyCode::Char('r') => return self.reap_key(),
            KeyCode::Char('d') => self.down_key(),
            _ => {}
        }
        None
    }

    fn detail_page(&self) -> isize {
        let rows = self.viewport.get().detail_rows;
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    /// Scroll the detail document, clamped to what the last frame drew.
    fn scroll_detail(&mut self, delta: isize) {
        let viewport = self.viewport.get();
        let max = viewport
            .detail_len
            .saturating_sub(viewport.detail_rows.max(1));
        if let Some(detail) = &mut self.detail {
            detail.scroll = detail.scroll.min(max).saturating_add_signed(delta).min(max);
        }
    }

    fn confirm_key(&mut self, key: KeyEvent, instance: &Instance) -> Option<Command> {
        if !matches!(key.code, KeyCode::Char('y' | 'Y')) {
            self.log_local(Activity::new(
                self.now,
                Actor::Operator,
                &instance.name,
                ActivityKind::Aborted,
                "cancelled",
            ));
            return None;
        }
        // Re-check against the snapshot shown now: it may have changed while
        // the dialog was open.
        let Some(current) = self.snapshot.instance(&instance.name).cloned() else {
            self.refuse(&instance.name, "refused: no longer in the store".into());
            return None;
        };
        if let Err(refusal) = may_tear_down(&current, self.snapshot.lock_liveness(&current.name)) {
            self.refuse(&current.name, refusal.to_string());
            return None;
        }
        self.set_flash(
            FlashLevel::Info,
            format!("teardown requested for {}", current.name),
        );
        Some(Command::TearDown { instance: current })
    }

    fn page(&self) -> isize {
        let viewport = self.viewport.get();
        let rows = match self.focus {
            Focus::Instances => viewport.instances_rows,
            Focus::Backoffs => viewport.backoffs_rows,
            Focus::Supervisor => viewport.supervisor_rows,
            Focus::Activity => viewport.activity_rows,
        };
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    /// Move the selection (tables) or scroll (logs) of the focused pane by
    /// `delta` rows; positive is down/newer.
    fn move_by(&mut self, delta: isize) {
        self.move_in(self.focus, delta);
    }

    /// Move the selection or scroll of `pane` by `delta` rows.
    fn move_in(&mut self, pane: Focus, delta: isize) {
        let viewport = self.viewport.get();
        match pane {
            Focus::Instances => {
                self.selected = step(self.selected, delta, self.order.len());
                if let Some(name) = self.selected_instance().map(|i| i.name.clone()) {
                    self.selected_name = Some(name);
                }
            }
            Focus::Backoffs => {
                let len = self.snapshot.reap_attempts.len();
                self.backoff_selected = step(self.backoff_selected, delta, len);
                self.backoff_name = self
                    .snapshot
                    .reap_attempts
                    .get(self.backoff_selected)
                    .map(|a| a.instance.clone());
            }
            Focus::Supervisor => self
                .supervisor
                .scroll_by(delta.saturating_neg(), viewport.supervisor_rows),
            Focus::Activity => self
                .activity
                .scroll_by(delta.saturating_neg(), viewport.activity_rows),
        }
    }

    /// A mouse event, located with the layout of the last frame. Ignored
    /// while a dialog or the help is open (a stray click must never answer
    /// the teardown question).
    fn mouse(&mut self, mouse: MouseEvent) {
        if self.confirm.is_some() || self.help {
            return;
        }
        let Some(areas) = self.areas.get() else {
            return;
        };
        let at = Position::new(mouse.column, mouse.row);
        if self.detail.is_some() {
            match mouse.kind {
                MouseEventKind::ScrollUp => self.scroll_detail(-WHEEL_STEP),
                MouseEventKind::ScrollDown => self.scroll_detail(WHEEL_STEP),
                _ => {}
            }
            return;
        }
        let Some((pane, rect)) = [
            (Focus::Instances, areas.instances),
            (Focus::Backoffs, areas.backoffs),
            (Focus::Supervisor, areas.supervisor),
            (Focus::Activity, areas.activity),
        ]
        .into_iter()
        .find(|(_, rect)| rect.contains(at)) else {
            return;
        };
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.filter_editing = false;
                self.focus = pane;
                if let Some(row) = self.table_row_at(pane, rect, at.y) {
                    self.move_in(pane, row_delta(row, self.table_selected(pane)));
                }
            }
            MouseEventKind::ScrollUp => self.move_in(pane, -WHEEL_STEP),
            MouseEventKind::ScrollDown => self.move_in(pane, WHEEL_STEP),
            _ => {}
        }
    }

    fn table_selected(&self, pane: Focus) -> usize {
        if pane == Focus::Backoffs {
            self.backoff_selected
        } else {
            self.selected
        }
    }

    /// The table row (an index into the table's rows) drawn at screen row
    /// `y` of `pane` (whose area is `rect`), if `y` is a data row: below the
    /// border and the column headers, within the rows the last frame drew.
    fn table_row_at(&self, pane: Focus, rect: Rect, y: u16) -> Option<usize> {
        let viewport = self.viewport.get();
        let (offset, rows, len) = match pane {
            Focus::Instances => (
                viewport.instances_offset,
                viewport.instances_rows,
                self.order.len(),
            ),
            Focus::Backoffs => (
                viewport.backoffs_offset,
                viewport.backoffs_rows,
                self.snapshot.reap_attempts.len(),
            ),
            Focus::Supervisor | Focus::Activity => return None,
        };
        let first = rect.y.checked_add(2)?;
        let within = usize::from(y.checked_sub(first)?);
        if within >= rows {
            return None;
        }
        let row = offset + within;
        (row < len).then_some(row)
    }

    /// The instance `r` and `d` act on: the detail view's instance while it
    /// is open, the selected backoff's instance in the Backoffs pane, else
    /// the selected instance. `Err(detail)` when there is none.
    fn target(&self) -> Result<Instance, (String, String)> {
        if let Some(detail) = &self.detail {
            return self
                .snapshot
                .instance(&detail.name)
                .cloned()
                .ok_or_else(|| {
                    (
                        detail.name.clone(),
                        "refused: no such instance in the store".into(),
                    )
                });
        }
        if self.focus == Focus::Backoffs {
            let Some(attempt) = self.snapshot.reap_attempts.get(self.backoff_selected) else {
                return Err((String::new(), "refused: no backoff selected".into()));
            };
            return self
                .snapshot
                .instance(&attempt.instance)
                .cloned()
                .ok_or_else(|| {
                    (
                        attempt.instance.clone(),
                        "refused: no such instance in the store".into(),
                    )
                });
        }
        self.selected_instance()
            .cloned()
            .ok_or_else(|| (String::new(), "refused: no instance selected".into()))
    }

    /// The common gate of `r` and `d`: write keys enabled and a target.
    fn writable_target(&mut self) -> Option<Instance> {
        let instance = match self.target() {
            Ok(instance) => instance,
            Err((name, detail)) => {
                self.refuse(&name, detail);
                return None;
            }
        };
        if let Err(reason) = &self.config.write_keys {
            let reason = reason.clone();
            self.refuse(&instance.name, reason);
            return None;
        }
        let generation = self.snapshot.generation;
        if !generation.allows_write_keys() {
            self.refuse(
                &instance.name,
                format!(
                    "store schema v{} is too old for write keys",
                    generation.user_version
                ),
            );
            return None;
        }
        Some(instance)
    }

    fn reap_key(&mut self) -> Option<Command> {
        let instance = self.writable_target()?;
        let liveness = self.snapshot.lock_liveness(&instance.name);
        match may_reap_now(&instance, liveness, self.now) {
            Ok(()) => {
                self.set_flash(
                    FlashLevel::Info,
                    format!("reap requested for {}", instance.name),
                );
                Some(Command::Reap { instance })
            }
            Err(refusal) => {
                self.refuse(&instance.name, refusal.to_string());
                None
            }
        }
    }

    fn down_key(&mut self) {
        let Some(instance) = self.writable_target() else {
            return;
        };
        match may_tear_down(&instance, self.snapshot.lock_liveness(&instance.name)) {
            Ok(()) => self.confirm = Some(instance),
            Err(refusal) => self.refuse(&instance.name, refusal.to_string()),
        }
    }
}

/// Whether `flash` is still shown at `now`.
fn flash_live(flash: &Flash, now: i64) -> bool {
    now < flash.at.saturating_add(FLASH_SECS)
}

/// The flash for an operator's activity: what the operator's own keys led
/// to, in the operator's words.
fn flash_for(activity: &Activity) -> (FlashLevel, String) {
    let name = activity.instance.as_str();
    let detail = activity.detail.trim();
    let who = if name.is_empty() {
        String::new()
    } else {
        format!("{name} ")
    };
    match activity.kind {
        ActivityKind::Refused => {
            let text = if detail.starts_with("refused") {
                detail.to_owned()
            } else {
                format!("refused: {detail}")
            };
            (FlashLevel::Warning, text)
        }
        ActivityKind::Aborted if detail == "cancelled" => {
            (FlashLevel::Info, format!("teardown of {name} cancelled"))
        }
        ActivityKind::Failed => {
            let reason = envelope::read_reason(detail).summary;
            (FlashLevel::Error, format!("{who}failed: {reason}"))
        }
        ActivityKind::Error => (FlashLevel::Error, format!("{who}error: {detail}")),
        ActivityKind::Aborted | ActivityKind::SkippedLocked => (
            FlashLevel::Warning,
            with_detail(&who, activity.kind, detail),
        ),
        ActivityKind::Started => (FlashLevel::Info, format!("tearing down {name}")),
        ActivityKind::Reaped
        | ActivityKind::TornDown
        | ActivityKind::Collected
        | ActivityKind::WaitingBackoff
        | ActivityKind::WouldReap => (FlashLevel::Info, with_detail(&who, activity.kind, detail)),
    }
}

fn with_detail(who: &str, kind: ActivityKind, detail: &str) -> String {
    if detail.is_empty() {
        format!("{who}{kind}")
    } else {
        format!("{who}{kind}: {detail}")
    }
}

/// The signed distance from row `from` to row `to`.
fn row_delta(to: usize, from: usize) -> isize {
    if to >= from {
        isize::try_from(to - from).unwrap_or(isize::MAX)
    } else {
        isize::try_from(from - to).map_or(isize::MIN, |d| -d)
    }
}

/// `index + delta` clamped to `0..len` (0 when empty).
fn step(index: usize, delta: isize, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    index.saturating_add_signed(delta).min(len - 1)
}

/// The index to select after a new snapshot: the row with the same name when
/// it still exists, else the same position clamped to the new length.
fn reselect(
    len: usize,
    previous: usize,
    name: Option<&str>,
    find: impl Fn(&str) -> Option<usize>,
) -> usize {
    if len == 0 {
        return 0;
    }
    name.and_then(find).unwrap_or_else(|| previous.min(len - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_keys_cycle_through_all_four() {
        let mut key = SortKey::default();
        let mut labels = vec![];
        for _ in 0..4 {
            labels.push(key.label());
            key = key.next();
        }
        assert_eq!(key, SortKey::LeaseExpiry);
        assert_eq!(
            labels,
            ["lease expiry", "name", "substrate", "reap attempts"]
        );
    }

    #[test]
    fn flashes_live_four_seconds() {
        let flash = Flash {
            level: FlashLevel::Info,
            text: String::new(),
            at: 100,
        };
        assert!(flash_live(&flash, 100));
        assert!(flash_live(&flash, 103));
        assert!(!flash_live(&flash, 104));
        let far = Flash {
            at: i64::MAX,
            ..flash
        };
        assert!(flash_live(&far, i64::MAX - 1));
    }

    #[test]
    fn operator_activity_flashes() {
        let a = |kind, detail: &str| Activity::new(0, Actor::Operator, "golf", kind, detail);
        assert_eq!(
            flash_for(&a(ActivityKind::Refused, "read-only")),
            (FlashLevel::Warning, "refused: read-only".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Aborted, "cancelled")),
            (FlashLevel::Info, "teardown of golf cancelled".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Failed, "}")),
            (FlashLevel::Error, "golf failed: }".into())
        );
        assert_eq!(
            flash_for(&a(ActivityKind::Aborted, "lease renewed")),
            (FlashLevel::Warning, "golf aborted: lease renewed".into())
        );
        let pass = Activity::new(0, Actor::Operator, "", ActivityKind::Error, "busy");
        assert_eq!(flash_for(&pass), (FlashLevel::Error, "error: busy".into()));
    }

    #[test]
    fn row_deltas() {
        assert_eq!(row_delta(5, 2), 3);
        assert_eq!(row_delta(2, 5), -3);
        assert_eq!(row_delta(0, 0), 0);
    }

    #[test]
    fn steps_clamp() {
        assert_eq!(step(0, -1, 5), 0);
        assert_eq!(step(4, 1, 5), 4);
        assert_eq!(step(2, isize::MAX / 2, 5), 4);
        assert_eq!(step(2, isize::MIN / 2, 5), 0);
        assert_eq!(step(3, 1, 0), 0);
    }

    #[test]
    fn log_coalesces_and_stays_bounded() {
        let mut log = Log::default();
        for i in 0..(LOG_CAPACITY + 10) {
            log.push(i, |a, b| a == b);
        }
        log.push(LOG_CAPACITY + 9, |a, b| a == b);
        assert_eq!(log.entries().len(), LOG_CAPACITY);
        assert_eq!(
            log.last().map(|l| (l.entry, l.count)),
            Some((LOG_CAPACITY + 9, 2))
        );
        assert_eq!(log.entries().front().map(|l| l.entry), Some(10));
    }

    #[test]
    fn scrolled_log_keeps_its_place() {
        let mut log = Log::default();
        for i in 0..20 {
            log.push(i, |a, b| a == b);
        }
        log.scroll_by(3, 5);
        assert_eq!(log.scroll_up(), 3);
        log.push(100, |a, b| a == b);
        assert_eq!(log.scroll_up(), 4);
        log.scroll_by(-100, 5);
        assert_eq!(log.scroll_up(), 0);
        log.push(101, |a, b| a == b);
        assert_eq!(log.scroll_up(), 0);
    }
}
