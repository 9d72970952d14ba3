//! Teardown jobs: each instance to reap or tear down runs on a thread of
//! its own (never two for one instance: [`InFlight`]). A job re-checks its
//! instance in a fresh transaction, runs the teardown (`stackless down NAME
//! --json`), and records the outcome (docs/stackless-state-store.md §6).
//! The reaper (`super::runner`) and the operator keys (`r`, `d`) run the
//! same jobs.

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::teardown::{self, DownCommand};

mod outcome;
mod shared;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::birth_check::BirthSeen;
use crate::model::{Instance, ReapAttempt};
use crate::recorder::Recorder;
use crate::stop::StopToken;
use crate::store::{Access, Recheck, Store};
pub use shared::{InFlight, InFlightGuard, Owed, StoreTimes, Unrecorded};

/// Unix seconds now (the system clock, or a fixed one in tests).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// How the reaper runs.
#[derive(Debug, Clone)]
pub struct ReaperConfig {
    /// The teardown command (`stackless down {name} --json` by default).
    pub down: DownCommand,
    /// Time between passes (stackless's daemon: 60 s).
    pub tick: Duration,
    /// A teardown still running after this is killed and counted as failed.
    pub down_timeout: Duration,
    /// Decide and report `would reap`, but run and write nothing.
    pub dry_run: bool,
    /// At most this many teardowns at once (`--reap-concurrency`, at least 1).
    pub concurrency: usize,
}

/// What the operator (or the reaper) asked for one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// A reap: failures are recorded in `reap_attempts` with a backoff.
    Reap,
    /// The operator's `d`: a teardown of an active instance before its lease
    /// runs out; a failure is reported but not recorded as a reap attempt
    /// (stackless's own `down` does not record one either).
    TearDown,
}

/// One teardown to run: the instance as the decision saw it (and its reap
/// attempt, if any), who asked (the reaper, or the operator's `r`/`d`),
/// and what for. The job re-reads the instance before acting and aborts
/// when it changed ([`JobRunner::spawn`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The instance as the decision saw it.
    pub instance: Instance,
    /// Its `reap_attempts` row as the decision saw it (`None`: none).
    pub attempt: Option<ReapAttempt>,
    /// Who asked.
    pub actor: Actor,
    /// A reap (failures recorded with a backoff) or the operator's `d`.
    pub intent: Intent,
}

/// Runs teardown jobs ([`Job`]): each on a thread of its own with its own
/// store connection, never two for one instance. Cheap to clone; shared by
/// the reaper and the operator keys, whose jobs share one in-flight set,
/// one list of owed records and one recorder.
#[derive(Clone)]
pub struct JobRunner {
    /// The store file (each job opens its own connection).
    path: PathBuf,
    /// Down command, timeout, dry run, concurrency.
    pub(super) config: ReaperConfig,
    /// The shared in-flight set.
    pub(super) inflight: InFlight,
    /// Unix seconds now.
    pub(super) clock: Clock,
    /// Where activities go (audited, logged, forwarded), and whether the
    /// audit trail takes writes: the reaper pauses while it does not.
    pub(super) recorder: Recorder,
    /// Whether `clock` is checked against the kernel's clock before acting
    /// ([`super::clock::doubt`]): on in the console and `reap --once`; off
    /// for a fixed test clock, which the kernel would always doubt.
    clock_check: bool,
    /// Cancelled when `reap --once` is interrupted (an operator's signal,
    /// or, on the `--controller` remote side, the launcher's connection
    /// closing): running teardowns are stopped ([`ActivityKind::Stopped`])
    /// and no more start. The console passes one nobody cancels (its
    /// teardowns outlive it).
    pub(super) stop: StopToken,
    /// Failed reaps that could not be recorded: the reaper and the keys
    /// pause while any is owed.
    pub(super) unrecorded: Unrecorded,
    /// The newest write time in the store, as the reaper's last pass read
    /// it: evidence against a wall clock set wrong for the whole machine
    /// ([`super::clock::doubt_from_store`]).
    pub(super) store_times: StoreTimes,
    /// How long each of the jobs' store statements waits for another
    /// process's write lock before answering busy (stackless's 5 s:
    /// [`crate::store::BUSY_TIMEOUT`]; a test sets a short one).
    busy_timeout: Duration,
}

impl std::fmt::Debug for JobRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobRunner")
            .field("path", &self.path)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl JobRunner {
    /// Jobs on the store at `path`, run as `config` says, reporting to
    /// `recorder` (owed records too: [`Unrecorded`]): on the system clock,
    /// checked against the kernel's, never stopped (the console: its
    /// teardowns outlive it).
    #[must_use]
    pub fn new(path: PathBuf, config: ReaperConfig, recorder: Recorder) -> Self {
        Self {
            path,
            config,
            inflight: InFlight::default(),
            clock: Arc::new(crate::model::time::unix_now),
            unrecorded: Unrecorded::reporting_to(recorder.reporter()),
            recorder,
            clock_check: true,
            stop: StopToken::new(),
            store_times: StoreTimes::default(),
            busy_timeout: crate::store::BUSY_TIMEOUT,
        }
    }

    /// These jobs' store connections wait at most `timeout` for another
    /// process's write lock on each statement (default: stackless's 5 s,
    /// [`crate::store::BUSY_TIMEOUT`]); a failure's record is still retried
    /// for [`RECORD_RETRY_FOR`].
    #[must_use]
    pub const fn with_busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// The store at [`JobRunner::path`], opened for writing with these
    /// jobs' busy timeout.
    fn open_store(&self) -> Result<Store, crate::store::StoreError> {
        let store = Store::open(&self.path, Access::ReadWrite)?;
        store.set_busy_timeout(self.busy_timeout)?;
        Ok(store)
    }

    /// These jobs on a test's `clock` (unix seconds), which is not checked
    /// against the kernel's (a fixed clock would always be doubted).
    #[must_use]
    pub fn with_test_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self.clock_check = false;
        self
    }

    /// These jobs stopped when `stop` is cancelled (`reap --once`
    /// interrupted): running teardowns are stopped, no more start.
    #[must_use]
    pub fn with_stop(mut self, stop: StopToken) -> Self {
        self.stop = stop;
        self
    }

    /// The store file the jobs open.
    #[must_use]
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// How the jobs run (down command, timeout, dry run, concurrency).
    #[must_use]
    pub const fn config(&self) -> &ReaperConfig {
        &self.config
    }

    /// The instances with a teardown running.
    #[must_use]
    pub const fn inflight(&self) -> &InFlight {
        &self.inflight
    }

    /// The recorder the jobs report to.
    #[must_use]
    pub const fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Why the wall clock looks wrong now, if it does (and is checked):
    /// ahead of the kernel's clock, or behind the store's newest write
    /// ([`StoreTimes`]). Nothing that depends on the time (a reap, GC)
    /// acts meanwhile. The outcome is reported ([`Reporter::clock`]).
    pub fn check_clock(&self) -> Option<super::clock::ClockDoubt> {
        if !self.clock_check {
            return None;
        }
        let wall = (self.clock)();
        let doubt = super::kernel_clock::check(wall)
            .or_else(|| super::clock::doubt_from_store(wall, self.store_times.newest().as_ref()));
        self.recorder
            .reporter()
            .clock(doubt.as_ref().map(ToString::to_string));
        doubt
    }

    /// Why the audit trail does not take writes, while it does not (read
    /// only; the reaper's pass writes the owed lines first:
    /// [`Recorder::retry_audit`]).
    #[must_use]
    pub fn audit_failure(&self) -> Option<String> {
        self.recorder.audit_failure()
    }

    /// Why the store does not take writes, while a failed reap's record is
    /// owed to it ([`Unrecorded`]): nothing is torn down meanwhile.
    #[must_use]
    pub fn unrecorded_reason(&self) -> Option<String> {
        self.unrecorded.reason()
    }

    pub(super) fn emit(&self, activity: Activity) {
        self.recorder.record(activity);
    }

    fn refuse(&self, name: &str, actor: Actor, detail: &str) -> Option<ActivityKind> {
        self.emit(Activity::new(
            (self.clock)(),
            actor,
            name,
            ActivityKind::Refused,
            detail,
        ));
        Some(ActivityKind::Refused)
    }

    /// The pass was interrupted before this teardown started: reported as
    /// [`ActivityKind::Stopped`], nothing run or recorded.
    fn stopped(&self, now: i64, actor: Actor, name: &str) -> Option<ActivityKind> {
        self.emit(Activity::new(
            now,
            actor,
            name,
            ActivityKind::Stopped,
            "the reap pass was interrupted: not started, nothing recorded",
        ));
        Some(ActivityKind::Stopped)
    }

    /// Start a teardown of `seen` on a thread of its own, with its own store
    /// connection. Refused (and reported) when the name is not DNS-safe or a
    /// teardown of it is already running.
    ///
    /// # Errors
    /// `Err(kind)` with the [`ActivityKind`] already reported when nothing
    /// was started.
    pub fn spawn(
        &self,
        job: Job,
    ) -> Result<JoinHandle<Option<ActivityKind>>, Option<ActivityKind>> {
        let actor = job.actor;
        let guard = self.admit(&job.instance.name, actor)?;
        let jobs = self.clone();
        let name = job.instance.name.clone();
        std::thread::Builder::new()
            .name("teardown".into())
            .spawn(move || {
                let mut store = match jobs.open_store() {
                    Ok(store) => store,
                    Err(error) => {
                        jobs.emit(Activity::new(
                            (jobs.clock)(),
                            actor,
                            &job.instance.name,
                            ActivityKind::Error,
                            error.to_string(),
                        ));
                        return Some(ActivityKind::Error);
                    }
                };
                jobs.execute(&mut store, &job, guard)
            })
            .map_err(|error| {
                self.emit(Activity::new(
                    (self.clock)(),
                    actor,
                    &name,
                    ActivityKind::Error,
                    format!("cannot start a teardown thread: {error}"),
                ));
                Some(ActivityKind::Error)
            })
    }

    /// The name checks and the in-flight claim that come before any job.
    pub(super) fn admit(
        &self,
        name: &str,
        actor: Actor,
    ) -> Result<InFlightGuard, Option<ActivityKind>> {
        // `argv_for` is `None` exactly for these names; not built here.
        if !crate::model::name::is_dns_safe(name) {
            return Err(self.refuse(name, actor, "not a DNS-safe name"));
        }
        self.inflight.claim(name).ok_or_else(|| {
            self.refuse(
                name,
                actor,
                "a teardown of this instance is already running",
            )
        })
    }

    /// What must hold right before a teardown, on this job's own
    /// connection: the store as it is now may be acted on
    /// ([`super::decision::pause_reason`]: not a store swapped for an older
    /// schema, not read-only; a reap also waits for a clock that looks
    /// right, `d` does not depend on the time), and the instance is as the
    /// decision saw it (a fresh re-read). `Err` with the kind already
    /// reported otherwise.
    fn gate(&self, store: &mut Store, job: &Job, now: i64) -> Result<(), Option<ActivityKind>> {
        let Job {
            instance: seen,
            attempt: seen_attempt,
            actor,
            intent,
        } = job;
        let (actor, intent) = (*actor, *intent);
        let name = seen.name.as_str();
        let clock = if intent == Intent::Reap {
            self.check_clock()
        } else {
            None
        };
        let unrecorded = self.unrecorded_reason();
        if let Some(why) = super::decision::pause_reason(
            store.generation(),
            store.writable(),
            unrecorded.as_deref(),
            // The audit trail pauses the reaper's passes, not a key: the
            // operator sees the banner and acts knowingly.
            None,
            clock,
            false,
        ) {
            return Err(self.refuse(name, actor, why.trim_start_matches("reaper paused: ")));
        }
        let aborted = |detail: String| {
            self.emit(Activity::new(
                now,
                actor,
                name,
                ActivityKind::Aborted,
                detail,
            ));
            Some(ActivityKind::Aborted)
        };
        // A dry run's rows read at once (`Store::begin_read_of`) found
        // exactly what the decision saw, nothing pending: this re-check
        // would find nothing changed.
        if store.unchanged_in_read(name) {
            return Ok(());
        }
        match store.recheck(name) {
            Ok(Some(current)) => match changed(seen, seen_attempt.as_ref(), &current) {
                Some(what) => Err(aborted(format!("{what} since the decision; not torn down"))),
                None => Ok(()),
            },
            Ok(None) => Err(aborted("the instance is gone from the store".into())),
            Err(error) => {
                self.emit(Activity::new(
                    now,
                    actor,
                    name,
                    ActivityKind::Error,
                    error.to_string(),
                ));
                Err(Some(ActivityKind::Error))
            }
        }
    }

    /// Tear `seen` down now on this thread, using `store`. The instance is
    /// re-read in a fresh transaction first and the teardown aborted if its
    /// birth (v14), status, lease, lock or reap attempt changed since `seen`
    /// was read, or an operation is now pending on it (v14): no
    /// check-then-act race. Returns the final [`ActivityKind`] reported.
    ///
    /// The steps: [`JobRunner::prepare`] (name, gate, dry run, stop; the
    /// `tearing down` line), `down` (with no connection open), [`JobRunner::reopen`],
    /// [`JobRunner::outcome`] (what it means, recorded where it must be),
    /// the in-flight claim released (`guard`), and one Activity line: who
    /// reads that line and then stops (a console quitting, `serve --stdio`
    /// at the end of its stdin) never counts this teardown as still running.
    pub(super) fn execute(
        &self,
        store: &mut Store,
        job: &Job,
        guard: InFlightGuard,
    ) -> Option<ActivityKind> {
        let now = (self.clock)();
        let (seen, actor, intent) = (&job.instance, job.actor, job.intent);
        let argv = match self.prepare(store, job, now) {
            Ok(argv) => argv,
            Err(kind) => return kind,
        };
        // No connection of this job is open while `down` runs (up to
        // `--down-timeout`): a change of the file meanwhile (an I/O error,
        // a restore) makes every holder reopen, and none waits for this
        // teardown to end (`docs/ARCHITECTURE.md`, "The store's files").
        store.close();
        let redactor = self.recorder.secrets().current();
        let result = run_down(&argv, self.config.down_timeout, &self.stop, &redactor);
        self.reopen(store);
        let done = (self.clock)();
        let outcome = self.outcome(store, seen, intent, &result, done);
        let mut activity = Activity::new(done, actor, &seen.name, outcome.kind, outcome.detail);
        if let Some(reason) = &outcome.envelope {
            activity = activity.with_envelope(reason);
        }
        if outcome.stderr {
            activity.stderr_tail.clone_from(&result.stderr_tail);
        }
        activity.duration = Some(result.took);
        // Its `down` is over and the outcome recorded in the store: out of
        // flight before the line that says so (a later job re-checks the
        // store in its own transaction).
        drop(guard);
        self.emit(activity);
        Some(outcome.kind)
    }

    /// Before `down`: the name is DNS-safe, the instance passes its gate
    /// (re-read), not a dry run, the job not stopped; then the `tearing
    /// down` line. `Ok(argv)` to run, `Err(kind)` once said why not.
    fn prepare(
        &self,
        store: &mut Store,
        job: &Job,
        now: i64,
    ) -> Result<Vec<String>, Option<ActivityKind>> {
        let (name, actor) = (job.instance.name.as_str(), job.actor);
        // The same check as `argv_for`'s; the argv itself is built only
        // for a teardown that runs (not for each line of a dry run).
        if !crate::model::name::is_dns_safe(name) {
            return Err(self.refuse(name, actor, "not a DNS-safe name"));
        }
        self.gate(store, job, now)?;
        if self.config.dry_run {
            self.emit(Activity::new(
                now,
                actor,
                name,
                ActivityKind::WouldReap,
                "dry run: nothing run",
            ));
            return Err(Some(ActivityKind::WouldReap));
        }
        if self.stop.is_cancelled() {
            return Err(self.stopped(now, actor, name));
        }
        let Some(argv) = self.config.down.argv_for(name) else {
            return Err(self.refuse(name, actor, "not a DNS-safe name"));
        };
        self.emit(Activity::new(
            now,
            actor,
            name,
            ActivityKind::Started,
            shown_command(&argv),
        ));
        Ok(argv)
    }

    /// After `down`: the outcome is read and recorded on a fresh
    /// connection, opened again for up to [`REOPEN_FOR`] (another of this
    /// console's connections may be settling an epoch change). One that
    /// cannot be opened leaves `store` closed by that error
    /// ([`Store::closed_by`]): a `down` that exited 0 is then not counted
    /// as torn down (nothing could check it), and its failure is owed
    /// (`Unrecorded`) with the true reason, never lost.
    fn reopen(&self, store: &mut Store) {
        let started = std::time::Instant::now();
        loop {
            match self.open_store() {
                Ok(fresh) => {
                    *store = fresh;
                    return;
                }
                Err(_) if started.elapsed() < REOPEN_FOR => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(error) => {
                    store.closed_by(&error);
                    return;
                }
            }
        }
    }
}

/// How long a teardown job tries to open the store again after its `down`
/// ([`JobRunner::reopen`]).
pub const REOPEN_FOR: Duration = Duration::from_secs(5);

/// How long a failed reap's `reap_attempts` write is retried while another
/// process holds the store's write lock (each try waits out stackless's 5 s
/// busy timeout first). The operator's `r` and the reaper both record this
/// way: a failure that is not recorded would undercount the attempts and
/// keep the backoff from growing.
pub const RECORD_RETRY_FOR: Duration = Duration::from_secs(60);

/// Run one `down` to its end on a runtime of this job's own (one thread,
/// this one). Never on the console's runtime: that one shuts down when the
/// console quits, and a teardown still running then is left to finish (its
/// `down` holds the instance's lock in its own process group); waiting for
/// it on a runtime being shut down would report a false error ("A Tokio 1.x
/// context ... is being shutdown") for a healthy teardown.
/// What it answered is redacted by `redactor` (the `secret_history` values
/// known) in the runner's result.
fn run_down(
    argv: &[String],
    deadline: Duration,
    stop: &StopToken,
    redactor: &crate::model::redact::Redactor,
) -> teardown::TeardownResult {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(teardown::run(argv, deadline, stop, redactor)),
        Err(error) => teardown::TeardownResult {
            exit: crate::model::envelope::Exit::NotStarted(format!(
                "cannot start a runtime for the teardown: {error}"
            )),
            stdout: String::new(),
            stderr_tail: String::new(),
            took: Duration::ZERO,
        },
    }
}

/// The argv as shown in the activity log (and so the audit trail and
/// `console.log`): the whole argv with its credentials redacted
/// ([`crate::model::redact::shown_argv`]), quoted as the `d` dialog and
/// `Y` show it ([`teardown::shell_line`]). The argv run is not changed.
fn shown_command(argv: &[String]) -> String {
    teardown::shell_line(&crate::model::redact::shown_argv(argv))
}

/// What differs between the decision's view and the fresh re-read, if
/// anything, as the abort says it (`instance changed (birth)`: the name
/// was torn down and brought up again, a new birth the decision never saw,
/// by [`BirthSeen::same_as`]: the `instance_id`, or `created_at` before
/// schema 7; `operation pending (up queued)`: the controller got work for
/// it). For an operator's `d`/`r`, `seen` carries the birth the question
/// was asked about.
fn changed(seen: &Instance, seen_attempt: Option<&ReapAttempt>, now: &Recheck) -> Option<String> {
    if !BirthSeen::of(seen).same_as(&BirthSeen::new(now.birth.as_ref(), now.created_at)) {
        Some("instance changed (birth)".into())
    } else if seen.status != now.status {
        Some("status changed".into())
    } else if seen.lease != now.lease {
        Some("lease changed".into())
    } else if seen.lock.as_deref() != now.lock.as_ref() {
        Some("lock changed".into())
    } else if !crate::model::rows::same_attempt_for_the_reaper(seen_attempt, now.attempt.as_ref()) {
        Some("reap attempt changed".into())
    } else if let Some((verb, status)) = &now.pending {
        Some(format!("operation pending ({verb} {status})"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::changed;
    use crate::model::{Birth, Instance, Lease, OpLock, ReapAttempt, Status};
    use crate::store::Recheck;

    /// What a dry run's scans rely on (`Store::unchanged_in_read`): a
    /// re-read equal to the decision's rows, nothing pending, is no change.
    /// Any difference is one.
    #[test]
    fn a_recheck_equal_to_the_decision_is_no_change_and_any_difference_is() {
        let seen = Instance {
            name: "golf".into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(1),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 60,
                expires_at: 100,
            }),
            lock: Some(Box::new(OpLock {
                operation: "up".into(),
                holder_pid: 7,
                holder_start_time: 8,
                acquired_at: 9,
                holder_host: Some("vm".into()),
                claim_id: Some("c".into()),
            })),
            anomalies: Default::default(),
            dirty: Some(false),
            birth: Some(Birth::new("a9", "sl-a9")),
        };
        let attempt = ReapAttempt {
            instance: "golf".into(),
            attempts: 2,
            last_error: "e".into(),
            next_retry_at: 50,
        };
        let same = Recheck {
            status: seen.status.clone(),
            lease: seen.lease,
            lock: seen.lock.as_deref().cloned(),
            attempt: Some(attempt.clone()),
            birth: seen.birth.clone(),
            created_at: seen.created_at,
            pending: None,
        };
        assert_eq!(changed(&seen, Some(&attempt), &same), None);
        let differs = |recheck: Recheck| changed(&seen, Some(&attempt), &recheck);
        let mut other = same.clone();
        other.lease = None;
        assert_eq!(differs(other), Some("lease changed".into()));
        let mut other = same.clone();
        other.lock = None;
        assert_eq!(differs(other), Some("lock changed".into()));
        let mut other = same.clone();
        other.attempt = None;
        assert_eq!(differs(other), Some("reap attempt changed".into()));
        let mut other = same.clone();
        other.birth = None;
        assert_eq!(differs(other), Some("instance changed (birth)".into()));
        // The same instance_id is the same birth whatever its created_at.
        let mut other = same.clone();
        other.created_at = Some(2);
        assert_eq!(differs(other), None);
        let mut other = same.clone();
        other.status = Status::Tombstoned;
        assert_eq!(differs(other), Some("status changed".into()));
        let mut other = same;
        other.pending = Some(("up".into(), crate::model::OpStatus::Queued));
        assert_eq!(differs(other), Some("operation pending (up queued)".into()));
    }

    /// Before schema 7 (no `instance_id`) a name born again has another
    /// `created_at`: the re-check aborts on it.
    #[test]
    fn before_schema_7_another_created_at_is_another_birth() {
        let seen = Instance {
            name: "golf".into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(1_000),
            tombstoned_at: None,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: Some(false),
            birth: None,
        };
        let now = Recheck {
            status: Status::Active,
            lease: None,
            lock: None,
            attempt: None,
            birth: None,
            created_at: Some(1_000),
            pending: None,
        };
        assert_eq!(changed(&seen, None, &now), None);
        let reborn = Recheck {
            created_at: Some(1_060),
            ..now
        };
        assert_eq!(
            changed(&seen, None, &reborn),
            Some("instance changed (birth)".into())
        );
    }
}
