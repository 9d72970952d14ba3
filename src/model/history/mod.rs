//! The flight recorder's pure rules (docs/history.md): the recorded line
//! (a protocol line stamped with its time, and its host over a fleet), the
//! segment index and what a time falls on in it, the gaps, when a segment
//! ends, what retention drops, and the times and sizes an operator types.
//! No I/O: the files are `crate::history`'s; time is a parameter.

pub mod cursor;
pub mod reading;
pub mod replay;
pub mod timeline;

use serde::{Deserialize, Serialize};

/// The recording's format version (the header line's `format`;
/// docs/history.md, "Versions"): bumped by a change a reader of this
/// version would misread. A reader refuses a segment of a newer format.
pub const FORMAT: u32 = 1;

/// The longest quiet time inside a recording, in seconds, before the time
/// after it counts as not recorded: a live stream writes at least a
/// `heartbeat` every `heartbeat_secs` (docs/protocol.md,
/// [`crate::model::protocol::HEARTBEAT_SECS`], 5 s), and the recorder
/// flushes each second: a recording is known up to its last line plus
/// this, and no further.
pub const GAP_SECS: i64 = 5 + 1;

/// How a `reset`'s reason is said (docs/protocol.md, `reset.reason`): a
/// file rewritten in place is `restored in place`; any other reason as
/// recorded (`replaced`, `migrated`, ...).
#[must_use]
pub fn reread_words(reason: &str) -> &str {
    if reason.contains("in place") {
        "restored in place"
    } else {
        reason
    }
}

/// Whether a recorded banner's words are the recorder's resume after a
/// pause (`recording paused 13s (…); resumed: nothing recorded in
/// between`, the `recording` banner a segment opens with): the time
/// before that segment is a gap, however short.
#[must_use]
pub fn is_resume(id: &str, text: &str) -> bool {
    id == "recording" && text.starts_with("recording paused ") && text.contains("resumed:")
}

/// A new segment (with its keyframe) starts after this many seconds.
pub const SEGMENT_SECS: i64 = 15 * 60;

/// A new segment starts once the current one holds this many bytes on
/// disk after its first whole group (its header and keyframe, or the
/// first group of a recording): a keyframe or first group larger than
/// this (a store of a million instances) never makes the next frame start
/// a segment of its own.
pub const SEGMENT_BYTES: u64 = 8 * 1024 * 1024;

/// `--retain`'s default: 7 days, in seconds.
pub const RETAIN_SECS: i64 = 7 * 86_400;

/// `--max-size`'s default: 256 MB.
pub const MAX_BYTES: u64 = 256 * 1_000_000;

/// The first line of every segment (docs/history.md, "Segments").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always `history`: what tells this line from a protocol message.
    #[serde(rename = "type")]
    pub kind: String,
    /// [`FORMAT`] when written.
    pub format: u32,
    /// The store file recorded.
    pub store: String,
    /// When the segment was started (unix seconds).
    pub started: i64,
    /// The recorder's `--retain`, in seconds (absent: not said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retain_secs: Option<i64>,
    /// The recorder's `--max-size`, in bytes (absent: not said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
}

impl Header {
    /// The header of a segment of `store` started at `started` by a
    /// recorder keeping `retain_secs` and `max_bytes`.
    #[must_use]
    pub fn new(store: &str, started: i64, retain_secs: i64, max_bytes: u64) -> Self {
        Self {
            kind: "history".to_owned(),
            format: FORMAT,
            store: store.to_owned(),
            started,
            retain_secs: Some(retain_secs),
            max_bytes: Some(max_bytes),
        }
    }
}

/// One segment file as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// The file's name in the history directory.
    pub file: String,
    /// The time of its first line (unix seconds).
    pub first: i64,
    /// The time of its last whole line (unix seconds).
    pub last: i64,
    /// Its size on disk, in bytes (compressed).
    pub bytes: u64,
}

/// What a time falls on in a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Nothing is recorded.
    Empty,
    /// Before the first line (the recording starts at `first`).
    Before {
        /// The first recorded time.
        first: i64,
    },
    /// After the last line by more than [`GAP_SECS`].
    After {
        /// The last recorded time.
        last: i64,
    },
    /// Between two segments, more than [`GAP_SECS`] apart.
    Gap {
        /// The last time recorded before it.
        from: i64,
        /// The first time recorded after it.
        to: i64,
    },
    /// The segment at this index holds it (the latest one that starts at
    /// or before the time).
    In(usize),
}

/// Where `at` falls in `segments` (oldest first).
#[must_use]
pub fn locate(segments: &[Segment], at: i64) -> Found {
    locate_resumed(segments, &[], at)
}

/// Where `at` falls in `segments` (oldest first), `resumed` the indexes
/// of the segments that open with a resume after a pause ([`is_resume`]):
/// the time between the segment before one and its first line is a gap.
#[must_use]
pub fn locate_resumed(segments: &[Segment], resumed: &[usize], at: i64) -> Found {
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return Found::Empty;
    };
    if at < first.first {
        return Found::Before { first: first.first };
    }
    let index = segments
        .partition_point(|s| s.first <= at)
        .saturating_sub(1);
    let segment = &segments[index];
    let paused_after = resumed.contains(&(index + 1));
    if at <= segment.last || (!paused_after && at <= segment.last.saturating_add(GAP_SECS)) {
        return Found::In(index);
    }
    match segments.get(index + 1) {
        Some(next) => Found::Gap {
            from: segment.last,
            to: next.first,
        },
        None => Found::After { last: last.last },
    }
}

/// The spans nothing was recorded in, between segments (oldest first):
/// each `(last time before, first time after)` more than [`GAP_SECS`]
/// apart.
#[must_use]
pub fn gaps(segments: &[Segment]) -> Vec<(i64, i64)> {
    gaps_resumed(segments, &[])
}

/// [`gaps`], and the pauses: before each segment of `resumed` (the
/// indexes of those that open with a resume, [`is_resume`]), however
/// short.
#[must_use]
pub fn gaps_resumed(segments: &[Segment], resumed: &[usize]) -> Vec<(i64, i64)> {
    segments
        .windows(2)
        .enumerate()
        .filter(|(i, w)| {
            w[1].first.saturating_sub(w[0].last) > GAP_SECS
                || (resumed.contains(&(i + 1)) && w[1].first > w[0].last)
        })
        .map(|(_, w)| (w[0].last, w[1].first))
        .collect()
}

/// How many of the oldest segments retention drops at `now`: those whose
/// last line is older than `retain_secs`, then more, oldest first, while
/// the total is over `max_bytes`. The newest segment (the one being
/// written) is never dropped.
#[must_use]
pub fn to_drop(segments: &[Segment], now: i64, retain_secs: i64, max_bytes: u64) -> usize {
    let keep_last = segments.len().saturating_sub(1);
    let old = segments[..keep_last]
        .iter()
        .take_while(|s| s.last < now.saturating_sub(retain_secs))
        .count();
    let mut total: u64 = segments[old..].iter().map(|s| s.bytes).sum();
    let mut drop = old;
    while drop < keep_last && total > max_bytes {
        total -= segments[drop].bytes;
        drop += 1;
    }
    drop
}

/// Whether the segment started at `started`, with `bytes` on disk after
/// its first whole group (the header and keyframe), ends at `now`: after
/// [`SEGMENT_SECS`] or [`SEGMENT_BYTES`].
#[must_use]
pub const fn segment_full(started: i64, bytes: u64, now: i64) -> bool {
    now.saturating_sub(started) >= SEGMENT_SECS || bytes >= SEGMENT_BYTES
}

/// A segment's file name: its start time and a sequence number, so names
/// sort by time (`seg-1764655200-000001.ndjson.zst`).
#[must_use]
pub fn segment_name(started: i64, seq: u64) -> String {
    format!("seg-{started:010}-{seq:06}.ndjson.zst")
}

/// The sequence number of a segment file name ([`segment_name`]), `None`
/// for any other name.
#[must_use]
pub fn segment_seq(name: &str) -> Option<(i64, u64)> {
    let rest = name.strip_prefix("seg-")?.strip_suffix(".ndjson.zst")?;
    let (started, seq) = rest.split_once('-')?;
    Some((started.parse().ok()?, seq.parse().ok()?))
}

/// A protocol line (one JSON object, no newline) as recorded: `t` (when
/// the recorder took it, unix seconds) and, over a fleet, `host` added
/// first; the message's own fields follow unchanged.
#[must_use]
pub fn stamp(line: &str, t: i64, host: Option<&str>) -> String {
    let body = line.trim_start().strip_prefix('{').unwrap_or(line);
    let host = host.map_or_else(String::new, |h| {
        format!("\"host\":{},", serde_json::Value::String(h.to_owned()))
    });
    if body.trim_start().starts_with('}') {
        return format!("{{{host}\"t\":{t}}}");
    }
    format!("{{{host}\"t\":{t},{body}")
}

/// Whether a fleet host's name may name its recording's directory
/// (`<dir>/<host>/`, docs/history.md "A fleet"): a DNS host name, 1 to
/// 253 characters, labels of 1 to 63 of `a-z`, `0-9` and `-` (not first
/// or last) joined by single dots; never `.`, `..`, a `/` or an upper
/// case letter (one directory per host, on any file system).
#[must_use]
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            let bytes = label.as_bytes();
            !bytes.is_empty()
                && bytes.len() <= 63
                && bytes[0] != b'-'
                && bytes[bytes.len() - 1] != b'-'
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        })
}

/// A recorded line's time and host, read before the message itself.
#[derive(Debug, Clone, Deserialize)]
pub struct Stamp {
    /// When it was recorded (unix seconds).
    pub t: i64,
    /// Its host over a fleet.
    #[serde(default)]
    pub host: Option<String>,
}

/// Why a time an operator typed is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a time: give RFC 3339 (2026-12-06T03:12:00Z), unix seconds, or `10m ago`")]
pub struct TimeError(pub String);

/// A time as typed (`snapshot --at`): RFC 3339, unix seconds, or a span
/// and `ago` (`10m ago`, `2h 30m ago`, humantime's units) before `now`.
///
/// # Errors
/// [`TimeError`] for anything else.
pub fn parse_time(text: &str, now: i64) -> Result<i64, TimeError> {
    let trimmed = text.trim();
    let error = || TimeError(text.to_owned());
    if let Some(span) = trimmed.strip_suffix("ago") {
        let secs = parse_span(span.trim()).map_err(|_| error())?;
        return Ok(now.saturating_sub(secs));
    }
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return trimmed.parse().map_err(|_| error());
    }
    trimmed
        .parse::<jiff::Timestamp>()
        .map(jiff::Timestamp::as_second)
        .map_err(|_| error())
}

/// A span as typed (`--retain 7d`, `10m`): humantime's units, in whole
/// seconds, at least one.
///
/// # Errors
/// The words when it is not one.
pub fn parse_span(text: &str) -> Result<i64, String> {
    let span = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{text:?} is not a span ({e}): e.g. 7d, 12h, 30m"))?;
    match i64::try_from(span.as_secs()) {
        Ok(secs) if secs >= 1 => Ok(secs),
        _ => Err(format!("{text:?} is not a span of 1 s or more")),
    }
}

/// A size as typed (`--max-size 256MB`): bytes, or a number with `KB`,
/// `MB`, `GB` (powers of 1,000) or `KiB`, `MiB`, `GiB` (powers of 1,024).
///
/// # Errors
/// The words when it is not one.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits);
    let unit_bytes: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1_000,
        "mb" | "m" => 1_000_000,
        "gb" | "g" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(format!("{text:?} is not a size: e.g. 256MB, 1GiB")),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit_bytes))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{text:?} is not a size: e.g. 256MB, 1GiB"))
}

/// A span in the words `history` and the recorder say it (`7d`, `2h 5m`,
/// `40s`): the two largest units.
#[must_use]
pub fn span_words(secs: i64) -> String {
    let secs = secs.max(0);
    let units = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
    let mut parts = Vec::new();
    let mut rest = secs;
    for (size, unit) in units {
        if rest >= size {
            parts.push(format!("{}{unit}", rest / size));
            rest %= size;
        }
        if parts.len() == 2 {
            break;
        }
    }
    if parts.is_empty() {
        return "0s".to_owned();
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests;
