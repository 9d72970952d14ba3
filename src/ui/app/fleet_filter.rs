//! The App's one filter prompt over a fleet: `/` on a fleet's rows opens
//! the App's [`Layer::Filter`] (its key table's Filter keys: typing,
//! Backspace, Ctrl-U / Ctrl-W, Enter keeps, Esc clears), its text the
//! App's filter text; each edit is handed to the fleet, which filters
//! every host's rows by it (`crate::ui::filter`, one filter over 1..N
//! hosts). ↑↓ and PgUp/PgDn move the fleet's selection, as on one host.

use std::ops::ControlFlow;

use crossterm::event::Event as Term;

use super::{App, Effect, Layer, LayerKind};
use crate::event::Event;
use crate::ui::keys::{self, Action, Context, Input};

impl App {
    /// The fleet asked for the filter prompt (`/`): the App's prompt opens
    /// on the fleet's filter text.
    pub(super) fn open_fleet_filter(&mut self) {
        let text = self
            .shown
            .fleet
            .as_deref()
            .map(|fleet| fleet.filter_text().to_owned())
            .unwrap_or_default();
        self.instances.filter = text;
        self.layers.open(Layer::Filter);
    }

    /// A key while the App's filter prompt is open over a fleet, when it is
    /// the fleet's to act on: a move of the selection goes to the fleet's
    /// rows, Enter keeps the filter (the fleet's header shows it).
    /// `Continue`: the App's key table takes it ([`App::sync_fleet_filter`]
    /// after).
    pub(super) fn fleet_filter_key(
        &mut self,
        event: &Event,
        now_ms: i64,
    ) -> ControlFlow<Option<Effect>> {
        if self.layers.top_kind() != Some(LayerKind::Filter) {
            return ControlFlow::Continue(());
        }
        let (Event::InputAt(Term::Key(key), _) | Event::Input(Term::Key(key))) = event else {
            return ControlFlow::Continue(());
        };
        match keys::resolve(Context::Filter, Input::Key(key.code, key.modifiers)) {
            Some(Action::Up | Action::Down | Action::PageUp | Action::PageDown) => {
                let sent = match super::fleet::lend_panes!(self) {
                    Some((fleet, mut panes)) => fleet.key(*key, now_ms, &mut panes),
                    None => Vec::new(),
                };
                ControlFlow::Break((!sent.is_empty()).then_some(Effect::Fleet(sent)))
            }
            Some(Action::FilterKeep) => {
                self.layers.close(LayerKind::Filter);
                ControlFlow::Break(None)
            }
            _ => ControlFlow::Continue(()),
        }
    }

    /// The App's filter text handed to the fleet when it changed (typed,
    /// cut, cleared by Esc) while the prompt was open.
    pub(super) fn sync_fleet_filter(&mut self) {
        let text = &self.instances.filter;
        if let Some(fleet) = self.shown.fleet.as_deref_mut()
            && fleet.filter_text() != text
        {
            fleet.set_filter(text.clone());
        }
    }
}
