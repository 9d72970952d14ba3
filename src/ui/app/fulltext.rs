//! The full-text view (Enter on Backoffs, Supervisor and Activity; `e` on
//! every pane, the detail view and the operation overlay): the line the
//! focused pane shows cut, whole, wrapped and scrollable, over whatever is
//! open. Built once when it opens ([`crate::ui::fulltext`]).

use super::full_view::FullView;
use super::{App, FlashLevel, Focus, Layer, LayerKind};
use crate::model::fulltext::FullText;
use crate::ui::fulltext;

impl App {
    /// The open full-text view, if any.
    #[must_use]
    pub fn full_text(&self) -> Option<&FullView> {
        self.layers.full_text()
    }

    /// Enter or `e`: open the whole text of what is selected: the logs
    /// view's cursor line, else the operation
    /// overlay's operation, else the whole detail document (every field
    /// whole, then the instance's row, its last error and last teardown
    /// output), else the focused pane's selected row (the
    /// selected line in Supervisor and Activity).
    pub(super) fn open_full_text(&mut self) {
        let text = if self.layers.has(LayerKind::Logs) && !self.layers.has(LayerKind::Operation) {
            self.log_line_text()
        } else if let Some((_, op)) = self.operation_open() {
            let zone = &self.settings.zone;
            op.map(|op| match self.operation_events() {
                Some(super::OpEvents::Ready(events)) => {
                    fulltext::operation_with_events(op, events, self.now, zone)
                }
                _ => fulltext::operation(op, self.now, zone),
            })
        } else if let Some(detail) = self.layers.detail() {
            Some(self.detail_text(detail))
        } else {
            self.pane_text()
        };
        match text {
            Some(text) => self.layers.open(Layer::FullText(FullView::new(text))),
            None => self.set_flash(FlashLevel::Warning, "nothing selected to show".into()),
        }
    }

    /// The selected line of the focused pane, whole.
    fn pane_text(&self) -> Option<FullText> {
        let now = self.now;
        let zone = &self.settings.zone;
        match self.focus {
            Focus::Instances => {
                let name = self.selected_instance()?.name.clone();
                Some(self.instance_text(&name))
            }
            Focus::Operations => self
                .selected_operation()
                .map(|op| fulltext::operation(op, now, zone)),
            Focus::Backoffs => self
                .shown
                .snapshot
                .reap_attempts
                .get(self.backoffs.index)
                .map(|a| fulltext::backoff(a, now, zone)),
            Focus::Supervisor => {
                let logged = self.supervisor.selected()?;
                Some(fulltext::supervisor(&logged.entry, logged.count, zone))
            }
            Focus::Activity => {
                let logged = self.activity.selected()?;
                Some(fulltext::activity(&logged.entry, logged.count, zone))
            }
            // Only over a fleet, whose rows say their own lines whole.
            Focus::Hosts => None,
        }
    }

    /// The detail view's whole document (every field whole: the document
    /// keeps values up to [`crate::ui::detail::MAX_LINE_CHARS`]), then the
    /// instance's row and errors whole ([`App::instance_text`]).
    fn detail_text(&self, open: &crate::ui::detail::Detail) -> FullText {
        let snapshot = &self.shown.snapshot;
        let name = open.name.as_str();
        let doc = crate::ui::detail::document(
            open,
            snapshot,
            self.last_teardown(name),
            (self.now, &self.settings.zone),
        );
        let mut text = FullText::new(&format!("Detail · {name}"));
        text.indent = crate::ui::detail::LABEL_WIDTH;
        for line in &doc {
            text.line(&line.plain());
        }
        text.blank();
        text.line(" The row and its errors, whole");
        text.lines.extend(self.instance_text(name).lines);
        text
    }

    /// An instance whole: its row, its last reap error, and the output of
    /// the last teardown this console ran on it.
    fn instance_text(&self, name: &str) -> FullText {
        let snapshot = &self.shown.snapshot;
        let mut text = match snapshot.instance(name) {
            Some(instance) => fulltext::instance(
                instance,
                snapshot.lock_liveness(name),
                snapshot.reap_attempt(name),
                (self.now, &self.settings.zone),
            ),
            None => {
                let mut text = FullText::new(&format!("Instance · {name}"));
                text.labelled("name", name);
                text.labelled("status", "not in the current snapshot");
                text
            }
        };
        if let Some(last) = self.last_teardown(name) {
            text.blank();
            text.line(&format!(
                "last teardown here: {} {} at {}",
                last.actor,
                last.kind,
                crate::model::time::stamp(last.at, &self.settings.zone)
            ));
            if !last.detail.trim().is_empty() {
                text.error(last.detail.trim());
            }
            fulltext::command_answer(&mut text, last.kind.answered_by(), &last.envelope);
            fulltext::teardown_output(&mut text, &last.stderr_tail);
        }
        text
    }

    /// Escape (or `e` again): close the full-text view.
    pub(super) fn close_full_text(&mut self) {
        self.layers.close(LayerKind::FullText);
    }

    /// Scroll the full-text view, clamped to what the last frame drew.
    pub(super) fn scroll_full(&mut self, delta: isize) {
        let viewport = self.viewport.get();
        let max = viewport.full_len.saturating_sub(viewport.full_rows.max(1));
        if let Some(full) = self.layers.full_text_mut() {
            full.scroll = full.scroll.min(max).saturating_add_signed(delta).min(max);
        }
    }
}

impl App {
    /// At start: the last teardown of each instance an earlier console
    /// recorded in the audit trail (oldest first, each
    /// [`Activity::restored`](crate::event::Activity::restored)), put in
    /// the Activity log before anything this console does (Enter on one
    /// opens it whole, with its stderr tail; the detail view shows it as
    /// the last teardown). Never written to the audit trail again.
    pub fn restore_teardowns(&mut self, restored: Vec<crate::event::Activity>) {
        for activity in restored {
            self.activity.push(activity, |_, _| false);
        }
    }

    /// The newest finished teardown of `name` this console ran (the
    /// reaper's or the operator's: reaped, torn down or failed), from the
    /// Activity log, with its stderr tail; or, when it ran none yet, the
    /// one an earlier console recorded ([`App::restore_teardowns`]).
    #[must_use]
    pub fn last_teardown(&self, name: &str) -> Option<&crate::event::Activity> {
        use crate::event::{ActivityKind, Actor};
        self.activity
            .entries()
            .iter()
            .rev()
            .map(|logged| &logged.entry)
            .find(|a| {
                a.instance == name
                    && matches!(a.actor, Actor::Reaper | Actor::Operator)
                    && matches!(
                        a.kind,
                        ActivityKind::Reaped | ActivityKind::TornDown | ActivityKind::Failed
                    )
            })
    }
}
