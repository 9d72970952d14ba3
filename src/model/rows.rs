//! The rows of one consistent read of the state store, as stackless wrote
//! them (docs/stackless-state-store.md, "Schema"): instances with their
//! lease and operation lock, and reap attempts. No probed state here: lock
//! liveness is `super::liveness`, shared beside the rows in
//! [`super::Snapshot`].

use super::generation::Generation;
use super::operation::Operation;

/// An instance's lifecycle status (`instances.status`, stackless schema).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Status {
    /// `'active'`: running, leased, a reaper candidate once the lease expires.
    Active,
    /// `'tombstoned'`: torn down; the row is kept 7 days for `logs`/`status`
    /// (stackless D14), then garbage-collected.
    Tombstoned,
    /// Anything else (a hand-made non-STRICT store, a newer stackless). Shown
    /// as it is (sanitized), never acted upon.
    Other(String),
}

impl Status {
    /// Parse the stored text; unknown values are kept, not rejected.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text {
            "active" => Self::Active,
            "tombstoned" => Self::Tombstoned,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The text as stored.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Active => "active",
            Self::Tombstoned => "tombstoned",
            Self::Other(other) => other,
        }
    }
}

/// A lease row (`leases`): every instance has one from birth (stackless §6);
/// `down` deletes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lease {
    /// Full lease length in seconds; mutating verbs renew to this.
    pub duration_secs: i64,
    /// Unix seconds at which the lease expires (the reaper acts when
    /// `expires_at <= now`).
    pub expires_at: i64,
}

impl Lease {
    /// Seconds left, never negative (stackless §6: "Remaining = `expires_at` -
    /// now, never negative"). Saturates instead of overflowing on hostile
    /// values such as `i64::MAX`.
    #[must_use]
    pub fn remaining(&self, now: i64) -> i64 {
        self.expires_at.saturating_sub(now).max(0)
    }

    /// Whether the lease has run out at `now` (`expires_at <= now`, the
    /// worklist rule of stackless §6).
    #[must_use]
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at <= now
    }
}

/// An operation lock row (`op_locks`, stackless §2): one operation at a time
/// per instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpLock {
    /// The verb holding it: `up`, `down`, `verify`, ...
    pub operation: String,
    /// The holder's process id as stored (may be out of range in a hostile
    /// store; liveness treats such a pid as gone).
    pub holder_pid: i64,
    /// Unix seconds the holder process started, as `sysinfo`'s
    /// `Process::start_time()` reported it.
    pub holder_start_time: i64,
    /// Unix seconds the lock was taken.
    pub acquired_at: i64,
    /// `holder_host` (migration 4): the holder's hostname as
    /// `sysinfo::System::host_name()` reported it. `None` when the store
    /// predates migration 4 and has no such column.
    pub holder_host: Option<String>,
    /// `claim_id` (migration 6, stackless 0.4.0): which of the holder's
    /// operations holds the lock (one controller process holds many). `None`
    /// before migration 6; empty for rows written before it.
    pub claim_id: Option<String>,
}

/// A failed-reap record (`reap_attempts`, migration 3; stackless §6 step 4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReapAttempt {
    /// Instance name (as stored: may be hostile).
    pub instance: String,
    /// Consecutive failed attempts, 1 or more.
    pub attempts: i64,
    /// The failure reason: a JSON envelope on one line when this console
    /// wrote it, the last stdout line (often a lone `}`) when the stackless
    /// daemon did, or prose.
    pub last_error: String,
    /// Unix seconds before which the reaper does not retry.
    pub next_retry_at: i64,
}

/// One instance with the rows hanging off it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Instance {
    /// `instances.name`, as stored. DNS-safe when stackless wrote it; check
    /// with [`crate::model::name::is_dns_safe`] before acting on it.
    pub name: String,
    /// `local`, `render`, `vercel`, or a newer substrate.
    pub substrate: String,
    /// Lifecycle status.
    pub status: Status,
    /// Unix seconds of creation (`None` when the row holds no integer).
    pub created_at: Option<i64>,
    /// Unix seconds of the tombstone, if tombstoned.
    pub tombstoned_at: Option<i64>,
    /// The lease, when the instance has a well-formed one.
    pub lease: Option<Lease>,
    /// The operation lock, when one is held in the store (boxed: most
    /// instances have none, and inline it would be a third of every row).
    pub lock: Option<Box<OpLock>>,
    /// What was wrong with this instance's rows when they were read (a NULL
    /// where stackless never writes one, a value of the wrong type). Empty for
    /// every row stackless itself wrote.
    pub anomalies: Vec<String>,
    /// `dirty` (migration 5, stackless 0.2.0+): a `--source` pin whose dirty
    /// working tree was snapshotted. `None` before migration 5.
    pub dirty: Option<bool>,
    /// The birth this row is (migration 7, stackless 0.4.0). `None` before
    /// migration 7.
    pub birth: Option<Birth>,
}

/// Which birth of a name a row is (migration 7, stackless 0.4.0: names are
/// aliases). A name torn down and brought up again is a new birth with a new
/// `instance_id`, updated in place in the same row, so the console never
/// acts on a name alone: a teardown's re-check and any GC compare the birth
/// (docs/stackless-releases.md, "Schema 14").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Birth {
    /// `instance_id`: 32 lowercase hex, unique, new for every birth.
    pub instance_id: String,
    /// `resource_namespace`: `sl-<instance_id>` for births under 0.4.0, the
    /// name for rows migrated from before. Names the logs directory
    /// `logs/<resource_namespace>/`.
    pub resource_namespace: String,
}

/// Every row of one read transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    /// The schema generation (`PRAGMA user_version`) and what it allows.
    pub generation: Generation,
    /// Every instance, ordered by name.
    pub instances: Vec<Instance>,
    /// Every `reap_attempts` row, ordered by instance name. Empty when the
    /// store predates migration 3.
    pub reap_attempts: Vec<ReapAttempt>,
    /// The controller's operations (migration 8, stackless 0.4.0): every
    /// pending one (queued, running), oldest first, then the most recent
    /// finished ones, newest first ([`super::operation::FINISHED_SHOWN`] at
    /// most). Empty before migration 8.
    pub operations: Vec<Operation>,
}

impl Rows {
    /// The pending (queued or running) operation on `instance`, if any: the
    /// controller's reaper skips such an instance (0.4.0 controller,
    /// docs/stackless-releases.md). Matched by name, as the controller does.
    /// The oldest when several are pending. Only the pending prefix of
    /// [`Rows::operations`] is searched.
    #[must_use]
    pub fn pending_operation(&self, instance: &str) -> Option<&Operation> {
        self.pending_operations()
            .iter()
            .find(|op| op.instance == instance)
    }

    /// The pending (queued, running) operations: the prefix of
    /// [`Rows::operations`], oldest first.
    #[must_use]
    pub fn pending_operations(&self) -> &[Operation] {
        let end = self
            .operations
            .iter()
            .position(|op| !op.status.is_pending())
            .unwrap_or(self.operations.len());
        &self.operations[..end]
    }

    /// The finished operations shown: the suffix of [`Rows::operations`]
    /// after the pending ones, newest first.
    #[must_use]
    pub fn finished_operations(&self) -> &[Operation] {
        &self.operations[self.pending_operations().len()..]
    }

    /// The reap attempt for `instance`, if any (binary search: rows are
    /// ordered by name).
    #[must_use]
    pub fn reap_attempt(&self, instance: &str) -> Option<&ReapAttempt> {
        self.reap_attempts
            .binary_search_by(|row| row.instance.as_str().cmp(instance))
            .ok()
            .map(|index| &self.reap_attempts[index])
    }

    /// The instance called `name`, if any (binary search).
    #[must_use]
    pub fn instance(&self, name: &str) -> Option<&Instance> {
        self.instances
            .binary_search_by(|row| row.name.as_str().cmp(name))
            .ok()
            .map(|index| &self.instances[index])
    }
}
