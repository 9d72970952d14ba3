//! The view model: the text of the table rows ([`instance_row`],
//! [`backoff_row`]), the log lines ([`activity_line`], [`supervisor_line`]),
//! the state marks and their legend ([`state_marks`], [`STATE_LEGEND`]), the
//! text of the store banners ([`busy_banner`], [`error_banner`]) and the
//! too-small notice, built from the snapshot and the logs as plain
//! `String`s. Pure (no terminal, no clock: `now` is a parameter, unix
//! seconds), so each rule is testable on its own.
//!
//! Not built here: each pane builds its own title and title suffix (counts,
//! position, the filter, `↓ n newer`) and its empty-state text; the header
//! builds its two lines and its list of banners (the `! ` prefix, the
//! standby banner; the schema banner's text is
//! [`crate::model::generation::Generation::banner`]'s) around the two banner
//! texts above; the
//! footer and the help overlay take their key texts from
//! [`super::keys`]; the detail view's document is [`super::detail`]'s.
//!
//! Every string that came from the store (or from a process whose output may
//! echo store text) passes through [`crate::model::text::sanitize_short`]
//! before any span is built: here for the rows and lines above, and in the
//! pane for the few such texts a pane builds itself (the detail view's and
//! the dialog's instance name, the filter in the Instances title, a flash).
//! Nothing raw reaches the terminal, and a 5,000-character `last_error` is
//! cut before it costs anything per frame.

use crate::event::{Activity, SupervisorNote};
use crate::model::text::sanitize_short;
use crate::model::{Instance, Liveness, OpLock, ReapAttempt, Status, envelope, time};
use crate::ui::text::{CUT_LONG, CUT_SHORT};

/// ` x12` for an entry coalesced `count` times; empty for 1 (or 0).
#[must_use]
pub fn count_suffix(count: u32) -> String {
    if count > 1 {
        format!(" x{count}")
    } else {
        String::new()
    }
}

/// How an instance's lease reads at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// Active, lease still running.
    Running,
    /// Lease ran out (`expires_at <= now`) on an instance that is not
    /// tombstoned: a reaper candidate.
    Expired,
    /// Tombstoned (no lease: `down` deleted it).
    Tombstoned,
    /// No lease row.
    NoLease,
    /// No lease row, left by a failed or cancelled `up`
    /// ([`crate::model::readiness::failed_up`]): no reaper ever acts on it.
    FailedUp,
}

/// How an instance's operation lock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockState {
    /// No `op_locks` row.
    Free,
    /// Held: the holder is alive, or on a foreign host (cannot be probed).
    Held,
    /// Stale: the holder's pid is gone or was reused.
    Stale,
    /// A lock row without a probed liveness (should not happen: the store
    /// adapter probes every lock).
    Unprobed,
}

/// One row of the Instances pane, as text (all sanitized) plus the states
/// the pane styles by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceRow {
    /// NAME column.
    pub name: String,
    /// SUBSTRATE column.
    pub substrate: String,
    /// STATUS column: `active`, `tombstoned`, `? <other>`; ` (!)` appended when
    /// the row had read anomalies.
    pub status: String,
    /// LEASE column: `4h 12m left`, `expired 3m 12s ago`,
    /// `tombstoned 8d 00h ago`, `no lease`.
    pub lease: String,
    /// LOCK column: `up by pid 15180 on vm, stale: pid gone`, or empty.
    pub lock: String,
    /// REAP column: the `reap_attempts.attempts` count, or empty.
    pub reap: String,
    /// The lease state (styles the LEASE cell).
    pub lease_state: LeaseState,
    /// The lock state (styles the LOCK cell).
    pub lock_state: LockState,
    /// Whether the status is neither `active` nor `tombstoned`.
    pub unknown_status: bool,
    /// The state column: three marks, lease / lock / reap (see
    /// [`state_marks`]), so no state depends on colour alone.
    pub state: String,
    /// Whether a controller operation is pending on the instance (shown
    /// first in the LOCK column; see [`InstanceRow::with_pending`]).
    pub pending: bool,
    /// Dead service processes under the instance (shown first in the LOCK
    /// column; see [`InstanceRow::with_dead_services`]).
    pub dead_services: u32,
    /// Live service processes last observed unready (stackless's stage
    /// `unhealthy`; shown first in the LOCK column; see
    /// [`InstanceRow::with_unhealthy_services`]).
    pub unhealthy_services: u32,
    /// No service process recorded under the active instance: `stackless
    /// list` calls its services `unknown` (shown first in the LOCK column;
    /// see [`InstanceRow::with_readiness`]).
    pub services_unknown: bool,
}

impl InstanceRow {
    /// The row with the instance's pending controller operation (stackless
    /// 0.4.0; `Rows::pending_operation`) in front of its LOCK text:
    /// `down running 3s`, `up queued 12s; up by pid 4242, alive`. The NAME
    /// column keeps its share (LOCK is the column that gives way).
    #[must_use]
    pub fn with_pending(mut self, op: Option<&crate::model::Operation>, now: i64) -> Self {
        if let Some(op) = op {
            let text = super::opview::pending_text(op, now);
            self.lock = if self.lock.is_empty() {
                text
            } else {
                format!("{text}; {}", self.lock)
            };
            self.pending = true;
        }
        self
    }

    /// The row with `dead` service processes of an active instance
    /// (`Snapshot::dead_services`, probed by the watcher) in front of its
    /// LOCK text: `1 svc dead`, `2 svc dead; up by pid 4242, alive`.
    #[must_use]
    pub fn with_dead_services(mut self, dead: u32) -> Self {
        if dead > 0 {
            let text = format!("{dead} svc dead");
            self.lock = if self.lock.is_empty() {
                text
            } else {
                format!("{text}; {}", self.lock)
            };
            self.dead_services = dead;
        }
        self
    }

    /// The row with `unhealthy` live service processes (last observed
    /// present and unready: stackless 0.4.0's stage `unhealthy`,
    /// `Snapshot::unhealthy_services`) in front of its LOCK text:
    /// `1 svc unhealthy`, `1 svc unhealthy; up by pid 4242, alive`.
    #[must_use]
    pub fn with_unhealthy_services(mut self, unhealthy: u32) -> Self {
        if unhealthy > 0 {
            let text = format!("{unhealthy} svc unhealthy");
            self.lock = if self.lock.is_empty() {
                text
            } else {
                format!("{text}; {}", self.lock)
            };
            self.unhealthy_services = unhealthy;
        }
        self
    }

    /// The row with its readiness as `stackless list` derives it:
    /// `services_unknown` (an active instance with no service
    /// process recorded, [`crate::model::snapshot::ServicesDead::recorded`])
    /// puts [`SERVICES_UNKNOWN`] in front of its LOCK text;
    /// `failed_up` ([`crate::model::readiness::failed_up`]) makes its LEASE
    /// [`FAILED_UP`].
    #[must_use]
    pub fn with_readiness(mut self, services_unknown: bool, failed_up: bool) -> Self {
        if services_unknown {
            self.lock = if self.lock.is_empty() {
                SERVICES_UNKNOWN.to_owned()
            } else {
                format!("{SERVICES_UNKNOWN}; {}", self.lock)
            };
            self.services_unknown = true;
        }
        if failed_up {
            FAILED_UP.clone_into(&mut self.lease);
            self.lease_state = LeaseState::FailedUp;
        }
        self
    }

    /// Whether the row is a tombstone (drawn dim).
    #[must_use]
    pub fn tombstoned(&self) -> bool {
        self.lease_state == LeaseState::Tombstoned
    }
}

/// The LOCK text: `{operation} by pid {pid} on {host}, {liveness}`.
/// `holder_host` `None` (a store before migration 4) omits ` on {host}`; an
/// empty host reads `on ?`; a missing liveness reads `unprobed`.
#[must_use]
pub fn lock_text(lock: &OpLock, liveness: Option<&Liveness>) -> String {
    let operation = sanitize_short(&lock.operation, CUT_SHORT);
    let mut text = format!("{operation} by pid {}", lock.holder_pid);
    match lock.holder_host.as_deref() {
        None => {}
        Some("") => text.push_str(" on ?"),
        Some(host) => {
            text.push_str(" on ");
            text.push_str(&sanitize_short(host, CUT_SHORT));
        }
    }
    text.push_str(", ");
    match liveness {
        Some(l) => text.push_str(&l.to_string()),
        None => text.push_str("unprobed"),
    }
    text
}

/// The LEASE text and state of `instance` at `now`.
#[must_use]
pub fn lease_cell(instance: &Instance, now: i64) -> (String, LeaseState) {
    if instance.status == Status::Tombstoned {
        let text = match instance.tombstoned_at {
            Some(at) => format!("tombstoned {}", time::ago(at, now)),
            None => "tombstoned".to_owned(),
        };
        return (text, LeaseState::Tombstoned);
    }
    match instance.lease {
        Some(lease) => {
            let state = if lease.expired(now) {
                LeaseState::Expired
            } else {
                LeaseState::Running
            };
            (time::lease_text(lease.expires_at, now), state)
        }
        None => ("no lease".to_owned(), LeaseState::NoLease),
    }
}

/// Build one Instances row. `liveness` is `snapshot.lock_liveness(name)`,
/// `attempt` is `snapshot.reap_attempt(name)`.
#[must_use]
pub fn instance_row(
    instance: &Instance,
    liveness: Option<&Liveness>,
    attempt: Option<&ReapAttempt>,
    now: i64,
) -> InstanceRow {
    let (lease, lease_state) = lease_cell(instance, now);
    let (lock, lock_state) = match &instance.lock {
        None => (String::new(), LockState::Free),
        Some(lock) => {
            let state = match liveness {
                None => LockState::Unprobed,
                Some(l) if l.held() => LockState::Held,
                Some(_) => LockState::Stale,
            };
            (lock_text(lock, liveness), state)
        }
    };
    let unknown_status = matches!(instance.status, Status::Other(_));
    let state = state_marks(lease_state, instance.lock.is_some(), liveness, attempt, now);
    let mut status = match &instance.status {
        Status::Active => "active".to_owned(),
        Status::Tombstoned => "tombstoned".to_owned(),
        Status::Other(other) => format!("? {}", sanitize_short(other, CUT_SHORT)),
    };
    if !instance.anomalies.is_empty() {
        status.push_str(" (!)");
    }
    InstanceRow {
        name: sanitize_short(&instance.name, CUT_SHORT),
        substrate: sanitize_short(&instance.substrate, CUT_SHORT),
        status,
        lease,
        lock,
        reap: attempt.map(|a| a.attempts.to_string()).unwrap_or_default(),
        lease_state,
        lock_state,
        unknown_status,
        state,
        pending: false,
        dead_services: 0,
        unhealthy_services: 0,
        services_unknown: false,
    }
}

/// The LOCK text's mark of an active instance whose services `stackless
/// list` calls `unknown` (no service process recorded).
pub const SERVICES_UNKNOWN: &str = "svc unknown";

/// The LEASE text of a row a failed or cancelled `up` left (no lease: no
/// reaper ever acts on it).
pub const FAILED_UP: &str = "failed up: no lease";

/// State mark: the lease ran out on an instance that is not tombstoned.
pub const MARK_EXPIRED: char = '✗';
/// State mark: tombstoned.
pub const MARK_TOMBSTONED: char = '†';
/// State mark: an active instance without a lease row.
pub const MARK_NO_LEASE: char = '-';
/// State mark: the lock holder is alive on this host (held).
pub const MARK_LOCK_ALIVE: char = 'L';
/// State mark: the lock holder is on another host (cannot be probed: held).
pub const MARK_LOCK_FOREIGN: char = 'F';
/// State mark: a stale lock (holder gone or pid reused; or not probed).
pub const MARK_LOCK_STALE: char = '?';
/// State mark: a failed reap is backing off (`next_retry_at > now`).
pub const MARK_BACKING_OFF: char = '…';
/// State mark: a failed reap whose retry is due.
pub const MARK_RETRY_DUE: char = '!';

/// The legend of the state column, for the help overlay.
pub const STATE_LEGEND: [(char, &str); 8] = [
    (MARK_EXPIRED, "lease expired"),
    (MARK_TOMBSTONED, "tombstoned"),
    (MARK_NO_LEASE, "no lease row"),
    (MARK_LOCK_ALIVE, "locked, holder alive"),
    (MARK_LOCK_FOREIGN, "locked on a foreign host"),
    (MARK_LOCK_STALE, "stale lock"),
    (MARK_BACKING_OFF, "reap backing off"),
    (MARK_RETRY_DUE, "reap retry due"),
];

/// The three state marks of a row: lease (`✗` expired, `†` tombstoned, `-`
/// no lease, blank running), lock (`L` alive, `F` foreign host, `?` stale or
/// unprobed, blank free), reap (`…` backing off, `!` retry due, blank none).
#[must_use]
pub fn state_marks(
    lease: LeaseState,
    locked: bool,
    liveness: Option<&Liveness>,
    attempt: Option<&ReapAttempt>,
    now: i64,
) -> String {
    let lease = match lease {
        LeaseState::Running => ' ',
        LeaseState::Expired => MARK_EXPIRED,
        LeaseState::Tombstoned => MARK_TOMBSTONED,
        LeaseState::NoLease | LeaseState::FailedUp => MARK_NO_LEASE,
    };
    let lock = match (locked, liveness) {
        (false, _) => ' ',
        (true, Some(Liveness::Alive)) => MARK_LOCK_ALIVE,
        (true, Some(Liveness::ForeignHost(_))) => MARK_LOCK_FOREIGN,
        (true, _) => MARK_LOCK_STALE,
    };
    let reap = match attempt {
        None => ' ',
        Some(a) if a.next_retry_at > now => MARK_BACKING_OFF,
        Some(_) => MARK_RETRY_DUE,
    };
    [lease, lock, reap].into_iter().collect()
}

/// One row of the Backoffs pane, as sanitized text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackoffRow {
    /// INSTANCE column.
    pub instance: String,
    /// ATTEMPTS column.
    pub attempts: String,
    /// RETRY column: `retry in 1m 04s` or `due`.
    pub retry: String,
    /// Whether the retry is due (`next_retry_at <= now`).
    pub due: bool,
    /// LAST ERROR column: `code: message` for an envelope, else the raw text
    /// (a lone `}` from the stackless daemon), on one line.
    pub last_error: String,
    /// The envelope's remediation, when present.
    pub remediation: Option<String>,
}

/// Build one Backoffs row at `now`.
#[must_use]
pub fn backoff_row(attempt: &ReapAttempt, now: i64) -> BackoffRow {
    let reason = envelope::read_reason(&attempt.last_error);
    BackoffRow {
        instance: sanitize_short(&attempt.instance, CUT_SHORT),
        attempts: attempt.attempts.to_string(),
        retry: time::retry_text(attempt.next_retry_at, now),
        due: attempt.next_retry_at <= now,
        last_error: sanitize_short(&reason.summary, CUT_LONG),
        remediation: reason
            .remediation
            .as_deref()
            .map(|r| sanitize_short(r, CUT_LONG)),
    }
}

/// One Activity line: `HH:MM:SS [xN ]actor instance kind: detail` (`xN`:
/// N equal entries folded into it, said before the text that may be cut).
/// The instance is omitted when empty (pass-wide entries); a detail that
/// repeats the kind (`refused: …` on a `refused` entry) is not said twice;
/// the detail's UTC times (`until 2026-12-01T14:33:31Z`) are shown as
/// clock times in `zone`, as the line's own ([`crate::model::time::reclock`]).
#[must_use]
pub fn activity_line(activity: &Activity, count: u32, zone: &jiff::tz::TimeZone) -> String {
    let mut line = crate::model::time::clock_in(activity.at, zone);
    // The fold's count right after the time, never cut off the end of a
    // long line.
    if count > 1 {
        line.push_str(&format!(" x{count}"));
    }
    line.push(' ');
    line.push_str(&activity.actor.to_string());
    if !activity.instance.is_empty() {
        line.push(' ');
        line.push_str(&sanitize_short(&activity.instance, CUT_SHORT));
    }
    line.push(' ');
    let kind = activity.kind.to_string();
    line.push_str(&kind);
    if activity.restored {
        line.push_str(RESTORED_MARK);
    }
    let detail = activity.detail.trim();
    let detail = detail
        .strip_prefix(kind.as_str())
        .and_then(|rest| rest.strip_prefix(':'))
        .map_or(detail, str::trim_start);
    if !detail.is_empty() {
        line.push_str(": ");
        let detail = crate::model::time::reclock(detail, activity.at, zone);
        line.push_str(&sanitize_short(&detail, CUT_LONG));
    }
    line
}

/// After the kind of an Activity line read back from the audit trail at
/// start ([`Activity::restored`]).
pub const RESTORED_MARK: &str = " (from audit.jsonl, before this console started)";

/// One Supervisor line: `HH:MM:SS text` plus ` xN`.
#[must_use]
pub fn supervisor_line(note: &SupervisorNote, count: u32, zone: &jiff::tz::TimeZone) -> String {
    format!(
        "{} {}{}",
        crate::model::time::clock_in(note.at, zone),
        sanitize_short(note.text.trim(), CUT_LONG),
        count_suffix(count)
    )
}

/// Whether the console runs a helper, which picks the Supervisor pane's
/// empty state (before its first event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HelperState {
    /// No helper configured: `no helper configured (--helper)`.
    NotConfigured,
    /// A helper is configured (or asked for and off, e.g. read-only):
    /// `waiting for the supervisor…`.
    Configured,
}

/// The banner while the store is busy: `store busy for 7s: showing the last
/// snapshot`.
#[must_use]
pub fn busy_banner(secs: u64) -> String {
    format!("store busy for {secs}s: showing the last snapshot")
}

/// The banner while the store cannot be read (message sanitized).
#[must_use]
pub fn error_banner(message: &str) -> String {
    format!(
        "store error: {} (showing the last snapshot)",
        sanitize_short(message, CUT_LONG)
    )
}

/// The one line shown when the terminal is below the minimum size.
#[must_use]
pub fn too_small(width: u16, height: u16) -> String {
    format!(
        "terminal too small: {width}x{height}, needs {}x{}",
        crate::ui::text::MIN_WIDTH,
        crate::ui::text::MIN_HEIGHT
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ActivityKind, Actor};
    use crate::model::Lease;

    fn lock(host: Option<&str>) -> OpLock {
        OpLock {
            operation: "up".into(),
            holder_pid: 15180,
            holder_start_time: 1,
            acquired_at: 1,
            holder_host: host.map(str::to_owned),
            claim_id: None,
        }
    }

    #[test]
    fn the_store_gone_banner_says_showing_the_last_snapshot_once() {
        assert_eq!(
            error_banner("the store file /s/state.db is gone: reconnecting when it returns"),
            "store error: the store file /s/state.db is gone: reconnecting when it returns \
             (showing the last snapshot)"
        );
    }

    #[test]
    fn helper_state_from_the_helper_mode() {
        use crate::ui::app::HelperMode;
        use HelperState::{Configured, NotConfigured};
        assert_eq!(HelperMode::None.state(), NotConfigured);
        assert_eq!(HelperMode::None.line(), "helper: none");
        assert_eq!(
            HelperMode::Program("demo-helper".into()).state(),
            Configured
        );
        assert_eq!(HelperMode::OffReadOnly.state(), Configured);
        assert_eq!(HelperMode::OffReadOnly.line(), "helper: off (read-only)");
    }

    #[test]
    fn lock_texts() {
        assert_eq!(
            lock_text(&lock(Some("vm")), Some(&Liveness::StalePidGone)),
            "up by pid 15180 on vm, stale: pid gone"
        );
        assert_eq!(
            lock_text(&lock(None), Some(&Liveness::Alive)),
            "up by pid 15180, alive"
        );
        assert_eq!(
            lock_text(&lock(Some("")), Some(&Liveness::ForeignHost(String::new()))),
            "up by pid 15180 on ?, foreign host"
        );
        assert_eq!(
            lock_text(&lock(Some("h\u{1b}[2J")), None),
            "up by pid 15180 on h␛[2J, unprobed"
        );
    }

    #[test]
    fn lease_cells() {
        let mut i = Instance {
            name: "a".into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(0),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 60,
                expires_at: 1000,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        };
        assert_eq!(
            lease_cell(&i, 1192),
            ("expired 3m 12s ago".into(), LeaseState::Expired)
        );
        assert_eq!(
            lease_cell(&i, 940),
            ("1m 00s left".into(), LeaseState::Running)
        );
        i.lease = None;
        assert_eq!(
            lease_cell(&i, 940),
            ("no lease".into(), LeaseState::NoLease)
        );
        i.status = Status::Tombstoned;
        i.tombstoned_at = Some(0);
        assert_eq!(
            lease_cell(&i, 8 * 86_400),
            ("tombstoned 8d 00h ago".into(), LeaseState::Tombstoned)
        );
    }

    #[test]
    fn activity_lines() {
        let a = Activity::new(
            1_795_960_686,
            Actor::Operator,
            "alpha",
            ActivityKind::Refused,
            "refused: lease has not expired (use d to tear down)",
        );
        assert_eq!(
            activity_line(&a, 1, &jiff::tz::TimeZone::UTC),
            "13:58:06 operator alpha refused: lease has not expired (use d to tear down)"
        );
        let b = Activity::new(0, Actor::Reaper, "", ActivityKind::Error, "busy\nstore");
        assert_eq!(
            activity_line(&b, 12, &jiff::tz::TimeZone::UTC),
            "00:00:00 x12 reaper error: busy␊store"
        );
        let c = Activity::new(0, Actor::Reaper, "golf", ActivityKind::Reaped, "");
        assert_eq!(
            activity_line(&c, 1, &jiff::tz::TimeZone::UTC),
            "00:00:00 reaper golf reaped"
        );
        // No RFC 3339 stamp beside the line's clock time.
        let d = Activity::new(
            1_796_159_653,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "teardown left survivors (attempt 2, retry at 2026-12-01T21:18:10Z)",
        );
        assert_eq!(
            activity_line(&d, 1, &jiff::tz::TimeZone::UTC),
            "21:14:13 reaper golf failed: teardown left survivors (attempt 2, retry at 21:18:10)"
        );
    }

    #[test]
    fn state_marks_tell_every_state_apart() {
        let attempt = |next_retry_at| ReapAttempt {
            instance: "a".into(),
            attempts: 1,
            last_error: "}".into(),
            next_retry_at,
        };
        let marks = |lease, locked, liveness: Option<Liveness>, retry: Option<i64>| {
            state_marks(
                lease,
                locked,
                liveness.as_ref(),
                retry.map(attempt).as_ref(),
                100,
            )
        };
        assert_eq!(marks(LeaseState::Running, false, None, None), "   ");
        assert_eq!(marks(LeaseState::Expired, false, None, Some(160)), "✗ …");
        assert_eq!(marks(LeaseState::Expired, false, None, Some(100)), "✗ !");
        assert_eq!(marks(LeaseState::Tombstoned, false, None, None), "†  ");
        assert_eq!(marks(LeaseState::NoLease, false, None, None), "-  ");
        assert_eq!(
            marks(LeaseState::Running, true, Some(Liveness::Alive), None),
            " L "
        );
        assert_eq!(
            marks(
                LeaseState::Running,
                true,
                Some(Liveness::ForeignHost("b".into())),
                None
            ),
            " F "
        );
        assert_eq!(
            marks(
                LeaseState::Running,
                true,
                Some(Liveness::StalePidReused),
                None
            ),
            " ? "
        );
        assert_eq!(marks(LeaseState::Running, true, None, None), " ? ");
    }

    #[test]
    fn long_text_is_cut() {
        let attempt = ReapAttempt {
            instance: "x".repeat(5000),
            attempts: 1,
            last_error: "e".repeat(5000),
            next_retry_at: 0,
        };
        let row = backoff_row(&attempt, 1);
        assert_eq!(row.instance.chars().count(), CUT_SHORT);
        assert_eq!(row.last_error.chars().count(), CUT_LONG);
        assert!(row.due);
        assert_eq!(row.retry, "due");
    }
}
