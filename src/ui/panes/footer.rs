//! The footer: the keys, on one line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::app::App;
use crate::ui::theme;

/// Draw the footer into `area` (one line):
/// `↑↓/jk select  Tab pane  r reap  d down  ? help  q quit`. `r` and `d` are
/// struck through while the write keys are disabled.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let writable = app.config().write_keys.is_ok() && app.snapshot().generation.allows_write_keys();
    let mut spans = Vec::new();
    for (key, what, enabled) in [
        ("↑↓/jk", "select", true),
        ("Tab", "pane", true),
        ("r", "reap", writable),
        ("d", "down", writable),
        ("?", "help", true),
        ("q", "quit", true),
    ] {
        if !spans.is_empty() {
            spans.push(Span::raw("  "));
        }
        if enabled {
            spans.push(Span::styled(key, theme::key()));
            spans.push(Span::raw(format!(" {what}")));
        } else {
            spans.push(Span::styled(format!("{key} {what}"), theme::key_disabled()));
        }
    }
    if let Err(reason) = &app.config().write_keys {
        spans.push(Span::styled(
            format!(
                "  (r/d off: {})",
                crate::model::text::sanitize_short(reason, 60)
            ),
            theme::muted(),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
