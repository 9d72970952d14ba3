//! The Operations pane (stackless 0.4.0 stores only): the controller's
//! durable queue, live. Queued and running operations first (oldest
//! first), then the most recent finished ones (newest first), as the store
//! adapter orders `Rows::operations`: VERB, INSTANCE, STATUS, AGE, TOOK,
//! DETAIL (step progress, `cancel requested`, a failure's `code: message`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row};
use unicode_width::UnicodeWidthStr;

use super::{HIGHLIGHT_SYMBOL, focused, pane_block, scroll_window, title};
use crate::model::OpStatus;
use crate::model::text::sanitize_short;
use crate::model::time;
use crate::ui::app::{App, Focus};
use crate::ui::opview::{self, OperationRow};
use crate::ui::theme;

/// Column headers, in order.
pub const HEADERS: [&str; 6] = ["VERB", "INSTANCE", "STATUS", "AGE", "TOOK", "DETAIL"];

/// Shown when the store's queue is empty.
pub const EMPTY: &str = "no controller operations in this store";

const SPACING: u16 = super::TABLE_SPACING;

/// The title's counts: `2 pending · 3 finished`; `not read yet` while
/// only the first rows of the store are ([`crate::model::Partial`]: no
/// operation is read with them).
#[must_use]
pub fn title_suffix(app: &App) -> String {
    let snapshot = app.snapshot();
    if snapshot.partial.is_some() {
        return "not read yet".to_owned();
    }
    let pending = snapshot.pending_operations().len();
    format!(
        "{pending} pending · {} finished",
        snapshot.operations.len() - pending
    )
}

/// How a status is styled.
#[must_use]
pub fn status_style(status: &OpStatus) -> Style {
    match status {
        OpStatus::Running => Style::new().fg(Color::Cyan),
        OpStatus::Queued | OpStatus::Other(_) => Style::new(),
        OpStatus::Succeeded => Style::new().fg(Color::Green),
        OpStatus::Failed => theme::failure(),
        OpStatus::Cancelled | OpStatus::Interrupted => theme::lock_held(),
    }
}

/// Draw the Operations pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    match app.fleet() {
        Some(fleet) => render_fleet(frame, area, fleet, app),
        None => render_local(frame, area, app),
    }
}

/// The Operations pane of this store's snapshot.
fn render_local(frame: &mut Frame, area: Rect, app: &App) {
    let is_focused = focused(app, Focus::Operations);
    let ops = &app.snapshot().operations;
    let len = ops.len();
    let block = pane_block(
        title("Operations", &title_suffix(app), is_focused),
        is_focused,
    );
    let Some(inner) = super::framed(frame, area, block) else {
        return;
    };
    if len == 0 {
        frame.render_widget(Paragraph::new(Line::styled(EMPTY, theme::muted())), inner);
        return;
    }
    let rows_fit = usize::from(inner.height.saturating_sub(1));
    let selected = app.operation_index().min(len - 1);
    let pending = app.snapshot().pending_operations().len();
    let mut viewport = app.viewport.get();
    let layout = OpsLayout::new(viewport.operations_offset, selected, pending, len, rows_fit);
    viewport.operations_offset = layout.offset;
    viewport.operations_rows = rows_fit;
    viewport.operations_head = layout.head;
    viewport.operations_window = layout.window;
    app.viewport.set(viewport);
    let now = app.now();
    let built: Vec<OperationRow> = layout
        .shown()
        .filter_map(|i| ops.get(i))
        .map(|op| opview::operation_row(op, now))
        .collect();
    let widths = column_widths(inner.width, &built);
    let rows: Vec<Row> = built
        .into_iter()
        .map(|r| {
            let cell = |text: &str, i: usize| -> Cell<'static> {
                Cell::from(crate::ui::text::fit(text, usize::from(widths[i])).into_owned())
            };
            let detail_style = if r.state == OpStatus::Failed {
                theme::failure()
            } else {
                Style::new()
            };
            let row_style = if r.state.is_pending() {
                Style::new()
            } else {
                theme::muted()
            };
            Row::new([
                cell(&r.verb, 0),
                cell(&r.instance, 1),
                cell(&r.status, 2).style(status_style(&r.state)),
                cell(&r.age, 3),
                cell(&r.took, 4),
                cell(&r.detail, 5).style(detail_style),
            ])
            .style(row_style)
        })
        .collect();
    let mut table_area = inner;
    if layout.more > 0 {
        table_area.height = table_area.height.saturating_sub(1);
        let line = Rect {
            y: inner.y + table_area.height,
            height: 1,
            ..inner
        };
        let text = format!("  … {} more pending", layout.more);
        frame.render_widget(Paragraph::new(Line::styled(text, theme::muted())), line);
    }
    super::render_table(
        frame,
        table_area,
        &HEADERS,
        rows,
        &widths,
        layout.position(selected),
        is_focused,
    );
    let (above, below) = layout.hidden(len);
    super::render_more(frame, area, above, below);
}

/// Which operations the pane draws in `rows` data rows, so the pending
/// ones (the first `pending` of `len`, as the store adapter orders them)
/// stay on screen whatever finished row is selected: they are pinned above
/// the finished rows' scroll window ([`newest_first`]: the newest finished
/// drawn whenever the selection fits with them); when more are pending
/// than fit, the pane's last row says `… N more pending`. What is not
/// drawn is counted in the bottom border ([`OpsLayout::hidden`],
/// `super::render_more`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpsLayout {
    /// The first `head` operations (pending) are drawn first.
    pub head: usize,
    /// Then `window` operations from `offset`.
    pub offset: usize,
    /// How many rows the scroll window draws.
    pub window: usize,
    /// Pending operations not drawn (the `… N more pending` line when
    /// not 0).
    pub more: usize,
}

impl OpsLayout {
    /// The layout for `selected` (an index into the operations), after
    /// `previous` (the last frame's window offset).
    #[must_use]
    pub fn new(previous: usize, selected: usize, pending: usize, len: usize, rows: usize) -> Self {
        let plain = |offset: usize, window: usize, more: usize| Self {
            head: 0,
            offset,
            window,
            more,
        };
        if len <= rows || rows == 0 {
            return plain(scroll_window(previous, selected, len, rows), rows, 0);
        }
        if pending == 0 {
            return plain(newest_first(selected, rows), rows, 0);
        }
        if selected < pending {
            if pending <= rows {
                return plain(0, rows, 0);
            }
            if rows < 3 {
                return plain(scroll_window(previous, selected, pending, rows), rows, 0);
            }
            let window = rows - 1;
            let offset = scroll_window(previous, selected, pending, window);
            return plain(offset, window, pending - window);
        }
        // A finished operation selected: the pending ones first, at any
        // size. In one row only the oldest pending one is
        // drawn (the selection is not); in two, it and the selected one
        // (the title counts the others).
        if rows < 3 {
            return Self {
                head: 1,
                offset: selected,
                window: rows - 1,
                more: 0,
            };
        }
        let (head, more) = if pending < rows {
            (pending, 0)
        } else {
            (rows - 2, pending - (rows - 2))
        };
        let window = rows - head - usize::from(more > 0);
        let offset = pending + newest_first(selected - pending, window);
        Self {
            head,
            offset,
            window,
            more,
        }
    }

    /// How many of the `len` operations are not drawn above the scroll
    /// window (after the pinned pending ones) and below it
    /// ([`super::hidden_rows`]); with those drawn they add up to `len`.
    #[must_use]
    pub const fn hidden(self, len: usize) -> (usize, usize) {
        super::hidden_rows(self.head, self.offset, self.window, len)
    }

    /// The operations drawn, in order.
    pub fn shown(self) -> impl Iterator<Item = usize> {
        (0..self.head).chain(self.offset..self.offset + self.window)
    }

    /// Where `selected` is drawn among [`OpsLayout::shown`]; `None` when
    /// it is not drawn (one data row, taken by a pending operation).
    #[must_use]
    pub fn position(self, selected: usize) -> Option<usize> {
        if selected < self.head {
            Some(selected)
        } else if (self.offset..self.offset + self.window).contains(&selected) {
            Some(self.head + selected - self.offset)
        } else {
            None
        }
    }
}

/// Where the finished operations' scroll window starts (an index among
/// them) with the one at `selected` drawn in `window` rows: the least
/// offset that draws it, so the newest finished ones (first, as the store
/// adapter orders them) are drawn whenever the selection fits with them.
/// The rows move under a kept offset (a pending operation finishes, new
/// ones finish above the selection, which follows its operation), so no
/// offset is kept from the frame before: a kept one hid the newest above
/// the window, zoomed too, until `g`.
const fn newest_first(selected: usize, window: usize) -> usize {
    (selected + 1).saturating_sub(window)
}

/// Column widths for a table `width` columns wide: VERB 6, INSTANCE as wide
/// as its widest visible name (8 to 24), STATUS 11, AGE 12, TOOK 7, DETAIL
/// the rest (INSTANCE gives way first when DETAIL would get under 16).
#[must_use]
pub fn column_widths(width: u16, rows: &[OperationRow]) -> [u16; 6] {
    const DETAIL_MIN: u16 = 16;
    let symbol = u16::try_from(HIGHLIGHT_SYMBOL.width()).unwrap_or(2);
    let available = width.saturating_sub(symbol + SPACING * 5);
    let (verb, status, age, took) = (6, 11, 12, 7);
    let fixed = verb + status + age + took;
    let widest = rows
        .iter()
        .map(|r| r.instance.width())
        .max()
        .map_or(0, |w| u16::try_from(w).unwrap_or(u16::MAX));
    let room = available.saturating_sub(fixed + DETAIL_MIN).max(8);
    let instance = widest
        .clamp(8, 24)
        .min(room)
        .min(available.saturating_sub(fixed));
    let detail = available.saturating_sub(fixed + instance);
    [verb, instance, status, age, took, detail]
}

/// The Operations pane over a fleet: every host's 0.4.0 controller
/// operations, HOST first, pending first.
fn render_fleet(
    frame: &mut Frame,
    area: Rect,
    app: &crate::ui::app::over_fleet::FleetState,
    console: &App,
) {
    let now = console.now();
    let operations = app.operations();
    let pending = operations.iter().filter(|(_, op)| op.pending()).count();
    let lines = operations
        .iter()
        .map(|(host, op)| {
            let when = if op.pending() {
                time::ago(op.created_at, now)
            } else {
                time::ago(op.updated_at, now)
            };
            let text = format!(
                "{} {} {} {} {when}{}",
                sanitize_short(&app.fleet().hosts[*host].name, 64),
                sanitize_short(&op.verb, 16),
                sanitize_short(&op.instance, 96),
                sanitize_short(&op.status, 16),
                op.error
                    .as_deref()
                    .map(|e| format!(" · {}", sanitize_short(e, 200)))
                    .unwrap_or_default()
            );
            let style = match op.status.as_str() {
                "failed" | "interrupted" => theme::failure(),
                "queued" | "running" => Style::new().add_modifier(Modifier::BOLD),
                _ => theme::muted(),
            };
            Line::styled(text, style)
        })
        .collect();
    let suffix = format!("{pending} pending · {} shown", operations.len());
    super::fleet_list(
        frame,
        area,
        console,
        ("Operations", &suffix, crate::ui::app::Focus::Operations),
        lines,
    );
}

#[cfg(test)]
mod tests {
    use super::OpsLayout;

    fn shown(l: OpsLayout) -> Vec<usize> {
        l.shown().collect()
    }

    #[test]
    fn pending_rows_are_pinned() {
        // 3 pending, 10 finished, 5 rows, the last finished selected.
        let l = OpsLayout::new(0, 12, 3, 13, 5);
        assert_eq!(shown(l), [0, 1, 2, 11, 12]);
        assert_eq!((l.more, l.position(12)), (0, Some(4)));
        // 6 pending, 5 rows: 3 pinned, the selected one, `… 3 more`.
        let l = OpsLayout::new(0, 12, 6, 13, 5);
        assert_eq!(shown(l), [0, 1, 2, 12]);
        assert_eq!((l.more, l.position(12)), (3, Some(3)));
        // A pending one selected among 6: a window over the pending.
        let l = OpsLayout::new(0, 5, 6, 13, 5);
        assert_eq!(shown(l), [2, 3, 4, 5]);
        assert_eq!((l.more, l.position(5)), (2, Some(3)));
        // All fit, or none pending: the plain window.
        assert_eq!(shown(OpsLayout::new(0, 2, 1, 3, 5))[..3], [0, 1, 2]);
        let l = OpsLayout::new(0, 9, 0, 13, 5);
        assert_eq!((l.head, l.offset, l.more), (0, 5, 0));
    }

    /// In two data rows or one, a finished operation selected,
    /// the oldest pending one is still drawn, first.
    #[test]
    fn pending_rows_are_pinned_in_two_rows_or_one() {
        // 1 pending, 10 finished, 2 rows, the 5th finished selected.
        let l = OpsLayout::new(0, 5, 1, 11, 2);
        assert_eq!(shown(l), [0, 5]);
        assert_eq!((l.more, l.position(5)), (0, Some(1)));
        // 3 pending, 2 rows: the oldest pending and the selected one.
        let l = OpsLayout::new(4, 9, 3, 13, 2);
        assert_eq!(shown(l), [0, 9]);
        // One row: the pending one; the selection is not drawn.
        let l = OpsLayout::new(0, 5, 1, 11, 1);
        assert_eq!(shown(l), [0]);
        assert_eq!(l.position(5), None);
        // A pending one selected in 2 rows: a window over the pending.
        let l = OpsLayout::new(0, 2, 3, 13, 2);
        assert_eq!(shown(l), [1, 2]);
        assert_eq!(l.position(2), Some(1));
    }
}
