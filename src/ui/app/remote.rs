//! The keys' actions asked for by name (`serve --stdio`'s commands,
//! docs/protocol.md): each passes exactly the rules of the key it
//! mirrors, on the snapshot this App holds, then the `y` that key's
//! question waits for. A refusal is what the key would show, logged and
//! audited as the key's is; the caller gets its text back.

use super::verbs::Asked;
use super::{App, Effect};
use crate::model::Instance;
use crate::model::birth_check::{BirthSeen, birth_refusal};
use crate::model::protocol::command::{Command, Target};

/// An action asked for by name, as a key and its `y` would do it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remote {
    /// `r`, `y`.
    Reap(Named),
    /// `d`, `y`.
    Down(Named),
    /// `d` on an instance with a pending operation (schema 14), `y`.
    QueueDown(Named),
    /// `c`, `y`: the operation's id.
    Cancel(String),
    /// `P`: pause (`true`) or resume (`false`).
    Pause(bool),
    /// `R`.
    Pass,
    /// `L`, `y`: the lease in seconds, or the recorded one (a lease outside
    /// the keys' bounds, `model::verbs::lease_bound`, is refused).
    Renew(Named, Option<u64>),
    /// `v`, `y`.
    Verify(Named),
}

impl Remote {
    /// The key's action a parsed protocol command asks for; `None` for the
    /// reads (`detail`, `logs`, `logs_stop`, `ping`), which no key's
    /// question guards.
    #[must_use]
    pub fn of_command(command: Command) -> Option<Self> {
        let named = |t: Target| Named {
            name: t.name,
            birth: t.birth,
        };
        Some(match command {
            Command::Reap(t) => Self::Reap(named(t)),
            Command::Down(t) => Self::Down(named(t)),
            Command::QueueDown(t) => Self::QueueDown(named(t)),
            Command::Cancel(op) => Self::Cancel(op),
            Command::Pause => Self::Pause(true),
            Command::Resume => Self::Pause(false),
            Command::Pass => Self::Pass,
            Command::Renew(t, lease) => Self::Renew(named(t), lease),
            Command::Verify(t) => Self::Verify(named(t)),
            Command::Detail(_) | Command::Logs(..) | Command::LogsStop(_) | Command::Ping => {
                return None;
            }
        })
    }
}

/// An instance as the asker saw it: the name and its birth's
/// `instance_id` (`None` before schema 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The name.
    pub name: String,
    /// The birth the asker saw.
    pub birth: Option<String>,
}

/// What a remote action led to: the words (the flash the key shows) and
/// what the console carries out (`None`: nothing to carry out, e.g. a
/// pause already in place).
pub type Accepted = (String, Option<Effect>);

impl App {
    /// Run `action` by its key's rules at `now` (unix seconds).
    ///
    /// # Errors
    /// The refusal, in the key's words (also logged and kept for the
    /// audit trail, as the key's refusal is).
    pub fn remote(&mut self, action: Remote, now: i64) -> Result<Accepted, String> {
        drop(self.settle());
        self.now = now;
        let mark = self.outbox.len();
        let effect = match action {
            Remote::Pause(pause) => return self.remote_pause(pause),
            Remote::Pass => self.pass_key(),
            Remote::Reap(named) => {
                let instance = self.named(&named)?;
                self.remote_gate(&instance)?;
                self.reap_instance(instance.clone());
                if self.confirming_reap().is_some() {
                    self.confirm_reap(instance)
                } else {
                    None
                }
            }
            Remote::Down(named) => {
                let instance = self.named(&named)?;
                self.remote_gate(&instance)?;
                if let Some(rule) = self.queue_rule(&instance) {
                    let why = match rule {
                        Ok((op, _)) => format!(
                            "refused: {} has a {} {}: send queue_down to queue a teardown behind it",
                            instance.name,
                            op.status.as_str(),
                            op.verb
                        ),
                        Err(refusal) => refusal,
                    };
                    return Err(self.refused(&instance.name, why));
                }
                self.down_instance(instance.clone());
                if self.confirming().is_some() {
                    self.confirm_tear_down(instance)
                } else {
                    None
                }
            }
            Remote::QueueDown(named) => {
                let instance = self.named(&named)?;
                self.remote_gate(&instance)?;
                match self.queue_rule(&instance) {
                    None => {
                        let why = format!(
                            "refused: nothing is queued or running on {}: send down",
                            instance.name
                        );
                        return Err(self.refused(&instance.name, why));
                    }
                    Some(Err(refusal)) => return Err(self.refused(&instance.name, refusal)),
                    Some(Ok((op, _))) => self.confirm_queue_down(instance, op),
                }
            }
            Remote::Cancel(id) => self.remote_cancel(&id),
            Remote::Renew(named, lease) => {
                let instance = self.named(&named)?;
                self.command_verbs(&[instance.name], Asked::Renew(lease));
                self.answer_verbs()
            }
            Remote::Verify(named) => {
                let instance = self.named(&named)?;
                self.command_verbs(&[instance.name], Asked::Verify);
                self.answer_verbs()
            }
        };
        self.close_question();
        match effect {
            Some(effect) => Ok((self.flash_text(), Some(effect))),
            None => Err(self.refusal_since(mark)),
        }
    }

    /// Refuse an action by name for a reason the App does not hold (the
    /// console knows it: a teardown of it already running): logged, and
    /// kept for the audit trail, as a key's refusal is. Returns `why`.
    pub fn refuse_remote(&mut self, name: &str, why: String, now: i64) -> String {
        self.now = now;
        self.refused(name, why)
    }

    /// The instance `named` as this App holds it, the same birth.
    fn named(&mut self, named: &Named) -> Result<Instance, String> {
        let Some(instance) = self.shown.snapshot.instance(&named.name).cloned() else {
            return Err(self.refused(&named.name, "refused: no such instance in the store".into()));
        };
        let asked = BirthSeen::by_id(named.birth.clone());
        if let Some(refusal) = birth_refusal(&asked, &BirthSeen::of(&instance)) {
            return Err(self.refused(&named.name, refusal));
        }
        Ok(instance)
    }

    /// The gate `r` and `d` pass before their rules: the write keys on.
    fn remote_gate(&mut self, instance: &Instance) -> Result<(), String> {
        match self.write_keys_off() {
            Some(reason) => {
                let reason = reason.into_owned();
                Err(self.refused(&instance.name, reason))
            }
            None => Ok(()),
        }
    }

    fn remote_pause(&mut self, pause: bool) -> Result<Accepted, String> {
        if self.status.reaper.paused == pause && self.reaper_elsewhere().is_none() {
            let words = if pause {
                "the reaper is paused already"
            } else {
                "the reaper is not paused"
            };
            return Ok((words.to_owned(), None));
        }
        match self.pause_key() {
            Some(effect) => Ok((self.flash_text(), Some(effect))),
            None => Err(self.flash_text()),
        }
    }

    fn remote_cancel(&mut self, id: &str) -> Option<Effect> {
        if !self.cancel_gate() {
            return None;
        }
        let Some(op) = self
            .shown
            .snapshot
            .operations
            .iter()
            .find(|op| op.id == id)
            .cloned()
        else {
            self.refuse("", format!("refused: no operation {id} is shown"));
            return None;
        };
        self.cancel_operation_for(op.clone());
        self.confirming_cancel()?;
        self.confirm_cancel_operation(op)
    }

    /// The `y` to the renew or verify question `command_verbs` opened, if
    /// it opened one (else each instance was refused).
    fn answer_verbs(&mut self) -> Option<Effect> {
        let question = self.confirming_verbs()?.clone();
        self.confirm_verbs(question)
    }

    /// Close the question a key's rules opened (its `y` was given here).
    fn close_question(&mut self) {
        self.layers.close(super::LayerKind::Confirm);
    }

    fn refused(&mut self, name: &str, why: String) -> String {
        self.refuse(name, why.clone());
        why
    }

    /// The last refusal logged since the outbox held `mark` entries, else
    /// the flash (a refusal shown only there, e.g. `R` while paused).
    fn refusal_since(&self, mark: usize) -> String {
        self.outbox
            .get(mark..)
            .and_then(|new| {
                new.iter()
                    .rev()
                    .find(|a| a.kind == crate::event::ActivityKind::Refused)
            })
            .map_or_else(|| self.flash_text(), |a| a.detail.clone())
    }

    fn flash_text(&self) -> String {
        self.flash
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default()
    }
}
