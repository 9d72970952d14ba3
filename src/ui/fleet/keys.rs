//! The fleet view's keys: moving, the filter and sort, marks, the actions
//! (`r`, `d`, `c`, `P`, `R`, `:`) with their confirmations, and the text
//! views (Enter, `l`, `e`, `?`). Each action goes to the owning host's
//! agent as the command its key mirrors (docs/protocol.md "Commands").

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::{Value, json};

use super::{Confirm, FleetApp, FleetEffect, Focus, Layer, Sent, TextView};
use crate::model::fleet::Host;
use crate::model::fleet::rows::{Instance, InstanceKey, Operation};
use crate::model::fleet::view::{Filter, SortKey};
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
    ("y / other key", "confirm / refuse what the question names"),
    ("?", "this help"),
    (
        "q / Ctrl-C",
        "quit (each host's agent stops as on end of input)",
    ),
];

fn plain(key: &KeyEvent) -> bool {
    !key.modifiers.contains(KeyModifiers::CONTROL) && !key.modifiers.contains(KeyModifiers::ALT)
}

fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char(c)
}

/// One action on one instance, before it is confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Reap,
    Down,
}

impl FleetApp {
    /// A key at `now_ms`; what to send where.
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

    fn pane_key(&mut self, key: KeyEvent) -> Vec<FleetEffect> {
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
            KeyCode::Char('P') => return self.reaper_key(true),
            KeyCode::Char('R') => return self.reaper_key(false),
            KeyCode::Enter => return self.enter(),
            KeyCode::Char('l') => return self.open_logs(),
            KeyCode::Char('e') => self.whole(),
            _ => {}
        }
        Vec::new()
    }

    fn step(&mut self, by: i64) {
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

    fn selected_instance(&self) -> Option<(usize, &Instance)> {
        let row = self.selected_row()?;
        Some((row.host, &self.fleet.hosts[row.host].instances()[row.index]))
    }

    /// The host the reaper keys act on: the Hosts pane's selection, else
    /// the selected instance's host.
    fn target_host(&self) -> Option<usize> {
        if self.focus == Focus::Hosts {
            return Some(self.cursor[3]).filter(|h| *h < self.fleet.hosts.len());
        }
        self.selected_instance().map(|(h, _)| h)
    }

    fn toggle_mark(&mut self) {
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

    fn escape(&mut self) {
        if !self.filter_text.is_empty() {
            self.set_filter(String::new());
        } else if !self.marks.is_empty() {
            let count = self.marks.len();
            self.marks.clear();
            self.say(format!("{count} marks cleared"), false);
        }
    }

    fn set_filter(&mut self, text: String) {
        self.filter = Filter::parse(&text);
        self.filter_text = text;
        self.reorder();
    }

    fn filter_key(&mut self, key: KeyEvent) {
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

    fn ask(&mut self, lines: Vec<String>, commands: Vec<(usize, Value)>) {
        self.layers
            .push(Layer::Confirm(Confirm { lines, commands }));
    }

    fn confirm_key(&mut self, key: KeyEvent) -> Vec<FleetEffect> {
        let Some(Layer::Confirm(confirm)) = self.layers.pop() else {
            return Vec::new();
        };
        if key.code != KeyCode::Char('y') || !plain(&key) {
            self.say("not done", false);
            return Vec::new();
        }
        let mut out = Vec::new();
        for (host, command) in confirm.commands {
            let what = describe(&command);
            out.push(self.send(host, command, Sent::Action(what)));
        }
        let hosts: std::collections::BTreeSet<usize> = out
            .iter()
            .map(|FleetEffect::Send { host, .. }| *host)
            .collect();
        let names: Vec<String> = hosts.iter().map(|h| self.host_name(*h)).collect();
        self.say(
            format!(
                "sent {} command{} to {}; each host answers in Activity",
                out.len(),
                if out.len() == 1 { "" } else { "s" },
                names.join(", ")
            ),
            false,
        );
        out
    }

    /// Why host `host` cannot take `cmd` now, if it cannot.
    fn refusal(&self, host: usize, cmd: &str) -> Option<String> {
        let one = self.fleet.hosts.get(host)?;
        match one.ready(self.now) {
            Err(why) => Some(why),
            Ok(hello) if !hello.commands.iter().any(|c| c == cmd) => Some(format!(
                "{}'s agent takes no {cmd}{}",
                self.host_name(host),
                if hello.read_only {
                    " (it runs read-only)"
                } else {
                    ""
                }
            )),
            Ok(_) => None,
        }
    }

    /// The command `verb` sends for `instance` on `host`, or why not.
    fn instance_command(
        &self,
        verb: Verb,
        host: usize,
        instance: &Instance,
    ) -> Result<Value, String> {
        let one = &self.fleet.hosts[host];
        let name = sanitize_short(&instance.key.name, 96);
        if !instance.dns_safe {
            return Err(format!(
                "{name} on {} is not a DNS-safe name: never acted upon",
                self.host_name(host)
            ));
        }
        if instance.tombstoned() {
            return Err(format!(
                "{name} on {} is tombstoned already",
                self.host_name(host)
            ));
        }
        let cmd = match verb {
            Verb::Reap if !instance.expired(self.now) => {
                return Err(format!(
                    "{name} on {}: its lease has not expired: use d to tear it down",
                    self.host_name(host)
                ));
            }
            Verb::Reap => "reap",
            Verb::Down if one.pending_operation(&instance.key.name).is_some() => "queue_down",
            Verb::Down => "down",
        };
        if let Some(why) = self.refusal(host, cmd) {
            return Err(why);
        }
        Ok(json!({"cmd": cmd, "name": instance.key.name, "birth": instance.birth_value()}))
    }

    fn ask_instances(&mut self, verb: Verb) {
        if self.focus != Focus::Instances {
            self.say("r and d act on Instances (Tab to it)", true);
            return;
        }
        let targets: Vec<(usize, InstanceKey)> = if self.marks.is_empty() {
            match self.selected_instance() {
                Some((host, instance)) => vec![(host, instance.key.clone())],
                None => return,
            }
        } else {
            self.marks.iter().cloned().collect()
        };
        let mut commands = Vec::new();
        let mut refused = Vec::new();
        for (host, key) in &targets {
            let Some(instance) = self.fleet.hosts.get(*host).and_then(|h| h.instance(key)) else {
                refused.push(format!(
                    "{} on {}: gone from its host",
                    sanitize_short(&key.name, 96),
                    self.host_name(*host)
                ));
                continue;
            };
            match self.instance_command(verb, *host, instance) {
                Ok(command) => commands.push((*host, command)),
                Err(why) => refused.push(why),
            }
        }
        if commands.is_empty() {
            let first = refused.first().cloned().unwrap_or_default();
            let more = refused.len().saturating_sub(1);
            let text = if more > 0 {
                format!("{first} (and {more} more refused)")
            } else {
                first
            };
            self.say(text, true);
            return;
        }
        let lines = self.question(verb, &commands, &refused);
        self.ask(lines, commands);
    }

    fn question(&self, verb: Verb, commands: &[(usize, Value)], refused: &[String]) -> Vec<String> {
        let mut lines = Vec::new();
        if let [(host, command)] = commands {
            let name = sanitize_short(command["name"].as_str().unwrap_or_default(), 96);
            let host_name = self.host_name(*host);
            let cmd = command["cmd"].as_str().unwrap_or_default();
            let question = match cmd {
                "reap" => format!("Reap {name} on {host_name} now?"),
                "queue_down" => {
                    format!("Queue a down of {name} on {host_name} behind its pending operation?")
                }
                _ => format!("Tear down {name} on {host_name}?"),
            };
            let runs = self.runs_there(*host, cmd, command["name"].as_str().unwrap_or_default());
            lines.push(format!("{question} This runs there: {runs}"));
            if self.fleet.hosts[*host]
                .hello
                .as_ref()
                .is_some_and(|h| h.dry_run)
            {
                lines.push(format!(
                    "({host_name}'s agent runs --dry-run: it only says what it would run)"
                ));
            }
        } else {
            self.bulk_lines(verb, commands, &mut lines);
        }
        if !refused.is_empty() {
            lines.push(format!(
                "Not sent ({}): {}",
                refused.len(),
                refused.join("; ")
            ));
        }
        lines.push("y: yes · any other key: no".to_owned());
        lines
    }

    /// A bulk question's lines: how many on each host, what each runs.
    fn bulk_lines(&self, verb: Verb, commands: &[(usize, Value)], lines: &mut Vec<String>) {
        let mut per_host: BTreeMap<usize, usize> = BTreeMap::new();
        for (host, _) in commands {
            *per_host.entry(*host).or_default() += 1;
        }
        let word = if verb == Verb::Reap {
            "Reap"
        } else {
            "Tear down"
        };
        lines.push(format!(
            "{word} {} instances on {} host{}?",
            commands.len(),
            per_host.len(),
            if per_host.len() == 1 { "" } else { "s" }
        ));
        lines.push(
            per_host
                .iter()
                .map(|(h, n)| format!("{}: {n}", self.host_name(*h)))
                .collect::<Vec<_>>()
                .join(" · "),
        );
        let mut runs: Vec<(String, Vec<String>)> = Vec::new();
        for host in per_host.keys() {
            let line = self.runs_there(*host, "down", "NAME");
            match runs.iter_mut().find(|(l, _)| *l == line) {
                Some((_, hosts)) => hosts.push(self.host_name(*host)),
                None => runs.push((line, vec![self.host_name(*host)])),
            }
        }
        lines.push(match runs.as_slice() {
            [(line, _)] => format!("Each runs on its host: {line}"),
            _ => format!(
                "Each runs its host's teardown: {}",
                runs.iter()
                    .map(|(line, hosts)| format!("{}: {line}", hosts.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        });
        let queued: Vec<(usize, &str)> = commands
            .iter()
            .filter(|(_, c)| c["cmd"] == "queue_down")
            .map(|(h, c)| (*h, c["name"].as_str().unwrap_or_default()))
            .collect();
        if let Some((host, name)) = queued.first() {
            lines.push(format!(
                "{} with a pending operation {} queued behind it instead: {}",
                queued.len(),
                if queued.len() == 1 { "is" } else { "are" },
                self.runs_there(*host, "queue_down", name)
            ));
        }
    }

    /// What `cmd` runs on host `host` for `name` (an operation's id for
    /// `cancel`), as one shell-quoted, sanitized line: the teardown and the
    /// stackless program its agent's `hello` named (stackless's own when
    /// it named none).
    fn runs_there(&self, host: usize, cmd: &str, name: &str) -> String {
        let hello = self.fleet.hosts.get(host).and_then(|h| h.hello.as_ref());
        let stackless = hello
            .and_then(|h| h.stackless.clone())
            .unwrap_or_else(|| "stackless".to_owned());
        let argv: Vec<String> = match cmd {
            "queue_down" => vec![
                stackless,
                "down".into(),
                name.into(),
                "--no-wait".into(),
                "--json".into(),
            ],
            "cancel" => vec![
                stackless,
                "operation".into(),
                "cancel".into(),
                name.into(),
                "--json".into(),
            ],
            _ => match hello.filter(|h| !h.teardown.is_empty()) {
                Some(hello) => hello
                    .teardown
                    .iter()
                    .map(|a| a.replace(crate::reaper::teardown::NAME_PLACEHOLDER, name))
                    .collect(),
                None => vec![stackless, "down".into(), name.into(), "--json".into()],
            },
        };
        crate::model::text::sanitize(&crate::reaper::teardown::shell_line(&argv)).into_owned()
    }

    fn ask_cancel(&mut self) {
        if self.focus != Focus::Operations {
            self.say("c cancels an operation: Tab to Operations", true);
            return;
        }
        let Some((host, op)) = self
            .operations()
            .get(self.cursor[0])
            .map(|(h, op)| (*h, (*op).clone()))
        else {
            return;
        };
        let host_name = self.host_name(host);
        if !op.pending() {
            self.say(
                format!("operation {} on {host_name} has finished", shown_id(&op.id)),
                true,
            );
            return;
        }
        if let Some(why) = self.refusal(host, "cancel") {
            self.say(why, true);
            return;
        }
        let id = shown_id(&op.id);
        let lines = vec![
            format!(
                "Cancel operation {id} ({} {}) on {host_name}? This runs there: {}",
                sanitize_short(&op.verb, 16),
                sanitize_short(&op.instance, 96),
                self.runs_there(host, "cancel", &id)
            ),
            "y: yes · any other key: no".to_owned(),
        ];
        self.ask(
            lines,
            vec![(host, json!({"cmd": "cancel", "operation": op.id}))],
        );
    }

    fn reaper_key(&mut self, pause: bool) -> Vec<FleetEffect> {
        let Some(host) = self.target_host() else {
            return Vec::new();
        };
        let cmd = if pause {
            let paused = self.fleet.hosts[host]
                .reaper
                .as_ref()
                .is_some_and(|r| r.paused);
            if paused { "resume" } else { "pause" }
        } else {
            "pass"
        };
        self.reaper_command(cmd, &[host])
    }

    /// Send `cmd` (`pause`, `resume`, `pass`) to `hosts`: one at once;
    /// several after a `y`.
    fn reaper_command(&mut self, cmd: &str, hosts: &[usize]) -> Vec<FleetEffect> {
        let mut commands = Vec::new();
        let mut refused = Vec::new();
        for host in hosts {
            match self.refusal(*host, cmd) {
                Some(why) => refused.push(why),
                None => commands.push((*host, json!({"cmd": cmd}))),
            }
        }
        if commands.is_empty() {
            self.say(refused.join("; "), true);
            return Vec::new();
        }
        if hosts.len() == 1 {
            let host = commands[0].0;
            let command = commands.remove(0).1;
            self.say(format!("{cmd} sent to {}", self.host_name(host)), false);
            return vec![self.send(host, command, Sent::Action(cmd.to_owned()))];
        }
        let names: Vec<String> = commands.iter().map(|(h, _)| self.host_name(*h)).collect();
        let what = match cmd {
            "pause" => "Pause the reaper",
            "resume" => "Resume the reaper",
            _ => "Run a reaper pass",
        };
        let mut lines = vec![format!(
            "{what} on {} hosts ({})?",
            commands.len(),
            names.join(", ")
        )];
        if !refused.is_empty() {
            lines.push(format!(
                "Not sent ({}): {}",
                refused.len(),
                refused.join("; ")
            ));
        }
        lines.push("y: yes · any other key: no".to_owned());
        self.ask(lines, commands);
        Vec::new()
    }

    fn enter(&mut self) -> Vec<FleetEffect> {
        match self.focus {
            Focus::Instances => {
                let Some((host, instance)) = self.selected_instance() else {
                    return Vec::new();
                };
                let name = instance.key.name.clone();
                self.detail(host, &name)
            }
            Focus::Backoffs => {
                let Some((host, name)) = self
                    .backoffs()
                    .get(self.cursor[1])
                    .map(|(h, b)| (*h, b.instance.clone()))
                else {
                    return Vec::new();
                };
                self.detail(host, &name)
            }
            Focus::Operations => {
                let Some((host, name)) = self
                    .operations()
                    .get(self.cursor[0])
                    .map(|(h, op)| (*h, op.instance.clone()))
                else {
                    return Vec::new();
                };
                self.detail(host, &name)
            }
            Focus::Activity | Focus::Hosts => {
                self.whole();
                Vec::new()
            }
        }
    }

    fn detail(&mut self, host: usize, name: &str) -> Vec<FleetEffect> {
        if let Some(why) = self.refusal(host, "detail") {
            self.say(why, true);
            return Vec::new();
        }
        let effect = self.send(host, json!({"cmd": "detail", "name": name}), Sent::Detail);
        let FleetEffect::Send { line, .. } = &effect;
        let id = id_of(line);
        self.layers.push(Layer::Text(TextView {
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
        }));
        vec![effect]
    }

    fn open_logs(&mut self) -> Vec<FleetEffect> {
        let Some((host, instance)) = self.selected_instance() else {
            return Vec::new();
        };
        let name = instance.key.name.clone();
        if let Some(why) = self.refusal(host, "logs") {
            self.say(why, true);
            return Vec::new();
        }
        let effect = self.send(host, json!({"cmd": "logs", "name": name}), Sent::Logs);
        let FleetEffect::Send { line, .. } = &effect;
        let id = id_of(line);
        self.layers.push(Layer::Text(TextView {
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
        }));
        vec![effect]
    }

    /// `e`: the selected line whole, in a text view.
    fn whole(&mut self) {
        let (title, lines) = match self.focus {
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
            Focus::Operations => match self.operations().get(self.cursor[0]) {
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
            Focus::Backoffs => match self.backoffs().get(self.cursor[1]) {
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
            Focus::Activity => match self.fleet.activity.iter().rev().nth(self.cursor[2]) {
                Some(activity) => (
                    format!("activity on {}", self.host_name(activity.host)),
                    vec![super::draw::activity_text(self, activity)],
                ),
                None => return,
            },
            Focus::Hosts => match self.fleet.hosts.get(self.cursor[3]) {
                Some(host) => (
                    format!("host {}", self.host_name(self.cursor[3])),
                    host_lines(host, self.now),
                ),
                None => return,
            },
        };
        self.layers.push(Layer::Text(TextView {
            title,
            lines,
            scroll: 0,
            follow: false,
            logs: None,
            waiting: None,
        }));
    }

    fn help(&mut self) {
        self.layers.push(Layer::Text(TextView {
            title: "help: the fleet view's keys".to_owned(),
            lines: HELP.iter().map(|(k, h)| format!("{k:<16} {h}")).collect(),
            scroll: 0,
            follow: false,
            logs: None,
            waiting: None,
        }));
    }

    fn text_key(&mut self, key: KeyEvent) -> Vec<FleetEffect> {
        let Some(Layer::Text(view)) = self.layers.last_mut() else {
            return Vec::new();
        };
        let last = view.lines.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                let Some(Layer::Text(view)) = self.layers.pop() else {
                    return Vec::new();
                };
                if let Some((host, id)) = view.logs {
                    return vec![self.send(
                        host,
                        json!({"cmd": "logs_stop", "logs": id}),
                        Sent::Quiet,
                    )];
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
            _ => {}
        }
        Vec::new()
    }

    fn command_key(&mut self, key: KeyEvent) -> Vec<FleetEffect> {
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
    fn hosts_named(&self, word: Option<&str>) -> Option<Vec<usize>> {
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
    fn find(&self, target: &str) -> Result<(usize, InstanceKey), String> {
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

    fn run_command(&mut self, line: &str) -> Vec<FleetEffect> {
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
                Some(hosts) => return self.reaper_command(first, &hosts),
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

/// An operation id as shown (a string's text, a number's digits).
fn shown_id(id: &Value) -> String {
    match id {
        Value::String(text) => sanitize_short(text, 64),
        other => other.to_string(),
    }
}

/// The `id` of a command line this view wrote.
fn id_of(line: &str) -> Value {
    serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null)
}

/// A command's words for its refusal (`reap alpha`).
fn describe(command: &Value) -> String {
    let cmd = command["cmd"]
        .as_str()
        .unwrap_or_default()
        .replace('_', " ");
    match command.get("name").and_then(Value::as_str) {
        Some(name) => format!("{cmd} {}", sanitize_short(name, 96)),
        None => cmd,
    }
}

fn instance_lines(host: &Host, instance: &Instance, now: i64) -> Vec<String> {
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

fn operation_lines(op: &Operation, now: i64) -> Vec<String> {
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

fn backoff_lines(b: &crate::model::fleet::rows::Backoff, now: i64) -> Vec<String> {
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

fn host_lines(host: &Host, now: i64) -> Vec<String> {
    let mut lines = vec![format!("state: {}", super::draw::state_text(host, now))];
    if let Some(error) = &host.link.error {
        lines.push(format!("error: {}", sanitize_short(error, 4_096)));
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
