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
    let stop = stackless_tui::cancel::CancelToken::new();
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
    let stop = stackless_tui::cancel::CancelToken::new();
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
                "the store file {} is gone: showing the last snapshot; reconnecting when it returns",
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
