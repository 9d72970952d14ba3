//! What a finished `down` means ([`JobRunner::outcome`]): the kind and
//! line of its Activity, and, for a failed reap, the `reap_attempts` row
//! written (retried while the store is busy) or owed ([`Unrecorded`]).

use std::time::Duration;

use super::{Intent, JobRunner, Owed, RECORD_RETRY_FOR};
use crate::model::activity::ActivityKind;
use crate::model::envelope::{self, LOCK_HELD_CODE};
use crate::model::{Instance, ReapAttempt};
use crate::store::{Store, StoreError};

impl JobRunner {
    /// What a finished `down` means, with its failure recorded (a reap)
    /// or owed when the store refuses it ([`Unrecorded`]).
    pub(super) fn outcome(
        &self,
        store: &mut Store,
        seen: &Instance,
        intent: Intent,
        result: &super::teardown::TeardownResult,
        done: i64,
    ) -> Outcome {
        let name = seen.name.as_str();
        let secs = result.took.as_secs_f64();
        if let crate::model::envelope::Exit::NotStarted(why) = &result.exit {
            // `down` never ran: a problem of this console's set-up, not of
            // the instance, so nothing is recorded in the shared store (a
            // backoff here would delay the stackless daemon's own reaping).
            let detail = format!("{why}; nothing recorded (check --down-cmd)");
            return Outcome::new(ActivityKind::Error, detail).without_stderr();
        }
        if result.exit == crate::model::envelope::Exit::Interrupted {
            // The operator stopped the pass: not the instance's failure, so
            // no attempt is recorded and the backoff does not grow.
            return Outcome::new(
                ActivityKind::Stopped,
                format!(
                    "the reap pass was interrupted: down stopped after {secs:.1}s, nothing recorded"
                ),
            );
        }
        if let Some(still) = result
            .succeeded()
            .then(|| still_active(store, seen))
            .flatten()
        {
            // "Silence is not success": `down` said 0, the row says the
            // instance is still there. Counted and recorded as a failure.
            let detail =
                format!("down exited 0 in {secs:.1}s but {still}; not counted as torn down");
            let detail = match intent {
                Intent::Reap => match record_failure(store, name, &detail, done) {
                    Ok(row) => format!(
                        "{detail} (attempt {}, retry at {})",
                        row.attempts,
                        crate::model::time::rfc3339_or_raw(row.next_retry_at)
                    ),
                    Err(error) => format!("{detail} (not recorded: {error})"),
                },
                Intent::TearDown => detail,
            };
            return Outcome::new(ActivityKind::Failed, detail);
        }
        if result.succeeded() {
            let mut detail = format!("down succeeded in {secs:.1}s");
            if let Err(error) = store.clear_reap_failure(name)
                && !matches!(error, StoreError::ReadOnly(_))
            {
                detail.push_str(&format!(" (reap attempt not cleared: {error})"));
            }
            let kind = match intent {
                Intent::Reap => ActivityKind::Reaped,
                Intent::TearDown => ActivityKind::TornDown,
            };
            return Outcome::new(kind, detail);
        }
        if envelope::parse_error(&result.stdout).is_some_and(|e| e.code == LOCK_HELD_CODE) {
            // Another operation holds the lock: not a teardown failure, so
            // no attempt is recorded and the backoff does not grow.
            return Outcome::new(
                ActivityKind::SkippedLocked,
                "down answered state.lock.held".into(),
            );
        }
        let reason = envelope::failure_reason(&result.stdout, &result.exit);
        let killed = matches!(result.exit, crate::model::envelope::Exit::TimedOut(_));
        if killed && let Some(outcome) = self.finished_after_deadline(store, seen, intent, &reason)
        {
            return outcome;
        }
        let detail = self.failed(store, name, intent, &reason, done);
        // The controller may have finished between that look and the
        // record: the record is taken back.
        if killed && let Some(outcome) = self.finished_after_deadline(store, seen, intent, &reason)
        {
            return outcome;
        }
        Outcome {
            envelope: Some(reason),
            ..Outcome::new(ActivityKind::Failed, detail)
        }
    }

    /// A `down` killed at this console's deadline (`reason`: `timed out
    /// after 10m`) whose teardown was finished anyway: stackless 0.4.0's
    /// `down` runs as a controller operation, which goes on to its end
    /// when the CLI is killed and tombstones the instance, then clears its
    /// reap failure (stackless-core-0.4.0 src/engine/run.rs:643-647). When
    /// the store shows `seen`'s birth torn down (tombstoned, gone, or born
    /// again), it is reported and counted as torn down, and no backoff is
    /// left: a record of this console's, or one it still owes, is taken
    /// back. `None`: still active (or the store could not be read), a
    /// failure.
    fn finished_after_deadline(
        &self,
        store: &mut Store,
        seen: &Instance,
        intent: Intent,
        reason: &str,
    ) -> Option<Outcome> {
        let state = match while_busy(|| store.recheck(&seen.name)) {
            Ok(Some(now)) if now.birth != seen.birth => {
                "a new birth of the instance (this one torn down)"
            }
            Ok(Some(now)) if now.status == crate::model::Status::Active => return None,
            Ok(Some(_)) => "the instance tombstoned",
            Ok(None) => "no such instance any more",
            Err(_) => return None,
        };
        let mut detail = format!(
            "down {reason} and was killed, but the store shows {state}: \
             the controller finished the teardown after this console's deadline"
        );
        if self.unrecorded.owed().iter().any(|o| o.name == seen.name) {
            self.unrecorded.settle(&seen.name);
        }
        if let Err(error) = while_busy(|| store.clear_reap_failure(&seen.name))
            && !matches!(error, StoreError::ReadOnly(_))
        {
            detail.push_str(&format!(" (reap attempt not cleared: {error})"));
        }
        let kind = match intent {
            Intent::Reap => ActivityKind::Reaped,
            Intent::TearDown => ActivityKind::TornDown,
        };
        Some(Outcome::new(kind, detail))
    }

    /// A failed `down`'s line: its reason shown short, and for a reap the
    /// attempt recorded (or owed: the reaper pauses until it is written).
    fn failed(
        &self,
        store: &mut Store,
        name: &str,
        intent: Intent,
        reason: &str,
        done: i64,
    ) -> String {
        let shown = envelope::read_reason(reason).summary;
        if intent != Intent::Reap {
            return shown;
        }
        // The store gets `code: message`, as stackless shows it; the
        // whole envelope goes with the Activity, to the audit trail.
        let reason = envelope::stored_reason(reason);
        match record_failure(store, name, &reason, done) {
            Ok(row) => format!(
                "{shown} (attempt {}, retry at {})",
                row.attempts,
                crate::model::time::rfc3339_or_raw(row.next_retry_at)
            ),
            // Busy past RECORD_RETRY_FOR, or another error: not recorded
            // (the audit line says so). Owed: the reaper pauses until it
            // is written.
            Err(error) => {
                self.unrecorded.push(Owed {
                    name: name.to_owned(),
                    reason,
                    at: done,
                    error: error.to_string(),
                });
                format!(
                    "{shown} (not recorded: {error}; the reaper pauses until the store accepts writes)"
                )
            }
        }
    }
}

/// What a finished `down` means ([`JobRunner::outcome`]): the Activity
/// line's kind and detail, the failure envelope it carries, and whether
/// `down`'s stderr tail goes with it.
pub(super) struct Outcome {
    pub(super) kind: ActivityKind,
    pub(super) detail: String,
    pub(super) envelope: Option<String>,
    pub(super) stderr: bool,
}

impl Outcome {
    const fn new(kind: ActivityKind, detail: String) -> Self {
        Self {
            kind,
            detail,
            envelope: None,
            stderr: true,
        }
    }

    fn without_stderr(self) -> Self {
        Self {
            stderr: false,
            ..self
        }
    }
}

/// After a `down` that exited 0: what the store says if the instance is
/// still there (`the instance is still active`), read in a fresh
/// transaction; `None` when it is gone, tombstoned, or born again (another
/// birth: the old one was torn down). A busy store is read again for up
/// to [`RECORD_RETRY_FOR`]; any other read error is not success either
/// ("silence is not success"): the teardown is not counted, and its
/// failure is recorded or owed.
fn still_active(store: &mut Store, seen: &Instance) -> Option<String> {
    match while_busy(|| store.recheck(&seen.name)) {
        Ok(Some(now)) if now.status == crate::model::Status::Active && now.birth == seen.birth => {
            Some("the instance is still active in the store".to_owned())
        }
        Ok(_) => None,
        // Nothing could check the row (a store that could not be opened
        // again after `down`, e.g. given a second name meanwhile): not
        // counted as torn down, and the reason is the true one.
        Err(error) => Some(format!("the store could not be read to check it ({error})")),
    }
}

/// Record a failed reap, retrying while the store is busy, for up to
/// [`RECORD_RETRY_FOR`].
fn record_failure(
    store: &mut Store,
    name: &str,
    reason: &str,
    at: i64,
) -> Result<ReapAttempt, StoreError> {
    while_busy(|| store.record_reap_failure(name, reason, at))
}

/// `call` again every 100 ms while it answers `Busy`, for up to
/// [`RECORD_RETRY_FOR`]; then its last answer.
fn while_busy<T>(mut call: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let started = std::time::Instant::now();
    loop {
        match call() {
            Err(error) if error.is_busy() && started.elapsed() < RECORD_RETRY_FOR => {
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}
