//! Command mode's state and what each command does: the line typed after
//! `:` (or Ctrl-F), its Tab completion and Up/Down history, and the
//! [`UiCommand`] it parses to ([`crate::ui::command`]), carried out through
//! the same paths as the keys (`:reap`/`:down`: the single key's rules, or
//! the bulk confirmation for several names).

use crossterm::event::KeyCode;

use super::command_line::CommandLine;
use super::{App, Effect, FlashLevel, Focus, Layer, LayerKind, Question};
use crate::reaper::Intent;
use crate::ui::command::{self, UiCommand};
use crate::ui::keys::Input;

/// History keeps at most this many lines.
pub(super) const HISTORY: usize = 100;

impl App {
    /// The command line, while it is open.
    #[must_use]
    pub fn command_line(&self) -> Option<&CommandLine> {
        self.layers.command()
    }

    /// `:` (`jump` false) or Ctrl-F (`jump` true): open the command line,
    /// empty.
    pub(super) fn open_command(&mut self, jump: bool) {
        self.layers.open(Layer::Command(CommandLine {
            jump,
            ..CommandLine::default()
        }));
    }

    /// A character typed, or Backspace (`None`).
    pub(super) fn command_edit(&mut self, input: Option<Input>) {
        let Some(line) = self.layers.command_mut() else {
            return;
        };
        line.cycle = None;
        match input {
            Some(Input::Key(KeyCode::Char(c), _)) => line.text.push(c),
            Some(_) => {}
            None => {
                line.text.pop();
            }
        }
    }

    /// Ctrl-U (`word` false: clear the line) or Ctrl-W (`word` true: delete
    /// the last word) in the `:` line or the `/` prompt (rows follow).
    pub(super) fn prompt_erase(&mut self, word: bool) {
        let erase = |text: &mut String| {
            if word {
                command::delete_word(text);
            } else {
                text.clear();
            }
        };
        if let Some(line) = self.layers.command_mut() {
            line.cycle = None;
            erase(&mut line.text);
        } else if let Some(editing) = self.layers.logs_mut().and_then(|v| v.editing.as_mut()) {
            erase(editing);
        } else {
            erase(&mut self.instances.filter);
            self.refilter();
        }
    }

    /// Tab: complete the last word (command names, then instance names);
    /// Tab again shows the next candidate.
    pub(super) fn command_complete(&mut self) {
        let Some(line) = self.layers.command() else {
            return;
        };
        let (text, jump, cycle) = (line.text.clone(), line.jump, line.cycle.clone());
        let (start, candidates, index) = match cycle {
            Some((start, candidates, i)) => {
                let next = (i + 1) % candidates.len();
                (start, candidates, next)
            }
            None => {
                // `:reap`/`:down` complete active names only (a tombstone
                // has nothing to tear down).
                let verb = text.split_whitespace().next().unwrap_or("");
                let active_only = !jump && text.contains(' ') && matches!(verb, "reap" | "down");
                // Over a fleet: its active instances, `[HOST/]NAME`.
                let fleet_words = self
                    .shown
                    .fleet
                    .as_deref()
                    .map(crate::ui::app::over_fleet::FleetState::instance_words);
                let names: Vec<&str> = match &fleet_words {
                    Some(words) => words.iter().map(String::as_str).collect(),
                    None => self
                        .shown
                        .snapshot
                        .instances
                        .iter()
                        .filter(|i| !active_only || i.status == crate::model::Status::Active)
                        .map(|i| i.name.as_str())
                        .collect(),
                };
                let (start, candidates) = if jump {
                    (0, command::name_candidates(&text, &names))
                } else {
                    command::candidates(&text, &names)
                };
                if candidates.is_empty() {
                    return;
                }
                (start, candidates, 0)
            }
        };
        let mut completed = text[..start].to_owned();
        completed.push_str(&candidates[index]);
        let Some(line) = self.layers.command_mut() else {
            return;
        };
        if candidates.len() == 1 {
            completed.push(' ');
            line.cycle = None;
        } else {
            line.cycle = Some((start, candidates, index));
        }
        line.text = completed;
    }

    /// Up (`-1`) or Down (`1`) through the history.
    pub(super) fn command_history(&mut self, delta: isize) {
        let history = &self.command_history;
        let len = history.len();
        let Some(line) = self.layers.command_mut() else {
            return;
        };
        if len == 0 || line.jump {
            return;
        }
        line.cycle = None;
        let at = match (line.at, delta < 0) {
            (None, true) => Some(len - 1),
            (None, false) => None,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < len => Some(i + 1),
            (Some(_), false) => None,
        };
        line.at = at;
        line.text = at.map_or_else(String::new, |i| history[i].clone());
    }

    /// Esc: close the line.
    pub(super) fn command_cancel(&mut self) {
        self.layers.close(LayerKind::Command);
    }

    /// Enter: close the line, keep it in the history and carry it out. A
    /// jump line (Ctrl-F) only ever jumps. A `:` line that is one word
    /// naming both a command and an instance runs the command, and the
    /// flash says how to jump to the instance instead.
    pub(super) fn command_run(&mut self) -> Option<Effect> {
        let Some(Layer::Command(closed)) = self.layers.close(LayerKind::Command) else {
            return None;
        };
        let line = closed.text.trim().to_owned();
        if line.is_empty() {
            return None;
        }
        if closed.jump {
            self.jump(&line);
            return None;
        }
        if self.command_history.last() != Some(&line) {
            self.command_history.push(line.clone());
            if self.command_history.len() > HISTORY {
                self.command_history.remove(0);
            }
        }
        let result = match command::parse(&line) {
            Ok(parsed) => self.run(parsed),
            Err(error) => {
                // An error that names its command (`:renew needs instance
                // names`) is said once, not after the line again.
                let text = if error.starts_with(':') {
                    error
                } else {
                    format!(":{line}: {error}")
                };
                self.set_flash(FlashLevel::Warning, text);
                None
            }
        };
        if command::COMMANDS.contains(&line.as_str())
            && self.shown.snapshot.instance(&line).is_some()
        {
            self.note_shadowed(&line);
        }
        result
    }

    /// `:WORD` ran the command although an instance is named `WORD` too:
    /// add how to jump to it to the flash.
    fn note_shadowed(&mut self, word: &str) {
        let hint = format!(
            "\"{word}\" is also an instance: Ctrl-F {word} Enter jumps to it (:{word} runs the command)"
        );
        let (level, text) = match self.flash.take() {
            Some(flash) if super::flash_live(&flash, self.wall_now()) => {
                (flash.level, format!("{} · {hint}", flash.text))
            }
            _ => (FlashLevel::Info, hint),
        };
        self.set_flash(level, text);
    }

    fn run(&mut self, parsed: UiCommand) -> Option<Effect> {
        match parsed {
            UiCommand::Reap(names) => return self.command_write(Intent::Reap, &names),
            UiCommand::Down(names) => return self.command_write(Intent::TearDown, &names),
            UiCommand::Renew(names, lease) => {
                self.command_verbs(&names, super::verbs::Asked::Renew(lease));
            }
            UiCommand::Verify(names) => self.command_verbs(&names, super::verbs::Asked::Verify),
            UiCommand::Filter(expr) => {
                self.instances.filter = expr;
                self.refilter();
                self.keep_filter();
            }
            UiCommand::Sort(key, descending) => {
                self.set_sort(key, descending);
                let text = if self.instances.reversed {
                    format!("sort: {}, reversed", key.label())
                } else {
                    format!("sort: {}", key.label())
                };
                self.set_flash(FlashLevel::Info, text);
            }
            // The rules of the keys `P` and `R` ([`crate::model::rules`]).
            // On one host the parser names no host (`ui::command::parse`).
            UiCommand::Pause(_) => return self.admit_key(&crate::model::rules::Action::Pause),
            UiCommand::Resume(_) => return self.admit_key(&crate::model::rules::Action::Resume),
            UiCommand::Pass(_) => return self.pass_key(),
            UiCommand::Logs(name) => {
                if !self.shown.snapshot.instances.iter().any(|i| i.name == name) {
                    self.set_flash(
                        FlashLevel::Warning,
                        format!(
                            "no instance named \"{}\"",
                            crate::model::text::sanitize_short(&name, crate::ui::text::CUT_SHORT)
                        ),
                    );
                    return None;
                }
                self.jump(&name);
                return self.open_logs();
            }
            UiCommand::Ops => {
                if self.shown.snapshot.generation.has_operations() {
                    self.focus = Focus::Operations;
                } else {
                    self.set_flash(
                        FlashLevel::Warning,
                        format!(
                            "no operations on this store (schema v{}: stackless 0.4.0 has them)",
                            self.shown.snapshot.generation.user_version
                        ),
                    );
                }
            }
            UiCommand::Help => self.open_help(),
            UiCommand::At(text) => return self.seek_typed(&text),
            UiCommand::Quit => {
                self.quitting = true;
                return Some(Effect::Quit);
            }
            // Typed after `:`, neither a command nor a name: most likely a
            // mistyped command.
            UiCommand::Jump(query) => {
                if !self.jump(&query) {
                    self.set_flash(
                        FlashLevel::Warning,
                        format!(
                            "unknown command: {} (nor an instance name; ? lists the commands)",
                            crate::model::text::sanitize_short(&query, crate::ui::text::CUT_SHORT)
                        ),
                    );
                }
            }
        }
        None
    }

    /// `:reap`/`:down`: one name is the single key on that instance;
    /// several open the bulk confirmation. A name not in the store is
    /// refused with its reason.
    fn command_write(&mut self, intent: Intent, names: &[String]) -> Option<Effect> {
        if let Some(reason) = self.write_keys_off() {
            let reason = reason.into_owned();
            self.refuse("", reason);
            return None;
        }
        let mut found = Vec::new();
        for name in names {
            match self.shown.snapshot.instance(name) {
                Some(instance) => found.push(instance.clone()),
                None => self.refuse(name, "refused: no such instance in the store".into()),
            }
        }
        match (found.len(), intent) {
            (0, _) => None,
            (1, Intent::Reap) => {
                self.reap_instance(found.remove(0));
                None
            }
            (1, Intent::TearDown) => {
                self.down_instance(found.remove(0));
                None
            }
            _ => {
                let mut names: Vec<String> = found.into_iter().map(|i| i.name).collect();
                names.sort();
                names.dedup();
                let bulk = self.bulk(intent, names, false, 0);
                self.ask(Question::Bulk(bulk));
                None
            }
        }
    }

    /// `:NAME` (and Ctrl-F): select the instance matching `query` best
    /// ([`command::fuzzy`]), clearing a filter that hides it; `false` (the
    /// footer says no instance matches) when none does.
    fn jump(&mut self, query: &str) -> bool {
        let names = self
            .shown
            .snapshot
            .instances
            .iter()
            .map(|i| i.name.as_str());
        let Some(at) = command::fuzzy(query, names) else {
            self.set_flash(
                FlashLevel::Warning,
                format!(
                    "no instance matches \"{}\"",
                    crate::model::text::sanitize_short(query, crate::ui::text::CUT_SHORT)
                ),
            );
            return false;
        };
        let name = self.shown.snapshot.instances[at].name.clone();
        let position = u32::try_from(at).ok();
        if !self.instances.order.iter().any(|&p| Some(p) == position) {
            self.instances.filter.clear();
            self.refilter();
        }
        self.focus = Focus::Instances;
        self.instances.selected_name = Some(name.clone());
        if let Some(row) = self
            .instances
            .order
            .iter()
            .position(|&p| Some(p) == position)
        {
            self.instances.selected = row;
        }
        self.set_flash(
            FlashLevel::Info,
            format!(
                "jumped to {}",
                crate::model::text::sanitize_short(&name, crate::ui::text::CUT_SHORT)
            ),
        );
        true
    }
}
