//! The App's one `:` line and jump prompt over a fleet: `:` and Ctrl-F on
//! a fleet's rows open the App's [`Layer::Command`] (its key table's
//! `CommandLine` keys: typing, Backspace, Ctrl-U / Ctrl-W, Tab cycling the
//! candidates (the fleet's `[HOST/]NAME` words), ↑↓ the App's history,
//! Esc); Enter hands the line to the fleet: a jump selects the row, a
//! command is read by the console's parser over a fleet
//! (`crate::ui::command::parse_over_fleet`) and carried out there.

use std::ops::ControlFlow;

use crossterm::event::Event as Term;

use super::command::HISTORY;
use super::{App, Effect, Layer, LayerKind};
use crate::event::Event;
use crate::ui::keys::{self, Action, Context, Input};

impl App {
    /// Enter on the App's command line over a fleet: the line closes, a
    /// `:` line is kept in the App's history, and the fleet carries it
    /// out (a jump selects the best-matching row). `Continue`: any other
    /// key, the App's key table takes it.
    pub(super) fn fleet_command_key(
        &mut self,
        event: &Event,
        now_ms: i64,
    ) -> ControlFlow<Option<Effect>> {
        if self.layers.top_kind() != Some(LayerKind::Command) {
            return ControlFlow::Continue(());
        }
        let (Event::InputAt(Term::Key(key), _) | Event::Input(Term::Key(key))) = event else {
            return ControlFlow::Continue(());
        };
        if keys::resolve(Context::CommandLine, Input::Key(key.code, key.modifiers))
            != Some(Action::CommandRun)
        {
            return ControlFlow::Continue(());
        }
        let Some(Layer::Command(closed)) = self.layers.close(LayerKind::Command) else {
            return ControlFlow::Break(None);
        };
        let line = closed.text.trim().to_owned();
        if line.is_empty() {
            return ControlFlow::Break(None);
        }
        if !closed.jump && self.command_history.last() != Some(&line) {
            self.command_history.push(line.clone());
            if self.command_history.len() > HISTORY {
                self.command_history.remove(0);
            }
        }
        let Some((fleet, mut panes)) = super::fleet::lend_panes!(self) else {
            return ControlFlow::Break(None);
        };
        fleet.at(now_ms);
        if closed.jump {
            fleet.jump(&line, panes.focus);
            return ControlFlow::Break(None);
        }
        let sent = fleet.run_command(&line, &mut panes);
        ControlFlow::Break((!sent.is_empty()).then_some(Effect::Fleet(sent)))
    }
}
