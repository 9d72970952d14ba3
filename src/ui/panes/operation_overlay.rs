//! The operation overlay (Enter on the Operations pane): everything the
//! store says about one operation (id, verb, instance, birth, status,
//! times, progress, cancel, and for a failure its code, message and
//! remediation), live from the snapshot, drawn over the panes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::centered;
use crate::model::Operation;
use crate::model::fulltext::wrap;
use crate::model::op_rules::short_id;
use crate::model::text::sanitize_short;
use crate::ui::app::App;
use crate::ui::opview;
use crate::ui::text::CUT_SHORT;
use crate::ui::theme;

/// Width of the label column.
const LABEL: usize = 13;

/// The overlay's lines as plain text (for `op`, or a notice when the
/// operation `id` is no longer in the snapshot), times in `zone`.
#[must_use]
pub fn lines(id: &str, op: Option<&Operation>, now: i64, zone: &jiff::tz::TimeZone) -> Vec<String> {
    lines_of(id, op, now, zone)
        .into_iter()
        .map(|(label, text)| {
            if label.is_empty() {
                text
            } else {
                format!("{label:<LABEL$} {text}")
            }
        })
        .collect()
}

/// Draw the overlay for operation `id` (`op` as in the current snapshot)
/// centred in `area`: each value wrapped under its label, the box as tall
/// as the wrapped text (up to the whole area).
pub fn render(frame: &mut Frame, area: Rect, app: &App, id: &str, op: Option<&Operation>) {
    let width = area.width.saturating_sub(4).min(110);
    // Inside the borders, after " {label} ".
    let value_width = usize::from(width.saturating_sub(2)).saturating_sub(LABEL + 2);
    let mut lines: Vec<Line> = Vec::new();
    for line in lines_of(id, op, app.now(), app.zone()) {
        let (label, value) = line;
        for (n, piece) in wrap(&value, value_width).into_iter().enumerate() {
            let label = if n == 0 { label.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!(" {label:<LABEL$} "), theme::muted()),
                Span::raw(piece),
            ]));
        }
    }
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let rect = centered(area, width, height);
    let block = Block::bordered()
        .title(Span::styled(
            " Operation (Esc closes · c cancels) ",
            theme::focused_border(),
        ))
        .border_type(theme::FOCUSED_BORDER)
        .border_style(theme::focused_border());
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// `(label, value)` pairs for `op`, or the notice when it is gone.
fn lines_of(
    id: &str,
    op: Option<&Operation>,
    now: i64,
    zone: &jiff::tz::TimeZone,
) -> Vec<(String, String)> {
    match op {
        None => vec![(
            String::new(),
            format!(
                "operation {} is no longer shown",
                sanitize_short(&short_id(id), CUT_SHORT)
            ),
        )],
        Some(op) => opview::operation_lines(op, now, zone)
            .into_iter()
            .map(|(label, text)| (label.to_owned(), text))
            .collect(),
    }
}
