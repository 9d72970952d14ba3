//! The Instances filter (`/`, `:filter EXPR`), parsed and matched as pure
//! functions of the text, the instance's rows and the time.
//!
//! A filter is terms separated by spaces, all of which must match (AND).
//! A term is a plain word (matched, lower-cased, within the name, the
//! substrate or the status) or `field:value`; a leading `!` negates either:
//!
//! | term | matches |
//! |---|---|
//! | `status:active`, `status:tombstoned`, `status:TEXT` | the stored status |
//! | `status:expired` | active with a lease that ran out |
//! | `status:failed-up` | a row a failed or cancelled `up` left: active, no lease, nothing pending, lock not held ([`crate::model::readiness::failed_up`]) |
//! | `substrate:NAME` | that substrate (case-insensitive, whole) |
//! | `name:PART` | a name containing `PART` |
//! | `lock:alive`, `lock:foreign`, `lock:held` | a live local holder; one on another host; either |
//! | `lock:stale`, `lock:none`, `lock:any` | a holder that is gone; no lock row; any lock row |
//! | `backoff:due`, `backoff:waiting`, `backoff:any` | a reap attempt whose retry time has come; has not; any |
//! | `op:running`, `op:queued`, `op:pending` | the instance's pending controller operation (schema 14) |
//!
//! A field with nothing after the colon (`status:` while typing) matches
//! everything; an unknown field or value is an error naming what is known.

use crate::model::{Instance, Liveness, OpStatus, Operation, ReapAttempt, Status};

/// The fields a term may name, as the error lists them.
pub(crate) const FIELDS: &str = "status, substrate, name, lock, backoff, op";

/// What one term tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Test {
    /// A plain word: within `name␀substrate␀status`, lower-cased.
    Word(String),
    /// The stored status, lower-cased (`active`, `tombstoned`, other text).
    Status(String),
    /// Active with a lease that ran out.
    Expired,
    /// A row a failed or cancelled `up` left (never reaped).
    FailedUp,
    /// The substrate, lower-cased, whole.
    Substrate(String),
    /// Part of the name, lower-cased.
    Name(String),
    /// The lock row and its probed holder.
    Lock(LockIs),
    /// The reap attempt row.
    Backoff(BackoffIs),
    /// The pending controller operation.
    Op(OpIs),
    /// `field:` with no value yet: everything.
    All,
}

/// `lock:` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockIs {
    /// A live holder on this host.
    Alive,
    /// A holder on another host (counts as held).
    Foreign,
    /// Alive or foreign (blocks the reaper).
    Held,
    /// The holder's pid is gone or reused.
    Stale,
    /// No lock row.
    None,
    /// Any lock row.
    Any,
}

/// `backoff:` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BackoffIs {
    /// `next_retry_at <= now`.
    Due,
    /// `next_retry_at > now`.
    Waiting,
    /// Any reap attempt row.
    Any,
}

/// `op:` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpIs {
    /// A running operation.
    Running,
    /// A queued operation.
    Queued,
    /// Running or queued.
    Pending,
}

/// One term: a test, maybe negated (`!`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    /// `!` before it.
    pub negated: bool,
    /// What it tests.
    pub test: Test,
}

/// A parsed filter: every term must match. Empty: everything matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    /// The terms, in the order typed.
    pub terms: Vec<Term>,
}

/// What a term may look at besides the instance (the snapshot's rows for
/// it, and the time).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    /// `name␀substrate␀status`, lower-cased (the plain words' haystack).
    pub haystack: &'a str,
    /// The probed liveness of its lock holder.
    pub liveness: Option<&'a Liveness>,
    /// Its reap attempt row.
    pub attempt: Option<&'a ReapAttempt>,
    /// Its pending controller operation.
    pub pending: Option<&'a Operation>,
    /// Unix seconds now.
    pub now: i64,
}

/// Parse `text` into a [`Filter`].
///
/// # Errors
/// A message naming the term that cannot be read, e.g. `unknown field
/// "colour" (fields: status, substrate, name, lock, backoff, op)` or
/// `lock:maybe: values are alive, foreign, held, stale, none, any`.
pub(crate) fn parse(text: &str) -> Result<Filter, String> {
    let terms = text
        .split_whitespace()
        .map(parse_term)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Filter { terms })
}

fn parse_term(word: &str) -> Result<Term, String> {
    let (negated, rest) = match word.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let lower = rest.to_lowercase();
    let Some((field, value)) = lower.split_once(':') else {
        return Ok(Term {
            negated,
            test: if lower.is_empty() {
                Test::All
            } else {
                Test::Word(lower)
            },
        });
    };
    let bad = |values: &str| format!("{field}:{value}: values are {values}");
    let test = match (field, value) {
        (_, "") if is_field(field) => Test::All,
        ("status", "expired") => Test::Expired,
        ("status", "failed-up") => Test::FailedUp,
        ("status", v) => Test::Status(v.to_owned()),
        ("substrate", v) => Test::Substrate(v.to_owned()),
        ("name", v) => Test::Name(v.to_owned()),
        ("lock", v) => Test::Lock(match v {
            "alive" => LockIs::Alive,
            "foreign" => LockIs::Foreign,
            "held" => LockIs::Held,
            "stale" => LockIs::Stale,
            "none" => LockIs::None,
            "any" => LockIs::Any,
            _ => return Err(bad("alive, foreign, held, stale, none, any")),
        }),
        ("backoff", v) => Test::Backoff(match v {
            "due" => BackoffIs::Due,
            "waiting" => BackoffIs::Waiting,
            "any" => BackoffIs::Any,
            _ => return Err(bad("due, waiting, any")),
        }),
        ("op", v) => Test::Op(match v {
            "running" => OpIs::Running,
            "queued" => OpIs::Queued,
            "pending" => OpIs::Pending,
            _ => return Err(bad("running, queued, pending")),
        }),
        _ => return Err(format!("unknown field \"{field}\" (fields: {FIELDS})")),
    };
    Ok(Term { negated, test })
}

fn is_field(field: &str) -> bool {
    FIELDS.split(", ").any(|f| f == field)
}

impl Filter {
    /// Whether nothing is tested (every instance matches).
    #[must_use]
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.iter().all(|t| t.test == Test::All)
    }

    /// Whether only plain words are tested, so a longer filter typed after
    /// this one can only narrow what it matched.
    #[must_use]
    pub(crate) fn words_only(&self) -> bool {
        self.terms
            .iter()
            .all(|t| !t.negated && matches!(t.test, Test::Word(_) | Test::All))
    }

    /// Whether a term tests the pending operation ([`Facts::pending`] is
    /// looked up only then).
    #[must_use]
    pub(crate) fn uses_operations(&self) -> bool {
        self.terms.iter().any(|t| matches!(t.test, Test::Op(_)))
    }

    /// Whether a term tests for a failed `up`'s row, which needs the
    /// pending operation and the lock holder's liveness ([`Facts`]).
    #[must_use]
    pub(crate) fn uses_failed_up(&self) -> bool {
        self.terms.iter().any(|t| t.test == Test::FailedUp)
    }

    /// Whether a term tests the lock holder's liveness ([`Facts::liveness`]
    /// is looked up only then).
    #[must_use]
    pub(crate) fn uses_liveness(&self) -> bool {
        self.terms
            .iter()
            .any(|t| matches!(t.test, Test::Lock(_) | Test::FailedUp))
    }

    /// Whether a term tests the reap attempt ([`Facts::attempt`] is looked
    /// up only then).
    #[must_use]
    pub(crate) fn uses_attempts(&self) -> bool {
        self.terms
            .iter()
            .any(|t| matches!(t.test, Test::Backoff(_)))
    }

    /// Whether `haystack` matches a filter of plain words only
    /// ([`Filter::words_only`]): every word within it.
    #[must_use]
    pub(crate) fn matches_words(&self, haystack: &str) -> bool {
        self.terms.iter().all(|t| match &t.test {
            Test::Word(word) => haystack.contains(word.as_str()),
            _ => true,
        })
    }

    /// Whether `instance` (with its `facts`) matches every term.
    #[must_use]
    pub(crate) fn matches(&self, instance: &Instance, facts: &Facts<'_>) -> bool {
        self.terms
            .iter()
            .all(|t| t.negated != test(&t.test, instance, facts))
    }
}

fn test(test: &Test, instance: &Instance, facts: &Facts<'_>) -> bool {
    match test {
        Test::All => true,
        Test::Word(word) => facts.haystack.contains(word.as_str()),
        Test::Status(s) => instance.status.as_str().eq_ignore_ascii_case(s),
        Test::Expired => {
            instance.status == Status::Active
                && instance.lease.is_some_and(|l| l.expired(facts.now))
        }
        Test::FailedUp => crate::model::readiness::failed_up(
            instance,
            facts.pending.is_some(),
            facts.liveness.is_some_and(Liveness::held),
        ),
        Test::Substrate(s) => instance.substrate.to_lowercase() == *s,
        Test::Name(part) => instance.name.to_lowercase().contains(part.as_str()),
        Test::Lock(is) => {
            let Some(_) = &instance.lock else {
                return *is == LockIs::None;
            };
            match (is, facts.liveness) {
                (LockIs::Any, _) => true,
                (LockIs::None, _) => false,
                (LockIs::Alive, l) => l == Some(&Liveness::Alive),
                (LockIs::Foreign, l) => matches!(l, Some(Liveness::ForeignHost(_))),
                (LockIs::Held, l) => l.is_some_and(Liveness::held),
                (LockIs::Stale, l) => l.is_some_and(|l| !l.held()),
            }
        }
        Test::Backoff(is) => facts.attempt.is_some_and(|a| match is {
            BackoffIs::Due => a.next_retry_at <= facts.now,
            BackoffIs::Waiting => a.next_retry_at > facts.now,
            BackoffIs::Any => true,
        }),
        Test::Op(is) => facts.pending.is_some_and(|op| match is {
            OpIs::Running => op.status == OpStatus::Running,
            OpIs::Queued => op.status == OpStatus::Queued,
            OpIs::Pending => op.status.is_pending(),
        }),
    }
}

#[cfg(test)]
mod tests;
