//! The App's side of the operator's rules ([`crate::model::rules`]): the
//! context it holds (the snapshot shown, its settings, `now`), one call to
//! [`rules::admit`], and what follows: an admitted action's words in the
//! flash and its effect handed to the console; a refusal logged and kept
//! for the audit trail, as a key's is. The keys after `y`, the `:` line,
//! bulk and the agent (`serve --stdio`, [`App::remote`]) all come here.

use super::{App, Effect, FlashLevel};
use crate::model::rules::{self, Action, Admitted, InFlight, Refusal};

/// What a remote action led to: the words (the flash the key shows) and
/// what the console carries out (`None`: nothing to carry out, e.g. a
/// pause already in place).
pub type Accepted = (String, Option<Effect>);

impl App {
    /// The settings the rules read, as this App holds them now.
    #[must_use]
    pub fn rule_settings(&self) -> rules::Settings {
        rules::Settings {
            write_keys_off: self
                .write_keys_off()
                .map(std::borrow::Cow::into_owned)
                .or_else(|| self.store_unread()),
            cancel_off: self.config.write_keys.clone().err(),
            clock_doubt: self.status.clock_doubt.is_some(),
            reaper: rules::ReaperState {
                elsewhere: self.reaper_elsewhere(),
                paused: self.status.reaper.paused,
                standby_for: match self.status.role {
                    crate::event::RoleState::ControllerReaps { pid } => Some(pid),
                    _ => None,
                },
            },
            stackless: self.settings.stackless.clone(),
            controller_stopped: self.status.controller.proxy_port.is_some()
                && self.status.controller.pid.is_none(),
        }
    }

    /// [`rules::admit`] on the snapshot shown, at this App's `now`, with
    /// `in_flight` (a key passes none).
    ///
    /// # Errors
    /// The refusal, in the key's words.
    pub fn admit(&self, action: &Action, in_flight: &InFlight) -> Result<Admitted, Refusal> {
        let settings = self.rule_settings();
        rules::admit(
            action,
            &rules::Context {
                snapshot: &self.shown.snapshot,
                settings: &settings,
                in_flight,
                now: self.now,
            },
        )
    }

    /// The write actions' refusal while the store cannot be read (the
    /// `store_error` banner: replaced with the old `-wal` beside it, gone,
    /// broken): the snapshot shown is the last one read, and a teardown's
    /// re-check could not read the store either, so `r`, `d`, `L`, `v` and
    /// their commands are refused in the reply, not admitted and then
    /// failed.
    fn store_unread(&self) -> Option<String> {
        match self.health() {
            crate::event::StoreHealth::Error(message) => Some(format!(
                "refused: the store cannot be read now ({}): r, d, L and v are off until it reads again",
                crate::model::text::sanitize_short(message, crate::ui::text::CUT_LONG)
            )),
            _ => None,
        }
    }

    /// This console's own teardowns whose outcome has not come yet (a
    /// `Started` activity with no end: [`App::note_own`]), as the rules'
    /// in-flight teardowns: `L` and `v` refuse them as `renew`/`verify` do.
    pub(super) fn own_teardowns(&self) -> InFlight {
        InFlight {
            teardowns: self
                .ours
                .names
                .iter()
                .filter(|(_, until)| **until == i64::MAX)
                .map(|(name, _)| name.clone())
                .collect(),
            ..InFlight::default()
        }
    }

    /// `read` on the rules' context as this App holds it (nothing in
    /// flight: a key's).
    pub(super) fn with_rules<R>(&self, read: impl FnOnce(&rules::Context<'_>) -> R) -> R {
        let settings = self.rule_settings();
        read(&rules::Context {
            snapshot: &self.shown.snapshot,
            settings: &settings,
            in_flight: &InFlight::default(),
            now: self.now,
        })
    }

    /// Run `action` by the operator's rules at `now` (unix seconds), with
    /// what the console has in flight.
    ///
    /// # Errors
    /// The refusal, in the key's words (also logged and kept for the
    /// audit trail, as the key's refusal is).
    pub fn remote(
        &mut self,
        action: &Action,
        in_flight: &InFlight,
        now: i64,
    ) -> Result<Accepted, String> {
        drop(self.settle());
        self.now = now;
        match self.admit(action, in_flight) {
            Ok(admitted) => {
                let mut words = admitted.words.clone();
                if let Some(note) = self.effect_start_note(&admitted.effect) {
                    words = format!("{words}; {note}");
                }
                Ok((words, self.carry_out(admitted)))
            }
            Err(refusal) => Err(self.show_refusal(refusal)),
        }
    }

    /// A key's action after its `y`: admitted (the words in the flash,
    /// the effect returned) or refused (logged as the key's refusal).
    pub(super) fn admit_key(&mut self, action: &Action) -> Option<Effect> {
        match self.admit(action, &InFlight::default()) {
            Ok(admitted) => self.carry_out(admitted),
            Err(refusal) => {
                self.show_refusal(refusal);
                None
            }
        }
    }

    /// What follows an admitted action here: its words in the flash, the
    /// console's own-teardown window, the pause flag; the effect for the
    /// console (`None` for [`rules::Effect::Nothing`]).
    pub(super) fn carry_out(&mut self, admitted: Admitted) -> Option<Effect> {
        let effect = match admitted.effect {
            rules::Effect::Nothing => {
                self.set_flash(FlashLevel::Info, admitted.words);
                return None;
            }
            rules::Effect::Reap { instance, attempt } => {
                self.own_until(&instance.name);
                Effect::Reap { instance, attempt }
            }
            rules::Effect::TearDown { instance, attempt } => {
                self.own_until(&instance.name);
                Effect::TearDown { instance, attempt }
            }
            rules::Effect::QueueDown { instance, behind } => {
                self.own_queued(&instance.name);
                Effect::QueueDown { instance, behind }
            }
            rules::Effect::Cancel { id, instance, verb } => {
                Effect::CancelOperation { id, instance, verb }
            }
            rules::Effect::Pause(pause) => {
                self.status.reaper.paused = pause;
                if matches!(
                    self.status.role,
                    crate::event::RoleState::ControllerReaps { .. }
                ) {
                    // In standby no pass runs to say it: the operator's
                    // line says who will reap when the controller stops.
                    self.log_local(crate::event::Activity::new(
                        self.now,
                        crate::event::Actor::Operator,
                        "",
                        crate::event::ActivityKind::Role,
                        admitted.words.clone(),
                    ));
                }
                Effect::PauseReaper(pause)
            }
            rules::Effect::Pass => {
                self.status.reaper.pass_asked_at = Some(self.now);
                Effect::ReaperPass
            }
            rules::Effect::Verb { request, .. } => {
                let run = vec![request];
                self.own_verbs(&run);
                Effect::Verbs(run)
            }
        };
        self.set_flash(FlashLevel::Info, admitted.words);
        Some(effect)
    }

    /// A refusal shown as the key shows it: logged and audited, or (`P`,
    /// `R`) said in the flash. Returns its words.
    pub(super) fn show_refusal(&mut self, refusal: Refusal) -> String {
        if refusal.audited {
            self.refuse(&refusal.instance, refusal.words.clone());
        } else {
            self.set_flash(FlashLevel::Warning, refusal.words.clone());
        }
        refusal.words
    }

    /// Refuse an action by name for a reason the rules do not see (a
    /// command the protocol could not parse, naming an instance): logged,
    /// and kept for the audit trail, as a key's refusal is. Returns `why`.
    pub fn refuse_remote(&mut self, name: &str, why: String, now: i64) -> String {
        self.now = now;
        self.refuse(name, why.clone());
        why
    }

    /// The note `question` says when its command starts stackless's
    /// controller and none runs ([`rules::controller_start_note`], on the
    /// snapshot shown at this App's `now`): a teardown or reap whose
    /// command is stackless's `down` ([`rules::argv_starts_controller`]),
    /// a queued `d`, a cancel, a renew or verify (whose names race the
    /// reaper). `None` for a fleet's question (each host's own controller).
    #[must_use]
    pub fn controller_start_note(&self, question: &super::Question) -> Option<String> {
        use super::Question;
        let teardown = rules::argv_starts_controller(&self.teardown().argv, self.stackless());
        let (starts, verb, renewed): (bool, &str, Vec<&str>) = match question {
            Question::TearDown(_) | Question::Reap(_) => (teardown, "", Vec::new()),
            Question::Bulk(bulk) => (teardown || !bulk.queued.is_empty(), "", Vec::new()),
            Question::Cancel(_) | Question::QueueDown(..) => (true, "", Vec::new()),
            Question::Verbs(verbs) => (
                true,
                verbs.requests.first().map_or("renew", |r| r.verb.word()),
                verbs
                    .requests
                    .iter()
                    .chain(&verbs.shorter)
                    .map(|r| r.instance.name.as_str())
                    .collect(),
            ),
            Question::Fleet(_) => (false, "", Vec::new()),
        };
        if !starts {
            return None;
        }
        self.with_rules(|cx| rules::controller_start_note(cx, verb, &renewed))
    }

    /// The note an agent's admitted action says in its reply when its
    /// command starts stackless's controller (as
    /// [`App::controller_start_note`] for the key's question).
    fn effect_start_note(&self, effect: &rules::Effect) -> Option<String> {
        let (verb, renewed) = match effect {
            rules::Effect::Reap { .. } | rules::Effect::TearDown { .. } => {
                if !rules::argv_starts_controller(&self.teardown().argv, self.stackless()) {
                    return None;
                }
                ("", Vec::new())
            }
            rules::Effect::QueueDown { .. } | rules::Effect::Cancel { .. } => ("", Vec::new()),
            rules::Effect::Verb { request, .. } => {
                (request.verb.word(), vec![request.instance.name.as_str()])
            }
            rules::Effect::Pause(_) | rules::Effect::Pass | rules::Effect::Nothing => return None,
        };
        self.with_rules(|cx| rules::controller_start_note(cx, verb, &renewed))
    }
}
