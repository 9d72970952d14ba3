//! The reaper thread: every tick, read a snapshot, decide (pure,
//! [`super::decision`]), and hand each instance to reap to a teardown job
//! ([`super::jobs`]; at most `concurrency` at once, never two for one
//! instance). Old tombstones are garbage-collected (D14) where the console
//! owns GC (v4/v5); on v14 the controller collects them and the pass only
//! reports how many are due (see `super::decision` for why).

use std::collections::{HashMap, HashSet, VecDeque};
use std::thread::JoinHandle;
use std::time::Duration;

use super::clock::{Jump, TimeGuard};
use super::control::ReaperControl;
use super::decision::{self, Decision};
use super::jobs::{Intent, Job, JobRunner};
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::controller::HandOver;
use crate::model::reaper_status::{LastPass, PassSummary, ReaperStatus};
use crate::model::{Instance, ReapAttempt};
use crate::recorder::Reporter;
use crate::store::Store;
use crate::store::probe::HostProbe;

mod connection;
mod gc;
mod read;
mod thread;

use read::PassRead;
pub use thread::{spawn, watch_clock};

/// The reaper: a store connection of its own, the probe, and the jobs.
pub struct Reaper {
    store: Store,
    probe: Box<dyn HostProbe + Send>,
    jobs: JobRunner,
    /// Last skip/wait reported per instance, so a pass reports changes only.
    last_quiet: HashMap<String, (ActivityKind, String)>,
    busy_reported: bool,
    /// The store error being repeated pass after pass: said when it
    /// appears, changes and clears ([`crate::model::repeats`]).
    store_errors: crate::model::repeats::Repeats,
    /// The last "tombstones due" note reported, so it is said once per
    /// change.
    last_due_note: Option<String>,
    running: Vec<JoinHandle<Option<ActivityKind>>>,
    /// Instances decided `Reap` this tick and not started yet: started as
    /// teardown slots free up, so a tick's whole worklist is worked through
    /// (stackless §6) with at most `concurrency` teardowns at once.
    queue: VecDeque<Job>,
    time: TimeGuard,
    /// The store failed to read or open: open it again at the next pass.
    reopen: bool,
    /// The operator's pause and pass-now requests ([`ReaperControl`]).
    control: ReaperControl,
    /// Where [`ReaperStatus`] goes (the console's `Event::Reaper`);
    /// `None`: not reported (`reap --once`, tests).
    status: Option<Reporter>,
    /// The pass under way: its totals so far, until its teardowns finish.
    current: Option<PassSummary>,
    /// The last finished pass.
    last: Option<LastPass>,
    /// When the next pass is due (unix seconds), as last reported.
    next_pass_at: Option<i64>,
    /// The status last sent (the same one is not sent twice).
    reported: Option<ReaperStatus>,
    /// Asked before each teardown this reaper starts: whether the
    /// controller's lease reaper reaps the store now, or a `down` may
    /// start it (`crate::model::controller::hand_over`); `None`: go on.
    who_reaps: Option<WhoReaps>,
    /// While no controller runs and a `down` may start one
    /// ([`HandOver::OneAtATime`]): whether one teardown ran alone and
    /// finished with still no controller (then side by side again).
    alone: Alone,
}

/// What this reaper learned while no controller ran
/// ([`HandOver::OneAtATime`]); back to `Unknown` when a controller is
/// seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Alone {
    /// Nothing yet: the next teardown runs alone.
    #[default]
    Unknown,
    /// One teardown was started alone.
    OneStarted,
    /// It finished and still no controller runs: side by side.
    NoController,
}

/// Who reaps, asked before each teardown ([`Reaper::with_who_reaps`]):
/// [`HandOver::Controller`] when the controller's lease reaper does and
/// this reaper must start no more teardowns; [`HandOver::OneAtATime`]
/// while a `down` may start it.
pub type WhoReaps = Box<dyn FnMut() -> HandOver + Send>;

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
    /// one in tests); `jobs.recorder` receives every [`Activity`].
    #[must_use]
    pub fn new(store: Store, probe: Box<dyn HostProbe + Send>, jobs: JobRunner) -> Self {
        Self {
            store,
            probe,
            jobs,
            last_quiet: HashMap::new(),
            busy_reported: false,
            store_errors: crate::model::repeats::Repeats::default(),
            last_due_note: None,
            running: Vec::new(),
            queue: VecDeque::new(),
            time: TimeGuard::default(),
            reopen: false,
            control: ReaperControl::default(),
            status: None,
            current: None,
            last: None,
            next_pass_at: None,
            reported: None,
            who_reaps: None,
            alone: Alone::Unknown,
        }
    }

    /// Ask `who_reaps` before each teardown this reaper starts, not once a
    /// pass: a `down` that started the controller (0.4.0's `down` starts
    /// it when none runs) is the last this reaper starts while that
    /// controller's lease reaper runs; the teardowns still queued are left
    /// to it, said once as [`ActivityKind::Role`].
    #[must_use]
    pub fn with_who_reaps(mut self, who_reaps: WhoReaps) -> Self {
        self.who_reaps = Some(who_reaps);
        self
    }

    /// Take the operator's pause and pass-now requests from `control`, and
    /// report [`ReaperStatus`] to `status` (the console's wiring).
    #[must_use]
    pub fn with_control(mut self, control: ReaperControl, status: Reporter) -> Self {
        self.control = control;
        self.status = Some(status);
        self
    }

    /// Send the status now, `next_pass_at` the next pass's due time (unix
    /// seconds).
    fn report_status(&mut self, next_pass_at: Option<i64>) {
        if let Some(reporter) = &self.status {
            let paused = self.control.paused();
            let status = ReaperStatus {
                paused,
                next_pass_at: next_pass_at.filter(|_| !paused),
                last: self.last,
            };
            if self.reported != Some(status) {
                reporter.status(status);
                self.reported = Some(status);
            }
        }
    }

    /// Count finished teardowns into the pass under way, and close it when
    /// nothing of it is queued or running any more. Returns whether it
    /// closed.
    fn settle(&mut self, outcomes: &[Option<ActivityKind>]) -> bool {
        let Some(current) = self.current.as_mut() else {
            return false;
        };
        for kind in outcomes {
            count(current, *kind);
        }
        if !self.queue.is_empty() || !self.running.is_empty() {
            return false;
        }
        let summary = *current;
        self.last = Some(LastPass {
            at: self.now(),
            summary,
        });
        self.current = None;
        true
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
    /// When the jobs' `stop` token is cancelled (`reap --once`
    /// interrupted), the queued teardowns are dropped (reported once as
    /// [`ActivityKind::Stopped`], counted in [`PassSummary::stopped`]) and
    /// the running ones are stopped by their runner; the pass returns once
    /// they have.
    ///
    /// Its rows are streamed ([`read`]): what it holds is the instances it
    /// acts on, not the store.
    pub fn pass(&mut self) -> PassSummary {
        let mut summary = self.dispatch(true);
        loop {
            if self.jobs.stop.is_cancelled() && !self.queue.is_empty() {
                let dropped = std::mem::take(&mut self.queue);
                let names: Vec<&str> = dropped
                    .iter()
                    .map(|job| job.instance.name.as_str())
                    .collect();
                summary.stopped += dropped.len();
                self.emit(Activity::new(
                    self.now(),
                    Actor::Reaper,
                    "",
                    ActivityKind::Stopped,
                    format!(
                        "the reap pass was interrupted: {} queued teardown(s) not started ({})",
                        names.len(),
                        names.join(", ")
                    ),
                ));
            }
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
        // A paused pass does nothing: it is not the last pass shown. (The
        // audit lines owed are written first, as the pass does.)
        self.jobs.recorder.retry_audit();
        let paused = self.paused().is_some();
        let summary = self.dispatch(false);
        if !paused {
            self.current = Some(summary);
        }
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
            let Some(job) = self.queue.pop_front() else {
                break;
            };
            if self.jobs.inflight.contains(&job.instance.name) {
                // Being torn down already (by a key, or an earlier tick).
                continue;
            }
            let asked = self.who_reaps.as_mut().map(|ask| ask());
            match asked {
                Some(HandOver::Controller(pid)) => {
                    self.alone = Alone::Unknown;
                    self.queue.push_front(job);
                    outcomes.extend(self.leave_queue_to(pid));
                    break;
                }
                Some(HandOver::OneAtATime) => match self.alone {
                    Alone::NoController => {}
                    // The running `down` may start the controller: ask
                    // again once it finished.
                    _ if !self.running.is_empty() => {
                        self.queue.push_front(job);
                        break;
                    }
                    Alone::OneStarted => self.alone = Alone::NoController,
                    Alone::Unknown => self.alone = Alone::OneStarted,
                },
                _ => {}
            }
            match self.jobs.spawn(job) {
                Ok(handle) => self.running.push(handle),
                Err(kind) => outcomes.push(kind),
            }
        }
        if self.settle(&outcomes) {
            self.report_status(self.next_pass_at);
        }
        outcomes
    }

    /// The controller with `pid` reaps now: drop the queued teardowns (it
    /// reaps them), said once; one `Skipped` outcome each for the pass's
    /// count.
    fn leave_queue_to(&mut self, pid: u32) -> Vec<Option<ActivityKind>> {
        let left = std::mem::take(&mut self.queue);
        let names: Vec<&str> = left.iter().map(|job| job.instance.name.as_str()).collect();
        self.emit(Activity::new(
            self.now(),
            Actor::Reaper,
            "",
            ActivityKind::Role,
            crate::model::controller::left_to_controller(pid, &names),
        ));
        vec![Some(ActivityKind::Skipped); left.len()]
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

    /// Say a wall-clock jump once, when it starts.
    fn report_jump(&self, now: i64, jump: Jump) {
        match jump {
            Jump::Forward(secs) => self.emit(Activity::new(
                now,
                Actor::Reaper,
                "",
                ActivityKind::Error,
                format!(
                    "the wall clock jumped {} ahead: leases and GC keep following the monotonic clock",
                    crate::model::time::span(secs)
                ),
            )),
            Jump::Back(secs) => self.emit(Activity::new(
                now,
                Actor::Reaper,
                "",
                ActivityKind::Error,
                format!(
                    "the wall clock jumped {} back: reaping and GC wait for it",
                    crate::model::time::span(secs)
                ),
            )),
        }
    }

    /// One pass up to its teardowns: read the store and decide
    /// ([`Reaper::read_pass`]; `stream`: the rows streamed, else read
    /// whole), queue the `Reap`s (a dry run re-checks them instead), then
    /// GC the tombstones due. The pass's totals so far; the queued
    /// teardowns are counted as they finish.
    fn dispatch(&mut self, stream: bool) -> PassSummary {
        let mut summary = PassSummary::default();
        let Some((now, read)) = self.read_pass(&mut summary, stream) else {
            return summary;
        };
        let PassRead {
            plan,
            acted,
            instances,
            ..
        } = read;
        let mut seen_now = HashSet::new();
        self.queue = self.queue_reaps((acted, instances), plan.reaps, &mut seen_now, &mut summary);
        summary.tombstones_due = plan.tombstones_due.len();
        self.note_tombstones_due(plan.tombstones_due.len());
        self.collect_due(plan.gc, now, &mut seen_now, &mut summary);
        self.last_quiet.retain(|name, _| seen_now.contains(name));
        summary
    }

    /// The pass's read: `now` (unix seconds, held to the monotonic clock;
    /// a wall-clock jump said once), the store open, owed outcomes settled,
    /// the audit lines owed written, then the rows read and decided
    /// ([`read`]). `None` when the pass stops here: no store or a read
    /// error (counted in `summary.errors`), or paused.
    fn read_pass(&mut self, summary: &mut PassSummary, stream: bool) -> Option<(i64, PassRead)> {
        let (now, jump) = self.time.now(self.now());
        if let Some(jump) = jump {
            self.report_jump(now, jump);
        }
        if !self.ensure_store(now) {
            summary.errors += 1;
            return None;
        }
        self.settle_owed(now);
        // The audit lines owed are written first: a trail that takes writes
        // again does not hold this pass.
        self.jobs.recorder.retry_audit();
        if self.hold_if_paused() {
            return None;
        }
        let read = self.read_rows(now, summary, stream)?;
        // The store's newest write is evidence against a wall clock set
        // wrong for the whole machine (the kernel agrees with it).
        self.jobs.store_times.note(read.newest.clone());
        self.jobs.recorder.retry_audit();
        if self.hold_if_paused() {
            return None;
        }
        Some((now, read))
    }

    /// While paused ([`Reaper::paused`]): the queue dropped and the reason
    /// said once (and again when it changes); nothing is read, reaped or
    /// collected. Whether paused.
    fn hold_if_paused(&mut self) -> bool {
        let Some(why) = self.paused() else {
            return false;
        };
        self.queue.clear();
        self.quiet("", ActivityKind::Skipped, why);
        true
    }

    /// The pass's rows of the store, decided at `now` (streamed where the
    /// store allows it and `stream`, else the whole snapshot); a store
    /// error that clears is said once. `None` on a read error (counted in
    /// `summary.errors`, said through [`Reaper::store_error`]).
    fn read_rows(&mut self, now: i64, summary: &mut PassSummary, stream: bool) -> Option<PassRead> {
        let allow_gc = self.store.generation().allows_gc();
        let read = if stream {
            self.read_streamed(now, allow_gc)
        } else {
            Ok(None)
        };
        let read = match read {
            Ok(Some(read)) => Ok(read),
            Ok(None) => self
                .store
                .snapshot(self.probe.as_mut())
                .map(|snapshot| PassRead::whole(&snapshot, now, allow_gc)),
            Err(error) => Err(error),
        };
        match read {
            Ok(read) => {
                // Its teardowns' outcomes are redacted by what it read.
                self.jobs.recorder.secrets().update(&read.redactor);
                self.busy_reported = false;
                if let Some(cleared) = self.store_errors.cleared() {
                    self.emit(Activity::new(
                        now,
                        Actor::Reaper,
                        "",
                        ActivityKind::Skipped,
                        cleared,
                    ));
                }
                Some(read)
            }
            Err(error) => {
                summary.errors += 1;
                self.store_error(now, &error);
                None
            }
        }
    }

    /// The streamed read ([`read::Streamed`]): `Ok(None)` where the store
    /// declines it (then it is read whole).
    fn read_streamed(
        &mut self,
        now: i64,
        allow_gc: bool,
    ) -> Result<Option<PassRead>, crate::store::StoreError> {
        let mut reader = read::Streamed::new(now, allow_gc);
        match self
            .store
            .stream_checked(self.probe.as_mut(), None, &mut reader)
        {
            Ok(true) => Ok(reader.into_read()),
            Ok(false) => Ok(None),
            Err(crate::store::StreamStop::Store(error)) => Err(error),
            Err(crate::store::StreamStop::Reader(never)) => match never {},
        }
    }

    /// Work through the worklist's decisions in name order (stackless §6
    /// step 2): each skip said and counted, each `Reap` queued as a job (a
    /// dry run re-checks it at once instead, every re-check in one read
    /// transaction). `acted`: the rows of the `Reap` decisions in their
    /// order, and how many instances the store has. The jobs to start, in
    /// name order.
    fn queue_reaps(
        &mut self,
        (acted, instances): (Vec<(Instance, Option<ReapAttempt>)>, usize),
        reaps: Vec<(String, Decision)>,
        seen_now: &mut HashSet<String>,
        summary: &mut PassSummary,
    ) -> VecDeque<Job> {
        let mut queue = VecDeque::new();
        // A dry run re-checks every instance in one read transaction
        // (`Store::begin_read_of`: nothing is torn down between its
        // re-checks; a large worklist is read at once); a real pass
        // re-checks each in its own, right before its teardown.
        let held = self.jobs.config.dry_run && self.begin_dry_read(&acted, instances);
        let mut acted = acted.into_iter();
        for (name, decision) in reaps {
            seen_now.insert(name.clone());
            // The `Reap` decisions' rows come in the decisions' order.
            let seen = (decision == Decision::Reap).then(|| acted.next()).flatten();
            if let Some(job) = self.skip_or_queue(&name, &decision, seen, summary) {
                queue.push_back(job);
            }
        }
        if held {
            self.store.end_read();
        }
        queue
    }

    /// One worklist instance's decision: a skip said (once per change) and
    /// counted in `summary.skipped`, a dry run's re-check
    /// ([`Reaper::dry_reap`]), or the teardown job to queue (`seen`: the
    /// rows a `Reap` was decided from). `None` but for a job, and for an
    /// instance being torn down already (by an earlier tick or a key).
    fn skip_or_queue(
        &mut self,
        name: &str,
        decision: &Decision,
        seen: Option<(Instance, Option<ReapAttempt>)>,
        summary: &mut PassSummary,
    ) -> Option<Job> {
        if let Some((kind, detail)) = skip_note(decision) {
            summary.skipped += 1;
            self.quiet(name, kind, detail);
            return None;
        }
        if self.jobs.config.dry_run {
            self.last_quiet.remove(name);
            if let Some((instance, attempt)) = &seen {
                self.dry_reap(instance, attempt.as_ref(), summary);
            }
            return None;
        }
        if self.jobs.inflight.contains(name) {
            // Still being torn down (by an earlier tick or a key).
            return None;
        }
        self.last_quiet.remove(name);
        let (instance, attempt) = seen?;
        Some(Job {
            instance,
            attempt,
            actor: Actor::Reaper,
            intent: Intent::Reap,
        })
    }

    /// Open the dry run's one read transaction for the re-checks of the
    /// worklist's `Reap` decisions (`acted`, in name order; `instances`:
    /// how many the store has). Whether it is open.
    fn begin_dry_read(
        &mut self,
        acted: &[(Instance, Option<ReapAttempt>)],
        instances: usize,
    ) -> bool {
        let seen: Vec<crate::store::Seen<'_>> = acted
            .iter()
            .map(|(instance, attempt)| (instance, attempt.as_ref()))
            .collect();
        self.store.begin_read_of(&seen, instances).is_ok()
    }

    /// A dry run's `Reap` decision: the same job as a real one up to the
    /// teardown (name, gate, re-check), then `would reap`. Nothing runs, so
    /// nothing needs a slot or a thread.
    fn dry_reap(
        &mut self,
        seen: &Instance,
        attempt: Option<&ReapAttempt>,
        summary: &mut PassSummary,
    ) {
        let kind = self.reap(seen, attempt, Actor::Reaper, Intent::Reap);
        count(summary, kind);
    }

    /// Why this pass may not act on the store as it is now, if it may not
    /// ([`decision::pause_reason`] of the last open: a store swapped for an
    /// older schema stops the reaper at its next pass, one upgraded in
    /// place starts it again; a read-only file; a wall clock that looks
    /// wrong).
    fn paused(&self) -> Option<String> {
        decision::pause_reason(
            self.store.generation(),
            self.store.writable(),
            self.jobs.unrecorded_reason().as_deref(),
            self.jobs.audit_failure().as_deref(),
            self.jobs.check_clock(),
            self.control.paused(),
        )
    }

    /// Tear `seen` down now, on this thread, with this reaper's store (the
    /// operator path in tests; the console runs keys through
    /// [`JobRunner::spawn`]). Returns the final [`ActivityKind`] reported.
    pub fn reap(
        &mut self,
        seen: &Instance,
        seen_attempt: Option<&ReapAttempt>,
        actor: Actor,
        intent: Intent,
    ) -> Option<ActivityKind> {
        match self.jobs.admit(&seen.name, actor) {
            Ok(guard) => {
                let job = Job {
                    instance: seen.clone(),
                    attempt: seen_attempt.cloned(),
                    actor,
                    intent,
                };
                self.jobs.execute(&mut self.store, &job, guard)
            }
            Err(kind) => kind,
        }
    }

    /// Close the store connection now when another of this console's
    /// connections saw the file change (`store::epoch`): it is opened again
    /// at the next pass, once every old connection is closed. The thread
    /// calls this between ticks, so a long tick never holds up the others'
    /// reopening.
    pub fn release_if_stale(&mut self) {
        if self.store.stale() && !self.reopen {
            self.store.close();
            self.reopen = true;
        }
    }

    /// The jobs this reaper dispatches to (shared with the operator keys).
    #[must_use]
    pub fn jobs(&self) -> &JobRunner {
        &self.jobs
    }
}

/// What a skip decision says (stackless §6 step 2): its kind and detail,
/// as [`Reaper::quiet`] reports it. `None` for [`Decision::Reap`].
fn skip_note(decision: &Decision) -> Option<(ActivityKind, String)> {
    match decision {
        Decision::SkipLocked(l) => Some((ActivityKind::SkippedLocked, l.to_string())),
        Decision::SkipPending { verb, status } => Some((
            ActivityKind::Skipped,
            format!("operation pending ({verb} {status})"),
        )),
        Decision::WaitBackoff { until } => Some((
            ActivityKind::WaitingBackoff,
            format!("until {}", crate::model::time::rfc3339_or_raw(*until)),
        )),
        Decision::RefuseName => Some((ActivityKind::Refused, "not a DNS-safe name".into())),
        Decision::Reap => None,
    }
}

fn count(summary: &mut PassSummary, kind: Option<ActivityKind>) {
    match kind {
        Some(ActivityKind::Reaped) => summary.reaped += 1,
        Some(ActivityKind::Failed) => summary.failed += 1,
        Some(ActivityKind::Error) => summary.errors += 1,
        Some(ActivityKind::Stopped) => summary.stopped += 1,
        Some(
            ActivityKind::SkippedLocked
            | ActivityKind::Aborted
            | ActivityKind::Refused
            | ActivityKind::Skipped,
        ) => summary.skipped += 1,
        _ => {}
    }
}
