//! The fleet's text views and footer: a text view (detail, logs, a line
//! whole) replaces the panes, boxed, each line wrapped under its label;
//! the footer says the logs view's search, a text view's keys, else the
//! filter and the fleet's keys. The panes themselves are the console's
//! (`crate::ui::panes`). Everything from a host is sanitized here, as it
//! is drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::{FleetState, HostView};
use crate::model::text::sanitize_short;
use crate::ui::panes::{pane_block, title, whole_items};
use crate::ui::text::fit;
use crate::ui::theme;

/// The logs view's search prompt, or its kept search and its keys.
fn search_line(search: &super::Search, width: usize) -> Line<'static> {
    let text = sanitize_short(&search.text, 256);
    let words = if search.editing {
        format!("search: {text}▏ (Enter finds the newest match, Esc clears)")
    } else {
        format!("search: {text} · n older · N newer · Esc clears")
    };
    Line::styled(fit(&words, width).into_owned(), theme::prompt())
}

/// The filter prompt as the footer's line over a fleet: the App's filter
/// text being typed (`/text▏ (Enter keeps, Esc clears)`).
pub fn draw_filter_prompt(frame: &mut Frame, area: Rect, text: &str) {
    let line = Line::styled(
        fit(
            &format!("/{}▏ (Enter keeps, Esc clears)", sanitize_short(text, 512)),
            usize::from(area.width),
        )
        .into_owned(),
        theme::prompt(),
    );
    frame.render_widget(ratatui::widgets::Clear, area);
    frame.render_widget(Paragraph::new(line), area);
}

/// The fleet's footer in `area`: the logs view's search, a text view's
/// keys, else the filter and the fleet's keys.
pub(crate) fn draw_footer(
    frame: &mut Frame,
    area: Rect,
    app: &FleetState,
    view: Option<&HostView>,
) {
    let width = usize::from(area.width);
    let line = match view {
        Some(view) if let Some(search) = &view.search => search_line(search, width),
        Some(_) => Line::styled(
            "↑↓ jk scroll · PgUp/PgDn · g/G · Esc back".to_owned(),
            theme::key(),
        ),
        _ => {
            let mut keys = Vec::new();
            if !app.filter_text().is_empty() {
                keys.push(format!("filter: {}", sanitize_short(app.filter_text(), 64)));
            }
            keys.extend(
                [
                    "Enter detail",
                    "l logs",
                    "r reap",
                    "d down",
                    "/ filter",
                    "s sort",
                    "Space mark",
                    "P/R reaper",
                    ": cmd",
                    "Tab pane",
                    "? help",
                    "q quit",
                ]
                .map(str::to_owned),
            );
            Line::styled(whole_items(&keys, width), theme::key())
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// `line` in rows of at most `width` columns (a long line wraps, never
/// cut: a host's whole error, a detail line).
/// `line` in rows of at most `width` columns, broken at spaces where it
/// can (a word longer than a row is cut inside: `model::fulltext::wrap`);
/// a labelled line (`error: ...`, `name: ...`, a label of at most 24
/// columns) continues under its value, as the console's full-text view
/// indents it.
fn wrapped(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let indent = line
        .find(": ")
        .map(|at| at + 2)
        .filter(|at| *at <= 24 && at + 16 <= width && line.is_char_boundary(*at))
        .filter(|at| {
            line[..*at]
                .chars()
                .all(|c| c.is_ascii() && !c.is_ascii_control())
        })
        .unwrap_or(0);
    let (head, rest) = line.split_at(indent);
    crate::model::fulltext::wrap(rest, width - indent)
        .into_iter()
        .enumerate()
        .map(|(n, piece)| {
            if n == 0 {
                format!("{head}{piece}")
            } else {
                format!("{:indent$}{piece}", "")
            }
        })
        .collect()
}

/// A text view (detail, logs, a line whole) in `area`, boxed, each
/// line wrapped.
pub(crate) fn draw_text(frame: &mut Frame, area: Rect, view: &HostView) {
    let block = pane_block(title(&view.title, "", true), true);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let width = usize::from(inner.width);
    // Each line's rows, and where the line at `scroll` starts.
    let scroll = view.scroll.min(view.lines.len().saturating_sub(1));
    let mut rows = Vec::new();
    let mut start = 0;
    for (i, line) in view.lines.iter().enumerate() {
        if i == scroll {
            start = rows.len();
        }
        rows.extend(wrapped(line, width));
    }
    let first = if view.follow {
        rows.len().saturating_sub(height)
    } else {
        start
    };
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(first)
        .take(height)
        .map(Line::raw)
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
