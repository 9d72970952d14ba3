//! The reaper thread under the operator's control: a pass at once, `R` (a
//! pass now) within the thread's 100 ms poll, `P` (pause, resume), and each
//! finished pass reported with its totals and the next pass's due time.
//! Exact values, on a clock the test moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use crate::common::{CAPTURE, argv_log, fake_down, fixture, reaper_with, runtime};
use stackless_tui::event::Event;
use stackless_tui::reaper::{LastPass, PassSummary, ReaperControl, ReaperStatus};
use stackless_tui::recorder::Reporter;
use stackless_tui::stop::StopToken;
use stackless_tui::store::probe::FixedProbe;

const HOUR: i64 = 3600;

fn status(last_at: i64, next: Option<i64>, paused: bool) -> ReaperStatus {
    ReaperStatus {
        paused,
        next_pass_at: next,
        last: Some(LastPass {
            at: last_at,
            // At CAPTURE only golf is expired, inside its backoff: skipped.
            summary: PassSummary {
                skipped: 1,
                ..PassSummary::default()
            },
        }),
    }
}

/// The next status the reaper thread sends within `wait`.
fn recv(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
    wait: Duration,
) -> Option<ReaperStatus> {
    let deadline = Instant::now() + wait;
    loop {
        match rx.try_recv() {
            Ok(Event::Reaper(status)) => return Some(status),
            Ok(_) => {}
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return None,
        }
    }
}

#[test]
fn a_pass_at_once_another_on_request_and_a_pause_that_holds() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "exit 0");
    let clock = Arc::new(AtomicI64::new(CAPTURE));
    let now = Arc::clone(&clock);
    let (reaper, _log) = reaper_with(
        &path,
        down,
        Box::new(FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        }),
        Arc::new(move || now.load(Ordering::SeqCst)),
        &rt,
        |config| config.tick = Duration::from_secs(3600),
    );
    let control = ReaperControl::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let reaper = reaper.with_control(control.clone(), Reporter::new(Some(tx)));
    let stop = StopToken::new();
    let thread = stackless_tui::reaper::runner::spawn(reaper, stop.clone()).unwrap();
    let next = |rx: &mut _| recv(rx, Duration::from_secs(5)).expect("a status");

    // The first pass, at once.
    assert_eq!(next(&mut rx), status(CAPTURE, Some(CAPTURE + HOUR), false));

    // R: a pass now, not in an hour.
    clock.store(CAPTURE + 10, Ordering::SeqCst);
    let asked = Instant::now();
    control.request_pass();
    assert_eq!(
        next(&mut rx),
        status(CAPTURE + 10, Some(CAPTURE + 10 + HOUR), false)
    );
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );

    // P: paused, said at once; no due time while paused.
    control.set_paused(true);
    assert_eq!(next(&mut rx), status(CAPTURE + 10, None, true));
    // A pass asked for while paused runs nothing (the pause is a reason in
    // decision::pause_reason) and reports nothing new.
    clock.store(CAPTURE + 15, Ordering::SeqCst);
    control.request_pass();
    assert!(recv(&mut rx, Duration::from_millis(500)).is_none());

    // P again: resumed, and a pass runs at once.
    clock.store(CAPTURE + 20, Ordering::SeqCst);
    control.set_paused(false);
    assert_eq!(
        next(&mut rx),
        status(CAPTURE + 20, Some(CAPTURE + 20 + HOUR), false)
    );
    assert!(argv_log(dir.path()).is_empty(), "nothing was due");
    stop.cancel();
    thread.join().unwrap();
}

/// A reaper on the fixture at `CAPTURE`, under `control`, reporting to the
/// returned receiver; its thread started.
fn started_with(
    control: &ReaperControl,
) -> (
    tempfile::TempDir,
    tokio::sync::mpsc::UnboundedReceiver<Event>,
    StopToken,
    std::thread::JoinHandle<()>,
    tokio::runtime::Runtime,
) {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "exit 0");
    let (reaper, _log) = reaper_with(
        &path,
        down,
        Box::new(FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        }),
        Arc::new(|| CAPTURE),
        &rt,
        |config| config.tick = Duration::from_secs(3600),
    );
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let reaper = reaper.with_control(control.clone(), Reporter::new(Some(tx)));
    let stop = StopToken::new();
    let thread = stackless_tui::reaper::runner::spawn(reaper, stop.clone()).unwrap();
    (dir, rx, stop, thread, rt)
}

#[test]
fn the_first_pass_waits_its_countdown_and_a_pause_keeps_it_from_running() {
    let control = ReaperControl::default();
    control.set_first_pass_after(Duration::from_secs(10));
    let (_dir, mut rx, stop, thread, _rt) = started_with(&control);
    let next = |rx: &mut _| recv(rx, Duration::from_secs(5)).expect("a status");
    // At once: no pass yet, its due time 10 s ahead (the countdown shown).
    let waiting = ReaperStatus {
        paused: false,
        next_pass_at: Some(CAPTURE + 10),
        last: None,
    };
    assert_eq!(next(&mut rx), waiting);
    // P before it: paused, said at once, and no pass.
    control.set_paused(true);
    assert_eq!(
        next(&mut rx),
        ReaperStatus {
            paused: true,
            next_pass_at: None,
            last: None,
        }
    );
    assert!(recv(&mut rx, Duration::from_millis(500)).is_none());
    // Resumed: the first pass runs then.
    control.set_paused(false);
    assert_eq!(next(&mut rx), status(CAPTURE, Some(CAPTURE + HOUR), false));
    stop.cancel();
    thread.join().unwrap();
}

#[test]
fn the_first_pass_runs_when_its_wait_is_over_and_only_the_first_waits() {
    let control = ReaperControl::default();
    control.set_first_pass_after(Duration::from_secs(1));
    let started = Instant::now();
    let (_dir, mut rx, stop, thread, _rt) = started_with(&control);
    let next = |rx: &mut _| recv(rx, Duration::from_secs(5)).expect("a status");
    assert_eq!(next(&mut rx).next_pass_at, Some(CAPTURE + 1));
    assert_eq!(next(&mut rx), status(CAPTURE, Some(CAPTURE + HOUR), false));
    assert!(started.elapsed() >= Duration::from_secs(1));
    stop.cancel();
    thread.join().unwrap();
    // Taken once: a reaper started again (its role regained) does not wait.
    let (_dir, mut rx, stop, thread, _rt) = started_with(&control);
    assert_eq!(
        recv(&mut rx, Duration::from_secs(5)),
        Some(status(CAPTURE, Some(CAPTURE + HOUR), false))
    );
    stop.cancel();
    thread.join().unwrap();
}
