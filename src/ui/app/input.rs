//! Key and mouse handling: which key does what in which mode, and moving the
//! selection or scroll of a pane.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::rows::step;
use super::{App, Command, FlashLevel, Focus};

/// Rows moved by PgUp/PgDn before the first frame reports a pane height.
const DEFAULT_PAGE: usize = 10;

/// Rows (or log lines) one mouse-wheel notch moves.
pub const WHEEL_STEP: isize = 3;

impl App {
    pub(super) fn key(&mut self, key: KeyEvent) -> Option<Command> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
            self.quitting = true;
            return Some(Command::Quit);
        }
        if let Some(instance) = self.confirm.take() {
            return self.confirm_key(key, &instance);
        }
        if self.help {
            match key.code {
                KeyCode::Esc | KeyCode::Char('?') => self.help = false,
                KeyCode::Char('q') if !ctrl => {
                    self.quitting = true;
                    return Some(Command::Quit);
                }
                _ => {}
            }
            return None;
        }
        if self.filter_editing {
            self.filter_key(key, ctrl);
            return None;
        }
        if ctrl || key.modifiers.contains(KeyModifiers::ALT) {
            return None;
        }
        if self.detail.is_some() {
            return self.detail_key(key);
        }
        match key.code {
            KeyCode::Char('q') => {
                self.quitting = true;
                return Some(Command::Quit);
            }
            KeyCode::Char('?') => self.help = true,
            KeyCode::Tab => self.focus = self.focus.next(),
            KeyCode::BackTab => self.focus = self.focus.previous(),
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::PageUp => self.move_by(-self.page()),
            KeyCode::PageDown => self.move_by(self.page()),
            KeyCode::Home | KeyCode::Char('g') => self.move_by(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.move_by(isize::MAX / 2),
            KeyCode::Char('r') => return self.reap_key(),
            KeyCode::Char('d') => self.down_key(),
            KeyCode::Char('/') => {
                self.focus = Focus::Instances;
                self.filter_editing = true;
            }
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                self.resort();
                self.set_flash(FlashLevel::Info, format!("sort: {}", self.sort.label()));
            }
            KeyCode::Enter => return self.open_detail(),
            KeyCode::Esc if !self.filter.is_empty() => self.clear_filter(),
            _ => {}
        }
        None
    }

    /// Keys while the filter prompt is open: text edits the filter (the rows
    /// follow every key), Enter keeps it, Esc clears it, arrows move the
    /// selection.
    fn filter_key(&mut self, key: KeyEvent, ctrl: bool) {
        match key.code {
            KeyCode::Enter => {
                self.filter_editing = false;
                let text = if self.filter.is_empty() {
                    "no filter".to_owned()
                } else {
                    format!(
                        "filter \"{}\": {} of {} match",
                        self.filter,
                        self.order.len(),
                        self.snapshot.instances.len()
                    )
                };
                self.set_flash(FlashLevel::Info, text);
            }
            KeyCode::Esc => {
                self.filter_editing = false;
                self.clear_filter();
            }
            KeyCode::Backspace if self.filter.pop().is_some() => self.refilter(),
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::PageUp => self.move_by(-self.page()),
            KeyCode::PageDown => self.move_by(self.page()),
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                self.filter.push(c);
                self.narrow_order();
            }
            _ => {}
        }
    }

    /// Keys while the detail view is open.
    fn detail_key(&mut self, key: KeyEvent) -> Option<Command> {
        match key.code {
            KeyCode::Esc => self.detail = None,
            KeyCode::Char('q') => {
                self.quitting = true;
                return Some(Command::Quit);
            }
            KeyCode::Char('?') => self.help = true,
            KeyCode::Up | KeyCode::Char('k') => self.scroll_detail(-1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_detail(1),
            KeyCode::PageUp => self.scroll_detail(-self.detail_page()),
            KeyCode::PageDown => self.scroll_detail(self.detail_page()),
            KeyCode::Home | KeyCode::Char('g') => self.scroll_detail(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.scroll_detail(isize::MAX / 2),
            KeyCode::Char('p') => {
                if let Some(detail) = &mut self.detail {
                    detail.payloads = !detail.payloads;
                    let text = if detail.payloads {
                        "payloads shown"
                    } else {
                        "payloads hidden"
                    };
                    self.set_flash(FlashLevel::Info, text.into());
                }
            }
            KeyCode::Char('r') => return self.reap_key(),
            KeyCode::Char('d') => self.down_key(),
            _ => {}
        }
        None
    }

    fn detail_page(&self) -> isize {
        let rows = self.viewport.get().detail_rows;
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    /// Scroll the detail document, clamped to what the last frame drew.
    fn scroll_detail(&mut self, delta: isize) {
        let viewport = self.viewport.get();
        let max = viewport
            .detail_len
            .saturating_sub(viewport.detail_rows.max(1));
        if let Some(detail) = &mut self.detail {
            detail.scroll = detail.scroll.min(max).saturating_add_signed(delta).min(max);
        }
    }

    fn page(&self) -> isize {
        let viewport = self.viewport.get();
        let rows = match self.focus {
            Focus::Instances => viewport.instances_rows,
            Focus::Backoffs => viewport.backoffs_rows,
            Focus::Supervisor => viewport.supervisor_rows,
            Focus::Activity => viewport.activity_rows,
        };
        let rows = if rows == 0 { DEFAULT_PAGE } else { rows };
        isize::try_from(rows).unwrap_or(isize::MAX)
    }

    /// Move the selection (tables) or scroll (logs) of the focused pane by
    /// `delta` rows; positive is down/newer.
    fn move_by(&mut self, delta: isize) {
        self.move_in(self.focus, delta);
    }

    /// Move the selection or scroll of `pane` by `delta` rows.
    fn move_in(&mut self, pane: Focus, delta: isize) {
        let viewport = self.viewport.get();
        match pane {
            Focus::Instances => {
                self.selected = step(self.selected, delta, self.order.len());
                if let Some(name) = self.selected_instance().map(|i| i.name.clone()) {
                    self.selected_name = Some(name);
                }
            }
            Focus::Backoffs => {
                let len = self.snapshot.reap_attempts.len();
                self.backoff_selected = step(self.backoff_selected, delta, len);
                self.backoff_name = self
                    .snapshot
                    .reap_attempts
                    .get(self.backoff_selected)
                    .map(|a| a.instance.clone());
            }
            Focus::Supervisor => self
                .supervisor
                .scroll_by(delta.saturating_neg(), viewport.supervisor_rows),
            Focus::Activity => self
                .activity
                .scroll_by(delta.saturating_neg(), viewport.activity_rows),
        }
    }

    /// A mouse event, located with the layout of the last frame. Ignored
    /// while a dialog or the help is open (a stray click must never answer
    /// the teardown question).
    pub(super) fn mouse(&mut self, mouse: MouseEvent) {
        if self.confirm.is_some() || self.help {
            return;
        }
        let Some(areas) = self.areas.get() else {
            return;
        };
        let at = Position::new(mouse.column, mouse.row);
        if self.detail.is_some() {
            match mouse.kind {
                MouseEventKind::ScrollUp => self.scroll_detail(-WHEEL_STEP),
                MouseEventKind::ScrollDown => self.scroll_detail(WHEEL_STEP),
                _ => {}
            }
            return;
        }
        let Some((pane, rect)) = [
            (Focus::Instances, areas.instances),
            (Focus::Backoffs, areas.backoffs),
            (Focus::Supervisor, areas.supervisor),
            (Focus::Activity, areas.activity),
        ]
        .into_iter()
        .find(|(_, rect)| rect.contains(at)) else {
            return;
        };
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.filter_editing = false;
                self.focus = pane;
                if let Some(row) = self.table_row_at(pane, rect, at.y) {
                    self.move_in(pane, row_delta(row, self.table_selected(pane)));
                }
            }
            MouseEventKind::ScrollUp => self.move_in(pane, -WHEEL_STEP),
            MouseEventKind::ScrollDown => self.move_in(pane, WHEEL_STEP),
            _ => {}
        }
    }

    fn table_selected(&self, pane: Focus) -> usize {
        if pane == Focus::Backoffs {
            self.backoff_selected
        } else {
            self.selected
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
                self.order.len(),
            ),
            Focus::Backoffs => (
                viewport.backoffs_offset,
                viewport.backoffs_rows,
                self.snapshot.reap_attempts.len(),
            ),
            Focus::Supervisor | Focus::Activity => return None,
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
