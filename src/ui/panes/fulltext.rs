//! The full-text view: one cut line whole, wrapped to the width, in the
//! space of the panes (over the detail view or the operation overlay when
//! opened from them), scrollable (j/k, PgUp/PgDn, g/G, the wheel).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::pane_block;
use crate::ui::app::App;
use crate::ui::theme;

/// Draw the open full-text view into `area` (nothing when none is open):
/// only the rows in view are copied into the frame.
pub(crate) fn render(frame: &mut Frame, area: Rect, app: &App) {
    let Some(full) = app.full_text() else {
        return;
    };
    let inner = super::inner(area);
    let width = usize::from(inner.width);
    let wrapped = full.rows(width);
    let height = usize::from(inner.height);
    let max = wrapped.len().saturating_sub(height.max(1));
    let scroll = full.scroll.min(max);
    let end = (scroll + height).min(wrapped.len());
    let mut viewport = app.viewport.get();
    viewport.full_rows = height;
    viewport.full_len = wrapped.len();
    app.viewport.set(viewport);
    let position = if wrapped.len() > height {
        format!(" · lines {}-{end} of {}", scroll + 1, wrapped.len())
    } else {
        String::new()
    };
    let mut spans = vec![Span::styled(
        format!(" {} ", full.text.title),
        theme::focused_border(),
    )];
    if let Some(note) = full.text.cut_note() {
        spans.push(Span::styled(format!("{note} "), theme::failure()));
    }
    spans.push(Span::styled(
        format!("Esc back · j/k scroll{position} "),
        theme::muted(),
    ));
    let lines: Vec<Line> = wrapped[scroll..end]
        .iter()
        .map(|row| Line::raw(row.clone()))
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(Line::from(spans), true)),
        area,
    );
}
