//! One snapshot of the state store: the rows of one read transaction
//! ([`Rows`]) and the liveness of their lock holders probed right after it
//! ([`LockLiveness`]), each shared on its own: a re-probe that finds a
//! holder dead replaces only the liveness, never copies the rows.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::liveness::{Liveness, LockLiveness};
use super::rows::Rows;

mod counts;
use counts::HashCounts;

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
    /// The values of `secret_history` read with the rows (stackless 0.4.0's
    /// redaction history; empty before schema 14): what every text shown
    /// or written is redacted by. The rows' own texts (`error_json`,
    /// `last_error`) are redacted already. Its `Debug` shows only a count.
    pub redactor: Arc<super::redact::Redactor>,
    /// `Some` when these are the first rows of a big store, sent before
    /// the whole read ends (the watcher's first read; [`Partial`]): never
    /// taken for the whole store.
    pub partial: Option<Partial>,
    /// Why the watcher read the file anew before these rows (replaced,
    /// rewritten in place, migrated: `store::FileState::reopen_reason`), on
    /// the first snapshot after it only: the stream sends a `reset` with
    /// it.
    pub reopened: Option<&'static str>,
}

/// The first rows of a store (those with the soonest leases: the
/// Instances pane's default order), shown while the rest is read: how
/// many were read of how many the store holds. A snapshot that
/// carries one is never taken for the whole store: its counts are not
/// totals and every action waits for the whole read
/// ([`crate::model::rules::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partial {
    /// Instances read (the soonest leases, ties by name).
    pub read: usize,
    /// Instances in the store (`count(*)` in the same read transaction).
    pub total: u64,
}

impl Partial {
    /// The words the header and every refusal say, e.g.
    /// `reading the store: 2,000 of 1,000,000`.
    #[must_use]
    pub fn words(self) -> String {
        format!(
            "reading the store: {} of {}",
            thousands(self.read as u64),
            thousands(self.total)
        )
    }
}

/// `n` with a comma every three digits (`1,000,000`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Dead service processes per instance name (absent: none dead, or none
/// recorded), for the Instances row's `N svc dead` mark.
///
/// Kept compact (measured: after a reboot every recorded process of every
/// active instance is dead, 70,000 at 100,000 instances, and a map of
/// names was 6.5 MB, twice over while a new count replaced it): each entry
/// is a 64-bit hash of the name (seeded once per process, so a store
/// cannot aim collisions at it) and the count, sorted by hash; a count of 1
/// is the hash alone (`HashCounts`: 8 bytes a name). Two names
/// share a count only if their hashes collide, about one chance in 10^10
/// at 100,000 names; the mark is advisory (the detail view probes each
/// service itself).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServicesDead {
    /// The dead count by hash of the name, counts above 0.
    by_hash: HashCounts,
    /// The hashes of the active instances with one or more recorded
    /// service processes, sorted (the same hash as `by_hash`); `None`
    /// until the watcher's first services read.
    recorded: Option<std::sync::Arc<[u64]>>,
    /// The unhealthy count by hash of the name: the live recorded
    /// service processes whose last observation says present and unready
    /// (stage `unhealthy`, [`crate::model::readiness::stage`]).
    unhealthy: HashCounts,
}

impl ServicesDead {
    /// No dead services.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn hash(name: &str) -> u64 {
        use std::hash::BuildHasher as _;
        static SEED: std::sync::OnceLock<std::collections::hash_map::RandomState> =
            std::sync::OnceLock::new();
        SEED.get_or_init(std::collections::hash_map::RandomState::new)
            .hash_one(name)
    }

    /// `count` more dead services under `name` (`O(n)` for a name not
    /// there yet: for the few that die between reads; build a whole set
    /// with `collect`).
    pub fn add(&mut self, name: &str, count: u32) {
        if count == 0 {
            return;
        }
        self.by_hash.add(Self::hash(name), count);
    }

    /// These counts plus `more` (`O(n + m log m)`: however many died at
    /// once, one merge of two sorted lists).
    #[must_use]
    pub fn plus(&self, more: DeadCounts) -> Self {
        let more = more.finish().by_hash;
        let by_hash = HashCounts::from_sorted(counts::merge_sum(self.by_hash.iter(), more.iter()));
        Self {
            by_hash,
            recorded: self.recorded.clone(),
            unhealthy: self.unhealthy.clone(),
        }
    }

    /// These counts, with the services read's `unhealthy` counts (live
    /// processes whose last observation is present and unready: stackless
    /// 0.4.0's stage `unhealthy`, cli-0.4.0 src/client/report.rs:404-420).
    #[must_use]
    pub fn with_unhealthy(mut self, unhealthy: DeadCounts) -> Self {
        self.unhealthy = unhealthy.finish().by_hash;
        self
    }

    /// These counts with `fewer` unhealthy services (processes that died
    /// since the read that counted them: their stage is `absent` now);
    /// a name left at 0 is dropped.
    #[must_use]
    pub fn minus_unhealthy(mut self, fewer: DeadCounts) -> Self {
        let fewer = fewer.finish().by_hash;
        self.unhealthy = HashCounts::from_sorted(
            self.unhealthy
                .iter()
                .map(|(key, count)| (key, count.saturating_sub(fewer.get(key)))),
        );
        self
    }

    /// [`ServicesDead::with_unhealthy`] of `(name, count)` pairs.
    #[must_use]
    pub fn with_unhealthy_names<S: AsRef<str>>(
        self,
        pairs: impl IntoIterator<Item = (S, u32)>,
    ) -> Self {
        let mut counts = DeadCounts::default();
        for (name, count) in pairs {
            counts.add(name.as_ref(), count);
        }
        self.with_unhealthy(counts)
    }

    /// How many of `name`'s live recorded service processes were last
    /// observed unready (stage `unhealthy`; 0: none, or not read yet).
    #[must_use]
    pub fn unhealthy(&self, name: &str) -> u32 {
        self.unhealthy.get(Self::hash(name))
    }

    /// These counts, with the names that have recorded service processes
    /// (the services read's [`Recorded`]).
    #[must_use]
    pub fn with_recorded(mut self, recorded: Recorded) -> Self {
        let mut hashes = recorded.0;
        hashes.sort_unstable();
        hashes.dedup();
        self.recorded = Some(hashes.into());
        self
    }

    /// [`ServicesDead::with_recorded`] of `names`.
    #[must_use]
    pub fn with_recorded_names<S: AsRef<str>>(self, names: impl IntoIterator<Item = S>) -> Self {
        let mut recorded = Recorded::default();
        for name in names {
            recorded.add(name.as_ref());
        }
        self.with_recorded(recorded)
    }

    /// Whether the services were read at all (the watcher's first
    /// services read came): until then every count is 0 for want of a
    /// read, not because nothing died.
    #[must_use]
    pub fn recorded_any(&self) -> bool {
        self.recorded.is_some()
    }

    /// Whether `name` has a service whose stage is known: one or more
    /// recorded service processes, or, with none, a service observation
    /// that gives a stage other than `unknown` (a service on another
    /// substrate; [`crate::model::readiness::stage`] with no process, the
    /// rule `snapshot`'s stage follows). `None`: not read yet. An active
    /// instance with none is one whose services `stackless list` calls
    /// `unknown`.
    #[must_use]
    pub fn recorded(&self, name: &str) -> Option<bool> {
        let recorded = self.recorded.as_ref()?;
        Some(recorded.binary_search(&Self::hash(name)).is_ok())
    }

    /// How many of `name`'s recorded service processes are dead (0: none,
    /// or none recorded).
    #[must_use]
    pub fn get(&self, name: &str) -> u32 {
        self.by_hash.get(Self::hash(name))
    }

    /// Whether no service is dead.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_hash.len() == 0
    }

    /// How many instances have a dead service (names whose hashes collide
    /// count once).
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }
}

/// Dead counts added in any order, sorted once by
/// [`DeadCounts::finish`] (`O(n log n)`; 8 bytes a name added with a
/// count of 1, 16 with more, while counting).
#[derive(Debug, Default)]
pub struct DeadCounts {
    ones: Vec<u64>,
    more: Vec<(u64, u32)>,
}

impl DeadCounts {
    /// `count` more dead services under `name`.
    pub fn add(&mut self, name: &str, count: u32) {
        match count {
            0 => {}
            1 => self.ones.push(ServicesDead::hash(name)),
            _ => self.more.push((ServicesDead::hash(name), count)),
        }
    }

    /// The counts, summed per name.
    #[must_use]
    pub fn finish(self) -> ServicesDead {
        ServicesDead {
            by_hash: HashCounts::from_unsorted(self.ones, self.more),
            recorded: None,
            unhealthy: HashCounts::default(),
        }
    }
}

/// The names with a service whose stage is known (a recorded service
/// process, or an observation that decides it: [`ServicesDead::recorded`]),
/// hashed as they are added (8 bytes a name; [`ServicesDead::with_recorded`]).
#[derive(Debug, Default)]
pub struct Recorded(Vec<u64>);

impl Recorded {
    /// `name` has a recorded service process.
    pub fn add(&mut self, name: &str) {
        self.0.push(ServicesDead::hash(name));
    }
}

impl<S: AsRef<str>> FromIterator<(S, u32)> for ServicesDead {
    /// The counts of `(name, count)` pairs, summed per name (`O(n log n)`).
    fn from_iter<I: IntoIterator<Item = (S, u32)>>(pairs: I) -> Self {
        let mut counts = DeadCounts::default();
        for (name, count) in pairs {
            counts.add(name.as_ref(), count);
        }
        counts.finish()
    }
}

impl Snapshot {
    /// A snapshot of `rows` with `liveness`.
    #[must_use]
    pub fn new(rows: Rows, liveness: LockLiveness) -> Self {
        Self {
            rows: Arc::new(rows),
            liveness: Arc::new(liveness),
            services_dead: Arc::default(),
            immutable: false,
            redactor: Arc::default(),
            partial: None,
            reopened: None,
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
            redactor: Arc::clone(&self.redactor),
            partial: self.partial,
            reopened: None,
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
            redactor: Arc::clone(&self.redactor),
            partial: self.partial,
            reopened: None,
        }
    }

    /// How many of `name`'s recorded service processes are dead (0: none,
    /// or none recorded).
    #[must_use]
    pub fn dead_services(&self, name: &str) -> u32 {
        self.services_dead.get(name)
    }

    /// How many of `name`'s live service processes were last observed
    /// unready (stage `unhealthy`; [`ServicesDead::unhealthy`]).
    #[must_use]
    pub fn unhealthy_services(&self, name: &str) -> u32 {
        self.services_dead.unhealthy(name)
    }

    /// Whether `name` has recorded service processes (`None`: not read
    /// yet; [`ServicesDead::recorded`]).
    #[must_use]
    pub fn services_recorded(&self, name: &str) -> Option<bool> {
        self.services_dead.recorded(name)
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

#[cfg(test)]
mod tests {
    use super::{Partial, ServicesDead};

    #[test]
    fn partial_words_group_thousands() {
        let partial = Partial {
            read: 2000,
            total: 1_000_000,
        };
        assert_eq!(partial.words(), "reading the store: 2,000 of 1,000,000");
        let small = Partial {
            read: 7,
            total: 999,
        };
        assert_eq!(small.words(), "reading the store: 7 of 999");
    }

    /// A process counted `unhealthy` that dies is `absent`: its unhealthy
    /// count goes as its dead count comes; the other names keep theirs,
    /// and the counts survive `plus`.
    #[test]
    fn an_unhealthy_service_that_dies_is_no_longer_counted_unhealthy() {
        let counts = ServicesDead::new().with_unhealthy_names([("hotel", 2), ("india", 1)]);
        let mut died = super::DeadCounts::default();
        died.add("hotel", 1);
        let mut healed = super::DeadCounts::default();
        healed.add("hotel", 1);
        let after = counts.plus(died).minus_unhealthy(healed);
        assert_eq!(after.get("hotel"), 1);
        assert_eq!(after.unhealthy("hotel"), 1);
        assert_eq!(after.unhealthy("india"), 1);
        let mut gone = super::DeadCounts::default();
        gone.add("india", 3);
        let after = after.minus_unhealthy(gone);
        assert_eq!(after.unhealthy("india"), 0);
        assert_eq!(after.unhealthy("golf"), 0);
    }

    #[test]
    fn dead_counts_sum_per_name_whichever_way_they_are_built() {
        let collected: ServicesDead = [("golf", 1), ("alpha", 2), ("golf", 1), ("hotel", 0)]
            .into_iter()
            .collect();
        assert_eq!(collected.get("golf"), 2);
        assert_eq!(collected.get("alpha"), 2);
        assert_eq!(collected.get("hotel"), 0, "a zero count is no entry");
        assert_eq!(collected.get("india"), 0);
        assert_eq!(collected.len(), 2);
        let mut added = ServicesDead::new();
        added.add("alpha", 1);
        added.add("golf", 2);
        added.add("alpha", 1);
        added.add("hotel", 0);
        assert_eq!(added, collected, "one canonical form");
        let mut more = super::DeadCounts::default();
        more.add("golf", 1);
        more.add("india", 3);
        let merged = collected.plus(more);
        assert_eq!(
            (merged.get("golf"), merged.get("alpha"), merged.get("india")),
            (3, 2, 3)
        );
        assert_eq!(merged.len(), 3);
        assert!(ServicesDead::new().is_empty());
    }
}
