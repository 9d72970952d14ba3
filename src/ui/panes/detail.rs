//! The detail view: everything the store knows about one instance, in the
//! space of the four panes, scrollable (j/k, PgUp/PgDn, g/G, the wheel).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::pane_block;
use crate::model::text::sanitize_short;
use crate::ui::app::App;
use crate::ui::detail::{self, Tone};
use crate::ui::theme;
use crate::ui::view::{self, CUT_SHORT};

/// The style of a document line's text.
#[must_use]
pub fn tone_style(tone: Tone) -> Style {
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
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let Some(open) = app.detail() else {
        return;
    };
    let snapshot = app.snapshot();
    let instance = snapshot.instance(&open.name);
    let doc = detail::document(
        open,
        instance,
        snapshot.lock_liveness(&open.name),
        snapshot.reap_attempt(&open.name),
        app.now(),
    );
    let rows = usize::from(area.height.saturating_sub(2));
    let max = doc.len().saturating_sub(rows.max(1));
    let scroll = open.scroll.min(max);
    let mut viewport = app.viewport.get();
    viewport.detail_rows = rows;
    viewport.detail_len = doc.len();
    app.viewport.set(viewport);

    let end = (scroll + rows).min(doc.len());
    let position = if doc.len() > rows {
        format!(" · lines {}-{end} of {}", scroll + 1, doc.len())
    } else {
        String::new()
    };
    let title = Line::from(vec![
        Span::styled(
            format!(" {} ", sanitize_short(&open.name, CUT_SHORT)),
            theme::focused_border(),
        ),
        Span::styled(
            format!("Esc back · p payloads · j/k scroll{position} "),
            theme::muted(),
        ),
    ]);
    let block = pane_block(title, true);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let width = usize::from(inner.width);
    let lines: Vec<Line> = doc[scroll..end]
        .iter()
        .map(|line| {
            let label = view::fit(&line.label, width);
            let left = width.saturating_sub(label.width());
            Line::from(vec![
                Span::styled(label.into_owned(), theme::muted()),
                Span::styled(
                    view::fit(&line.text, left).into_owned(),
                    tone_style(line.tone),
                ),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
