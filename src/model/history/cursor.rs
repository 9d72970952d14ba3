//! The replay's time cursor (docs/history.md, "Replay"): where a seek key
//! lands and what the header says of the cursor. Pure: the recording's
//! change times and the wall clock are parameters.

/// How far `{` and `}` move the cursor, in seconds.
pub const STEP_SECS: i64 = 60;

/// What the replay's keys ask of the cursor (the key table's `[`, `]`,
/// `{`, `}`, `>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seek {
    /// `[`: the last recorded change before the cursor.
    PreviousChange,
    /// `]`: the first recorded change after the cursor.
    NextChange,
    /// `{`: [`STEP_SECS`] back.
    MinuteBack,
    /// `}`: [`STEP_SECS`] forward.
    MinuteForward,
    /// `>`: the recording's last line (the live end).
    Live,
    /// `:at TIME` (`t`): this time (unix seconds), inside the recording
    /// or not (outside it, the panes say `not recorded`).
    To(i64),
}

/// The recording's span and the times of its changes, as the replay's
/// reader knows them (unix seconds; `changes` ascending: each `synced`
/// that applied rows, each `reaper` and banner line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Span {
    /// The first recorded time.
    pub first: i64,
    /// The last recorded time.
    pub last: i64,
    /// The times something changed, ascending.
    pub changes: Vec<i64>,
}

/// Where `seek` takes a cursor at `at` in `span`: kept inside the
/// recording (a step past either end stops there). With no change before
/// (after) the cursor, `[` (`]`) goes to the recording's first (last)
/// time.
#[must_use]
pub fn target(seek: Seek, at: i64, span: &Span) -> i64 {
    let to = match seek {
        Seek::PreviousChange => span
            .changes
            .iter()
            .rev()
            .find(|&&c| c < at)
            .copied()
            .unwrap_or(span.first),
        Seek::NextChange => span
            .changes
            .iter()
            .find(|&&c| c > at)
            .copied()
            .unwrap_or(span.last),
        Seek::MinuteBack => at.saturating_sub(STEP_SECS),
        Seek::MinuteForward => at.saturating_add(STEP_SECS),
        Seek::Live => span.last,
        Seek::To(t) => return t,
    };
    to.clamp(span.first, span.last.max(span.first))
}

/// A time typed on `:at` (`t`): `03:12` or `03:12:07` (that time of day
/// on the cursor's date, in `zone`), else what `snapshot --at` takes
/// ([`super::parse_time`]: RFC 3339, unix seconds, `10m ago` before
/// `now`, the wall clock).
///
/// # Errors
/// [`super::TimeError`] for anything else.
pub fn parse_cursor(
    text: &str,
    now: i64,
    cursor: i64,
    zone: &jiff::tz::TimeZone,
) -> Result<i64, super::TimeError> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    let numbers: Option<Vec<i8>> = parts
        .iter()
        .map(|p| {
            (!p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect();
    match numbers.as_deref() {
        Some(&[hour, minute]) => of_day(cursor, zone, hour, minute, 0),
        Some(&[hour, minute, second]) => of_day(cursor, zone, hour, minute, second),
        _ => super::parse_time(text, now).ok(),
    }
    .ok_or_else(|| super::TimeError(text.to_owned()))
}

/// A time typed on the command line (`replay --at`, `snapshot --at`):
/// what `t` takes ([`parse_cursor`]), a time of day (`03:12`,
/// `10:40:10`) being the latest one at or before `now` (today's, else
/// yesterday's), in `zone`. One parser for the key and the flags.
///
/// # Errors
/// [`super::TimeError`] for anything else.
pub fn parse_at(text: &str, now: i64, zone: &jiff::tz::TimeZone) -> Result<i64, super::TimeError> {
    let at = parse_cursor(text, now, now, zone)?;
    if at <= now {
        return Ok(at);
    }
    parse_cursor(text, now, now.saturating_sub(86_400), zone)
}

/// `hour:minute:second` on the date `cursor` falls on in `zone`.
fn of_day(cursor: i64, zone: &jiff::tz::TimeZone, hour: i8, minute: i8, second: i8) -> Option<i64> {
    let date = jiff::Timestamp::from_second(cursor)
        .ok()?
        .to_zoned(zone.clone())
        .date();
    let time = jiff::civil::Time::new(hour, minute, second, 0).ok()?;
    let zoned = date.to_datetime(time).to_zoned(zone.clone()).ok()?;
    Some(zoned.timestamp().as_second())
}

/// The header's cursor: `replay 03:12:07, 5h 48m ago` (the time in
/// `zone`, as the console shows times; how long before `now`), and
/// `: not recorded` after it when nothing was recorded then (the panes
/// are empty: no row is invented).
#[must_use]
pub fn cursor_words(at: i64, now: i64, zone: &jiff::tz::TimeZone, recorded: bool) -> String {
    let clock = crate::model::time::clock_in(at, zone);
    let ago = if now > at {
        format!("{} ago", super::span_words(now - at))
    } else {
        "now".to_owned()
    };
    let gap = if recorded { "" } else { ": not recorded" };
    format!("replay {clock}, {ago}{gap}")
}

/// The recording at the cursor, as the replay's reader sends it to the
/// one render loop.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The cursor (unix seconds).
    pub at: i64,
    /// The store as recorded then; `None`: nothing recorded then (before,
    /// after, in a gap), said as `not recorded`.
    pub snapshot: Option<std::sync::Arc<crate::model::Snapshot>>,
    /// Why nothing is shown, when `snapshot` is `None`.
    pub why: Option<String>,
    /// Who reaps, as the recorded `reaper` line said it then.
    pub reaper: Option<String>,
    /// The recorded banners up then, their texts.
    pub banners: Vec<String>,
    /// The recorded Activity lines up to the cursor (oldest first; at
    /// most the segment's).
    pub activity: Vec<crate::model::activity::Activity>,
    /// The recording's span and changes.
    pub span: Span,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span() -> Span {
        Span {
            first: 1_000,
            last: 5_000,
            changes: vec![1_000, 1_500, 2_000, 4_000],
        }
    }

    #[test]
    fn changes_step_to_the_neighbouring_change_and_stop_at_the_ends() {
        let span = span();
        assert_eq!(target(Seek::PreviousChange, 2_000, &span), 1_500);
        assert_eq!(target(Seek::PreviousChange, 1_800, &span), 1_500);
        assert_eq!(target(Seek::NextChange, 2_000, &span), 4_000);
        assert_eq!(target(Seek::NextChange, 4_000, &span), 5_000);
        assert_eq!(target(Seek::PreviousChange, 1_000, &span), 1_000);
    }

    #[test]
    fn minutes_and_live_stay_inside_the_recording() {
        let span = span();
        assert_eq!(target(Seek::MinuteBack, 2_000, &span), 1_940);
        assert_eq!(target(Seek::MinuteForward, 2_000, &span), 2_060);
        assert_eq!(target(Seek::MinuteBack, 1_030, &span), 1_000);
        assert_eq!(target(Seek::MinuteForward, 4_990, &span), 5_000);
        assert_eq!(target(Seek::Live, 2_000, &span), 5_000);
    }

    #[test]
    fn a_typed_time_is_a_time_of_day_on_the_cursors_date_or_what_snapshot_at_takes() {
        let utc = jiff::tz::TimeZone::UTC;
        // 2025-12-02T06:00:00Z.
        let cursor = 1_764_655_200;
        assert_eq!(
            parse_cursor("03:12", cursor, cursor, &utc),
            Ok(1_764_645_120)
        );
        assert_eq!(
            parse_cursor("03:12:07", cursor, cursor, &utc),
            Ok(1_764_645_127)
        );
        assert_eq!(
            parse_cursor("10m ago", cursor + 60, cursor, &utc),
            Ok(cursor - 540)
        );
        assert_eq!(
            parse_cursor("2025-12-02T03:12:07Z", cursor, cursor, &utc),
            Ok(1_764_645_127)
        );
        assert!(parse_cursor("25:00", cursor, cursor, &utc).is_err());
        assert!(parse_cursor("soon", cursor, cursor, &utc).is_err());
        assert_eq!(target(Seek::To(9_999), 2_000, &span()), 9_999);
    }

    #[test]
    fn the_cursor_says_its_time_in_the_zone_and_how_long_ago() {
        let utc = jiff::tz::TimeZone::UTC;
        // 1970-01-02T03:12:07Z, 5h 48m before now.
        let at = 86_400 + 3 * 3_600 + 12 * 60 + 7;
        let now = at + 5 * 3_600 + 48 * 60;
        assert_eq!(
            cursor_words(at, now, &utc, true),
            "replay 03:12:07, 5h 48m ago"
        );
        assert_eq!(
            cursor_words(at, now, &utc, false),
            "replay 03:12:07, 5h 48m ago: not recorded"
        );
        let cet = jiff::tz::TimeZone::fixed(jiff::tz::offset(1));
        assert_eq!(cursor_words(at, at, &cet, true), "replay 04:12:07, now");
    }
}
