//! An instance's timeline (`T`, docs/history.md, "Timeline"): every
//! change of its row in the recording (created, lease renewed with the old
//! and new expiry, lock taken and released and by whom, tombstoned,
//! removed), its reap backoff's attempts, its operations (stackless
//! 0.4.0), who reaps as it changed, and the Activity lines about it (this
//! console's teardowns with their outcome, as the audit trail has them),
//! oldest first, each with its time. Pure: the recorded lines, their
//! times and the zone the times are shown in are parameters. Texts are
//! drawn sanitized and redacted by the layer that shows them.

use std::collections::BTreeMap;

use crate::model::activity::Activity;
use crate::model::protocol::lines::{Message, Rows};
use crate::model::protocol::rows::{BackoffRow, InstanceRow, LockRow, OperationRow};
use crate::model::time::clock_in;

/// One line of a timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// When (unix seconds).
    pub at: i64,
    /// What happened (unsanitized: it may quote store text).
    pub text: String,
}

/// What the instance's rows were after the last `synced`.
#[derive(Debug, Clone, Default, PartialEq)]
struct Rows1 {
    /// Its instance rows, by birth (`instance_id`).
    rows: BTreeMap<Option<String>, InstanceRow>,
    /// Its reap backoff.
    backoff: Option<BackoffRow>,
    /// Its operations, by id (as JSON text).
    operations: BTreeMap<String, OperationRow>,
}

/// A timeline as the `T` layer shows it: whose, its lines, and what it
/// was built from when that is not a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The instance.
    pub name: String,
    /// Its lines, oldest first.
    pub entries: Vec<Entry>,
    /// Said above the lines: the recording is off or missing, or cut.
    pub note: Option<String>,
}

/// What a live console's `T` says above the store's lines.
pub const NO_RECORDING: &str = "no recording read here (off or missing): what the store and this console's audit trail hold now; stackless-tui replay shows every change recorded";

/// A timeline being built from recorded lines, oldest first.
#[derive(Debug)]
pub struct Timeline {
    name: String,
    zone: jiff::tz::TimeZone,
    /// The first recorded time seen (unix seconds).
    first: Option<i64>,
    now: Rows1,
    pending: Vec<Rows>,
    pending_reset: bool,
    reaper: Option<String>,
    entries: Vec<Entry>,
    /// The cursor: a time inside a line not on its day is given a date.
    cursor: Option<i64>,
    /// The pending `reset`'s reason: the store file read anew.
    reread: Option<String>,
}

impl Timeline {
    /// The same timeline, read up to `cursor` (unix seconds): a time
    /// inside a line (`created 13:45:59`, `lease to …`) not on the
    /// cursor's day (in the zone) is given its date (`created 2026-11-29
    /// 13:45:59`).
    #[must_use]
    pub fn at_cursor(mut self, cursor: i64) -> Self {
        self.cursor = Some(cursor);
        self
    }

    /// An empty timeline of `name`, its times shown in `zone`.
    #[must_use]
    pub fn new(name: &str, zone: jiff::tz::TimeZone) -> Self {
        Self {
            name: name.to_owned(),
            zone,
            first: None,
            now: Rows1::default(),
            pending: Vec::new(),
            pending_reset: false,
            reaper: None,
            entries: Vec::new(),
            cursor: None,
            reread: None,
        }
    }

    /// One recorded line at `t` (the recording's order): rows count at
    /// their `synced`, a `reset` replaces the tables then (a keyframe that
    /// repeats the rows adds no line).
    pub fn take(&mut self, t: i64, message: Message) {
        self.first.get_or_insert(t);
        match message {
            Message::Reset(reset) => {
                self.pending_reset = true;
                self.pending.clear();
                self.reread = reset.reason;
            }
            Message::Rows(rows) => self.pending.push(rows),
            Message::Synced(_) => self.synced(t),
            // Who reaps the store (a `reaper` message, or a recorder's
            // `hello` after a restart), said from `by` and `pid`.
            Message::Reaper(line) => self.who_reaps(t, &line),
            Message::Hello(hello) => {
                if let Some(line) = &hello.reaper {
                    self.who_reaps(t, line);
                }
            }
            Message::Activity(line) if line.instance == self.name => {
                self.activity(&super::reading::activity_from(line));
            }
            _ => {}
        }
    }

    /// Who reaps at `t`, a line when it changed.
    fn who_reaps(&mut self, t: i64, line: &crate::model::protocol::lines::ReaperLine) {
        let words = super::replay::who_reaps(line);
        if self.reaper.as_deref() != Some(words.as_str()) {
            self.push(t, format!("who reaps: {words}"));
            self.reaper = Some(words);
        }
    }

    /// An Activity line about the instance (recorded, or this console's
    /// own from the audit trail): `reaper reaped: down exited 0`.
    pub fn activity(&mut self, activity: &Activity) {
        if activity.instance != self.name {
            return;
        }
        let detail = if activity.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", activity.detail)
        };
        let text = format!("{} {}{detail}", activity.actor, activity.kind);
        // The same line from the recording and the audit trail is one.
        if self
            .entries
            .iter()
            .any(|e| e.at == activity.at && e.text == text)
        {
            return;
        }
        self.push(activity.at, text);
    }

    /// The lines, oldest first (lines of the same second in the order
    /// they came).
    #[must_use]
    pub fn finish(mut self) -> Vec<Entry> {
        self.entries.sort_by_key(|e| e.at);
        self.entries
    }

    fn push(&mut self, at: i64, text: String) {
        self.entries.push(Entry { at, text });
    }

    fn clock(&self, at: i64) -> String {
        match self.cursor {
            Some(cursor) => clock_on(at, cursor, &self.zone),
            None => clock_in(at, &self.zone),
        }
    }

    /// A group applied at `t`: its rows about the instance compared with
    /// what they were.
    fn synced(&mut self, t: i64) {
        let mut next = if std::mem::take(&mut self.pending_reset) {
            Rows1::default()
        } else {
            self.now.clone()
        };
        for rows in std::mem::take(&mut self.pending) {
            self.apply(&mut next, rows);
        }
        let before = std::mem::replace(&mut self.now, next);
        match self.reread.take() {
            // The store file read anew (restored in place, replaced): one
            // line saying what its row became, not a re-creation.
            Some(reason) => {
                let text = format!(
                    "the store was read anew ({}): {}",
                    super::reread_words(&reason),
                    row_became(before.rows.values().next(), self.now.rows.values().next())
                );
                self.push(t, text);
            }
            None => self.compare_rows(&before, t),
        }
        self.compare_backoff(before.backoff.as_ref(), t);
        self.compare_operations(&before.operations, t);
    }

    fn apply(&self, next: &mut Rows1, rows: Rows) {
        match rows {
            Rows::Instances(rows) => {
                for key in rows.remove.into_iter().filter(|k| k.name == self.name) {
                    next.rows.remove(&key.birth.map(|b| b.instance_id));
                }
                for row in rows.upsert.into_iter().filter(|r| r.name == self.name) {
                    next.rows
                        .insert(row.birth.as_ref().map(|b| b.instance_id.clone()), row);
                }
            }
            Rows::Backoffs(rows) => {
                if rows.remove.iter().any(|k| k.instance == self.name) {
                    next.backoff = None;
                }
                if let Some(row) = rows.upsert.into_iter().find(|r| r.instance == self.name) {
                    next.backoff = Some(row);
                }
            }
            Rows::Operations(rows) => {
                for key in rows.remove {
                    next.operations.remove(&key.id.to_string());
                }
                for row in rows.upsert.into_iter().filter(|r| r.instance == self.name) {
                    next.operations.insert(row.id.to_string(), row);
                }
            }
            Rows::Unknown => {}
        }
    }

    fn compare_rows(&mut self, before: &Rows1, t: i64) {
        let after = self.now.rows.clone();
        for (birth, row) in &after {
            match before.rows.get(birth) {
                None => self.appeared(row, t),
                Some(old) => self.changed(old, row, t),
            }
        }
        let removed = before
            .rows
            .keys()
            .filter(|b| !after.contains_key(*b))
            .count();
        for _ in 0..removed {
            self.push(t, "removed from the store".to_owned());
        }
    }

    /// A row seen for the first time: created while recorded, or there
    /// when the recording began.
    fn appeared(&mut self, row: &InstanceRow, t: i64) {
        let lease = row.lease.as_ref().map_or_else(
            || ", no lease".to_owned(),
            |l| format!(", lease to {}", self.clock(l.expires_at)),
        );
        let first = self.first.unwrap_or(t);
        match row.created_at {
            Some(created) if created >= first => {
                self.push(created, format!("created on {}{lease}", row.substrate));
            }
            Some(created) => self.push(
                t,
                format!(
                    "in the store when recorded: {}, created {}{lease}",
                    row.status,
                    self.clock(created)
                ),
            ),
            None => self.push(
                t,
                format!("in the store when recorded: {}{lease}", row.status),
            ),
        }
        if let Some(lock) = &row.lock {
            let text = format!("lock held: {}", lock_words(lock));
            self.push(lock.acquired_at, text);
        }
    }

    fn changed(&mut self, old: &InstanceRow, row: &InstanceRow, t: i64) {
        match (&old.lease, &row.lease) {
            (Some(a), Some(b)) if a.expires_at != b.expires_at => {
                let verb = if b.expires_at > a.expires_at {
                    "lease renewed"
                } else {
                    "lease shortened"
                };
                let text = format!(
                    "{verb}: expiry {} -> {}",
                    self.clock(a.expires_at),
                    self.clock(b.expires_at)
                );
                self.push(t, text);
            }
            (None, Some(b)) => {
                let text = format!("lease set: expiry {}", self.clock(b.expires_at));
                self.push(t, text);
            }
            (Some(_), None) => self.push(t, "lease removed".to_owned()),
            _ => {}
        }
        match (&old.lock, &row.lock) {
            (None, Some(lock)) => self.push(t, format!("lock taken: {}", lock_words(lock))),
            (Some(lock), None) => self.push(t, format!("lock released: {}", lock_words(lock))),
            (Some(a), Some(b)) if a.holder_pid != b.holder_pid || a.operation != b.operation => {
                self.push(t, format!("lock taken: {}", lock_words(b)));
            }
            _ => {}
        }
        if old.status != row.status {
            let text = if row.status == "tombstoned" {
                "tombstoned".to_owned()
            } else {
                format!("status: {} -> {}", old.status, row.status)
            };
            self.push(
                row.tombstoned_at
                    .filter(|_| row.status == "tombstoned")
                    .unwrap_or(t),
                text,
            );
        }
    }

    fn compare_backoff(&mut self, before: Option<&BackoffRow>, t: i64) {
        match (before, self.now.backoff.clone()) {
            (old, Some(row)) if old.is_none_or(|o| o.attempts != row.attempts) => {
                let text = format!(
                    "reap attempt {} failed: {}; next retry {}",
                    row.attempts,
                    if row.summary.is_empty() {
                        &row.last_error
                    } else {
                        &row.summary
                    },
                    self.clock(row.next_retry_at)
                );
                self.push(t, text);
            }
            (Some(_), None) => self.push(t, "reap backoff cleared".to_owned()),
            _ => {}
        }
    }

    fn compare_operations(&mut self, before: &BTreeMap<String, OperationRow>, t: i64) {
        let after: Vec<OperationRow> = self.now.operations.values().cloned().collect();
        for op in after {
            let id = op.id.to_string();
            let error = op
                .error
                .as_ref()
                .map(|e| format!(" ({}: {})", e.code, e.message))
                .unwrap_or_default();
            match before.get(&id) {
                None => self.push(
                    op.created_at,
                    format!("operation {id} {}: {}{error}", op.verb, op.status),
                ),
                Some(old) if old.status != op.status => self.push(
                    t,
                    format!(
                        "operation {id} {}: {} -> {}{error}",
                        op.verb, old.status, op.status
                    ),
                ),
                _ => {}
            }
        }
    }
}

/// What the store alone says of `name` (no recording): when its row was
/// created, its lock taken, its lease runs out, it was tombstoned; its
/// reap backoff; its operations (created, finished); and the `activity`
/// lines about it (this console's teardowns with their outcome, read back
/// from the audit trail). Oldest first, times in `zone`.
#[must_use]
pub fn from_store<'a>(
    name: &str,
    zone: jiff::tz::TimeZone,
    rows: &crate::model::Rows,
    activity: impl Iterator<Item = &'a Activity>,
) -> Vec<Entry> {
    let mut timeline = Timeline::new(name, zone);
    if let Some(row) = rows.instances.iter().find(|i| i.name == name) {
        if let Some(created) = row.created_at {
            timeline.push(created, format!("created on {}", row.substrate));
        }
        if let Some(lease) = row.lease {
            timeline.push(
                lease.expires_at,
                "lease expiry (as the store has it now)".to_owned(),
            );
        }
        if let Some(lock) = &row.lock {
            let host = lock
                .holder_host
                .as_deref()
                .map(|h| format!(" on {h}"))
                .unwrap_or_default();
            timeline.push(
                lock.acquired_at,
                format!(
                    "lock taken: {} by pid {}{host}",
                    lock.operation, lock.holder_pid
                ),
            );
        }
        if let Some(tombstoned) = row.tombstoned_at {
            timeline.push(tombstoned, "tombstoned".to_owned());
        }
    }
    if let Some(attempt) = rows.reap_attempt(name) {
        let text = format!(
            "next reap retry, after {} failed attempt(s): {}",
            attempt.attempts, attempt.last_error
        );
        timeline.push(attempt.next_retry_at, text);
    }
    for op in rows.operations.iter().filter(|op| op.instance == name) {
        timeline.push(
            op.created_at,
            format!("operation {} {}: created", op.id, op.verb),
        );
        if op.updated_at != op.created_at {
            timeline.push(
                op.updated_at,
                format!("operation {} {}: {}", op.id, op.verb, op.status),
            );
        }
    }
    for line in activity {
        timeline.activity(line);
    }
    timeline.finish()
}

/// What an instance's row became when the store was read anew: `status
/// tombstoned -> active`, `status active, unchanged`, `now in the store:
/// active`, `no longer in the store`.
fn row_became(before: Option<&InstanceRow>, after: Option<&InstanceRow>) -> String {
    match (before, after) {
        (Some(a), Some(b)) if a.status != b.status => {
            format!("status {} -> {}", a.status, b.status)
        }
        (Some(_), Some(b)) => format!("status {}, unchanged", b.status),
        (None, Some(b)) => format!("now in the store: {}", b.status),
        (Some(_), None) => "no longer in the store".to_owned(),
        (None, None) => "not in the store".to_owned(),
    }
}

/// `at` as a time of day (`13:45:59`) when it falls on `cursor`'s day in
/// `zone`, else with its date (`2026-11-29 13:45:59`).
#[must_use]
pub fn clock_on(at: i64, cursor: i64, zone: &jiff::tz::TimeZone) -> String {
    let day = |t: i64| {
        jiff::Timestamp::from_second(t)
            .ok()
            .map(|ts| ts.to_zoned(zone.clone()).date())
    };
    match (day(at), day(cursor)) {
        (Some(a), Some(c)) if a != c => {
            format!("{a} {}", clock_in(at, zone))
        }
        _ => clock_in(at, zone),
    }
}

/// `up by pid 4242 on host-a`: a lock's operation and holder.
fn lock_words(lock: &LockRow) -> String {
    let host = lock
        .holder_host
        .as_deref()
        .map(|h| format!(" on {h}"))
        .unwrap_or_default();
    format!("{} by pid {}{host}", lock.operation, lock.holder_pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::protocol::lines::read;

    /// `payments-staging`'s row with its lease to `expires` and, when
    /// `lock`, the reaper's `down` holding its lock.
    fn row(status: &str, expires: i64, lock: bool) -> String {
        let lock = if lock {
            r#"{"operation":"down","holder_pid":4242,"holder_start_time":1,"holder_host":null,"acquired_at":11520,"liveness_state":"alive","held":true}"#
        } else {
            "null"
        };
        format!(
            r#"{{"name":"payments-staging","birth":{{"instance_id":"b1"}},"dns_safe":true,"substrate":"local","status":"{status}","created_at":3600,"tombstoned_at":null,"lease":{{"duration_secs":3600,"expires_at":{expires}}},"lock":{lock},"dirty":null,"failed_up":false,"services_dead":0,"gc":null}}"#
        )
    }

    fn group(timeline: &mut Timeline, t: i64, seq: u64, rows: &[(&str, String)]) {
        for (table, upsert) in rows {
            let line = format!(
                r#"{{"type":"rows","seq":{seq},"table":"{table}","upsert":[{upsert}],"remove":[]}}"#
            );
            timeline.take(t, read(line.as_bytes()).unwrap());
        }
        let synced = format!(r#"{{"type":"synced","seq":{seq},"at":{t},"counts":{{}}}}"#);
        timeline.take(t, read(synced.as_bytes()).unwrap());
    }

    /// The recorded run: created at 01:00, renewed at 01:56:40 (expiry
    /// 02:00 -> 03:00), a failed reap after it ran out, the keyframe of a
    /// new segment (no line), then the reaper's `down` holding its lock,
    /// the tombstone and the lock released; with who reaps and the
    /// Activity lines (one about another instance).
    fn recorded_run() -> Timeline {
        let mut timeline = Timeline::new("payments-staging", jiff::tz::TimeZone::UTC);
        let reaper = r#"{"type":"reaper","by":"console","pid":4242,"paused":false,"text":"reaper: every 1m"}"#;
        timeline.take(3_000, read(reaper.as_bytes()).unwrap());
        timeline.take(3_000, read(br#"{"type":"reset","seq":1}"#).unwrap());
        group(&mut timeline, 3_000, 1, &[]);
        group(
            &mut timeline,
            3_600,
            2,
            &[("instances", row("active", 7_200, false))],
        );
        group(
            &mut timeline,
            7_000,
            3,
            &[("instances", row("active", 10_800, false))],
        );
        let backoff = r#"{"instance":"payments-staging","attempts":1,"last_error":"exit 1","code":null,"summary":"volume busy","remediation":null,"next_retry_at":11100}"#;
        group(
            &mut timeline,
            10_860,
            4,
            &[("backoffs", backoff.to_owned())],
        );
        // A keyframe repeating the same rows: no line.
        timeline.take(10_900, read(br#"{"type":"reset","seq":5}"#).unwrap());
        group(
            &mut timeline,
            10_900,
            5,
            &[
                ("instances", row("active", 10_800, false)),
                ("backoffs", backoff.to_owned()),
            ],
        );
        group(
            &mut timeline,
            11_520,
            6,
            &[("instances", row("active", 10_800, true))],
        );
        timeline.activity(&Activity::new(
            11_525,
            crate::model::activity::Actor::Reaper,
            "payments-staging",
            crate::model::activity::ActivityKind::Reaped,
            "down exited 0",
        ));
        timeline.activity(&Activity::new(
            11_525,
            crate::model::activity::Actor::Reaper,
            "web-1",
            crate::model::activity::ActivityKind::Reaped,
            "not this one",
        ));
        let removal = r#"{"type":"rows","seq":7,"table":"backoffs","upsert":[],"remove":[{"instance":"payments-staging"}]}"#;
        timeline.take(11_526, read(removal.as_bytes()).unwrap());
        group(
            &mut timeline,
            11_526,
            7,
            &[("instances", row("tombstoned", 10_800, false))],
        );
        timeline
    }

    /// Every change of the row, its backoff, who reaps and the Activity
    /// lines about it, each once, oldest first.
    #[test]
    fn the_timeline_says_every_change_of_the_row_oldest_first_with_its_time() {
        let timeline = recorded_run();
        let lines: Vec<(i64, String)> = timeline
            .finish()
            .into_iter()
            .map(|e| (e.at, e.text))
            .collect();
        let expected: Vec<(i64, &str)> = vec![
            (3_000, "who reaps: console pid 4242 reaps"),
            (3_600, "created on local, lease to 02:00:00"),
            (7_000, "lease renewed: expiry 02:00:00 -> 03:00:00"),
            (
                10_860,
                "reap attempt 1 failed: volume busy; next retry 03:05:00",
            ),
            (11_520, "lock taken: down by pid 4242"),
            (11_525, "reaper reaped: down exited 0"),
            (11_526, "lock released: down by pid 4242"),
            (11_526, "tombstoned"),
            (11_526, "reap backoff cleared"),
        ];
        assert_eq!(
            lines,
            expected
                .into_iter()
                .map(|(t, s)| (t, s.to_owned()))
                .collect::<Vec<_>>()
        );
    }
}
