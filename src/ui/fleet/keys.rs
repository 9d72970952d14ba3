//! The fleet view's keys: moving, the filter and sort, marks, the actions
//! (`r`, `d`, `c`, `P`, `R`, `:`) with their confirmations, and the text
//! views (Enter, `l`, `e`, `?`). Each action goes to the owning host's
//! agent as the command its key mirrors (docs/protocol.md "Commands").

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::actions::{Verb, ctrl, plain};
use super::{FleetApp, FleetEffect, Focus, Layer};
use crate::model::fleet::rows::{Instance, InstanceKey, Operation};
use crate::model::fleet::view::{Filter, SortKey};
use crate::model::protocol::command::Command;
use crate::model::text::sanitize_short;

/// The help view's lines: the fleet view's keys.
pub const HELP: &[(&str, &str)] = &[
    (
        "↑ / k, ↓ / j",
        "select a row (PgUp / PgDn a page; g / G first / last)",
    ),
    (
        "Tab / Shift-Tab",
        "next / previous pane: Instances, Operations, Backoffs, Activity, Hosts",
    ),
    ("Enter", "an instance's detail, read on its host"),
    (
        "l",
        "an instance's logs, followed over its host's agent (Esc stops)",
    ),
    ("e", "the selected line whole"),
    (
        "/",
        "filter: words match host, name, substrate or status; host: name: substrate:",
    ),
    (
        "  status:",
        "status:expired (active, tombstoned, failed-up, locked); !term negates",
    ),
    (
        "s / S",
        "sort: host, lease expiry, name, status / reverse it",
    ),
    (
        "Space",
        "mark / unmark the instance (Esc clears the filter, then the marks)",
    ),
    (
        "r",
        "reap the selected (or marked) expired instances on their hosts (y/N)",
    ),
    (
        "d",
        "tear down the selected (or marked) instances on their hosts (y/N)",
    ),
    (
        "L",
        "renew the selected instance's lease as recorded, on its host (y/N; 0.4.0)",
    ),
    (
        "v",
        "verify the selected instance on its host; renews when it starts (y/N; 0.4.0)",
    ),
    (
        "c",
        "Operations: cancel the selected operation on its host (y/N)",
    ),
    (
        "P / R",
        "pause or resume / run a pass of the reaper on the selected host",
    ),
    (
        ":",
        ":reap :down [HOST/]NAME...; :pause :resume :pass [HOST|all]; :filter; :sort; :q",
    ),
    (
        "y / other key",
        "[y/N]: confirm / refuse what the question names (a key typed before the question was drawn answers nothing)",
    ),
    ("?", "this help"),
    (
        "q / Ctrl-C",
        "quit (each host's agent stops as on end of input)",
    ),
];

impl FleetApp {
    /// A key read from the terminal at `read` (the instant its burst was
    /// read), handled at `now_ms`: while a question is open, a key read
    /// before the question was first drawn ([`Self::drawn`]) is dropped
    /// without effect, whatever it is ([`crate::model::confirm::answers`]:
    /// `dy` in one write never answers the question `d` opens); anything
    /// else as [`Self::key`].
    pub fn key_at(
        &mut self,
        key: KeyEvent,
        read: std::time::Instant,
        now_ms: i64,
    ) -> Vec<FleetEffect> {
        if let Some(Layer::Confirm(confirm)) = self.layers.last()
            && !crate::model::confirm::answers(read, confirm.shown)
        {
            return Vec::new();
        }
        self.key(key, now_ms)
    }

    /// A frame began to be drawn at `at`: the first one with a question
    /// open is when it was shown (keys read before then do not answer it,
    /// [`Self::key_at`]).
    pub fn drawn(&mut self, at: std::time::Instant) {
        if let Some(Layer::Confirm(confirm)) = self.layers.last_mut() {
            confirm.shown.get_or_insert(at);
        }
    }

    /// A key at `now_ms`, taken as read after whatever is on screen was
    /// drawn; what to send where.
    pub fn key(&mut self, key: KeyEvent, now_ms: i64) -> Vec<FleetEffect> {
        self.now = now_ms.div_euclid(1000);
        self.dirty = true;
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if ctrl(&key, 'c') {
            self.quit = true;
            return Vec::new();
        }
        match self.layers.last() {
            Some(Layer::Filter) => {
                self.filter_key(key);
                Vec::new()
            }
            Some(Layer::Command(_)) => self.command_key(key),
            Some(Layer::Confirm(_)) => self.confirm_key(key),
            Some(Layer::Text(_)) => self.text_key(key),
            None => self.pane_key(key),
        }
    }

    pub(super) fn pane_key(&mut self, key: KeyEvent) -> Vec<FleetEffect> {
        if !plain(&key) {
            return Vec::new();
        }
        match key.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') => self.help(),
            KeyCode::Tab => self.focus = self.focus.next(false),
            KeyCode::BackTab => self.focus = self.focus.next(true),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::PageUp => self.step(-20),
            KeyCode::PageDown => self.step(20),
            KeyCode::Home | KeyCode::Char('g') => self.step(i64::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.step(i64::MAX / 2),
            KeyCode::Char('/') => self.layers.push(Layer::Filter),
            KeyCode::Char(':') => self.layers.push(Layer::Command(String::new())),
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                self.reorder();
            }
            KeyCode::Char('S') => {
                self.descending = !self.descending;
                self.reorder();
            }
            KeyCode::Char(' ') => self.toggle_mark(),
            KeyCode::Esc => self.escape(),
            KeyCode::Char('r') => self.ask_instances(Verb::Reap),
            KeyCode::Char('d') => self.ask_instances(Verb::Down),
            KeyCode::Char('c') => self.ask_cancel(),
            KeyCode::Char('L') => self.ask_renew_verify(true),
            KeyCode::Char('v') => self.ask_renew_verify(false),
            KeyCode::Char('P') => return self.reaper_key(true),
            KeyCode::Char('R') => return self.reaper_key(false),
            KeyCode::Enter => return self.enter(),
            KeyCode::Char('l') => return self.open_logs(),
            KeyCode::Char('e') => self.whole(),
            _ => {}
        }
        Vec::new()
    }

    pub(super) fn step(&mut self, by: i64) {
        let len = match self.focus {
            Focus::Instances => self.rows().len(),
            Focus::Operations => self.operations().len(),
            Focus::Backoffs => self.backoffs().len(),
            Focus::Activity => self.fleet.activity.len(),
            Focus::Hosts => self.fleet.hosts.len(),
        };
        let at = i64::try_from(self.cursor(self.focus)).unwrap_or(0);
        let last = i64::try_from(len).unwrap_or(0) - 1;
        let to = usize::try_from(at.saturating_add(by).clamp(0, last.max(0))).unwrap_or(0);
        match self.focus {
            Focus::Instances => {
                self.selected.set(to);
                self.remember();
            }
            Focus::Operations => self.cursor[0] = to,
            Focus::Backoffs => self.cursor[1] = to,
            Focus::Activity => self.cursor[2] = to,
            Focus::Hosts => self.cursor[3] = to,
        }
    }

    /// The merged Operations: pending first (oldest first), then finished
    /// ones, newest first.
    #[must_use]
    pub fn operations(&self) -> Vec<(usize, &Operation)> {
        let version: u64 = self.fleet.hosts.iter().map(|h| h.version).sum();
        let mut cache = self.ops_order.borrow_mut();
        if cache.as_ref().is_none_or(|(at, _)| *at != version) {
            let mut all: Vec<(usize, usize)> = self
                .fleet
                .hosts
                .iter()
                .enumerate()
                .flat_map(|(h, host)| (0..host.operations().len()).map(move |i| (h, i)))
                .collect();
            let get = |(h, i): &(usize, usize)| &self.fleet.hosts[*h].operations()[*i];
            all.sort_by(|x, y| {
                let (a, b) = (get(x), get(y));
                (
                    !a.pending(),
                    a.pending().then_some(a.created_at),
                    std::cmp::Reverse(a.updated_at),
                    x.0,
                )
                    .cmp(&(
                        !b.pending(),
                        b.pending().then_some(b.created_at),
                        std::cmp::Reverse(b.updated_at),
                        y.0,
                    ))
            });
            *cache = Some((version, all));
        }
        cache
            .as_ref()
            .map(|(_, all)| {
                all.iter()
                    .map(|&(h, i)| (h, &self.fleet.hosts[h].operations()[i]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The merged Backoffs, soonest retry first.
    #[must_use]
    pub fn backoffs(&self) -> Vec<(usize, &crate::model::fleet::rows::Backoff)> {
        let mut all: Vec<_> = self
            .fleet
            .hosts
            .iter()
            .enumerate()
            .flat_map(|(h, host)| host.backoffs().map(move |b| (h, b)))
            .collect();
        all.sort_by(|(ha, a), (hb, b)| {
            (a.next_retry_at, ha, &a.instance).cmp(&(b.next_retry_at, hb, &b.instance))
        });
        all
    }

    pub(super) fn selected_instance(&self) -> Option<(usize, &Instance)> {
        let row = self.selected_row()?;
        Some((row.host, &self.fleet.hosts[row.host].instances()[row.index]))
    }

    /// The host the reaper keys act on: the Hosts pane's selection, else
    /// the selected instance's host.
    pub(super) fn target_host(&self) -> Option<usize> {
        if self.focus == Focus::Hosts {
            return Some(self.cursor[3]).filter(|h| *h < self.fleet.hosts.len());
        }
        self.selected_instance().map(|(h, _)| h)
    }

    pub(super) fn toggle_mark(&mut self) {
        if self.focus != Focus::Instances {
            return;
        }
        let Some((host, instance)) = self.selected_instance() else {
            return;
        };
        let key = (host, instance.key.clone());
        if !self.marks.remove(&key) {
            self.marks.insert(key);
        }
        self.step(1);
    }

    pub(super) fn escape(&mut self) {
        if !self.filter_text.is_empty() {
            self.set_filter(String::new());
        } else if !self.marks.is_empty() {
            let count = self.marks.len();
            self.marks.clear();
            self.say(format!("{count} marks cleared"), false);
        }
    }

    pub(super) fn set_filter(&mut self, text: String) {
        self.filter = Filter::parse(&text);
        self.filter_text = text;
        self.reorder();
    }

    pub(super) fn filter_key(&mut self, key: KeyEvent) {
        if ctrl(&key, 'u') {
            self.set_filter(String::new());
            return;
        }
        match key.code {
            KeyCode::Enter => {
                self.layers.pop();
            }
            KeyCode::Esc => {
                self.layers.pop();
                self.set_filter(String::new());
            }
            KeyCode::Backspace => {
                let mut text = self.filter_text.clone();
                text.pop();
                self.set_filter(text);
            }
            KeyCode::Char(c) if plain(&key) && !c.is_control() => {
                let mut text = self.filter_text.clone();
                text.push(c);
                self.set_filter(text);
            }
            _ => {}
        }
    }

    pub(super) fn command_key(&mut self, key: KeyEvent) -> Vec<FleetEffect> {
        let Some(Layer::Command(text)) = self.layers.last_mut() else {
            return Vec::new();
        };
        if ctrl(&key, 'u') {
            text.clear();
            return Vec::new();
        }
        match key.code {
            KeyCode::Esc => {
                self.layers.pop();
            }
            KeyCode::Backspace if text.is_empty() => {
                self.layers.pop();
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) if plain(&key) && !c.is_control() => text.push(c),
            KeyCode::Enter => {
                let line = text.clone();
                self.layers.pop();
                return self.run_command(&line);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Host `word` (its name) or `all`; `None` when no host has that name.
    pub(super) fn hosts_named(&self, word: Option<&str>) -> Option<Vec<usize>> {
        match word {
            None => self.target_host().map(|h| vec![h]),
            Some("all") => Some((0..self.fleet.hosts.len()).collect()),
            Some(name) => self
                .fleet
                .hosts
                .iter()
                .position(|h| h.named(name))
                .map(|h| vec![h]),
        }
    }

    /// `[HOST/]NAME`: the one instance it names, or why not.
    pub(super) fn find(&self, target: &str) -> Result<(usize, InstanceKey), String> {
        let (host, name) = match target.split_once('/') {
            Some((host, name)) => {
                let Some(h) = self.fleet.hosts.iter().position(|h| h.named(host)) else {
                    return Err(format!("no host is named {}", sanitize_short(host, 64)));
                };
                (Some(h), name)
            }
            None => (None, target),
        };
        let found: Vec<(usize, InstanceKey)> = self
            .fleet
            .hosts
            .iter()
            .enumerate()
            .filter(|(h, _)| host.is_none_or(|one| one == *h))
            .flat_map(|(h, one)| {
                one.instances()
                    .iter()
                    .filter(|i| i.key.name == name && !i.tombstoned())
                    .map(move |i| (h, i.key.clone()))
            })
            .collect();
        match found.as_slice() {
            [] => Err(format!(
                "no active instance {} on the fleet",
                sanitize_short(target, 96)
            )),
            [one] => Ok(one.clone()),
            many => Err(format!(
                "{} is on {} hosts ({}): name one as HOST/NAME",
                sanitize_short(name, 96),
                many.len(),
                many.iter()
                    .map(|(h, _)| self.host_name(*h))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    pub(super) fn run_command(&mut self, line: &str) -> Vec<FleetEffect> {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else {
            return Vec::new();
        };
        let rest: Vec<&str> = words.collect();
        match first {
            "q" | "quit" => self.quit = true,
            "reap" | "down" => {
                let verb = if first == "reap" {
                    Verb::Reap
                } else {
                    Verb::Down
                };
                if rest.is_empty() {
                    self.say(format!(":{first} takes [HOST/]NAME..."), true);
                    return Vec::new();
                }
                let mut targets = Vec::new();
                for word in rest {
                    match self.find(word) {
                        Ok(target) => targets.push(target),
                        Err(why) => {
                            self.say(why, true);
                            return Vec::new();
                        }
                    }
                }
                let marks = std::mem::replace(&mut self.marks, targets.into_iter().collect());
                let focus = std::mem::replace(&mut self.focus, Focus::Instances);
                self.ask_instances(verb);
                self.marks = marks;
                self.focus = focus;
            }
            "pause" | "resume" | "pass" => match self.hosts_named(rest.first().copied()) {
                Some(hosts) => {
                    let command = match first {
                        "pause" => Command::Pause,
                        "resume" => Command::Resume,
                        _ => Command::Pass,
                    };
                    return self.reaper_command(command, &hosts);
                }
                None => self.say(
                    format!(
                        "no host is named {}",
                        sanitize_short(rest.first().copied().unwrap_or(""), 64)
                    ),
                    true,
                ),
            },
            "filter" => self.set_filter(rest.join(" ")),
            "sort" => match rest.first().copied() {
                Some("host") => self.sort = SortKey::Host,
                Some("lease") => self.sort = SortKey::Lease,
                Some("name") => self.sort = SortKey::Name,
                Some("status") => self.sort = SortKey::Status,
                _ => self.say(":sort takes host, lease, name or status", true),
            },
            "help" => self.help(),
            other => self.say(
                format!(
                    "unknown command :{} (? lists the keys and commands)",
                    sanitize_short(other, 32)
                ),
                true,
            ),
        }
        self.reorder();
        Vec::new()
    }
}
