//! The operator's renew (`L`) and verify (`v`) on stackless 0.4.0, each
//! run on a thread of its own (never the render thread): the instance's
//! birth re-checked in a fresh read right before, then `stackless up
//! --name NAME --lease D --json` or `stackless verify NAME --json` as argv
//! in its own process group with a deadline, its answer read
//! ([`crate::model::verbs::interpret`]) and reported as one Activity
//! through the [`Recorder`] (the Activity pane, the audit trail, the log;
//! redacted there). Under `--dry-run` it says what would run and runs
//! nothing.

use std::path::PathBuf;
use std::time::Duration;

use super::jobs::Clock;
use super::teardown;
use crate::model::Instance;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::envelope::Exit;
use crate::model::redact::Redactor;
use crate::model::time::span;
pub use crate::model::verbs::VerbRequest;
use crate::model::verbs::{self, Outcome, Verb};
use crate::recorder::Recorder;
use crate::stop::StopToken;
use crate::store::{Access, Store};

/// How long a renew or verify may run before its group is killed: 10
/// minutes (a resume is health-gated like any `up`; a verify runs the
/// stack's own check with its own budget, `timeout_secs`).
pub const DEADLINE: Duration = Duration::from_secs(600);

/// Runs the operator's renews and verifies. Cheap to clone.
#[derive(Clone)]
pub struct VerbRunner {
    /// The store file (each run opens its own read connection).
    pub path: PathBuf,
    /// The stackless program (`--stackless`, `STACKLESS_BIN`).
    pub program: String,
    /// `--dry-run`: say what would run, run nothing.
    pub dry_run: bool,
    /// Where the outcome goes.
    pub recorder: Recorder,
    /// Unix seconds now.
    pub clock: Clock,
    /// The deadline of each run ([`DEADLINE`] in the console).
    pub deadline: Duration,
    /// The renews and verifies running (`renew alpha`, `verify alpha`):
    /// the console's exit reports those left running; a second of the
    /// same on a name is refused while one runs.
    pub running: super::InFlight,
}

impl VerbRunner {
    /// Run `request` on a thread of its own; its outcome arrives as an
    /// Activity. Returns at once.
    ///
    /// # Errors
    /// The thread could not be started (nothing ran; said as an Activity too).
    pub fn spawn(&self, request: VerbRequest) -> std::io::Result<()> {
        let runner = self.clone();
        let name = request.instance.name.clone();
        let verb = request.verb;
        let Some(guard) = self.running.claim(&verbs::running_key(verb, &name)) else {
            self.recorder.record(Activity::new(
                (self.clock)(),
                Actor::Operator,
                &name,
                ActivityKind::Refused,
                verbs::running_refusal(verb),
            ));
            return Ok(());
        };
        let started = std::thread::Builder::new()
            .name("verb".into())
            .spawn(move || {
                let activity = runner.execute(&request);
                drop(guard);
                runner.recorder.record(activity);
            });
        match started {
            Ok(_) => Ok(()),
            Err(error) => {
                self.recorder.record(Activity::new(
                    (self.clock)(),
                    Actor::Operator,
                    &name,
                    failed_kind(verb),
                    format!("{}: cannot start its thread: {error}", verb.word()),
                ));
                Err(error)
            }
        }
    }

    /// Re-check, run and read `request` on this thread: the Activity to
    /// record.
    #[must_use]
    pub fn execute(&self, request: &VerbRequest) -> Activity {
        let (seen, verb) = (&request.instance, request.verb);
        let line = |kind: ActivityKind, detail: String| {
            Activity::new((self.clock)(), Actor::Operator, &seen.name, kind, detail)
        };
        let Some(argv) = verbs::argv(&self.program, &seen.name, verb) else {
            return line(ActivityKind::Refused, "refused: not a DNS-safe name".into());
        };
        if let Err((kind, why)) = self.recheck(seen) {
            return line(kind, format!("{}: {why}; nothing run", verb.word()));
        }
        let shown = teardown::shell_line(&argv);
        if self.dry_run {
            return line(
                ActivityKind::WouldRun,
                format!("{shown} (dry run: nothing run)"),
            );
        }
        let started = (self.clock)();
        let result = run(&argv, self.deadline, &self.recorder.secrets().current());
        let code = match &result.exit {
            Exit::Code(code) => Some(*code),
            Exit::Signal(_) => None,
            Exit::TimedOut(secs) => {
                let mut activity =
                    line(failed_kind(verb), verbs::killed_text(verb, Some(*secs), 0));
                activity.duration = Some(result.took);
                return activity;
            }
            Exit::TooMuchOutput(bytes) => {
                let mut activity = line(failed_kind(verb), verbs::killed_text(verb, None, *bytes));
                activity.duration = Some(result.took);
                return activity;
            }
            other => {
                let why = crate::model::envelope::failure_reason("", other);
                let mut activity = line(failed_kind(verb), why);
                activity.stderr_tail.clone_from(&result.stderr_tail);
                activity.duration = Some(result.took);
                return activity;
            }
        };
        let outcome = verbs::interpret(verb, code, &result.stdout);
        let (kind, detail) = self.read_back(seen, verb, &outcome, started);
        let mut activity = line(kind, detail);
        match &outcome {
            Outcome::Verified(_) | Outcome::Refused(..) => {
                activity = activity.with_envelope(result.stdout.trim());
            }
            Outcome::Broken(_) => activity.stderr_tail.clone_from(&result.stderr_tail),
            Outcome::Renewed { .. } => {}
        }
        activity.duration = Some(result.took);
        activity
    }

    /// What `outcome` means once the lease is read back from this store
    /// (`started`: unix seconds before the command ran): a renew or a
    /// verify that answered `ok` but left the lease where it was acted on
    /// another store (`--stackless` reaching another one); a renew whose
    /// `up` failed may still have renewed (0.4.0 renews at admission).
    fn read_back(
        &self,
        seen: &Instance,
        verb: Verb,
        outcome: &Outcome,
        started: i64,
    ) -> (ActivityKind, String) {
        let lease = self.lease_now(&seen.name);
        let now = (self.clock)();
        let expires = |l: &crate::model::Lease| {
            format!("expires in {}", span(l.expires_at.saturating_sub(now)))
        };
        // Moved: it ends no sooner than `D` after the command started (one
        // second of slack for the clock's rounding).
        let moved = |secs: i64| {
            lease
                .as_ref()
                .filter(|l| l.expires_at >= started + secs - 1)
        };
        let elsewhere = format!(
            "stackless answered, but the lease in {} did not move: is --stackless reaching another store? (pass a wrapper that points it at this store)",
            self.path.display()
        );
        match (outcome, verb) {
            (Outcome::Renewed { instance_id }, Verb::Renew { lease_secs }) => {
                let secs = i64::try_from(lease_secs).unwrap_or(i64::MAX);
                if moved(secs).is_none() {
                    return (ActivityKind::RenewFailed, elsewhere);
                }
                let born = match (instance_id, &seen.birth) {
                    (Some(id), Some(birth)) => id != birth.instance_id(),
                    _ => false,
                };
                let at = lease.as_ref().map(|l| l.expires_at);
                let text = verbs::renewed_text(lease_secs, at, now, born);
                (ActivityKind::Renewed, text)
            }
            (Outcome::Verified(passed), _) => {
                let recorded = lease.as_ref().map_or(0, |l| l.duration_secs);
                if lease.is_some() && moved(recorded).is_none() {
                    return (ActivityKind::VerifyFailed, elsewhere);
                }
                (ActivityKind::Verified, verbs::verified_text(passed))
            }
            (Outcome::Refused(error, _), Verb::Renew { lease_secs }) => {
                let secs = i64::try_from(lease_secs).unwrap_or(i64::MAX);
                let failed = verbs::refused_text(error);
                match moved(secs) {
                    Some(l) => (
                        ActivityKind::RenewFailed,
                        format!(
                            "the up failed ({failed}) but the lease was renewed: {}",
                            expires(l)
                        ),
                    ),
                    None => (ActivityKind::RenewFailed, failed),
                }
            }
            (Outcome::Refused(error, _), _) => (failed_kind(verb), verbs::refused_text(error)),
            (Outcome::Broken(why), _) => (failed_kind(verb), why.clone()),
            (Outcome::Renewed { .. }, Verb::Verify) => {
                (ActivityKind::Error, "a verify answered as an up".into())
            }
        }
    }

    /// The instance re-read in a fresh transaction: still there, still
    /// active, the same birth (`instance_id`, v14) as shown, no operation
    /// queued or running on it (the command would queue behind it).
    /// `Err((kind, why))` otherwise.
    fn recheck(&self, seen: &Instance) -> Result<(), (ActivityKind, String)> {
        let mut store = Store::open(&self.path, Access::ReadOnly)
            .map_err(|e| (ActivityKind::Error, format!("cannot open the store: {e}")))?;
        let current = store
            .recheck(&seen.name)
            .map_err(|e| (ActivityKind::Error, e.to_string()))?;
        let Some(current) = current else {
            return Err((
                ActivityKind::Aborted,
                "the instance is gone from the store".into(),
            ));
        };
        if current.birth != seen.birth {
            return Err((
                ActivityKind::Aborted,
                "the name was born again since it was shown (another instance_id)".into(),
            ));
        }
        if current.status != crate::model::Status::Active {
            return Err((
                ActivityKind::Aborted,
                format!("the instance is {} now", current.status.as_str()),
            ));
        }
        if let Some((op, status)) = &current.pending {
            return Err((
                ActivityKind::Refused,
                format!(
                    "refused: {} has a pending operation ({op} {}) now",
                    crate::model::text::sanitize_short(&seen.name, 40),
                    status.as_str()
                ),
            ));
        }
        Ok(())
    }

    /// The lease of `name` as the store holds it now (`None`: unreadable
    /// or no lease).
    fn lease_now(&self, name: &str) -> Option<crate::model::Lease> {
        let mut store = Store::open(&self.path, Access::ReadOnly).ok()?;
        let current = store.recheck(name).ok()??;
        current.lease
    }
}

/// The kind a failed `verb` is reported as.
const fn failed_kind(verb: Verb) -> ActivityKind {
    match verb {
        Verb::Renew { .. } => ActivityKind::RenewFailed,
        Verb::Verify => ActivityKind::VerifyFailed,
    }
}

/// Run `argv` to its end on a one-thread runtime of this thread's own,
/// through the one runner (`crate::process_group::run`): what it answered
/// comes back redacted by `redactor` and the credential rules.
fn run(argv: &[String], deadline: Duration, redactor: &Redactor) -> teardown::TeardownResult {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(teardown::run(argv, deadline, &StopToken::new(), redactor)),
        Err(error) => teardown::TeardownResult {
            exit: Exit::NotStarted(format!("cannot start a runtime: {error}")),
            stdout: String::new(),
            stderr_tail: String::new(),
            took: Duration::ZERO,
        },
    }
}
