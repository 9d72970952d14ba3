//! The all-services tab's order, purely: a line's leading timestamp
//! ([`leading_stamp`]), the merge of several services' lines by it
//! ([`merge`]) and the backward merge of scroll-back ([`AllBack`]), which
//! reads every service's older lines a page at a time and shows only what
//! is surely newer than anything not read yet.
//!
//! Lines that arrive while following are shown in arrival order (that is
//! the order they were written in); only history (the tail read at open,
//! scroll-back) is merged. A line without a timestamp keeps its place
//! after its service's line before it (a stack trace stays under its
//! error); a service whose lines carry no timestamp at all is kept as one
//! group. Nothing is dropped. Timestamps are only read: lines are shown as
//! written.

use std::cmp::Ordering;
use std::collections::VecDeque;

use super::logtext::LinePos;
use super::logview::{LogLine, Older, TAIL_LINES};

/// A point in time read from a line: seconds since 1970-01-01 (UTC when the
/// line gave an offset, as written otherwise) and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Stamp {
    /// Seconds since the epoch.
    pub secs: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
}

/// Parse `n` ASCII digits at the start of `s`.
fn digits(s: &[u8], n: usize) -> Option<i64> {
    let part = s.get(..n)?;
    part.iter().try_fold(0i64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The timestamp a line starts with, if any: RFC 3339 / ISO 8601
/// (`2026-12-01T11:10:00Z`, `2026-12-01T11:10:00.123+02:00`) or
/// `YYYY-MM-DD HH:MM:SS` (a fraction after `.` or `,`, an offset `Z`,
/// `±HH:MM` or `±HHMM` optional), after at most one `[`. A timestamp
/// without an offset is compared as written (as if UTC).
#[must_use]
pub(crate) fn leading_stamp(text: &str) -> Option<Stamp> {
    let s = text.as_bytes();
    let s = s.strip_prefix(b"[").unwrap_or(s);
    let (year, month, day) = (
        digits(s, 4)?,
        digits(s.get(5..)?, 2)?,
        digits(s.get(8..)?, 2)?,
    );
    let (hour, minute, second) = (
        digits(s.get(11..)?, 2)?,
        digits(s.get(14..)?, 2)?,
        digits(s.get(17..)?, 2)?,
    );
    let seps = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| s[i] != c) || !matches!(s[10], b'T' | b't' | b' ') {
        return None;
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix(b".").or_else(|| rest.strip_prefix(b",")) {
        let n = frac.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        for (i, &b) in frac[..n.min(9)].iter().enumerate() {
            nanos += u32::from(b - b'0') * 10u32.pow(8 - u32::try_from(i).unwrap_or(8));
        }
        rest = &frac[n..];
    }
    let offset = match rest.first() {
        Some(b'Z' | b'z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let h = digits(&rest[1..], 2)?;
            let tail = &rest[3..];
            let m = digits(tail.strip_prefix(b":").unwrap_or(tail), 2)?;
            let secs = h * 3600 + m * 60;
            if sign == b'+' { secs } else { -secs }
        }
        _ => 0,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(Stamp { secs, nanos })
}

/// The key each line is merged by: the latest timestamp seen so far in
/// `lines` (a line without one keeps its place after the line before it;
/// lines before the first timestamp take that first one). `None` for all
/// when no line carries a timestamp. Never decreasing.
#[must_use]
pub(crate) fn keys(lines: &[LogLine]) -> Vec<Option<Stamp>> {
    let first = lines.iter().find_map(|l| leading_stamp(&l.text));
    let mut last = first;
    lines
        .iter()
        .map(|l| {
            if let Some(stamp) = leading_stamp(&l.text) {
                last = last.max(Some(stamp));
            }
            last
        })
        .collect()
}

/// Merge several services' lines (each oldest first) into one sequence by
/// their [`keys`]: each service's own order is kept, a service without
/// timestamps comes first as one group, ties go to the lower index.
#[must_use]
pub(crate) fn merge(pages: Vec<Vec<LogLine>>) -> Vec<LogLine> {
    let mut queues: Vec<VecDeque<(Option<Stamp>, LogLine)>> = pages
        .into_iter()
        .map(|page| keys(&page).into_iter().zip(page).collect())
        .collect();
    let mut out = Vec::with_capacity(queues.iter().map(VecDeque::len).sum());
    loop {
        let next = queues
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.front().map(|(k, _)| (i, *k)))
            .min_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let Some((index, _)) = next else {
            return out;
        };
        if let Some((_, line)) = queues[index].pop_front() {
            out.push(line);
        }
    }
}

/// How many older lines are read per service in one all-services
/// scroll-back step: a share of [`TAIL_LINES`], at least 64.
#[must_use]
pub(crate) fn per_service(services: usize) -> usize {
    (TAIL_LINES / services.max(1)).max(64)
}

/// One service's part of the all-services scroll-back.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Back {
    /// Lines read but not shown yet (older than every line shown of this
    /// service, perhaps older than lines of others not read yet), oldest
    /// first.
    stash: Vec<LogLine>,
    /// Where this service's lines before the stash are.
    older: Older,
}

/// The all-services tab's scroll-back: per service, what was read and not
/// shown yet, and where to read on. A step ([`AllBack::step`]) takes the
/// pages read for the services in [`AllBack::reads`] and gives out the
/// lines to put in front of the tab, merged: only those no older than the
/// oldest line read of every service that has more (so a line not read yet
/// can never belong after one shown); the rest wait for the next step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct AllBack {
    services: Vec<Back>,
}

impl AllBack {
    /// A service more, whose older lines are at `older` (a service that
    /// appeared while following: [`Older::Start`]).
    pub(crate) fn add_service(&mut self, older: Older) {
        self.services.push(Back {
            stash: Vec::new(),
            older,
        });
    }

    /// Whether any older line is left, read or not.
    #[must_use]
    pub(crate) fn more(&self) -> bool {
        self.services
            .iter()
            .any(|b| !b.stash.is_empty() || matches!(b.older, Older::Before(_)))
    }

    /// What to read for the next step: the services with nothing waiting
    /// and more in their files, and before where.
    #[must_use]
    pub(crate) fn reads(&self) -> Vec<(u16, LinePos)> {
        self.services
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match b.older {
                Older::Before(pos) if b.stash.is_empty() => Some((u16::try_from(i).ok()?, pos)),
                _ => None,
            })
            .collect()
    }

    /// One step: `read` the pages read (service, lines oldest first, where
    /// to go on from); returns the lines to put in front, oldest first.
    pub(crate) fn step(&mut self, read: Vec<(u16, Vec<LogLine>, Older)>) -> Vec<LogLine> {
        for (service, mut lines, older) in read {
            if let Some(back) = self.services.get_mut(usize::from(service)) {
                lines.append(&mut back.stash);
                back.stash = lines;
                back.older = older;
            }
        }
        let pages: Vec<(Vec<Option<Stamp>>, bool)> = self
            .services
            .iter()
            .map(|b| (keys(&b.stash), matches!(b.older, Older::Before(_))))
            .collect();
        // The newest of the oldest keys of services with more to read.
        let horizon = pages
            .iter()
            .filter(|(_, more)| *more)
            .filter_map(|(keys, _)| keys.first().copied().flatten())
            .max();
        let mut out = Vec::new();
        for (back, (keys, _)) in self.services.iter_mut().zip(&pages) {
            let mut cut = keys.len();
            if let Some(horizon) = horizon {
                while cut > 0 && keys[cut - 1].is_none_or(|k| k.cmp(&horizon) != Ordering::Less) {
                    cut -= 1;
                }
            } else {
                cut = 0;
            }
            out.push(back.stash.split_off(cut));
        }
        merge(out)
    }

    /// The tab dropped `dropped` (its oldest lines) to make room; `kept`
    /// is what it holds now. A service that lost lines is read again from
    /// its oldest line kept (or from its last line dropped, which waits).
    pub(crate) fn trimmed(&mut self, dropped: &[LogLine], kept: &VecDeque<LogLine>) {
        for (index, back) in self.services.iter_mut().enumerate() {
            let Some(last) = dropped
                .iter()
                .rev()
                .find(|l| usize::from(l.service) == index)
            else {
                continue;
            };
            match kept.iter().find(|l| usize::from(l.service) == index) {
                Some(first) => {
                    back.stash.clear();
                    back.older = Older::Before(first.at);
                }
                None => {
                    back.stash = vec![last.clone()];
                    back.older = Older::Before(last.at);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::logtext::FileKey;

    fn line(service: u16, text: &str, offset: u64) -> LogLine {
        LogLine {
            text: text.into(),
            service,
            at: LinePos {
                file: FileKey {
                    dev: 1,
                    ino: u64::from(service),
                },
                offset,
            },
            cont: false,
            cut: false,
        }
    }

    fn texts(lines: &[LogLine]) -> Vec<&str> {
        lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn timestamps_as_operators_write_them() {
        let at = |s| leading_stamp(s).map(|t: Stamp| (t.secs, t.nanos));
        assert_eq!(at("1970-01-01T00:00:00Z x"), Some((0, 0)));
        assert_eq!(at("2026-12-01T11:10:00Z GET"), Some((1_796_123_400, 0)));
        assert_eq!(at("2026-12-01 11:10:00 GET"), Some((1_796_123_400, 0)));
        assert_eq!(
            at("[2026-12-01T13:10:00.5+02:00] x"),
            Some((1_796_123_400, 500_000_000))
        );
        assert_eq!(
            at("2026-12-01T11:10:00,123456789123-0130"),
            Some((1_796_128_800, 123_456_789))
        );
        assert_eq!(at("2026-12-01T11:10"), None);
        assert_eq!(at("2026-13-01T11:10:00Z"), None);
        assert_eq!(at("2026-12-01X11:10:00Z"), None);
        assert_eq!(at("GET 2026-12-01T11:10:00Z"), None);
        assert_eq!(at("2026-12-01T11:10:00."), None);
        assert_eq!(at("２０２６-12-01T11:10:00Z"), None);
    }

    #[test]
    fn merge_interleaves_by_time_and_keeps_each_service_order() {
        let web = vec![
            line(0, "2026-12-01T10:00:01Z a", 0),
            line(0, "  at trace", 1),
            line(0, "2026-12-01T10:00:03Z c", 2),
        ];
        let api = vec![
            line(1, "2026-12-01 10:00:02 b", 0),
            line(1, "2026-12-01 10:00:04 d", 1),
        ];
        let plain = vec![line(2, "no time 1", 0), line(2, "no time 2", 1)];
        assert_eq!(
            texts(&merge(vec![web, api, plain])),
            [
                "no time 1",
                "no time 2",
                "2026-12-01T10:00:01Z a",
                "  at trace",
                "2026-12-01 10:00:02 b",
                "2026-12-01T10:00:03Z c",
                "2026-12-01 10:00:04 d"
            ]
        );
    }

    #[test]
    fn back_steps_show_only_what_is_surely_newer() {
        let stamp = |s: u16, t: u32| line(s, &format!("2026-12-01T10:00:{t:02}Z s{s}"), t.into());
        let mut back = AllBack::default();
        back.add_service(Older::Start);
        back.add_service(Older::Start);
        // Open: web 10..=19 (more before), api 15..=19 (its whole file).
        let web: Vec<_> = (10..20).map(|t| stamp(0, t)).collect();
        let api: Vec<_> = (15..20).map(|t| stamp(1, t)).collect();
        let before = web[0].at;
        let shown = back.step(vec![
            (0, web, Older::Before(before)),
            (1, api, Older::Start),
        ]);
        assert_eq!(shown.len(), 15);
        assert_eq!(shown[0].text, "2026-12-01T10:00:10Z s0");
        assert_eq!(back.reads(), vec![(0, before)]);
        // Web's older page 0..=9 is then all older than api's first line.
        let older: Vec<_> = (0..10).map(|t| stamp(0, t)).collect();
        let shown = back.step(vec![(0, older, Older::Start)]);
        assert_eq!(shown.len(), 10);
        assert!(!back.more());
        // A service with more before holds back what may interleave.
        let mut back = AllBack::default();
        back.add_service(Older::Start);
        back.add_service(Older::Start);
        let web: Vec<_> = (0..20).map(|t| stamp(0, t)).collect();
        let api: Vec<_> = (15..20).map(|t| stamp(1, t)).collect();
        let pos = api[0].at;
        let shown = back.step(vec![(0, web, Older::Start), (1, api, Older::Before(pos))]);
        assert_eq!(shown.len(), 10, "web 15..=19 and api 15..=19");
        assert!(back.more());
        assert_eq!(back.reads(), vec![(1, pos)]);
        let shown = back.step(vec![(1, vec![stamp(1, 3)], Older::Start)]);
        assert_eq!(
            texts(&shown)[..5],
            [
                "2026-12-01T10:00:00Z s0",
                "2026-12-01T10:00:01Z s0",
                "2026-12-01T10:00:02Z s0",
                "2026-12-01T10:00:03Z s0",
                "2026-12-01T10:00:03Z s1"
            ]
        );
        assert_eq!(shown.len(), 16);
        assert!(!back.more());
    }

    #[test]
    fn trimming_reads_again_from_the_oldest_kept() {
        let mut back = AllBack::default();
        back.add_service(Older::Start);
        back.add_service(Older::Start);
        let dropped = vec![line(0, "a", 0), line(1, "b", 0), line(0, "c", 5)];
        let kept: VecDeque<_> = vec![line(0, "d", 9)].into();
        back.trimmed(&dropped, &kept);
        assert_eq!(back.reads(), vec![(0, kept[0].at)]);
        assert!(back.more());
        assert_eq!(texts(&back.step(Vec::new())), ["b"]);
    }
}
