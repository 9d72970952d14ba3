//! Signalling a child's process group (a teardown's `down`, the helper and
//! whatever they started): the one place that guards the group id and the
//! one TERM-then-KILL sequence. A group id of 0 or 1 is never signalled:
//! `killpg(0)` is this process's own group and 1 is init's. Nothing else
//! in the crate calls `killpg` (a test reads the sources for it), and
//! every child run for its answer is run by [`run`].

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};

pub(crate) mod run;

/// How often [`stop_group`] looks whether the group is gone.
const POLL: Duration = Duration::from_millis(20);

/// Send `signal` to process group `pgid`. `false` when it could not be
/// sent: nobody is left in the group, or `pgid` is 0 or 1 (refused).
#[must_use]
pub(crate) fn signal(pgid: i32, signal: Signal) -> bool {
    pgid > 1 && killpg(nix::unistd::Pid::from_raw(pgid), signal).is_ok()
}

/// Whether anyone is left in process group `pgid` (`kill(2)` with signal
/// 0); `false` for a refused `pgid` (0 or 1).
#[must_use]
pub(crate) fn alive(pgid: i32) -> bool {
    pgid > 1 && killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
}

/// Stop process group `pgid`: SIGTERM, then wait (looking every 20 ms)
/// until `gone()`; SIGKILL once `grace` has passed; stop waiting at
/// `grace + linger`. Returns whether `gone()` held before it stopped
/// waiting. Blocks the calling thread.
pub(crate) fn stop_group(
    pgid: i32,
    grace: Duration,
    linger: Duration,
    mut gone: impl FnMut() -> bool,
) -> bool {
    let _ = signal(pgid, Signal::SIGTERM);
    let started = Instant::now();
    let mut killed = false;
    loop {
        if gone() {
            return true;
        }
        let waited = started.elapsed();
        if !killed && waited >= grace {
            killed = true;
            let _ = signal(pgid, Signal::SIGKILL);
        }
        if waited >= grace + linger {
            return false;
        }
        std::thread::sleep(POLL);
    }
}
