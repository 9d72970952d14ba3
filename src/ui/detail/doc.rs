//! What every section of the detail document is made of: how much of the
//! store's text is kept, how a line is drawn, how a time reads.

use crate::model::time;

/// Longest value or line kept from store text (every field, and each line
/// of the definition, payloads and errors), in characters: 64 Ki, far
/// beyond any real value, so the detail view wraps every field whole (a
/// longer one, only from a hostile store, ends in `…`).
pub const MAX_LINE_CHARS: usize = 65_536;
/// Most definition lines kept (a hostile store could hold megabytes).
pub const MAX_DEFINITION_LINES: usize = 10_000;
/// Most lines kept per checkpoint payload, `source_overrides` or
/// `last_error`.
pub const MAX_BLOCK_LINES: usize = 200;

/// `3m 12s ago`, or `in 2m 53s` for a time after `now`.
#[must_use]
pub fn relative(at: i64, now: i64) -> String {
    if at > now {
        format!("in {}", time::span(at.saturating_sub(now)))
    } else {
        time::ago(at, now)
    }
}

/// `2026-11-29 19:28:06 IST (3m 12s ago)`: [`time::stamp`] in `zone`, then
/// how long ago (or `in …`).
#[must_use]
pub fn when(at: i64, now: i64, zone: &Zone) -> String {
    format!("{} ({})", time::stamp(at, zone), relative(at, now))
}

/// The zone times are shown in.
pub type Zone = jiff::tz::TimeZone;

/// How a document line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tone {
    /// A section heading.
    Section,
    /// Ordinary text.
    Plain,
    /// Secondary text (hints, "none").
    Muted,
    /// Store text shown verbatim (TOML, JSON).
    Code,
    /// Needs attention (stale lock, backing off).
    Warning,
    /// Something is wrong (expired lease, failure, read error).
    Error,
}
