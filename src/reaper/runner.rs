//! The reaper thread: every tick, read a snapshot, decide (pure,
//! [`super::decision`]), and hand each instance to reap to a teardown job on
//! a thread of its own (at most `concurrency` at once, never two for one
//! instance). A job re-checks its instance in a fresh transaction, runs the
//! teardown, and records the outcome (stackless §6). Old tombstones are
//! garbage-collected (D14). Operator keys (`r`, `d`) run the same jobs.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::clock::{Jump, TimeGuard};
use super::decision::{self, Decision, GcDecision, TOMBSTONE_GC_WINDOW_SECS};
use super::teardown::{self, DownCommand};
use crate::cancel::CancelToken;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::envelope::{self, LOCK_HELD_CODE};
use crate::model::{Instance, ReapAttempt};
use crate::store::probe::HostProbe;
use crate::store::{Access, FileState, Recheck, Store, StoreError};

/// Where activities go (the event channel, the audit trail, a test's Vec).
pub type Sink = Arc<dyn Fn(Activity) + Send + Sync>;
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

/// Instances with a teardown in flight, shared by the reaper and the keys so
/// one instance is never torn down twice at once.
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<Mutex<HashSet<String>>>);

/// Holds an instance in the [`InFlight`] set until dropped.
#[derive(Debug)]
pub struct InFlightGuard {
    set: InFlight,
    name: String,
}

impl InFlight {
    /// Claim `name`; `None` when a teardown of it is already running.
    #[must_use]
    pub fn claim(&self, name: &str) -> Option<InFlightGuard> {
        let mut set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        set.insert(name.to_owned()).then(|| InFlightGuard {
            set: self.clone(),
            name: name.to_owned(),
        })
    }

    /// The names with a teardown running, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// Whether `name` has a teardown running.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(name)
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.set
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.name);
    }
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

/// The totals of one pass, for `reap --once` exit codes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassSummary {
    /// Teardowns that succeeded.
    pub reaped: usize,
    /// Teardowns that failed (recorded with a backoff).
    pub failed: usize,
    /// Tombstones collected.
    pub collected: usize,
    /// Store errors that stopped part of the pass.
    pub errors: usize,
}

/// Everything a teardown job needs; cheap to clone, shared by the reaper
/// and the operator keys.
#[derive(Clone)]
pub struct Teardowns {
    /// The store file (each job opens its own connection).
    pub path: PathBuf,
    /// Down command, timeout, dry run.
    pub config: ReaperConfig,
    /// The shared in-flight set.
    pub inflight: InFlight,
    /// Runs the teardown subprocesses.
    pub runtime: tokio::runtime::Handle,
    /// Unix seconds now.
    pub clock: Clock,
    /// Where activities go.
    pub report: Sink,
}

impl std::fmt::Debug for Teardowns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Teardowns")
            .field("path", &self.path)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Teardowns {
    fn emit(&self, activity: Activity) {
        (self.report)(activity);
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

    /// Start a teardown of `seen` on a thread of its own, with its own store
    /// connection. Refused (and reported) when the name is not DNS-safe or a
    /// teardown of it is already running.
    ///
    /// # Errors
    /// `Err(kind)` with the [`ActivityKind`] already reported when nothing
    /// was started.
    pub fn spawn(
        &self,
        seen: Instance,
        attempt: Option<ReapAttempt>,
        actor: Actor,
        intent: Intent,
    ) -> Result<JoinHandle<Option<ActivityKind>>, Option<ActivityKind>> {
        let guard = self.admit(&seen.name, actor)?;
        let jobs = self.clone();
        let name = seen.name.clone();
        std::thread::Builder::new()
            .name("teardown".into())
            .spawn(move || {
                let mut store = match Store::open(&jobs.path, Access::ReadWrite) {
                    Ok(store) => store,
                    Err(error) => {
                        jobs.emit(Activity::new(
                            (jobs.clock)(),
                            actor,
                            &seen.name,
                            ActivityKind::Error,
                            error.to_string(),
                        ));
                        return Some(ActivityKind::Error);
                    }
                };
                jobs.execute(&mut store, &seen, attempt.as_ref(), actor, intent, guard)
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
    fn admit(&self, name: &str, actor: Actor) -> Result<InFlightGuard, Option<ActivityKind>> {
        if self.config.down.argv_for(name).is_none() {
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

    /// Tear `seen` down now on this thread, using `store`. The instance is
    /// re-read in a fresh transaction first and the teardown aborted if its
    /// status, lease, lock or reap attempt changed since `seen` was read (no
    /// check-then-act race). Returns the final [`ActivityKind`] reported.
    fn execute(
        &self,
        store: &mut Store,
        seen: &Instance,
        seen_attempt: Option<&ReapAttempt>,
        actor: Actor,
        intent: Intent,
        _guard: InFlightGuard,
    ) -> Option<ActivityKind> {
        let now = (self.clock)();
        let name = seen.name.as_str();
        let Some(argv) = self.config.down.argv_for(name) else {
            return self.refuse(name, actor, "not a DNS-safe name");
        };
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
        match store.recheck(name) {
            Ok(Some(current)) => {
                if let Some(what) = changed(seen, seen_attempt, &current) {
                    return aborted(format!("{what} changed since the decision; not torn down"));
                }
            }
            Ok(None) => return aborted("the instance is gone from the store".into()),
            Err(error) => {
                self.emit(Activity::new(
                    now,
                    actor,
                    name,
                    ActivityKind::Error,
                    error.to_string(),
                ));
                return Some(ActivityKind::Error);
            }
        }
        if self.config.dry_run {
            self.emit(Activity::new(
                now,
                actor,
                name,
                ActivityKind::WouldReap,
                "dry run: nothing run",
            ));
            return Some(ActivityKind::WouldReap);
        }
        self.emit(Activity::new(
            now,
            actor,
            name,
            ActivityKind::Started,
            shown_command(&argv),
        ));
        let result = self
            .runtime
            .block_on(teardown::run(&argv, self.config.down_timeout));
        let done = (self.clock)();
        let secs = result.took.as_secs_f64();
        let finish = |kind: ActivityKind, detail: String, stderr_tail: String| {
            let mut activity = Activity::new(done, actor, name, kind, detail);
            activity.stderr_tail = stderr_tail;
            activity.duration = Some(result.took);
            self.emit(activity);
            Some(kind)
        };
        if let crate::model::envelope::Exit::NotStarted(why) = &result.exit {
            // `down` never ran: a problem of this console's set-up, not of
            // the instance, so nothing is recorded in the shared store (a
            // backoff here would delay the stackless daemon's own reaping).
            return finish(
                ActivityKind::Error,
                format!("{why}; nothing recorded (check --down-cmd)"),
                String::new(),
            );
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
            return finish(kind, detail, result.stderr_tail.clone());
        }
        if envelope::parse_error(&result.stdout).is_some_and(|e| e.code == LOCK_HELD_CODE) {
            // Another operation holds the lock: not a teardown failure, so
            // no attempt is recorded and the backoff does not grow.
            return finish(
                ActivityKind::SkippedLocked,
                "down answered state.lock.held".into(),
                result.stderr_tail.clone(),
            );
        }
        let reason = envelope::failure_reason(&result.stdout, &result.exit);
        let shown = envelope::read_reason(&reason).summary;
        let detail = if intent == Intent::Reap {
            // Each try already waits out stackless's 5 s busy timeout; a
            // failure that is not recorded would undercount the attempts.
            let mut recorded = store.record_reap_failure(name, &reason, done);
            for _ in 0..2 {
                if !recorded.as_ref().is_err_and(StoreError::is_busy) {
                    break;
                }
                recorded = store.record_reap_failure(name, &reason, done);
            }
            match recorded {
                Ok(row) => format!(
                    "{shown} (attempt {}, retry at {})",
                    row.attempts,
                    iso_time(row.next_retry_at)
                ),
                // Busy: the failure is not recorded now; the instance is
                // still expired, so the next tick tries (and records) again.
                Err(error) => format!("{shown} (not recorded: {error})"),
            }
        } else {
            shown
        };
        finish(ActivityKind::Failed, detail, result.stderr_tail.clone())
    }
}

/// The reaper: a store connection of its own, the probe, and the jobs.
pub struct Reaper {
    store: Store,
    probe: Box<dyn HostProbe + Send>,
    jobs: Teardowns,
    /// Last skip/wait reported per instance, so a pass reports changes only.
    last_quiet: HashMap<String, (ActivityKind, String)>,
    busy_reported: bool,
    running: Vec<JoinHandle<Option<ActivityKind>>>,
    /// Instances decided `Reap` this tick and not started yet: started as
    /// teardown slots free up, so a tick's whole worklist is worked through
    /// (stackless §6) with at most `concurrency` teardowns at once.
    queue: std::collections::VecDeque<(Instance, Option<ReapAttempt>)>,
    time: TimeGuard,
}

impl std::fmt::Debug for Reaper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reaper")
            .field("store", &self.store.path())
            .field("jobs", &self.jobs)
            .finish_non_exhaustive()
    }
}

impl Reaper {
    /// Build a reaper over `store`. `jobs.clock` gives unix seconds (a fixed
    /// one in tests); `jobs.report` receives every [`Activity`].
    #[must_use]
    pub fn new(store: Store, probe: Box<dyn HostProbe + Send>, jobs: Teardowns) -> Self {
        Self {
            store,
            probe,
            jobs,
            last_quiet: HashMap::new(),
            busy_reported: false,
            running: Vec::new(),
            queue: std::collections::VecDeque::new(),
            time: TimeGuard::default(),
        }
    }

    fn emit(&self, activity: Activity) {
        self.jobs.emit(activity);
    }

    fn now(&self) -> i64 {
        (self.jobs.clock)()
    }

    /// One pass of stackless §6, waiting for every teardown it started:
    /// worklist, lock skip, backoff wait, teardown, record/clear, then GC
    /// (D14). For `reap --once` and tests.
    pub fn pass(&mut self) -> PassSummary {
        let mut summary = self.dispatch();
        loop {
            for kind in self.fill() {
                count(&mut summary, kind);
            }
            if self.queue.is_empty() && self.running.is_empty() {
                return summary;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// One tick of the reaper thread: like [`Reaper::pass`], but teardowns
    /// keep running in the background (a hung one delays nothing); the
    /// thread calls [`Reaper::fill`] between ticks.
    fn tick(&mut self) {
        self.fill();
        self.dispatch();
        self.fill();
    }

    /// Join finished teardowns and start queued ones while slots are free.
    /// Returns the outcomes of the teardowns that finished.
    fn fill(&mut self) -> Vec<Option<ActivityKind>> {
        let (finished, running): (Vec<_>, Vec<_>) = std::mem::take(&mut self.running)
            .into_iter()
            .partition(JoinHandle::is_finished);
        self.running = running;
        let mut outcomes: Vec<_> = finished
            .into_iter()
            .map(|handle| handle.join().ok().flatten())
            .collect();
        while self.running.len() < self.jobs.config.concurrency.max(1) {
            let Some((seen, attempt)) = self.queue.pop_front() else {
                break;
            };
            if self.jobs.inflight.contains(&seen.name) {
                // Being torn down already (by a key, or an earlier tick).
                continue;
            }
            match self.jobs.spawn(seen, attempt, Actor::Reaper, Intent::Reap) {
                Ok(handle) => self.running.push(handle),
                Err(kind) => outcomes.push(kind),
            }
        }
        outcomes
    }

    /// Report a skip once, and again only when it changes: a locked
    /// instance must not flood the log every tick.
    fn quiet(&mut self, name: &str, kind: ActivityKind, detail: String) {
        let entry = (kind, detail);
        if self.last_quiet.get(name) != Some(&entry) {
            self.emit(Activity::new(
                self.now(),
                Actor::Reaper,
                name,
                entry.0,
                entry.1.clone(),
            ));
            self.last_quiet.insert(name.to_owned(), entry);
        }
    }

    fn dispatch(&mut self) -> PassSummary {
        let mut summary = PassSummary::default();
        let (now, jump) = self.time.now(self.now());
        match jump {
            Some(Jump::Forward(secs)) => self.emit(Activity::new(
                now,
                Actor::Reaper,
                "",
                ActivityKind::Error,
                format!(
                    "the wall clock jumped {} ahead: leases and GC keep following the monotonic clock",
                    crate::model::time::span(secs)
                ),
            )),
            Some(Jump::Back(secs)) => self.emit(Activity::new(
                now,
                Actor::Reaper,
                "",
                ActivityKind::Error,
                format!(
                    "the wall clock jumped {} back: reaping and GC wait for it",
                    crate::model::time::span(secs)
                ),
            )),
            None => {}
        }
        if !self.ensure_store(now) {
            summary.errors += 1;
            return summary;
        }
        let snapshot = match self.store.snapshot(self.probe.as_mut()) {
            Ok(s) => {
                self.busy_reported = false;
                s
            }
            Err(error) => {
                summary.errors += 1;
                self.store_error(now, &error);
                return summary;
            }
        };
        let plan = decision::plan(&snapshot, now, self.store.generation().allows_gc());
        let mut seen_now = HashSet::new();
        let mut queue = std::collections::VecDeque::new();
        for (name, decision) in plan.reaps {
            seen_now.insert(name.clone());
            match decision {
                Decision::SkipLocked(l) => {
                    self.quiet(&name, ActivityKind::SkippedLocked, l.to_string());
                    continue;
                }
                Decision::WaitBackoff { until } => {
                    self.quiet(
                        &name,
                        ActivityKind::WaitingBackoff,
                        format!("until {}", iso_time(until)),
                    );
                    continue;
                }
                Decision::RefuseName => {
                    self.quiet(&name, ActivityKind::Refused, "not a DNS-safe name".into());
                    continue;
                }
                Decision::Reap => {}
            }
            if self.jobs.config.dry_run {
                // Nothing runs, so nothing needs a slot or a thread.
                self.last_quiet.remove(&name);
                if let Some(seen) = snapshot.instance(&name) {
                    let kind = self.reap(
                        seen,
                        snapshot.reap_attempt(&name),
                        Actor::Reaper,
                        Intent::Reap,
                    );
                    count(&mut summary, kind);
                }
                continue;
            }
            if self.jobs.inflight.contains(&name) {
                // Still being torn down (by an earlier tick or a key).
                continue;
            }
            self.last_quiet.remove(&name);
            if let Some(seen) = snapshot.instance(&name) {
                queue.push_back((seen.clone(), snapshot.reap_attempt(&name).cloned()));
            }
        }
        self.queue = queue;
        for (name, gc) in plan.gc {
            seen_now.insert(name.clone());
            match gc {
                GcDecision::RefuseName => {
                    self.quiet(
                        &name,
                        ActivityKind::Refused,
                        "GC: not a DNS-safe name".into(),
                    );
                }
                GcDecision::Collect => match self.collect(&name, now) {
                    Ok(true) => summary.collected += 1,
                    Ok(false) => {}
                    Err(()) => summary.errors += 1,
                },
            }
        }
        self.last_quiet.retain(|name, _| seen_now.contains(name));
        summary
    }

    /// Make sure the store connection still reads the file at the path
    /// (deleted → report and wait; replaced → reopen).
    fn ensure_store(&mut self, now: i64) -> bool {
        match self.store.file_state() {
            FileState::Same => true,
            FileState::Gone => {
                self.quiet(
                    "",
                    ActivityKind::Error,
                    format!(
                        "the store file {} is gone: reaping paused until it returns",
                        self.store.path().display()
                    ),
                );
                false
            }
            FileState::Replaced => match Store::open(self.store.path(), Access::ReadWrite) {
                Ok(store) => {
                    self.store = store;
                    self.last_quiet.remove("");
                    self.emit(Activity::new(
                        now,
                        Actor::Reaper,
                        "",
                        ActivityKind::Error,
                        "the store file was replaced: reopened it",
                    ));
                    true
                }
                Err(error) => {
                    self.store_error(now, &error);
                    false
                }
            },
        }
    }

    fn store_error(&mut self, now: i64, error: &StoreError) {
        if error.is_busy() {
            if !self.busy_reported {
                self.busy_reported = true;
                self.emit(Activity::new(
                    now,
                    Actor::Reaper,
                    "",
                    ActivityKind::Error,
                    "store busy: retrying on the next tick",
                ));
            }
        } else {
            self.emit(Activity::new(
                now,
                Actor::Reaper,
                "",
                ActivityKind::Error,
                error.to_string(),
            ));
        }
    }

    /// GC one tombstone: remove `<state_dir>/logs/<name>/`, then delete the
    /// row (only if it is still a tombstone past the window). `Ok(true)` when
    /// a row was deleted.
    fn collect(&mut self, name: &str, now: i64) -> Result<bool, ()> {
        if self.jobs.config.dry_run {
            self.quiet(name, ActivityKind::WouldReap, "would GC tombstone".into());
            return Ok(false);
        }
        // `name` is DNS-safe here (GcDecision::Collect), so it is one plain
        // path component: no `..`, no `/`.
        let logs = self.store.state_dir().join("logs").join(name);
        match std::fs::remove_dir_all(&logs) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                self.quiet(
                    name,
                    ActivityKind::Error,
                    format!("GC: cannot remove {}: {e}", logs.display()),
                );
                return Err(());
            }
        }
        match self
            .store
            .delete_tombstone(name, now.saturating_sub(TOMBSTONE_GC_WINDOW_SECS))
        {
            Ok(true) => {
                self.emit(Activity::new(
                    self.now(),
                    Actor::Reaper,
                    name,
                    ActivityKind::Collected,
                    "tombstone older than 7 days deleted with its logs",
                ));
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(error) => {
                self.store_error(now, &error);
                Err(())
            }
        }
    }

    /// Tear `seen` down now, on this thread, with this reaper's store (the
    /// operator path in tests; the console runs keys through
    /// [`Teardowns::spawn`]). Returns the final [`ActivityKind`] reported.
    pub fn reap(
        &mut self,
        seen: &Instance,
        seen_attempt: Option<&ReapAttempt>,
        actor: Actor,
        intent: Intent,
    ) -> Option<ActivityKind> {
        match self.jobs.admit(&seen.name, actor) {
            Ok(guard) => {
                self.jobs
                    .execute(&mut self.store, seen, seen_attempt, actor, intent, guard)
            }
            Err(kind) => kind,
        }
    }

    /// The jobs this reaper dispatches to (shared with the operator keys).
    #[must_use]
    pub fn teardowns(&self) -> &Teardowns {
        &self.jobs
    }
}

fn count(summary: &mut PassSummary, kind: Option<ActivityKind>) {
    match kind {
        Some(ActivityKind::Reaped) => summary.reaped += 1,
        Some(ActivityKind::Failed) => summary.failed += 1,
        Some(ActivityKind::Error) => summary.errors += 1,
        _ => {}
    }
}

/// The argv as shown in the activity log: the program's file name, then its
/// arguments (the full path is noise at 80 columns).
fn shown_command(argv: &[String]) -> String {
    let program = std::path::Path::new(&argv[0])
        .file_name()
        .map_or_else(|| argv[0].clone(), |n| n.to_string_lossy().into_owned());
    std::iter::once(program)
        .chain(argv[1..].iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What differs between the decision's view and the fresh re-read, if
/// anything.
fn changed(
    seen: &Instance,
    seen_attempt: Option<&ReapAttempt>,
    now: &Recheck,
) -> Option<&'static str> {
    if seen.status != now.status {
        Some("status")
    } else if seen.lease != now.lease {
        Some("lease")
    } else if seen.lock != now.lock {
        Some("lock")
    } else if seen_attempt != now.attempt.as_ref() {
        Some("reap attempt")
    } else {
        None
    }
}

/// RFC 3339 (UTC, seconds) for a unix-seconds time; the raw number when it
/// is out of the printable range.
fn iso_time(at: i64) -> String {
    match u64::try_from(at) {
        Ok(secs) if secs < 253_402_300_800 => {
            humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(secs))
                .to_string()
        }
        _ => at.to_string(),
    }
}

/// Run `reaper` on a thread of its own: a pass at once, then one per tick
/// (measured on the monotonic clock), until `stop` is cancelled (the
/// console quitting, or the `console` role being lost): the wait wakes at
/// once. Teardowns run on their own threads, so a hung one never delays a
/// tick; finished ones are collected every 100 ms to start queued ones.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn(mut reaper: Reaper, stop: CancelToken) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            while !stop.is_cancelled() {
                let started = Instant::now();
                crate::fault::inject("reaper");
                reaper.tick();
                while started.elapsed() < reaper.jobs.config.tick {
                    if stop.sleep(Duration::from_millis(100)) {
                        return;
                    }
                    reaper.fill();
                }
            }
        })
}
