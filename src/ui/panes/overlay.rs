//! Overlays drawn over the panes: the teardown confirmation dialog and the
//! help listing every key.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use crate::model::Instance;
use crate::model::text::sanitize_short;
use crate::ui::theme;
use crate::ui::view;

/// Every key, as (keys, what it does); the help overlay lists these.
pub const KEYS: [(&str, &str); 18] = [
    (
        "↑ / k, ↓ / j",
        "select a row; scroll logs and the detail view",
    ),
    ("PgUp / PgDn", "move by one page"),
    (
        "Home / g, End / G",
        "first / last row; oldest / newest log line",
    ),
    ("Tab / Shift-Tab", "next / previous pane"),
    ("Enter", "detail view of the selected instance (or backoff)"),
    (
        "Esc",
        "back from the detail view; clear the filter; close help",
    ),
    ("p", "detail view: show / hide checkpoint payloads"),
    ("/", "filter instances by name, substrate or status"),
    (
        "  typing, Backspace",
        "edit the filter (rows follow each key)",
    ),
    ("  Enter / Esc", "keep the filter / clear it"),
    ("s", "sort: lease expiry, name, substrate, reap attempts"),
    ("r", "reap the selected instance now (expired, not locked)"),
    ("d", "tear the selected instance down (asks y/N)"),
    ("y / other key", "confirm / cancel a teardown"),
    ("mouse click", "focus a pane; select a table row"),
    ("mouse wheel", "scroll the pane under the pointer"),
    ("?", "open / close this help"),
    ("q / Ctrl-C", "quit"),
];

/// The confirmation question for `instance`:
/// `Tear down <name>? This runs stackless down. [y/N]`.
#[must_use]
pub fn confirm_text(instance: &Instance) -> String {
    format!(
        "Tear down {}? This runs stackless down. [y/N]",
        sanitize_short(&instance.name, view::CUT_SHORT)
    )
}

/// A rectangle `width` x `height`, centred in `area` and clipped to it.
#[must_use]
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    area.centered(
        Constraint::Length(width.min(area.width)),
        Constraint::Length(height.min(area.height)),
    )
}

/// Draw the teardown confirmation dialog for `instance`, centred in `area`.
pub fn render_confirm(frame: &mut Frame, area: Rect, instance: &Instance) {
    let text = confirm_text(instance);
    let width = u16::try_from(text.width() + 4).unwrap_or(u16::MAX);
    let rect = centered(area, width, 5);
    let block = Block::bordered()
        .title(Span::styled(" Confirm teardown ", theme::focused_border()))
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

/// Draw the help overlay, centred in `area`.
pub fn render_help(frame: &mut Frame, area: Rect) {
    let key_width = KEYS.iter().map(|(k, _)| k.width()).max().unwrap_or(0);
    let mut lines: Vec<Line> = KEYS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<key_width$}  "), theme::key()),
                Span::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        " State column (ST, after NAME): lease, lock, reap marks",
        theme::muted(),
    ));
    for pair in view::STATE_LEGEND.chunks(3) {
        let text: Vec<String> = pair
            .iter()
            .map(|(mark, what)| format!("{mark} {what}"))
            .collect();
        lines.push(Line::styled(
            format!("   {}", text.join(" · ")),
            theme::muted(),
        ));
    }
    lines.push(Line::styled(
        " STATUS (!): unreadable row · flash: [info] [warn] [error]",
        theme::muted(),
    ));
    let width = lines
        .iter()
        .map(Line::width)
        .max()
        .unwrap_or(0)
        .saturating_add(3);
    let height = lines.len() + 2;
    let rect = centered(
        area,
        u16::try_from(width).unwrap_or(u16::MAX),
        u16::try_from(height).unwrap_or(u16::MAX),
    );
    let block = Block::bordered()
        .title(Span::styled(
            " Help (Esc or ? closes) ",
            theme::focused_border(),
        ))
        .border_type(theme::FOCUSED_BORDER)
        .border_style(theme::focused_border());
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
