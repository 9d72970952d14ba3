//! The Backoffs pane: every `reap_attempts` row (INSTANCE, ATTEMPTS, RETRY,
//! LAST ERROR), and under the table the selected row's remediation.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};
use unicode_width::UnicodeWidthStr;

use super::{HIGHLIGHT_SYMBOL, focused, pane_block, scroll_window, title};
use crate::model::generation::Era;
use crate::model::text::sanitize_short;
use crate::model::time;
use crate::ui::app::{App, Focus};
use crate::ui::theme;
use crate::ui::view::{self, BackoffRow};

/// Column headers, in order.
pub const HEADERS: [&str; 4] = ["INSTANCE", "ATTEMPTS", "RETRY", "LAST ERROR"];

const SPACING: u16 = super::TABLE_SPACING;

/// The lines under the table for the selected row: its last error when
/// the LAST ERROR column is too narrow to read it or it does not fit its
/// cell, whole (wrapped at words:
/// the README's "shown whole under the table"), then its remediation
/// wrapped at words in the rows left, its last row cut at a word with `…`
/// (never mid-word). As many as fit in `inner` under a
/// header and one row; only an error longer than all of them is cut.
fn selected_details(selected: &BackoffRow, inner: Rect) -> Vec<Line<'static>> {
    let column = column_widths(inner.width, std::slice::from_ref(selected))[3];
    // Too narrow to read, or the error does not fit its cell whole.
    let narrow = column < 14 || selected.last_error.width() > usize::from(column);
    let width = usize::from(inner.width);
    let room = usize::from(inner.height.saturating_sub(2));
    let labelled = |label: &'static str, text: &str, rows: usize| -> Vec<Line<'static>> {
        let lines = crate::ui::text::wrap_fit(&format!("{label}{text}"), width, rows);
        lines
            .into_iter()
            .enumerate()
            .map(|(i, line)| {
                // The label on the first line, muted.
                match line.strip_prefix(label).filter(|_| i == 0) {
                    Some(rest) => Line::from(vec![
                        Span::styled(label, theme::muted()),
                        Span::raw(rest.to_owned()),
                    ]),
                    None => Line::raw(line),
                }
            })
            .collect()
    };
    let mut details: Vec<Line> = Vec::new();
    if narrow {
        details = labelled("error: ", &selected.last_error, room);
    }
    let left = room.saturating_sub(details.len());
    if let Some(remediation) = &selected.remediation
        && left > 0
    {
        details.extend(labelled("remediation: ", remediation, left));
    }
    details
}

/// `inner` split into the table (`len` rows and its header, as many as
/// fit) and, right under it, `lines` rows of details (none when 0).
fn split(inner: Rect, len: usize, lines: u16) -> (Rect, Option<Rect>) {
    if lines == 0 {
        return (inner, None);
    }
    // The details right under the table's rows (zoomed, not at the
    // pane's bottom).
    let table = u16::try_from(len + 1)
        .unwrap_or(u16::MAX)
        .min(inner.height.saturating_sub(lines));
    let [t, d, _] = Layout::vertical([
        Constraint::Length(table),
        Constraint::Length(lines),
        Constraint::Fill(1),
    ])
    .areas(inner);
    (t, Some(d))
}

/// Draw the Backoffs pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    if let Some(fleet) = app.fleet() {
        render_fleet(frame, area, fleet, app);
        return;
    }
    let is_focused = focused(app, Focus::Backoffs);
    let snapshot = app.snapshot();
    let attempts = &snapshot.reap_attempts;
    let len = attempts.len();
    let block = pane_block(
        title("Backoffs", &format!("({len})"), is_focused),
        is_focused,
    );
    let Some(inner) = super::framed(frame, area, block) else {
        return;
    };
    if len == 0 {
        let text = if snapshot.generation.era() == Era::Older {
            format!(
                "no reap_attempts table (schema v{})",
                snapshot.generation.user_version
            )
        } else {
            "no reap backoffs".to_owned()
        };
        frame.render_widget(Paragraph::new(Line::styled(text, theme::muted())), inner);
        return;
    }
    let now = app.now();
    let selected = app.backoff_index().min(len - 1);
    let selected_row = view::backoff_row(&attempts[selected], now);
    let details = selected_details(&selected_row, inner);
    let lines = u16::try_from(details.len()).unwrap_or(0);
    let (table_area, detail_area) = split(inner, len, lines);
    // One row of room: the selected row, not the header.
    let headers: &[&str] = if table_area.height >= 2 {
        &HEADERS
    } else {
        &[]
    };
    let rows_fit = usize::from(
        table_area
            .height
            .saturating_sub(u16::from(!headers.is_empty())),
    );
    let mut viewport = app.viewport.get();
    let offset = scroll_window(viewport.backoffs_offset, selected, len, rows_fit);
    viewport.backoffs_offset = offset;
    viewport.backoffs_rows = rows_fit;
    app.viewport.set(viewport);

    let end = (offset + rows_fit).min(len);
    let built: Vec<BackoffRow> = attempts[offset..end]
        .iter()
        .map(|a| view::backoff_row(a, now))
        .collect();
    let widths = column_widths(table_area.width, &built);
    let rows: Vec<Row> = built.into_iter().map(|r| table_row(r, &widths)).collect();
    super::render_table(
        frame,
        table_area,
        headers,
        rows,
        &widths,
        Some(selected - offset),
        is_focused,
    );

    if let Some(detail_area) = detail_area {
        frame.render_widget(Paragraph::new(details), detail_area);
    }
    let (above, below) = super::hidden_rows(0, offset, rows_fit, len);
    super::render_more(frame, area, above, below);
}

/// One backoff's table row, each cell fitted to its column's width.
fn table_row(r: BackoffRow, widths: &[u16; 4]) -> Row<'static> {
    let retry_style = if r.due { theme::due() } else { Style::new() };
    let cell = |text: &str, i: usize| -> Cell<'static> {
        Cell::from(crate::ui::text::fit(text, usize::from(widths[i])).into_owned())
    };
    Row::new([
        cell(&r.instance, 0),
        cell(&r.attempts, 1).style(theme::failure()),
        cell(&r.retry, 2).style(retry_style),
        Cell::from(crate::ui::text::fit_words(&r.last_error, usize::from(widths[3])).into_owned()),
    ])
}

/// Column widths for a table `width` columns wide. INSTANCE first takes
/// what its widest visible name needs (at least 8), as NAME does in
/// Instances; ATTEMPTS is 8 (5, `TRIES`, when tight), RETRY as wide as its
/// widest visible text (5 to 16), LAST ERROR the rest (none below 5
/// columns: the error is then shown whole under the table).
#[must_use]
pub fn column_widths(width: u16, rows: &[BackoffRow]) -> [u16; 4] {
    // The error column's narrowest: `ERROR`.
    const ERROR_MIN: u16 = 5;
    let symbol = u16::try_from(HIGHLIGHT_SYMBOL.width()).unwrap_or(2);
    let available = width.saturating_sub(symbol + SPACING * 3);
    let widest = |f: fn(&BackoffRow) -> &str| {
        rows.iter()
            .map(|r| f(r).width())
            .max()
            .map_or(0, |w| u16::try_from(w).unwrap_or(u16::MAX))
    };
    let name_need = widest(|r| &r.instance).max(8);
    let retry = widest(|r| &r.retry).clamp(5, 16).min(available);
    let attempts: u16 = if name_need + 8 + retry + ERROR_MIN <= available {
        8
    } else {
        5
    };
    let attempts = attempts.min(available - retry);
    let mut name = name_need.min(available - attempts - retry);
    let mut error = available - name - attempts - retry;
    if error < ERROR_MIN {
        // No room for the error column (shown under the table instead):
        // ATTEMPTS gets its header back, the rest goes to the name.
        let back = (8 - attempts).min(error);
        name += error - back;
        error = 0;
        return [name, attempts + back, retry, error];
    }
    [name, attempts, retry, error]
}

/// The Backoffs pane over a fleet: every host's reap backoffs, HOST
/// first.
fn render_fleet(
    frame: &mut Frame,
    area: Rect,
    app: &crate::ui::app::over_fleet::FleetState,
    console: &App,
) {
    let now = console.now();
    let backoffs = app.backoffs();
    let lines = backoffs
        .iter()
        .map(|(host, b)| {
            let text = format!(
                "{} {} ×{} {} · {}",
                sanitize_short(&app.fleet().hosts[*host].name, 64),
                sanitize_short(&b.instance, 96),
                b.attempts,
                time::retry_text(b.next_retry_at, now),
                sanitize_short(&b.summary, 200)
            );
            Line::styled(
                text,
                if b.next_retry_at <= now {
                    theme::due()
                } else {
                    Style::new()
                },
            )
        })
        .collect();
    let suffix = format!("{}", backoffs.len());
    super::fleet_list(
        frame,
        area,
        console,
        ("Backoffs", &suffix, crate::ui::app::Focus::Backoffs),
        lines,
    );
}
