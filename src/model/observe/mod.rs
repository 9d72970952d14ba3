//! What changed in the store between two snapshots that this console did
//! not do itself: an instance that appeared (or a tombstoned name born
//! again), an instance tombstoned by someone else, a controller operation
//! that finished. The UI turns them into Activity lines (`observed`,
//! `controller`); it leaves out its own teardowns. Pure.

use std::collections::HashMap;

use super::activity::{Activity, ActivityKind, Actor, OpRef};
use super::envelope::parse_error;
use super::operation::{OpStatus, Operation};
use super::rows::{Rows, Status};

/// One change seen between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// A name that was not in the store, or a tombstoned name that is active
    /// again (`reborn`: stackless 0.4.0 updates the row in place with a new
    /// `instance_id`).
    Appeared {
        /// The instance name, as stored.
        name: String,
        /// Whether the row was there before, tombstoned or of another birth.
        reborn: bool,
    },
    /// An instance that was not tombstoned and now is.
    Tombstoned {
        /// The instance name, as stored.
        name: String,
    },
    /// A controller operation that was pending (or not shown) and is now
    /// finished.
    Finished(Box<Operation>),
    /// A `down` the controller ran (to success, or failed) on an instance
    /// whose lease had run out when the `down` was queued: its lease reaper's
    /// (stackless 0.4.0 controller: each pass queues a `down` for every
    /// expired lease, `{"name","verb":"down"}` as the CLI's own).
    LeaseReaped(Box<Operation>),
}

impl Observed {
    /// The instance the change is about.
    #[must_use]
    pub fn instance(&self) -> &str {
        match self {
            Self::Appeared { name, .. } | Self::Tombstoned { name } => name,
            Self::Finished(op) | Self::LeaseReaped(op) => &op.instance,
        }
    }

    /// The Activity line for it at `at` (unix seconds): `observed alpha
    /// appeared`, `observed alpha tombstoned`, `controller alpha succeeded:
    /// down in 0.4s, after 3m 19s queued` (its run time, then its wait in
    /// the queue: [`Operation::took_and_queued`]), `controller bravo failed: up in 5s: code: message`.
    #[must_use]
    pub fn activity(&self, at: i64) -> Activity {
        match self {
            Self::Appeared { name, reborn } => Activity::new(
                at,
                Actor::Observed,
                name,
                ActivityKind::Appeared,
                if *reborn { "born again" } else { "" },
            ),
            Self::Tombstoned { name } => {
                Activity::new(at, Actor::Observed, name, ActivityKind::Tombstoned, "")
            }
            Self::Finished(op) => {
                let kind = match (&op.status, op.verb.as_str()) {
                    // A verify that failed is no failed teardown: it reads
                    // as the operator's `v` does.
                    (OpStatus::Failed, "verify") => ActivityKind::VerifyFailed,
                    (OpStatus::Succeeded, _) => ActivityKind::Succeeded,
                    (OpStatus::Failed, _) => ActivityKind::Failed,
                    (OpStatus::Cancelled, _) => ActivityKind::Cancelled,
                    _ => ActivityKind::Interrupted,
                };
                let mut detail = format!("{} in {}", op.verb, op.took_and_queued(at));
                if let OpStatus::Other(status) = &op.status {
                    detail.push_str(&format!(" ({status})"));
                }
                let error = op
                    .error_json
                    .as_deref()
                    .and_then(parse_error)
                    .map(|e| e.summary())
                    .unwrap_or_default();
                if !error.is_empty() {
                    detail.push_str(": ");
                    detail.push_str(&error);
                }
                Activity::new(at, Actor::Controller, &op.instance, kind, detail)
                    .with_operation(op_ref(op, error))
            }
            Self::LeaseReaped(op) if op.status == OpStatus::Failed => {
                let error = op
                    .error_json
                    .as_deref()
                    .and_then(parse_error)
                    .map(|e| e.summary())
                    .unwrap_or_default();
                let mut detail = format!("down by its lease reaper: in {}", op.took_and_queued(at));
                if !error.is_empty() {
                    detail.push_str(": ");
                    detail.push_str(&error);
                }
                Activity::new(
                    at,
                    Actor::Controller,
                    &op.instance,
                    ActivityKind::Failed,
                    detail,
                )
                .with_operation(op_ref(op, error))
            }
            Self::LeaseReaped(op) => Activity::new(
                at,
                Actor::Controller,
                &op.instance,
                ActivityKind::Reaped,
                format!(
                    "by its lease reaper (lease expired): down in {}",
                    op.took_and_queued(at)
                ),
            )
            .with_operation(op_ref(op, String::new())),
        }
    }

    /// The Activity line at `at` for the outcome of a `down` the operator
    /// queued (`d` behind a pending operation: [`OwnDown::Queued`]): the
    /// operator's, not the controller's nor its lease reaper's: `operator
    /// alpha torn down: queued down ran: down in 0.4s`, `operator foxtrot
    /// failed: queued down: down in 1s: code: message`. `None` for a
    /// change that is no operation's outcome.
    #[must_use]
    pub fn as_operators(&self, at: i64) -> Option<Activity> {
        let op = match self {
            Self::Finished(op) | Self::LeaseReaped(op) => op,
            Self::Appeared { .. } | Self::Tombstoned { .. } => return None,
        };
        let mut activity = Self::Finished(op.clone()).activity(at);
        activity.actor = Actor::Operator;
        if op.status == OpStatus::Succeeded {
            activity.kind = ActivityKind::TornDown;
            activity.detail = format!("queued down ran: {}", activity.detail);
        } else {
            activity.detail = format!("queued down: {}", activity.detail);
        }
        Some(activity)
    }
}

/// The [`OpRef`] of `op`, its error summary `error`.
fn op_ref(op: &Operation, error: String) -> OpRef {
    OpRef {
        id: op.id.clone(),
        verb: op.verb.clone(),
        error,
    }
}

/// How long after the operator's `y` to a queued teardown the `down` it
/// submits may be created, seconds: the CLI's own deadline
/// (`crate::controller::queue_down::TIMEOUT`).
pub const QUEUED_WITHIN_SECS: i64 = 60;

/// How far an operation's `created_at` may lie outside a teardown's
/// window and still be its own, seconds: both clocks are this machine's,
/// read at whole seconds.
const SLACK_SECS: i64 = 1;

/// How long a window is kept after it closed, seconds (the Activity
/// title's hour).
const KEPT_SECS: i64 = 3600;

/// Most windows kept.
const KEPT_WINDOWS: usize = 512;

/// Who in this console started a controller `down` operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnDown {
    /// A teardown this console ran and waited for (the reaper's, the
    /// operator's `d`): `stackless down NAME` (0.4.0) submits it as an
    /// operation and waits for it. Its outcome is that actor's own line
    /// already; the operation's is not said again.
    Ran(Actor),
    /// The operator's queued teardown (`stackless down NAME --no-wait`):
    /// its outcome is observed, and is the operator's.
    Queued,
}

/// One teardown (or the operator's renew or verify) of this console's, in
/// unix seconds.
#[derive(Debug, Clone)]
struct Window {
    instance: String,
    /// The verb of the operation it submits: `down`, `up` (a renew),
    /// `verify`.
    verb: &'static str,
    who: OwnDown,
    from: i64,
    /// `i64::MAX` while it runs.
    to: i64,
    /// The operation it submitted, once known.
    op: Option<String>,
}

/// The controller `down` operations this console submitted itself (stackless
/// 0.4.0: every `down` is an `operations` row), told apart from the
/// controller's own (its lease reaper queues a `down` for every expired
/// lease, again after each failure): each teardown of this console submits
/// one operation, so each claims at most one, the first `down` of its
/// instance created while it ran (or, queued, the one whose id the CLI
/// answered). Any other `down` is the controller's, said and counted as
/// such, however close in time. The operator's renews and verifies claim
/// their `up` and `verify` operations the same way
/// ([`OwnDowns::started_verb`]). Pure: times are parameters.
#[derive(Debug, Clone, Default)]
pub struct OwnDowns {
    windows: std::collections::VecDeque<Window>,
}

impl OwnDowns {
    /// A teardown of `instance` by `who` began at `at` (a [`OwnDown::Ran`]
    /// runs until [`OwnDowns::ended`]; a [`OwnDown::Queued`] is submitted
    /// within [`QUEUED_WITHIN_SECS`]).
    pub fn started(&mut self, instance: &str, who: OwnDown, at: i64) {
        let to = match who {
            OwnDown::Ran(_) => i64::MAX,
            OwnDown::Queued => at.saturating_add(QUEUED_WITHIN_SECS),
        };
        self.open(instance, "down", who, at, to);
    }

    /// The operator's renew or verify of `instance` (`verb`: the operation
    /// it submits, [`crate::model::verbs::Verb::operation_verb`]) began at
    /// `at`, and runs until [`OwnDowns::ended_verb`]: stackless 0.4.0 runs
    /// `verify NAME` and `up --name NAME --lease D` as operations of the
    /// controller's queue, whose outcome is the operator's line already.
    pub fn started_verb(&mut self, instance: &str, verb: &'static str, at: i64) {
        self.open(instance, verb, OwnDown::Ran(Actor::Operator), at, i64::MAX);
    }

    fn open(&mut self, instance: &str, verb: &'static str, who: OwnDown, at: i64, to: i64) {
        self.windows
            .retain(|w| w.to == i64::MAX || w.to.saturating_add(KEPT_SECS) >= at);
        if self.windows.len() >= KEPT_WINDOWS {
            self.windows.pop_front();
        }
        self.windows.push_back(Window {
            instance: instance.to_owned(),
            verb,
            who,
            from: at,
            to,
            op: None,
        });
    }

    /// The teardown of `instance` this console ran ended at `at`.
    pub fn ended(&mut self, instance: &str, at: i64) {
        self.ended_verb(instance, "down", at);
    }

    /// The operator's `verb` on `instance` ([`OwnDowns::started_verb`])
    /// ended at `at` (its line was logged).
    pub fn ended_verb(&mut self, instance: &str, verb: &str, at: i64) {
        if let Some(w) = self
            .windows
            .iter_mut()
            .find(|w| w.instance == instance && w.verb == verb && w.to == i64::MAX)
        {
            w.to = at.max(w.from);
        }
    }

    /// The operator's queued teardown of `instance` was answered with
    /// operation `id`: that one is the operator's, whatever was claimed
    /// before.
    pub fn queued_as(&mut self, instance: &str, id: &str) {
        if self.windows.iter().any(|w| w.op.as_deref() == Some(id)) {
            return;
        }
        if let Some(w) = self
            .windows
            .iter_mut()
            .rev()
            .find(|w| w.instance == instance && w.who == OwnDown::Queued)
        {
            w.op = Some(id.to_owned());
        }
    }

    /// Whose `op` is, when this console submitted it: the window that
    /// claimed it before, else the oldest of `op`'s instance and verb not
    /// yet matched whose window holds `op.created_at` (it claims it now).
    /// `None` for the controller's own (and anyone else's).
    pub fn claim(&mut self, op: &Operation) -> Option<OwnDown> {
        if let Some(w) = self
            .windows
            .iter()
            .find(|w| w.op.as_deref() == Some(op.id.as_str()))
        {
            return Some(w.who);
        }
        let w = self.windows.iter_mut().find(|w| {
            w.op.is_none()
                && w.verb == op.verb
                && w.instance == op.instance
                && w.from.saturating_sub(SLACK_SECS) <= op.created_at
                && op.created_at <= w.to.saturating_add(SLACK_SECS)
        })?;
        w.op = Some(op.id.clone());
        Some(w.who)
    }
}

/// What changed from `prev` to `next`, instances first (by name), then
/// operations (in `next`'s order). An operation counts as finished when it
/// is finished in `next` and was pending in `prev` or not in `prev` at all
/// (it ran between the two snapshots); one already finished in `prev` is
/// never reported again.
#[must_use]
pub fn changes(prev: &Rows, next: &Rows) -> Vec<Observed> {
    let mut out = Vec::new();
    // Both in strict name order (every snapshot of a store stackless
    // wrote): one walk side by side instead of a binary search per
    // instance, which cost 100,000 cache-missing searches at 100k
    // instances. Otherwise (duplicate names, rows made by hand) as before.
    let strict = |rows: &Rows| rows.instances.is_sorted_by(|a, b| a.name < b.name);
    let merge = strict(prev) && strict(next);
    let mut cursor = 0;
    for instance in &next.instances {
        let before = if merge {
            while prev
                .instances
                .get(cursor)
                .is_some_and(|old| old.name < instance.name)
            {
                cursor += 1;
            }
            let old = prev.instances.get(cursor);
            if old.is_some_and(|old| std::sync::Arc::ptr_eq(old, instance)) {
                // The same row, shared by the two reads: nothing changed.
                continue;
            }
            old.filter(|old| old.name == instance.name)
                .map(std::sync::Arc::as_ref)
        } else {
            prev.instance(&instance.name)
        };
        let active = instance.status == Status::Active;
        match before {
            None => out.push(Observed::Appeared {
                name: instance.name.clone(),
                reborn: false,
            }),
            Some(old) => {
                let new_birth = match (&old.birth, &instance.birth) {
                    (Some(a), Some(b)) => a.instance_id() != b.instance_id(),
                    _ => false,
                };
                if active && (old.status == Status::Tombstoned || new_birth) {
                    out.push(Observed::Appeared {
                        name: instance.name.clone(),
                        reborn: true,
                    });
                } else if instance.status == Status::Tombstoned && old.status != Status::Tombstoned
                {
                    out.push(Observed::Tombstoned {
                        name: instance.name.clone(),
                    });
                }
            }
        }
    }
    let before: HashMap<&str, &OpStatus> = prev
        .operations
        .iter()
        .map(|op| (op.id.as_str(), &op.status))
        .collect();
    for op in &next.operations {
        if op.status.is_pending() {
            continue;
        }
        if before.get(op.id.as_str()).is_none_or(|s| s.is_pending()) {
            let op = Box::new(op.clone());
            out.push(if lease_reaped(prev, next, &op) {
                Observed::LeaseReaped(op)
            } else {
                Observed::Finished(op)
            });
        }
    }
    out
}

/// Whether `op` is a `down` that succeeded or failed on an instance whose
/// lease (as `prev` held it, else `next`) had run out by the time it was
/// queued: what the 0.4.0 controller's lease reaper queues. 0.4.0's
/// `operations` row does not say who asked for a `down` (no origin
/// column: migration 8), so this is the rule: a `down` of an expired lease
/// is the lease reaper's, unless this console claimed it as its own or
/// the operator's queued one first.
fn lease_reaped(prev: &Rows, next: &Rows, op: &Operation) -> bool {
    op.verb == "down"
        && matches!(op.status, OpStatus::Succeeded | OpStatus::Failed)
        && prev
            .instance(&op.instance)
            .or_else(|| next.instance(&op.instance))
            .and_then(|i| i.lease)
            .is_some_and(|lease| lease.expires_at <= op.created_at)
}

/// The controller `down` operations of `rows` that finished (succeeded
/// or failed) within the hour before `now` (unix seconds), as the Activity
/// lines [`changes`] would have given them had the console watched them
/// finish, each at its `updated_at` (when it ended): what the Activity
/// title's `1h reaped`/`failed` and by-actor counts hold for the time before
/// the console's first snapshot, which logs no line (no flood). A `down`
/// whose lease had run out when it was queued is the lease reaper's
/// (`reaped`). A `down` that `restored` (the teardowns an earlier console
/// recorded, read back from the audit trail: instance and unix seconds)
/// stands for is left out, each restored teardown standing for at most one
/// `down` of its instance that ran when it ended (stackless 0.4.0: every
/// `down` is an `operations` row). Newest first, as `rows` lists finished
/// operations (at most [`super::operation::FINISHED_SHOWN`] of them).
#[must_use]
pub fn finished_downs_last_hour(rows: &Rows, restored: &[(&str, i64)], now: i64) -> Vec<Activity> {
    let mut unmatched: Vec<(&str, i64)> = restored.to_vec();
    let mut out = Vec::new();
    for op in &rows.operations {
        if op.verb != "down" || !matches!(op.status, OpStatus::Succeeded | OpStatus::Failed) {
            continue;
        }
        if !(0..KEPT_SECS).contains(&now.saturating_sub(op.updated_at)) {
            continue;
        }
        let own = unmatched.iter().position(|(name, at)| {
            *name == op.instance
                && op.created_at.saturating_sub(SLACK_SECS) <= *at
                && *at <= op.updated_at.saturating_add(SLACK_SECS)
        });
        if let Some(own) = own {
            unmatched.swap_remove(own);
            continue;
        }
        let at = op.updated_at;
        let boxed = Box::new(op.clone());
        let change = if lease_reaped(rows, rows, op) {
            Observed::LeaseReaped(boxed)
        } else {
            Observed::Finished(boxed)
        };
        out.push(change.activity(at));
    }
    out
}

#[cfg(test)]
mod tests;
