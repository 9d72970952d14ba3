//! `P` (pause / resume this console's reaper) and `R` (a pass now), and
//! what the header says of the reaper's schedule: `next pass in 42s ·
//! last: 2 reaped, 1 failed, 3 skipped`. The keys only return a
//! [`Command`]; the console wiring sets `crate::reaper::ReaperControl`,
//! and the reaper thread reports back (`Event::Reaper`).

use super::{App, Command, FlashLevel};
use crate::event::RoleState;
use crate::reaper::ReaperStatus;

/// The reaper as this console sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaperView {
    /// The operator paused it (`P`): the console's own state, in memory
    /// only (not the store's; `reap --once` and other consoles go on).
    pub paused: bool,
    /// The reaper thread's last report.
    pub status: Option<ReaperStatus>,
}

impl App {
    /// The reaper as this console controls it.
    #[must_use]
    pub const fn reaper(&self) -> &ReaperView {
        &self.reaper
    }

    /// Why `P` and `R` have nothing to act on here: the reaper is off
    /// (`--no-reaper`, `--read-only`) or another console runs it.
    fn reaper_elsewhere(&self) -> Option<String> {
        match &self.role {
            RoleState::Standby { .. } => {
                return Some("this console stands by: the active console runs the reaper".into());
            }
            RoleState::Unavailable { reason } => {
                return Some(format!(
                    "the reaper does not run in this console: {}",
                    crate::model::text::sanitize_short(reason, crate::ui::view::CUT_LONG)
                ));
            }
            RoleState::Active => {}
        }
        let line = self.config.reaper_line.as_str();
        line.starts_with("reaper: off")
            .then(|| format!("the reaper does not run in this console ({line})"))
    }

    /// `P`: pause the reaper, or resume it.
    pub(super) fn pause_key(&mut self) -> Option<Command> {
        if let Some(why) = self.reaper_elsewhere() {
            self.set_flash(FlashLevel::Warning, why);
            return None;
        }
        self.reaper.paused = !self.reaper.paused;
        let text = if self.reaper.paused {
            "reaper paused: no pass runs until P resumes it (running teardowns finish; reap --once is not affected)"
        } else {
            "reaper resumed: a pass runs now"
        };
        self.set_flash(FlashLevel::Info, text.to_owned());
        Some(Command::PauseReaper(self.reaper.paused))
    }

    /// `R`: a reaper pass now.
    pub(super) fn pass_key(&mut self) -> Option<Command> {
        if let Some(why) = self.reaper_elsewhere() {
            self.set_flash(FlashLevel::Warning, why);
            return None;
        }
        if self.reaper.paused {
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
        Some(Command::ReaperPass)
    }

    /// The header's schedule, while this console's reaper runs and has
    /// reported: `next pass in 42s · last: 2 reaped, 1 failed, 3 skipped`
    /// (`next pass now` once due, `last: none yet` before the first pass
    /// finished). `None` while paused, off, or elsewhere.
    #[must_use]
    pub fn reaper_schedule(&self) -> Option<String> {
        if self.reaper.paused || self.reaper_elsewhere().is_some() {
            return None;
        }
        let status = self.reaper.status?;
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

/// What the header and the keys say of the reaper and the write keys.
impl App {
    /// Why the wall clock looks wrong, while it does (the reaper and GC
    /// are paused and `r` is off meanwhile).
    #[must_use]
    pub fn clock_doubt(&self) -> Option<&str> {
        self.clock_doubt.as_deref()
    }

    /// Why the audit trail does not take writes, while it does not (the
    /// reaper is paused meanwhile).
    #[must_use]
    pub fn audit_failure(&self) -> Option<&str> {
        self.audit_failure.as_deref()
    }

    /// Why a failed reap could not be recorded in the store, while it
    /// could not (the reaper is paused and `r`/`d` are off meanwhile).
    #[must_use]
    pub fn unrecorded(&self) -> Option<&str> {
        self.unrecorded.as_deref()
    }

    /// Why `r` and `d` are off, if they are: the access given at start
    /// (`--read-only`), or the generation of the store on screen (a store
    /// older than reap bookkeeping: `schema v2 is older than this console:
    /// r and d are off until stackless upgrades the store`), which may
    /// change while the console runs.
    #[must_use]
    pub fn write_keys_off(&self) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        if let Err(reason) = &self.config.write_keys {
            return Some(Cow::Borrowed(reason.as_str()));
        }
        if let Some(error) = &self.unrecorded {
            return Some(Cow::Owned(format!(
                "the store does not record failures ({error}): r and d are off until it accepts writes"
            )));
        }
        let generation = self.snapshot.generation;
        (!generation.allows_write_keys()).then(|| {
            Cow::Owned(format!(
                "schema v{} is older than this console: r and d are off until stackless upgrades the store",
                generation.user_version
            ))
        })
    }

    /// The header's reaper text, from the store and the clock as they are
    /// now, not only as they were at start-up: who runs it when this
    /// console does not (`reaper: run by another console (pid 4242)`, from
    /// the role lock's holder; `reaper: not running (console role not
    /// taken)` when the role could not be taken at all), the
    /// start-up line when the flags or the access turned it off
    /// (`reaper: off (--no-reaper)`), `reaper: off (schema v2)` once the
    /// store on screen is one the reaper cannot run on, `reaper: paused
    /// (clock looks wrong)`, `reaper: paused (failures cannot be recorded)`, else the start-up line (`reaper: every 1s`).
    #[must_use]
    pub fn reaper_text(&self) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        match &self.role {
            RoleState::Standby { pid: Some(pid) } => {
                return Cow::Owned(format!("reaper: run by another console (pid {pid})"));
            }
            RoleState::Standby { pid: None } => {
                return Cow::Borrowed("reaper: run by another console");
            }
            RoleState::Unavailable { .. } => {
                return Cow::Borrowed("reaper: not running (console role not taken)");
            }
            RoleState::Active => {}
        }
        let line = self.config.reaper_line.as_str();
        if line.starts_with("reaper: off") {
            return Cow::Borrowed(line);
        }
        if let Some(off) = self
            .loaded
            .then(|| self.snapshot.generation.reaper_off())
            .flatten()
        {
            return Cow::Owned(format!("reaper: off ({off})"));
        }
        if self.unrecorded.is_some() {
            return Cow::Borrowed("reaper: paused (failures cannot be recorded)");
        }
        if self.audit_failure.is_some() {
            return Cow::Borrowed("reaper: paused (audit trail cannot be written)");
        }
        if self.clock_doubt.is_some() {
            return Cow::Borrowed("reaper: paused (clock looks wrong)");
        }
        if self.reaper.paused {
            return Cow::Borrowed("reaper: paused (P resumes)");
        }
        Cow::Borrowed(line)
    }
}
