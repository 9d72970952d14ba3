//! The watcher thread: notices commits by other processes (`PRAGMA
//! data_version` on its own connection, polled every 100 ms) and sends a fresh
//! snapshot; re-probes lock liveness every second so a holder that dies shows
//! as stale without any commit.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::probe::{HostProbe, SysinfoProbe};
use super::{Access, Store, StoreError};
use crate::event::{Event, EventSender, StoreHealth};

/// How often `data_version` is polled (issue: "at most every 100 ms").
pub const POLL: Duration = Duration::from_millis(100);
/// How often lock liveness is re-probed without a commit.
pub const LIVENESS_EVERY: Duration = Duration::from_secs(1);

/// Start the watcher on its own thread. It opens its own connection (so
/// `data_version` sees every other connection's commits, the reaper's
/// included) and stops when `stop` is set or the receiver is gone.
///
/// # Errors
/// The error from the first open; later errors are sent as
/// [`Event::StoreHealth`] and retried.
pub fn spawn(
    path: PathBuf,
    access: Access,
    tx: EventSender,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("store-watcher".into())
        .spawn(move || run(&path, access, &tx, &stop))
}

fn run(path: &std::path::Path, access: Access, tx: &EventSender, stop: &AtomicBool) {
    let mut probe = SysinfoProbe::new();
    let mut store: Option<Store> = None;
    let mut last_version: Option<i64> = None;
    let mut last_probe = Instant::now();
    let mut busy_since: Option<Instant> = None;
    let mut last_snapshot = None;
    while !stop.load(Ordering::Relaxed) {
        if store.is_none() {
            match Store::open(path, access) {
                Ok(s) => {
                    let _ = s.set_busy_timeout(Duration::from_millis(50));
                    store = Some(s);
                    last_version = None;
                }
                Err(e) => {
                    if tx
                        .send(Event::StoreHealth(StoreHealth::Error(e.to_string())))
                        .is_err()
                    {
                        return;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            }
        }
        let Some(s) = store.as_mut() else { continue };
        let version = s.data_version();
        let changed = match &version {
            Ok(v) => last_version != Some(*v),
            Err(_) => true,
        };
        let reprobe = last_probe.elapsed() >= LIVENESS_EVERY;
        if changed {
            match s.snapshot(&mut probe) {
                Ok(snapshot) => {
                    last_version = version.ok();
                    last_probe = Instant::now();
                    if busy_since.take().is_some() {
                        let _ = tx.send(Event::StoreHealth(StoreHealth::Ok));
                    }
                    let snapshot = Arc::new(snapshot);
                    last_snapshot = Some(Arc::clone(&snapshot));
                    if tx.send(Event::Snapshot(snapshot)).is_err() {
                        return;
                    }
                }
                Err(StoreError::Busy(_)) => {
                    let since = *busy_since.get_or_insert_with(Instant::now);
                    if tx
                        .send(Event::StoreHealth(StoreHealth::Busy(since)))
                        .is_err()
                    {
                        return;
                    }
                }
                Err(e) => {
                    if tx
                        .send(Event::StoreHealth(StoreHealth::Error(e.to_string())))
                        .is_err()
                    {
                        return;
                    }
                    store = None;
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            }
        } else if reprobe {
            last_probe = Instant::now();
            if let Some(previous) = &last_snapshot {
                let mut next: crate::model::Snapshot = (**previous).clone();
                super::probe_liveness(&mut next, &mut probe as &mut dyn HostProbe);
                if next.liveness != previous.liveness {
                    let next = Arc::new(next);
                    last_snapshot = Some(Arc::clone(&next));
                    if tx.send(Event::Snapshot(next)).is_err() {
                        return;
                    }
                }
            }
        }
        std::thread::sleep(POLL);
    }
}
