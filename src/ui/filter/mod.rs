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
//! | `host:PART` | over a fleet, a row whose host's name or alias contains `PART` (on one host, none) |
//!
//! One filter on one host and over a fleet: a term reads a row through
//! [`Row`] (a local instance with its snapshot's facts, or a fleet host's
//! row: `crate::ui::app::over_fleet`).
//!
//! A field with nothing after the colon (`status:` while typing) matches
//! everything; an unknown field or value is an error naming what is known.

use crate::model::{Instance, Liveness, OpStatus, Operation, ReapAttempt, Status};

/// The fields a term may name, as the error lists them.
pub(crate) const FIELDS: &str = "status, substrate, name, lock, backoff, op, host";

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
    /// Part of the row's host's name or alias, lower-cased (over a fleet).
    Host(String),
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
        ("host", v) => Test::Host(v.to_owned()),
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
    /// A filter no row matches (text that cannot be read keeps none).
    #[must_use]
    pub(crate) fn nothing() -> Self {
        Self {
            terms: vec![Term {
                negated: true,
                test: Test::All,
            }],
        }
    }

    /// Whether nothing is tested (every instance matches).
    #[must_use]
    pub(crate) fn is_empty(&self) -> bool {
        self.terms.iter().all(|t| t.test == Test::All && !t.negated)
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
        self.matches_row(&Local { instance, facts })
    }

    /// Whether `row` matches every term.
    #[must_use]
    pub(crate) fn matches_row(&self, row: &impl Row) -> bool {
        self.terms.iter().all(|t| t.negated != test(&t.test, row))
    }
}

/// What a row's lock is, as a term reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockSeen {
    /// No lock row.
    None,
    /// A lock row whose holder was not probed (nothing but `lock:any`).
    Unknown,
    /// A live holder on this row's host.
    Alive,
    /// A holder on another host (held).
    Foreign,
    /// A holder that is gone or whose pid was reused.
    Stale,
}

/// What a filter term reads of one row: the same terms on one host (a
/// local instance and its snapshot's [`Facts`]) and over a fleet (a
/// host's row as its agent sent it).
pub(crate) trait Row {
    /// The plain words' haystack, lower-cased (`name␀substrate␀status`,
    /// over a fleet the host's name and alias too).
    fn haystack(&self) -> &str;
    /// The stored status.
    fn status(&self) -> &str;
    /// Active with a lease that ran out (on the row's host's clock).
    fn expired(&self) -> bool;
    /// A row a failed or cancelled `up` left.
    fn failed_up(&self) -> bool;
    /// The substrate.
    fn substrate(&self) -> &str;
    /// The name.
    fn name(&self) -> &str;
    /// The row's host's name and alias (`""` on one host).
    fn host(&self) -> &str;
    /// Its lock.
    fn lock(&self) -> LockSeen;
    /// When its reap attempt's retry is due, and the time now (unix
    /// seconds), when it has a reap attempt.
    fn backoff(&self) -> Option<(i64, i64)>;
    /// Its pending controller operation's status.
    fn pending(&self) -> Option<&OpStatus>;
}

/// A local instance and its snapshot's facts.
struct Local<'a> {
    instance: &'a Instance,
    facts: &'a Facts<'a>,
}

impl Row for Local<'_> {
    fn haystack(&self) -> &str {
        self.facts.haystack
    }

    fn status(&self) -> &str {
        self.instance.status.as_str()
    }

    fn expired(&self) -> bool {
        self.instance.status == Status::Active
            && self
                .instance
                .lease
                .is_some_and(|l| l.expired(self.facts.now))
    }

    fn failed_up(&self) -> bool {
        crate::model::readiness::failed_up(
            self.instance,
            self.facts.pending.is_some(),
            self.facts.liveness.is_some_and(Liveness::held),
        )
    }

    fn substrate(&self) -> &str {
        &self.instance.substrate
    }

    fn name(&self) -> &str {
        &self.instance.name
    }

    fn host(&self) -> &str {
        ""
    }

    fn lock(&self) -> LockSeen {
        if self.instance.lock.is_none() {
            return LockSeen::None;
        }
        match self.facts.liveness {
            None => LockSeen::Unknown,
            Some(Liveness::Alive) => LockSeen::Alive,
            Some(Liveness::ForeignHost(_)) => LockSeen::Foreign,
            Some(Liveness::StalePidGone | Liveness::StalePidReused) => LockSeen::Stale,
        }
    }

    fn backoff(&self) -> Option<(i64, i64)> {
        self.facts
            .attempt
            .map(|a| (a.next_retry_at, self.facts.now))
    }

    fn pending(&self) -> Option<&OpStatus> {
        self.facts.pending.map(|op| &op.status)
    }
}

fn test(test: &Test, row: &impl Row) -> bool {
    match test {
        Test::All => true,
        Test::Word(word) => row.haystack().contains(word.as_str()),
        Test::Status(s) => row.status().eq_ignore_ascii_case(s),
        Test::Expired => row.expired(),
        Test::FailedUp => row.failed_up(),
        Test::Substrate(s) => row.substrate().to_lowercase() == *s,
        Test::Name(part) => row.name().to_lowercase().contains(part.as_str()),
        Test::Host(part) => row.host().to_lowercase().contains(part.as_str()),
        Test::Lock(is) => {
            let seen = row.lock();
            match is {
                LockIs::None => seen == LockSeen::None,
                LockIs::Any => seen != LockSeen::None,
                LockIs::Alive => seen == LockSeen::Alive,
                LockIs::Foreign => seen == LockSeen::Foreign,
                LockIs::Held => matches!(seen, LockSeen::Alive | LockSeen::Foreign),
                LockIs::Stale => seen == LockSeen::Stale,
            }
        }
        Test::Backoff(is) => row.backoff().is_some_and(|(retry_at, now)| match is {
            BackoffIs::Due => retry_at <= now,
            BackoffIs::Waiting => retry_at > now,
            BackoffIs::Any => true,
        }),
        Test::Op(is) => row.pending().is_some_and(|status| match is {
            OpIs::Running => *status == OpStatus::Running,
            OpIs::Queued => *status == OpStatus::Queued,
            OpIs::Pending => status.is_pending(),
        }),
    }
}

#[cfg(test)]
mod tests;
