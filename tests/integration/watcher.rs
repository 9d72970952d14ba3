//! The watcher thread against a real store: commits by another process show
//! up as fresh snapshots; a long write transaction elsewhere shows as busy.

use std::time::{Duration, Instant};

use crate::common::fixture;
use stackless_tui::event::{Event, StoreHealth};
use stackless_tui::store::Access;

fn next_matching(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
    within: Duration,
    mut want: impl FnMut(&Event) -> bool,
) -> Option<(Event, Duration)> {
    let started = Instant::now();
    while started.elapsed() < within {
        match rx.try_recv() {
            Ok(event) if want(&event) => return Some((event, started.elapsed())),
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    None
}

#[test]
fn commits_elsewhere_arrive_and_busy_is_reported() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadWrite, tx, stop.clone())
            .unwrap();

    let (first, _) = next_matching(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Snapshot(_))
    })
    .expect("an initial snapshot");
    let Event::Snapshot(first) = first else {
        unreachable!()
    };
    assert_eq!(first.instances.len(), 8);

    // Another process renews alpha's lease.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute(
            "UPDATE leases SET expires_at = 42 WHERE instance = 'alpha'",
            [],
        )
        .unwrap();
    let (changed, took) = next_matching(&mut rx, Duration::from_secs(5), |e| {
        matches!(e, Event::Snapshot(s) if s.instance("alpha").and_then(|i| i.lease).map(|l| l.expires_at) == Some(42))
    })
    .expect("the change arrives");
    assert!(matches!(changed, Event::Snapshot(_)));
    assert!(took < Duration::from_secs(2), "took {took:?}");

    // Another process holds a write transaction: busy, then back to normal.
    other
        .execute_batch("BEGIN IMMEDIATE; UPDATE instances SET substrate = substrate;")
        .unwrap();
    let (busy, _) = next_matching(&mut rx, Duration::from_secs(6), |e| {
        matches!(e, Event::StoreHealth(StoreHealth::Busy(_)))
    })
    .expect("busy is reported");
    let Event::StoreHealth(StoreHealth::Busy(since)) = busy else {
        unreachable!()
    };
    assert!(since.elapsed() >= Duration::from_millis(900));
    other.execute_batch("ROLLBACK").unwrap();
    next_matching(&mut rx, Duration::from_secs(6), |e| {
        matches!(e, Event::StoreHealth(StoreHealth::Ok))
    })
    .expect("healthy again");

    stop.cancel();
    handle.join().unwrap();
}

#[test]
fn a_deleted_store_shows_a_banner_and_reconnects_when_it_returns() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let saved = dir.path().join("saved.db");
    std::fs::copy(&path, &saved).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadWrite, tx, stop.clone())
            .unwrap();
    next_matching(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Snapshot(_))
    })
    .expect("an initial snapshot");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let (gone, _) = next_matching(&mut rx, Duration::from_secs(5), |e| {
        matches!(e, Event::StoreHealth(StoreHealth::Error(_)))
    })
    .expect("the banner");
    let Event::StoreHealth(StoreHealth::Error(message)) = gone else {
        unreachable!()
    };
    let canonical = std::fs::canonicalize(dir.path()).unwrap().join("state.db");
    assert!(
        message
            == format!(
                "the store file {} is gone: reconnecting when it returns",
                path.display()
            )
            || message.contains(&canonical.display().to_string()),
        "{message}"
    );
    // It comes back with one more instance.
    std::fs::copy(&saved, &path).unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "INSERT INTO instances (name, substrate, definition, created_at) VALUES ('brand-new', 'local', '', 1)",
            [],
        )
        .unwrap();
    let (back, _) = next_matching(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, Event::Snapshot(s) if s.instance("brand-new").is_some()),
    )
    .expect("the returned store is read");
    assert!(matches!(back, Event::Snapshot(_)));
    next_matching(&mut rx, Duration::from_secs(5), |e| {
        matches!(e, Event::StoreHealth(StoreHealth::Ok))
    })
    .expect("healthy again");
    stop.cancel();
    handle.join().unwrap();
}

/// A child process holding an exclusive flock on `<state_dir>/controller.lock`,
/// as the 0.4.0 controller does; killed on drop.
struct LockHolder(std::process::Child);

impl LockHolder {
    fn start(lock: &std::path::Path) -> Self {
        let child = std::process::Command::new("flock")
            // -o: `sleep` does not inherit the locked file, so killing
            // `flock` releases the lock.
            .args(["-x", "-o"])
            .arg(lock)
            .args(["sleep", "60"])
            .spawn()
            .expect("flock(1)");
        Self(child)
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The pid /proc/locks names for the lock on `<state_dir>/controller.lock`.
fn wait_for_holder(state_dir: &std::path::Path) -> Option<u32> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if let Some(pid) = stackless_tui::controller::probe::probe(state_dir).pid {
            return Some(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn controller_lock_holder_is_found_and_sent_when_it_changes() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let lock = dir.path().join("controller.lock");
    std::fs::write(&lock, "").unwrap();
    std::fs::write(
        dir.path().join("daemon.persistence"),
        "cannot run launchctl: No such file or directory (os error 2)\n",
    )
    .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadOnly, tx, stop.clone())
            .unwrap();
    let (first, _) = next_matching(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Controller(_))
    })
    .expect("a first controller state");
    let Event::Controller(first) = first else {
        unreachable!()
    };
    assert_eq!(first.pid, None);
    assert_eq!(
        first.persistence_warning.as_deref(),
        Some(
            "leases enforced only while the daemon happens to be running: cannot run launchctl: No such file or directory (os error 2)"
        )
    );

    let holder = LockHolder::start(&lock);
    let pid = wait_for_holder(dir.path()).expect("the holder in /proc/locks");
    assert_eq!(pid, holder.0.id(), "the flock process holds it");
    let (held, _) = next_matching(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, Event::Controller(c) if c.pid.is_some()),
    )
    .expect("the watcher sees the holder");
    let Event::Controller(held) = held else {
        unreachable!()
    };
    assert_eq!(held.pid, Some(pid));

    drop(holder);
    assert!(
        next_matching(&mut rx, Duration::from_secs(10), |e| {
            matches!(e, Event::Controller(c) if c.pid.is_none())
        })
        .is_some(),
        "the holder's exit is seen"
    );
    stop.cancel();
    handle.join().unwrap();
}

/// A service process that dies under an active instance is counted on the
/// next re-probe (within a second or two), with no commit to the store: the
/// Instances row's `1 svc dead`. The other recorded services of the real
/// 0.4.0 store run nowhere here: counted at once, in a snapshot of the same
/// rows sent right after the first.
#[test]
fn a_service_that_dies_is_counted_without_a_commit() {
    use stackless_tui::store::probe::{HostProbe as _, SysinfoProbe};
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("spawn sleep");
    let pid = child.id();
    let started = SysinfoProbe::new().start_time(pid).expect("its start time");
    let payload = serde_json::json!({
        "pid": pid, "start_time": started, "port": 41325,
        "hosts": ["web.alpha.localhost"], "log": "/elsewhere/web.log"
    });
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE checkpoints SET payload = ?1 WHERE instance = 'alpha' AND step_id = 'start:web'",
            [payload.to_string()],
        )
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadOnly, tx, stop.clone())
            .unwrap();
    // The rows first; the counts right after them (same rows).
    let (rows, _) = next_matching(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Snapshot(_))
    })
    .expect("an initial snapshot");
    let Event::Snapshot(rows) = rows else {
        unreachable!()
    };
    let (first, took) = next_matching(
        &mut rx,
        Duration::from_secs(5),
        |e| matches!(e, Event::Snapshot(s) if !s.services_dead.is_empty()),
    )
    .expect("the counts");
    let Event::Snapshot(first) = first else {
        unreachable!()
    };
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(std::sync::Arc::ptr_eq(&rows.rows, &first.rows));
    assert_eq!(first.dead_services("alpha"), 0);
    for name in ["hotel", "india", "golf"] {
        assert_eq!(first.dead_services(name), 1, "{name}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let (_, took) = next_matching(
        &mut rx,
        Duration::from_secs(5),
        |e| matches!(e, Event::Snapshot(s) if s.dead_services("alpha") == 1),
    )
    .expect("the death is seen");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    stop.cancel();
    handle.join().unwrap();
}

/// A failed `up` that kept its lease, its process alive and its health
/// check failing (the real 0.4.0 store's hotel, observed present and
/// unready): the watcher's snapshot counts its service `unhealthy` with
/// no store read on the render thread; when the process dies it is
/// `absent`: dead, no longer unhealthy, with no commit.
#[test]
fn an_unready_live_service_is_unhealthy_until_it_dies() {
    use stackless_tui::store::probe::{HostProbe as _, SysinfoProbe};
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("spawn sleep");
    let pid = child.id();
    let started = SysinfoProbe::new().start_time(pid).expect("its start time");
    let payload = serde_json::json!({
        "pid": pid, "start_time": started, "port": 33291,
        "hosts": ["web.hotel.localhost"], "log": "/elsewhere/web.log"
    });
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE checkpoints SET payload = ?1 WHERE instance = 'hotel' AND step_id = 'start:web'",
            [payload.to_string()],
        )
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadOnly, tx, stop.clone())
            .unwrap();
    let (first, _) = next_matching(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, Event::Snapshot(s) if s.unhealthy_services("hotel") > 0),
    )
    .expect("hotel counted unhealthy");
    let Event::Snapshot(first) = first else {
        unreachable!()
    };
    assert_eq!(first.unhealthy_services("hotel"), 1);
    assert_eq!(first.dead_services("hotel"), 0);
    // india's recorded process runs nowhere here: absent, not unhealthy.
    assert_eq!(first.unhealthy_services("india"), 0);
    assert_eq!(first.dead_services("india"), 1);
    child.kill().unwrap();
    child.wait().unwrap();
    let (after, _) = next_matching(
        &mut rx,
        Duration::from_secs(5),
        |e| matches!(e, Event::Snapshot(s) if s.dead_services("hotel") == 1),
    )
    .expect("the death is seen");
    let Event::Snapshot(after) = after else {
        unreachable!()
    };
    assert_eq!(after.unhealthy_services("hotel"), 0);
    stop.cancel();
    handle.join().unwrap();
}

/// The watcher is woken by the kernel (it says so first: `watch: inotify`
/// in the header), and a burst of commits is read in a bounded number of
/// reads (one per `MIN_GAP` at most), the last state always shown.
#[test]
fn woken_by_inotify_and_bursts_are_coalesced() {
    use stackless_tui::event::WatchMode;
    use stackless_tui::store::watcher::MIN_GAP;
    let (_dir, path) = fixture("stackless-real-v4.db");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = stackless_tui::stop::StopToken::new();
    let handle =
        stackless_tui::store::watcher::spawn(path.clone(), Access::ReadOnly, tx, stop.clone())
            .unwrap();
    let (mode, _) = next_matching(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Watch(_))
    })
    .expect("the watch mode is said");
    assert!(matches!(mode, Event::Watch(WatchMode::Notify)));
    next_matching(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, Event::Snapshot(_))
    })
    .expect("an initial snapshot");

    let other = rusqlite::Connection::open(&path).unwrap();
    let started = Instant::now();
    let commits = 300;
    for n in 1..=commits {
        other
            .execute(
                "UPDATE leases SET expires_at = ?1 WHERE instance = 'alpha'",
                [n],
            )
            .unwrap();
    }
    let mut reads = 0u32;
    let last = next_matching(&mut rx, Duration::from_secs(10), |e| {
        let Event::Snapshot(s) = e else {
            return false;
        };
        reads += 1;
        s.instance("alpha")
            .and_then(|i| i.lease)
            .map(|l| l.expires_at)
            == Some(commits)
    });
    assert!(last.is_some(), "the last commit is shown");
    // A read starts at least MIN_GAP after the previous one ended.
    let bound = started.elapsed().as_millis() / MIN_GAP.as_millis() + 2;
    assert!(u128::from(reads) <= bound, "{reads} reads, at most {bound}");
    stop.cancel();
    handle.join().unwrap();
}

/// A store at least `Head::from_bytes` big: the first read sends the rows
/// with the soonest leases (the Instances pane's default order;
/// `Partial`: how many of how many, no operations) before the whole,
/// which follows at once and replaces them; a store with no more rows or
/// fewer leases than the head, or a smaller file, is read whole only.
#[test]
fn a_big_store_sends_its_first_rows_then_the_whole() {
    use stackless_tui::model::Partial;
    use stackless_tui::store::watcher::{Head, spawn_with_head};

    let (_dir, path) = fixture("stackless-real-v4.db");
    let first_two = |head: Head| {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let stop = stackless_tui::stop::StopToken::new();
        let handle =
            spawn_with_head(path.clone(), Access::ReadWrite, tx, stop.clone(), head).unwrap();
        let mut snapshots = Vec::new();
        while snapshots.len() < 2 {
            let Some((Event::Snapshot(s), _)) =
                next_matching(&mut rx, Duration::from_secs(10), |e| {
                    matches!(e, Event::Snapshot(_))
                })
            else {
                break;
            };
            let whole = s.partial.is_none();
            snapshots.push(s);
            if whole {
                break;
            }
        }
        stop.cancel();
        handle.join().unwrap();
        snapshots
    };

    let sent = first_two(Head {
        from_bytes: 0,
        rows: 3,
    });
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].partial, Some(Partial { read: 3, total: 8 }));
    let whole = &sent[1];
    assert_eq!(whole.partial, None);
    assert_eq!(whole.instances.len(), 8);
    let names = |s: &stackless_tui::model::Snapshot| -> Vec<String> {
        s.instances.iter().map(|i| i.name.clone()).collect()
    };
    // The three soonest leases (golf, duo-..., bravo), held in name order.
    assert_eq!(
        names(&sent[0]),
        ["bravo", "duo-79882653-fd55-4b17-bf19-d4afc89a2b5e", "golf"]
    );
    for first in &*sent[0].instances {
        assert_eq!(
            Some(&**first),
            whole.instance(&first.name),
            "the first rows are the whole read's"
        );
    }

    // As many rows as the store, or more than its six leases: read whole
    // only.
    for rows in [8, 7] {
        let sent = first_two(Head {
            from_bytes: 0,
            rows,
        });
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].partial, sent[0].instances.len()), (None, 8));
    }
    let sent = first_two(Head {
        from_bytes: 0,
        rows: 6,
    });
    assert_eq!(sent[0].partial, Some(Partial { read: 6, total: 8 }));
    // A file smaller than the size: read whole only.
    let sent = first_two(Head {
        from_bytes: u64::MAX,
        rows: 3,
    });
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].partial, sent[0].instances.len()), (None, 8));
}
