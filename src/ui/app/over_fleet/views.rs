//! The fleet view's text views: an instance's detail and logs, read over
//! its host's agent, a line whole (`e`), the help (`?`), and their keys.

use crossterm::event::{KeyCode, KeyEvent};
use serde_json::Value;

use crate::model::protocol::command::{Cmd, Command};

use super::actions::shown_id;
use super::{FleetEffect, FleetState, Focus, HostView, Panes, Search, Sent};
use crate::model::fleet::Host;
use crate::model::fleet::rows::{Instance, Operation};
use crate::model::fulltext::{FullText, LABEL};
use crate::model::text::sanitize_short;
use crate::ui::keys::{self, Action, Context, Input};

impl FleetState {
    pub(super) fn enter(&mut self, panes: &Panes<'_>) -> Vec<FleetEffect> {
        // The instance of the selected line, on its host.
        let target = match *panes.focus {
            Focus::Instances => self
                .selected_instance()
                .map(|(host, instance)| (host, instance.key.name.clone())),
            Focus::Backoffs => self
                .backoffs()
                .get(*panes.backoffs)
                .map(|(h, b)| (*h, b.instance.clone())),
            Focus::Operations => self
                .operations()
                .get(*panes.operations)
                .map(|(h, op)| (*h, op.instance.clone())),
            Focus::Activity | Focus::Supervisor | Focus::Hosts => {
                self.whole(panes);
                return Vec::new();
            }
        };
        match target {
            Some((host, name)) => self.detail(host, &name),
            None => Vec::new(),
        }
    }

    pub(super) fn detail(&mut self, host: usize, name: &str) -> Vec<FleetEffect> {
        if let Some(why) = self.refusal(host, Cmd::Detail) {
            self.say(why, true);
            return Vec::new();
        }
        let effect = self.send(host, Command::Detail(name.to_owned()), Sent::Detail);
        let FleetEffect::Send { line, .. } = &effect;
        let id = id_of(line);
        self.shown.view = Some(Box::new(HostView {
            context: Context::Detail,
            title: format!(
                "detail: {} on {}",
                sanitize_short(name, 96),
                self.host_name(host)
            ),
            lines: vec![format!("reading it on {}…", self.host_name(host))],
            scroll: 0,
            follow: false,
            logs: None,
            waiting: Some((host, id)),
            search: None,
        }));
        vec![effect]
    }

    pub(super) fn open_logs(&mut self) -> Vec<FleetEffect> {
        let Some((host, instance)) = self.selected_instance() else {
            return Vec::new();
        };
        let name = instance.key.name.clone();
        if let Some(why) = self.refusal(host, Cmd::Logs) {
            self.say(why, true);
            return Vec::new();
        }
        let effect = self.send(host, Command::Logs(name.clone(), None), Sent::Logs);
        let FleetEffect::Send { line, .. } = &effect;
        let id = id_of(line);
        self.shown.view = Some(Box::new(HostView {
            context: Context::Logs,
            title: format!(
                "logs: {} on {}",
                sanitize_short(&name, 96),
                self.host_name(host)
            ),
            lines: Vec::new(),
            scroll: 0,
            follow: true,
            logs: Some((host, id.clone())),
            waiting: Some((host, id)),
            search: None,
        }));
        vec![effect]
    }

    /// `e`: the selected line whole, in a text view.
    pub(super) fn whole(&mut self, panes: &Panes<'_>) {
        let (title, lines) = match *panes.focus {
            Focus::Instances => match self.selected_instance() {
                Some((host, instance)) => (
                    format!(
                        "instance {} on {}",
                        sanitize_short(&instance.key.name, 96),
                        self.host_name(host)
                    ),
                    instance_lines(&self.fleet.hosts[host], instance, self.now),
                ),
                None => return,
            },
            Focus::Operations => match self.operations().get(*panes.operations) {
                Some((host, op)) => (
                    format!(
                        "operation {} on {}",
                        shown_id(&op.id),
                        self.host_name(*host)
                    ),
                    operation_lines(op, self.now),
                ),
                None => return,
            },
            Focus::Backoffs => match self.backoffs().get(*panes.backoffs) {
                Some((host, b)) => (
                    format!(
                        "backoff of {} on {}",
                        sanitize_short(&b.instance, 96),
                        self.host_name(*host)
                    ),
                    backoff_lines(b, self.now),
                ),
                None => return,
            },
            Focus::Activity | Focus::Supervisor => {
                match self.fleet.activity.iter().rev().nth(*panes.activity) {
                    Some(activity) => (
                        format!("activity on {}", self.host_name(activity.host)),
                        vec![crate::ui::panes::activity::fleet_text(self, activity)],
                    ),
                    None => return,
                }
            }
            Focus::Hosts => match self.fleet.hosts.get(*panes.hosts) {
                Some(host) => (
                    format!("host {}", self.host_name(*panes.hosts)),
                    host_lines(host, self.now),
                ),
                None => return,
            },
        };
        self.shown.full_text = Some(full_text(&title, &lines));
    }

    /// The row `e` asked to see whole since the last call, for the App's
    /// full-text layer (`crate::ui::app::FullView`: its wrapping under
    /// the label column, its scroll keys, `e`/Esc closing it).
    pub fn take_full_text(&mut self) -> Option<FullText> {
        self.shown.full_text.take()
    }

    /// Whether `/` asked for the filter prompt since the last call (the
    /// App over this fleet opens its own filter prompt then).
    pub fn take_filter(&mut self) -> bool {
        self.take_asked(super::Asked::Filter)
    }

    /// Whether `:` (`Some(false)`) or Ctrl-F (`Some(true)`, the jump
    /// prompt) asked for the App's command line since the last call.
    pub fn take_command(&mut self) -> Option<bool> {
        if self.take_asked(super::Asked::Command) {
            Some(false)
        } else if self.take_asked(super::Asked::Jump) {
            Some(true)
        } else {
            None
        }
    }

    /// The clock is `now_ms` (unix milliseconds), as a key's would set it,
    /// and a frame is owed.
    pub fn at(&mut self, now_ms: i64) {
        self.now = now_ms.div_euclid(1000);
        self.dirty = true;
    }

    /// `?` or `:help`: the console's help is asked for (the App over this
    /// fleet opens its own help layer, the one help over 1..N hosts).
    pub(super) fn help(&mut self) {
        self.shown.asked = Some(super::Asked::Help);
    }

    /// Whether `?` or `:help` asked for the help since the last call (the
    /// App over this fleet opens its help layer then).
    pub fn take_help(&mut self) -> bool {
        self.take_asked(super::Asked::Help)
    }

    /// Whether `layer` was asked for since the last call (then no more).
    fn take_asked(&mut self, layer: super::Asked) -> bool {
        let asked = self.shown.asked == Some(layer);
        if asked {
            self.shown.asked = None;
        }
        asked
    }

    /// A key on the App's text view `view` (its scroll keys, the logs
    /// view's search, Esc closing it: then the logs stream it follows is
    /// stopped on its host); any other key as [`Self::text_other_key`].
    pub fn text_key(
        &mut self,
        view: &mut HostView,
        key: KeyEvent,
        now_ms: i64,
        panes: &mut Panes<'_>,
    ) -> TextKey {
        self.now = now_ms.div_euclid(1000);
        self.dirty = true;
        let last = view.lines.len().saturating_sub(1);
        self.said = Some(super::Said::Clear);
        let mut out = TextKey::default();
        if key.kind == crossterm::event::KeyEventKind::Release {
            return out;
        }
        if view.context == Context::Logs && search_key(view, key) {
            if view
                .search
                .as_ref()
                .is_some_and(|s| s.text.is_empty() && !s.editing)
            {
                self.say("nothing to search for: / types it", true);
            }
            return out;
        }
        match key.code {
            KeyCode::Esc => {
                out.close = true;
                if let Some((host, id)) = view.logs.take() {
                    out.sent
                        .push(self.send(host, Command::LogsStop(id), Sent::Quiet));
                }
            }
            KeyCode::Up | KeyCode::Char('k') => {
                view.follow = false;
                view.scroll = view.scroll.saturating_sub(1);
            }
            KeyCode::Down | KeyCode::Char('j') => view.scroll = (view.scroll + 1).min(last),
            KeyCode::PageUp => {
                view.follow = false;
                view.scroll = view.scroll.saturating_sub(20);
            }
            KeyCode::PageDown => view.scroll = (view.scroll + 20).min(last),
            KeyCode::Home | KeyCode::Char('g') => {
                view.follow = false;
                view.scroll = 0;
            }
            KeyCode::End | KeyCode::Char('G') => {
                view.scroll = last;
                view.follow = view.logs.is_some();
            }
            _ => out.sent = self.text_other_key(view.context, key, panes),
        }
        out
    }

    /// A key a text view does not move by: refused with the key table's
    /// reason when its action is not taken over a fleet; a key of the
    /// selected instance (`L`, `v`, `l`, `c`, `?`, `q`, ...) as on the
    /// panes, its question over this view; anything else nothing.
    fn text_other_key(
        &mut self,
        context: Context,
        key: KeyEvent,
        panes: &mut Panes<'_>,
    ) -> Vec<FleetEffect> {
        if self.refuse_key(key, &[context]) {
            return Vec::new();
        }
        let input = Input::Key(key.code, key.modifiers);
        let action = keys::resolve(context, input);
        if context == Context::Logs
            && matches!(action, Some(Action::NextPane | Action::PreviousPane))
        {
            self.say(
                "over a fleet the logs view is one stream for every service: no other to switch to",
                true,
            );
            return Vec::new();
        }
        match action {
            Some(
                Action::Quit
                | Action::OpenHelp
                | Action::RenewLease
                | Action::Verify
                | Action::OpenLogs
                | Action::CancelOperation
                | Action::TearDown
                | Action::Reap
                | Action::CopyDown,
            ) => self.pane_key(key, panes),
            _ => Vec::new(),
        }
    }
}

/// The `id` of a command line this view wrote.
pub(super) fn id_of(line: &str) -> Value {
    serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null)
}

pub(super) fn instance_lines(host: &Host, instance: &Instance, now: i64) -> Vec<String> {
    let mut lines = vec![
        format!("name: {}", sanitize_short(&instance.key.name, 4_096)),
        format!(
            "birth: {}",
            instance.key.birth.as_deref().map_or_else(
                || "none (before schema 7)".to_owned(),
                |b| sanitize_short(b, 64)
            )
        ),
        format!(
            "substrate: {} · status: {}",
            sanitize_short(&instance.substrate, 96),
            sanitize_short(&instance.status, 96)
        ),
    ];
    lines.push(match instance.lease {
        Some(lease) => format!(
            "lease: {} ({} long)",
            crate::model::time::lease_text(lease.expires_at, now),
            crate::model::time::span(lease.duration_secs)
        ),
        None => "lease: none".to_owned(),
    });
    if let Some(lock) = &instance.lock {
        lines.push(format!(
            "lock: {} by pid {} on {}, {}{}",
            sanitize_short(&lock.operation, 32),
            lock.holder_pid,
            lock.holder_host
                .as_deref()
                .map_or_else(|| "?".to_owned(), |h| sanitize_short(h, 64)),
            sanitize_short(&lock.liveness, 32),
            if lock.held {
                " (held: blocks the reaper)"
            } else {
                ""
            }
        ));
    }
    if let Some(b) = host.backoff(&instance.key.name) {
        lines.push(format!(
            "backoff: {} attempts, {}: {}",
            b.attempts,
            crate::model::time::retry_text(b.next_retry_at, now),
            sanitize_short(&b.summary, 4_096)
        ));
    }
    if instance.failed_up {
        lines.push("failed up: no lease".to_owned());
    }
    if instance.services_dead > 0 {
        lines.push(format!("{} svc dead", instance.services_dead));
    }
    if let Some(gc) = &instance.gc {
        lines.push(format!(
            "gc: due {} by the {}",
            crate::model::time::ago(gc.due_at, now),
            sanitize_short(&gc.collected_by, 32)
        ));
    }
    lines
}

/// `lines` as the console's full text titled `title`: a `label: value`
/// line whose label fits the label column ([`LABEL`]) is labelled there
/// (its value wraps under the value), any other line is kept as it is.
fn full_text(title: &str, lines: &[String]) -> FullText {
    let mut text = FullText::new(title);
    for line in lines {
        match line.split_once(": ") {
            Some((label, value)) if label.len() < LABEL - 1 && label.is_ascii() => {
                text.labelled(&format!("{label}:"), value);
            }
            _ => text.line(line),
        }
    }
    text
}

pub(super) fn host_lines(host: &Host, now: i64) -> Vec<String> {
    let mut lines = vec![format!(
        "state: {}",
        crate::ui::panes::hosts::state_text(host, now)
    )];
    if let Some(error) = &host.link.error {
        lines.push(format!("error: {}", sanitize_short(error, 4_096)));
    } else if let Some((at, error)) = &host.last_error {
        // Back since: its last error is still told whole (the Hosts pane
        // cuts it to its column).
        lines.push(format!(
            "last error: ({}) {}",
            crate::model::time::ago(*at, now),
            sanitize_short(error, 4_096)
        ));
    }
    if let Some(hello) = &host.hello {
        lines.push(format!(
            "agent: stackless-tui {} on {} · schema {}{}{}",
            sanitize_short(&hello.version, 32),
            sanitize_short(&hello.host, 64),
            hello.schema,
            if hello.read_only { " · read-only" } else { "" },
            if hello.dry_run { " · dry run" } else { "" }
        ));
    }
    if let Some(reaper) = &host.reaper {
        lines.push(sanitize_short(&reaper.text, 4_096));
    }
    for (level, text) in host.banners.values() {
        lines.push(format!(
            "{}: {}",
            sanitize_short(level, 16),
            sanitize_short(text, 4_096)
        ));
    }
    if let Some(note) = &host.note {
        lines.push(format!("note: {}", sanitize_short(note, 4_096)));
    }
    lines
}

pub(super) fn operation_lines(op: &Operation, now: i64) -> Vec<String> {
    vec![
        format!("instance: {}", sanitize_short(&op.instance, 96)),
        format!(
            "verb: {} · status: {}",
            sanitize_short(&op.verb, 16),
            sanitize_short(&op.status, 16)
        ),
        format!(
            "created {} · updated {}",
            crate::model::time::ago(op.created_at, now),
            crate::model::time::ago(op.updated_at, now)
        ),
        format!(
            "error: {}",
            op.error
                .as_deref()
                .map_or_else(|| "none".to_owned(), |e| sanitize_short(e, 4_096))
        ),
    ]
}

pub(super) fn backoff_lines(b: &crate::model::fleet::rows::Backoff, now: i64) -> Vec<String> {
    vec![
        format!(
            "attempts: {} · {}",
            b.attempts,
            crate::model::time::retry_text(b.next_retry_at, now)
        ),
        format!("error: {}", sanitize_short(&b.summary, 4_096)),
        format!(
            "remediation: {}",
            b.remediation
                .as_deref()
                .map_or_else(|| "none".to_owned(), |r| sanitize_short(r, 4_096))
        ),
    ]
}

/// The logs view's search keys (the console's `/`, `n`, `N`, and the
/// prompt's typing, Backspace, Enter, Esc); `true` when `key` was one.
/// Enter keeps the text and moves to the newest match; `n` the next older,
/// `N` the next newer (matched without case); a search with no match
/// leaves the view where it is.
fn search_key(view: &mut HostView, key: KeyEvent) -> bool {
    use crossterm::event::KeyModifiers;
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    if let Some(search) = view.search.as_mut().filter(|s| s.editing) {
        match key.code {
            KeyCode::Char(c) if plain && !c.is_control() => search.text.push(c),
            KeyCode::Backspace => {
                search.text.pop();
            }
            KeyCode::Enter => {
                search.editing = false;
                let from = view.lines.len();
                find(view, from, true);
            }
            KeyCode::Esc => view.search = None,
            _ => {}
        }
        return true;
    }
    match key.code {
        KeyCode::Char('/') if plain => {
            view.search = Some(Search {
                text: String::new(),
                editing: true,
            });
            true
        }
        KeyCode::Char('n') if plain && view.search.is_some() => {
            let from = view.scroll;
            find(view, from, true);
            true
        }
        KeyCode::Char('N') if plain && view.search.is_some() => {
            let from = view.scroll;
            find(view, from, false);
            true
        }
        KeyCode::Esc if view.search.is_some() => {
            view.search = None;
            true
        }
        _ => false,
    }
}

/// Scroll `view` to the nearest line matching its search before `from`
/// (`older`) or after it; nothing when none does.
fn find(view: &mut HostView, from: usize, older: bool) {
    let Some(text) = view
        .search
        .as_ref()
        .map(|s| s.text.to_lowercase())
        .filter(|t| !t.is_empty())
    else {
        return;
    };
    let hit = |line: &String| line.to_lowercase().contains(&text);
    let found = if older {
        view.lines[..from.min(view.lines.len())]
            .iter()
            .rposition(hit)
    } else {
        view.lines
            .iter()
            .enumerate()
            .skip(from + 1)
            .find(|(_, l)| hit(l))
            .map(|(i, _)| i)
    };
    if let Some(at) = found {
        view.scroll = at;
        view.follow = false;
    }
}

/// What a key on a text view did: the commands it sends, and whether the
/// view closes (Esc).
#[derive(Debug, Default)]
pub struct TextKey {
    /// The commands to send.
    pub sent: Vec<FleetEffect>,
    /// The view closes.
    pub close: bool,
}
