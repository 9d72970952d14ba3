//! The fleet's `:` line: its keys (typing, history, Tab completion) and
//! its commands, read by the console's one parser
//! (`crate::ui::command::parse_over_fleet`) and carried out over the
//! fleet: an instance named `[HOST/]NAME`, the reaper's commands on a HOST
//! or `all`.

use super::actions::Verb;
use super::{FleetEffect, FleetState, Focus, Panes};
use crate::model::fleet::rows::InstanceKey;
use crate::model::protocol::command::Command;
use crate::model::text::sanitize_short;
use crate::ui::command::UiCommand;

impl FleetState {
    /// `:logs`, `:renew`, `:verify` on the one instance `[HOST/]NAME`
    /// names: selected, then its key (`l`, `L`, `v`) as on the panes.
    fn named_command(
        &mut self,
        panes: &mut Panes<'_>,
        first: &str,
        rest: &[&str],
    ) -> Vec<FleetEffect> {
        let [target] = rest else {
            self.say(format!(":{first} takes one [HOST/]NAME over a fleet"), true);
            return Vec::new();
        };
        let (host, key) = match self.find(target) {
            Ok(found) => found,
            Err(why) => {
                self.say(why, true);
                return Vec::new();
            }
        };
        if !self.select_instance(panes.focus, host, &key) {
            self.say(
                format!(
                    "{} on {} is hidden by the filter (Esc clears it)",
                    sanitize_short(&key.name, 96),
                    self.host_name(host)
                ),
                true,
            );
            return Vec::new();
        }
        match first {
            "logs" => self.open_logs(),
            "renew" => {
                self.ask_renew_verify(panes, true);
                Vec::new()
            }
            _ => {
                self.ask_renew_verify(panes, false);
                Vec::new()
            }
        }
    }

    /// Select `key`'s row of host `host` in Instances; `false` when the
    /// filter hides it.
    pub(super) fn select_instance(
        &mut self,
        focus: &mut Focus,
        host: usize,
        key: &InstanceKey,
    ) -> bool {
        let at = self.rows().iter().position(|r| {
            r.host == host && &self.fleet.hosts[r.host].instances()[r.index].key == key
        });
        let Some(at) = at else {
            return false;
        };
        *focus = Focus::Instances;
        self.selected.set(at);
        self.remember();
        true
    }

    /// The active instances as the `:` line names them: `NAME`, or
    /// `HOST/NAME` for a name on several hosts; sorted, once each.
    #[must_use]
    pub fn instance_words(&self) -> Vec<String> {
        let mut hosts_of: std::collections::BTreeMap<&str, Vec<usize>> =
            std::collections::BTreeMap::new();
        for (h, host) in self.fleet.hosts.iter().enumerate() {
            for instance in host.instances().iter().filter(|i| !i.tombstoned()) {
                hosts_of.entry(&instance.key.name).or_default().push(h);
            }
        }
        let mut words = Vec::new();
        for (name, hosts) in hosts_of {
            if let [_] = hosts.as_slice() {
                words.push(name.to_owned());
            } else {
                for h in hosts {
                    words.push(format!("{}/{name}", self.fleet.hosts[h].name));
                }
            }
        }
        words.sort();
        words.dedup();
        words
    }

    /// Host `word` (its name) or `all`; `None` when no host has that name.
    pub(super) fn hosts_named(&self, panes: &Panes<'_>, word: Option<&str>) -> Option<Vec<usize>> {
        match word {
            None => self.target_host(panes).map(|h| vec![h]),
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

    /// The `:` line, read by the console's one parser
    /// (`crate::ui::command::parse_over_fleet`: its commands, `[HOST/]NAME`,
    /// a HOST for the reaper's), then carried out over the fleet.
    /// Carry out the `:` line `line` over the fleet (the App's command
    /// line hands it here on Enter), read by the console's parser over a
    /// fleet: what to send where (a question first, for an action).
    pub fn run_command(&mut self, line: &str, panes: &mut Panes<'_>) -> Vec<FleetEffect> {
        let command = match crate::ui::command::parse_over_fleet(line) {
            Ok(command) => command,
            Err(why) => {
                self.say(why, true);
                return Vec::new();
            }
        };
        match command {
            UiCommand::Quit => self.quit = true,
            UiCommand::Reap(names) => self.command_instances(Verb::Reap, &names),
            UiCommand::Down(names) => self.command_instances(Verb::Down, &names),
            UiCommand::Pause(host) => return self.command_reaper(panes, Command::Pause, host),
            UiCommand::Resume(host) => return self.command_reaper(panes, Command::Resume, host),
            UiCommand::Pass(host) => return self.command_reaper(panes, Command::Pass, host),
            UiCommand::Filter(text) => self.set_filter(text),
            UiCommand::Sort(key, descending) => {
                self.sort = key;
                // `asc` / `desc` as on one host (else the key's own).
                self.reversed = descending.is_some_and(|d| d != key.descending());
            }
            UiCommand::Help => self.help(),
            UiCommand::At(_) => self.say(
                "over a fleet nothing is replayed: run stackless-tui replay on the host",
                true,
            ),
            UiCommand::Ops => *panes.focus = Focus::Operations,
            UiCommand::Logs(name) => return self.named_command(panes, "logs", &[name.as_str()]),
            UiCommand::Renew(names, None) => {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                return self.named_command(panes, "renew", &names);
            }
            UiCommand::Renew(_, Some(_)) => self.say(
                ":renew over a fleet renews the lease as recorded: :renew [HOST/]NAME",
                true,
            ),
            UiCommand::Verify(names) => {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                return self.named_command(panes, "verify", &names);
            }
            UiCommand::Jump(word) => self.jump(&word, panes.focus),
        }
        self.reorder();
        Vec::new()
    }

    /// `:reap` / `:down` of `names` (each `[HOST/]NAME`): the question for
    /// them all, or why one cannot be found.
    fn command_instances(&mut self, verb: Verb, names: &[String]) {
        let mut targets = Vec::new();
        for word in names {
            match self.find(word) {
                Ok(target) => targets.push(target),
                Err(why) => {
                    self.say(why, true);
                    return;
                }
            }
        }
        targets.sort();
        targets.dedup();
        self.ask_for(verb, &targets);
    }

    /// `:pause` / `:resume` / `:pass` on the host named (or `all`; `None`:
    /// the selected row's host).
    fn command_reaper(
        &mut self,
        panes: &Panes<'_>,
        command: Command,
        host: Option<String>,
    ) -> Vec<FleetEffect> {
        match self.hosts_named(panes, host.as_deref()) {
            Some(hosts) => self.reaper_command(command, &hosts),
            None => {
                self.say(
                    format!(
                        "no host is named {}",
                        sanitize_short(host.as_deref().unwrap_or(""), 64)
                    ),
                    true,
                );
                Vec::new()
            }
        }
    }
}
