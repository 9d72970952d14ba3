//! The detail view: everything the store knows about one instance, in the
//! space of the four panes, scrollable (PgUp/PgDn, g/G, the wheel), with a
//! cursor on its fields (j/k; `y` copies the field: `▶` and reversed).
//! Long values are wrapped under their label, never cut.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::pane_block;
use crate::model::text::sanitize_short;
use crate::ui::app::App;
use crate::ui::detail::cursor;
use crate::ui::detail::{self, Tone};
use crate::ui::text::CUT_SHORT;
use crate::ui::theme;

/// The style of a document line's text.
#[must_use]
pub(crate) fn tone_style(tone: Tone) -> Style {
    match tone {
        Tone::Section => theme::section(),
        Tone::Plain => Style::new(),
        Tone::Muted => theme::muted(),
        Tone::Code => theme::code(),
        Tone::Warning => theme::lock_held(),
        Tone::Error => theme::failure(),
    }
}

/// Draw the open detail view into `area` (nothing when none is open).
pub(crate) fn render(frame: &mut Frame, area: Rect, app: &App) {
    let Some(open) = app.detail() else {
        return;
    };
    let snapshot = app.snapshot();
    let doc = detail::document(
        open,
        snapshot,
        app.last_teardown(&open.name),
        (app.now(), app.zone()),
    );
    let inner = super::inner(area);
    let wrapped = wrap_document(&doc, usize::from(inner.width));
    let rows = usize::from(inner.height);
    let max = wrapped.len().saturating_sub(rows.max(1));
    let scroll = open.scroll.min(max);
    let mut viewport = app.viewport.get();
    viewport.detail_rows = rows;
    viewport.detail_len = wrapped.len();
    viewport.detail_width = usize::from(inner.width);
    app.viewport.set(viewport);
    let cursor = cursor::cursor_line(&doc, open.cursor);

    let end = (scroll + rows).min(wrapped.len());
    let position =
        (wrapped.len() > rows).then(|| format!("lines {}-{end} of {}", scroll + 1, wrapped.len()));
    let name = format!(" {} ", sanitize_short(&open.name, CUT_SHORT));
    let room = usize::from(area.width)
        .saturating_sub(2)
        .saturating_sub(name.width());
    let title = Line::from(vec![
        Span::styled(name, theme::focused_border()),
        Span::styled(title_hints(position, room), theme::muted()),
    ]);
    frame.render_widget(pane_block(title, true), area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let mut previous = None;
    let lines: Vec<Line> = wrapped[scroll..end]
        .iter()
        .map(|(label, text, tone, line)| {
            let first = previous != Some(*line);
            previous = Some(*line);
            if cursor == Some(*line) {
                return cursor_row(label, text, first);
            }
            Line::from(vec![
                Span::styled(label.clone().into_owned(), theme::muted()),
                Span::styled(text.clone().into_owned(), tone_style(*tone)),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The title after the name: the key hints, then the position (`lines
/// 1-19 of 48`), within `room` columns: hints dropped whole from the last
/// (`y copy` first), never the position, never a word cut.
fn title_hints(position: Option<String>, room: usize) -> String {
    let mut hints = vec!["Esc back", "p payloads", "j/k field", "y copy"];
    loop {
        let mut parts: Vec<&str> = hints.clone();
        if let Some(position) = &position {
            parts.push(position);
        }
        let text = format!("{} ", parts.join(" · "));
        if text.width() <= room || hints.is_empty() {
            return text;
        }
        hints.pop();
    }
}

/// A drawn row of the field under the cursor: `▶` before the label on
/// its first row, the whole row reversed (visible without colour too).
fn cursor_row(label: &str, text: &str, first: bool) -> Line<'static> {
    let label = match label.char_indices().nth(1) {
        Some((at, _)) if first && label.starts_with("   ") => {
            format!(" {CURSOR_MARK}{}", &label[at + 1..])
        }
        _ => label.to_owned(),
    };
    Line::from(vec![Span::raw(label), Span::raw(text.to_owned())]).style(theme::selected_focused())
}

/// The mark before the label of the field under the cursor.
pub(crate) const CURSOR_MARK: char = '▶';

pub(crate) use crate::ui::geometry::wrap_document;
