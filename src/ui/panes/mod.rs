//! One module per screen region. Each `render` draws its region into `area`
//! of `frame` from `&App` alone, so a test can draw any pane by itself.

pub mod activity;
pub mod backoffs;
pub(crate) mod command;
pub(crate) mod confirm;
pub(crate) mod detail;
pub mod footer;
pub(crate) mod fulltext;
pub mod header;
pub mod help;
pub mod hosts;
pub mod instances;
pub(crate) mod logs;
pub mod operation_overlay;
pub mod operations;
pub mod supervisor;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::app::{App, Focus};
use super::theme;

/// The symbol in front of the selected table row (2 columns).
pub const HIGHLIGHT_SYMBOL: &str = "▶ ";

/// A pane's bordered block: double border and bold title when focused.
#[must_use]
pub fn pane_block<'a>(title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
    let block = Block::bordered().title(title);
    if focused {
        block
            .border_type(theme::FOCUSED_BORDER)
            .border_style(theme::focused_border())
    } else {
        block
            .border_type(theme::UNFOCUSED_BORDER)
            .border_style(theme::unfocused_border())
    }
}

/// A pane title: ` Name ` plus a muted suffix (counts, position).
#[must_use]
pub fn title(name: &str, suffix: &str, focused: bool) -> Line<'static> {
    let name_style = if focused {
        theme::focused_border()
    } else {
        ratatui::style::Style::new().add_modifier(ratatui::style::Modifier::BOLD)
    };
    let mut spans = vec![Span::styled(format!(" {name} "), name_style)];
    if !suffix.is_empty() {
        spans.push(Span::styled(format!("{suffix} "), theme::muted()));
    }
    Line::from(spans)
}

/// `items` joined by ` · `, as many whole items from the first as fit in
/// `room` columns: a title or a footer drops whole items, never cutting one
/// mid-word.
#[must_use]
pub fn whole_items(items: &[String], room: usize) -> String {
    use unicode_width::UnicodeWidthStr as _;
    let mut out = String::new();
    for item in items {
        let sep = if out.is_empty() { 0 } else { 3 };
        if out.width() + sep + item.width() > room {
            break;
        }
        if sep > 0 {
            out.push_str(" · ");
        }
        out.push_str(item);
    }
    out
}

/// The room a pane `width` wide leaves for the title suffix after
/// ` {name} ` (borders and the suffix's trailing space counted).
#[must_use]
pub fn title_room(width: u16, name: &str) -> usize {
    use unicode_width::UnicodeWidthStr as _;
    usize::from(width).saturating_sub(2 + name.width() + 2 + 1)
}

/// Whether `pane` has the keyboard in `app`.
#[must_use]
pub fn focused(app: &App, pane: Focus) -> bool {
    app.focus() == pane
}

/// The first row to draw so that `selected` is visible in `rows` rows,
/// moving the previous window `previous` as little as possible. `len` is the
/// number of rows in the table.
#[must_use]
pub fn scroll_window(previous: usize, selected: usize, len: usize, rows: usize) -> usize {
    if rows == 0 || len <= rows {
        return 0;
    }
    let mut offset = previous.min(len - rows);
    if selected < offset {
        offset = selected;
    } else if selected >= offset + rows {
        offset = selected + 1 - rows;
    }
    offset.min(len - rows)
}

/// How many of a table's `len` rows are hidden above and below a scroll
/// window of `window` rows drawn from `offset`, `head` rows pinned above it
/// (the Operations pane's pending ones; 0 elsewhere): `(above, below)`.
/// With the rows drawn, they add up to `len`.
#[must_use]
pub const fn hidden_rows(head: usize, offset: usize, window: usize, len: usize) -> (usize, usize) {
    let end = if offset + window < len {
        offset + window
    } else {
        len
    };
    (offset.saturating_sub(head), len.saturating_sub(end))
}

/// What a table pane's bottom border says of its hidden rows: `↑ 2 more ·
/// ↓ 3 more` (each part only when not 0); `None` when every row is drawn.
#[must_use]
pub fn more_text(above: usize, below: usize) -> Option<String> {
    let parts: Vec<String> = [("↑", above), ("↓", below)]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(arrow, n)| format!("{arrow} {n} more"))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// Write [`more_text`] into the bottom border of a pane drawn in `area`,
/// right-aligned one border cell before the corner, so an overlay drawn
/// over the pane with a one-cell margin leaves the border whole (nothing
/// when every row is drawn or it does not fit).
pub fn render_more(frame: &mut ratatui::Frame, area: Rect, above: usize, below: usize) {
    use unicode_width::UnicodeWidthStr as _;
    let Some(text) = more_text(above, below) else {
        return;
    };
    let text = format!(" {text} ");
    let width = u16::try_from(text.width()).unwrap_or(u16::MAX);
    if area.height < 2 || width.saturating_add(3) > area.width {
        return;
    }
    let at = Rect {
        x: area.x + area.width - 2 - width,
        y: area.y + area.height - 1,
        width,
        height: 1,
    };
    frame.render_widget(Paragraph::new(Line::styled(text, theme::muted())), at);
}

pub use super::geometry::{log_line_at, log_window};

/// A rectangle `width` x `height`, centred in `area` and clipped to it.
#[must_use]
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    area.centered(
        Constraint::Length(width.min(area.width)),
        Constraint::Length(height.min(area.height)),
    )
}

/// One line of a log pane (Supervisor, Activity): `text` fitted to
/// `width`, its `HH:MM:SS` muted and the rest in `style`; the selected
/// line (what Enter and `e` open whole) reversed.
pub(crate) fn log_line(text: &str, width: usize, style: Style, selected: bool) -> Line<'static> {
    let text = crate::ui::text::fit(text, width);
    let (clock, rest) = split_clock(&text);
    let line = Line::from(vec![
        Span::styled(clock.to_owned(), theme::muted()),
        Span::styled(rest.to_owned(), style),
    ]);
    if selected {
        line.patch_style(theme::selected_focused())
    } else {
        line
    }
}

/// Draw a table pane's `block` into `area`; the room inside it, when
/// there is any.
pub(crate) fn framed(frame: &mut Frame, area: Rect, block: Block<'_>) -> Option<Rect> {
    let inner = block.inner(area);
    frame.render_widget(block, area);
    (inner.width > 0 && inner.height > 0).then_some(inner)
}

/// A pane with nothing to list: `text`, muted, inside `block`.
pub(crate) fn render_empty(frame: &mut Frame, area: Rect, block: Block<'_>, text: &str) {
    frame.render_widget(
        Paragraph::new(Line::styled(text.to_owned(), theme::muted())).block(block),
        area,
    );
}

/// Split a log line into its `HH:MM:SS` prefix and the rest, at a character
/// boundary even when the line was cut short.
#[must_use]
pub fn split_clock(line: &str) -> (&str, &str) {
    let cut = (0..=8.min(line.len()))
        .rev()
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(0);
    line.split_at(cut)
}

/// `rect` shrunk by its border (zero-sized when too small).
#[must_use]
pub fn inner(rect: Rect) -> Rect {
    Block::bordered().inner(rect)
}

/// Short headers, as (header, short): what a column too narrow for its
/// header shows instead.
pub const SHORT_HEADERS: &[(&str, &str)] = &[
    ("LAST ERROR", "ERROR"),
    ("ATTEMPTS", "TRIES"),
    ("INSTANCE", "NAME"),
    ("SUBSTRATE", "SUB"),
];

/// A column header in a column `width` wide, never cut mid-word: the
/// header, else its short form ([`SHORT_HEADERS`]), else nothing.
#[must_use]
pub fn header_in(header: &str, width: usize) -> &str {
    use unicode_width::UnicodeWidthStr as _;
    if header.width() <= width {
        return header;
    }
    SHORT_HEADERS
        .iter()
        .find(|(long, short)| *long == header && short.width() <= width)
        .map_or("", |(_, short)| short)
}

/// Columns between table cells, in both table panes.
pub const TABLE_SPACING: u16 = 1;

/// A selectable table as both table panes draw it: headers fitted to their
/// column widths by [`header_in`] (never cut mid-word), the shared spacing, highlight symbol and selection style,
/// the selection at `selected` (a row index within `rows`; `None`: no row
/// highlighted). No `headers`: no header row.
pub fn render_table(
    frame: &mut ratatui::Frame,
    area: Rect,
    headers: &[&str],
    rows: Vec<ratatui::widgets::Row<'static>>,
    widths: &[u16],
    selected: Option<usize>,
    is_focused: bool,
) {
    use ratatui::layout::Constraint;
    use ratatui::widgets::{Cell, HighlightSpacing, Row, Table, TableState};
    let header = Row::new(
        headers
            .iter()
            .zip(widths)
            .map(|(h, w)| Cell::from(header_in(h, usize::from(*w)))),
    )
    .style(crate::ui::theme::table_header());
    let table = Table::new(rows, widths.iter().map(|w| Constraint::Length(*w)));
    // No headers: no header row (a pane with one row of room draws its
    // selected row, not the header).
    let table = if headers.is_empty() {
        table
    } else {
        table.header(header)
    };
    let table = table
        .column_spacing(TABLE_SPACING)
        .highlight_symbol(HIGHLIGHT_SYMBOL)
        .highlight_spacing(HighlightSpacing::Always)
        .row_highlight_style(if is_focused {
            crate::ui::theme::selected_focused()
        } else {
            crate::ui::theme::selected_unfocused()
        });
    let mut state = TableState::default().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut state);
}

/// A pane of one line per row over a fleet (Operations, Backoffs,
/// Activity): `lines` under the titled block, the cursor's row marked
/// and kept in view, each line fitted to the pane's width.
pub(crate) fn fleet_list(
    frame: &mut Frame,
    area: Rect,
    app: &crate::ui::App,
    (name, suffix, focus): (&str, &str, crate::ui::app::Focus),
    lines: Vec<Line<'static>>,
) {
    let focused = app.focus() == focus;
    let block = pane_block(title(name, suffix, focused), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let cursor = app.fleet_cursor(focus);
    let first = hosts::window(cursor, lines.len(), height);
    let width = usize::from(inner.width);
    let (above, below) = hidden_rows(0, first, height, lines.len());
    let shown: Vec<Line> = lines
        .into_iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, line)| {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let style = line.spans.first().map(|s| s.style).unwrap_or_default();
            let marker = if i == cursor && focused {
                HIGHLIGHT_SYMBOL
            } else {
                "  "
            };
            Line::styled(
                crate::ui::text::fit(&format!("{marker}{text}"), width).into_owned(),
                style.patch(hosts::row_style(i == cursor, focused)),
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
    render_more(frame, area, above, below);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(scroll_window(0, 0, 5, 10), 0);
        assert_eq!(scroll_window(0, 12, 100, 10), 3);
        assert_eq!(scroll_window(3, 5, 100, 10), 3);
        assert_eq!(scroll_window(3, 1, 100, 10), 1);
        assert_eq!(scroll_window(95, 99, 100, 10), 90);
        assert_eq!(scroll_window(5, 0, 100, 0), 0);
        assert_eq!(log_window(3, 10, 0, 0), (0, 3));
        assert_eq!(log_window(30, 10, 0, 0), (20, 30));
        assert_eq!(log_window(30, 10, 5, 5), (15, 25));
        assert_eq!(log_window(30, 10, 500, 500), (0, 10));
        assert_eq!(log_window(0, 0, 0, 0), (0, 0));
        // The selection pulls the window: up to it, or down to it.
        assert_eq!(log_window(30, 10, 0, 29), (0, 10));
        assert_eq!(log_window(30, 10, 20, 3), (17, 27));
        assert_eq!(log_window(30, 10, 0, 9), (20, 30));
        let rect = Rect::new(0, 10, 40, 5);
        assert_eq!(log_line_at(rect, 11, (7, 10)), Some(7));
        assert_eq!(log_line_at(rect, 13, (7, 10)), Some(9));
        assert_eq!(log_line_at(rect, 14, (7, 10)), None);
        assert_eq!(log_line_at(rect, 10, (7, 10)), None);
        assert_eq!(split_clock("13:57:… x"), ("13:57:", "… x"));
        assert_eq!(split_clock("13:57:26 a"), ("13:57:26", " a"));
        assert_eq!(split_clock("1…"), ("1…", ""));
        assert_eq!(header_in("LAST ERROR", 10), "LAST ERROR");
        assert_eq!(header_in("LAST ERROR", 7), "ERROR");
        assert_eq!(header_in("LAST ERROR", 4), "");
        assert_eq!(header_in("RETRY", 4), "");
        let items = [
            "4/8".to_owned(),
            "6 active".to_owned(),
            "4 tombstoned".to_owned(),
        ];
        assert_eq!(whole_items(&items, 40), "4/8 · 6 active · 4 tombstoned");
        assert_eq!(whole_items(&items, 20), "4/8 · 6 active");
        assert_eq!(whole_items(&items, 2), "");
    }
}
