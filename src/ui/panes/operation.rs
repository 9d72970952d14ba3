//! The operation overlay (Enter on the Operations pane): everything the
//! store says about one operation (id, verb, instance, birth, status,
//! times, progress, cancel, and for a failure its code, message and
//! remediation), live from the snapshot, drawn over the panes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::overlay::centered;
use crate::model::Operation;
use crate::model::op_rules::short_id;
use crate::model::text::sanitize_short;
use crate::ui::app::App;
use crate::ui::opview;
use crate::ui::theme;
use crate::ui::view::CUT_SHORT;

/// Width of the label column.
const LABEL: usize = 13;

/// The overlay's lines as plain text (for `op`, or a notice when the
/// operation `id` is no longer in the snapshot).
#[must_use]
pub fn lines(id: &str, op: Option<&Operation>, now: i64) -> Vec<String> {
    match op {
        None => vec![format!(
            "operation {} is no longer shown",
            sanitize_short(&short_id(id), CUT_SHORT)
        )],
        Some(op) => opview::operation_lines(op, now)
            .into_iter()
            .map(|(label, text)| format!("{label:<LABEL$} {text}"))
            .collect(),
    }
}

/// Draw the overlay for operation `id` (`op` as in the current snapshot)
/// centred in `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App, id: &str, op: Option<&Operation>) {
    let text = lines(id, op, app.now());
    let lines: Vec<Line> = text
        .iter()
        .map(|line| {
            let cut = line
                .char_indices()
                .nth(LABEL + 1)
                .map_or(line.len(), |(i, _)| i);
            let (label, rest) = line.split_at(cut);
            Line::from(vec![
                Span::styled(format!(" {label}"), theme::muted()),
                Span::raw(rest.to_owned()),
            ])
        })
        .collect();
    let width = area.width.saturating_sub(4).min(110);
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
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}
