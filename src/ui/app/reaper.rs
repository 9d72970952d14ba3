//! `P` (pause / resume this console's reaper) and `R` (a pass now), and
//! what the header says of the reaper's schedule: `next pass in 42s ·
//! last: 2 reaped, 1 failed, 3 skipped`. The keys only return a
//! [`Effect`]; the console wiring sets `crate::reaper::ReaperControl`,
//! and the reaper thread reports back (`Event::Reaper`).

use super::{App, Effect, FlashLevel, ReaperMode};
use crate::event::RoleState;
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

    /// `P`: pause the reaper, or resume it.
    pub(super) fn pause_key(&mut self) -> Option<Effect> {
        if let Some(why) = self.reaper_elsewhere() {
            self.set_flash(FlashLevel::Warning, why);
            return None;
        }
        self.status.reaper.paused = !self.status.reaper.paused;
        let text = if self.status.reaper.paused {
            "reaper paused (P resumes): the role is free for another console or reap --once"
        } else {
            "reaper resumed: it reaps once it has the role (the header says who reaps)"
        };
        self.set_flash(FlashLevel::Info, text.to_owned());
        Some(Effect::PauseReaper(self.status.reaper.paused))
    }

    /// `R`: a reaper pass now.
    pub(super) fn pass_key(&mut self) -> Option<Effect> {
        if let Some(why) = self.reaper_elsewhere() {
            self.set_flash(FlashLevel::Warning, why);
            return None;
        }
        if self.status.reaper.paused {
            self.set_flash(
                FlashLevel::Warning,
                "the reaper is paused: P resumes it (and runs a pass)".to_owned(),
            );
            return None;
        }
        self.set_flash(
            FlashLevel::Info,
            "reaper pass asked for: it runs now".to_owned(),
        );
        Some(Effect::ReaperPass)
    }

    /// The header's schedule, while this console's reaper runs and has
    /// reported: `next pass in 42s · last: 2 reaped, 1 failed, 3 skipped`
    /// (`next pass now` once due, `last: none yet` before the first pass
    /// finished). `None` while paused, off, or elsewhere.
    #[must_use]
    pub fn reaper_schedule(&self) -> Option<String> {
        if self.status.reaper.paused || self.reaper_elsewhere().is_some() {
            return None;
        }
        let status = self.status.reaper.status?;
        let next = status.next_pass_at.map(|at| {
            let secs = at.saturating_sub(self.now);
            if secs <= 0 {
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
