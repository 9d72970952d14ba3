//! How a log line is laid out in the logs view, for both the drawing
//! (`crate::ui::panes::logs`) and the state that scrolls by rows
//! (`crate::ui::app::LogsView::row_counter`): the marks, and a line cut or
//! wrapped into rows with its search matches highlighted.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

use crate::model::logtext::find_all;
use crate::model::logview::LogLine;
use crate::ui::theme;

/// After a line shown before its `\n` came (it may go on).
pub(crate) const PARTIAL_MARK: &str = " ⏎?";

/// `… (line continues before: 1.0 GiB) `: the bytes of the file before a
/// piece whose line was not read to its start.
#[must_use]
pub(crate) fn cut_mark(line: &LogLine) -> String {
    format!(
        "… (line continues before: {}) ",
        crate::ui::text::size(line.at.offset)
    )
}

/// One log line as rows: cut at `width` (no wrap) or wrapped; matches of
/// `search` highlighted.
pub(crate) fn render_line(
    prefix: &str,
    line: &LogLine,
    search: &str,
    current: bool,
    width: usize,
    wrap: bool,
) -> Vec<Line<'static>> {
    let hits = find_all(&line.text, search);
    let hit_style = if current {
        theme::search_current()
    } else {
        theme::search_hit()
    };
    // (text, style) pieces of the line.
    let mut pieces: Vec<(String, Style)> = vec![(prefix.to_owned(), theme::muted())];
    let mut at = 0;
    for hit in &hits {
        pieces.push((line.text[at..hit.start].to_owned(), Style::new()));
        pieces.push((line.text[hit.clone()].to_owned(), hit_style));
        at = hit.end;
    }
    pieces.push((line.text[at..].to_owned(), Style::new()));
    let mut rows: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    for (text, style) in pieces {
        let mut run = String::new();
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                let row = rows.last_mut().expect("one row at least");
                row.push(Span::styled(std::mem::take(&mut run), style));
                if !wrap {
                    cut_with_ellipsis(row, width);
                    return rows.into_iter().map(Line::from).collect();
                }
                rows.push(Vec::new());
                used = 0;
            }
            used += w;
            run.push(c);
        }
        if !run.is_empty()
            && let Some(row) = rows.last_mut()
        {
            row.push(Span::styled(run, style));
        }
    }
    rows.into_iter().map(Line::from).collect()
}

/// End a full row with `…` (the line goes on past the edge): characters
/// are taken off its end until the mark fits in `width`.
fn cut_with_ellipsis(row: &mut Vec<Span<'static>>, width: usize) {
    let used = |row: &[Span<'_>]| row.iter().map(|s| s.content.width()).sum::<usize>();
    while used(row) + 1 > width {
        let Some(last) = row.last_mut() else { break };
        let mut text = last.content.to_string();
        if text.pop().is_none() {
            row.pop();
            continue;
        }
        last.content = text.into();
    }
    row.push(Span::styled("…", theme::muted()));
}
