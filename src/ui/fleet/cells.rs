//! What the fleet view's panes share: a host's state as words and style,
//! a selected row's style, the first row a pane draws.

use ratatui::style::{Modifier, Style};

use crate::model::fleet::{Host, LinkState};
use crate::model::time;
use crate::ui::theme;

/// A host's state as the Hosts pane says it: `connected 3ms`,
/// `connecting`, `stale 40s` (its rows' age), `failed`.
#[must_use]
pub(crate) fn state_text(host: &Host, now: i64) -> String {
    match host.link.state {
        LinkState::Connected => match host.rtt_ms {
            Some(ms) => format!("connected {ms}ms"),
            None => "connected".to_owned(),
        },
        LinkState::Connecting if host.reconnects > 0 => {
            format!("connecting (retry {})", host.reconnects)
        }
        LinkState::Connecting => "connecting".to_owned(),
        LinkState::Stale => format!(
            "stale {}",
            time::span(now.saturating_sub(host.rows_since()))
        ),
        LinkState::Failed => "failed".to_owned(),
    }
}

/// How a host's rows and state are drawn: dim while it is not connected,
/// the failure style once it failed.
pub(super) fn host_style(host: &Host) -> Style {
    match host.link.state {
        LinkState::Connected => Style::new(),
        LinkState::Connecting | LinkState::Stale => Style::new().add_modifier(Modifier::DIM),
        LinkState::Failed => theme::failure(),
    }
}

/// The first row to draw so that `selected` shows in `height` rows.
pub(super) fn window(selected: usize, len: usize, height: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    selected.saturating_sub(height - 1).min(len - height)
}

/// A row's style: reversed when selected in the focused pane, bold when
/// selected elsewhere.
pub(super) fn row_style(selected: bool, focused: bool) -> Style {
    match (selected, focused) {
        (true, true) => theme::selected_focused(),
        (true, false) => Style::new().add_modifier(Modifier::BOLD),
        _ => Style::new(),
    }
}
