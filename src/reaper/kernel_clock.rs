//! The kernel's own idea of the time, as evidence for
//! [`super::clock::doubt`]: `/proc/stat`'s `btime` (the boot time in unix
//! seconds, which the kernel keeps in step with its clock) plus
//! `/proc/uptime` (seconds since boot). Both are read with plain `read`s,
//! so a process-local clock fake (`faketime`'s preloaded `clock_gettime`,
//! or this crate's test-only offset) does not move them. Linux only: `None`
//! elsewhere or when `/proc` is not mounted.
//!
//! The files are read at most once per [`REREAD_AFTER`] (measured: the
//! gate before every teardown read both for each expired instance, 32,000
//! `openat` for a 16,000-instance `reap --once` pass, and `/proc/stat` is
//! costly for the kernel to make); in between, the last reading is carried
//! forward by the monotonic clock, so the per-teardown check is arithmetic.
//! A fake that offsets every clock alike (`faketime "+1y"`) offsets the
//! monotonic clock by a constant, which an elapsed time cancels.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one reading of `/proc` is carried forward by the monotonic
/// clock before the files are read again.
pub(crate) const REREAD_AFTER: Duration = Duration::from_secs(1);

/// The last reading: when it was taken, and the kernel's time then (unix
/// seconds, with uptime's fraction).
static LAST: Mutex<Option<(Instant, f64)>> = Mutex::new(None);

/// The kernel's time now (unix seconds), or `None` when `/proc` cannot
/// tell. Reads `/proc` at most once per [`REREAD_AFTER`].
#[must_use]
pub(crate) fn kernel_now() -> Option<i64> {
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (at, kernel) = match *last {
        Some((at, kernel)) if at.elapsed() < REREAD_AFTER => (at, kernel),
        _ => {
            let reading = (Instant::now(), read_proc()?);
            *last = Some(reading);
            reading
        }
    };
    Some(carried(kernel, at.elapsed()))
}

/// A reading of `kernel` (unix seconds) carried forward by `elapsed`,
/// whole seconds. Pure.
#[must_use]
pub(crate) fn carried(kernel: f64, elapsed: Duration) -> i64 {
    // Boot time plus uptime is a unix time: far inside i64 and f64's
    // exact integer range.
    #[allow(clippy::cast_possible_truncation)]
    let secs = (kernel + elapsed.as_secs_f64()).floor() as i64;
    secs
}

/// `btime` plus `/proc/uptime`, read now.
fn read_proc() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let btime: i64 = stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let uptime = std::fs::read_to_string("/proc/uptime").ok()?;
    let secs: f64 = uptime.split_whitespace().next()?.parse().ok()?;
    // A boot time is a unix time: exact in f64.
    #[allow(clippy::cast_precision_loss)]
    let btime = btime as f64;
    Some(btime + secs)
}

/// The wall clock's doubt now: [`super::clock::doubt`] of `wall` against
/// [`kernel_now`].
#[must_use]
pub(crate) fn check(wall: i64) -> Option<super::clock::ClockDoubt> {
    super::clock::doubt(wall, kernel_now())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn the_kernel_agrees_with_a_correct_wall_clock() {
        let wall = || {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            i64::try_from(secs).unwrap()
        };
        // The first call reads /proc, the second is carried forward.
        for _ in 0..2 {
            if let Some(kernel) = super::kernel_now() {
                let wall = wall();
                assert!((wall - kernel).abs() <= 2, "wall {wall}, kernel {kernel}");
                assert_eq!(super::check(wall), None);
            }
        }
    }

    #[test]
    fn a_reading_is_carried_forward_by_the_elapsed_time() {
        assert_eq!(
            super::carried(1_796_118_148.75, Duration::ZERO),
            1_796_118_148
        );
        assert_eq!(
            super::carried(1_796_118_148.75, Duration::from_millis(250)),
            1_796_118_149
        );
        assert_eq!(
            super::carried(1_796_118_148.0, Duration::from_secs(61)),
            1_796_118_209
        );
    }
}
