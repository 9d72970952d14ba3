//! The Instances table's rows: the sort, the filter and the selection that
//! follows an instance by name across snapshots, plus the header counts.

use std::cmp::Reverse;
use std::sync::Arc;

use super::{App, FlashLevel};
use crate::model::{Snapshot, Status};

/// The order of the Instances table (`s` cycles through them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortKey {
    /// Soonest lease expiry first; instances without a lease (tombstones)
    /// last; ties by name.
    #[default]
    LeaseExpiry,
    /// By name (byte order, as stored).
    Name,
    /// By substrate, then name.
    Substrate,
    /// Most reap attempts first, then name.
    ReapAttempts,
}

impl SortKey {
    /// The next order in the `s` cycle.
    #[must_use]
    pub const fn next(self) -> Self {
        match self {
            Self::LeaseExpiry => Self::Name,
            Self::Name => Self::Substrate,
            Self::Substrate => Self::ReapAttempts,
            Self::ReapAttempts => Self::LeaseExpiry,
        }
    }

    /// How the header names it: `lease expiry`, `name`, `substrate`,
    /// `reap attempts`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::LeaseExpiry => "lease expiry",
            Self::Name => "name",
            Self::Substrate => "substrate",
            Self::ReapAttempts => "reap attempts",
        }
    }
}

impl App {
    pub(super) fn set_snapshot(&mut self, snapshot: Arc<Snapshot>) {
        self.snapshot = snapshot;
        self.loaded = true;
        self.haystacks = None;
        self.resort();
        let instances = &self.snapshot.instances;
        let attempts = &self.snapshot.reap_attempts;
        self.backoff_selected = reselect(
            attempts.len(),
            self.backoff_selected,
            self.backoff_name.as_deref(),
            |name| {
                attempts
                    .binary_search_by(|a| a.instance.as_str().cmp(name))
                    .ok()
            },
        );
        self.backoff_name = attempts
            .get(self.backoff_selected)
            .map(|a| a.instance.clone());
        let (mut active, mut tombstoned) = (0, 0);
        for instance in instances {
            match instance.status {
                Status::Active => active += 1,
                Status::Tombstoned => tombstoned += 1,
                Status::Other(_) => {}
            }
        }
        self.counts.active = active;
        self.counts.tombstoned = tombstoned;
        self.recount_expired();
        self.reselect_operation();
    }

    /// Sort every instance by the active key into `sorted` (on a new
    /// snapshot or sort only), then filter.
    pub(super) fn resort(&mut self) {
        let snapshot = &self.snapshot;
        let instances = &snapshot.instances;
        // A store cannot hold 2^32 instances in memory; the rest are cut
        // rather than wrapped.
        let len = u32::try_from(instances.len()).unwrap_or(u32::MAX);
        let mut sorted: Vec<u32> = (0..len).collect();
        let at = |p: u32| &instances[p as usize];
        // Ties by position: name order (the snapshot is sorted by name).
        match self.sort {
            SortKey::Name => {}
            SortKey::LeaseExpiry => sorted.sort_by_cached_key(|&p| {
                let lease = at(p).lease;
                (lease.is_none(), lease.map_or(0, |l| l.expires_at), p)
            }),
            SortKey::Substrate => {
                sorted.sort_by(|&a, &b| at(a).substrate.cmp(&at(b).substrate));
            }
            SortKey::ReapAttempts => sorted.sort_by_cached_key(|&p| {
                let attempts = snapshot.reap_attempt(&at(p).name).map_or(0, |a| a.attempts);
                (Reverse(attempts), p)
            }),
        }
        self.sorted = sorted;
        self.refilter();
    }

    /// Filter `sorted` into the rows shown (on a new snapshot, sort, or a
    /// filter that is not a longer version of the last one).
    pub(super) fn refilter(&mut self) {
        if self.filter.is_empty() {
            self.order.clone_from(&self.sorted);
        } else {
            let needle = self.filter.to_lowercase();
            let haystacks = self.haystacks();
            let order = self
                .sorted
                .iter()
                .copied()
                .filter(|&p| {
                    haystacks
                        .get(p as usize)
                        .is_some_and(|h| h.contains(&needle))
                })
                .collect();
            self.order = order;
        }
        self.reselect_row();
    }

    /// The filter grew by typing: keep only the rows that still match (the
    /// order stays sorted).
    pub(super) fn narrow_order(&mut self) {
        let needle = self.filter.to_lowercase();
        let haystacks = self.haystacks();
        let mut order = std::mem::take(&mut self.order);
        order.retain(|&p| {
            haystacks
                .get(p as usize)
                .is_some_and(|h| h.contains(&needle))
        });
        self.order = order;
        self.reselect_row();
    }

    /// What the filter searches, per instance: `name␀substrate␀status`
    /// lower-cased (the filter never holds a NUL, so no match spans two
    /// fields). Built on the first filter after a snapshot, then reused.
    fn haystacks(&mut self) -> Arc<Vec<String>> {
        if let Some(haystacks) = &self.haystacks {
            return Arc::clone(haystacks);
        }
        let built: Arc<Vec<String>> = Arc::new(
            self.snapshot
                .instances
                .iter()
                .map(|i| {
                    format!("{}\0{}\0{}", i.name, i.substrate, i.status.as_str()).to_lowercase()
                })
                .collect(),
        );
        self.haystacks = Some(Arc::clone(&built));
        built
    }

    /// After the rows changed: select the same instance again when it is
    /// shown, else stay at the same row (clamped) and follow that one. With
    /// no row shown (a filter matching nothing) the name is kept, so
    /// clearing the filter brings the selection back.
    fn reselect_row(&mut self) {
        let instances = &self.snapshot.instances;
        let found = self
            .selected_name
            .as_deref()
            .and_then(|name| {
                instances
                    .binary_search_by(|i| i.name.as_str().cmp(name))
                    .ok()
            })
            .and_then(|at| u32::try_from(at).ok())
            .and_then(|at| self.order.iter().position(|&p| p == at));
        self.selected = found.unwrap_or_else(|| step(self.selected, 0, self.order.len()));
        if found.is_none() && !self.order.is_empty() {
            self.selected_name = self.selected_instance().map(|i| i.name.clone());
        }
    }

    pub(super) fn recount_expired(&mut self) {
        let now = self.now;
        self.counts.expired = self
            .snapshot
            .instances
            .iter()
            .filter(|i| i.status == Status::Active && i.lease.is_some_and(|l| l.expired(now)))
            .count();
    }

    pub(super) fn clear_filter(&mut self) {
        if self.filter.is_empty() {
            return;
        }
        self.filter.clear();
        self.refilter();
        self.set_flash(FlashLevel::Info, "filter cleared".into());
    }
}

/// `index + delta` clamped to `0..len` (0 when empty).
pub(super) fn step(index: usize, delta: isize, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    index.saturating_add_signed(delta).min(len - 1)
}

/// The index to select after a new snapshot: the row with the same name when
/// it still exists, else the same position clamped to the new length.
fn reselect(
    len: usize,
    previous: usize,
    name: Option<&str>,
    find: impl Fn(&str) -> Option<usize>,
) -> usize {
    if len == 0 {
        return 0;
    }
    name.and_then(find).unwrap_or_else(|| previous.min(len - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_keys_cycle_through_all_four() {
        let mut key = SortKey::default();
        let mut labels = vec![];
        for _ in 0..4 {
            labels.push(key.label());
            key = key.next();
        }
        assert_eq!(key, SortKey::LeaseExpiry);
        assert_eq!(
            labels,
            ["lease expiry", "name", "substrate", "reap attempts"]
        );
    }

    #[test]
    fn steps_clamp() {
        assert_eq!(step(0, -1, 5), 0);
        assert_eq!(step(4, 1, 5), 4);
        assert_eq!(step(2, isize::MAX / 2, 5), 4);
        assert_eq!(step(2, isize::MIN / 2, 5), 0);
        assert_eq!(step(3, 1, 0), 0);
    }
}
