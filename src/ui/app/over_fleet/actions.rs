//! The actions over a fleet: each key's command for the owning host, the
//! question naming the host and what runs there (`y` sends it), and the
//! refusals said before anything is sent (docs/fleet.md "Actions").

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent};
use serde_json::Value;

use super::{FleetEffect, FleetState, Focus, Panes, Sent};
use crate::model::fleet::rows::{Instance, InstanceKey};
use crate::model::protocol::command::{Cmd, Command, Target};
use crate::model::text::sanitize_short;
use crate::model::verbs;
use crate::ui::app::FleetQuestion;
use crossterm::event::KeyModifiers;

/// One action on one instance, before it is confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Reap,
    Down,
}

impl FleetState {
    /// Ask `lines` before sending `commands`: the question is the App's
    /// to open in its one confirm layer ([`Self::take_question`]).
    pub(super) fn ask(&mut self, lines: Vec<String>, commands: Vec<(usize, Command)>) {
        self.shown.question = Some(FleetQuestion { lines, commands });
    }

    /// The question asked since the last call, for the App's confirm
    /// layer (its typed-ahead guard and `[y/N]`); `y` there comes back as
    /// [`Self::answer`].
    pub fn take_question(&mut self) -> Option<FleetQuestion> {
        self.shown.question.take()
    }

    /// The App's confirm layer answered `question` (`yes`: `y` or `Y` read
    /// once the question was drawn): each command goes to its host, else
    /// nothing is sent (`not done`).
    pub fn answer(&mut self, question: FleetQuestion, yes: bool) -> Vec<FleetEffect> {
        self.dirty = true;
        if !yes {
            self.say("not done", false);
            return Vec::new();
        }
        let mut out = Vec::new();
        let batch = self.next_id;
        self.batch_sizes.insert(batch, question.commands.len());
        for (host, command) in question.commands {
            let what = describe(&command);
            out.push(self.send(host, command, Sent::Action(what, batch)));
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
    pub(super) fn refusal(&self, host: usize, cmd: Cmd) -> Option<String> {
        let cmd = cmd.as_str();
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
    pub(super) fn instance_command(
        &self,
        verb: Verb,
        host: usize,
        instance: &Instance,
    ) -> Result<Command, String> {
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
            Verb::Reap if !instance.expired(one.host_now(self.now)) => {
                return Err(format!(
                    "{name} on {}: its lease has not expired: use d to tear it down",
                    self.host_name(host)
                ));
            }
            Verb::Reap => {
                // The console's rule (`model::rules::may_tear_down`): a reap
                // never runs beside a pending operation, so it is refused
                // here, before the question, in the console's words.
                if let Some(op) = one.pending_operation(&instance.key.name) {
                    return Err(format!(
                        "{name} on {}: refused: operation pending ({} {}); the controller runs it first (d queues a teardown behind it)",
                        self.host_name(host),
                        sanitize_short(&op.verb, 16),
                        sanitize_short(&op.status, 16)
                    ));
                }
                Command::Reap
            }
            Verb::Down if one.pending_operation(&instance.key.name).is_some() => Command::QueueDown,
            Verb::Down => Command::Down,
        };
        let command = cmd(Target {
            name: instance.key.name.clone(),
            birth: instance.key.birth.clone(),
            resource_namespace: instance.resource_namespace.clone(),
            created_at: instance.created_at,
        });
        if let Some(why) = self.refusal(host, command.cmd()) {
            return Err(why);
        }
        Ok(command)
    }

    /// `r` / `d` on the panes: the question for the marked instances,
    /// else the selected one (on Instances only).
    pub(super) fn ask_instances(&mut self, verb: Verb, panes: &Panes<'_>) {
        let marks = &*panes.marks;
        if *panes.focus != Focus::Instances {
            self.say("r and d act on Instances (Tab to it)", true);
            return;
        }
        let targets: Vec<(usize, InstanceKey)> = if marks.is_empty() {
            match self.selected_instance() {
                Some((host, instance)) => vec![(host, instance.key.clone())],
                None => return,
            }
        } else {
            marks.iter().cloned().collect()
        };
        self.ask_for(verb, &targets);
    }

    /// The question for `verb` on `targets` (host, instance), each
    /// checked on its host's rows; the refusals named before `y`.
    pub(super) fn ask_for(&mut self, verb: Verb, targets: &[(usize, InstanceKey)]) {
        let mut commands = Vec::new();
        let mut refused = Vec::new();
        for (host, key) in targets {
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

    pub(super) fn question(
        &self,
        verb: Verb,
        commands: &[(usize, Command)],
        refused: &[String],
    ) -> Vec<String> {
        let mut lines = Vec::new();
        if let [(host, command)] = commands {
            let target = target_name(command);
            let name = sanitize_short(target, 96);
            let host_name = self.host_name(*host);
            let cmd = command.cmd().as_str();
            let question = match command.cmd() {
                Cmd::Reap => format!(
                    "Reap {name} on {host_name} now?{}",
                    self.skipped_backoff(*host, target)
                ),
                Cmd::QueueDown => {
                    format!("Queue a down of {name} on {host_name} behind its pending operation?")
                }
                _ => format!("Tear down {name} on {host_name}?"),
            };
            let runs = self.runs_there(*host, cmd, target);
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
        lines.push("[y/N]".to_owned());
        lines
    }

    /// What a reap of `name` on `host` skips: the backoff its host's
    /// reaper waits out after failed reaps (stackless §6 step 4), as the
    /// console's question says it (` This skips its backoff after 3 failed
    /// reaps: 2m 53s left.`); empty when none runs.
    pub(super) fn skipped_backoff(&self, host: usize, name: &str) -> String {
        let Some(backoff) = self
            .fleet
            .hosts
            .get(host)
            .and_then(|h| h.backoff(name))
            .filter(|b| b.next_retry_at > self.now)
        else {
            return String::new();
        };
        let reaps = if backoff.attempts == 1 {
            "1 failed reap".to_owned()
        } else {
            format!("{} failed reaps", backoff.attempts)
        };
        format!(
            " This skips its backoff after {reaps}: {} left.",
            crate::model::time::span(backoff.next_retry_at.saturating_sub(self.now))
        )
    }

    /// A bulk question's lines: how many on each host, what each runs.
    pub(super) fn bulk_lines(
        &self,
        verb: Verb,
        commands: &[(usize, Command)],
        lines: &mut Vec<String>,
    ) {
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
            .filter(|(_, c)| c.cmd() == Cmd::QueueDown)
            .map(|(h, c)| (*h, target_name(c)))
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
    pub(super) fn runs_there(&self, host: usize, cmd: &str, name: &str) -> String {
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

    /// `L` (`renew` at the lease's recorded duration) or `v` (`verify`)
    /// on the selected instance: the question names its host and the argv
    /// its agent runs there (`up --name NAME --lease D --json`, `verify
    /// NAME --json`, the stackless its `hello` named); refused with the
    /// reason before anything is sent (not DNS-safe, tombstoned, no lease
    /// recorded, a host not ready or whose agent takes no such command).
    pub(super) fn ask_renew_verify(&mut self, panes: &Panes<'_>, renew: bool) {
        let key = if renew { "L" } else { "v" };
        if *panes.focus != Focus::Instances {
            self.say(format!("{key} acts on Instances (Tab to it)"), true);
            return;
        }
        let Some((host, instance)) = self.selected_instance() else {
            return;
        };
        let instance = instance.clone();
        match self.renew_verify_question(renew, host, &instance) {
            Ok((lines, command)) => self.ask(lines, vec![(host, command)]),
            Err(why) => self.say(why, true),
        }
    }

    /// The question and command of `L` (`renew`) or `v` (`verify`) on
    /// `instance` of `host`, or why not.
    fn renew_verify_question(
        &self,
        renew: bool,
        host: usize,
        instance: &Instance,
    ) -> Result<(Vec<String>, Command), String> {
        let host_name = self.host_name(host);
        let name = sanitize_short(&instance.key.name, 96);
        let word = if renew { "renewed" } else { "verified" };
        if !instance.dns_safe {
            return Err(format!(
                "{name} on {host_name} is not a DNS-safe name: never acted upon"
            ));
        }
        if instance.tombstoned() {
            return Err(format!(
                "{name} on {host_name} is tombstoned: it cannot be {word}"
            ));
        }
        let target = Target {
            name: instance.key.name.clone(),
            birth: instance.key.birth.clone(),
            resource_namespace: instance.resource_namespace.clone(),
            created_at: instance.created_at,
        };
        let (command, verb) = if renew {
            let Some(secs) = instance
                .lease
                .as_ref()
                .and_then(|lease| u64::try_from(lease.duration_secs).ok())
                .filter(|secs| *secs > 0)
                .map(|secs| secs.min(verbs::MAX_LEASE_SECS))
            else {
                return Err(format!(
                    "{name} on {host_name} records no lease: it cannot be renewed as recorded"
                ));
            };
            (
                Command::Renew(target, None),
                verbs::Verb::Renew { lease_secs: secs },
            )
        } else {
            (Command::Verify(target), verbs::Verb::Verify)
        };
        if let Some(why) = self.refusal(host, command.cmd()) {
            return Err(why);
        }
        let program = self
            .fleet
            .hosts
            .get(host)
            .and_then(|h| h.hello.as_ref())
            .and_then(|h| h.stackless.clone())
            .unwrap_or_else(|| "stackless".to_owned());
        let argv = verbs::argv(&program, &instance.key.name, verb).unwrap_or_default();
        let runs =
            crate::model::text::sanitize(&crate::reaper::teardown::shell_line(&argv)).into_owned();
        let question = match verb {
            verbs::Verb::Renew { lease_secs } => format!(
                "Renew the lease of {name} on {host_name} to {} (as recorded)? This runs there: {runs}",
                verbs::lease_text(lease_secs)
            ),
            verbs::Verb::Verify => format!(
                "Verify {name} on {host_name}? This runs there: {runs} (it renews the lease when it starts)"
            ),
        };
        Ok((vec![question, "[y/N]".to_owned()], command))
    }

    pub(super) fn ask_cancel(&mut self, panes: &Panes<'_>) {
        if *panes.focus != Focus::Operations {
            self.say("c cancels an operation: Tab to Operations", true);
            return;
        }
        let Some((host, op)) = self
            .operations()
            .get(*panes.operations)
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
        if let Some(why) = self.refusal(host, Cmd::Cancel) {
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
            "[y/N]".to_owned(),
        ];
        self.ask(lines, vec![(host, Command::Cancel(operation_id(&op.id)))]);
    }

    pub(super) fn reaper_key(&mut self, panes: &Panes<'_>, pause: bool) -> Vec<FleetEffect> {
        let Some(host) = self.target_host(panes) else {
            return Vec::new();
        };
        let cmd = if pause {
            let paused = self.fleet.hosts[host]
                .reaper
                .as_ref()
                .is_some_and(|r| r.paused);
            if paused {
                Command::Resume
            } else {
                Command::Pause
            }
        } else {
            Command::Pass
        };
        self.reaper_command(cmd, &[host])
    }

    /// Send `cmd` (`pause`, `resume`, `pass`) to `hosts`: one at once;
    /// several after a `y`.
    pub(super) fn reaper_command(&mut self, command: Command, hosts: &[usize]) -> Vec<FleetEffect> {
        let cmd = command.cmd().as_str();
        let mut commands = Vec::new();
        let mut refused = Vec::new();
        for host in hosts {
            match self.refusal(*host, command.cmd()) {
                Some(why) => refused.push(why),
                None => commands.push((*host, command.clone())),
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
            let batch = self.next_id;
            self.batch_sizes.insert(batch, 1);
            return vec![self.send(host, command, Sent::Action(cmd.to_owned(), batch))];
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
        lines.push("[y/N]".to_owned());
        self.ask(lines, commands);
        Vec::new()
    }
}

/// A command's words for its refusal (`reap alpha`).
pub(super) fn describe(command: &Command) -> String {
    let cmd = command.cmd().as_str().replace('_', " ");
    match command {
        Command::Reap(t)
        | Command::Down(t)
        | Command::QueueDown(t)
        | Command::Verify(t)
        | Command::Renew(t, _) => format!("{cmd} {}", sanitize_short(&t.name, 96)),
        Command::Detail(name) | Command::Logs(name, _) => {
            format!("{cmd} {}", sanitize_short(name, 96))
        }
        _ => cmd,
    }
}

/// The name an instance's command acts on (empty for the others).
fn target_name(command: &Command) -> &str {
    match command {
        Command::Reap(t)
        | Command::Down(t)
        | Command::QueueDown(t)
        | Command::Verify(t)
        | Command::Renew(t, _) => &t.name,
        _ => "",
    }
}

/// An operation id as `cancel` sends it: a string's text, a number's
/// digits.
fn operation_id(id: &Value) -> String {
    match id {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// An operation id as shown (a string's text, a number's digits).
pub(super) fn shown_id(id: &Value) -> String {
    match id {
        Value::String(text) => sanitize_short(text, 64),
        other => other.to_string(),
    }
}

/// A key without Ctrl or Alt.
pub(super) fn plain(key: &KeyEvent) -> bool {
    !key.modifiers.contains(KeyModifiers::CONTROL) && !key.modifiers.contains(KeyModifiers::ALT)
}

/// Ctrl and `c`, either case (a terminal may report Ctrl-Shift-F as
/// Ctrl-F with the capital, as the key table takes both).
pub(super) fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(key.code, KeyCode::Char(k) if k.eq_ignore_ascii_case(&c))
}
