//! Time for the reaper's decisions. Row times are the store's unix seconds,
//! so decisions need the wall clock; but a wall clock can jump. The reaper
//! follows the wall clock only as far as the monotonic clock agrees: a jump
//! forward is ignored (nothing is reaped or GC'd early), a jump back is
//! accepted (which only delays).
//!
//! A clock already wrong when the console starts makes no jump: for that,
//! [`doubt`] compares the wall clock with the kernel's own (boot time plus
//! uptime, read by [`super::kernel_clock`]), which a process-local fake
//! (`faketime`, a wrong `TZ`-less offset) does not move. While the wall
//! clock reads more than [`PLAUSIBLE_AHEAD_SECS`] ahead of it, the reaper
//! and GC are paused and `r` is off. A clock behind is not doubted: it only
//! delays.

use std::time::Instant;

/// A divergence between the wall clock and the monotonic clock larger than
/// this is reported as a jump. Smaller ones are NTP slewing.
pub(crate) const JUMP_SLACK_SECS: i64 = 5;

/// The decision time, given the wall clock reading at the last re-base
/// (`base_wall`), the monotonic seconds since then, and the wall clock now:
/// the earlier of the wall clock and the monotonic extrapolation. Pure.
#[must_use]
pub(crate) fn effective_now(base_wall: i64, mono_elapsed: i64, wall: i64) -> i64 {
    wall.min(base_wall.saturating_add(mono_elapsed))
}

/// A wall-clock jump, as the reaper reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jump {
    /// The wall clock is this many seconds ahead of the monotonic clock;
    /// decisions keep following the monotonic clock.
    Forward(i64),
    /// The wall clock went back this many seconds; decisions follow it.
    Back(i64),
}

/// Tracks the wall clock against the monotonic clock across passes.
///
/// The anchor (a wall reading and the monotonic instant it was taken) moves
/// only while the two clocks agree (within [`JUMP_SLACK_SECS`]). A jump
/// forward is then ignored (decisions follow the anchor's extrapolation); a
/// jump back is followed (decisions wait); and when the wall clock comes
/// back into agreement (a wrong setting corrected), the anchor moves again.
#[derive(Debug, Default)]
pub(crate) struct TimeGuard {
    anchor: Option<(Instant, i64)>,
    reported: Option<Jump>,
}

impl TimeGuard {
    /// The decision time for wall-clock reading `wall`, and a jump when one
    /// is first seen.
    pub(crate) fn now(&mut self, wall: i64) -> (i64, Option<Jump>) {
        let Some((at, base_wall)) = self.anchor else {
            self.anchor = Some((Instant::now(), wall));
            return (wall, None);
        };
        let elapsed = i64::try_from(at.elapsed().as_secs()).unwrap_or(i64::MAX);
        let extrapolated = base_wall.saturating_add(elapsed);
        let now = effective_now(base_wall, elapsed, wall);
        let jump = if wall.saturating_sub(extrapolated) > JUMP_SLACK_SECS {
            Some(Jump::Forward(wall.saturating_sub(extrapolated)))
        } else if extrapolated.saturating_sub(wall) > JUMP_SLACK_SECS {
            Some(Jump::Back(extrapolated.saturating_sub(wall)))
        } else {
            // The clocks agree: trust the wall clock from here on.
            self.anchor = Some((Instant::now(), wall));
            None
        };
        // Report a jump when it starts (or changes direction), once.
        let new = match (jump, self.reported) {
            (Some(Jump::Forward(_)), Some(Jump::Forward(_)))
            | (Some(Jump::Back(_)), Some(Jump::Back(_)))
            | (None, _) => None,
            (jump, _) => jump,
        };
        self.reported = jump;
        (now, new)
    }
}

/// How far the wall clock may read ahead of the kernel's clock before it
/// is doubted. The kernel's reading (boot time, whole seconds, plus
/// uptime) is within 2 s of a correct wall clock; anything past this is a
/// clock set wrong for this process.
pub(crate) const PLAUSIBLE_AHEAD_SECS: i64 = 300;

/// Why the wall clock looks wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockDoubt {
    /// It reads `ahead` seconds ahead of the kernel's clock ([`doubt`]).
    AheadOfKernel {
        /// Seconds ahead.
        ahead: i64,
    },
    /// It reads `behind` seconds behind the newest time a writer put in
    /// the store ([`crate::model::clock_evidence`]: the kernel agrees with
    /// a machine whose whole clock is wrong, the store's rows do not).
    BehindStore {
        /// Seconds behind.
        behind: i64,
        /// That write.
        newest: crate::model::clock_evidence::NewestWrite,
    },
}

impl std::fmt::Display for ClockDoubt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AheadOfKernel { ahead } => write!(
                f,
                "clock looks wrong: the wall clock is {} ahead of the kernel's clock (boot time + uptime); reaper and GC paused, r is off",
                crate::model::time::span(*ahead)
            ),
            Self::BehindStore { behind, newest } => write!(
                f,
                "clock looks wrong: the wall clock is {} behind the store's newest write ({}, {}); reaper and GC paused, r is off",
                crate::model::time::span(*behind),
                newest.what,
                crate::model::time::rfc3339_or_raw(newest.at)
            ),
        }
    }
}

/// The store's evidence against the wall reading `wall`: doubted when it
/// reads more than 5 minutes behind `newest`
/// ([`crate::model::clock_evidence::behind`]). Pure.
#[must_use]
pub(crate) fn doubt_from_store(
    wall: i64,
    newest: Option<&crate::model::clock_evidence::NewestWrite>,
) -> Option<ClockDoubt> {
    let newest = newest?;
    crate::model::clock_evidence::behind(wall, newest).map(|behind| ClockDoubt::BehindStore {
        behind,
        newest: newest.clone(),
    })
}

/// Whether the wall reading `wall` (unix seconds) is implausible given the
/// kernel's reading `kernel` (unix seconds; `None` when unknown, e.g. no
/// `/proc`: never doubted then). Pure.
#[must_use]
pub(crate) fn doubt(wall: i64, kernel: Option<i64>) -> Option<ClockDoubt> {
    let ahead = wall.saturating_sub(kernel?);
    (ahead > PLAUSIBLE_AHEAD_SECS).then_some(ClockDoubt::AheadOfKernel { ahead })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_clock_far_ahead_of_the_kernel_is_doubted_a_correct_one_never() {
        let kernel = 1_795_960_686;
        assert_eq!(doubt(kernel, Some(kernel)), None);
        assert_eq!(doubt(kernel + 2, Some(kernel)), None, "rounding");
        assert_eq!(doubt(kernel + PLAUSIBLE_AHEAD_SECS, Some(kernel)), None);
        assert_eq!(
            doubt(kernel - 86_400, Some(kernel)),
            None,
            "behind only delays"
        );
        assert_eq!(doubt(kernel + 365 * 86_400, None), None, "no evidence");
        let year = doubt(kernel + 365 * 86_400, Some(kernel)).expect("doubted");
        assert_eq!(
            year,
            ClockDoubt::AheadOfKernel {
                ahead: 365 * 86_400
            }
        );
        assert_eq!(
            year.to_string(),
            format!(
                "clock looks wrong: the wall clock is {} ahead of the kernel's clock (boot time + uptime); reaper and GC paused, r is off",
                crate::model::time::span(365 * 86_400)
            )
        );
    }

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

    #[test]
    fn a_corrected_clock_is_trusted_again() {
        // Back an hour, then corrected: decisions follow the wall clock
        // again at once, not an hour late for ever.
        let mut guard = TimeGuard::default();
        guard.now(10_000);
        assert_eq!(guard.now(10_000 - 3_600).0, 10_000 - 3_600);
        assert_eq!(guard.now(10_000), (10_000, None));
    }
}
