//! The operation overlay's own state ([`OperationView`]): which operation
//! it shows and its events as last read (`Request::OperationEvents`),
//! re-read whenever a snapshot shows the operation changed, so a running
//! one is followed live (stackless 0.4.0 `stackless operation wait`,
//! cli-0.4.0 src/cli.rs `OperationCommand::Wait`).

use super::{App, Effect};
use crate::event::Request;
use crate::model::operation::{OpEvent, OpStatus, StepProgress, events_key};

/// What [`crate::model::operation::events_key`] says of the operation at
/// the last read.
type EventsKey = (OpStatus, i64, Option<StepProgress>);

/// The operation overlay's events as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpEvents {
    /// Asked for, not answered yet.
    Loading,
    /// Every event in the order written (redacted as it entered the App).
    Ready(Vec<OpEvent>),
    /// The first read failed (a later failed refresh keeps what was read).
    Failed(String),
}

/// The operation overlay (Enter on the Operations pane).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationView {
    /// `operations.id`.
    pub id: String,
    /// Its events.
    pub events: OpEvents,
    /// The first event row shown, once scrolled (j/k, PgUp/PgDn, g);
    /// `None` follows the newest (at the bottom: as it opens, after `G`,
    /// or scrolled back down to the end).
    pub scroll: Option<usize>,
    /// The operation as the last read was asked for: another key in a new
    /// snapshot asks again.
    key: Option<EventsKey>,
}

impl OperationView {
    /// The overlay of operation `id`, its events not read yet.
    #[must_use]
    pub const fn new(id: String) -> Self {
        Self {
            id,
            events: OpEvents::Loading,
            scroll: None,
            key: None,
        }
    }
}

impl App {
    /// The open operation overlay's events, if it is open.
    #[must_use]
    pub fn operation_events(&self) -> Option<&OpEvents> {
        self.layers.operation_view().map(|view| &view.events)
    }

    /// The open overlay's scroll: the first event row shown, `None` while
    /// it follows the newest ([`OperationView::scroll`]).
    #[must_use]
    pub fn operation_scroll(&self) -> Option<usize> {
        self.layers.operation_view().and_then(|view| view.scroll)
    }

    /// The read of the open overlay's events when they are stale: never
    /// asked, or the operation in the snapshot shown changed (status, last
    /// change, newest step) since they were. `None` otherwise, or when
    /// the operation is no longer in the snapshot (the events read stay).
    pub(super) fn refresh_operation_events(&mut self) -> Option<Effect> {
        let id = self.layers.operation()?.to_owned();
        let key = self
            .shown
            .snapshot
            .operations
            .iter()
            .find(|op| op.id == id)
            .map(events_key)?;
        let view = self.layers.operation_view_mut()?;
        if view.key.as_ref() == Some(&key) {
            return None;
        }
        view.key = Some(key);
        Some(Effect::Io(Request::OperationEvents { id }))
    }

    /// A movement key on the overlay: scroll its events by a row, a page,
    /// to the oldest (`g`) or to the newest, following them again (`G`,
    /// or any move that reaches the bottom).
    pub(super) fn scroll_operation(&mut self, action: crate::ui::keys::Action) {
        use crate::ui::keys::Action;
        let viewport = self.viewport.get();
        let rows = viewport.op_event_rows.max(1);
        let last = viewport.op_event_len.saturating_sub(rows);
        let Some(view) = self.layers.operation_view_mut() else {
            return;
        };
        let at = view.scroll.unwrap_or(last).min(last);
        let page = rows.saturating_sub(1).max(1);
        let to = match action {
            Action::Up => at.saturating_sub(1),
            Action::Down => at + 1,
            Action::PageUp => at.saturating_sub(page),
            Action::PageDown => at + page,
            Action::First => 0,
            _ => last,
        };
        view.scroll = (to < last).then_some(to);
    }

    /// The answer to `Request::OperationEvents`: kept when the overlay
    /// still shows `id`. A failed refresh keeps the events read before.
    pub(super) fn show_operation_events(&mut self, id: &str, result: Result<Vec<OpEvent>, String>) {
        let Some(view) = self.layers.operation_view_mut().filter(|v| v.id == id) else {
            return;
        };
        match result {
            Ok(events) => view.events = OpEvents::Ready(events),
            Err(_) if matches!(view.events, OpEvents::Ready(_)) => {}
            Err(message) => view.events = OpEvents::Failed(message),
        }
    }
}
