//! History at a glance: the reaps and failures of the last hour as two
//! unicode sparklines for the Activity title (`1h reaped ▁▁▃█ 5 · failed
//! ▁▂▁▁ 2`), a pure function of the entries and the time.

/// The hour in [`BUCKETS`] buckets of this many seconds.
pub(crate) const BUCKET_SECS: i64 = 300;
/// Buckets per line (12 x 5 minutes: the last hour).
pub(crate) const BUCKETS: usize = 12;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The reaps and failures of the last hour as whole title items
/// (`events`: `(unix seconds, failed, count)`, a reap when `failed` is
/// false; oldest bucket first, ending at `now`; `None` when the hour holds
/// neither), in two forms: with the bars
/// (`["1h reaped ▁▁▃█ 5", "failed ▁▂▁▁ 2"]`) and compact, for a narrow
/// title (`["1h reaped 5", "failed 2"]`): a title drops items whole,
/// never cutting a count off.
#[must_use]
pub(crate) fn last_hour_items(
    events: impl IntoIterator<Item = (i64, bool, u32)>,
    now: i64,
) -> Option<[Vec<String>; 2]> {
    let mut reaped = [0_u32; BUCKETS];
    let mut failed = [0_u32; BUCKETS];
    for (at, failure, count) in events {
        let age = now.saturating_sub(at);
        if !(0..BUCKET_SECS * BUCKETS as i64).contains(&age) {
            continue;
        }
        let bucket = BUCKETS - 1 - usize::try_from(age / BUCKET_SECS).unwrap_or(0);
        let counts = if failure { &mut failed } else { &mut reaped };
        counts[bucket] = counts[bucket].saturating_add(count);
    }
    let total = |c: &[u32; BUCKETS]| c.iter().copied().fold(0_u32, u32::saturating_add);
    let (r, f) = (total(&reaped), total(&failed));
    (r + f > 0).then(|| {
        [
            vec![
                format!("1h reaped {} {r}", bars(&reaped)),
                format!("failed {} {f}", bars(&failed)),
            ],
            vec![format!("1h reaped {r}"), format!("failed {f}")],
        ]
    })
}

/// One bar per bucket, scaled to the largest (an empty bucket: `▁`).
fn bars(counts: &[u32; BUCKETS]) -> String {
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    counts
        .iter()
        .map(|&c| {
            if c == 0 {
                BARS[0]
            } else {
                // 1..=max onto ▂..█ (the largest is always █).
                let step = (u64::from(c) * 7).div_ceil(u64::from(max));
                BARS[usize::try_from(step).unwrap_or(6).clamp(1, 7)]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sparkline text for `events` (`(unix seconds, failed, count)`:
    /// a reap when `failed` is false), oldest bucket first, ending at `now`.
    /// `None` when the last hour holds neither.
    fn last_hour(events: impl IntoIterator<Item = (i64, bool, u32)>, now: i64) -> Option<String> {
        last_hour_items(events, now).map(|[full, _]| full.join(" · "))
    }

    const NOW: i64 = 1_795_960_686;

    #[test]
    fn buckets_the_last_hour() {
        let events = [
            (NOW, false, 1),
            (NOW - 10, false, 2),
            (NOW - 301, false, 1),
            (NOW - 3599, true, 1),
            (NOW - 3600, true, 5),
            (NOW + 5, false, 9),
        ];
        assert_eq!(
            last_hour(events, NOW).as_deref(),
            Some("1h reaped ▁▁▁▁▁▁▁▁▁▁▄█ 4 · failed █▁▁▁▁▁▁▁▁▁▁▁ 1")
        );
        assert_eq!(last_hour([(NOW - 4000, false, 1)], NOW), None);
    }
}
