//! The reaper's threads: the pass loop ([`spawn`]) and the clock watch
//! ([`watch_clock`]).

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::Reaper;
use crate::reaper::jobs::JobRunner;
use crate::stop::StopToken;

/// Run `reaper` on a thread of its own: a pass at once, then one per tick
/// (measured on the monotonic clock), until `stop` is cancelled (the
/// console quitting, or the `console` role being lost): the wait wakes at
/// once. Teardowns run on their own threads, so a hung one never delays a
/// tick; finished ones are collected every 100 ms to start queued ones.
/// Every 100 ms the thread also reads its [`ReaperControl`]: a pass asked
/// for (`R`) starts at once (a new tick); a pause or resume (`P`) is
/// reported at once, and a resume starts a pass.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn(mut reaper: Reaper, stop: StopToken) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            if !wait_first_pass(&mut reaper, &stop) {
                return;
            }
            while !stop.is_cancelled() {
                let started = Instant::now();
                crate::fault::inject("reaper");
                let tick = i64::try_from(reaper.jobs.config.tick.as_secs()).unwrap_or(i64::MAX);
                reaper.next_pass_at = Some(reaper.now().saturating_add(tick));
                reaper.tick();
                reaper.report_status(reaper.next_pass_at);
                let mut paused = reaper.control.paused();
                while started.elapsed() < reaper.jobs.config.tick {
                    if stop.sleep(Duration::from_millis(100)) {
                        return;
                    }
                    reaper.fill();
                    if reaper.control.take_pass_request() {
                        break;
                    }
                    if reaper.control.paused() != paused {
                        paused = !paused;
                        if paused {
                            reaper.report_status(None);
                        } else {
                            break; // Resumed: a pass now.
                        }
                    }
                    reaper.release_if_stale();
                }
            }
        })
}

/// Hold the first pass for the control's first-pass wait
/// ([`ReaperControl::set_first_pass_after`]; none by default): its due
/// time reported at once as `next_pass_at` (the countdown seen before
/// anything is acted upon); a pause meanwhile keeps it from running until
/// resumed (then it runs at once); `R` runs it at once. `false` when
/// `stop` was cancelled meanwhile.
fn wait_first_pass(reaper: &mut Reaper, stop: &StopToken) -> bool {
    let wait = reaper.control.take_first_pass_after();
    if wait.is_zero() {
        return true;
    }
    let started = Instant::now();
    let secs = i64::try_from(wait.as_secs()).unwrap_or(i64::MAX);
    reaper.next_pass_at = Some(reaper.now().saturating_add(secs));
    let mut paused = reaper.control.paused();
    reaper.report_status(reaper.next_pass_at);
    loop {
        if stop.sleep(Duration::from_millis(100)) {
            return false;
        }
        reaper.fill();
        if reaper.control.take_pass_request() {
            return true;
        }
        if reaper.control.paused() != paused {
            paused = !paused;
            if !paused {
                return true; // Resumed: a pass now.
            }
            reaper.report_status(None);
        }
        if !paused && started.elapsed() >= wait {
            return true;
        }
    }
}

/// Check the wall clock against the kernel's (and the store's newest write,
/// as the reaper's last pass read it) at once and then every second, until
/// `stop` is cancelled, reporting each change ([`JobRunner::check_clock`]).
/// The console runs it whether or not a reaper thread runs here: the same
/// doubt turns `r` off (`--no-reaper`, a standby console, a dry run).
///
/// # Errors
/// The thread could not be spawned.
pub fn watch_clock(jobs: JobRunner, stop: StopToken) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("clock-watch".into())
        .spawn(move || {
            loop {
                let _ = jobs.check_clock();
                if stop.sleep(Duration::from_secs(1)) {
                    return;
                }
            }
        })
}
