//! Backoff arithmetic for failed reaps (docs/stackless-state-store.md §6
//! step 4) and the tombstone GC window (D14). Pure: the reaper's decision
//! (`crate::reaper::decision`) and the store adapter (which records a
//! failure) both read it.

use std::time::Duration;

/// First backoff after a failed reap (§6 step 4): about one daemon tick.
pub const BACKOFF_BASE_SECS: i64 = 60;
/// Backoff ceiling (§6 step 4): a runaway instance is retried hourly.
pub const BACKOFF_CAP_SECS: i64 = 3600;
/// Tombstones are kept this long for `logs`/`status`, then GC'd (D14).
pub const TOMBSTONE_GC_WINDOW_SECS: i64 = 7 * 24 * 3600;

/// Backoff after `attempts` consecutive failures, in seconds:
/// `min(60 * 2^(attempts-1), 3600)` = 60, 120, 240, ... capped at 3600
/// (§6 step 4). `attempts <= 1` (including hostile zero or negative counts)
/// gives the base.
#[must_use]
pub fn backoff_secs(attempts: i64) -> i64 {
    let shift = attempts.saturating_sub(1).clamp(0, 16);
    (BACKOFF_BASE_SECS << shift).min(BACKOFF_CAP_SECS)
}

/// [`backoff_secs`] as a [`Duration`].
#[must_use]
pub fn backoff(attempts: i64) -> Duration {
    Duration::from_secs(backoff_secs(attempts).unsigned_abs())
}

/// The attempt count and next retry time to record after a failure at `now`
/// (§6 step 4): `attempts = previous + 1` (1 if none), `next_retry_at = now +
/// backoff(attempts)`. Saturating, so hostile stored counts cannot overflow.
#[must_use]
pub fn next_failure(previous_attempts: Option<i64>, now: i64) -> (i64, i64) {
    let attempts = previous_attempts.map_or(1, |n| n.max(0).saturating_add(1));
    (attempts, now.saturating_add(backoff_secs(attempts)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_795_960_686;

    #[test]
    fn backoff_table() {
        assert_eq!(backoff_secs(1), 60);
        assert_eq!(backoff_secs(2), 120);
        assert_eq!(backoff_secs(3), 240);
        assert_eq!(backoff_secs(4), 480);
        assert_eq!(backoff_secs(5), 960);
        assert_eq!(backoff_secs(6), 1920);
        assert_eq!(backoff_secs(7), 3600);
        assert_eq!(backoff_secs(100), 3600);
        assert_eq!(backoff_secs(i64::MAX), 3600);
        assert_eq!(backoff_secs(0), 60);
        assert_eq!(backoff_secs(-7), 60);
        assert_eq!(backoff(3), Duration::from_secs(240));
    }

    #[test]
    fn failure_bookkeeping() {
        assert_eq!(next_failure(None, NOW), (1, NOW + 60));
        assert_eq!(next_failure(Some(3), NOW), (4, NOW + 480));
        assert_eq!(next_failure(Some(i64::MAX), NOW), (i64::MAX, NOW + 3600));
        assert_eq!(next_failure(Some(-4), NOW), (1, NOW + 60));
        assert_eq!(next_failure(Some(1), i64::MAX), (2, i64::MAX));
    }
}
