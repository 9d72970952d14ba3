//! `P` (pause / resume this console's reaper) and `R` (a pass now), and
//! what the header says of the reaper's schedule: `next pass in 42s ·
//! last: 2 reaped, 1 failed, 3 skipped`. The keys only return a
//! [`Effect`]; the console wiring sets `crate::reaper::ReaperControl`,
//! and the reaper thread reports back (`Event::Reaper`).

use super::{App, Effect, ReaperMode};
use crate::event::RoleState;
use crate::model::rules::Action;
use crate::reaper::ReaperStatus;

/// The reaper as this console sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaperView {
    /// The operator paused it (`P`): the console's own state, in memory
    /// only (not the store's). A paused console gives its role up, so
    /// `reap --once` and other consoles reap meanwhile.
    pub paused: bool,
    /// The reaper thread's last report.
    pub status: Option<ReaperStatus>,
    /// When (unix seconds) the operator asked for a pass now (`R`), until
    /// a pass closes at or after it: the header says the pass runs instead
    /// of counting down to the scheduled one.
    pub pass_asked_at: Option<i64>,
}

impl App {
    /// The reaper as this console controls it.
    #[must_use]
    pub const fn reaper(&self) -> &ReaperView {
        &self.status.reaper
    }

    /// Why `P` and `R` have nothing to act on here: the reaper is off
    /// (`--no-reaper`, `--read-only`) or another console runs it.
    pub(super) fn reaper_elsewhere(&self) -> Option<String> {
        match &self.status.role {
            RoleState::Standby { .. } => {
                return Some("this console stands by: the active console runs the reaper".into());
            }
            RoleState::Unavailable { reason } => {
                return Some(format!(
                    "the reaper does not run in this console: {}",
                    crate::model::text::sanitize_short(reason, crate::ui::text::CUT_LONG)
                ));
            }
            RoleState::ControllerReaps { pid } => {
                return Some(format!(
                    "the controller (pid {pid}) runs stackless's lease reaper: this console's reaper stands by (--reaper always reaps here too)"
                ));
            }
            RoleState::Active | RoleState::Released { .. } | RoleState::Watching { .. } => {}
        }
        matches!(self.config.reaper, ReaperMode::Off(_)).then(|| {
            format!(
                "the reaper does not run in this console ({})",
                self.config.reaper.line()
            )
        })
    }

    /// `P`: pause the reaper, or resume it ([`crate::model::rules`]).
    pub(super) fn pause_key(&mut self) -> Option<Effect> {
        let action = if self.status.reaper.paused {
            Action::Resume
        } else {
            Action::Pause
        };
        self.admit_key(&action)
    }

    /// `R`: a reaper pass now ([`crate::model::rules`]).
    pub(super) fn pass_key(&mut self) -> Option<Effect> {
        self.admit_key(&Action::Pass)
    }

    /// A report from the reaper thread: a pass closed at or after `R`
    /// ends the header's `pass running (R)`.
    pub(super) fn reaper_reported(&mut self, status: ReaperStatus) {
        if let (Some(asked), Some(last)) = (self.status.reaper.pass_asked_at, status.last)
            && last.at >= asked
        {
            self.status.reaper.pass_asked_at = None;
        }
        self.status.reaper.status = Some(status);
    }

    /// The header's schedule, while this console's reaper runs and has
    /// reported: `next pass in 42s · last: 2 reaped, 1 failed, 3 skipped`
    /// (`next pass now` once due, `pass running (R)` from `R` until that
    /// pass closes, `last: none yet` before the first pass finished).
    /// `None` while paused, off, or elsewhere.
    #[must_use]
    pub fn reaper_schedule(&self) -> Option<String> {
        if self.status.reaper.paused || self.reaper_elsewhere().is_some() {
            return None;
        }
        let status = self.status.reaper.status?;
        let asked = self.status.reaper.pass_asked_at.is_some();
        let next = status.next_pass_at.map(|at| {
            let secs = at.saturating_sub(self.now);
            if asked {
                "pass running (R)".to_owned()
            } else if secs <= 0 {
                "next pass now".to_owned()
            } else {
                format!("next pass in {}", crate::model::time::span(secs))
            }
        })?;
        let last = status
            .last
            .map_or_else(|| "none yet".to_owned(), |last| last.summary.text());
        Some(format!("{next} · last: {last}"))
    }
}
