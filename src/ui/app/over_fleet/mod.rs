//! The App's sub-state over a fleet ([`FleetState`], the one field
//! `crate::ui::App::over_fleet` fills) and the App's input path for the
//! fleet's actions: every host's rows merged in one order (HOST first)
//! with the Instances selection, the commands sent and the replies'
//! tally, and every action sent to the owning host's agent
//! (`serve --stdio`, docs/protocol.md "Commands") after the App's `[y/N]`,
//! naming the host and what runs there. The panes that draw these rows
//! are the console's (`crate::ui::panes`); the focus, the other panes'
//! cursors and `z` (lent for each event as [`Panes`]), the marks
//! ([`FleetMarks`]), the detail and logs views
//! (`crate::ui::app::HostView`) and every other layer are the App's.
//! Pure UI state: lines and links in ([`FleetState::line`],
//! [`FleetState::link`]), effects out ([`FleetEffect`]), what is for a text
//! view out as [`ToView`]; the agent on each host checks every command
//! again by its key's rules.

mod actions;
mod command_line;
mod draw;
mod filtered;
mod keys;
mod replies;
mod views;

use std::cell::{Cell, Ref, RefCell};
use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

pub use draw::draw_filter_prompt;
pub(crate) use draw::{draw_footer, draw_text};
pub use views::TextKey;

use crate::model::fleet::rows::InstanceKey;
use crate::model::fleet::wire::{self, Message};
use crate::model::fleet::{Applied, Bounds, Fleet, Link, LinkState, RowRef};
use crate::model::protocol::command::{Command, Request};
use crate::model::sort_key::SortKey;
use crate::model::text::sanitize_short;
use crate::ui::filter::Filter;

/// How often a connected host is pinged for its round trip (ms).
pub const PING_EVERY_MS: i64 = 10_000;

pub use crate::ui::app::host_view::{HostView, MAX_LOG_LINES, Search, ToView};

/// The marks over a fleet, the App's (`space`, Ctrl-A): each a (host
/// index, instance name and birth), so a mark never moves to another
/// host's instance of that name, nor to a later instance of it.
pub type FleetMarks = BTreeSet<(usize, InstanceKey)>;

/// What the App over a fleet asks its wiring to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FleetEffect {
    /// Write `line` (one protocol command, JSON, no newline) to host
    /// `host`'s agent.
    Send {
        /// The host's index in the fleet (as given to [`FleetState::new`]).
        host: usize,
        /// The command line.
        line: String,
    },
}

pub use crate::ui::app::focus::Focus;

/// The App's pane state the fleet's keys read and move, lent by the App
/// for one event: its focus, each pane's cursor (Instances' selection is
/// the merged order's, kept with it) and its marks.
#[derive(Debug)]
pub struct Panes<'a> {
    /// The App's focus (`Focus::Supervisor` is never focused over a fleet).
    pub focus: &'a mut Focus,
    /// The Operations pane's row in [`FleetState::operations`].
    pub operations: &'a mut usize,
    /// The Backoffs pane's row in [`FleetState::backoffs`].
    pub backoffs: &'a mut usize,
    /// The Activity pane's line, counted from the newest (0).
    pub activity: &'a mut usize,
    /// The Hosts pane's row (a host's index).
    pub hosts: &'a mut usize,
    /// The App's marks over the fleet.
    pub marks: &'a mut FleetMarks,
}

impl Panes<'_> {
    /// The cursor of `focus`'s pane (`None`: Instances, whose selection
    /// is the fleet's merged order's).
    fn cursor(&self, focus: Focus) -> Option<usize> {
        match focus {
            Focus::Instances => None,
            Focus::Operations => Some(*self.operations),
            Focus::Backoffs => Some(*self.backoffs),
            Focus::Activity | Focus::Supervisor => Some(*self.activity),
            Focus::Hosts => Some(*self.hosts),
        }
    }

    /// Move `focus`'s pane's cursor to `to` (not Instances).
    fn set_cursor(&mut self, focus: Focus, to: usize) {
        match focus {
            Focus::Instances => {}
            Focus::Operations => *self.operations = to,
            Focus::Backoffs => *self.backoffs = to,
            Focus::Activity | Focus::Supervisor => *self.activity = to,
            Focus::Hosts => *self.hosts = to,
        }
    }
}

/// What the fleet's rows said since the App last took it
/// ([`FleetState::take_said`]), for the App's one flash line (which clears
/// itself after `crate::ui::app::FLASH_SECS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// Say `text` (`error`: it says something failed or was refused).
    Say {
        /// Its text.
        text: String,
        /// It says something failed or was refused.
        error: bool,
    },
    /// Clear the message line (a text view opened, a key in it).
    Clear,
    /// Clear the message line if it says the filter cannot be read (the
    /// text typed since can).
    ClearFilterError,
}

/// What was sent, by (host, id): how its reply is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sent {
    /// An action (its words: `reap alpha`) and the `y` that sent it
    /// (every command one `y` sent shares it).
    Action(String, u64),
    /// A ping sent at this instant (unix ms).
    Ping(i64),
    /// The detail of the view open now.
    Detail,
    /// The logs of the view open now.
    Logs,
    /// The end of a logs stream (its reply is not shown).
    Quiet,
}

/// What the fleet's rows hand the App: whether the first copy's flash
/// said how to let OSC 52 through, the layers asked for, the hosts' news.
#[derive(Debug, Default)]
struct Shown {
    /// The first copy's flash said how to let OSC 52 through.
    clipboard_told: bool,
    /// `?` or `:help` asked for the console's help, `/` for the filter
    /// prompt, which the App over this fleet opens as its own layer
    /// ([`FleetState::take_help`], [`FleetState::take_filter`]).
    asked: Option<Asked>,
    /// A question asked, which the App over this fleet opens in its one
    /// confirm layer ([`FleetState::take_question`]).
    question: Option<crate::ui::app::FleetQuestion>,
    /// A row asked to be seen whole (`e`), which the App over this fleet
    /// opens in its full-text layer ([`FleetState::take_full_text`]).
    full_text: Option<crate::model::fulltext::FullText>,
    /// A text view opened (Enter, `l`), which the App opens as its layer
    /// ([`FleetState::take_view`]).
    view: Option<Box<HostView>>,
    /// What the hosts said for the App's text view since the App last
    /// took it ([`FleetState::take_news`]), in order.
    news: Vec<ToView>,
}

/// A layer of the App's that a key on the fleet's rows asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// The help (`?`, `:help`).
    Help,
    /// The filter prompt (`/`).
    Filter,
    /// The `:` line.
    Command,
    /// The jump prompt (Ctrl-F).
    Jump,
}

/// The answers of one `y`'s commands, as they come.
#[derive(Debug, Default)]
struct Answers {
    batch: u64,
    lines: Vec<String>,
    refused: bool,
}

/// One host's sorted, filtered rows and the host's version they were
/// built at.
type HostOrder = (u64, Vec<usize>);

/// The merged Operations' order, (host, index) each, and the sum of the
/// hosts' versions it was built at.
type OpsOrder = (u64, Vec<(usize, usize)>);

/// The App's sub-state over a fleet: its hosts' rows (`Fleet`) and their
/// merged order with the Instances selection, the filter and sort as the
/// fleet applies them, the commands sent (by host and id) and the tally
/// of one `y`'s replies, what it hands the App (said, asked, opened).
#[derive(Debug)]
pub struct FleetState {
    fleet: Fleet,
    order: RefCell<Vec<RowRef>>,
    stale_order: Cell<bool>,
    host_orders: RefCell<Vec<Option<HostOrder>>>,
    ops_order: RefCell<Option<OpsOrder>>,
    selected: Cell<usize>,
    chosen: Option<(usize, InstanceKey)>,
    filter_text: String,
    filter: Filter,
    sort: SortKey,
    /// `S` reversed the sort's order.
    reversed: bool,
    said: Option<Said>,
    next_id: u64,
    sent: HashMap<(usize, String), Sent>,
    /// The hosts whose reaper the operator paused (a `pause` sent, no
    /// `resume` since), each with whether a pause was sent again and not
    /// yet seen: an agent started again (a reconnect) starts unpaused, and
    /// is paused again before its first pass ([`Self::tick`]).
    held: HashMap<usize, bool>,
    /// How many commands each `y` sent (by its number).
    batch_sizes: HashMap<u64, usize>,
    /// The answers so far of the latest `y` answered.
    answers: Option<Answers>,
    last_ping: Vec<i64>,
    /// Texts `y` / `Y` copied, for the wiring to send (OSC 52).
    copies: Vec<String>,
    /// `z` and the clipboard's first word.
    shown: Shown,
    /// Where the last frame drew each pane (empty under a text view): a
    /// click or the wheel finds its pane there.
    drawn_panes: RefCell<Vec<(Focus, ratatui::layout::Rect)>>,
    now: i64,
    zone: jiff::tz::TimeZone,
    dirty: bool,
    quit: bool,
}

/// A command's id as the sent map keys it.
fn id_key(id: &Value) -> String {
    match id {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl FleetState {
    /// A view over `hosts` (their names: label, else alias), none connected
    /// yet, at `now_ms` (unix milliseconds).
    #[must_use]
    pub fn new(hosts: Vec<String>, now_ms: i64) -> Self {
        Self::with_bounds(hosts, now_ms, Bounds::default())
    }

    /// [`Self::new`] with each host kept within `bounds` (the defaults:
    /// [`Bounds::default`]).
    #[must_use]
    pub fn with_bounds(hosts: Vec<String>, now_ms: i64, bounds: Bounds) -> Self {
        let count = hosts.len();
        let now = now_ms.div_euclid(1000);
        Self {
            fleet: Fleet::with_bounds(hosts, now, bounds),
            order: RefCell::new(Vec::new()),
            stale_order: Cell::new(false),
            host_orders: RefCell::new(vec![None; count]),
            ops_order: RefCell::new(None),
            selected: Cell::new(0),
            chosen: None,
            filter_text: String::new(),
            filter: Filter::default(),
            sort: SortKey::Host,
            reversed: false,
            said: None,
            next_id: 1,
            sent: HashMap::new(),
            held: HashMap::new(),
            batch_sizes: HashMap::new(),
            answers: None,
            last_ping: vec![0; count],
            copies: Vec::new(),
            shown: Shown::default(),
            drawn_panes: RefCell::new(Vec::new()),
            now,
            zone: jiff::tz::TimeZone::UTC,
            dirty: true,
            quit: false,
        }
    }

    /// One line of host `host`'s agent stream as a JSON value, at
    /// `now_ms` ([`Self::message`] once read; a line that is not the
    /// protocol is dropped: the wiring fails such a host before).
    pub fn line(&mut self, host: usize, line: &Value, now_ms: i64) {
        if let Ok(message) = serde_json::to_vec(line)
            .map_err(|e| e.to_string())
            .and_then(|raw| wire::parse(&raw))
        {
            self.message(host, message, now_ms);
        }
    }

    /// One message of host `host`'s agent stream (read on its
    /// connection's thread, [`wire::parse`]), at `now_ms`.
    pub fn message(&mut self, host: usize, message: Message, now_ms: i64) {
        self.now = now_ms.div_euclid(1000);
        let applied = self.fleet.apply(host, message);
        if let Some(one) = self.fleet.hosts.get_mut(host) {
            one.current_at = Some(self.now);
        }
        self.dirty |= !matches!(
            applied,
            Applied::Quiet | Applied::Ignored | Applied::Reply(_)
        );
        match applied {
            Applied::Tables => self.invalidate(),
            Applied::Reply(reply) => self.reply(host, &reply, now_ms),
            Applied::Log {
                logs,
                text,
                cont,
                service,
            } => self.log(host, &logs, &service, &text, cont),
            Applied::LogsEnd { logs, reason } => {
                self.shown.news.push(ToView::End { host, logs, reason });
            }
            Applied::Host | Applied::Activity | Applied::Quiet | Applied::Ignored => {}
        }
    }

    /// Host `host`'s link changed (or was first reported), at `now_ms`.
    pub fn link(&mut self, host: usize, link: Link, now_ms: i64) {
        self.now = now_ms.div_euclid(1000);
        if host >= self.fleet.hosts.len() {
            return;
        }
        if link.state == LinkState::Connecting {
            self.sent.retain(|(h, _), _| *h != host);
            self.shown.news.push(ToView::Lost { host });
        }
        self.fleet.set_link(host, link);
        self.invalidate();
        self.dirty = true;
    }

    /// This console's own note of host `host` (a command lost with its
    /// connection): a `console` Activity line of kind `kind` about
    /// `instance`, also said on the status line as an error.
    pub fn note(&mut self, host: usize, kind: &str, instance: &str, detail: String, now_ms: i64) {
        self.now = now_ms.div_euclid(1000);
        if host >= self.fleet.hosts.len() {
            return;
        }
        self.say(detail.clone(), true);
        self.fleet.note(host, self.now, kind, instance, detail);
        self.dirty = true;
    }

    /// Called about once a second: a ping to each connected host every
    /// [`PING_EVERY_MS`] (its reply is the round trip the Hosts pane
    /// shows); a filter that depends on the clock is applied again.
    pub fn tick(&mut self, now_ms: i64) -> Vec<FleetEffect> {
        self.now = now_ms.div_euclid(1000);
        self.dirty = true;
        if self.filter_text.contains("expired") {
            self.reorder();
        }
        let mut out = self.pause_again(now_ms);
        for host in 0..self.fleet.hosts.len() {
            let one = &self.fleet.hosts[host];
            if one.link.state != LinkState::Connected || one.hello.is_none() {
                continue;
            }
            if now_ms.saturating_sub(self.last_ping[host]) < PING_EVERY_MS {
                continue;
            }
            if self
                .sent
                .iter()
                .any(|((h, _), s)| *h == host && matches!(s, Sent::Ping(_)))
            {
                continue;
            }
            self.last_ping[host] = now_ms;
            out.push(self.send(host, Command::Ping, Sent::Ping(now_ms)));
        }
        out
    }

    /// A `pause` again to each connected host the operator paused whose
    /// agent now says its reaper runs (an agent started again on a
    /// reconnect starts unpaused, its first pass a few seconds away), once
    /// until its reaper is seen paused; said in Activity.
    fn pause_again(&mut self, now_ms: i64) -> Vec<FleetEffect> {
        let mut out = Vec::new();
        let held: Vec<(usize, bool)> = self.held.iter().map(|(h, s)| (*h, *s)).collect();
        for (host, sent) in held {
            let Some(one) = self.fleet.hosts.get(host) else {
                continue;
            };
            let paused = one.reaper.as_ref().map(|r| r.paused);
            if paused == Some(true) {
                self.held.insert(host, false);
                continue;
            }
            if sent
                || paused != Some(false)
                || one.link.state != LinkState::Connected
                || one.hello.is_none()
            {
                continue;
            }
            let name = self.host_name(host);
            self.note(
                host,
                "paused",
                "",
                format!("{name}'s agent started again unpaused: its reaper paused again, as the operator paused it"),
                now_ms,
            );
            let batch = self.next_id;
            self.batch_sizes.insert(batch, 1);
            out.push(self.send(
                host,
                Command::Pause,
                Sent::Action("pause".to_owned(), batch),
            ));
        }
        out
    }

    /// Host `host`'s alias (the target's host part), when it is shown by
    /// a label: `host:` and the `:` commands find it by either.
    pub fn set_alias(&mut self, host: usize, alias: &str) {
        if let Some(one) = self.fleet.hosts.get_mut(host)
            && one.name != alias
        {
            one.alias = Some(alias.to_owned());
        }
    }

    /// Show Activity times in `zone` (the console's display zone; UTC
    /// until set).
    pub fn set_zone(&mut self, zone: jiff::tz::TimeZone) {
        self.zone = zone;
    }

    /// The zone Activity times are shown in.
    #[must_use]
    pub fn zone(&self) -> &jiff::tz::TimeZone {
        &self.zone
    }

    /// Something drawn changed since the last call (a line that showed
    /// something, a link, a key, a tick): the wiring draws a frame only
    /// then, so heartbeats cost no frame.
    pub fn needs_draw(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// The texts `y` / `Y` copied since the last call: the wiring writes
    /// each to the terminal's clipboard (OSC 52, `ui::clipboard::osc52`).
    pub fn take_copies(&mut self) -> Vec<String> {
        std::mem::take(&mut self.copies)
    }

    /// The operator asked to quit.
    #[must_use]
    pub fn quit(&self) -> bool {
        self.quit
    }

    /// The fleet's state.
    #[must_use]
    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// The merged table's rows, filtered and sorted (built again after a
    /// change, at most once per frame).
    pub fn rows(&self) -> Ref<'_, Vec<RowRef>> {
        if self.stale_order.replace(false) {
            let mut cache = self.host_orders.borrow_mut();
            let per_host: Vec<Vec<usize>> = self
                .fleet
                .hosts
                .iter()
                .enumerate()
                .map(|(h, host)| match cache.get(h) {
                    Some(Some((version, list))) if *version == host.version => list.clone(),
                    _ => {
                        let kept = filtered::kept(&self.filter, host, self.now);
                        let list = host.order(&kept, self.sort);
                        if let Some(slot) = cache.get_mut(h) {
                            *slot = Some((host.version, list.clone()));
                        }
                        list
                    }
                })
                .collect();
            drop(cache);
            let rows = self.fleet.merge(&per_host, self.sort, self.reversed);
            let kept = self.chosen.as_ref().and_then(|(host, key)| {
                rows.iter().position(|r| {
                    r.host == *host && &self.fleet.hosts[r.host].instances()[r.index].key == key
                })
            });
            let at = kept.unwrap_or_else(|| self.selected.get());
            self.selected.set(at.min(rows.len().saturating_sub(1)));
            *self.order.borrow_mut() = rows;
        }
        self.order.borrow()
    }

    /// The merged order is to be built again (lazily, at the next frame or
    /// key) from each host's cached order (a host's own is sorted again
    /// only when its tables changed).
    fn invalidate(&mut self) {
        self.stale_order.set(true);
    }

    /// The filter, the sort or the clock changed: every host's order is to
    /// be built again.
    fn reorder(&mut self) {
        for slot in self.host_orders.get_mut() {
            *slot = None;
        }
        self.invalidate();
    }

    /// Keep the selected row's identity, so a reorder keeps it selected.
    fn remember(&mut self) {
        let chosen = self.selected_row().map(|r| {
            (
                r.host,
                self.fleet.hosts[r.host].instances()[r.index].key.clone(),
            )
        });
        if chosen.is_some() {
            self.chosen = chosen;
        }
    }

    /// The selected row of the merged table.
    #[must_use]
    pub fn selected_row(&self) -> Option<RowRef> {
        let rows = self.rows();
        rows.get(self.selected.get()).copied()
    }

    /// The selected row's position in [`Self::rows`].
    #[must_use]
    pub fn selected(&self) -> usize {
        let _ = self.rows();
        self.selected.get()
    }

    /// The filter's text.
    #[must_use]
    pub fn filter_text(&self) -> &str {
        &self.filter_text
    }

    /// The sort and whether its rows run high to low (drawn `▼`): the
    /// key's natural direction, flipped by `S` (as on one host).
    #[must_use]
    pub fn sort(&self) -> (SortKey, bool) {
        (self.sort, self.sort.descending() != self.reversed)
    }

    /// The text view Enter or `l` opened since the last call, for the App
    /// to open as its layer.
    pub fn take_view(&mut self) -> Option<Box<HostView>> {
        self.shown.view.take()
    }

    /// What the hosts said for a text view since the last call, in order,
    /// for the App to apply to its open view ([`HostView::apply`]).
    pub fn take_news(&mut self) -> Vec<ToView> {
        std::mem::take(&mut self.shown.news)
    }

    /// What was said since the last call, for the App's flash line.
    pub fn take_said(&mut self) -> Option<Said> {
        self.said.take()
    }

    /// The clock the view last saw (unix seconds).
    #[must_use]
    pub fn now(&self) -> i64 {
        self.now
    }

    fn say(&mut self, text: impl Into<String>, error: bool) {
        self.said = Some(Said::Say {
            text: text.into(),
            error,
        });
    }

    /// The command `command` with a new `id`, to host `host`, remembered
    /// as `sent`.
    fn send(&mut self, host: usize, command: Command, sent: Sent) -> FleetEffect {
        match command {
            Command::Pause => {
                self.held.insert(host, true);
            }
            Command::Resume => {
                self.held.remove(&host);
            }
            _ => {}
        }
        let id = format!("f{}", self.next_id);
        self.next_id += 1;
        let line = Request {
            id: &Value::String(id.clone()),
            command: &command,
        }
        .line();
        self.sent.insert((host, id), sent);
        FleetEffect::Send { host, line }
    }

    /// Where the last frame drew each pane (none under a text view): a
    /// click or the wheel finds its pane there.
    pub(crate) fn set_drawn_panes(&self, panes: Vec<(Focus, ratatui::layout::Rect)>) {
        self.drawn_panes.replace(panes);
    }

    fn host_name(&self, host: usize) -> String {
        self.fleet
            .hosts
            .get(host)
            .map(|h| sanitize_short(&h.name, 64))
            .unwrap_or_default()
    }
}
