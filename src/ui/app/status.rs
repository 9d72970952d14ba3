//! What the header and its banners read of the console's state: the
//! role (active or standby), the clock's doubt, unrecorded failures, why
//! `r` and `d` are off, the reaper's text, the teardown command, the
//! controller, the watch mode, the store's health, and the zone times are
//! shown in. Read-only accessors (and the setters the console calls once
//! at start); no key handling here.

use std::borrow::Cow;

use super::{App, ReaperMode, TeardownInfo};
use crate::event::{RoleState, StoreHealth};
use crate::model::controller::ControllerState;

impl App {
    /// Whether this console is the active one for its store.
    #[must_use]
    pub fn role(&self) -> &RoleState {
        &self.status.role
    }

    /// Why the wall clock looks wrong, while it does (the reaper and GC
    /// are paused and `r` is off meanwhile).
    #[must_use]
    pub fn clock_doubt(&self) -> Option<&str> {
        self.status.clock_doubt.as_deref()
    }

    /// Why the audit trail does not take writes, while it does not (the
    /// reaper is paused meanwhile).
    #[must_use]
    pub fn audit_failure(&self) -> Option<&str> {
        self.status.audit_failure.as_deref()
    }

    /// Why a failed reap could not be recorded in the store, while it
    /// could not (the reaper is paused and `r`/`d` are off meanwhile).
    #[must_use]
    pub fn unrecorded(&self) -> Option<&str> {
        self.status.unrecorded.as_deref()
    }

    /// Why `r` and `d` are off, if they are: the access given at start
    /// (`--read-only`), or the generation of the store on screen (a store
    /// older than reap bookkeeping: `schema v2 is older than this console:
    /// r and d are off until stackless upgrades the store`), which may
    /// change while the console runs.
    #[must_use]
    pub fn write_keys_off(&self) -> Option<Cow<'_, str>> {
        if let Err(reason) = &self.config.write_keys {
            return Some(Cow::Borrowed(reason.as_str()));
        }
        if let Some(error) = &self.status.unrecorded {
            return Some(Cow::Owned(format!(
                "the store does not record failures ({error}): r, d, L and v are off until it accepts writes"
            )));
        }
        let generation = self.shown.snapshot.generation;
        (!generation.allows_write_keys()).then(|| {
            Cow::Owned(format!(
                "schema v{} is older than this console: r, d, L and v are off until stackless upgrades the store",
                generation.user_version
            ))
        })
    }

    /// The header's reaper text, from the store and the clock as they are
    /// now, not only as they were at start-up: who runs it when this
    /// console does not (`reaper: run by another console (pid 4242)`, from
    /// the role lock's holder; `reaper: the controller reaps (pid 77);
    /// standing by` under `--reaper auto`; `reaper: paused (P resumes);
    /// nobody reaps now` once `P` gave the role up; `reaper: not running
    /// (console role not taken)` when the role could not be taken at all), the
    /// start-up line when the flags or the access turned it off
    /// (`reaper: off (--no-reaper)`), `reaper: off (schema v2)` once the
    /// store on screen is one the reaper cannot run on, `reaper: paused
    /// (clock looks wrong)`, `reaper: paused (failures cannot be recorded)`, else the start-up line (`reaper: every 1s`).
    #[must_use]
    pub fn reaper_text(&self) -> Cow<'_, str> {
        match &self.status.role {
            RoleState::Standby { pid: Some(pid) } => {
                return Cow::Owned(format!("reaper: run by another console (pid {pid})"));
            }
            RoleState::Standby { pid: None } => {
                return Cow::Borrowed("reaper: run by another console");
            }
            RoleState::Unavailable { .. } => {
                return Cow::Borrowed("reaper: not running (console role not taken)");
            }
            // `P` in standby: this console will not take over when it stops.
            RoleState::ControllerReaps { pid } if self.status.reaper.paused => {
                return Cow::Owned(format!(
                    "reaper: the controller reaps (pid {pid}); paused: will not take over when the controller stops (P: will)"
                ));
            }
            RoleState::ControllerReaps { pid } => {
                return Cow::Owned(format!(
                    "reaper: the controller reaps (pid {pid}); standing by"
                ));
            }
            RoleState::Released { now } if self.status.reaper.paused => {
                return Cow::Owned(format!("reaper: paused (P resumes); {}", now.text()));
            }
            RoleState::Released { .. } | RoleState::Active | RoleState::Watching { .. } => {}
        }
        if let ReaperMode::Off(_) = self.config.reaper {
            let line = self.config.reaper.line();
            return Cow::Owned(match &self.status.role {
                RoleState::Watching { now } => format!("{line}; {}", now.text()),
                _ => line,
            });
        }
        if let Some(off) = self
            .shown
            .loaded
            .then(|| self.shown.snapshot.generation.reaper_off())
            .flatten()
        {
            return Cow::Owned(format!("reaper: off ({off})"));
        }
        if self.status.unrecorded.is_some() {
            return Cow::Borrowed("reaper: paused (failures cannot be recorded)");
        }
        if self.status.audit_failure.is_some() {
            return Cow::Borrowed("reaper: paused (audit trail cannot be written)");
        }
        if self.status.clock_doubt.is_some() {
            return Cow::Borrowed("reaper: paused (clock looks wrong)");
        }
        if self.status.reaper.paused {
            return Cow::Borrowed("reaper: paused (P resumes)");
        }
        Cow::Owned(self.config.reaper.line())
    }

    /// The teardown command the console runs (its argv and whether its
    /// program was found at start).
    #[must_use]
    pub const fn teardown(&self) -> &TeardownInfo {
        &self.settings.teardown
    }

    /// Set the teardown command (the console, once, before the first
    /// frame).
    pub fn set_teardown(&mut self, teardown: TeardownInfo) {
        self.settings.teardown = teardown;
    }

    /// The stackless controller serving the store, as last probed (the
    /// demo's stand-in while no real one is: [`App::set_controller_stand_in`]).
    #[must_use]
    pub const fn controller(&self) -> &ControllerState {
        &self.status.controller
    }

    /// The demo's controller stand-in runs as `pid` (a thread of this
    /// console: `--demo`'s 0.4.0 store): the header says `controller:
    /// running (pid N, demo)` and the rules see a controller running (with
    /// no lease reaper), whenever no real one is probed.
    pub fn set_controller_stand_in(&mut self, pid: u32) {
        self.settings.controller_stand_in = Some(pid);
        let probed = std::mem::take(&mut self.status.controller);
        self.status.controller = self.with_stand_in(probed);
    }

    /// A controller probe came: kept (with the demo's stand-in when no
    /// real controller was found), and, when it is not the controller the
    /// last probe found, said in Activity
    /// ([`crate::model::controller::came_or_went`]; the first probe's
    /// finding is the header's alone).
    pub(super) fn controller_probed(&mut self, probed: ControllerState) {
        let controller = self.with_stand_in(probed);
        let before = self
            .status
            .controller
            .proxy_port
            .map(|_| self.status.controller.pid);
        if let Some(text) =
            before.and_then(|pid| crate::model::controller::came_or_went(pid, controller.pid))
        {
            self.show_activity(crate::event::Activity::new(
                self.now,
                crate::event::Actor::Observed,
                "",
                crate::event::ActivityKind::Role,
                text,
            ));
        }
        self.status.controller = controller;
    }

    /// The pid of the demo's controller stand-in, if this is the demo.
    #[must_use]
    pub const fn controller_stand_in(&self) -> Option<u32> {
        self.settings.controller_stand_in
    }

    /// `probed` with the demo's stand-in in it when no real controller
    /// was found.
    pub(super) fn with_stand_in(&self, mut probed: ControllerState) -> ControllerState {
        if let (Some(pid), None) = (self.settings.controller_stand_in, probed.pid) {
            probed.pid = Some(pid);
            probed.lease_reaper = Some(false);
            probed.proxy_port = probed.proxy_port.or(Some(4444));
        }
        probed
    }

    /// How the watcher notices commits, once it has said (`None` before,
    /// and where no watcher runs).
    #[must_use]
    pub const fn watch(&self) -> Option<crate::event::WatchMode> {
        self.status.watch
    }

    /// Who records the store, in words (`recording (7d, 256 MB)`,
    /// `recorded by pid 4242`, `not recording (--no-record)`), once the
    /// console said it (`Event::Recording`).
    #[must_use]
    pub fn recording(&self) -> Option<&str> {
        self.status.recording.as_deref()
    }

    /// The store's health as last reported.
    #[must_use]
    pub fn health(&self) -> &StoreHealth {
        &self.status.health
    }

    /// Show log times in `zone` (the console: the local zone, `TZ`
    /// honoured, unless `--utc`).
    pub fn set_zone(&mut self, zone: jiff::tz::TimeZone) {
        self.settings.zone = zone;
    }

    /// The zone log times are shown in.
    #[must_use]
    pub fn zone(&self) -> &jiff::tz::TimeZone {
        &self.settings.zone
    }

    /// The zone's name now (`CET`, `UTC`), as pane titles mark it.
    #[must_use]
    pub fn zone_label(&self) -> String {
        crate::model::time::zone_label(self.now, &self.settings.zone)
    }
}
