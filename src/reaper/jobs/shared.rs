//! What the teardown jobs share with each other and the reaper: the
//! instances in flight (never two teardowns of one), the failed reaps whose
//! records are owed to the store, and the store's newest write time (the
//! clock's second witness).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use crate::recorder::Reporter;

/// Instances with a teardown in flight, shared by the reaper and the keys so
/// one instance is never torn down twice at once.
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<Mutex<HashSet<String>>>);

/// Holds an instance in the [`InFlight`] set until dropped.
#[derive(Debug)]
pub struct InFlightGuard {
    set: InFlight,
    name: String,
}

impl InFlight {
    /// Claim `name`; `None` when a teardown of it is already running.
    #[must_use]
    pub fn claim(&self, name: &str) -> Option<InFlightGuard> {
        let mut set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        set.insert(name.to_owned()).then(|| InFlightGuard {
            set: self.clone(),
            name: name.to_owned(),
        })
    }

    /// The names with a teardown running, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// Whether `name` has a teardown running.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(name)
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.set
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.name);
    }
}

/// A failed reap whose `reap_attempts` record could not be written (a
/// read-only store, a full disk, an I/O error, busy past
/// [`super::RECORD_RETRY_FOR`]): owed to the store, written by the reaper as soon
/// as the store accepts writes again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owed {
    /// The instance whose teardown failed.
    pub name: String,
    /// The failure reason, as it would have been recorded.
    pub reason: String,
    /// When it failed (unix seconds): the backoff runs from then.
    pub at: i64,
    /// Why the record could not be written (the store error, as shown).
    pub error: String,
}

/// The failed reaps not recorded yet, shared by the jobs (which add) and
/// the reaper (which writes them, and pauses while any is owed: a failure
/// same instance down again). Each change is reported
/// ([`Reporter::unrecorded`]).
#[derive(Debug, Clone, Default)]
pub struct Unrecorded {
    list: Arc<Mutex<Vec<Owed>>>,
    reporter: Reporter,
}

impl Unrecorded {
    /// None owed yet; changes reported to `reporter`.
    #[must_use]
    pub fn reporting_to(reporter: Reporter) -> Self {
        Self {
            list: Arc::default(),
            reporter,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Owed>> {
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Owe one more record (one per name: the newest failure wins).
    pub fn push(&self, owed: Owed) {
        let mut list = self.lock();
        list.retain(|o| o.name != owed.name);
        list.push(owed);
        self.reporter
            .unrecorded(list.last().map(|o| o.error.clone()));
    }

    /// The records owed, oldest first.
    #[must_use]
    pub fn owed(&self) -> Vec<Owed> {
        self.lock().clone()
    }

    /// Settle the record of `name` (written, or no longer owed).
    pub fn settle(&self, name: &str) {
        let mut list = self.lock();
        list.retain(|o| o.name != name);
        self.reporter
            .unrecorded(list.last().map(|o| o.error.clone()));
    }

    /// Why the newest owed record could not be written, while any is owed.
    #[must_use]
    pub fn reason(&self) -> Option<String> {
        self.lock().last().map(|o| o.error.clone())
    }
}

/// The newest write time the reaper's last pass read from the store
/// ([`crate::model::clock_evidence::newest_write`]), shared by the reaper,
/// the jobs and the render loop.
#[derive(Debug, Clone, Default)]
pub struct StoreTimes(Arc<Mutex<Option<crate::model::clock_evidence::NewestWrite>>>);

impl StoreTimes {
    /// Keep `newest` (read from the snapshot of a pass).
    pub fn note(&self, newest: Option<crate::model::clock_evidence::NewestWrite>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = newest;
    }

    /// The newest write last noted.
    #[must_use]
    pub fn newest(&self) -> Option<crate::model::clock_evidence::NewestWrite> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
