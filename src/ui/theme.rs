//! Styles, in one place. Colour is never the only signal: every state also
//! shows as text (`expired … ago`, `tombstoned`, `stale: pid gone`), as a
//! mark in the Instances state column (`✗ † - L F ? … !`), or as a
//! modifier/border that survives `NO_COLOR` (with `NO_COLOR` set,
//! [`crate::ui::draw`] resets every colour after drawing; bold, dim,
//! reverse and the border shapes remain).

use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::BorderType;

/// The border of the focused pane (double lines: visible without colour).
pub(crate) const FOCUSED_BORDER: BorderType = BorderType::Double;
/// The border of every other pane.
pub(crate) const UNFOCUSED_BORDER: BorderType = BorderType::Plain;

/// Border style of the focused pane.
#[must_use]
pub(crate) fn focused_border() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// Border style of the other panes.
#[must_use]
pub(crate) fn unfocused_border() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// Table header rows (`NAME`, `SUBSTRATE`, ...).
#[must_use]
pub(crate) fn table_header() -> Style {
    Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

/// The selected row when its pane has focus.
#[must_use]
pub(crate) fn selected_focused() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

/// The selected row when its pane does not have focus.
#[must_use]
pub(crate) fn selected_unfocused() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// A tombstoned instance's whole row.
#[must_use]
pub(crate) fn tombstoned() -> Style {
    Style::new().fg(Color::DarkGray).add_modifier(Modifier::DIM)
}

/// A status this console does not know (`Status::Other`).
#[must_use]
pub(crate) fn unknown_status() -> Style {
    Style::new()
        .fg(Color::Magenta)
        .add_modifier(Modifier::ITALIC)
}

/// An expired lease.
#[must_use]
pub(crate) fn expired() -> Style {
    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
}

/// A lock whose holder is alive or on a foreign host (held).
#[must_use]
pub(crate) fn lock_held() -> Style {
    Style::new().fg(Color::Yellow)
}

/// A lock whose holder is gone or whose pid was reused (stale).
#[must_use]
pub(crate) fn lock_stale() -> Style {
    Style::new()
        .fg(Color::Magenta)
        .add_modifier(Modifier::ITALIC)
}

/// Failure counts and error text.
#[must_use]
pub(crate) fn failure() -> Style {
    Style::new().fg(Color::Red)
}

/// A backoff that is due (the reaper retries on its next tick).
#[must_use]
pub(crate) fn due() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}

/// Secondary text: timestamps, hints, empty-state messages.
#[must_use]
pub(crate) fn muted() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// The title line of the header.
#[must_use]
pub(crate) fn title() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// A warning banner (store busy, schema generation).
#[must_use]
pub(crate) fn banner_warning() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

/// An error banner (store unreadable).
#[must_use]
pub(crate) fn banner_error() -> Style {
    Style::new()
        .fg(Color::White)
        .bg(Color::Red)
        .add_modifier(Modifier::BOLD)
}

/// A key name in the footer and the help overlay.
#[must_use]
pub(crate) fn key() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// A key that is currently disabled (read-only store).
#[must_use]
pub(crate) fn key_disabled() -> Style {
    Style::new()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::CROSSED_OUT)
}

/// Activity lines, by what happened.
#[must_use]
pub(crate) fn activity(kind: crate::event::ActivityKind) -> Style {
    use crate::event::ActivityKind as K;
    match kind {
        K::Reaped | K::TornDown | K::Collected | K::Succeeded | K::Renewed | K::Verified => {
            Style::new().fg(Color::Green)
        }
        K::Failed | K::Error | K::RenewFailed | K::VerifyFailed => Style::new().fg(Color::Red),
        K::Refused | K::Aborted | K::Cancelled | K::Interrupted | K::Stopped => {
            Style::new().fg(Color::Yellow)
        }
        K::SkippedLocked | K::WaitingBackoff | K::Skipped => Style::new().fg(Color::DarkGray),
        K::Started
        | K::Queued
        | K::CancelRequested
        | K::WouldReap
        | K::WouldRun
        | K::Appeared
        | K::Tombstoned
        | K::Role
        | K::StoreCreated => Style::new().fg(Color::Cyan),
    }
}

/// Supervisor lines, by what happened.
#[must_use]
pub(crate) fn supervisor(kind: crate::event::SupervisorKind) -> Style {
    use crate::event::SupervisorKind as K;
    match kind {
        K::Started => Style::new().fg(Color::Green),
        K::SpawnFailed => Style::new().fg(Color::Red),
        K::Exited | K::BackingOff | K::Superseded | K::SupersededAnonymously | K::Evicted => {
            Style::new().fg(Color::Yellow)
        }
        K::Occupied | K::Stopped => Style::new(),
    }
}

/// A section heading in the detail view.
#[must_use]
pub(crate) fn section() -> Style {
    Style::new()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

/// Store text shown verbatim (definition TOML, JSON payloads).
#[must_use]
pub(crate) fn code() -> Style {
    Style::new().fg(Color::Gray)
}

/// The state column's marks.
#[must_use]
pub(crate) fn state_marks() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// How a flash message is styled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlashLevel {
    /// Something was done or asked for.
    Info,
    /// Refused, skipped, cancelled.
    Warning,
    /// Failed.
    Error,
}

/// A flash message in the footer, by level.
#[must_use]
pub(crate) fn flash(level: FlashLevel) -> Style {
    use FlashLevel as L;
    match level {
        L::Info => Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
        L::Warning => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        L::Error => Style::new()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD),
    }
}

/// The filter prompt (`/text▏`) in the Instances title.
#[must_use]
pub(crate) fn prompt() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

/// A search match in the logs view (without colour: reversed).
#[must_use]
pub(crate) fn search_hit() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::REVERSED)
}

/// The matches of the current search match's line (bold too).
#[must_use]
pub(crate) fn search_current() -> Style {
    search_hit().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}
