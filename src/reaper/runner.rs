//! The reaper thread: every tick, read a snapshot, decide (pure,
//! [`super::decision`]), re-check each candidate in a fresh transaction, run
//! its teardown, record the outcome (stackless §6), and GC old tombstones
//! (D14). Operator keys (`r`, `d`) go through the same [`Reaper::reap`].

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::decision::{self, Decision, GcDecision, TOMBSTONE_GC_WINDOW_SECS};
use super::teardown::{self, DownCommand};
use crate::event::{Activity, ActivityKind, Actor};
use crate::model::envelope::{self, LOCK_HELD_CODE};
use crate::model::{Instance, ReapAttempt};
use crate::store::probe::HostProbe;
use crate::store::{Recheck, Store, StoreError};

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

/// The reaper: a store connection of its own, the probe, and where to report.
pub struct Reaper {
    store: Store,
    probe: Box<dyn HostProbe + Send>,
    config: ReaperConfig,
    inflight: InFlight,
    runtime: tokio::runtime::Handle,
    clock: Box<dyn Fn() -> i64 + Send>,
    report: Box<dyn FnMut(Activity) + Send>,
    /// Last skip/wait reported per instance, so a pass reports changes only.
    last_quiet: HashMap<String, (ActivityKind, String)>,
    busy_reported: bool,
}

impl std::fmt::Debug for Reaper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reaper")
            .field("store", &self.store.path())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Reaper {
    /// Build a reaper. `clock` gives unix seconds (a fixed one in tests);
    /// `report` receives every [`Activity`]; `runtime` runs the teardown
    /// subprocesses.
    #[must_use]
    pub fn new(
        store: Store,
        probe: Box<dyn HostProbe + Send>,
        config: ReaperConfig,
        inflight: InFlight,
        runtime: tokio::runtime::Handle,
        clock: Box<dyn Fn() -> i64 + Send>,
        report: Box<dyn FnMut(Activity) + Send>,
    ) -> Self {
        Self {
            store,
            probe,
            config,
            inflight,
            runtime,
            clock,
            report,
            last_quiet: HashMap::new(),
            busy_reported: false,
        }
    }

    fn emit(&mut self, activity: Activity) {
        (self.report)(activity);
    }

    /// One pass of stackless §6: worklist, lock skip, backoff wait, teardown,
    /// record/clear, then GC (D14) when the generation allows it.
    pub fn pass(&mut self) -> PassSummary {
        let mut summary = PassSummary::default();
        let now = (self.clock)();
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
        for (name, decision) in plan.reaps {
            seen_now.insert(name.clone());
            let quiet = match &decision {
                Decision::SkipLocked(l) => Some((ActivityKind::SkippedLocked, l.to_string())),
                Decision::WaitBackoff { until } => Some((
                    ActivityKind::WaitingBackoff,
                    format!("until {}", iso_time(*until)),
                )),
                Decision::RefuseName => Some((
                    ActivityKind::Refused,
                    crate::model::name::REFUSED_NOT_DNS_SAFE
                        .trim_start_matches("refused: ")
                        .to_owned(),
                )),
                Decision::Reap => None,
            };
            if let Some(quiet) = quiet {
                // Report a skip once, and again only when it changes: a
                // locked instance must not flood the log every tick.
                if self.last_quiet.get(&name) != Some(&quiet) {
                    self.emit(Activity::new(
                        (self.clock)(),
                        Actor::Reaper,
                        &name,
                        quiet.0,
                        quiet.1.clone(),
                    ));
                    self.last_quiet.insert(name, quiet);
                }
                continue;
            }
            self.last_quiet.remove(&name);
            let (Some(seen), attempt) = (snapshot.instance(&name), snapshot.reap_attempt(&name))
            else {
                continue;
            };
            match self.reap(seen, attempt, Actor::Reaper, Intent::Reap) {
                Some(ActivityKind::Reaped) => summary.reaped += 1,
                Some(ActivityKind::Failed) => summary.failed += 1,
                Some(ActivityKind::Error) => summary.errors += 1,
                _ => {}
            }
        }
        self.last_quiet.retain(|name, _| seen_now.contains(name));
        for (name, gc) in plan.gc {
            match gc {
                GcDecision::RefuseName => {
                    let quiet = (ActivityKind::Refused, "GC: not a DNS-safe name".to_owned());
                    if self.last_quiet.get(&name) != Some(&quiet) {
                        self.emit(Activity::new(
                            (self.clock)(),
                            Actor::Reaper,
                            &name,
                            quiet.0,
                            quiet.1.clone(),
                        ));
                        self.last_quiet.insert(name, quiet);
                    }
                }
                GcDecision::Collect => match self.collect(&name, now) {
                    Ok(true) => summary.collected += 1,
                    Ok(false) => {}
                    Err(()) => summary.errors += 1,
                },
            }
        }
        summary
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
        if self.config.dry_run {
            self.emit(Activity::new(
                now,
                Actor::Reaper,
                name,
                ActivityKind::WouldReap,
                "would GC tombstone",
            ));
            return Ok(false);
        }
        // `name` is DNS-safe here (GcDecision::Collect), so it is one plain
        // path component: no `..`, no `/`.
        let logs = self.store.state_dir().join("logs").join(name);
        match std::fs::remove_dir_all(&logs) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                self.emit(Activity::new(
                    now,
                    Actor::Reaper,
                    name,
                    ActivityKind::Error,
                    format!("GC: cannot remove {}: {e}", logs.display()),
                ));
                return Err(());
            }
        }
        match self
            .store
            .delete_tombstone(name, now.saturating_sub(TOMBSTONE_GC_WINDOW_SECS))
        {
            Ok(true) => {
                self.emit(Activity::new(
                    (self.clock)(),
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

    /// Tear `seen` down now, as the reaper or the operator. The instance is
    /// re-read in a fresh transaction first and the teardown aborted if its
    /// status, lease, lock or reap attempt changed since `seen` was read (no
    /// check-then-act race). Returns the final [`ActivityKind`] reported, or
    /// `None` when nothing was attempted.
    pub fn reap(
        &mut self,
        seen: &Instance,
        seen_attempt: Option<&ReapAttempt>,
        actor: Actor,
        intent: Intent,
    ) -> Option<ActivityKind> {
        let now = (self.clock)();
        let name = seen.name.as_str();
        let Some(argv) = self.config.down.argv_for(name) else {
            self.emit(Activity::new(
                now,
                actor,
                name,
                ActivityKind::Refused,
                "not a DNS-safe name",
            ));
            return Some(ActivityKind::Refused);
        };
        let Some(_guard) = self.inflight.claim(name) else {
            self.emit(Activity::new(
                now,
                actor,
                name,
                ActivityKind::Refused,
                "a teardown of this instance is already running",
            ));
            return Some(ActivityKind::Refused);
        };
        match self.store.recheck(name) {
            Ok(Some(current)) => {
                if let Some(what) = changed(seen, seen_attempt, &current) {
                    self.emit(Activity::new(
                        now,
                        actor,
                        name,
                        ActivityKind::Aborted,
                        format!("{what} changed since the decision; not torn down"),
                    ));
                    return Some(ActivityKind::Aborted);
                }
            }
            Ok(None) => {
                self.emit(Activity::new(
                    now,
                    actor,
                    name,
                    ActivityKind::Aborted,
                    "the instance is gone from the store",
                ));
                return Some(ActivityKind::Aborted);
            }
            Err(error) => {
                self.store_error(now, &error);
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
        let deadline = self.config.down_timeout;
        let result = self.runtime.block_on(teardown::run(&argv, deadline));
        let done = (self.clock)();
        let secs = result.took.as_secs_f64();
        if result.succeeded() {
            let detail = format!("down succeeded in {secs:.1}s");
            if let Err(error) = self.store.clear_reap_failure(name)
                && !matches!(error, StoreError::ReadOnly(_))
            {
                self.store_error(done, &error);
            }
            let kind = match intent {
                Intent::Reap => ActivityKind::Reaped,
                Intent::TearDown => ActivityKind::TornDown,
            };
            let mut a = Activity::new(done, actor, name, kind, detail);
            a.stderr_tail = result.stderr_tail;
            self.emit(a);
            return Some(kind);
        }
        if envelope::parse_error(&result.stdout).is_some_and(|e| e.code == LOCK_HELD_CODE) {
            // Another operation holds the lock: not a teardown failure, so
            // no attempt is recorded and the backoff does not grow.
            let mut a = Activity::new(
                done,
                actor,
                name,
                ActivityKind::SkippedLocked,
                "down answered state.lock.held",
            );
            a.stderr_tail = result.stderr_tail;
            self.emit(a);
            return Some(ActivityKind::SkippedLocked);
        }
        let reason = envelope::failure_reason(&result.stdout, &result.exit);
        let shown = envelope::read_reason(&reason).summary;
        let detail = if intent == Intent::Reap {
            match self.store.record_reap_failure(name, &reason, done) {
                Ok(row) => format!(
                    "{shown} (attempt {}, retry at {})",
                    row.attempts,
                    iso_time(row.next_retry_at)
                ),
                Err(error) => {
                    self.store_error(done, &error);
                    format!("{shown} (not recorded: {error})")
                }
            }
        } else {
            shown
        };
        let mut a = Activity::new(done, actor, name, ActivityKind::Failed, detail);
        a.stderr_tail = result.stderr_tail;
        self.emit(a);
        Some(ActivityKind::Failed)
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

/// `HH:MM:SSZ` for a unix-seconds time today, else the full RFC 3339 time.
fn iso_time(at: i64) -> String {
    match u64::try_from(at) {
        Ok(secs) if secs < 253_402_300_800 => {
            humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(secs))
                .to_string()
        }
        _ => at.to_string(),
    }
}

/// Run `reaper` on a thread of its own: a pass at once, then one per tick,
/// until `stop` is set.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn(
    mut reaper: Reaper,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                reaper.pass();
                // Monotonic wait: a wall-clock jump neither shortens nor
                // lengthens the tick.
                while started.elapsed() < reaper.config.tick {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
}

/// Where the reaper's store is, for operator actions that open their own
/// connection.
#[derive(Debug, Clone)]
pub struct ActionContext {
    /// The store file.
    pub path: PathBuf,
    /// The reaper configuration (down command, timeout, dry run).
    pub config: ReaperConfig,
    /// The shared in-flight set.
    pub inflight: InFlight,
    /// Runs the teardown subprocess.
    pub runtime: tokio::runtime::Handle,
}
