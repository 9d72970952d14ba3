//! The watcher thread: notices commits by other processes (woken by the
//! kernel when the store file or its `-wal` changes, [`super::wake`];
//! `PRAGMA data_version` on its own connection confirms; polled every
//! 100 ms where no watch can be set) and sends a fresh snapshot, at most
//! one read every [`MIN_GAP`] however fast the commits come; re-probes lock liveness every second so a holder that dies shows
//! as stale without any commit, and the active instances' recorded service
//! processes (`Snapshot::services_dead`; their checkpoints read again by
//! [`super::services_reader`], on its own thread, after commits, at most every
//! [`SERVICES_EVERY`]; only the ones still alive re-probed, a dead one
//! stays dead) so a `kill -9`ed service is marked on its Instances row
//! within a second; tells the render loop when another
//! process has held the store's write lock for a while; and probes the
//! stackless controller beside the store every second
//! ([`crate::controller::probe`]), sending [`Event::Controller`] when it
//! changes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::probe::{CheckedProbe, HostProbe, SysinfoProbe};
use super::wake::Woke;
use super::{Access, FileState, Store, StoreError};
use crate::event::{Event, EventSender, StoreHealth};
use crate::model::Snapshot;
use crate::model::liveness::liveness;
use crate::model::services::{StartRecord, process_state};
use crate::model::snapshot::ServicesDead;
use crate::stop::StopToken;

/// How often `data_version` is polled where no watch can be set.
pub const POLL: Duration = Duration::from_millis(100);
/// Between the end of one snapshot read and the start of the next, at
/// least this long: a writer committing 1,000 times a second makes the
/// watcher read about 1,000 / (read time + 16 ms) times, each showing the
/// latest state (the change that came during the wait is read at its end).
pub const MIN_GAP: Duration = Duration::from_millis(16);
/// At most this often the services' checkpoints are read again after
/// commits (a scan of `checkpoints`: 0.3 s on a 100,000-instance store).
pub const SERVICES_EVERY: Duration = Duration::from_secs(5);

/// After a change is noticed, `data_version` is checked again every
/// [`RECHECK_EVERY`] for this long: the kernel reports the `-wal` write,
/// but the commit becomes visible only when the writer then updates the
/// shared-memory index (which reports nothing), so the wake-up can come a
/// moment before the commit it announces.
pub const RECHECK: Duration = Duration::from_millis(60);
/// See [`RECHECK`]. Every millisecond: the check is a cached `PRAGMA
/// data_version` (a few microseconds), and each millisecond waited is one
/// more on the change-to-screen path.
pub const RECHECK_EVERY: Duration = Duration::from_millis(1);

/// How often lock liveness and the write lock are re-probed without a commit.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);
/// How long the write lock must stay taken before the store shows as busy.
pub const BUSY_AFTER: Duration = Duration::from_millis(900);
/// The watcher's own busy timeout: short, so a long write elsewhere is
/// noticed quickly instead of stalling this thread for stackless's 5 s.
pub const WATCHER_BUSY_TIMEOUT: Duration = Duration::from_millis(20);

/// Start the watcher on its own thread. It opens its own connection (so
/// `data_version` sees every other connection's commits, the reaper's
/// included) and stops when `stop` is cancelled or the receiver is gone. Open and
/// read errors are sent as [`Event::StoreHealth`] and retried every second.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn(
    path: PathBuf,
    access: Access,
    tx: EventSender,
    stop: StopToken,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_with_head(path, access, tx, stop, Head::default())
}

/// When the watcher's first read sends the first rows before the whole
/// ([`Store::snapshot_head`]): a store file of at least `from_bytes`, its
/// first `rows` instances. The snapshot it sends carries
/// [`crate::model::Partial`]; the whole read follows at once and
/// replaces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The file size (bytes) from which the first rows are sent first.
    pub from_bytes: u64,
    /// How many.
    pub rows: usize,
}

impl Default for Head {
    /// [`crate::store::HEAD_FROM_BYTES`], [`crate::store::HEAD_ROWS`].
    fn default() -> Self {
        Self {
            from_bytes: crate::store::HEAD_FROM_BYTES,
            rows: crate::store::HEAD_ROWS,
        }
    }
}

/// [`spawn`] with the first read's [`Head`] given.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn_with_head(
    path: PathBuf,
    access: Access,
    tx: EventSender,
    stop: StopToken,
    head: Head,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("store-watcher".into())
        .spawn(move || Watcher::new(path, access, tx, head).run(&stop))
}

struct Watcher {
    path: PathBuf,
    access: Access,
    tx: EventSender,
    probe: SysinfoProbe,
    store: Option<Store>,
    last_version: Option<i64>,
    last_probe: Instant,
    /// When the last snapshot read ended.
    read_at: Option<Instant>,
    /// Until when `data_version` is re-checked after a change was noticed
    /// ([`RECHECK`]).
    recheck_until: Option<Instant>,
    busy_since: Option<Instant>,
    health: StoreHealth,
    last: Option<Arc<Snapshot>>,
    /// Indices in `last` of the instances whose lock holder is probed
    /// locally (this host, or a store without `holder_host`): the only
    /// liveness that can change without a commit. Found once per snapshot,
    /// so the once-a-second re-probe never walks every instance. `None`
    /// when two locked instances share a name (a hand-made store): the
    /// liveness map keeps one case per name, so every lock is re-probed in
    /// order, as the snapshot did.
    probed: Option<Vec<usize>>,
    /// The recorded service processes of the active instances that were
    /// alive when last probed (re-probed with the locks).
    services: Vec<(String, StartRecord, bool)>,
    /// The dead counts last put into a snapshot.
    services_dead: Arc<ServicesDead>,
    /// When the services' checkpoints were last asked for (`None`:
    /// never).
    services_read: Option<Instant>,
    /// The thread that reads and probes them
    /// ([`super::services_reader`]), started on first use.
    services_reader: Option<super::services_reader::ServicesReader>,
    /// Wakes this thread's wait when the reader has answered.
    nudge: Option<super::wake::Nudge>,
    /// A commit came since they were read.
    services_stale: bool,
    /// The controller state last sent (`None` before the first probe).
    controller: Option<crate::model::controller::ControllerState>,
    /// When the controller was last probed.
    controller_probed: Option<Instant>,
    /// The controller probe (asks a new controller whether it reaps).
    controller_probe: crate::controller::probe::ControllerProbe,
    /// The first read's first rows (`None` once sent, or tried).
    head: Option<Head>,
    /// Why the file is being read anew, for the next snapshot sent.
    reopened: Option<&'static str>,
}

/// The receiver is gone: stop.
struct Gone;

impl Watcher {
    fn new(path: PathBuf, access: Access, tx: EventSender, head: Head) -> Self {
        Self {
            path,
            access,
            tx,
            probe: SysinfoProbe::new(),
            store: None,
            last_version: None,
            last_probe: Instant::now(),
            read_at: None,
            recheck_until: None,
            busy_since: None,
            health: StoreHealth::Ok,
            last: None,
            probed: None,
            services: Vec::new(),
            services_dead: Arc::default(),
            services_read: None,
            services_reader: None,
            nudge: None,
            services_stale: true,
            controller: None,
            controller_probed: None,
            controller_probe: crate::controller::probe::ControllerProbe::default(),
            head: Some(head),
            reopened: None,
        }
    }

    /// Probe the controller at most every [`PROBE_EVERY`]; send
    /// [`Event::Controller`] on the first probe and on every change.
    fn probe_controller(&mut self) -> Result<(), Gone> {
        if self
            .controller_probed
            .is_some_and(|at| at.elapsed() < PROBE_EVERY)
        {
            return Ok(());
        }
        self.controller_probed = Some(Instant::now());
        let state_dir = self.store.as_ref().map_or_else(
            || {
                self.path
                    .parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
            },
            Store::state_dir,
        );
        let state = self.controller_probe.probe(&state_dir);
        if self.controller.as_ref() != Some(&state) {
            self.controller = Some(state.clone());
            self.send(Event::Controller(state))?;
        }
        Ok(())
    }

    /// Keep `snapshot` as the last one sent, with its locally probed locks.
    fn remember(&mut self, snapshot: &Arc<Snapshot>) {
        let host = self.probe.host_name();
        let mut probed = self.probed.take().unwrap_or_default();
        probed.clear();
        let mut last_locked: Option<&str> = None;
        let mut unique = true;
        for (index, instance) in snapshot.instances.iter().enumerate() {
            let Some(lock) = &instance.lock else {
                continue;
            };
            // Sorted by name: equal names are neighbours among the locked.
            unique &= last_locked != Some(instance.name.as_str());
            last_locked = Some(&instance.name);
            if probed_here(lock, host) {
                probed.push(index);
            }
        }
        self.probed = unique.then_some(probed);
        self.last = Some(Arc::clone(snapshot));
    }

    fn run(mut self, stop: &StopToken) {
        let wake = super::wake::Wake::watch(&self.path);
        self.nudge = wake.as_ref().map(super::wake::Wake::nudger);
        let mode = if wake.is_some() {
            crate::event::WatchMode::Notify
        } else {
            crate::event::WatchMode::Poll(POLL)
        };
        if self.send(Event::Watch(mode)).is_err() {
            return;
        }
        while !stop.is_cancelled() {
            let Ok(pause) = self.step() else {
                return;
            };
            let stopped = match &wake {
                // Woken by a change, or when the next once-a-second probe
                // is due; an error's longer pause is slept whole, and a
                // store to open again or a busy one is polled.
                Some(wake)
                    if pause == POLL && self.store.is_some() && self.busy_since.is_none() =>
                {
                    self.wait(wake, stop)
                }
                _ => stop.sleep(pause),
            };
            if stopped {
                return;
            }
        }
    }

    /// Wait for a change (see [`RECHECK`]), then out what is left of the
    /// gap. Returns whether `stop` was cancelled.
    fn wait(&mut self, wake: &super::wake::Wake, stop: &StopToken) -> bool {
        let due = PROBE_EVERY.saturating_sub(self.last_probe.elapsed());
        let timeout = match self.recheck_until {
            Some(until) if Instant::now() < until => RECHECK_EVERY,
            _ => due.max(MIN_GAP),
        };
        match wake.wait(stop, timeout) {
            Woke::Stopped => true,
            Woke::Changed => {
                self.recheck_until = Some(Instant::now() + RECHECK);
                self.gap(stop)
            }
            Woke::Timeout => self.gap(stop),
            // The services' answer is ready: take it at once.
            Woke::Nudged => false,
        }
    }

    /// Wait out what is left of [`MIN_GAP`] since the last read (bursts of
    /// commits are read together). Returns whether `stop` was cancelled.
    fn gap(&self, stop: &StopToken) -> bool {
        let since = self.read_at.map_or(MIN_GAP, |at| at.elapsed());
        since < MIN_GAP && stop.sleep(MIN_GAP - since)
    }

    fn send(&self, event: Event) -> Result<(), Gone> {
        self.tx.send(event).map_err(|_| Gone)
    }

    fn set_health(&mut self, health: StoreHealth) -> Result<(), Gone> {
        if self.health != health {
            self.health = health.clone();
            self.send(Event::StoreHealth(health))?;
        }
        Ok(())
    }

    /// Another process holds the write lock. Reported once it has been held
    /// across two probes (a second or more), so the reaper's own brief
    /// writes never flash a banner.
    fn busy(&mut self) -> Result<(), Gone> {
        let since = *self.busy_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= BUSY_AFTER {
            self.set_health(StoreHealth::Busy(since))?;
        }
        Ok(())
    }

    /// One poll; returns how long to sleep before the next.
    fn step(&mut self) -> Result<Duration, Gone> {
        crate::fault::inject("watcher");
        if let Some(pause) = self.ensure_store()? {
            return Ok(pause);
        }
        self.probe_controller()?;
        // The services reader answered (it nudged this thread awake).
        if self.take_services() {
            self.send_services_dead()?;
        }
        let Some(store) = self.store.as_mut() else {
            return Ok(POLL);
        };
        let version = store.data_version();
        let changed = version
            .as_ref()
            .map_or(true, |v| self.last_version != Some(*v));
        if changed {
            self.read_snapshot(version.ok())
        } else if self.last_probe.elapsed() >= PROBE_EVERY {
            self.probe_unchanged()
        } else {
            Ok(POLL)
        }
    }

    /// The store connection, closed when stale and opened when there is
    /// none. `Some(pause)` (1 s) when it could not be opened (said as the
    /// store's health).
    fn ensure_store(&mut self) -> Result<Option<Duration>, Gone> {
        if self.store.as_ref().is_some_and(Store::stale) {
            // Another of this console's connections saw the file change:
            // close this one, so that the file is opened afresh once all
            // are closed (`store::epoch`).
            self.store = None;
        }
        if self.store.is_none() {
            match open(&self.path, self.access) {
                Ok(store) => {
                    self.store = Some(store);
                    self.last_version = None;
                }
                Err(StoreError::NotFound(_)) if self.last.is_some() => {
                    self.set_health(StoreHealth::Error(gone_message(&self.path)))?;
                    return Ok(Some(Duration::from_secs(1)));
                }
                Err(error) => {
                    self.set_health(StoreHealth::Error(error.to_string()))?;
                    return Ok(Some(Duration::from_secs(1)));
                }
            }
        }
        Ok(None)
    }

    /// A commit came (`data_version` now `version`, `None`: unread): read a
    /// snapshot and send it (a file found rewritten under it is read anew);
    /// busy is reported ([`Watcher::busy`]), another error closes, 1 s pause.
    fn read_snapshot(&mut self, version: Option<i64>) -> Result<Duration, Gone> {
        if let Some(head) = self.head.take()
            && self.last.is_none()
        {
            self.send_head(head)?;
        }
        let Some(store) = self.store.as_mut() else {
            return Ok(POLL);
        };
        let started = Instant::now();
        match store.snapshot(&mut CheckedProbe::new(&mut self.probe)) {
            Ok(_) if store.rewritten_under_read() => {
                self.reopened = self.reopened.or(store.file_state().reopen_reason());
                self.store = None;
            }
            Ok(snapshot) => self.send_snapshot(snapshot, started, version)?,
            Err(StoreError::Busy(_)) => self.busy()?,
            Err(error) => {
                if error.breaks_connection() {
                    store.invalidate();
                }
                self.store = None;
                self.set_health(StoreHealth::Error(error.to_string()))?;
                return Ok(Duration::from_secs(1));
            }
        }
        Ok(POLL)
    }

    /// The first read of a store file of at least `head.from_bytes`: send
    /// its first `head.rows` instances ([`Store::snapshot_head`]) before
    /// the whole read, which follows at once. Not remembered as the last
    /// snapshot (the locks and services are probed on the whole) and no
    /// version is kept, so nothing waits on it. An error is left to the
    /// whole read to meet and say.
    fn send_head(&mut self, head: Head) -> Result<(), Gone> {
        let big = std::fs::metadata(&self.path).is_ok_and(|m| m.len() >= head.from_bytes);
        let Some(store) = self.store.as_mut().filter(|_| big) else {
            return Ok(());
        };
        let started = Instant::now();
        if let Ok(Some(snapshot)) =
            store.snapshot_head(&mut CheckedProbe::new(&mut self.probe), head.rows)
        {
            tracing::debug!(
                instances = snapshot.instances.len(),
                micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
                "store read: the first rows"
            );
            self.send(Event::Snapshot(Arc::new(snapshot)))?;
        }
        Ok(())
    }

    /// Send `snapshot` (its read `started` then, at `data_version`
    /// `version`) with the last services' dead counts; the store is healthy
    /// again unless busy, and the services are re-probed.
    fn send_snapshot(
        &mut self,
        mut snapshot: Snapshot,
        started: Instant,
        version: Option<i64>,
    ) -> Result<(), Gone> {
        self.read_at = Some(Instant::now());
        // `--log-level debug`: what each read costs.
        tracing::debug!(
            instances = snapshot.instances.len(),
            micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            "store read"
        );
        self.last_version = version;
        self.last_probe = Instant::now();
        // The last counts; the services' checkpoints are read
        // after the snapshot is sent (outside its transaction:
        // the Instances mark is advisory), so a big store's
        // scan never delays the rows.
        self.services_stale = true;
        snapshot.services_dead = Arc::clone(&self.services_dead);
        snapshot.reopened = self.reopened.take();
        let snapshot = Arc::new(snapshot);
        self.remember(&snapshot);
        self.send(Event::Snapshot(snapshot))?;
        if self.busy_since.is_none() {
            self.set_health(StoreHealth::Ok)?;
        }
        self.reprobe_services()
    }

    /// No commit, and [`PROBE_EVERY`] has passed: look at the file itself
    /// (gone, replaced, rewritten or migrated closes the connection),
    /// probe the write lock, then re-probe lock liveness and the services.
    fn probe_unchanged(&mut self) -> Result<Duration, Gone> {
        let Some(store) = self.store.as_mut() else {
            return Ok(POLL);
        };
        self.last_probe = Instant::now();
        // A connection would read a deleted file forever: look at the path.
        let state = store.file_state();
        self.reopened = self.reopened.or(state.reopen_reason());
        match state {
            FileState::Same => {}
            FileState::Gone => {
                self.store = None;
                self.set_health(StoreHealth::Error(gone_message(&self.path)))?;
                return Ok(Duration::from_secs(1));
            }
            // Another file, the same one rewritten outside SQLite, or
            // another schema: open it again (its generation, layout and
            // rows are learned anew; the snapshot says them to the UI).
            FileState::Replaced | FileState::Rewritten | FileState::Migrated { .. } => {
                self.store = None;
                return Ok(POLL);
            }
        }
        match store.probe_write_lock() {
            Ok(()) => {
                if self.busy_since.take().is_some() {
                    self.set_health(StoreHealth::Ok)?;
                }
            }
            Err(StoreError::Busy(_)) => self.busy()?,
            Err(_) => {}
        }
        self.reprobe_liveness()?;
        self.reprobe_services()?;
        Ok(POLL)
    }

    /// Take the services reader's answer when there is one (the dead
    /// counted, the alive kept to re-probe); ask it to read the checkpoints
    /// again when a commit came since the last request and
    /// [`SERVICES_EVERY`] has passed. The read itself runs on the reader's
    /// thread, never on this one.
    fn read_services_when_due(&mut self) {
        self.take_services();
        if !self.services_stale
            || self
                .services_read
                .is_some_and(|at| at.elapsed() < SERVICES_EVERY)
        {
            return;
        }
        if self.services_reader.is_none() {
            self.services_reader = super::services_reader::ServicesReader::spawn(
                self.path.clone(),
                Access::ReadOnly,
                // The watcher's own short wait: a services read never
                // queues behind a writer's lock for long.
                WATCHER_BUSY_TIMEOUT,
                self.nudge.clone(),
            )
            .ok();
        }
        if self
            .services_reader
            .as_mut()
            .is_some_and(super::services_reader::ServicesReader::request)
        {
            self.services_read = Some(Instant::now());
            self.services_stale = false;
        }
    }

    /// The services reader's answer, if it came: the dead counted, the
    /// alive kept to re-probe. Returns whether one came.
    fn take_services(&mut self) -> bool {
        let Some(answer) = self
            .services_reader
            .as_mut()
            .and_then(super::services_reader::ServicesReader::take)
        else {
            return false;
        };
        // A read that failed keeps what the last good one said (and asks
        // again after the next commit).
        let Ok(read) = answer else {
            self.services_stale = true;
            return false;
        };
        self.services = read.alive;
        if read.dead != *self.services_dead {
            self.services_dead = Arc::new(read.dead);
        }
        true
    }

    /// Send the rows last sent with the services' new dead counts, when
    /// they differ from the counts those rows went out with.
    fn send_services_dead(&mut self) -> Result<(), Gone> {
        let Some(previous) = self.last.clone() else {
            return Ok(());
        };
        if !Arc::ptr_eq(&self.services_dead, &previous.services_dead)
            && *self.services_dead != *previous.services_dead
        {
            let next = Arc::new(previous.with_services_dead(Arc::clone(&self.services_dead)));
            self.remember(&next);
            self.send(Event::Snapshot(next))?;
        }
        Ok(())
    }

    /// Re-probe the service processes that were alive (a dead one cannot
    /// come back: pid plus start time), reading the checkpoints again when
    /// due; send a new snapshot (same rows and liveness) only when a count
    /// changed.
    fn reprobe_services(&mut self) -> Result<(), Gone> {
        if self.last.is_none() {
            return Ok(());
        }
        self.read_services_when_due();
        let mut probe = CheckedProbe::new(&mut self.probe);
        let before = self.services.len();
        let mut died: Vec<(String, bool)> = Vec::new();
        self.services.retain(|(name, record, unhealthy)| {
            let dead = process_state(record, |pid| probe.live_start_time(pid)).dead();
            if dead {
                died.push((name.clone(), *unhealthy));
            }
            !dead
        });
        if self.services.len() != before {
            // A process that died is `absent`, no longer `unhealthy`.
            let mut more = crate::model::snapshot::DeadCounts::default();
            let mut healed = crate::model::snapshot::DeadCounts::default();
            for (name, unhealthy) in died {
                more.add(&name, 1);
                if unhealthy {
                    healed.add(&name, 1);
                }
            }
            self.services_dead = Arc::new(self.services_dead.plus(more).minus_unhealthy(healed));
        }
        self.send_services_dead()
    }

    /// Re-probe lock holders; send a new snapshot only when a case changed.
    /// Only the locally probed locks are asked about (a foreign holder's
    /// case cannot change without a commit), nothing is allocated while
    /// nothing changed, and only the liveness map is copied when something did
    /// (the rows stay shared).
    fn reprobe_liveness(&mut self) -> Result<(), Gone> {
        let Some(previous) = self.last.clone() else {
            return Ok(());
        };
        let host = self.probe.host_name().map(str::to_owned);
        let mut probe = CheckedProbe::new(&mut self.probe);
        let Some(probed) = &self.probed else {
            // Shared names: re-probe every lock into a fresh map, in order.
            let mut fresh = std::collections::HashMap::with_capacity(previous.liveness.len());
            for instance in &previous.instances {
                if let Some(lock) = &instance.lock {
                    let case = liveness(lock, host.as_deref(), |pid| probe.live_start_time(pid));
                    fresh.insert(instance.name.clone(), case);
                }
            }
            if fresh != *previous.liveness {
                let next = Arc::new(previous.with_liveness(fresh));
                self.remember(&next);
                self.send(Event::Snapshot(next))?;
            }
            return Ok(());
        };
        let mut changed = Vec::new();
        for &index in probed {
            let Some(instance) = previous.instances.get(index) else {
                continue;
            };
            let Some(lock) = &instance.lock else {
                continue;
            };
            let case = liveness(lock, host.as_deref(), |pid| probe.live_start_time(pid));
            if previous.liveness.get(&instance.name) != Some(&case) {
                changed.push((index, case));
            }
        }
        if !changed.is_empty() {
            // Only the liveness map is copied; the rows stay shared.
            let mut fresh = (*previous.liveness).clone();
            for (index, case) in changed {
                fresh.insert(previous.instances[index].name.clone(), case);
            }
            let next = Arc::new(previous.with_liveness(fresh));
            self.remember(&next);
            self.send(Event::Snapshot(next))?;
        }
        Ok(())
    }
}

/// Whether `lock`'s holder is probed on this machine (the rule of
/// [`liveness`]): its host is this host, or the store has no `holder_host`.
fn probed_here(lock: &crate::model::OpLock, this_host: Option<&str>) -> bool {
    match &lock.holder_host {
        Some(host) => this_host == Some(host.as_str()),
        None => true,
    }
}

fn gone_message(path: &Path) -> String {
    format!(
        "the store file {} is gone: reconnecting when it returns",
        path.display()
    )
}

fn open(path: &Path, access: Access) -> Result<Store, StoreError> {
    let store = Store::open(path, access)?;
    store.set_busy_timeout(WATCHER_BUSY_TIMEOUT)?;
    Ok(store)
}
