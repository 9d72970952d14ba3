//! One segment read for the replay's cursor (docs/history.md, "Replay"):
//! the tables up to the cursor ([`Replay`]), the recorded Activity lines
//! up to it (the last [`ACTIVITY_KEPT`]), and the times of the segment's
//! changes (for `[` and `]`). Pure: the lines and their times are given.

use std::collections::VecDeque;

use super::cursor::{Frame, Span};
use super::replay::Replay;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::protocol::lines::{ActivityMessage, Message, Reset};

/// How many recorded Activity lines a frame carries at most (the newest).
pub const ACTIVITY_KEPT: usize = 500;

/// Every Activity kind, to read a recorded kind's word back.
const KINDS: [ActivityKind; 27] = [
    ActivityKind::Started,
    ActivityKind::Reaped,
    ActivityKind::TornDown,
    ActivityKind::SkippedLocked,
    ActivityKind::WaitingBackoff,
    ActivityKind::Skipped,
    ActivityKind::Failed,
    ActivityKind::Collected,
    ActivityKind::Refused,
    ActivityKind::Aborted,
    ActivityKind::WouldReap,
    ActivityKind::Error,
    ActivityKind::Cancelled,
    ActivityKind::CancelRequested,
    ActivityKind::Succeeded,
    ActivityKind::Queued,
    ActivityKind::Interrupted,
    ActivityKind::Appeared,
    ActivityKind::Tombstoned,
    ActivityKind::Stopped,
    ActivityKind::Role,
    ActivityKind::Renewed,
    ActivityKind::RenewFailed,
    ActivityKind::Verified,
    ActivityKind::VerifyFailed,
    ActivityKind::WouldRun,
    ActivityKind::StoreCreated,
];

/// A recorded `activity` line as the Activity pane holds it: its kind and
/// actor read back from their words (an unknown kind is shown as an
/// `error` line quoting it; an unknown actor as `observed`).
#[must_use]
pub fn activity_from(line: ActivityMessage) -> Activity {
    let actor = match line.actor.as_str() {
        "reaper" => Actor::Reaper,
        "operator" => Actor::Operator,
        "controller" => Actor::Controller,
        _ => Actor::Observed,
    };
    let (kind, detail) = KINDS
        .iter()
        .find(|k| k.to_string() == line.kind)
        .map_or_else(
            || {
                (
                    ActivityKind::Error,
                    format!("{}: {}", line.kind, line.detail),
                )
            },
            |k| (*k, line.detail.clone()),
        );
    Activity::new(line.at, actor, &line.instance, kind, detail)
}

/// The banner a replay shows at a cursor after the store file was read
/// anew (a recorded `reset` with its `reason`): `store restored in place
/// at 10:41:51: the store file was rewritten in place (…)`.
#[must_use]
pub fn reread_banner(t: i64, reason: &str, zone: &jiff::tz::TimeZone) -> String {
    let words = super::reread_words(reason);
    let said = if words == reason {
        format!("store read anew ({reason})")
    } else {
        format!("store {words}")
    };
    format!(
        "{said} at {}: {reason}",
        crate::model::time::clock_in(t, zone)
    )
}

/// The replay's Activity at the cursor: the recorded lines and this
/// console's teardowns read back from its audit trail for the same window
/// (the recording holds other processes' lines; the audit trail, the
/// console's own), merged oldest first, a line both hold (same time,
/// instance and kind) once, the newest [`ACTIVITY_KEPT`] kept.
#[must_use]
pub fn merge_audited(recorded: Vec<Activity>, audited: Vec<Activity>) -> Vec<Activity> {
    let mut out = recorded;
    for line in audited {
        let known = out
            .iter()
            .any(|a| a.at == line.at && a.instance == line.instance && a.kind == line.kind);
        if !known {
            out.push(line);
        }
    }
    out.sort_by_key(|a| a.at);
    let extra = out.len().saturating_sub(ACTIVITY_KEPT);
    out.drain(..extra);
    out
}

/// A segment read up to a cursor.
#[derive(Debug, Default)]
pub struct Reading {
    /// The cursor (unix seconds).
    at: i64,
    /// The tables up to the cursor.
    pub replay: Replay,
    /// The recorded Activity lines up to the cursor, the newest
    /// [`ACTIVITY_KEPT`].
    activity: VecDeque<Activity>,
    /// The times of the segment's changes, the whole segment's.
    changes: Vec<i64>,
    /// Rows or a reset seen since the last `synced`.
    changed: bool,
    /// The first line after the cursor (unix seconds).
    pub next: Option<i64>,
    /// The last `reset` with a reason up to the cursor: when, and why the
    /// store file was read anew.
    reread: Option<(i64, String)>,
    /// The zone the banner's time is said in (UTC unless set).
    zone: Option<jiff::tz::TimeZone>,
}

impl Reading {
    /// Nothing read yet, for a cursor at `at`.
    #[must_use]
    pub fn new(at: i64) -> Self {
        Self {
            at,
            ..Self::default()
        }
    }

    /// One recorded line at `t`: applied when at or before the cursor;
    /// its change time noted whatever its time.
    pub fn take(&mut self, t: i64, message: Message) {
        let change = match &message {
            Message::Rows(_) | Message::Reset(_) => {
                self.changed = true;
                false
            }
            Message::Synced(_) => std::mem::take(&mut self.changed),
            Message::Reaper(_) | Message::Banner(_) | Message::BannerCleared(_) => true,
            _ => false,
        };
        if change && self.changes.last() != Some(&t) {
            self.changes.push(t);
        }
        if t > self.at {
            self.next.get_or_insert(t);
            return;
        }
        if let Message::Reset(Reset {
            reason: Some(reason),
            ..
        }) = &message
        {
            self.reread = Some((t, reason.clone()));
        }
        match message {
            Message::Activity(line) => {
                if self.activity.len() >= ACTIVITY_KEPT {
                    self.activity.pop_front();
                }
                self.activity.push_back(activity_from(line));
            }
            message => self.replay.apply(t, message),
        }
    }

    /// The same reading, its banners' times said in `zone`.
    #[must_use]
    pub fn in_zone(mut self, zone: jiff::tz::TimeZone) -> Self {
        self.zone = Some(zone);
        self
    }

    /// The frame to show: the tables (none when no whole group was
    /// applied by the cursor, or the cursor is [`super::GAP_SECS`] past the
    /// last line read: `why` says so), who reaps, the banners (a store
    /// read anew said at the cursor after it: [`reread_banner`]), the
    /// Activity lines; `span` the recording's, with this segment's changes
    /// merged in.
    #[must_use]
    pub fn frame(self, mut span: Span) -> Frame {
        let last = self.replay.last_t.unwrap_or(i64::MIN);
        let why = if !self.replay.synced() {
            Some("no whole snapshot recorded by then".to_owned())
        } else if self.at.saturating_sub(last) > super::GAP_SECS {
            Some(format!(
                "nothing recorded for {} before the cursor",
                super::span_words(self.at.saturating_sub(last))
            ))
        } else {
            None
        };
        span.changes.extend(self.changes);
        span.changes.sort_unstable();
        span.changes.dedup();
        Frame {
            at: self.at,
            snapshot: why
                .is_none()
                .then(|| std::sync::Arc::new(self.replay.snapshot())),
            why,
            reaper: self.replay.reaper.as_ref().map(super::replay::who_reaps),
            banners: self
                .replay
                .banners
                .values()
                .map(|b| b.text.clone())
                .chain(self.reread.as_ref().map(|(t, reason)| {
                    let zone = self.zone.clone().unwrap_or(jiff::tz::TimeZone::UTC);
                    reread_banner(*t, reason, &zone)
                }))
                .collect(),
            activity: self.activity.into(),
            span,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::protocol::lines::read;

    fn take(reading: &mut Reading, t: i64, line: &str) {
        reading.take(t, read(line.as_bytes()).unwrap());
    }

    const ROW: &str = r#"{"name":"golf","birth":null,"dns_safe":true,"substrate":"local","status":"active","created_at":1,"tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":100},"lock":null,"dirty":null,"failed_up":false,"services_dead":0,"gc":null}"#;

    /// A segment: a keyframe at 10, a heartbeat at 15, who reaps at 18, a
    /// recorded Activity line at 19, a changed row at 20, a banner at 30.
    fn segment(reading: &mut Reading) {
        take(reading, 10, r#"{"type":"reset","seq":1}"#);
        take(
            reading,
            10,
            &format!(
                r#"{{"type":"rows","seq":1,"table":"instances","upsert":[{ROW}],"remove":[]}}"#
            ),
        );
        take(
            reading,
            10,
            r#"{"type":"synced","seq":1,"at":10,"counts":{}}"#,
        );
        take(reading, 15, r#"{"type":"heartbeat","at":15,"seq":1}"#);
        take(
            reading,
            18,
            r#"{"type":"reaper","by":"console","pid":7,"paused":false,"text":"reaper: every 1m"}"#,
        );
        take(
            reading,
            19,
            r#"{"type":"activity","at":19,"actor":"reaper","instance":"golf","kind":"failed","detail":"down exited 1"}"#,
        );
        take(
            reading,
            20,
            &format!(
                r#"{{"type":"rows","seq":2,"table":"instances","upsert":[{}],"remove":[]}}"#,
                ROW.replace("100", "200")
            ),
        );
        take(
            reading,
            20,
            r#"{"type":"synced","seq":2,"at":20,"counts":{}}"#,
        );
        take(
            reading,
            30,
            r#"{"type":"banner","id":"clock","level":"error","text":"clock jumped"}"#,
        );
    }

    #[test]
    fn a_frame_is_the_tables_and_lines_up_to_the_cursor_and_the_segments_changes() {
        let mut reading = Reading::new(19);
        segment(&mut reading);
        let frame = reading.frame(Span {
            first: 10,
            last: 30,
            changes: vec![10],
        });
        assert_eq!(frame.why, None);
        let snapshot = frame.snapshot.expect("recorded");
        assert_eq!(snapshot.instances[0].lease.map(|l| l.expires_at), Some(100));
        assert_eq!(frame.reaper.as_deref(), Some("console pid 7 reaps"));
        assert!(frame.banners.is_empty(), "the banner came after the cursor");
        let activity: Vec<(i64, String, String)> = frame
            .activity
            .iter()
            .map(|a| (a.at, a.kind.to_string(), a.detail.clone()))
            .collect();
        assert_eq!(
            activity,
            [(19, "failed".to_owned(), "down exited 1".to_owned())]
        );
        assert_eq!(frame.span.changes, [10, 18, 20, 30]);
    }

    #[test]
    fn a_cursor_past_the_last_line_by_more_than_a_gap_is_not_recorded() {
        let mut reading = Reading::new(30 + super::super::GAP_SECS + 1);
        segment(&mut reading);
        let frame = reading.frame(Span::default());
        assert!(frame.snapshot.is_none());
        assert_eq!(
            frame.why.as_deref(),
            Some("nothing recorded for 7s before the cursor")
        );
        let mut early = Reading::new(5);
        segment(&mut early);
        assert_eq!(
            early.frame(Span::default()).why.as_deref(),
            Some("no whole snapshot recorded by then")
        );
    }
}
