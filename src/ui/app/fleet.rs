//! The App over a fleet of two or more hosts: its fleet sub-state
//! (`crate::ui::app::over_fleet::FleetState`: every host's rows merged
//! from its agent's typed stream, its links, the commands sent to each
//! host) held as the one source of rows ([`App::over_fleet`]); the App
//! takes the same events (keys with their read instant, the tick, a
//! signal) and hands the commands on as [`Effect::Fleet`].

use std::ops::ControlFlow;

use crossterm::event::Event as Term;

use super::{
    App, AppConfig, Effect, FlashLevel, FleetQuestion, FullView, Layer, LayerKind, Question,
};
use crate::event::Event;
use crate::ui::app::over_fleet::{FleetState, Said};

/// The fleet's rows and the App's pane state lent to them for one event
/// (`crate::ui::app::over_fleet::Panes`: the App's focus, its Operations and
/// Backoffs selections, the Activity and Hosts cursors, the marks), from
/// disjoint fields of the App `$app`; `None` when not over a fleet.
macro_rules! lend_panes {
    ($app:expr) => {
        $app.shown.fleet.as_deref_mut().map(|fleet| {
            (
                fleet,
                crate::ui::app::over_fleet::Panes {
                    focus: &mut $app.focus,
                    operations: &mut $app.operations.index,
                    backoffs: &mut $app.backoffs.index,
                    activity: &mut $app.shown.fleet_cursors.activity,
                    hosts: &mut $app.shown.fleet_cursors.hosts,
                    marks: &mut $app.instances.fleet_marks,
                },
            )
        })
    };
}
pub(super) use lend_panes;

impl App {
    /// An App over a fleet: `fleet` holds its hosts (none connected yet);
    /// no local store is read (`config.store_label` names the fleet).
    #[must_use]
    pub fn over_fleet(fleet: FleetState, config: AppConfig, now: i64) -> Self {
        let mut app = Self::new(config, now);
        app.shown.fleet = Some(Box::new(fleet));
        app
    }

    /// [`App::handle`] at `now_ms` (unix milliseconds): over a fleet the
    /// pings' round trips are timed to the millisecond (the fleet's
    /// wiring calls this); on one host, `App::handle` at its second.
    pub fn handle_ms(&mut self, event: Event, now_ms: i64) -> Option<Effect> {
        if self.shown.fleet.is_some() {
            self.now = now_ms.div_euclid(1000);
            return self.fleet_event(event, now_ms);
        }
        self.handle(event, now_ms.div_euclid(1000))
    }

    /// The marks over a fleet (`space`, Ctrl-A): (host, name and birth)
    /// each.
    #[must_use]
    pub fn fleet_marks(&self) -> &crate::ui::app::over_fleet::FleetMarks {
        &self.instances.fleet_marks
    }

    /// The row of `focus`'s pane over a fleet: the Instances selection in
    /// the merged order, the Operations and Backoffs selections, the
    /// Activity line counted from the newest (0), the Hosts row; 0 when
    /// not over a fleet.
    #[must_use]
    pub fn fleet_cursor(&self, focus: super::Focus) -> usize {
        use super::Focus;
        match focus {
            Focus::Instances => self.fleet().map_or(0, FleetState::selected),
            Focus::Operations => self.operations.index,
            Focus::Backoffs => self.backoffs.index,
            Focus::Activity | Focus::Supervisor => self.shown.fleet_cursors.activity,
            Focus::Hosts => self.shown.fleet_cursors.hosts,
        }
    }

    /// The fleet shown, when this App is over a fleet.
    #[must_use]
    pub fn fleet(&self) -> Option<&FleetState> {
        self.shown.fleet.as_deref()
    }

    /// The fleet shown, to apply a host's lines and links to (the fleet's
    /// wiring, `crate::fleet`), when this App is over a fleet.
    pub fn fleet_mut(&mut self) -> Option<&mut FleetState> {
        self.shown.fleet.as_deref_mut()
    }

    /// One event over a fleet (`now_ms`: unix milliseconds): keys (only
    /// those read once a question was drawn answer it,
    /// `crate::model::confirm::answers`), the mouse, the tick (pings are
    /// due), a signal; what to send where as [`Effect::Fleet`]. While the
    /// App's own layer is open over the fleet (the help, which `?` and
    /// `:help` open over 1..N hosts alike), the keys and the mouse are
    /// the App's, through its key table. A host's connection
    /// ([`Event::Host`]) is the wiring's: it applies the lines through
    /// [`App::fleet_mut`].
    pub(super) fn fleet_event(&mut self, event: Event, now_ms: i64) -> Option<Effect> {
        let input = matches!(
            event,
            Event::InputAt(Term::Key(_) | Term::Mouse(_), _)
                | Event::Input(Term::Key(_) | Term::Mouse(_))
        );
        if input && self.layers.top_host_view_mut().is_some() {
            return self.host_view_input(&event, now_ms);
        }
        if input && self.layers.top().is_some() {
            return self.fleet_layer_input(event, now_ms);
        }
        if let Event::InputAt(Term::Key(key), _) | Event::Input(Term::Key(key)) = &event
            && self.zoom_over_fleet(*key)
        {
            return None;
        }
        let (fleet, mut panes) = lend_panes!(self)?;
        let sent = match event {
            Event::InputAt(Term::Key(key), _) | Event::Input(Term::Key(key)) => {
                fleet.key(key, now_ms, &mut panes)
            }
            Event::InputAt(Term::Mouse(mouse), _) | Event::Input(Term::Mouse(mouse)) => {
                fleet.mouse(mouse, &mut panes);
                Vec::new()
            }
            Event::InputAt(Term::Resize(..), _) | Event::Input(Term::Resize(..)) => {
                self.shown.owed = true;
                Vec::new()
            }
            Event::Tick => fleet.tick(now_ms),
            Event::Terminate(_) => {
                self.quitting = true;
                return Some(Effect::Quit);
            }
            _ => Vec::new(),
        };
        self.open_fleets_asks();
        (!sent.is_empty()).then_some(Effect::Fleet(sent))
    }

    /// `z` on the panes over a fleet (the key table's
    /// [`crate::ui::keys::Action::ToggleZoom`]): the App's own zoom, as on
    /// one host; `true` when the key was it.
    fn zoom_over_fleet(&mut self, key: crossterm::event::KeyEvent) -> bool {
        use crate::ui::keys::{self, Action, Context, Input};
        if key.kind == crossterm::event::KeyEventKind::Release
            || keys::resolve(Context::Panes, Input::Key(key.code, key.modifiers))
                != Some(Action::ToggleZoom)
        {
            return false;
        }
        self.arrangement.zoom = !self.arrangement.zoom;
        self.shown.owed = true;
        true
    }

    /// A key while a host's text view (detail, logs) is the App's top
    /// layer: the fleet's text keys over it (its scroll keys, the logs
    /// search, an instance's key as on the panes); Esc closes it. The
    /// mouse does nothing there.
    fn host_view_input(&mut self, event: &Event, now_ms: i64) -> Option<Effect> {
        let (Event::InputAt(Term::Key(key), _) | Event::Input(Term::Key(key))) = event else {
            return None;
        };
        let (fleet, mut panes) = lend_panes!(self)?;
        let view = self.layers.top_host_view_mut()?;
        let outcome = fleet.text_key(view, *key, now_ms, &mut panes);
        if outcome.close {
            let kind = self.layers.top_kind()?;
            self.layers.close(kind);
        }
        self.open_fleets_asks();
        (!outcome.sent.is_empty()).then_some(Effect::Fleet(outcome.sent))
    }

    /// A key or the mouse while the App's own layer is open over the
    /// fleet: the App's, through its key table (the filter prompt's moves
    /// and Enter, the `:` line's Enter are handed to the fleet's rows).
    fn fleet_layer_input(&mut self, event: Event, now_ms: i64) -> Option<Effect> {
        self.shown.owed = true;
        if let ControlFlow::Break(effect) = self.fleet_filter_key(&event, now_ms) {
            return effect;
        }
        if let ControlFlow::Break(effect) = self.fleet_command_key(&event, now_ms) {
            self.open_fleets_asks();
            return effect;
        }
        let filtering = self.layers.has(LayerKind::Filter);
        let effect = match event {
            Event::InputAt(term, read) => self.input_at(term, read),
            Event::Input(term) => self.input(term),
            _ => None,
        };
        if filtering {
            self.sync_fleet_filter();
        }
        self.open_fleets_asks();
        // No local store over a fleet: only a quit or a host's command
        // leaves.
        effect.filter(|e| matches!(e, Effect::Quit | Effect::Fleet(_)))
    }

    /// What the fleet said or asked since the App last looked (a host's
    /// answer, a command refused at once, a link's change: the fleet's
    /// wiring applies those to [`App::fleet_mut`] and calls this after):
    /// on the App's one flash line and layers.
    pub fn settle_fleet(&mut self) {
        self.open_fleets_asks();
    }

    /// Open what the fleet's rows asked of the App (its help, filter
    /// prompt, `:` or jump line, a question, a row whole) as the App's
    /// own layers; a quit asked quits.
    fn open_fleets_asks(&mut self) {
        let Some(fleet) = self.shown.fleet.as_deref_mut() else {
            return;
        };
        let (quit, help, filter) = (fleet.quit(), fleet.take_help(), fleet.take_filter());
        let (question, full_text) = (fleet.take_question(), fleet.take_full_text());
        let command = fleet.take_command();
        let said = fleet.take_said();
        if let Some(said) = said {
            self.fleet_said(said);
        }
        if quit {
            self.quitting = true;
        }
        if help {
            self.open_help();
            self.shown.owed = true;
        }
        if let Some(question) = question {
            self.ask(Question::Fleet(question));
            self.shown.owed = true;
        }
        if filter {
            self.open_fleet_filter();
            self.shown.owed = true;
        }
        if let Some(jump) = command {
            self.open_command(jump);
            self.shown.owed = true;
        }
        if let Some(text) = full_text {
            self.layers.open(Layer::FullText(FullView::new(text)));
            self.shown.owed = true;
        }
        self.open_host_view();
    }

    /// Open the text view the fleet's rows asked for (Enter, `l`) as the
    /// App's layer, and apply what the hosts said for text views to the
    /// open ones, in order.
    fn open_host_view(&mut self) {
        let Some(fleet) = self.shown.fleet.as_deref_mut() else {
            return;
        };
        let (view, news) = (fleet.take_view(), fleet.take_news());
        if let Some(view) = view {
            self.layers.open(Layer::HostText(view));
            self.shown.owed = true;
        }
        for one in news {
            for view in self.layers.host_views_mut() {
                view.apply(one.clone());
            }
        }
    }

    /// Whether a frame is owed: over a fleet, only when something drawn
    /// changed (heartbeats cost none), the terminal was resized or the
    /// App's own layer changed; on one host, always (a frame per batch of
    /// events).
    pub fn needs_draw(&mut self) -> bool {
        let owed = std::mem::take(&mut self.shown.owed);
        match self.shown.fleet.as_deref_mut() {
            Some(fleet) => fleet.needs_draw() || owed,
            None => true,
        }
    }

    /// The App's confirm layer answered a question over a fleet (`yes`:
    /// `y` read once it was drawn): the fleet sends each command to its
    /// host, else says `not done`.
    pub(super) fn confirm_fleet(&mut self, question: FleetQuestion, yes: bool) -> Option<Effect> {
        self.shown.owed = true;
        let sent = self.shown.fleet.as_deref_mut()?.answer(question, yes);
        (!sent.is_empty()).then_some(Effect::Fleet(sent))
    }

    /// What the fleet's rows said, on the App's one flash line (a refusal
    /// or a failure a warning, anything else information; cleared after
    /// [`super::FLASH_SECS`] as on one host).
    fn fleet_said(&mut self, said: Said) {
        match said {
            Said::Say { text, error } => {
                let level = if error {
                    FlashLevel::Warning
                } else {
                    FlashLevel::Info
                };
                self.set_flash(level, text);
            }
            Said::Clear => self.flash = None,
            Said::ClearFilterError => {
                if self
                    .flash
                    .as_ref()
                    .is_some_and(|f| f.level != FlashLevel::Info && f.text.starts_with("filter \""))
                {
                    self.flash = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Focus;

    /// Tab over a fleet: Instances → Operations → Backoffs → Activity →
    /// Hosts → Instances (no Supervisor pane); Shift-Tab goes back.
    #[test]
    fn tab_over_a_fleet_cycles_its_five_panes_and_shift_tab_goes_back() {
        let mut at = Focus::Instances;
        let mut seen = vec![at];
        for _ in 0..5 {
            at = at.next_over_fleet(false);
            seen.push(at);
        }
        assert_eq!(
            seen,
            [
                Focus::Instances,
                Focus::Operations,
                Focus::Backoffs,
                Focus::Activity,
                Focus::Hosts,
                Focus::Instances,
            ]
        );
        for pane in &seen[..5] {
            assert_eq!(pane.next_over_fleet(false).next_over_fleet(true), *pane);
        }
    }
}
