//! The operator's hold on the console's own reaper thread: pause and
//! resume (`P`), a pass now (`R`), and what the thread reports back (the
//! countdown to its next pass and the last pass's totals).
//!
//! One-way arrows: the UI returns an `Effect`, the console wiring calls
//! [`ReaperControl`] (shared atomics, read by the reaper thread every
//! 100 ms), and the thread sends its status
//! ([`crate::model::reaper_status::ReaperStatus`]) through the
//! [`crate::recorder::Reporter`] the wiring gave it, as `Event::Reaper`. The pause lives in this
//! process's memory only: it is this console's, not the store's. While
//! paused the console gives its `console` role up (`crate::console`'s role
//! thread), so `reap --once` from another shell and other consoles reap
//! meanwhile; a restarted console starts unpaused. Its effect is one more reason in
//! [`super::decision::pause_reason`], the rule every pass reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Shared between the console wiring (writes) and the reaper thread
/// (reads). Cheap to clone; every clone is the same control.
#[derive(Debug, Clone, Default)]
pub struct ReaperControl(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    paused: AtomicBool,
    pass_now: AtomicBool,
    first_pass_after: AtomicU64,
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

    /// Hold this process's first reaper pass for `wait` (whole seconds;
    /// `serve --stdio --first-pass-after SECS`, which a fleet console
    /// passes): its due time is reported as `next_pass_at` so the
    /// countdown is seen before anything is acted upon, a pause meanwhile
    /// keeps it from running, `R` starts it at once.
    pub fn set_first_pass_after(&self, wait: Duration) {
        self.0
            .first_pass_after
            .store(wait.as_secs(), Ordering::SeqCst);
    }

    /// Take the first pass's wait (the thread): once, so a reaper started
    /// again (its role regained) does not wait again.
    pub(super) fn take_first_pass_after(&self) -> Duration {
        Duration::from_secs(self.0.first_pass_after.swap(0, Ordering::SeqCst))
    }

    /// Take a pending pass request (the thread).
    pub(super) fn take_pass_request(&self) -> bool {
        self.0.pass_now.swap(false, Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
