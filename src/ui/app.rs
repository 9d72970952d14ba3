//! The console's UI state and its reaction to events: selection, focus,
//! scrolling, the bounded and coalesced logs, the operator keys and the
//! confirmation dialog. Drawing lives in [`super::panes`]; this module never
//! touches the terminal.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::event::{Activity, ActivityKind, Actor, Event, RoleState, StoreHealth, SupervisorNote};
use crate::model::{Instance, Snapshot, Status};
use crate::reaper::decision::{may_reap_now, may_tear_down};

/// How many entries the activity and supervisor logs keep (oldest dropped
/// first).
pub const LOG_CAPACITY: usize = 500;

/// Rows moved by PgUp/PgDn before the first frame reports a pane height.
const DEFAULT_PAGE: usize = 10;

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
    selected: usize,
    selected_name: Option<String>,
    backoff_selected: usize,
    backoff_name: Option<String>,
    supervisor: Log<SupervisorNote>,
    activity: Log<Activity>,
    confirm: Option<Instance>,
    help: bool,
    quitting: bool,
    counts: Counts,
    pub(crate) viewport: Cell<Viewport>,
}

impl App {
    /// A fresh UI at `now` (unix seconds), showing an empty snapshot until the
    /// watcher's first one arrives.
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
            selected: 0,
            selected_name: None,
            backoff_selected: 0,
            backoff_name: None,
            supervisor: Log::default(),
            activity: Log::default(),
            confirm: None,
            help: false,
            quitting: false,
            counts: Counts::default(),
            viewport: Cell::new(Viewport::default()),
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
                None
            }
            Event::Snapshot(snapshot) => {
                self.set_snapshot(snapshot);
                None
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
            // Resize: the next frame lays out again. Mouse, focus, paste:
            // not used.
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

    /// Index of the selected instance in `snapshot().instances` (meaningless
    /// when there are none).
    #[must_use]
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// The selected instance, if any.
    #[must_use]
    pub fn selected_instance(&self) -> Option<&Instance> {
        self.snapshot.instances.get(self.selected)
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
        let instances = &self.snapshot.instances;
        self.selected = reselect(
            instances.len(),
            self.selected,
            self.selected_name.as_deref(),
            |name| {
                instances
                    .binary_search_by(|i| i.name.as_str().cmp(name))
                    .ok()
            },
        );
        self.selected_name = instances.get(self.selected).map(|i| i.name.clone());
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
        if ctrl || key.modifiers.contains(KeyModifiers::ALT) {
            return None;
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
            _ => {}
        }
        None
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

    /// Move the selection (tables) or scroll (logs) by `delta` rows; positive
    /// is down/newer.
    fn move_by(&mut self, delta: isize) {
        let viewport = self.viewport.get();
        match self.focus {
            Focus::Instances => {
                let len = self.snapshot.instances.len();
                self.selected = step(self.selected, delta, len);
                self.selected_name = self
                    .snapshot
                    .instances
                    .get(self.selected)
                    .map(|i| i.name.clone());
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

    /// The instance `r` and `d` act on: the selected backoff's instance in
    /// the Backoffs pane, else the selected instance. `Err(detail)` when
    /// there is none.
    fn target(&self) -> Result<Instance, (String, String)> {
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
            Ok(()) => Some(Command::Reap { instance }),
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
