//! What the rules take and give: the [`Action`] asked for (with the
//! birth asked about, [`Asked`]), the [`Context`] they read ([`Settings`],
//! [`InFlight`], the snapshot, `now`), and their answer: [`Admitted`]
//! (the [`Effect`] to carry out) or [`Refusal`].

use std::collections::BTreeSet;

use crate::model::birth_check::BirthSeen;
use crate::model::protocol::command::{Command, Target};
use crate::model::verbs::VerbRequest;
use crate::model::{Instance, ReapAttempt, Snapshot};

/// An instance as the asker saw it: its name and its birth
/// ([`crate::model::birth_check`]): a key's question holds the row it
/// showed; a protocol client names the `instance_id`, or before schema 7
/// the row's `created_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The name.
    pub name: String,
    /// The birth the asker saw.
    pub birth: BirthSeen,
}

impl Asked {
    /// `instance` as shown to the asker (its name and birth).
    #[must_use]
    pub fn of(instance: &Instance) -> Self {
        Self {
            name: instance.name.clone(),
            birth: BirthSeen::of(instance),
        }
    }

    /// A name with the `instance_id` a protocol client sent (`None`
    /// before schema 7).
    #[must_use]
    pub const fn by_id(name: String, instance_id: Option<String>) -> Self {
        Self {
            name,
            birth: BirthSeen::by_id(instance_id),
        }
    }
}

/// The operator's actions, as a key after its `y`, a `:` command, a bulk
/// action's name or an agent's command asks for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Reap now (`r`, `:reap`, the protocol's `reap`).
    Reap(Asked),
    /// Tear down (`d`, `:down`, `down`).
    Down(Asked),
    /// Queue a teardown behind the instance's pending operation (`d` on a
    /// schema-14 store, `queue_down`). `behind`: the verb of the operation
    /// the asker saw it wait behind (a key's question names it; a protocol
    /// client names none).
    QueueDown {
        /// The instance.
        target: Asked,
        /// The verb the question named, if any.
        behind: Option<String>,
    },
    /// Cancel the controller operation with this id (`c`, `cancel`).
    Cancel(String),
    /// Pause this console's reaper (`P`, `pause`).
    Pause,
    /// Resume it (`P` while paused, `resume`).
    Resume,
    /// A reaper pass now (`R`, `pass`).
    Pass,
    /// Renew the lease (`L`, `:renew`, `renew`): at this many seconds, or
    /// the recorded one (`None`). A typed lease outside
    /// [`verbs::lease_bound`] is refused.
    Renew(Asked, Option<u64>),
    /// Verify (`v`, `:verify`, `verify`).
    Verify(Asked),
}

impl Action {
    /// The action a parsed protocol command asks for (docs/protocol.md);
    /// `None` for the reads (`detail`, `logs`, `logs_stop`, `ping`), which
    /// no rule guards.
    #[must_use]
    pub fn of_command(command: Command) -> Option<Self> {
        let asked = |t: Target| Asked {
            name: t.name,
            birth: BirthSeen::named(t.birth, t.created_at),
        };
        Some(match command {
            Command::Reap(t) => Self::Reap(asked(t)),
            Command::Down(t) => Self::Down(asked(t)),
            Command::QueueDown(t) => Self::QueueDown {
                target: asked(t),
                behind: None,
            },
            Command::Cancel(op) => Self::Cancel(op),
            Command::Pause => Self::Pause,
            Command::Resume => Self::Resume,
            Command::Pass => Self::Pass,
            Command::Renew(t, lease) => Self::Renew(asked(t), lease),
            Command::Verify(t) => Self::Verify(asked(t)),
            Command::Detail(_)
            | Command::Logs(..)
            | Command::LogsStop(_)
            | Command::Ping
            | Command::Metrics => {
                return None;
            }
        })
    }

    /// The instance the action names, if it names one.
    #[must_use]
    pub fn instance(&self) -> Option<&str> {
        match self {
            Self::Reap(a) | Self::Down(a) | Self::Renew(a, _) | Self::Verify(a) => Some(&a.name),
            Self::QueueDown { target, .. } => Some(&target.name),
            Self::Cancel(_) | Self::Pause | Self::Resume | Self::Pass => None,
        }
    }
}

/// Who runs this console's reaper, as far as `P` and `R` care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReaperState {
    /// Why `P` and `R` have nothing to act on here (the reaper is off, or
    /// another console or the controller runs it), in the operator's
    /// words; `None`: this console runs it.
    pub elsewhere: Option<String>,
    /// The operator paused it (`P`).
    pub paused: bool,
    /// The controller (its pid) whose lease reaper this console stands by
    /// for (`--reaper auto`): `P` then says "do not take over when it
    /// stops", and is admitted even though the reaper runs elsewhere.
    pub standby_for: Option<u32>,
}

/// The console's settings the rules read, as plain values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Why `r`, `d`, `L` and `v` are off (`--read-only`, a store that does
    /// not record failures, a schema older than this console), in the
    /// operator's words; `None`: on.
    pub write_keys_off: Option<String>,
    /// Why `c` is off (`--read-only`, ...): the flags alone.
    pub cancel_off: Option<String>,
    /// The wall clock looks wrong: whether a lease ran out is not
    /// answered (`r` is off).
    pub clock_doubt: bool,
    /// The reaper's state (`P`, `R`).
    pub reaper: ReaperState,
    /// The stackless program renew and verify run.
    pub stackless: String,
    /// A controller probe found no controller running (0.4.0: nobody
    /// holds `controller.lock`); `false` while one runs or before the
    /// first probe. A question whose command starts it says so
    /// ([`super::controller_start_note`]).
    pub controller_stopped: bool,
}

/// What the console has running that the snapshot does not show yet, by
/// instance name (the agent's session knows it; a key passes none: the
/// job refuses then).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InFlight {
    /// Names with a teardown running or asked for whose outcome has not
    /// come yet.
    pub teardowns: BTreeSet<String>,
    /// Names whose teardown ended but the snapshot does not show it yet.
    pub settling: BTreeSet<String>,
    /// Renews and verifies running ([`verbs::running_key`]).
    pub verbs: BTreeSet<String>,
}

/// What the rules admit, to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Reap the instance (as asked: the birth the asker saw) with its
    /// reap attempt as shown.
    Reap {
        /// The instance.
        instance: Instance,
        /// Its backoff as shown.
        attempt: Option<ReapAttempt>,
    },
    /// Tear the instance down, with its reap attempt as shown.
    TearDown {
        /// The instance.
        instance: Instance,
        /// Its backoff as shown.
        attempt: Option<ReapAttempt>,
    },
    /// Queue a teardown behind the pending operation whose verb is `behind`.
    QueueDown {
        /// The instance.
        instance: Instance,
        /// The verb of the operation it waits behind.
        behind: String,
    },
    /// Cancel the operation.
    Cancel {
        /// `operations.id`.
        id: String,
        /// `operations.instance`.
        instance: String,
        /// `operations.verb`.
        verb: String,
    },
    /// Pause (`true`) or resume the reaper.
    Pause(bool),
    /// A reaper pass now.
    Pass,
    /// Run this renew or verify; `argv` is the command as it will run.
    Verb {
        /// The instance and the verb (with the lease).
        request: VerbRequest,
        /// `stackless up --name NAME --lease D --json` or `stackless
        /// verify NAME --json` ([`verbs::argv`]).
        argv: Vec<String>,
    },
    /// Nothing to carry out: already so (a pause already in place).
    Nothing,
}

/// An admitted action: what to carry out and the words the key shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// What to carry out.
    pub effect: Effect,
    /// The words (`reap requested for alpha`).
    pub words: String,
}

/// A refused action: the words the key shows, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The instance the refusal is logged against (empty: none).
    pub instance: String,
    /// The words.
    pub words: String,
    /// Logged as a refusal (an Activity line, audited); `false`: only
    /// said (`P`/`R` when the reaper runs elsewhere or is paused).
    pub audited: bool,
}

impl Refusal {
    pub(super) fn of(instance: &str, words: impl Into<String>) -> Self {
        Self {
            instance: instance.to_owned(),
            words: words.into(),
            audited: true,
        }
    }

    pub(super) fn said(words: impl Into<String>) -> Self {
        Self {
            instance: String::new(),
            words: words.into(),
            audited: false,
        }
    }
}

/// What the rules read: the snapshot shown, the settings, what is in
/// flight, and `now` (unix seconds).
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The snapshot shown.
    pub snapshot: &'a Snapshot,
    /// The console's settings.
    pub settings: &'a Settings,
    /// What the console has running.
    pub in_flight: &'a InFlight,
    /// Unix seconds.
    pub now: i64,
}
