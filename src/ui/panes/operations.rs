//! The Operations pane (stackless 0.4.0 stores only): the controller's
//! durable queue, live. Queued and running operations first (oldest
//! first), then the most recent finished ones (newest first), as the store
//! adapter orders `Rows::operations`: VERB, INSTANCE, STATUS, AGE, TOOK,
//! DETAIL (step progress, `cancel requested`, a failure's `code: message`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row};
use unicode_width::UnicodeWidthStr;

use super::{HIGHLIGHT_SYMBOL, focused, pane_block, scroll_window, title};
use crate::model::OpStatus;
use crate::ui::app::{App, Focus};
use crate::ui::opview::{self, OperationRow};
use crate::ui::theme;

/// Column headers, in order.
pub const HEADERS: [&str; 6] = ["VERB", "INSTANCE", "STATUS", "AGE", "TOOK", "DETAIL"];

/// Shown when the store's queue is empty.
pub const EMPTY: &str = "no controller operations in this store";

const SPACING: u16 = super::TABLE_SPACING;

/// The title's counts: `2 pending · 3 finished`.
#[must_use]
pub fn title_suffix(app: &App) -> String {
    let snapshot = app.snapshot();
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
    let mut viewport = app.viewport.get();
    let offset = scroll_window(viewport.operations_offset, selected, len, rows_fit);
    viewport.operations_offset = offset;
    viewport.operations_rows = rows_fit;
    app.viewport.set(viewport);
    let end = (offset + rows_fit).min(len);
    let now = app.now();
    let built: Vec<OperationRow> = ops[offset..end]
        .iter()
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
    super::render_table(
        frame,
        inner,
        &HEADERS,
        rows,
        &widths,
        selected - offset,
        is_focused,
    );
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
