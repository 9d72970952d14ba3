//! Time for the reaper's decisions. Row times are the store's unix seconds,
//! so decisions need the wall clock; but a wall clock can jump. The reaper
//! follows the wall clock only as far as the monotonic clock agrees: a jump
//! forward is ignored (nothing is reaped or GC'd early), a jump back is
//! accepted (which only delays).

use std::time::Instant;

/// A divergence between the wall clock and the monotonic clock larger than
/// this is reported as a jump. Smaller ones are NTP slewing.
pub const JUMP_SLACK_SECS: i64 = 5;

/// The decision time, given the wall clock reading at the last re-base
/// (`base_wall`), the monotonic seconds since then, and the wall clock now:
/// the earlier of the wall clock and the monotonic extrapolation. Pure.
#[must_use]
pub fn effective_now(base_wall: i64, mono_elapsed: i64, wall: i64) -> i64 {
    wall.min(base_wall.saturating_add(mono_elapsed))
}

/// A wall-clock jump, as the reaper reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jump {
    /// The wall clock is this many seconds ahead of the monotonic clock;
    /// decisions keep following the monotonic clock.
    Forward(i64),
    /// The wall clock went back this many seconds; decisions follow it.
    Back(i64),
}

/// Tracks the wall clock against the monotonic clock across passes.
#[derive(Debug, Default)]
pub struct TimeGuard {
    base: Option<(Instant, i64)>,
    ahead: bool,
}

impl TimeGuard {
    /// The decision time for wall-clock reading `wall`, and a jump when one
    /// is first seen.
    pub fn now(&mut self, wall: i64) -> (i64, Option<Jump>) {
        let Some((at, base_wall)) = self.base else {
            self.base = Some((Instant::now(), wall));
            return (wall, None);
        };
        let elapsed = i64::try_from(at.elapsed().as_secs()).unwrap_or(i64::MAX);
        let extrapolated = base_wall.saturating_add(elapsed);
        let now = effective_now(base_wall, elapsed, wall);
        let mut jump = None;
        if wall.saturating_sub(extrapolated) > JUMP_SLACK_SECS {
            if !self.ahead {
                self.ahead = true;
                jump = Some(Jump::Forward(wall.saturating_sub(extrapolated)));
            }
        } else {
            if extrapolated.saturating_sub(wall) > JUMP_SLACK_SECS {
                jump = Some(Jump::Back(extrapolated.saturating_sub(wall)));
            }
            // The wall clock is not ahead: trust it from here on.
            self.ahead = false;
            self.base = Some((Instant::now(), wall));
        }
        (now, jump)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_time_never_runs_ahead_of_the_monotonic_clock() {
        assert_eq!(effective_now(1000, 60, 1060), 1060);
        assert_eq!(effective_now(1000, 60, 1000 + 86_400), 1060);
        assert_eq!(effective_now(1000, 60, 500), 500);
        assert_eq!(effective_now(i64::MAX, 60, 0), 0);
    }

    #[test]
    fn guard_reports_a_forward_jump_once_and_ignores_it() {
        let mut guard = TimeGuard::default();
        assert_eq!(guard.now(1000), (1000, None));
        let (now, jump) = guard.now(1000 + 86_400);
        assert!(now < 1000 + 10, "{now}");
        assert_eq!(jump, Some(Jump::Forward(86_400)));
        let (again, jump) = guard.now(1000 + 86_400);
        assert!(again < 1000 + 10);
        assert_eq!(jump, None);
    }

    #[test]
    fn guard_accepts_a_backward_jump() {
        let mut guard = TimeGuard::default();
        guard.now(10_000);
        assert_eq!(guard.now(4_000), (4_000, Some(Jump::Back(6_000))));
        assert_eq!(guard.now(4_000), (4_000, None));
    }
}
