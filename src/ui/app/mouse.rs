//! The mouse: a click focuses the pane under the pointer and selects the
//! row or log line clicked; the wheel scrolls the view on top, else the
//! pane under the pointer. Where things are comes from the last frame
//! (`App::areas`, `App::viewport`).

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::log::Log;
use super::{App, Effect, Focus, LayerKind};
use crate::ui::geometry::{log_line_at, log_window};
use crate::ui::keys::{self, Input};

impl App {
    /// A mouse event, located with the layout of the last frame (ignored
    /// before it, or while the terminal is too small). The key table binds
    /// no mouse gesture while a dialog or the help is open: a stray click
    /// must never answer the teardown question.
    pub(super) fn mouse(&mut self, mouse: MouseEvent) -> Option<Effect> {
        self.areas.get()?;
        let at = Position::new(mouse.column, mouse.row);
        let input = match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => Input::Click(at),
            MouseEventKind::ScrollUp => Input::WheelUp(at),
            MouseEventKind::ScrollDown => Input::WheelDown(at),
            _ => return None,
        };
        let action = keys::resolve(self.context(), input)?;
        self.act(action, input)
    }

    /// The pane drawn at `at` in the last frame, with its area.
    fn pane_at(&self, at: Position) -> Option<(Focus, Rect)> {
        let areas = self.areas.get()?;
        [
            (Focus::Instances, areas.instances),
            (Focus::Operations, areas.operations),
            (Focus::Backoffs, areas.backoffs),
            (Focus::Supervisor, areas.supervisor),
            (Focus::Activity, areas.activity),
        ]
        .into_iter()
        .find(|(_, rect)| rect.contains(at))
    }

    /// A left click: leave the filter prompt (keeping the filter), focus the
    /// pane under the pointer and select the table row or log line clicked.
    pub(super) fn click(&mut self, input: Input) {
        let Input::Click(at) = input else {
            return;
        };
        let Some((pane, rect)) = self.pane_at(at) else {
            return;
        };
        self.layers.close(LayerKind::Filter);
        self.focus = pane;
        if let Some(row) = self.table_row_at(pane, rect, at.y) {
            self.move_in(pane, row_delta(row, self.table_selected(pane)));
        }
        let viewport = self.viewport.get();
        match pane {
            Focus::Supervisor => {
                select_drawn(&mut self.supervisor, rect, at.y, viewport.supervisor_rows);
            }
            Focus::Activity => select_drawn(&mut self.activity, rect, at.y, viewport.activity_rows),
            _ => {}
        }
    }

    /// A wheel notch of `delta` rows: the detail document while it is open,
    /// else the pane under the pointer.
    pub(super) fn wheel(&mut self, input: Input, delta: isize) {
        let (Input::WheelUp(at) | Input::WheelDown(at)) = input else {
            return;
        };
        if self.layers.has(LayerKind::FullText) {
            self.scroll_full(delta);
        } else if self.layers.has(LayerKind::Detail) {
            self.scroll_detail(delta);
        } else if let Some((pane, _)) = self.pane_at(at) {
            let viewport = self.viewport.get();
            match pane {
                Focus::Supervisor => self.supervisor.wheel(delta, viewport.supervisor_rows),
                Focus::Activity => self.activity.wheel(delta, viewport.activity_rows),
                _ => self.move_in(pane, delta),
            }
        }
    }

    fn table_selected(&self, pane: Focus) -> usize {
        match pane {
            Focus::Backoffs => self.backoffs.index,
            Focus::Operations => self.operations.index,
            _ => self.instances.selected,
        }
    }

    /// The table row (an index into the table's rows) drawn at screen row
    /// `y` of `pane` (whose area is `rect`), if `y` is a data row: below the
    /// border and the column headers, within the rows the last frame drew.
    fn table_row_at(&self, pane: Focus, rect: Rect, y: u16) -> Option<usize> {
        let viewport = self.viewport.get();
        let (offset, rows, len) = match pane {
            Focus::Instances => (
                viewport.instances_offset,
                viewport.instances_rows,
                self.instances.order.len(),
            ),
            Focus::Backoffs => (
                viewport.backoffs_offset,
                viewport.backoffs_rows,
                self.shown.snapshot.reap_attempts.len(),
            ),
            Focus::Operations => {
                // Pinned pending rows first, then the scroll window
                // (panes::operations::OpsLayout); the `… N more pending`
                // line below them selects nothing.
                let first = rect.y.checked_add(2)?;
                let within = usize::from(y.checked_sub(first)?);
                let head = viewport.operations_head;
                let row = if within < head {
                    within
                } else if within < head + viewport.operations_window {
                    viewport.operations_offset + within - head
                } else {
                    return None;
                };
                return (row < self.shown.snapshot.operations.len()).then_some(row);
            }
            Focus::Supervisor | Focus::Activity | Focus::Hosts => return None,
        };
        let first = rect.y.checked_add(2)?;
        let within = usize::from(y.checked_sub(first)?);
        if within >= rows {
            return None;
        }
        let row = offset + within;
        (row < len).then_some(row)
    }
}

/// Select the line of `log` drawn at screen row `y` of its pane `rect`
/// (`rows` lines high in the last frame), if a line is drawn there.
fn select_drawn<T>(log: &mut Log<T>, rect: Rect, y: u16, rows: usize) {
    let window = log_window(
        log.entries().len(),
        rows,
        log.scroll_up(),
        log.selected_up(),
    );
    if let Some(index) = log_line_at(rect, y, window) {
        log.select_index(index, rows);
    }
}

/// The signed distance from row `from` to row `to`.
fn row_delta(to: usize, from: usize) -> isize {
    if to >= from {
        isize::try_from(to - from).unwrap_or(isize::MAX)
    } else {
        isize::try_from(from - to).map_or(isize::MIN, |d| -d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_deltas() {
        assert_eq!(row_delta(5, 2), 3);
        assert_eq!(row_delta(2, 5), -3);
        assert_eq!(row_delta(0, 0), 0);
    }
}
