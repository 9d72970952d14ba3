//! The Supervisor pane: the helper supervisor's events, `HH:MM:SS text`,
//! newest last, following the bottom unless the operator scrolled up. A
//! back-off that is the newest entry counts down live (`restart in 3s`).
//! While focused, the selected line (j/k, a click; the newest while
//! following) is drawn highlighted: Enter and `e` open it whole.

use std::fmt::Write as _;
use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::{focused, log_window, pane_block, title};
use crate::event::SupervisorKind;
use crate::model::time;
use crate::ui::app::{App, Focus};
use crate::ui::theme;
use crate::ui::view;
use crate::ui::view::HelperState;

/// Shown before any event when no helper is configured.
pub const NO_HELPER: &str = "no helper configured (--helper)";
/// Shown before any event when a helper is configured.
pub const WAITING: &str = "waiting for the supervisor…";

/// Draw the Supervisor pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let is_focused = focused(app, Focus::Supervisor);
    let log = app.supervisor();
    let entries = log.entries();
    let rows = usize::from(area.height.saturating_sub(2));
    let mut viewport = app.viewport.get();
    viewport.supervisor_rows = rows;
    app.viewport.set(viewport);
    let (start, end) = log_window(entries.len(), rows, log.scroll_up(), log.selected_up());
    let mut suffix = match entries.back() {
        Some(newest) if newest.entry.kind == SupervisorKind::BackingOff => newest
            .entry
            .until
            .map(|until| countdown(left(until, app.now())))
            .map(|c| c.trim().to_owned())
            .unwrap_or_default(),
        _ => String::new(),
    };
    if end < entries.len() {
        if !suffix.is_empty() {
            suffix.push_str(" · ");
        }
        let _ = write!(suffix, "↓ {} newer (End follows)", entries.len() - end);
    }
    let name = format!("Supervisor ({})", app.zone_label());
    let block = pane_block(title(&name, &suffix, is_focused), is_focused);
    if entries.is_empty() {
        let text = match app.helper() {
            HelperState::NotConfigured => NO_HELPER,
            HelperState::Configured => WAITING,
        };
        super::render_empty(frame, area, block, text);
        return;
    }
    let width = usize::from(area.width.saturating_sub(2));
    let lines: Vec<Line> = entries
        .range(start..end)
        .enumerate()
        .map(|(i, logged)| {
            let note = &logged.entry;
            let mut text = view::supervisor_line(note, logged.count, app.zone());
            let newest = start + i + 1 == entries.len();
            if newest
                && note.kind == SupervisorKind::BackingOff
                && let Some(until) = note.until
            {
                text.push_str(&countdown(left(until, app.now())));
            }
            let selected = is_focused && start + i + 1 + log.selected_up() == entries.len();
            super::log_line(&text, width, theme::supervisor(note.kind), selected)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// What is left of a back-off due at `until` at `now` (both unix seconds,
/// the time every event is handled at): none once it is due.
fn left(until: i64, now: i64) -> Duration {
    Duration::from_secs(u64::try_from(until.saturating_sub(now)).unwrap_or(0))
}

/// ` (restart in 3s)` for a back-off with `left` to go (rounded up), or
/// ` (restarting)` once it ran out.
#[must_use]
pub fn countdown(left: Duration) -> String {
    if left.is_zero() {
        return " (restarting)".to_owned();
    }
    let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    format!(
        " (restart in {})",
        time::span(i64::try_from(secs).unwrap_or(i64::MAX))
    )
}
