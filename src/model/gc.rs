//! When a tombstone becomes due for garbage collection, and who collects
//! it: the detail view and `snapshot` say it. Pure:
//! `now` is a parameter (unix seconds).
//!
//! The rule is one for every release: a tombstone is due once
//! `tombstoned_at <= now - 7 days` (the contract's D14, §6 step 5;
//! stackless-core-0.4.0 src/state/reaper.rs:45, `TOMBSTONE_GC_WINDOW`, and
//! :138-146, `gc_due_tombstones`). Who collects it depends on the store's
//! generation (docs/stackless-releases.md, "The controller's reaper
//! (0.4.0)"):
//! - schema 14: the stackless controller, on its reaper's next pass, as a
//!   `gc` operation keyed by the birth (stackless-daemon-0.4.0
//!   src/reaper.rs:39-50); it keeps the row while checkpoints or
//!   non-absent resources remain. This console never collects there.
//! - schemas 4 and 5: stackless's own reaper and this console's reaper
//!   (`crate::reaper::runner::gc`, GC only on these schemas), whichever
//!   passes first.
//! - any other schema: left to stackless (this console does not collect).

use super::backoff::TOMBSTONE_GC_WINDOW_SECS;
use super::generation::{Era, Generation};
use super::rows::{Instance, Status};
use super::time;

/// Who collects a due tombstone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collector {
    /// The stackless 0.4.0 controller (a `gc` operation).
    Controller,
    /// stackless's reaper or this console's reaper (schemas 4, 5).
    Reapers,
    /// stackless, by rules this console does not know (schemas 6-13, 15+,
    /// or older than 4).
    Stackless,
}

impl Collector {
    /// The collector of tombstones on a store of `generation`.
    #[must_use]
    pub const fn of(generation: Generation) -> Self {
        match generation.era() {
            Era::Controller => Self::Controller,
            Era::Contract => Self::Reapers,
            Era::Older | Era::Unreleased | Era::Newer => Self::Stackless,
        }
    }

    /// As a machine value (`snapshot --json`): `controller`, `reaper`,
    /// `stackless`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Controller => "controller",
            Self::Reapers => "reaper",
            Self::Stackless => "stackless",
        }
    }

    /// In words: `the stackless controller's lease reaper (a gc
    /// operation; an embedded controller has none)`: 0.4.0 submits `gc`
    /// from its lease reaper's tick only (stackless-daemon-0.4.0
    /// src/server.rs:145), so beside an embedded controller nobody
    /// collects;
    /// `stackless's reaper or this console's reaper, whichever passes
    /// first`, `stackless (this console does not collect on this schema)`.
    #[must_use]
    pub const fn words(self) -> &'static str {
        match self {
            Self::Controller => {
                "the stackless controller's lease reaper (a gc operation; an embedded controller has none)"
            }
            Self::Reapers => "stackless's reaper or this console's reaper, whichever passes first",
            Self::Stackless => "stackless (this console does not collect on this schema)",
        }
    }
}

/// When a tombstone is due for GC and who collects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GcPreview {
    /// Unix seconds: `tombstoned_at` + 7 days.
    pub due_at: i64,
    /// Who collects it.
    pub collector: Collector,
}

impl GcPreview {
    /// The preview of `instance` on a store of `generation`: `None` unless
    /// it is tombstoned with a `tombstoned_at` (a tombstone without one is
    /// never due: the rule compares it).
    #[must_use]
    pub fn of(instance: &Instance, generation: Generation) -> Option<Self> {
        if instance.status != Status::Tombstoned {
            return None;
        }
        Some(Self {
            due_at: instance
                .tombstoned_at?
                .saturating_add(TOMBSTONE_GC_WINDOW_SECS),
            collector: Collector::of(generation),
        })
    }

    /// Whether it is due at `now`.
    #[must_use]
    pub const fn due(&self, now: i64) -> bool {
        self.due_at <= now
    }

    /// Seconds until it is due (0 once due).
    #[must_use]
    pub const fn due_in(&self, now: i64) -> i64 {
        let left = self.due_at.saturating_sub(now);
        if left > 0 { left } else { 0 }
    }

    /// `due for GC at <stamp> (in 3d 04h), collected by <who>`, or once
    /// due `due for GC since <stamp> (2h 00m ago), collected by <who>`;
    /// the time in `zone`.
    #[must_use]
    pub fn text(&self, now: i64, zone: &jiff::tz::TimeZone) -> String {
        let stamp = time::stamp(self.due_at, zone);
        let when = if self.due(now) {
            format!("since {stamp} ({})", time::ago(self.due_at, now))
        } else {
            format!("at {stamp} (in {})", time::span(self.due_in(now)))
        };
        format!("due for GC {when}, collected by {}", self.collector.words())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tombstone(at: Option<i64>) -> Instance {
        Instance {
            name: "charlie".into(),
            substrate: "local".into(),
            status: Status::Tombstoned,
            created_at: Some(0),
            tombstoned_at: at,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        }
    }

    #[test]
    fn due_seven_days_after_the_tombstone_collected_by_the_generations_collector() {
        let utc = jiff::tz::TimeZone::UTC;
        let t = 1_796_117_797;
        let preview = GcPreview::of(&tombstone(Some(t)), Generation::new(14)).expect("a tombstone");
        assert_eq!(
            preview,
            GcPreview {
                due_at: t + 604_800,
                collector: Collector::Controller
            }
        );
        let now = t + 604_800 - (3 * 86_400 + 4 * 3600);
        assert_eq!(
            preview.text(now, &utc),
            "due for GC at 2026-12-08T09:36:37Z (in 3d 04h), collected by the stackless \
             controller's lease reaper (a gc operation; an embedded controller has none)"
        );
        assert_eq!((preview.due(now), preview.due_in(now)), (false, 273_600));
        let late = t + 604_800 + 7200;
        assert_eq!(
            preview.text(late, &utc),
            "due for GC since 2026-12-08T09:36:37Z (2h 00m ago), collected by the stackless \
             controller's lease reaper (a gc operation; an embedded controller has none)"
        );
        assert_eq!((preview.due(late), preview.due_in(late)), (true, 0));
        let v5 = GcPreview::of(&tombstone(Some(t)), Generation::new(5)).expect("a tombstone");
        assert_eq!(v5.collector, Collector::Reapers);
        assert_eq!(Collector::of(Generation::new(9)), Collector::Stackless);
        assert_eq!(GcPreview::of(&tombstone(None), Generation::new(14)), None);
        let active = Instance {
            status: Status::Active,
            ..tombstone(Some(t))
        };
        assert_eq!(GcPreview::of(&active, Generation::new(14)), None);
    }
}
