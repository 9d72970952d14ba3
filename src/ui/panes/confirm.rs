//! The confirmation dialogs drawn over the panes
//! ([`crate::ui::app::Question`]): a teardown, a bulk reap or teardown, a
//! cancel of a controller operation.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::centered;
use crate::model::text::sanitize_short;
use crate::model::{Instance, Operation};
use crate::ui::TeardownInfo;
use crate::ui::theme;

/// The confirmation question for `instance`, naming the command as it
/// will run: `Tear down <name>? This runs: stackless down <name> --json
/// [y/N]` (the real `--down-cmd` argv, shell-quoted for reading).
#[must_use]
pub(crate) fn confirm_text(instance: &Instance, teardown: &TeardownInfo) -> String {
    format!(
        "Tear down {}? This runs: {} [y/N]",
        sanitize_short(&instance.name, crate::ui::text::CUT_SHORT),
        sanitize_short(
            &teardown.line_for(&instance.name),
            crate::ui::text::CUT_LONG
        )
    )
}

/// Draw the teardown confirmation dialog for `instance`, centred in `area`.
pub(crate) fn render_confirm(
    frame: &mut Frame,
    area: Rect,
    instance: &Instance,
    teardown: &TeardownInfo,
) {
    render_question(
        frame,
        area,
        " Confirm teardown ",
        confirm_text(instance, teardown),
    );
}

/// Draw the bulk `r`/`d` confirmation dialog (how many, the first names),
/// centred in `area`.
pub(crate) fn render_confirm_bulk(frame: &mut Frame, area: Rect, bulk: &crate::ui::app::Bulk) {
    let title = match bulk.intent {
        crate::reaper::Intent::Reap => " Confirm reap ",
        crate::reaper::Intent::TearDown => " Confirm teardown ",
    };
    render_question(frame, area, title, bulk.question());
}

/// Draw the cancel confirmation dialog for `op` (`cancel down alpha (op
/// 3f2c…)? y/N`), centred in `area`.
pub(crate) fn render_confirm_cancel(frame: &mut Frame, area: Rect, op: &Operation) {
    render_question(
        frame,
        area,
        " Confirm cancel ",
        crate::ui::opview::cancel_question(op),
    );
}

fn render_question(frame: &mut Frame, area: Rect, title: &'static str, text: String) {
    let width = u16::try_from(text.width() + 4).unwrap_or(u16::MAX);
    // Wrapped inside the borders: one more row per line the text needs.
    let inner = usize::from(width.min(area.width).saturating_sub(4)).max(1);
    let rows = u16::try_from(text.width().div_ceil(inner)).unwrap_or(u16::MAX);
    let rect = centered(area, width, rows.saturating_add(4));
    let block = Block::bordered()
        .title(Span::styled(title, theme::focused_border()))
        .border_type(theme::FOCUSED_BORDER)
        .border_style(theme::expired());
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(vec![
            Line::raw(""),
            Line::styled(text, Style::new().add_modifier(Modifier::BOLD)).centered(),
        ])
        .wrap(Wrap { trim: true })
        .block(block),
        rect,
    );
}
