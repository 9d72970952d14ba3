//! The Instances table's rows: the sort, the filter and the selection that
//! follows an instance by name across snapshots, plus the header counts.

use std::cmp::Reverse;
use std::sync::Arc;

use super::{App, FlashLevel};
use crate::model::{Snapshot, Status};
use crate::ui::filter::{Facts, Filter};

/// The Instances table's state: which rows are shown, in which order,
/// the filter, the marks and the selection.
#[derive(Debug, Default)]
pub(super) struct InstancesTable {
    /// Positions into `snapshot.instances` of the rows shown, filtered and
    /// sorted. Rebuilt only when the snapshot, the filter or the sort
    /// changes (never per frame, never on a tick: lease order does not
    /// change with time). With no filter it is `sorted` itself, shared,
    /// not a copy (4 MB at a million instances).
    pub(super) order: Arc<Vec<u32>>,
    /// Every position, sorted by `sort` (rebuilt on a snapshot or a sort).
    pub(super) sorted: Arc<Vec<u32>>,
    /// What the filter searches, built on first use after a snapshot.
    pub(super) haystacks: Option<Arc<Haystacks>>,
    pub(super) sort: SortKey,
    /// The sort's order reversed (`S`).
    pub(super) reversed: bool,
    /// The filter text (empty: none); typed while [`super::Layer::Filter`]
    /// is open.
    pub(super) filter: String,
    /// Why the filter cannot be read, while it cannot (no row is shown).
    pub(super) filter_error: Option<String>,
    /// Marked instance names (`space`, Ctrl-A), kept sorted; `r` and `d`
    /// act on them when there are any. Names no longer in the store are
    /// dropped on each snapshot.
    pub(super) marks: std::collections::BTreeSet<String>,
    /// Over a fleet, the marks instead: each a (host, name and birth)
    /// (`crate::ui::app::over_fleet::FleetMarks`); `r` and `d` act on them as on
    /// one host.
    pub(super) fleet_marks: crate::ui::app::over_fleet::FleetMarks,
    /// The selected row (an index into `order`).
    pub(super) selected: usize,
    /// Its instance's name, to find it again after a new snapshot.
    pub(super) selected_name: Option<String>,
}

pub use crate::model::sort_key::SortKey;

impl App {
    /// Whether the Instances rows run high to low in the sorted column
    /// (drawn `▼`; `▲` otherwise): the key's natural direction, flipped by
    /// `S`.
    #[must_use]
    pub fn sort_descending(&self) -> bool {
        self.instances.sort.descending() != self.instances.reversed
    }

    /// Why the filter cannot be read, while it cannot
    /// ([`crate::ui::filter::parse`]'s message; no row is shown).
    #[must_use]
    pub fn filter_error(&self) -> Option<&str> {
        self.instances.filter_error.as_deref()
    }

    /// Whether `S` reversed the sort.
    #[must_use]
    pub fn sort_reversed(&self) -> bool {
        self.instances.reversed
    }

    /// Sort by `key`, `descending` or not (`:sort KEY [asc|desc]`; `None`:
    /// the key's natural direction).
    pub fn set_sort(&mut self, key: SortKey, descending: Option<bool>) {
        self.instances.sort = key;
        self.instances.reversed = descending.is_some_and(|d| d != key.descending());
        self.resort();
    }

    /// [`App::handle`] of [`Event::Snapshot`](crate::event::Event::Snapshot),
    /// without what the frame does not show: the rows, sort, filter,
    /// selection and counts are the new snapshot's at once, while the
    /// Activity lines of what changed since the one replaced (`observed`,
    /// `controller`) and freeing it wait for [`App::settle`] (the render
    /// loop calls it after the frame; any other event settles first, so
    /// lines keep their order). Returns the command that keeps an open
    /// detail view current.
    pub(super) fn show_snapshot(&mut self, snapshot: Arc<Snapshot>) -> Option<crate::ui::Effect> {
        self.set_snapshot(snapshot);
        match self.layers.detail() {
            Some(d) => Some(crate::ui::Effect::Io(crate::event::Request::OpenDetail {
                name: d.name.clone(),
            })),
            // The operation overlay follows its operation: its events are
            // read again when the operation changed.
            None => self.refresh_operation_events(),
        }
    }

    /// Log what changed between the snapshot [`App::show_snapshot`]
    /// replaced and the one shown, and hand the replaced one back to be
    /// freed (100,000 rows take milliseconds to free: the render loop does
    /// it after the frame), with whether a line was logged (the frame is
    /// then drawn again). `None` when nothing waits.
    pub fn settle(&mut self) -> Option<(Arc<Snapshot>, bool)> {
        let previous = self.shown.retired.take()?;
        let logged = self.observe(&previous);
        Some((previous, logged))
    }

    /// Redact again the log lines and the full text held: the values to
    /// redact changed (a secret was added; lines may have come before the
    /// snapshot that holds it).
    fn redact_held(&mut self) {
        let redactor = Arc::clone(&self.shown.snapshot.redactor);
        if let Some(view) = self.layers.logs_mut() {
            view.buffers.iter_mut().for_each(|b| b.redact(&redactor));
        }
        if let Some(full) = self.layers.full_text_mut() {
            full.redact(&redactor);
        }
    }

    /// The controller `down`s of `rows` that finished in the last hour,
    /// less those the teardowns read back from the audit trail stand for
    /// ([`crate::model::observe::finished_downs_last_hour`]).
    fn downs_before(&self, rows: &crate::model::Rows) -> Vec<crate::event::Activity> {
        let restored: Vec<(&str, i64)> = self
            .activity
            .entries()
            .iter()
            .filter(|l| l.entry.restored)
            .map(|l| (l.entry.instance.as_str(), l.entry.at))
            .collect();
        crate::model::observe::finished_downs_last_hour(rows, &restored, self.now)
    }

    fn set_snapshot(&mut self, snapshot: Arc<Snapshot>) {
        let previous = std::mem::replace(&mut self.shown.snapshot, snapshot);
        let before = Arc::clone(&previous);
        if self.shown.snapshot.redactor != previous.redactor {
            self.redact_held();
        }
        // The first rows of a big store (`model::Partial`) are no state to
        // compare with: the rest of the store the whole read adds is not
        // news (no `appeared` line for each of its rows).
        if self.shown.loaded && previous.partial.is_none() && self.shown.snapshot.partial.is_none()
        {
            self.shown.retired = Some(previous);
        }
        self.shown.loaded = true;
        if self.ours.before_start.is_none() && self.shown.snapshot.partial.is_none() {
            self.ours.before_start = Some(self.downs_before(&self.shown.snapshot.rows));
        }
        self.instances.haystacks = None;
        self.resort();
        let instances = &self.shown.snapshot.instances;
        let attempts = &self.shown.snapshot.reap_attempts;
        self.backoffs.index = reselect(
            attempts.len(),
            self.backoffs.index,
            self.backoffs.key.as_deref(),
            |name| {
                attempts
                    .binary_search_by(|a| a.instance.as_str().cmp(name))
                    .ok()
            },
        );
        self.backoffs.key = attempts
            .get(self.backoffs.index)
            .map(|a| a.instance.clone());
        let (mut active, mut tombstoned) = (0, 0);
        for instance in instances {
            match instance.status {
                Status::Active => active += 1,
                Status::Tombstoned => tombstoned += 1,
                Status::Other(_) => {}
            }
        }
        self.shown.counts.active = active;
        self.shown.counts.tombstoned = tombstoned;
        self.recount_expired();
        self.reselect_operation(&before.operations);
        self.prune_marks();
    }

    /// Sort every instance by the active key into `sorted` (on a new
    /// snapshot or sort only), then filter.
    pub(super) fn resort(&mut self) {
        let snapshot = &self.shown.snapshot;
        let instances = &snapshot.instances;
        // A store cannot hold 2^32 instances in memory; the rest are cut
        // rather than wrapped.
        let len = u32::try_from(instances.len()).unwrap_or(u32::MAX);
        // The keys that end in the position are unique, so any order in
        // gives the same order out: start from the last one (a permutation
        // of these positions when the count is unchanged), which a new
        // snapshot rarely changes and the sort then only checks.
        let unique = matches!(
            self.instances.sort,
            SortKey::LeaseExpiry | SortKey::ReapAttempts | SortKey::Lock
        );
        // The rows shown are rebuilt below from `sorted`: let go of them
        // first, so `sorted` is not shared and is sorted in place.
        self.instances.order = Arc::default();
        let mut sorted: Vec<u32> = if unique && self.instances.sorted.len() == len as usize {
            Arc::unwrap_or_clone(std::mem::take(&mut self.instances.sorted))
        } else {
            (0..len).collect()
        };
        let at = |p: u32| &instances[p as usize];
        // Ties by position: name order (the snapshot is sorted by name).
        match self.instances.sort {
            SortKey::Name | SortKey::Host => {}
            SortKey::LeaseExpiry => sort_by_lease(&mut sorted, instances),
            SortKey::Substrate => {
                sorted.sort_by(|&a, &b| at(a).substrate.cmp(&at(b).substrate));
            }
            SortKey::ReapAttempts => sorted.sort_by_cached_key(|&p| {
                let attempts = snapshot.reap_attempt(&at(p).name).map_or(0, |a| a.attempts);
                (Reverse(attempts), p)
            }),
            SortKey::Status => {
                sorted.sort_by(|&a, &b| at(a).status.as_str().cmp(at(b).status.as_str()));
            }
            SortKey::Lock => sorted.sort_by_cached_key(|&p| {
                let i = at(p);
                let rank = match (&i.lock, snapshot.lock_liveness(&i.name)) {
                    (None, _) => 3,
                    (Some(_), Some(l)) if l.held() => 0,
                    (Some(_), Some(_)) => 1,
                    (Some(_), None) => 2,
                };
                (rank, p)
            }),
        }
        if self.instances.reversed {
            sorted.reverse();
        }
        self.instances.sorted = Arc::new(sorted);
        self.refilter();
    }

    /// Filter `sorted` into the rows shown (on a new snapshot, sort, or a
    /// filter that is not a longer version of the last one). A filter that
    /// cannot be read ([`crate::ui::filter::parse`]) shows no row and keeps
    /// its message in `filter_error`.
    pub(super) fn refilter(&mut self) {
        let filter = match crate::ui::filter::parse(&self.instances.filter) {
            Ok(filter) => {
                self.instances.filter_error = None;
                filter
            }
            Err(error) => {
                self.instances.filter_error = Some(error);
                self.instances.order = Arc::default();
                self.reselect_row();
                return;
            }
        };
        if filter.is_empty() {
            self.instances.order = Arc::clone(&self.instances.sorted);
        } else {
            let haystacks = self.haystacks();
            let matcher = Matcher::new(&filter, &self.shown.snapshot, &haystacks, self.now);
            let order = self
                .instances
                .sorted
                .iter()
                .copied()
                .filter(|&p| matcher.matches(p))
                .collect();
            self.instances.order = Arc::new(order);
        }
        self.reselect_row();
    }

    /// The filter grew by typing: keep only the rows that still match (the
    /// order stays sorted) when the filter is plain words, else filter
    /// again.
    pub(super) fn narrow_order(&mut self) {
        let filter = match crate::ui::filter::parse(&self.instances.filter) {
            Ok(filter) if filter.words_only() && self.instances.filter_error.is_none() => filter,
            _ => return self.refilter(),
        };
        let haystacks = self.haystacks();
        let matcher = Matcher::new(&filter, &self.shown.snapshot, &haystacks, self.now);
        // Copied first only when shared with `sorted` (no filter before).
        Arc::make_mut(&mut self.instances.order).retain(|&p| matcher.matches(p));
        self.reselect_row();
    }

    /// What the filter searches ([`Haystacks`]). Built on the first filter
    /// after a snapshot, then reused.
    fn haystacks(&mut self) -> Arc<Haystacks> {
        if let Some(haystacks) = &self.instances.haystacks {
            return Arc::clone(haystacks);
        }
        let built = Arc::new(Haystacks::new(&self.shown.snapshot.instances));
        self.instances.haystacks = Some(Arc::clone(&built));
        built
    }

    /// After the rows changed: select the same instance again when it is
    /// shown, else stay at the same row (clamped) and follow that one. With
    /// no row shown (a filter matching nothing) the name is kept, so
    /// clearing the filter brings the selection back.
    fn reselect_row(&mut self) {
        let instances = &self.shown.snapshot.instances;
        let found = self
            .instances
            .selected_name
            .as_deref()
            .and_then(|name| {
                instances
                    .binary_search_by(|i| i.name.as_str().cmp(name))
                    .ok()
            })
            .and_then(|at| u32::try_from(at).ok())
            .and_then(|at| self.instances.order.iter().position(|&p| p == at));
        self.instances.selected =
            found.unwrap_or_else(|| step(self.instances.selected, 0, self.instances.order.len()));
        if found.is_none() && !self.instances.order.is_empty() {
            self.instances.selected_name = self.selected_instance().map(|i| i.name.clone());
        }
    }

    pub(super) fn recount_expired(&mut self) {
        let now = self.now;
        self.shown.counts.expired = self
            .shown
            .snapshot
            .instances
            .iter()
            .filter(|i| i.status == Status::Active && i.lease.is_some_and(|l| l.expired(now)))
            .count();
    }

    pub(super) fn clear_filter(&mut self) {
        if self.instances.filter.is_empty() {
            return;
        }
        self.instances.filter.clear();
        self.refilter();
        self.set_flash(FlashLevel::Info, "filter cleared".into());
    }
}

/// A filter ready to test positions of one snapshot: which look-ups its
/// terms need, decided once per filtering (a 100k store is filtered again
/// on each key typed), not per row.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one look-up a filter's terms need, decided once per filtering: flags, not states"
)]
struct Matcher<'a> {
    filter: &'a Filter,
    snapshot: &'a Snapshot,
    haystacks: &'a Haystacks,
    now: i64,
    liveness: bool,
    attempts: bool,
    operations: bool,
    words_only: bool,
}

impl<'a> Matcher<'a> {
    fn new(filter: &'a Filter, snapshot: &'a Snapshot, haystacks: &'a Haystacks, now: i64) -> Self {
        Self {
            filter,
            snapshot,
            haystacks,
            now,
            liveness: filter.uses_liveness(),
            attempts: filter.uses_attempts(),
            operations: filter.uses_operations() || filter.uses_failed_up(),
            words_only: filter.words_only(),
        }
    }

    /// Whether the instance at position `p` matches.
    fn matches(&self, p: u32) -> bool {
        let Some(haystack) = self.haystacks.get(p as usize) else {
            return false;
        };
        if self.words_only {
            return self.filter.matches_words(haystack);
        }
        let Some(instance) = self.snapshot.instances.get(p as usize) else {
            return false;
        };
        let snapshot = self.snapshot;
        let name = instance.name.as_str();
        let facts = Facts {
            haystack,
            liveness: self
                .liveness
                .then(|| snapshot.lock_liveness(name))
                .flatten(),
            attempt: self.attempts.then(|| snapshot.reap_attempt(name)).flatten(),
            // `O(log P)` (`model::OperationIndex`), only when asked.
            pending: self
                .operations
                .then(|| snapshot.pending_operation(name))
                .flatten(),
            now: self.now,
        };
        self.filter.matches(instance, &facts)
    }
}

/// Sort `positions` (of `instances`) by lease expiry, soonest first, the
/// rows without a lease last, ties by position. Positions already in that
/// order (a new snapshot rarely moves a lease) are only checked, reading
/// each row's lease, with nothing allocated. Else the keys are read once
/// into one array by position (9 B a row; a cached key with its index was
/// 24 B a row, 24 MB of the console's peak at a million instances) and the
/// positions sorted in place (the keys end in the position: unique, so an
/// unstable sort gives the one order).
fn sort_by_lease(positions: &mut [u32], instances: &crate::model::Instances) {
    let key = |p: u32| {
        let lease = instances.get(p as usize).and_then(|i| i.lease);
        (lease.is_none(), lease.map_or(0, |l| l.expires_at), p)
    };
    if positions.is_sorted_by_key(|&p| key(p)) {
        return;
    }
    let expiry: Vec<i64> = instances
        .iter()
        .map(|i| i.lease.map_or(0, |l| l.expires_at))
        .collect();
    let leased: Vec<bool> = instances.iter().map(|i| i.lease.is_some()).collect();
    positions.sort_unstable_by_key(|&p| {
        let at = p as usize;
        (
            !leased.get(at).copied().unwrap_or(false),
            expiry.get(at).copied().unwrap_or(0),
            p,
        )
    });
}

/// What the filter searches, per instance: `name␀substrate␀status`
/// lower-cased (the filter never holds a NUL, so no match spans two
/// fields), every row's in one text (one allocation: at a million
/// instances a `String` a row was 72 MB, one text with its ends 33 MB).
#[derive(Debug, Default)]
pub(super) struct Haystacks {
    text: String,
    /// Where each row's haystack ends in `text`; row `p` starts where row
    /// `p - 1` ends.
    ends: Vec<usize>,
}

impl Haystacks {
    fn new(instances: &crate::model::Instances) -> Self {
        // Sized up front (exact for ASCII text): growing by doubling would
        // hold two copies at once.
        let size = instances.iter().fold(0usize, |size, i| {
            size.saturating_add(i.name.len() + i.substrate.len() + i.status.as_str().len() + 2)
        });
        let mut built = Self {
            text: String::with_capacity(size),
            ends: Vec::with_capacity(instances.len()),
        };
        for i in instances {
            // Lower-cased whole (`str::to_lowercase`: a final sigma reads
            // as one), then copied in.
            let row = format!("{}\0{}\0{}", i.name, i.substrate, i.status.as_str()).to_lowercase();
            built.text.push_str(&row);
            built.ends.push(built.text.len());
        }
        built.text.shrink_to_fit();
        built
    }

    /// The haystack of the instance at position `p`.
    fn get(&self, p: usize) -> Option<&str> {
        let end = *self.ends.get(p)?;
        let start = match p.checked_sub(1) {
            Some(before) => *self.ends.get(before)?,
            None => 0,
        };
        self.text.get(start..end)
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
mod tests;
