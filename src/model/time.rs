//! Human countdowns over unix seconds. Pure: `now` is always a parameter, so
//! a test fixes the clock instead of sleeping.

/// A span of seconds in the two largest units, the second zero-padded:
/// `45s`, `3m 12s`, `1m 04s`, `4h 12m`, `2d 03h`, `3y 041d`.
/// Negative spans are shown as `0s` (callers pass magnitudes).
#[must_use]
pub fn span(secs: i64) -> String {
    const MINUTE: i64 = 60;
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    const YEAR: i64 = 365 * DAY;
    let secs = secs.max(0);
    if secs < MINUTE {
        format!("{secs}s")
    } else if secs < HOUR {
        format!("{}m {:02}s", secs / MINUTE, secs % MINUTE)
    } else if secs < DAY {
        format!("{}h {:02}m", secs / HOUR, (secs % HOUR) / MINUTE)
    } else if secs < YEAR {
        format!("{}d {:02}h", secs / DAY, (secs % DAY) / HOUR)
    } else {
        format!("{}y {:03}d", secs / YEAR, (secs % YEAR) / DAY)
    }
}

/// A lease countdown at `now`: `4h 12m left`, or `expired 3m 12s ago` once
/// `expires_at <= now` (stackless §6). Saturating: hostile values such as
/// `i64::MIN` or `i64::MAX` never overflow.
#[must_use]
pub fn lease_text(expires_at: i64, now: i64) -> String {
    if expires_at > now {
        format!("{} left", span(expires_at.saturating_sub(now)))
    } else {
        format!("expired {} ago", span(now.saturating_sub(expires_at)))
    }
}

/// A reap-backoff countdown at `now`: `retry in 1m 04s` while
/// `next_retry_at > now`, else `due` (the reaper retries on its next tick).
#[must_use]
pub fn retry_text(next_retry_at: i64, now: i64) -> String {
    if next_retry_at > now {
        format!("retry in {}", span(next_retry_at.saturating_sub(now)))
    } else {
        "due".to_owned()
    }
}

/// How long ago `at` was: `3m 12s ago` (`in the future` when `at > now`,
/// which a wall-clock jump can cause).
#[must_use]
pub fn ago(at: i64, now: i64) -> String {
    if at > now {
        "in the future".to_owned()
    } else {
        format!("{} ago", span(now.saturating_sub(at)))
    }
}

/// Seconds since the unix epoch from the system clock. The only clock read in
/// `model`; everything else takes `now` as a parameter.
#[must_use]
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        // 0 outside test builds (feature `fault-injection`).
        .saturating_add(clock_offset())
}

/// The environment variable shifting this process's wall clock (seconds,
/// may be negative): a fault the end-to-end tests inject (`crate::fault`),
/// a clock already wrong at start-up as `faketime` makes one.
#[cfg(feature = "fault-injection")]
pub const CLOCK_ENV: &str = "STACKLESS_TUI_CLOCK_OFFSET";

/// Seconds added to the wall clock: `STACKLESS_TUI_CLOCK_OFFSET`, read once
/// (0 when unset or not a number). Only in test builds (the
/// `fault-injection` feature).
#[cfg(feature = "fault-injection")]
pub fn clock_offset() -> i64 {
    use std::sync::OnceLock;
    static OFFSET: OnceLock<i64> = OnceLock::new();
    *OFFSET.get_or_init(|| {
        std::env::var(CLOCK_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    })
}

/// Fault injection is compiled out: the wall clock is the system's.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
#[must_use]
pub const fn clock_offset() -> i64 {
    0
}

/// `HH:MM:SS`, the time of day of `at` (unix seconds) in `zone` (the
/// console's display zone: local, `TZ` honoured, or UTC with `--utc`).
/// Outside what jiff can show, the UTC time of day (`-1` is `23:59:59`).
#[must_use]
pub fn clock_in(at: i64, zone: &jiff::tz::TimeZone) -> String {
    jiff::Timestamp::from_second(at).map_or_else(
        |_| {
            let secs = at.rem_euclid(86_400);
            format!(
                "{:02}:{:02}:{:02}",
                secs / 3600,
                (secs % 3600) / 60,
                secs % 60
            )
        },
        |ts| ts.to_zoned(zone.clone()).strftime("%H:%M:%S").to_string(),
    )
}

/// How `zone` is named at `at`: its abbreviation (`CET`, `CEST`, `UTC`),
/// else its offset (`+05:30`).
#[must_use]
pub fn zone_label(at: i64, zone: &jiff::tz::TimeZone) -> String {
    let ts = jiff::Timestamp::from_second(at).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let info = zone.to_offset_info(ts);
    let abbreviation = info.abbreviation();
    if abbreviation.is_empty() {
        info.offset().to_string()
    } else {
        abbreviation.to_owned()
    }
}

/// A moment as the console shows it, in `zone` (the display zone: local,
/// `TZ` honoured, or UTC with `--utc`; the one function every absolute
/// time on screen goes through): `2026-11-29 19:28:06 IST` (the zone's
/// abbreviation, else its offset: `2026-11-29 19:28:06 +05:30`) where the
/// zone is not UTC at that moment, else RFC 3339 (`2026-11-29T13:58:06Z`,
/// the `Z` marking UTC). `@<at>` outside what RFC 3339 can show.
#[must_use]
pub fn stamp(at: i64, zone: &jiff::tz::TimeZone) -> String {
    let Some(utc) = rfc3339(at) else {
        return format!("@{at}");
    };
    let Ok(ts) = jiff::Timestamp::from_second(at) else {
        return utc;
    };
    if zone.to_offset(ts).seconds() == 0 {
        return utc;
    }
    format!(
        "{} {}",
        ts.to_zoned(zone.clone()).strftime("%Y-%m-%d %H:%M:%S"),
        zone_label(at, zone)
    )
}

/// `text` with each RFC 3339 UTC time in it (`2026-12-01T14:33:31Z`, as
/// the reaper writes them into Activity details and the audit trail:
/// `until …`, `retry at …`) shown in `zone` as [`stamp`] shows it;
/// unchanged (borrowed) when `zone` is UTC at those times or there are
/// none.
#[must_use]
pub fn restamp<'a>(text: &'a str, zone: &jiff::tz::TimeZone) -> std::borrow::Cow<'a, str> {
    replace_stamps(text, |at| stamp(at, zone))
}

/// `text` with each RFC 3339 UTC time in it (`retry at
/// 2026-12-01T21:18:10Z`) shown as a clock time in `zone`, as a pane of
/// clock times shows its own (an Activity line never mixes
/// `21:14:13` with `2026-12-01T21:18:10Z`): `21:18:10` on the day of `on`
/// (unix seconds: the line's own time) in `zone`, else with its day
/// before it (`Dec 02 21:18:10`). Unchanged (borrowed) when there are none.
#[must_use]
pub fn reclock<'a>(text: &'a str, on: i64, zone: &jiff::tz::TimeZone) -> std::borrow::Cow<'a, str> {
    let day = |at: i64| {
        jiff::Timestamp::from_second(at)
            .ok()
            .map(|ts| ts.to_zoned(zone.clone()).date())
    };
    let today = day(on);
    replace_stamps(text, |at| {
        if day(at).is_some() && day(at) == today {
            clock_in(at, zone)
        } else {
            jiff::Timestamp::from_second(at).map_or_else(
                |_| format!("@{at}"),
                |ts| {
                    ts.to_zoned(zone.clone())
                        .strftime("%b %d %H:%M:%S")
                        .to_string()
                },
            )
        }
    })
}

/// `text` with each RFC 3339 UTC time in it replaced by `show` of its unix
/// seconds; borrowed when nothing changed.
fn replace_stamps(text: &str, show: impl Fn(i64) -> String) -> std::borrow::Cow<'_, str> {
    const LEN: usize = "2026-12-01T14:33:31Z".len();
    let bytes = text.as_bytes();
    let is_stamp = |at: usize| {
        let Some(b) = bytes.get(at..at + LEN) else {
            return false;
        };
        let shape = b"dddd-dd-ddTdd:dd:ddZ";
        b.iter().zip(shape).all(|(c, s)| {
            if *s == b'd' {
                c.is_ascii_digit()
            } else {
                c == s
            }
        })
    };
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while at + LEN <= bytes.len() {
        if is_stamp(at)
            && let Ok(ts) = text[at..at + LEN].parse::<jiff::Timestamp>()
        {
            let shown = show(ts.as_second());
            if shown != text[at..at + LEN] {
                out.push_str(&text[copied..at]);
                out.push_str(&shown);
                copied = at + LEN;
            }
            at += LEN;
        } else {
            at += 1;
        }
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// The first unix second RFC 3339 cannot show (`10000-01-01T00:00:00Z`).
pub const RFC3339_END: i64 = 253_402_300_800;

/// Unix seconds `at` as RFC 3339 in UTC, to the second:
/// `2026-11-29T13:58:06Z`. `None` outside what RFC 3339 can show (before
/// 1970, or from [`RFC3339_END`] on): each caller picks its own fallback
/// (the detail view shows `@<at>`, the audit trail the raw number).
#[must_use]
pub fn rfc3339(at: i64) -> Option<String> {
    u64::try_from(at)
        .ok()
        .filter(|&secs| secs < RFC3339_END.unsigned_abs())
        .map(|secs| {
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
            )
            .to_string()
        })
}

/// RFC 3339 (UTC, seconds) for a unix-seconds time, as [`rfc3339`]; the
/// raw number when it is out of the printable range (the audit trail's and
/// the reaper's Activity lines: a time is always said).
#[must_use]
pub fn rfc3339_or_raw(at: i64) -> String {
    rfc3339(at).unwrap_or_else(|| at.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_in_a_zone() {
        let cet = jiff::tz::TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        let utc = jiff::tz::TimeZone::UTC;
        // 2026-11-29T13:58:06Z: winter, CET is UTC+1.
        assert_eq!(clock_in(1_795_960_686, &cet), "14:58:06");
        assert_eq!(zone_label(1_795_960_686, &cet), "CET");
        // 2026-07-01T12:00:00Z: summer time.
        assert_eq!(clock_in(1_782_907_200, &cet), "14:00:00");
        assert_eq!(zone_label(1_782_907_200, &cet), "CEST");
        assert_eq!(clock_in(1_795_960_686, &utc), "13:58:06");
        assert_eq!(zone_label(1_795_960_686, &utc), "UTC");
        assert_eq!(clock_in(i64::MAX, &utc), clock_in(i64::MAX, &cet));
    }

    #[test]
    fn stamps_in_a_zone() {
        // POSIX TZ strings: no tz database needed (a fresh CI machine may
        // have no /usr/share/zoneinfo).
        let ist = jiff::tz::TimeZone::posix("IST-5:30").unwrap();
        let cet = jiff::tz::TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        let odd = jiff::tz::TimeZone::fixed(jiff::tz::offset(-3));
        let utc = jiff::tz::TimeZone::UTC;
        assert_eq!(stamp(1_795_960_686, &ist), "2026-11-29 19:28:06 IST");
        assert_eq!(stamp(1_795_960_686, &cet), "2026-11-29 14:58:06 CET");
        assert_eq!(stamp(1_782_907_200, &cet), "2026-07-01 14:00:00 CEST");
        assert_eq!(stamp(1_795_960_686, &odd), "2026-11-29 10:58:06 -03");
        assert_eq!(stamp(1_795_960_686, &utc), "2026-11-29T13:58:06Z");
        assert_eq!(stamp(-1, &ist), "@-1");
        assert_eq!(stamp(i64::MAX, &ist), format!("@{}", i64::MAX));
    }

    /// An Activity detail's UTC times are shown as clock times.
    #[test]
    fn reclocks_utc_times_in_text() {
        let ist = jiff::tz::TimeZone::posix("IST-5:30").unwrap();
        let utc = jiff::tz::TimeZone::UTC;
        let text = "until 2026-12-01T21:18:10Z (attempt 2, retry at 2026-12-02T00:00:03Z)";
        // 2026-12-01T21:14:13Z.
        let on = 1_796_159_653;
        assert_eq!(
            reclock(text, on, &utc),
            "until 21:18:10 (attempt 2, retry at Dec 02 00:00:03)"
        );
        assert_eq!(
            reclock(text, on, &ist),
            "until 02:48:10 (attempt 2, retry at 05:30:03)"
        );
        // Six hours before: 20:44:13 IST on Dec 01.
        assert_eq!(
            reclock(text, on - 6 * 3600, &ist),
            "until Dec 02 02:48:10 (attempt 2, retry at Dec 02 05:30:03)"
        );
        assert!(matches!(
            reclock("no time here", on, &utc),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn restamps_utc_times_in_text() {
        let ist = jiff::tz::TimeZone::posix("IST-5:30").unwrap();
        let utc = jiff::tz::TimeZone::UTC;
        let text = "until 2026-12-01T14:33:31Z (attempt 2, retry at 2026-12-01T14:34:03Z)";
        assert_eq!(
            restamp(text, &ist),
            "until 2026-12-01 20:03:31 IST (attempt 2, retry at 2026-12-01 20:04:03 IST)"
        );
        assert!(matches!(restamp(text, &utc), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            restamp("no time here: 2026-12-01", &ist),
            "no time here: 2026-12-01"
        );
        assert_eq!(
            restamp("é 2026-13-01T14:33:31Z ü", &ist),
            "é 2026-13-01T14:33:31Z ü"
        );
    }

    #[test]
    fn spans() {
        assert_eq!(span(0), "0s");
        assert_eq!(span(45), "45s");
        assert_eq!(span(64), "1m 04s");
        assert_eq!(span(192), "3m 12s");
        assert_eq!(span(4 * 3600 + 12 * 60 + 59), "4h 12m");
        assert_eq!(span(2 * 86400 + 3 * 3600), "2d 03h");
        assert_eq!(span(8 * 86400), "8d 00h");
        assert_eq!(span(365 * 86400 * 3 + 41 * 86400), "3y 041d");
        assert_eq!(span(-5), "0s");
    }

    #[test]
    fn lease_countdowns() {
        assert_eq!(lease_text(1000 + 4 * 3600 + 12 * 60, 1000), "4h 12m left");
        assert_eq!(lease_text(1000, 1000 + 192), "expired 3m 12s ago");
        assert_eq!(lease_text(1000, 1000), "expired 0s ago");
    }

    #[test]
    fn retry_countdowns() {
        assert_eq!(retry_text(1064, 1000), "retry in 1m 04s");
        assert_eq!(retry_text(1000, 1000), "due");
        assert_eq!(retry_text(900, 1000), "due");
    }

    #[test]
    fn rfc3339_in_range_only() {
        assert_eq!(rfc3339(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(
            rfc3339(1_795_960_686).as_deref(),
            Some("2026-11-29T13:58:06Z")
        );
        assert_eq!(
            rfc3339(RFC3339_END - 1).as_deref(),
            Some("9999-12-31T23:59:59Z")
        );
        assert_eq!(rfc3339(RFC3339_END), None);
        assert_eq!(rfc3339(-1), None);
        assert_eq!(rfc3339(i64::MIN), None);
    }

    #[test]
    fn hostile_extremes_do_not_overflow() {
        assert_eq!(
            lease_text(i64::MIN, i64::MAX),
            "expired 292471208677y 195d ago"
        );
        assert_eq!(lease_text(i64::MAX, 0), "292471208677y 195d left");
        assert_eq!(lease_text(0, 1_795_960_686), "expired 56y 346d ago");
        assert_eq!(
            retry_text(i64::MAX, i64::MIN),
            "retry in 292471208677y 195d"
        );
        assert_eq!(ago(10, 5), "in the future");
    }
}
