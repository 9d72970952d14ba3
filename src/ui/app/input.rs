//! Key handling: the current [`Context`], the lookup of a press in the key
//! table ([`crate::ui::keys`]) and what each [`Action`] does, plus moving
//! the selection or scroll of a pane (the mouse: `super::mouse`).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::rows::step;
use super::{App, Effect, FlashLevel, Focus, Layer, LayerKind, Question};
use crate::ui::detail::cursor::Move;
use crate::ui::keys::{self, Action, Context, Input};

/// Whether `action` moves within a view (the logs view takes these for its
/// lines and tabs while it is on top).
const fn is_motion(action: Action) -> bool {
    matches!(
        action,
        Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::First
            | Action::Last
            | Action::WheelUp
            | Action::WheelDown
            | Action::NextPane
            | Action::PreviousPane
    )
}

/// Rows moved by PgUp/PgDn before the first frame reports a pane height.
const DEFAULT_PAGE: usize = 10;

/// Rows (or log lines) one mouse-wheel notch moves.
pub const WHEEL_STEP: isize = 3;

impl App {
    /// Which key bindings apply now: the top layer's
    /// ([`super::Layers::context`]), else the panes'.
    #[must_use]
    pub fn context(&self) -> Context {
        self.layers.context()
    }

    /// The keys the footer shows: those of the view under any dialog, help,
    /// command line or operation overlay ([`super::Layers::footer_context`]).
    #[must_use]
    pub fn base_context(&self) -> Context {
        self.layers.footer_context()
    }

    /// A terminal event with no read instant.
    pub(super) fn input(&mut self, input: crossterm::event::Event) -> Option<Effect> {
        match input {
            crossterm::event::Event::Key(key) => self.key(key),
            crossterm::event::Event::Mouse(mouse) => self.mouse(mouse),
            // Bracketed paste: text for a prompt, never keys.
            crossterm::event::Event::Paste(text) => {
                self.paste(&text);
                None
            }
            // Resize: the next frame lays out again. Focus: not used.
            _ => None,
        }
    }

    /// A terminal event read at `read`: a key read before the open
    /// confirmation dialog was first drawn is dropped, without effect
    /// ([`crate::model::confirm::answers`]); anything else as
    /// [`App::input`].
    pub(super) fn input_at(
        &mut self,
        input: crossterm::event::Event,
        read: std::time::Instant,
    ) -> Option<Effect> {
        if matches!(input, crossterm::event::Event::Key(_))
            && let Some(confirm) = self.layers.confirm()
            && !crate::model::confirm::answers(read, confirm.shown)
        {
            return None;
        }
        self.input(input)
    }

    /// A frame began to be drawn at `at`: the first one with a
    /// confirmation dialog open is when it was shown (keys read before
    /// then do not answer it, [`App::input_at`]).
    pub fn drawn(&mut self, at: std::time::Instant) {
        if let Some(confirm) = self.layers.confirm_mut() {
            confirm.shown.get_or_insert(at);
        }
    }

    /// A key event: looked up in the key table ([`keys::resolve`]) for the
    /// current context, then carried out. Releases are ignored.
    pub(super) fn key(&mut self, key: KeyEvent) -> Option<Effect> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let input = Input::Key(key.code, key.modifiers);
        let action = keys::resolve(self.context(), input)?;
        self.act(action, input)
    }

    /// Pasted text (bracketed paste): typed into the filter or the logs
    /// search prompt when one is being edited, control characters dropped;
    /// ignored anywhere else. Never run as keys.
    pub(super) fn paste(&mut self, text: &str) {
        let chars = text.chars().filter(|c| !c.is_control());
        match self.context() {
            Context::Filter => {
                self.instances.filter.extend(chars);
                self.narrow_order();
            }
            Context::LogSearch => {
                for c in chars {
                    self.edit_search(Some(c));
                }
            }
            _ => {}
        }
    }

    /// The top layer's own motion: the logs view scrolls its lines, the
    /// operation overlay its events, the detail view moves its field
    /// cursor. `Continue` when `action` is not such a motion.
    fn move_in_top_layer(&mut self, action: Action) -> std::ops::ControlFlow<Option<Effect>> {
        let top = self.layers.top_kind();
        if top == Some(LayerKind::Logs) && is_motion(action) {
            return std::ops::ControlFlow::Break(self.move_in_logs(action));
        }
        if top == Some(LayerKind::Operation)
            && matches!(
                action,
                Action::Up
                    | Action::Down
                    | Action::PageUp
                    | Action::PageDown
                    | Action::First
                    | Action::Last
            )
        {
            self.scroll_operation(action);
            return std::ops::ControlFlow::Break(None);
        }
        if top == Some(LayerKind::Detail) && matches!(action, Action::Up | Action::Down) {
            self.move_detail(Move::Field(action == Action::Down));
            return std::ops::ControlFlow::Break(None);
        }
        if top == Some(LayerKind::Detail) && matches!(action, Action::First | Action::Last) {
            self.move_detail(Move::Edge(action == Action::Last));
            return std::ops::ControlFlow::Break(None);
        }
        std::ops::ControlFlow::Continue(())
    }

    /// Carry out `action`, which the key table gave for `input`: the top
    /// layer's motion first (the logs view scrolls its lines, the detail
    /// view moves its field cursor), then by what the action is about.
    pub(super) fn act(&mut self, action: Action, input: Input) -> Option<Effect> {
        if let std::ops::ControlFlow::Break(effect) = self.move_in_top_layer(action) {
            return effect;
        }
        match action {
            Action::Quit => {
                self.quitting = true;
                Some(Effect::Quit)
            }
            Action::Seek(seek) => self.seek_key(seek),
            Action::Timeline => self.timeline_key(),
            Action::TypeTime => {
                self.type_time_key();
                None
            }
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::First
            | Action::Last
            | Action::NextPane
            | Action::PreviousPane => {
                self.move_focused(action);
                None
            }
            Action::OpenCommand
            | Action::OpenJump
            | Action::CommandText
            | Action::CommandBackspace
            | Action::CommandComplete
            | Action::CommandPrevious
            | Action::CommandNext
            | Action::CommandRun
            | Action::CommandCancel => self.act_command(action, input),
            Action::HelpUp
            | Action::HelpDown
            | Action::HelpPageUp
            | Action::HelpPageDown
            | Action::HelpTop
            | Action::HelpBottom
            | Action::HelpSearch
            | Action::HelpText
            | Action::HelpBackspace
            | Action::HelpKeep
            | Action::HelpClear => {
                self.act_help(action, input);
                None
            }
            Action::EditFilter
            | Action::FilterText
            | Action::FilterBackspace
            | Action::FilterKeep
            | Action::FilterClear => {
                self.act_filter(action, input);
                None
            }
            Action::EditSearch
            | Action::SearchText
            | Action::SearchBackspace
            | Action::SearchKeep
            | Action::SearchClear
            | Action::SearchOlder
            | Action::SearchNewer => self.act_search(action, input),
            Action::Reap
            | Action::TearDown
            | Action::ConfirmTearDown
            | Action::CancelTearDown
            | Action::CancelOperation
            | Action::RenewLease
            | Action::Verify
            | Action::ToggleReaperPause
            | Action::ReaperPass
            | Action::CopyName
            | Action::CopyField
            | Action::CopyDown => self.act_operator(action),
            _ => self.act_views(action, input),
        }
    }

    /// A motion in the logs view: its cursor, a page, the ends, the wheel,
    /// its tabs.
    fn move_in_logs(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::Up => self.move_logs_cursor(-1),
            Action::Down => self.move_logs_cursor(1),
            Action::PageUp => self.scroll_logs(-self.logs_page()),
            Action::PageDown => self.scroll_logs(self.logs_page()),
            Action::First => self.scroll_logs(isize::MIN / 2),
            Action::Last => self.follow_logs(),
            Action::WheelUp => self.scroll_logs(-WHEEL_STEP),
            Action::WheelDown => self.scroll_logs(WHEEL_STEP),
            Action::NextPane => {
                self.logs_tab(true);
                None
            }
            Action::PreviousPane => {
                self.logs_tab(false);
                None
            }
            _ => None,
        }
    }

    /// A motion in the full-text view, the detail document or the focused
    /// pane; Tab and Shift-Tab move the focus.
    fn move_focused(&mut self, action: Action) {
        let operations = self.shown.snapshot.generation.has_operations();
        match action {
            Action::Up => self.move_or_scroll(-1),
            Action::Down => self.move_or_scroll(1),
            Action::PageUp => self.move_or_scroll(-self.page_rows()),
            Action::PageDown => self.move_or_scroll(self.page_rows()),
            Action::First => self.move_or_scroll(isize::MIN / 2),
            Action::Last => self.move_or_scroll(isize::MAX / 2),
            Action::NextPane => self.focus = self.focus.next(operations),
            Action::PreviousPane => self.focus = self.focus.previous(operations),
            _ => {}
        }
    }

    /// The operator's keys: reap, tear down, answer the question, cancel an
    /// operation, pause the reaper or run a pass, copy.
    fn act_operator(&mut self, action: Action) -> Option<Effect> {
        match action {
            Action::Reap => self.reap_key(),
            Action::TearDown => self.down_key(),
            Action::ConfirmTearDown => return self.confirm_yes(),
            Action::CancelTearDown => self.confirm_no(),
            Action::CancelOperation => self.cancel_operation_key(),
            Action::RenewLease => self.renew_key(),
            Action::Verify => self.verify_key(),
            Action::ToggleReaperPause => return self.pause_key(),
            Action::ReaperPass => return self.pass_key(),
            Action::CopyName => return self.copy_name(),
            Action::CopyField => return self.copy_field(),
            Action::CopyDown => return self.copy_down(),
            _ => {}
        }
        None
    }

    /// The logs view's search: the prompt, typing, `n` and `N`.
    fn act_search(&mut self, action: Action, input: Input) -> Option<Effect> {
        match action {
            Action::EditSearch => {
                self.search_prompt(true, false);
            }
            Action::SearchText => {
                if let Input::Key(KeyCode::Char(c), _) = input {
                    self.edit_search(Some(c));
                }
            }
            Action::SearchBackspace => self.edit_search(None),
            Action::SearchKeep => return self.search_prompt(false, true),
            Action::SearchClear => {
                self.search_prompt(false, false);
            }
            Action::SearchOlder => return self.find_in_logs(true),
            Action::SearchNewer => return self.find_in_logs(false),
            _ => {}
        }
        None
    }

    /// Opening and closing the views, the table's own keys (marks, sort,
    /// the filter's clearing, the prompts' erasing), the mouse, the zoom.
    fn act_views(&mut self, action: Action, input: Input) -> Option<Effect> {
        match action {
            Action::OpenDetail => return self.open_detail(),
            Action::CloseDetail => drop(self.layers.close(LayerKind::Detail)),
            // The filter first (as the empty pane's hint says), then marks.
            Action::ClearFilter => {
                if self.instances.filter.is_empty() {
                    self.clear_marks();
                } else {
                    self.clear_filter();
                }
            }
            Action::PromptClearLine => self.prompt_erase(false),
            Action::PromptDeleteWord => self.prompt_erase(true),
            Action::ToggleMark => self.toggle_mark(),
            Action::MarkAll => self.mark_all(),
            Action::ReverseSort => self.reverse_sort(),
            Action::CycleSort => self.cycle_sort(),
            Action::OpenHelp => self.open_help(),
            Action::CloseHelp => drop(self.layers.close(LayerKind::Help)),
            Action::TogglePayloads => self.toggle_payloads(),
            Action::CloseOperation => drop(self.layers.close(LayerKind::Operation)),
            Action::OpenFullText => {
                if let Some(effect) = self.log_line_whole() {
                    return Some(effect);
                }
                self.open_full_text();
            }
            Action::CloseFullText => self.close_full_text(),
            Action::Click => self.click(input),
            Action::WheelUp => self.wheel(input, -WHEEL_STEP),
            Action::WheelDown => self.wheel(input, WHEEL_STEP),
            Action::OpenLogs => return self.open_logs(),
            Action::CloseLogs => return self.close_logs(),
            Action::ToggleWrap => self.toggle_wrap(),
            Action::ToggleZoom => self.arrangement.zoom = !self.arrangement.zoom,
            Action::ToggleBanners => {
                self.arrangement.banners_away = !self.arrangement.banners_away;
            }
            _ => {}
        }
        None
    }

    /// The filter prompt's keys; other actions do nothing.
    fn act_filter(&mut self, action: Action, input: Input) {
        match action {
            Action::EditFilter => {
                self.focus = Focus::Instances;
                self.layers.open(Layer::Filter);
            }
            Action::FilterText => {
                if let Input::Key(KeyCode::Char(c), _) = input {
                    self.instances.filter.push(c);
                    self.narrow_order();
                }
            }
            // Backspace on an empty filter: nothing to refilter.
            Action::FilterBackspace if self.instances.filter.pop().is_some() => self.refilter(),
            Action::FilterKeep => self.keep_filter(),
            Action::FilterClear => {
                self.layers.close(LayerKind::Filter);
                self.clear_filter();
            }
            _ => {}
        }
    }

    /// `y` to the open question.
    fn confirm_yes(&mut self) -> Option<Effect> {
        match self.layers.take_question()? {
            Question::Bulk(bulk) => self.confirm_bulk(bulk),
            Question::Cancel(op) => self.confirm_cancel_operation(op),
            Question::TearDown(instance) => self.confirm_tear_down(instance),
            Question::QueueDown(instance, op, _) => self.confirm_queue_down(instance, *op),
            Question::Reap(instance) => self.confirm_reap(instance),
            Question::Verbs(question) => self.confirm_verbs(question),
            Question::Fleet(question) => self.confirm_fleet(question, true),
        }
    }

    /// Any other key to the open question.
    fn confirm_no(&mut self) {
        match self.layers.take_question() {
            Some(Question::Bulk(bulk)) => self.cancel_bulk(bulk),
            Some(Question::Cancel(op)) => self.refuse_cancel_operation(op),
            Some(Question::TearDown(instance)) => self.cancel_tear_down(instance),
            Some(Question::QueueDown(instance, ..)) => self.cancel_queue_down(instance),
            Some(Question::Reap(instance)) => self.cancel_reap(instance),
            Some(Question::Verbs(question)) => self.cancel_verbs(&question),
            Some(Question::Fleet(question)) => {
                self.confirm_fleet(question, false);
            }
            None => {}
        }
    }

    /// The help overlay's keys (scroll, search); other actions do nothing.
    fn act_help(&mut self, action: Action, input: Input) {
        match action {
            Action::HelpUp => self.scroll_help(-1),
            Action::HelpDown => self.scroll_help(1),
            Action::HelpPageUp => self.scroll_help(-self.help_page()),
            Action::HelpPageDown => self.scroll_help(self.help_page()),
            Action::HelpTop => self.scroll_help(isize::MIN / 2),
            Action::HelpBottom => self.scroll_help(isize::MAX / 2),
            Action::HelpSearch => self.search_help(),
            Action::HelpText => self.help_text(input),
            Action::HelpBackspace => self.help_backspace(),
            Action::HelpKeep => self.help_done(true),
            Action::HelpClear => self.help_done(false),
            _ => {}
        }
    }

    /// The command line's keys; other actions do nothing.
    fn act_command(&mut self, action: Action, input: Input) -> Option<Effect> {
        match action {
            Action::OpenCommand => self.open_command(false),
            Action::OpenJump => self.open_command(true),
            Action::CommandText => self.command_edit(Some(input)),
            Action::CommandBackspace => self.command_edit(None),
            Action::CommandComplete => self.command_complete(),
            Action::CommandPrevious => self.command_history(-1),
            Action::CommandNext => self.command_history(1),
            Action::CommandRun => return self.command_run(),
            Action::CommandCancel => self.command_cancel(),
            _ => {}
        }
        None
    }

    /// Enter in the filter prompt: close it, keep the filter, and say how
    /// many rows match; a filter that cannot be read says why (a warning),
    /// and `op:` on a store without operations says it has none.
    pub(super) fn keep_filter(&mut self) {
        self.layers.close(LayerKind::Filter);
        let shown =
            crate::model::text::sanitize_short(&self.instances.filter, crate::ui::text::CUT_SHORT);
        if let Some(error) = &self.instances.filter_error {
            let text = format!("filter \"{shown}\": {error}");
            self.set_flash(FlashLevel::Warning, text);
            return;
        }
        let generation = &self.shown.snapshot.generation;
        if !generation.has_operations()
            && crate::ui::filter::parse(&self.instances.filter).is_ok_and(|f| f.uses_operations())
        {
            let text = format!(
                "filter \"{shown}\": {} of {} match: this store has no operations (schema v{}: \
                 stackless 0.4.0 has them)",
                self.instances.order.len(),
                self.shown.snapshot.instances.len(),
                generation.user_version
            );
            self.set_flash(FlashLevel::Warning, text);
            return;
        }
        let text = if self.instances.filter.is_empty() {
            "no filter".to_owned()
        } else {
            format!(
                "filter \"{}\": {} of {} match",
                self.instances.filter,
                self.instances.order.len(),
                self.shown.snapshot.instances.len()
            )
        };
        self.set_flash(FlashLevel::Info, text);
    }

    fn cycle_sort(&mut self) {
        self.instances.sort = self.instances.sort.next();
        self.instances.reversed = false;
        self.resort();
        self.set_flash(
            FlashLevel::Info,
            format!("sort: {}", self.instances.sort.label()),
        );
    }

    fn reverse_sort(&mut self) {
        self.instances.reversed = !self.instances.reversed;
        self.resort();
        let text = if self.instances.reversed {
            format!("sort: {}, reversed", self.instances.sort.label())
        } else {
            format!("sort: {}", self.instances.sort.label())
        };
        self.set_flash(FlashLevel::Info, text);
    }

    fn toggle_payloads(&mut self) {
        if let Some(detail) = self.layers.detail_mut() {
            detail.payloads = !detail.payloads;
            let text = if detail.payloads {
                "payloads shown"
            } else {
                "payloads hidden"
            };
            self.set_flash(FlashLevel::Info, text.into());
        }
    }

    /// Move by `delta` rows in what the movement keys drive: the detail
    /// document while it is open, else the focused pane.
    pub(super) fn move_or_scroll(&mut self, delta: isize) {
        if self.layers.has(LayerKind::FullText) {
            self.scroll_full(delta);
        } else if self.layers.has(LayerKind::Detail) {
            self.scroll_detail(delta);
        } else {
            self.move_by(delta);
        }
    }

    /// A page of what [`App::move_or_scroll`] moves.
    pub(super) fn page_rows(&self) -> isize {
        if self.layers.has(LayerKind::FullText) {
            let rows = self.viewport.get().full_rows;
            isize::try_from(if rows == 0 { DEFAULT_PAGE } else { rows }).unwrap_or(isize::MAX)
        } else if self.layers.has(LayerKind::Detail) {
            self.detail_page()
        } else {
            self.page()
        }
    }

    fn logs_page(&self) -> isize {
        let rows = self.viewport.get().logs_rows;
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    fn detail_page(&self) -> isize {
        let rows = self.viewport.get().detail_rows;
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    /// Scroll the detail document, clamped to what the last frame drew;
    /// the field cursor follows into view.
    pub(super) fn scroll_detail(&mut self, delta: isize) {
        self.move_detail(Move::Scroll(delta));
    }

    fn page(&self) -> isize {
        let viewport = self.viewport.get();
        let rows = match self.focus {
            Focus::Instances => viewport.instances_rows,
            Focus::Operations => viewport.operations_rows,
            Focus::Backoffs => viewport.backoffs_rows,
            Focus::Supervisor => viewport.supervisor_rows,
            Focus::Activity => viewport.activity_rows,
            // Only over a fleet, whose keys page its rows.
            Focus::Hosts => 0,
        };
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    /// Move the selection (a table row, a log line) of the focused pane by
    /// `delta` rows; positive is down/newer.
    fn move_by(&mut self, delta: isize) {
        self.move_in(self.focus, delta);
    }

    /// Move the selection of `pane` by `delta` rows (a log pane scrolls to
    /// keep its selected line in view).
    pub(super) fn move_in(&mut self, pane: Focus, delta: isize) {
        let viewport = self.viewport.get();
        match pane {
            Focus::Instances => {
                self.instances.selected =
                    step(self.instances.selected, delta, self.instances.order.len());
                if let Some(name) = self.selected_instance().map(|i| i.name.clone()) {
                    self.instances.selected_name = Some(name);
                }
            }
            Focus::Operations => {
                let len = self.shown.snapshot.operations.len();
                self.operations.index = step(self.operations.index, delta, len);
                self.operations.key = self
                    .shown
                    .snapshot
                    .operations
                    .get(self.operations.index)
                    .map(|op| op.id.clone());
            }
            Focus::Backoffs => {
                let len = self.shown.snapshot.reap_attempts.len();
                self.backoffs.index = step(self.backoffs.index, delta, len);
                self.backoffs.key = self
                    .shown
                    .snapshot
                    .reap_attempts
                    .get(self.backoffs.index)
                    .map(|a| a.instance.clone());
            }
            Focus::Supervisor => self.supervisor.select_by(delta, viewport.supervisor_rows),
            Focus::Activity => self.activity.select_by(delta, viewport.activity_rows),
            // Only over a fleet, whose keys move its cursor.
            Focus::Hosts => {}
        }
    }
}
