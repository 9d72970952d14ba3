//! The rows of one consistent read of the state store, as stackless wrote
//! them (docs/stackless-state-store.md, "Schema"): instances with their
//! lease and operation lock, and reap attempts. No probed state here: lock
//! liveness is `super::liveness`, shared beside the rows in
//! [`super::Snapshot`].

use super::generation::Generation;
use super::operation::Operation;

mod anomalies;
mod birth;
mod instances;
mod status;
mod substrate;
pub use anomalies::Anomalies;
pub use birth::{Birth, BirthStr};
pub use instances::Instances;
pub use status::{OtherStatus, Status};
pub use substrate::Substrate;

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
    /// The failure reason: `code: message` when this console writes it
    /// (`crate::model::envelope::stored_reason`; the whole envelope goes to
    /// its audit trail), a JSON envelope on one line when an earlier
    /// console did, the last stdout line (often a lone `}`) when the
    /// stackless 0.3 daemon did, or prose.
    pub last_error: String,
    /// Unix seconds before which the reaper does not retry.
    pub next_retry_at: i64,
}

impl ReapAttempt {
    /// Whether `other` is the same record as far as the reaper decides
    /// (stackless §6 step 4: the instance, the count and the retry time).
    /// `last_error` is text for people: the rows read for a decision hold
    /// it redacted (`secret_history`), a re-check reads it raw, and a
    /// re-check must not call that a change (every pass would abort).
    #[must_use]
    pub fn same_for_the_reaper(&self, other: &Self) -> bool {
        self.instance == other.instance
            && self.attempts == other.attempts
            && self.next_retry_at == other.next_retry_at
    }
}

/// [`ReapAttempt::same_for_the_reaper`] over two optional records.
#[must_use]
pub(crate) fn same_attempt_for_the_reaper(
    a: Option<&ReapAttempt>,
    b: Option<&ReapAttempt>,
) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_for_the_reaper(b),
        _ => false,
    }
}

/// One instance with the rows hanging off it. 136 B at most (checked
/// when built): with the `Arc`'s counts (16 B) and glibc malloc's 8-byte
/// header a 160-byte chunk, where 137-152 B take a 176-byte one
/// (BENCHMARKS.md, "The console's rows at 1M").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Instance {
    /// `instances.name`, as stored. DNS-safe when stackless wrote it; check
    /// with [`crate::model::name::is_dns_safe`] before acting on it.
    pub name: String,
    /// `local`, `render`, `vercel`, or a newer substrate. Shared: a read
    /// keeps one copy of each substrate's text for all its rows (memory at
    /// 100,000 instances), one word in the row.
    pub substrate: Substrate,
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
    /// every row stackless itself wrote (one word, nothing allocated).
    pub anomalies: Anomalies,
    /// `dirty` (migration 5, stackless 0.2.0+): a `--source` pin whose dirty
    /// working tree was snapshotted. `None` before migration 5.
    pub dirty: Option<bool>,
    /// The birth this row is (migration 7, stackless 0.4.0). `None` before
    /// migration 7.
    pub birth: Option<Birth>,
}

const _: () = assert!(size_of::<Instance>() <= 136);

/// Every row of one read transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    /// The schema generation (`PRAGMA user_version`) and what it allows.
    pub generation: Generation,
    /// Every instance, ordered by name; each row shared (`Arc`) with the
    /// previous read of the same file when it did not change (two whole
    /// copies at 100,000 instances did not fit the console's 60 MB).
    pub instances: Instances,
    /// Every `reap_attempts` row, ordered by instance name. Empty when the
    /// store predates migration 3.
    pub reap_attempts: Vec<ReapAttempt>,
    /// The controller's operations (migration 8, stackless 0.4.0): every
    /// pending one (queued, running), oldest first, then the most recent
    /// finished ones, by when they finished (`updated_at`), newest first
    /// ([`super::operation::order_finished`]; [`super::operation::FINISHED_SHOWN`] at
    /// most, plus any that were pending in the previous read: see
    /// `store::operations`). Empty before migration 8.
    pub operations: Vec<Operation>,
    /// Look-ups derived from [`Rows::operations`], built once on first use
    /// (the store adapter builds it on the watcher's thread). Leave it
    /// `Default` when building rows by hand; after changing `operations`
    /// of rows already looked up, call [`Rows::reindex`] (a
    /// [`super::Snapshot`]'s `DerefMut` does).
    pub operation_index: OperationIndex,
}

/// The pending operations' look-ups (no `O(N x P)` scan: the `op:`
/// filter and bulk confirm asked [`Rows::pending_operation`] once per
/// instance, and each call scanned the pending prefix twice, `O(N x P)`):
/// the pending count and the pending positions sorted by instance name,
/// built once per snapshot in `O(P log P)`, so a look-up is `O(log P)` and
/// [`Rows::pending_operations`] is `O(1)`. Derived data: it never makes two
/// [`Rows`] unequal.
#[derive(Clone, Default)]
pub struct OperationIndex(std::sync::OnceLock<PendingIndex>);

#[derive(Clone)]
struct PendingIndex {
    /// How many of `operations` are pending (the prefix).
    len: usize,
    /// Positions into the pending prefix, by instance name, then position
    /// (so the first of a name is its oldest).
    by_name: Vec<usize>,
}

impl PendingIndex {
    fn new(operations: &[Operation]) -> Self {
        let len = operations
            .iter()
            .position(|op| !op.status.is_pending())
            .unwrap_or(operations.len());
        let mut by_name: Vec<usize> = (0..len).collect();
        // Stable: equal names keep their (oldest first) order.
        by_name.sort_by(|&a, &b| operations[a].instance.cmp(&operations[b].instance));
        Self { len, by_name }
    }
}

impl OperationIndex {
    /// Forget what was built (the operations changed).
    pub fn reset(&mut self) {
        self.0 = std::sync::OnceLock::new();
    }
}

impl std::fmt::Debug for OperationIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "OperationIndex(built)"
        } else {
            "OperationIndex"
        })
    }
}

impl PartialEq for OperationIndex {
    /// Always equal: the index is derived from the operations, which
    /// [`Rows`] compares.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for OperationIndex {}

impl Rows {
    fn pending_index(&self) -> &PendingIndex {
        self.operation_index
            .0
            .get_or_init(|| PendingIndex::new(&self.operations))
    }

    /// Rebuild the operation look-ups on next use, after `operations`
    /// changed.
    pub fn reindex(&mut self) {
        self.operation_index.reset();
    }

    /// The pending (queued or running) operation on `instance`, if any: the
    /// controller's reaper skips such an instance (0.4.0 controller,
    /// docs/stackless-releases.md). Matched by name, as the controller does.
    /// The oldest when several are pending. `O(log P)` through
    /// [`OperationIndex`].
    #[must_use]
    pub fn pending_operation(&self, instance: &str) -> Option<&Operation> {
        let pending = self.pending_operations();
        let by_name = &self.pending_index().by_name;
        // `get`: an index left stale by a hand-made change never panics.
        let at = by_name.partition_point(|&p| {
            pending
                .get(p)
                .is_some_and(|op| op.instance.as_str() < instance)
        });
        by_name
            .get(at)
            .and_then(|&p| pending.get(p))
            .filter(|op| op.instance == instance)
    }

    /// Every pending (queued or running) operation on `instance`, oldest
    /// first (`O(log P + k)` through [`OperationIndex`]): `d` must see a
    /// queued `down` behind a running `up`, not only the first of them.
    #[must_use]
    pub fn pending_operations_of(&self, instance: &str) -> Vec<&Operation> {
        let pending = self.pending_operations();
        let by_name = &self.pending_index().by_name;
        let at = by_name.partition_point(|&p| {
            pending
                .get(p)
                .is_some_and(|op| op.instance.as_str() < instance)
        });
        by_name[at..]
            .iter()
            .map_while(|&p| pending.get(p).filter(|op| op.instance == instance))
            .collect()
    }

    /// The pending (queued, running) operations: the prefix of
    /// [`Rows::operations`], oldest first (`O(1)`: its length is kept in
    /// [`OperationIndex`]).
    #[must_use]
    pub fn pending_operations(&self) -> &[Operation] {
        let len = self.pending_index().len.min(self.operations.len());
        &self.operations[..len]
    }

    /// The finished operations shown: the suffix of [`Rows::operations`]
    /// after the pending ones, the last to finish first.
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

    /// [`Rows::instance`] and [`Rows::reap_attempt`] for names asked in
    /// name order (a pass's worklist), each search starting where the
    /// previous one ended (`cursor`): a step or two through memory read in
    /// order instead of a binary search's cache misses (measured: a tenth
    /// of a 100,000-instance dry run). A name asked out of order is found
    /// by binary search all the same.
    #[must_use]
    pub fn instance_in_order(
        &self,
        name: &str,
        cursor: &mut Cursor,
    ) -> (Option<&Instance>, Option<&ReapAttempt>) {
        (
            search_from(
                &self.instances,
                |i: &std::sync::Arc<Instance>| &i.name,
                name,
                &mut cursor.instance,
            )
            .map(std::sync::Arc::as_ref),
            search_from(
                &self.reap_attempts,
                |a| &a.instance,
                name,
                &mut cursor.attempt,
            ),
        )
    }
}

/// Where [`Rows::instance_in_order`] left off: a position in the
/// instances and one in the reap attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    instance: usize,
    attempt: usize,
}

/// The row of `rows` (ordered by `key`, byte order) keyed `name`, searched
/// from `*from` on: a few steps forward, then a binary search of the rest;
/// `*from` is left at the first row not before `name`. A `name` before
/// `*from` is searched in the whole slice, `*from` unchanged.
fn search_from<'a, T>(
    rows: &'a [T],
    key: impl Fn(&T) -> &str,
    name: &str,
    from: &mut usize,
) -> Option<&'a T> {
    let start = (*from).min(rows.len());
    if start > 0 && key(&rows[start - 1]) >= name {
        return rows
            .binary_search_by(|row| key(row).cmp(name))
            .ok()
            .map(|index| &rows[index]);
    }
    let rest = &rows[start..];
    let step = rest
        .iter()
        .take(8)
        .position(|row| key(row) >= name)
        .unwrap_or_else(|| rest.partition_point(|row| key(row) < name));
    *from = start + step;
    rows.get(*from).filter(|row| key(row) == name)
}

#[cfg(test)]
mod tests;
