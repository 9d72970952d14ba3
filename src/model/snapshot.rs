//! One snapshot of the state store: the rows of one read transaction
//! ([`Rows`]) and the liveness of their lock holders probed right after it
//! ([`LockLiveness`]), each shared on its own: a re-probe that finds a
//! holder dead replaces only the liveness, never copies the rows.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::liveness::{Liveness, LockLiveness};
use super::rows::Rows;

/// Rows plus probed liveness; cheap to clone (two `Arc`s). Reads of the
/// rows go through `Deref` (`snapshot.instances`, `snapshot.instance(name)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The rows, as read.
    pub rows: Arc<Rows>,
    /// Liveness of each instance's lock holder, keyed by instance name,
    /// probed by the store adapter (stackless §2). Instances without a lock
    /// have no entry.
    pub liveness: Arc<LockLiveness>,
    /// How many recorded service processes are dead, per active instance
    /// (only instances with one or more; [`crate::model::services`]),
    /// probed by the watcher with the locks, so a frame never probes.
    pub services_dead: Arc<ServicesDead>,
    /// The rows were read through an immutable snapshot of the file
    /// (`--read-only` on a WAL store whose directory this user cannot
    /// write: `SQLite` cannot create its `-shm`), so changes are seen only
    /// by reopening the file, which the watcher does when it changes.
    pub immutable: bool,
}

/// Dead service processes per instance name (absent: none dead, or none
/// recorded).
pub type ServicesDead = std::collections::HashMap<String, u32>;

impl Snapshot {
    /// A snapshot of `rows` with `liveness`.
    #[must_use]
    pub fn new(rows: Rows, liveness: LockLiveness) -> Self {
        Self {
            rows: Arc::new(rows),
            liveness: Arc::new(liveness),
            services_dead: Arc::default(),
            immutable: false,
        }
    }

    /// The same rows with another liveness (the watcher's re-probe).
    #[must_use]
    pub fn with_liveness(&self, liveness: LockLiveness) -> Self {
        Self {
            rows: Arc::clone(&self.rows),
            liveness: Arc::new(liveness),
            services_dead: Arc::clone(&self.services_dead),
            immutable: self.immutable,
        }
    }

    /// The same rows and liveness with other dead-service counts (the
    /// watcher's re-probe).
    #[must_use]
    pub fn with_services_dead(&self, services_dead: Arc<ServicesDead>) -> Self {
        Self {
            rows: Arc::clone(&self.rows),
            liveness: Arc::clone(&self.liveness),
            services_dead,
            immutable: self.immutable,
        }
    }

    /// How many of `name`'s recorded service processes are dead (0: none,
    /// or none recorded).
    #[must_use]
    pub fn dead_services(&self, name: &str) -> u32 {
        self.services_dead.get(name).copied().unwrap_or(0)
    }

    /// The probed liveness of `name`'s lock holder, if it has a lock.
    #[must_use]
    pub fn lock_liveness(&self, name: &str) -> Option<&Liveness> {
        self.liveness.get(name)
    }

    /// The liveness map, to change (copied first if shared).
    pub fn liveness_mut(&mut self) -> &mut LockLiveness {
        Arc::make_mut(&mut self.liveness)
    }
}

impl From<Rows> for Snapshot {
    /// Rows with no probed liveness (every lock reads `unprobed`).
    fn from(rows: Rows) -> Self {
        Self::new(rows, LockLiveness::default())
    }
}

impl Deref for Snapshot {
    type Target = Rows;

    fn deref(&self) -> &Rows {
        &self.rows
    }
}

impl DerefMut for Snapshot {
    /// Copy-on-write: the rows are copied only if another snapshot shares
    /// them (tests and the demo build snapshots by hand). The operation
    /// look-ups are rebuilt on next use ([`Rows::reindex`]).
    fn deref_mut(&mut self) -> &mut Rows {
        let rows = Arc::make_mut(&mut self.rows);
        rows.reindex();
        rows
    }
}
