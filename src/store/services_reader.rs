//! The active instances' recorded service processes, read and probed on a
//! thread and connection of their own (measured: on a 100,000-instance
//! store the `checkpoints` scan, 70,000 payloads parsed and probed, took
//! 0.47 s on the watcher's thread, where every commit in the meantime
//! waited for it).
//!
//! The watcher asks ([`ServicesReader::request`]) after a commit, at most
//! every [`super::watcher::SERVICES_EVERY`]; the reader opens the store
//! afresh (so a replaced file is never read through a stale connection),
//! hands each record to the probe as it is read (nothing is collected but
//! the answer), and sends back the dead counts and the records still alive
//! ([`ServicesRead`]), then nudges the watcher awake so the counts reach
//! the screen at once. The watcher keeps re-probing the alive ones every
//! second, as before.

use std::path::PathBuf;
use std::sync::mpsc;

use super::probe::{CheckedProbe, HostProbe as _, SysinfoProbe};
use super::wake::Nudge;
use super::{Access, Store};
use crate::model::services::{StartRecord, process_state};
use crate::model::snapshot::ServicesDead;
use crate::stop::StopToken;

/// A services read that could not be made (the store could not be opened
/// or read to its end): the watcher keeps what the last good one said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ReadFailed;

/// One read of the services' checkpoints, probed.
#[derive(Debug, Default)]
pub(super) struct ServicesRead {
    /// Dead recorded processes per active instance (only those with one
    /// or more).
    pub dead: ServicesDead,
    /// The records whose process was alive, to re-probe, each with
    /// whether it was counted `unhealthy` ([`ServicesDead::unhealthy`]).
    pub alive: Vec<(String, StartRecord, bool)>,
}

/// The watcher's handle on the reading thread. Dropping it stops the
/// thread (a read in progress stops at its next row) and waits for it.
pub(super) struct ServicesReader {
    requests: Option<mpsc::Sender<()>>,
    results: mpsc::Receiver<Result<ServicesRead, ReadFailed>>,
    in_flight: bool,
    stop: StopToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServicesReader {
    /// Start the thread for the store at `path`, opened with `access` and
    /// waiting at most `busy_timeout` for another process's lock (the
    /// watcher's own, `super::watcher::WATCHER_BUSY_TIMEOUT`); `nudge`
    /// wakes the watcher when an answer is ready.
    ///
    /// # Errors
    /// The thread could not be spawned.
    pub(super) fn spawn(
        path: PathBuf,
        access: Access,
        busy_timeout: std::time::Duration,
        nudge: Option<Nudge>,
    ) -> std::io::Result<Self> {
        let (requests, asked) = mpsc::channel::<()>();
        let (answer, results) = mpsc::channel();
        let stop = StopToken::new();
        let reading = stop.clone();
        let thread = std::thread::Builder::new()
            .name("store-services".into())
            .spawn(move || {
                lower_priority();
                let mut probe = SysinfoProbe::new();
                while asked.recv().is_ok() {
                    // Tests hold the read here (`hold:services:<path>`).
                    crate::fault::hold("services");
                    let read =
                        read(&path, access, busy_timeout, &mut probe, &reading).ok_or(ReadFailed);
                    if reading.is_cancelled() || answer.send(read).is_err() {
                        return;
                    }
                    if let Some(nudge) = &nudge {
                        nudge.nudge();
                    }
                }
            })?;
        Ok(Self {
            requests: Some(requests),
            results,
            in_flight: false,
            stop,
            thread: Some(thread),
        })
    }

    /// Ask for a read, unless one is already under way. Returns whether
    /// one was asked for.
    pub(super) fn request(&mut self) -> bool {
        if self.in_flight {
            return false;
        }
        self.in_flight = self
            .requests
            .as_ref()
            .is_some_and(|requests| requests.send(()).is_ok());
        self.in_flight
    }

    /// The answer to the last request, once it is there: `Err` when the
    /// read failed (the store could not be opened or read to its end).
    pub(super) fn take(&mut self) -> Option<Result<ServicesRead, ReadFailed>> {
        let read = self.results.try_recv().ok()?;
        self.in_flight = false;
        Some(read)
    }
}

impl Drop for ServicesReader {
    fn drop(&mut self) {
        self.stop.cancel();
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Run this thread at nice +10: the services mark is advisory, and on a
/// 2-core machine its scan (0.47 s at 100k) would otherwise take CPU from
/// the snapshot reads and frames the screen waits for. (On Linux the nice
/// value is per thread.) A failure leaves the priority as it was.
fn lower_priority() {
    // Elsewhere `PRIO_PROCESS, 0` would renice the whole console.
    #[cfg(target_os = "linux")]
    // SAFETY: `setpriority(PRIO_PROCESS, 0, n)` changes only the calling
    // thread's nice value; it reads and writes no memory of this process.
    let _ = unsafe { nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, 10) };
}

/// One read: the store opened afresh (with the watcher's short busy
/// timeout), each record probed as it comes. `None` when the store cannot
/// be opened or read to its end: the watcher then keeps the last counts.
fn read(
    path: &std::path::Path,
    access: Access,
    busy_timeout: std::time::Duration,
    probe: &mut SysinfoProbe,
    stop: &StopToken,
) -> Option<ServicesRead> {
    let mut out = ServicesRead::default();
    let mut store = Store::open(path, access).ok()?;
    store.set_busy_timeout(busy_timeout).ok()?;
    let mut probe = CheckedProbe::new(probe);
    // Hashed as they come: no name is kept for a dead service.
    let mut dead = crate::model::snapshot::DeadCounts::default();
    let mut recorded = crate::model::snapshot::Recorded::default();
    let whole = super::services::each_active_record(&mut store, stop, |name, record| {
        recorded.add(&name);
        if process_state(&record, |pid| probe.live_start_time(pid)).dead() {
            dead.add(&name, 1);
        } else {
            out.alive.push((name, record, false));
        }
    });
    let mut unhealthy = unhealthy_counts(&mut store, &mut out.alive)?;
    // No process recorded: the observations decide, as `snapshot`'s stage.
    super::services::each_unrecorded_observation(&mut store, |name, observation| {
        match crate::model::readiness::stage(false, None, Some(&observation)) {
            crate::model::readiness::Stage::Unknown => {}
            crate::model::readiness::Stage::Unhealthy => {
                unhealthy.add(&name, 1);
                recorded.add(&name);
            }
            _ => recorded.add(&name),
        }
    })
    .ok()?;
    out.dead = dead
        .finish()
        .with_recorded(recorded)
        .with_unhealthy(unhealthy);
    whole.then_some(out)
}

/// Per instance, how many of its `alive` recorded processes stackless
/// 0.4.0 would call `unhealthy`: their last observation (`observations`,
/// schema 11+) says present and unready ([`crate::model::readiness::stage`]);
/// each record counted is flagged. Only the observations of the names
/// between the first and last alive are read (`alive` comes sorted by
/// name). `None` when the observations cannot be read.
fn unhealthy_counts(
    store: &mut Store,
    alive: &mut [(String, StartRecord, bool)],
) -> Option<crate::model::snapshot::DeadCounts> {
    let mut counts = crate::model::snapshot::DeadCounts::default();
    let (Some(first), Some(last)) = (alive.first(), alive.last()) else {
        return Some(counts);
    };
    let (first, last) = if first.0 <= last.0 {
        (first.0.clone(), last.0.clone())
    } else {
        (last.0.clone(), first.0.clone())
    };
    let observations = store
        .observations_between(Some((first.as_str(), last.as_str())))
        .ok()?;
    for (name, record, unhealthy) in alive {
        let node = format!("service:{}", record.service);
        let observation = observations
            .get(name)
            .and_then(|all| all.iter().find(|o| o.node == node));
        let stage = crate::model::readiness::stage(
            false,
            Some(crate::model::services::ProcessState::Alive),
            observation,
        );
        if stage == crate::model::readiness::Stage::Unhealthy {
            counts.add(name, 1);
            *unhealthy = true;
        }
    }
    Some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real 0.4.0 store's recorded processes run nowhere here: one read
    /// on the reader's thread counts each active instance's dead service,
    /// one request at a time.
    #[test]
    fn one_read_at_a_time_off_the_asking_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let source = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real-0.4.0-v14.db"
        );
        std::fs::copy(source, &path).expect("copy");
        let mut reader = ServicesReader::spawn(
            path,
            Access::ReadOnly,
            std::time::Duration::from_millis(20),
            None,
        )
        .expect("spawn");
        assert!(reader.request());
        assert!(!reader.request(), "one already under way");
        let started = std::time::Instant::now();
        let read = loop {
            if let Some(read) = reader.take() {
                break read.expect("the fixture reads whole");
            }
            assert!(started.elapsed() < std::time::Duration::from_secs(10));
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(read.dead.len(), 4);
        for name in ["alpha", "golf", "hotel", "india"] {
            assert_eq!(read.dead.get(name), 1, "{name}");
        }
        for name in ["bravo", "charlie", "delta", "foxtrot"] {
            assert_eq!(read.dead.get(name), 0, "{name}");
        }
        assert!(read.alive.is_empty());
        // Which active instances have a recorded service
        // process (bravo's `up` was refused before any: its services are
        // `unknown` to `stackless list`; the tombstones are not read).
        for (name, recorded) in [("alpha", true), ("bravo", false), ("charlie", false)] {
            assert_eq!(read.dead.recorded(name), Some(recorded), "{name}");
        }
        assert_eq!(ServicesDead::new().recorded("alpha"), None, "before a read");
        assert!(reader.request(), "answered: another may be asked for");
        drop(reader);
    }

    /// The Instances pane's readiness marks come from `snapshot`'s stage
    /// rule: on the 0.4.0 demo store, every active instance is marked
    /// `unknown` exactly when each of its services' stage is, and counted
    /// `unhealthy` as many times as a stage is; a service on another
    /// substrate (no process recorded) is decided by its observation:
    /// preview-pr-88's `web` unhealthy, api-gateway-dev's `gateway` healthy.
    #[test]
    fn the_rows_marks_are_the_snapshots_stages_on_the_demo_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let holder = crate::demo::LiveHolder {
            pid: std::process::id(),
            start_time: 1,
            host: "demo-box".into(),
        };
        crate::demo::v14::seed(&path, crate::model::time::unix_now(), &holder).expect("seed");
        let mut reader = ServicesReader::spawn(
            path.clone(),
            Access::ReadOnly,
            std::time::Duration::from_millis(20),
            None,
        )
        .expect("spawn");
        assert!(reader.request());
        let waited = std::time::Instant::now();
        let read = loop {
            if let Some(read) = reader.take() {
                break read.expect("the demo reads whole");
            }
            assert!(waited.elapsed() < std::time::Duration::from_secs(10));
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(read.dead.unhealthy("preview-pr-88"), 1);
        assert_eq!(read.dead.recorded("preview-pr-88"), Some(true));
        assert_eq!(read.dead.unhealthy("api-gateway-dev"), 0);
        assert_eq!(read.dead.recorded("api-gateway-dev"), Some(true));
        let mut store = Store::open(&path, Access::ReadOnly).expect("open");
        let names: Vec<String> = {
            let conn = rusqlite::Connection::open(&path).expect("open");
            let mut stmt = conn
                .prepare("SELECT name FROM instances WHERE status = 'active' ORDER BY name")
                .expect("prepare");
            stmt.query_map([], |r| r.get(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("names")
        };
        assert!(names.len() > 5, "{names:?}");
        let mut probe = SysinfoProbe::new();
        for name in names {
            let detail = store.instance_detail(&name).expect("read").expect("exists");
            let view = super::super::services::observe(detail, &store.state_dir(), &mut probe);
            let stages: Vec<_> = view
                .services
                .iter()
                .map(|s| crate::model::readiness::service_stage(s, false))
                .collect();
            let unhealthy = stages
                .iter()
                .filter(|s| **s == crate::model::readiness::Stage::Unhealthy)
                .count();
            let all_unknown = stages
                .iter()
                .all(|s| *s == crate::model::readiness::Stage::Unknown);
            assert_eq!(
                read.dead.unhealthy(&name) as usize,
                unhealthy,
                "{name}: {stages:?}"
            );
            assert_eq!(
                read.dead.recorded(&name),
                Some(!all_unknown),
                "{name}: {stages:?}"
            );
        }
    }

    /// A failed `up` that kept its lease with its process alive and its
    /// health check failing (hotel: observed present, unready) counts as
    /// one `unhealthy` service; a live process observed ready (alpha)
    /// does not.
    #[test]
    fn a_live_process_observed_unready_is_unhealthy() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let source = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/real-0.4.0-v14.db"
        );
        std::fs::copy(source, &path).expect("copy");
        let me = std::process::id();
        let started = SysinfoProbe::new()
            .live_start_time(me)
            .expect("this process runs");
        {
            let conn = rusqlite::Connection::open(&path).expect("open");
            for name in ["hotel", "alpha"] {
                conn.execute(
                    "UPDATE checkpoints SET payload = json_set(payload, '$.pid', ?1, \
                     '$.start_time', ?2) WHERE instance = ?3 AND step_id = 'start:web'",
                    rusqlite::params![i64::from(me), i64::try_from(started).expect("secs"), name],
                )
                .expect("point the record at this process");
            }
        }
        let mut reader = ServicesReader::spawn(
            path,
            Access::ReadOnly,
            std::time::Duration::from_millis(20),
            None,
        )
        .expect("spawn");
        assert!(reader.request());
        let waited = std::time::Instant::now();
        let read = loop {
            if let Some(read) = reader.take() {
                break read.expect("the fixture reads whole");
            }
            assert!(waited.elapsed() < std::time::Duration::from_secs(10));
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(read.dead.unhealthy("hotel"), 1);
        assert_eq!(read.dead.unhealthy("alpha"), 0, "observed ready");
        assert_eq!(read.dead.get("hotel"), 0, "alive");
        assert_eq!(
            read.dead.unhealthy("india"),
            0,
            "dead: absent, not unhealthy"
        );
        assert_eq!(read.dead.get("india"), 1);
        let flagged: Vec<(&str, bool)> = read
            .alive
            .iter()
            .map(|(name, _, unhealthy)| (name.as_str(), *unhealthy))
            .collect();
        assert_eq!(flagged, [("alpha", false), ("hotel", true)]);
    }
}
