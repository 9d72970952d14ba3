//! The operator's rules as one pure function: given an [`Action`] (a key
//! after its `y`, a `:` command, one name of a bulk action, an agent's
//! command), the snapshot shown, the console's [`Settings`], what it has
//! in flight and `now` (unix seconds), [`admit`] says what to carry out
//! ([`Admitted`]) or the words of the refusal ([`Refusal`]). No I/O, no UI
//! state: every caller reaches the same rule with the same words.
//!
//! The instance rules (`r`, `d`) follow stackless §6 and the 0.4.0
//! controller (a pending operation runs first); renew and verify are
//! stackless 0.4.0's `up --lease` and `verify` (schema 14); cancel is
//! `operation cancel` (schema 14).

use std::collections::BTreeSet;

use crate::model::birth_check::{BirthSeen, birth_refusal};
use crate::model::name::is_dns_safe;
use crate::model::op_rules::{cancel_refusal, queue_down_refusal, queue_spot};
use crate::model::protocol::command::{Command, Target};
use crate::model::verbs::{self, Verb, VerbRequest};
use crate::model::{Instance, Liveness, OpStatus, Operation, ReapAttempt, Snapshot, Status};

/// How many characters of a name a refusal quotes (as the UI's short cut).
const NAME_CUT: usize = 96;

/// Why an operator key cannot act on an instance right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRefusal {
    /// Not DNS-safe: never passed to a command.
    NotDnsSafe,
    /// Already tombstoned (or an unknown status).
    NotActive,
    /// `r` only: the lease has not expired.
    LeaseNotExpired,
    /// A live operation (or a foreign host) holds the lock.
    Locked(Liveness),
    /// v14: the controller has a queued or running operation on this name;
    /// it runs first (cancel a queued one, or wait).
    Pending {
        /// The pending operation's verb.
        verb: String,
        /// Queued or running.
        status: OpStatus,
    },
}

impl std::fmt::Display for KeyRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotDnsSafe => f.write_str(crate::model::name::REFUSED_NOT_DNS_SAFE),
            Self::NotActive => f.write_str("refused: not active"),
            Self::LeaseNotExpired => {
                f.write_str("refused: lease has not expired (use d to tear down)")
            }
            Self::Locked(l) => write!(f, "refused: locked ({l})"),
            Self::Pending { verb, status } => {
                write!(
                    f,
                    "refused: operation pending ({verb} {status}); the controller runs it first"
                )
            }
        }
    }
}

/// May the operator's `r` reap `instance` now? Only an active instance whose
/// lease has expired, with no pending operation (`pending`: pass
/// [`crate::model::Rows::pending_operation`]), and whose lock is not held.
/// Unlike the reaper, `r` does not wait out a backoff: the operator asked
/// for a retry now.
///
/// # Errors
/// The [`KeyRefusal`] to show in the activity log.
pub fn may_reap_now(
    instance: &Instance,
    lock: Option<&Liveness>,
    pending: Option<&Operation>,
    now: i64,
) -> Result<(), KeyRefusal> {
    may_tear_down(instance, lock, pending)?;
    if !instance.lease.is_some_and(|l| l.expired(now)) {
        return Err(KeyRefusal::LeaseNotExpired);
    }
    Ok(())
}

/// May the operator's `d` tear `instance` down? Any active instance with a
/// DNS-safe name, no pending operation (v14: `pending` is
/// [`crate::model::Rows::pending_operation`]; always `None` before v8) and
/// a lock that is not held.
///
/// # Errors
/// The [`KeyRefusal`] to show in the activity log.
pub fn may_tear_down(
    instance: &Instance,
    lock: Option<&Liveness>,
    pending: Option<&Operation>,
) -> Result<(), KeyRefusal> {
    if !is_dns_safe(&instance.name) {
        return Err(KeyRefusal::NotDnsSafe);
    }
    if instance.status != Status::Active {
        return Err(KeyRefusal::NotActive);
    }
    if let Some(op) = pending {
        return Err(KeyRefusal::Pending {
            verb: op.verb.clone(),
            status: op.status.clone(),
        });
    }
    if let Some(l) = lock.filter(|l| l.held()) {
        return Err(KeyRefusal::Locked(l.clone()));
    }
    Ok(())
}

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
            Command::Detail(_) | Command::Logs(..) | Command::LogsStop(_) | Command::Ping => {
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
    fn of(instance: &str, words: impl Into<String>) -> Self {
        Self {
            instance: instance.to_owned(),
            words: words.into(),
            audited: true,
        }
    }

    fn said(words: impl Into<String>) -> Self {
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

/// `r`'s refusal while the wall clock looks wrong.
pub const CLOCK_REFUSAL: &str =
    "the wall clock looks wrong (see the header): r is off until it looks right";

/// The refusal of a name the store does not hold.
pub const NO_SUCH_INSTANCE: &str = "refused: no such instance in the store";

/// The refusal of a teardown asked for while one of the same instance
/// runs.
pub const TEARDOWN_RUNNING: &str = "a teardown of this instance is already running";

/// The refusal of a teardown asked for before the snapshot shows the
/// last one's outcome.
pub const TEARDOWN_SETTLING: &str = "refused: a teardown of this instance has just ended and the snapshot does not show it yet: ask again after the next synced";

/// The operator's rules: admit `action` (what to carry out, and its
/// words) or refuse it (the words the key shows), on `cx`.
///
/// # Errors
/// The [`Refusal`], in the key's words.
pub fn admit(action: &Action, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    match action {
        Action::Reap(asked) => admit_reap(asked, cx),
        Action::Down(asked) => admit_down(asked, cx),
        Action::QueueDown { target, behind } => admit_queue_down(target, behind.as_deref(), cx),
        Action::Cancel(id) => admit_cancel(id, cx),
        Action::Pause => admit_pause(true, cx),
        Action::Resume => admit_pause(false, cx),
        Action::Pass => admit_pass(cx),
        Action::Renew(asked, lease) => admit_verb(asked, VerbAsked::Renew(*lease), cx),
        Action::Verify(asked) => admit_verb(asked, VerbAsked::Verify, cx),
    }
}

/// The instance `asked` on the snapshot: in the store, the same birth.
/// Admitted as the asker saw it (its `created_at` when it knew one), which
/// the job re-checks right before its command.
fn asked_instance(asked: &Asked, cx: &Context<'_>) -> Result<Instance, Refusal> {
    let Some(current) = cx.snapshot.instance(&asked.name) else {
        return Err(Refusal::of(&asked.name, NO_SUCH_INSTANCE));
    };
    if let Some(refusal) = birth_refusal(&asked.birth, &BirthSeen::of(current)) {
        return Err(Refusal::of(&asked.name, refusal));
    }
    Ok(Instance {
        created_at: asked.birth.created_at.or(current.created_at),
        ..current.clone()
    })
}

/// A teardown of `name` in flight: refused in the job's words.
fn teardown_in_flight(name: &str, cx: &Context<'_>) -> Result<(), Refusal> {
    if cx.in_flight.teardowns.contains(name) {
        return Err(Refusal::of(name, TEARDOWN_RUNNING));
    }
    if cx.in_flight.settling.contains(name) {
        return Err(Refusal::of(name, TEARDOWN_SETTLING));
    }
    Ok(())
}

/// The gate `r`, `d`, `L` and `v` pass first: the write keys on.
fn write_gate(name: &str, cx: &Context<'_>) -> Result<(), Refusal> {
    match &cx.settings.write_keys_off {
        Some(why) => Err(Refusal::of(name, why.clone())),
        None => Ok(()),
    }
}

/// `d`'s queue rule on the snapshot: `None` when it does not apply (no
/// controller operations, nothing pending on it); else the operation a
/// queued `down` waits behind with the others pending in words
/// ([`queue_spot`]), or the refusal ([`queue_down_refusal`]).
#[must_use]
pub fn queue_rule(
    snapshot: &Snapshot,
    instance: &Instance,
) -> Option<Result<(Operation, String), String>> {
    if !snapshot.generation.has_operations() {
        return None;
    }
    let pending = snapshot.pending_operations_of(&instance.name);
    let (behind, others) = queue_spot(&pending)?;
    Some(match queue_down_refusal(instance, &pending) {
        None => Ok((behind.clone(), others)),
        Some(refusal) => Err(refusal),
    })
}

/// `r`'s rules on the snapshot: the clock, then [`may_reap_now`].
///
/// # Errors
/// The refusal, in the operator's words.
pub fn reap_rule(instance: &Instance, cx: &Context<'_>) -> Result<(), String> {
    if cx.settings.clock_doubt {
        // Whether a lease ran out is a question of the time: not answered
        // by a clock that looks wrong.
        return Err(CLOCK_REFUSAL.into());
    }
    let liveness = cx.snapshot.lock_liveness(&instance.name);
    let pending = cx.snapshot.pending_operation(&instance.name);
    may_reap_now(instance, liveness, pending, cx.now).map_err(|r| r.to_string())
}

fn admit_reap(asked: &Asked, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    teardown_in_flight(&asked.name, cx)?;
    let instance = asked_instance(asked, cx)?;
    write_gate(&asked.name, cx)?;
    reap_rule(&instance, cx).map_err(|why| Refusal::of(&asked.name, why))?;
    Ok(Admitted {
        words: format!("reap requested for {}", instance.name),
        effect: Effect::Reap {
            attempt: cx.snapshot.reap_attempt(&instance.name).cloned(),
            instance,
        },
    })
}

fn admit_down(asked: &Asked, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    teardown_in_flight(&asked.name, cx)?;
    let instance = asked_instance(asked, cx)?;
    write_gate(&asked.name, cx)?;
    if let Some(rule) = queue_rule(cx.snapshot, &instance) {
        let why = match rule {
            Ok((op, _)) => format!(
                "refused: {} has a {} {}: send queue_down to queue a teardown behind it",
                instance.name,
                op.status.as_str(),
                op.verb
            ),
            Err(refusal) => refusal,
        };
        return Err(Refusal::of(&asked.name, why));
    }
    may_tear_down(
        &instance,
        cx.snapshot.lock_liveness(&instance.name),
        cx.snapshot.pending_operation(&instance.name),
    )
    .map_err(|r| Refusal::of(&asked.name, r.to_string()))?;
    Ok(Admitted {
        words: format!("teardown requested for {}", instance.name),
        effect: Effect::TearDown {
            attempt: cx.snapshot.reap_attempt(&instance.name).cloned(),
            instance,
        },
    })
}

fn admit_queue_down(
    asked: &Asked,
    behind: Option<&str>,
    cx: &Context<'_>,
) -> Result<Admitted, Refusal> {
    let instance = asked_instance(asked, cx)?;
    write_gate(&asked.name, cx)?;
    match queue_rule(cx.snapshot, &instance) {
        None => Err(Refusal::of(
            &asked.name,
            match behind {
                Some(verb) => {
                    format!("refused: the {verb} it would wait behind has ended; press d again")
                }
                None => format!(
                    "refused: nothing is queued or running on {}: send down",
                    instance.name
                ),
            },
        )),
        Some(Err(refusal)) => Err(Refusal::of(&asked.name, refusal)),
        Some(Ok((op, _))) => Ok(Admitted {
            words: format!(
                "queueing a teardown of {} behind its {}",
                instance.name, op.verb
            ),
            effect: Effect::QueueDown {
                instance,
                behind: op.verb,
            },
        }),
    }
}

/// `c`'s gate: the write keys on (the flags) and a store with controller
/// operations.
///
/// # Errors
/// The refusal (logged against no instance).
pub fn cancel_gate(cx: &Context<'_>) -> Result<(), Refusal> {
    if let Some(why) = &cx.settings.cancel_off {
        return Err(Refusal::of("", why.clone()));
    }
    let generation = cx.snapshot.generation;
    if !generation.has_operations() {
        return Err(Refusal::of(
            "",
            format!(
                "store schema v{} has no controller operations",
                generation.user_version
            ),
        ));
    }
    Ok(())
}

fn admit_cancel(id: &str, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    cancel_gate(cx)?;
    let Some(op) = cx.snapshot.operations.iter().find(|op| op.id == id) else {
        return Err(Refusal::of(
            "",
            format!("refused: no operation {id} is shown"),
        ));
    };
    if let Some(why) = cancel_refusal(op) {
        return Err(Refusal::of(&op.instance, why));
    }
    Ok(Admitted {
        words: format!(
            "cancel requested for {} {} (op {})",
            op.verb,
            op.instance,
            crate::model::op_rules::short_id(&op.id)
        ),
        effect: Effect::Cancel {
            id: op.id.clone(),
            instance: op.instance.clone(),
            verb: op.verb.clone(),
        },
    })
}

fn admit_pause(pause: bool, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    let reaper = &cx.settings.reaper;
    if let Some(why) = &reaper.elsewhere {
        return Err(Refusal::said(why.clone()));
    }
    if reaper.paused == pause {
        let words = if pause {
            "the reaper is already paused"
        } else {
            "the reaper is not paused"
        };
        return Ok(Admitted {
            effect: Effect::Nothing,
            words: words.to_owned(),
        });
    }
    let words = if pause {
        "reaper paused (P resumes): the role is free for another console or reap --once"
    } else {
        "reaper resumed: it reaps once it has the role (the header says who reaps)"
    };
    Ok(Admitted {
        effect: Effect::Pause(pause),
        words: words.to_owned(),
    })
}

fn admit_pass(cx: &Context<'_>) -> Result<Admitted, Refusal> {
    let reaper = &cx.settings.reaper;
    if let Some(why) = &reaper.elsewhere {
        return Err(Refusal::said(why.clone()));
    }
    if reaper.paused {
        return Err(Refusal::said(
            "the reaper is paused: P resumes it (and runs a pass)",
        ));
    }
    Ok(Admitted {
        effect: Effect::Pass,
        words: "reaper pass asked for: it runs now".to_owned(),
    })
}

/// Why renew or verify cannot run at all now: the write keys off, or a
/// store older than stackless 0.4.0's.
#[must_use]
pub fn verb_off(verb: Verb, cx: &Context<'_>) -> Option<String> {
    if let Some(why) = &cx.settings.write_keys_off {
        return Some(why.clone());
    }
    verbs::unsupported(cx.snapshot.generation, verb)
}

/// The single-instance rules of renew and verify on the snapshot: in the
/// store, DNS-safe, active (an `up` on a tombstone would bring it up
/// again), nothing pending ([`verbs::refusal`]).
///
/// # Errors
/// The refusal, in the operator's words.
pub fn verb_check<'s>(
    name: &str,
    verb: Verb,
    snapshot: &'s Snapshot,
) -> Result<&'s Instance, String> {
    let Some(instance) = snapshot.instance(name) else {
        return Err(NO_SUCH_INSTANCE.into());
    };
    if !is_dns_safe(name) {
        return Err("refused: not a DNS-safe name".into());
    }
    if instance.status != Status::Active {
        return Err(format!(
            "refused: {} is {}: {} acts on active instances only",
            crate::model::text::sanitize_short(name, NAME_CUT),
            instance.status.as_str(),
            verb.word()
        ));
    }
    let pending = pending_on(name, snapshot);
    let pending = pending.as_ref().map(|(v, s)| (v.as_str(), s.as_str()));
    if let Some(reason) = verbs::refusal(name, pending, instance.lease.is_some(), verb) {
        return Err(reason);
    }
    Ok(instance)
}

/// The operation pending on `name` a verb's refusal names: a queued or
/// running `down` when there is one (what the verb would queue behind
/// last), else the oldest pending one.
fn pending_on(name: &str, snapshot: &Snapshot) -> Option<(String, String)> {
    let oldest = snapshot.pending_operation(name)?;
    let op = snapshot
        .pending_operations()
        .iter()
        .find(|o| o.instance == name && o.verb == "down")
        .unwrap_or(oldest);
    Some((op.verb.clone(), op.status.as_str().to_owned()))
}

/// A renew (at a typed lease, or the recorded one) or a verify, as asked.
#[derive(Debug, Clone, Copy)]
enum VerbAsked {
    Renew(Option<u64>),
    Verify,
}

/// Renew or verify `asked`.
fn admit_verb(asked: &Asked, lease: VerbAsked, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    let probe = match lease {
        VerbAsked::Renew(_) => Verb::Renew { lease_secs: 1 },
        VerbAsked::Verify => Verb::Verify,
    };
    if cx
        .in_flight
        .verbs
        .contains(&verbs::running_key(probe, &asked.name))
    {
        return Err(Refusal::of(&asked.name, verbs::running_refusal(probe)));
    }
    if cx.in_flight.teardowns.contains(&asked.name) || cx.in_flight.settling.contains(&asked.name) {
        return Err(Refusal::of(&asked.name, verbs::teardown_refusal(probe)));
    }
    asked_instance(asked, cx)?;
    if let Some(why) = verb_off(probe, cx) {
        return Err(Refusal::of(&asked.name, why));
    }
    // The keys' lease bound, whoever typed the lease.
    if let VerbAsked::Renew(Some(typed)) = lease
        && verbs::lease_bound(typed).is_err()
    {
        return Err(Refusal::of(&asked.name, verbs::LEASE_REFUSAL));
    }
    let current =
        verb_check(&asked.name, probe, cx.snapshot).map_err(|why| Refusal::of(&asked.name, why))?;
    let verb = match lease {
        VerbAsked::Renew(typed) => Verb::Renew {
            lease_secs: typed.unwrap_or_else(|| verbs::recorded_lease(current)),
        },
        VerbAsked::Verify => Verb::Verify,
    };
    let argv = verbs::argv(&cx.settings.stackless, &current.name, verb).unwrap_or_default();
    Ok(Admitted {
        words: format!(
            "{} requested for {}",
            verb.word(),
            crate::model::text::sanitize_short(&current.name, NAME_CUT)
        ),
        effect: Effect::Verb {
            request: VerbRequest {
                instance: current.clone(),
                verb,
            },
            argv,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Birth, Generation, Lease, OpLock, Rows};

    const NOW: i64 = 1_795_960_686;
    const ID: &str = "0123456789abcdef0123456789abcdef";

    fn instance(name: &str, status: Status, expires_at: Option<i64>) -> Instance {
        Instance {
            name: name.into(),
            substrate: "local".into(),
            status,
            created_at: Some(NOW - 1000),
            tombstoned_at: None,
            lease: expires_at.map(|e| Lease {
                duration_secs: 7200,
                expires_at: e,
            }),
            lock: None,
            anomalies: vec![],
            dirty: None,
            birth: Some(Birth::new(ID, &format!("sl-{ID}"))),
        }
    }

    fn op(id: &str, instance: &str, verb: &str, status: OpStatus) -> Operation {
        Operation {
            id: id.into(),
            instance: instance.into(),
            instance_id: None,
            verb: verb.into(),
            status,
            cancel_requested: false,
            created_at: NOW - 5,
            updated_at: NOW - 5,
            error_json: None,
            progress: None,
            ran: None,
        }
    }

    fn attempt(name: &str) -> ReapAttempt {
        ReapAttempt {
            instance: name.into(),
            attempts: 2,
            last_error: "boom".into(),
            next_retry_at: NOW + 60,
        }
    }

    /// A schema-14 store: `expired` (lease ran out, a backoff), `fresh`
    /// (lease left), `tomb` (tombstoned), `locked` (a live lock),
    /// `busy` (a queued up), `downing` (a running down), `nolease` (a
    /// failed up), `x;y` (not DNS-safe).
    fn snapshot() -> Snapshot {
        let mut locked = instance("locked", Status::Active, Some(NOW - 1));
        locked.lock = Some(Box::new(OpLock {
            operation: "up".into(),
            holder_pid: 1,
            holder_start_time: 1,
            acquired_at: 1,
            holder_host: None,
            claim_id: None,
        }));
        let mut snapshot = Snapshot::from(Rows {
            generation: Generation::new(14),
            instances: vec![
                instance("busy", Status::Active, Some(NOW - 1)),
                instance("downing", Status::Active, Some(NOW - 1)),
                instance("expired", Status::Active, Some(NOW - 1)),
                instance("fresh", Status::Active, Some(NOW + 100)),
                locked,
                instance("nolease", Status::Active, None),
                instance("tomb", Status::Tombstoned, None),
                instance("x;y", Status::Active, Some(NOW - 1)),
            ]
            .into(),
            operations: vec![
                op("op-busy", "busy", "up", OpStatus::Queued),
                op("op-downing", "downing", "down", OpStatus::Running),
                op("op-done", "fresh", "up", OpStatus::Succeeded),
            ],
            reap_attempts: vec![attempt("expired")],
            ..Rows::default()
        });
        snapshot
            .liveness_mut()
            .insert("locked".into(), Liveness::Alive);
        snapshot
    }

    fn settings() -> Settings {
        Settings {
            stackless: "stackless".into(),
            ..Settings::default()
        }
    }

    fn admit_at(
        action: &Action,
        snapshot: &Snapshot,
        settings: &Settings,
        now: i64,
    ) -> Result<Admitted, Refusal> {
        admit(
            action,
            &Context {
                snapshot,
                settings,
                in_flight: &InFlight::default(),
                now,
            },
        )
    }

    fn asked(name: &str) -> Asked {
        Asked::by_id(name.into(), Some(ID.into()))
    }

    fn refused(instance: &str, words: &str) -> Result<Admitted, Refusal> {
        Err(Refusal {
            instance: instance.into(),
            words: words.into(),
            audited: true,
        })
    }

    fn said(words: &str) -> Result<Admitted, Refusal> {
        Err(Refusal {
            instance: String::new(),
            words: words.into(),
            audited: false,
        })
    }

    fn with_id(name: &str, s: &Snapshot) -> Instance {
        s.instance(name).cloned().expect("in the fixture")
    }

    #[test]
    fn reap_is_admitted_once_the_lease_ran_out_at_now() {
        let s = snapshot();
        let mut fresh = instance("fresh", Status::Active, Some(NOW + 100));
        fresh.created_at = Some(NOW - 1000);
        let action = Action::Reap(asked("fresh"));
        assert_eq!(
            admit_at(&action, &s, &settings(), NOW + 99),
            refused(
                "fresh",
                "refused: lease has not expired (use d to tear down)"
            )
        );
        assert_eq!(
            admit_at(&action, &s, &settings(), NOW + 100),
            Ok(Admitted {
                effect: Effect::Reap {
                    instance: fresh,
                    attempt: None
                },
                words: "reap requested for fresh".into()
            })
        );
        assert_eq!(
            admit_at(&Action::Reap(asked("expired")), &s, &settings(), NOW),
            Ok(Admitted {
                effect: Effect::Reap {
                    instance: with_id("expired", &s),
                    attempt: Some(attempt("expired"))
                },
                words: "reap requested for expired".into()
            })
        );
    }

    #[test]
    fn reap_refusals_in_the_keys_words() {
        let s = snapshot();
        let reap = |name: &str| Action::Reap(asked(name));
        let ok = settings();
        for (name, words) in [
            ("nobody", NO_SUCH_INSTANCE),
            ("tomb", "refused: not active"),
            ("x;y", crate::model::name::REFUSED_NOT_DNS_SAFE),
            ("locked", "refused: locked (alive)"),
            (
                "busy",
                "refused: operation pending (up queued); the controller runs it first",
            ),
        ] {
            assert_eq!(
                admit_at(&reap(name), &s, &ok, NOW),
                refused(name, words),
                "{name}"
            );
        }
        let doubt = Settings {
            clock_doubt: true,
            ..settings()
        };
        assert_eq!(
            admit_at(&reap("expired"), &s, &doubt, NOW),
            refused("expired", CLOCK_REFUSAL)
        );
        let off = Settings {
            write_keys_off: Some("read-only".into()),
            ..settings()
        };
        assert_eq!(
            admit_at(&reap("expired"), &s, &off, NOW),
            refused("expired", "read-only")
        );
        let born_again = Action::Reap(Asked::by_id("expired".into(), Some("f".repeat(32))));
        assert_eq!(
            admit_at(&born_again, &s, &ok, NOW),
            refused(
                "expired",
                &format!(
                    "refused: the birth asked about ({}) is not the instance's ({ID}): it was born again, or another store was read",
                    "f".repeat(32)
                )
            )
        );
    }

    #[test]
    fn a_teardown_in_flight_refuses_reap_and_down_first() {
        let s = snapshot();
        let ok = settings();
        let mut in_flight = InFlight::default();
        in_flight.teardowns.insert("expired".into());
        in_flight.settling.insert("fresh".into());
        let cx = Context {
            snapshot: &s,
            settings: &ok,
            in_flight: &in_flight,
            now: NOW,
        };
        assert_eq!(
            admit(&Action::Reap(asked("expired")), &cx),
            refused("expired", TEARDOWN_RUNNING)
        );
        assert_eq!(
            admit(&Action::Down(asked("fresh")), &cx),
            refused("fresh", TEARDOWN_SETTLING)
        );
        let verbs_running = InFlight {
            verbs: ["verify fresh".to_owned()].into(),
            ..InFlight::default()
        };
        let cx = Context {
            in_flight: &verbs_running,
            ..cx
        };
        assert_eq!(
            admit(&Action::Verify(asked("fresh")), &cx),
            refused(
                "fresh",
                "refused: a verify of it is already running; nothing run"
            )
        );
    }

    #[test]
    fn a_teardown_in_flight_refuses_renew_and_verify_of_it() {
        let s = snapshot();
        let ok = settings();
        let mut in_flight = InFlight::default();
        in_flight.teardowns.insert("fresh".into());
        in_flight.settling.insert("expired".into());
        let cx = Context {
            snapshot: &s,
            settings: &ok,
            in_flight: &in_flight,
            now: NOW,
        };
        assert_eq!(
            admit(&Action::Renew(asked("fresh"), Some(600)), &cx),
            refused(
                "fresh",
                "refused: a teardown of it is running: a renew now would race it; nothing run"
            )
        );
        assert_eq!(
            admit(&Action::Verify(asked("expired")), &cx),
            refused(
                "expired",
                "refused: a teardown of it is running: a verify now would race it; nothing run"
            )
        );
    }

    #[test]
    fn down_admits_any_active_instance_and_sends_a_pending_one_to_queue_down() {
        let s = snapshot();
        let ok = settings();
        assert_eq!(
            admit_at(&Action::Down(asked("fresh")), &s, &ok, NOW),
            Ok(Admitted {
                effect: Effect::TearDown {
                    instance: with_id("fresh", &s),
                    attempt: None
                },
                words: "teardown requested for fresh".into()
            })
        );
        assert_eq!(
            admit_at(&Action::Down(asked("busy")), &s, &ok, NOW),
            refused(
                "busy",
                "refused: busy has a queued up: send queue_down to queue a teardown behind it"
            )
        );
        assert_eq!(
            admit_at(&Action::Down(asked("downing")), &s, &ok, NOW),
            refused(
                "downing",
                "refused: a down of downing is already running (op op-d…); nothing queued"
            )
        );
        assert_eq!(
            admit_at(&Action::Down(asked("tomb")), &s, &ok, NOW),
            refused("tomb", "refused: not active")
        );
    }

    #[test]
    fn queue_down_waits_behind_the_pending_operation() {
        let s = snapshot();
        let ok = settings();
        let queue = |name: &str, behind: Option<&str>| Action::QueueDown {
            target: asked(name),
            behind: behind.map(str::to_owned),
        };
        assert_eq!(
            admit_at(&queue("busy", None), &s, &ok, NOW),
            Ok(Admitted {
                effect: Effect::QueueDown {
                    instance: with_id("busy", &s),
                    behind: "up".into()
                },
                words: "queueing a teardown of busy behind its up".into()
            })
        );
        assert_eq!(
            admit_at(&queue("fresh", None), &s, &ok, NOW),
            refused(
                "fresh",
                "refused: nothing is queued or running on fresh: send down"
            )
        );
        assert_eq!(
            admit_at(&queue("fresh", Some("up")), &s, &ok, NOW),
            refused(
                "fresh",
                "refused: the up it would wait behind has ended; press d again"
            )
        );
        assert_eq!(
            admit_at(&queue("downing", None), &s, &ok, NOW),
            refused(
                "downing",
                "refused: a down of downing is already running (op op-d…); nothing queued"
            )
        );
    }

    #[test]
    fn cancel_follows_the_controllers_rule() {
        let s = snapshot();
        let ok = settings();
        let cancel = |id: &str| Action::Cancel(id.into());
        assert_eq!(
            admit_at(&cancel("op-busy"), &s, &ok, NOW),
            Ok(Admitted {
                effect: Effect::Cancel {
                    id: "op-busy".into(),
                    instance: "busy".into(),
                    verb: "up".into()
                },
                words: "cancel requested for up busy (op op-b…)".into()
            })
        );
        assert_eq!(
            admit_at(&cancel("op-downing"), &s, &ok, NOW),
            refused(
                "downing",
                "a running down cannot be cancelled: it must reach a safe completion point"
            )
        );
        assert_eq!(
            admit_at(&cancel("op-done"), &s, &ok, NOW),
            refused("fresh", "operation already succeeded")
        );
        assert_eq!(
            admit_at(&cancel("op-gone"), &s, &ok, NOW),
            refused("", "refused: no operation op-gone is shown")
        );
        let off = Settings {
            cancel_off: Some("read-only".into()),
            ..settings()
        };
        assert_eq!(
            admit_at(&cancel("op-busy"), &s, &off, NOW),
            refused("", "read-only")
        );
        let old = Snapshot::from(Rows {
            generation: Generation::new(5),
            ..Rows::default()
        });
        assert_eq!(
            admit_at(&cancel("op-busy"), &old, &ok, NOW),
            refused("", "store schema v5 has no controller operations")
        );
    }

    #[test]
    fn pause_resume_and_pass_by_who_runs_the_reaper() {
        let s = snapshot();
        let running = settings();
        let paused = Settings {
            reaper: ReaperState {
                elsewhere: None,
                paused: true,
            },
            ..settings()
        };
        let elsewhere = Settings {
            reaper: ReaperState {
                elsewhere: Some("another console runs it".into()),
                paused: false,
            },
            ..settings()
        };
        let words = |effect, words: &str| {
            Ok(Admitted {
                effect,
                words: words.into(),
            })
        };
        assert_eq!(
            admit_at(&Action::Pause, &s, &running, NOW),
            words(
                Effect::Pause(true),
                "reaper paused (P resumes): the role is free for another console or reap --once"
            )
        );
        assert_eq!(
            admit_at(&Action::Pause, &s, &paused, NOW),
            words(Effect::Nothing, "the reaper is already paused")
        );
        assert_eq!(
            admit_at(&Action::Resume, &s, &paused, NOW),
            words(
                Effect::Pause(false),
                "reaper resumed: it reaps once it has the role (the header says who reaps)"
            )
        );
        assert_eq!(
            admit_at(&Action::Resume, &s, &running, NOW),
            words(Effect::Nothing, "the reaper is not paused")
        );
        assert_eq!(
            admit_at(&Action::Pass, &s, &running, NOW),
            words(Effect::Pass, "reaper pass asked for: it runs now")
        );
        assert_eq!(
            admit_at(&Action::Pass, &s, &paused, NOW),
            said("the reaper is paused: P resumes it (and runs a pass)")
        );
        for action in [Action::Pause, Action::Resume, Action::Pass] {
            assert_eq!(
                admit_at(&action, &s, &elsewhere, NOW),
                said("another console runs it"),
                "{action:?}"
            );
        }
    }

    #[test]
    fn renew_and_verify_admit_the_command_as_it_will_run() {
        let s = snapshot();
        let ok = settings();
        let fresh = with_id("fresh", &s);
        let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            admit_at(&Action::Renew(asked("fresh"), None), &s, &ok, NOW),
            Ok(Admitted {
                effect: Effect::Verb {
                    request: VerbRequest {
                        instance: fresh.clone(),
                        verb: Verb::Renew { lease_secs: 7200 }
                    },
                    argv: argv(&[
                        "stackless",
                        "up",
                        "--name",
                        "fresh",
                        "--lease",
                        "2h",
                        "--json"
                    ])
                },
                words: "renew requested for fresh".into()
            })
        );
        assert_eq!(
            admit_at(&Action::Renew(asked("fresh"), Some(60)), &s, &ok, NOW),
            Ok(Admitted {
                effect: Effect::Verb {
                    request: VerbRequest {
                        instance: fresh.clone(),
                        verb: Verb::Renew { lease_secs: 60 }
                    },
                    argv: argv(&[
                        "stackless",
                        "up",
                        "--name",
                        "fresh",
                        "--lease",
                        "1m",
                        "--json"
                    ])
                },
                words: "renew requested for fresh".into()
            })
        );
        assert_eq!(
            admit_at(&Action::Verify(asked("fresh")), &s, &ok, NOW),
            Ok(Admitted {
                effect: Effect::Verb {
                    request: VerbRequest {
                        instance: fresh,
                        verb: Verb::Verify
                    },
                    argv: argv(&["stackless", "verify", "fresh", "--json"])
                },
                words: "verify requested for fresh".into()
            })
        );
    }

    #[test]
    fn renew_and_verify_refusals_in_the_keys_words() {
        let s = snapshot();
        let ok = settings();
        let renew = |name: &str, lease| Action::Renew(asked(name), lease);
        for (action, name, words) in [
            (renew("nobody", None), "nobody", NO_SUCH_INSTANCE.to_owned()),
            (renew("fresh", Some(0)), "fresh", verbs::LEASE_REFUSAL.to_owned()),
            (
                renew("fresh", Some(verbs::MAX_LEASE_SECS + 1)),
                "fresh",
                verbs::LEASE_REFUSAL.to_owned(),
            ),
            (
                renew("tomb", None),
                "tomb",
                "refused: tomb is tombstoned: renew acts on active instances only".to_owned(),
            ),
            (
                renew("x;y", None),
                "x;y",
                "refused: not a DNS-safe name".to_owned(),
            ),
            (
                renew("nolease", None),
                "nolease",
                "refused: nolease has no lease (a failed up): a renew would run a new up; nothing run"
                    .to_owned(),
            ),
            (
                Action::Verify(asked("busy")),
                "busy",
                "refused: busy has a pending operation (up queued): verify after it; nothing run"
                    .to_owned(),
            ),
        ] {
            assert_eq!(admit_at(&action, &s, &ok, NOW), refused(name, &words), "{action:?}");
        }
        let off = Settings {
            write_keys_off: Some("read-only".into()),
            ..settings()
        };
        assert_eq!(
            admit_at(&renew("fresh", None), &s, &off, NOW),
            refused("fresh", "read-only")
        );
        let mut old = snapshot();
        old.generation = Generation::new(7);
        assert_eq!(
            admit_at(&Action::Verify(asked("fresh")), &old, &ok, NOW),
            refused(
                "fresh",
                "verify needs a stackless 0.4.0 store (schema 14); this one is v7; nothing run"
            )
        );
    }
}
