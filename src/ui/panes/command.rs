//! The command line (`:`) or the jump line (Ctrl-F, `jump to: `), drawn
//! over the footer while it is open: the text typed with a cursor, then
//! the Tab candidates (the one shown first marked).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::model::text::sanitize_short;
use crate::ui::app::CommandLine;
use crate::ui::panes::instances::PROMPT_CURSOR;
use crate::ui::theme;

/// Draw the open command line `line` into the footer's `area`.
pub(crate) fn render(frame: &mut Frame, area: Rect, line: &CommandLine) {
    let text = line.text();
    let jump = line.jumping();
    let mut spans = vec![Span::styled(
        format!(
            "{}{}{PROMPT_CURSOR}",
            if jump { "jump to: " } else { ":" },
            sanitize_short(text, crate::ui::text::CUT_SHORT * 2)
        ),
        theme::prompt(),
    )];
    if let Some((candidates, shown)) = line.candidates() {
        let list: Vec<String> = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let c = sanitize_short(c, crate::ui::text::CUT_SHORT);
                if i == shown { format!("[{c}]") } else { c }
            })
            .collect();
        spans.push(Span::styled(
            format!("  {}", list.join(" ")),
            theme::muted(),
        ));
    } else if jump {
        spans.push(Span::styled(
            "  Tab completes · Enter jumps · Esc closes",
            theme::muted(),
        ));
    } else {
        spans.push(Span::styled(
            "  Tab completes · ↑↓ history · Enter runs · Esc closes",
            theme::muted(),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
