//! The operator's hold on the console's own reaper thread: pause and
//! resume (`P`), a pass now (`R`), and what the thread reports back (the
//! countdown to its next pass and the last pass's totals).
//!
//! One-way arrows: the UI returns a `Command`, the console wiring calls
//! [`ReaperControl`] (shared atomics, read by the reaper thread every
//! 100 ms), and the thread sends [`ReaperStatus`] through the sink the
//! wiring gave it, which becomes `Event::Reaper`. The pause lives in this
//! process's memory only: it is this console's, not the store's. `reap
//! --once` from another shell, another console, and this console after a
//! restart are not affected. Its effect is one more reason in
//! [`super::decision::pause_reason`], the rule every pass reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::runner::PassSummary;

/// Shared between the console wiring (writes) and the reaper thread
/// (reads). Cheap to clone; every clone is the same control.
#[derive(Debug, Clone, Default)]
pub struct ReaperControl(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    paused: AtomicBool,
    pass_now: AtomicBool,
}

impl ReaperControl {
    /// Pause (`true`) or resume the reaper's passes. Teardowns already
    /// running finish; nothing new starts while paused.
    pub fn set_paused(&self, paused: bool) {
        self.0.paused.store(paused, Ordering::SeqCst);
    }

    /// Whether the operator paused the reaper.
    #[must_use]
    pub fn paused(&self) -> bool {
        self.0.paused.load(Ordering::SeqCst)
    }

    /// Ask for a pass now instead of at the end of the tick (taken by the
    /// thread within 100 ms).
    pub fn request_pass(&self) {
        self.0.pass_now.store(true, Ordering::SeqCst);
    }

    /// Take a pending pass request (the thread).
    pub(super) fn take_pass_request(&self) -> bool {
        self.0.pass_now.swap(false, Ordering::SeqCst)
    }
}

/// The last finished pass: when, and its totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastPass {
    /// Unix seconds when its last teardown finished.
    pub at: i64,
    /// What it did. Teardowns a pass started and that finished during the
    /// next one are counted in the pass they finished in.
    pub summary: PassSummary,
}

/// What the reaper thread reports: sent at every pass start, when a pass
/// finishes, and when the pause changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReaperStatus {
    /// The operator paused it (`P`).
    pub paused: bool,
    /// When the next pass is due (unix seconds); `None` while paused.
    pub next_pass_at: Option<i64>,
    /// The last finished pass, if one finished since the thread started.
    pub last: Option<LastPass>,
}

/// Where the thread sends [`ReaperStatus`] (the console: `Event::Reaper`).
pub type StatusSink = Arc<dyn Fn(ReaperStatus) + Send + Sync>;

impl PassSummary {
    /// The header's words: `2 reaped, 1 failed, 3 skipped` (and `, 1
    /// collected`, `, 1 error` when there are any).
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = format!(
            "{} reaped, {} failed, {} skipped",
            self.reaped, self.failed, self.skipped
        );
        if self.collected > 0 {
            text.push_str(&format!(", {} collected", self.collected));
        }
        if self.errors > 0 {
            let plural = if self.errors == 1 { "" } else { "s" };
            text.push_str(&format!(", {} error{plural}", self.errors));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_summary_in_words() {
        let summary = PassSummary {
            reaped: 2,
            failed: 1,
            skipped: 3,
            ..PassSummary::default()
        };
        assert_eq!(summary.text(), "2 reaped, 1 failed, 3 skipped");
        let summary = PassSummary {
            collected: 1,
            errors: 2,
            ..PassSummary::default()
        };
        assert_eq!(
            summary.text(),
            "0 reaped, 0 failed, 0 skipped, 1 collected, 2 errors"
        );
    }

    #[test]
    fn the_control_is_shared_and_a_request_is_taken_once() {
        let control = ReaperControl::default();
        let other = control.clone();
        other.set_paused(true);
        assert!(control.paused());
        control.request_pass();
        assert!(other.take_pass_request());
        assert!(!other.take_pass_request());
    }
}
