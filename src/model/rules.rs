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

use crate::model::birth_check::{BirthSeen, birth_refusal};
use crate::model::name::is_dns_safe;
use crate::model::op_rules::{cancel_refusal, queue_down_refusal, queue_spot};
use crate::model::verbs::{self, Verb, VerbRequest};
use crate::model::{Instance, Liveness, OpStatus, Operation, Snapshot, Status};

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

mod action;
mod controller_start;

pub use action::{
    Action, Admitted, Asked, Context, Effect, InFlight, ReaperState, Refusal, Settings,
};
pub use controller_start::{NOTE_NAMES_SHOWN, argv_starts_controller, controller_start_note};

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
    partial_gate(action, cx)?;
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

/// The gate every action but `P` passes first: the snapshot is the whole
/// store. While only its first rows are read ([`crate::model::Partial`]),
/// a name it lacks may yet be in the store, its counts are not totals and
/// the pending operations are not read: every action waits for the whole
/// read, refused in the header's words. Pausing or resuming this
/// console's reaper, or a pass now, asks nothing of these rows: the
/// reaper reads the store itself (`reaper::runner`).
fn partial_gate(action: &Action, cx: &Context<'_>) -> Result<(), Refusal> {
    let Some(partial) = cx.snapshot.partial else {
        return Ok(());
    };
    let name = match action {
        Action::Pause | Action::Resume | Action::Pass => return Ok(()),
        Action::Cancel(_) => "",
        Action::Reap(asked)
        | Action::Down(asked)
        | Action::Renew(asked, _)
        | Action::Verify(asked)
        | Action::QueueDown { target: asked, .. } => asked.name.as_str(),
    };
    Err(Refusal::of(
        name,
        format!("refused: {}; ask again when it is read", partial.words()),
    ))
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
                "refused: {} has a {} {} now: ask again to queue a teardown behind it (`d`, or the command `queue_down`)",
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

/// `P` while this console stands by for the controller (pid `pid`) that
/// reaps: a pause means "do not take over when it stops"
/// (`crate::model::controller::stance`: a paused console never reaps), a
/// resume that it takes over again.
fn standby_pause(pause: bool, paused: bool, pid: u32) -> Admitted {
    if paused == pause {
        let words = if pause {
            "the reaper is already paused: this console does not take over"
        } else {
            "the reaper is not paused"
        };
        return Admitted {
            effect: Effect::Nothing,
            words: words.to_owned(),
        };
    }
    let words = if pause {
        format!(
            "the controller (pid {pid}) reaps; when it stops this console will not take over (P: it will)"
        )
    } else {
        format!("the controller (pid {pid}) reaps; when it stops this console takes over")
    };
    Admitted {
        effect: Effect::Pause(pause),
        words,
    }
}

fn admit_pause(pause: bool, cx: &Context<'_>) -> Result<Admitted, Refusal> {
    let reaper = &cx.settings.reaper;
    if let Some(pid) = reaper.standby_for {
        return Ok(standby_pause(pause, reaper.paused, pid));
    }
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
mod tests;
