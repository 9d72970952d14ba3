//! What the reaper reports back to the console, as data: its status after
//! each pass ([`ReaperStatus`], with the pass's totals [`PassSummary`]) and
//! the reasons it and the operator's `r`/`d` keys are held
//! ([`PauseReasons`]). The types live here, below both the reaper that
//! sends them and the UI that shows them (`crate::event::Event::Reaper`,
//! `crate::event::Event::Pauses`).

/// The totals of one pass, for `reap --once` exit codes and the header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassSummary {
    /// Teardowns that succeeded.
    pub reaped: usize,
    /// Teardowns that failed (recorded with a backoff).
    pub failed: usize,
    /// Tombstones collected.
    pub collected: usize,
    /// Tombstones past 7 days left to stackless (v14: the controller
    /// collects them; v6-13, >14: stackless does). Not collected here.
    pub tombstones_due: usize,
    /// Store errors that stopped part of the pass.
    pub errors: usize,
    /// Teardowns stopped or never started because the pass was interrupted.
    pub stopped: usize,
    /// Worklist entries not torn down: locked, an operation pending, inside
    /// their backoff, a name refused, or a teardown aborted or answered
    /// `state.lock.held`.
    pub skipped: usize,
}

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
/// finishes, and when the operator's pause changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReaperStatus {
    /// The operator paused it (`P`).
    pub paused: bool,
    /// When the next pass is due (unix seconds); `None` while paused.
    pub next_pass_at: Option<i64>,
    /// The last finished pass, if one finished since the thread started.
    pub last: Option<LastPass>,
}

/// Why the reaper is held, and with it the operator's `r` (all three) and
/// `d` (an unrecorded failure): each `Some(text)` while it holds. Sent
/// whole, by whoever learns of a change (`crate::recorder::Reporter`),
/// whether or not a reaper thread runs in this console.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PauseReasons {
    /// The wall clock looks wrong (ahead of the kernel's clock, or behind
    /// the store's newest write): the doubt as said in the header
    /// (`crate::reaper::clock::ClockDoubt`).
    pub clock: Option<String>,
    /// A failed reap's `reap_attempts` record could not be written (a
    /// read-only store, a full disk, an I/O error): the store error, as
    /// shown. Held until the owed record is written.
    pub unrecorded: Option<String>,
    /// The audit trail does not take writes: the append's error. Held
    /// until an owed line is written.
    pub audit: Option<String>,
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
}
