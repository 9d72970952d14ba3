//! The merged Instances table over every host: the sort, as one order of
//! row references, of the rows the console's one filter kept
//! (`crate::ui::filter`, a flag per row). Pure.

use std::cmp::Ordering;

pub use crate::model::sort_key::SortKey;

use super::rows::Instance;
use super::{Fleet, Host};

/// One row of the merged table: host index and the row's index in that
/// host's [`super::Host::instances`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRef {
    /// The host's index.
    pub host: usize,
    /// The instance's index on that host.
    pub index: usize,
}

fn lease_rank(row: &Instance) -> (u8, i64) {
    if row.tombstoned() {
        return (2, row.tombstoned_at.unwrap_or(0));
    }
    match row.lease {
        Some(lease) => (0, lease.expires_at),
        None => (1, 0),
    }
}

/// The merged table's rows: every host's instances that were kept
/// (`kept[h][i]`: host `h`'s row `i` passed the filter), sorted by `sort`
/// (reversed when `descending`); ties by host order, then name, then
/// birth, so the order is total and stable.
#[must_use]
pub fn order(fleet: &Fleet, kept: &[Vec<bool>], sort: SortKey, descending: bool) -> Vec<RowRef> {
    let per_host: Vec<Vec<usize>> = fleet
        .hosts
        .iter()
        .zip(kept)
        .map(|(host, kept)| host_order(host, kept, sort))
        .collect();
    merge(fleet, &per_host, sort, descending)
}

/// One host's rows that were kept (`kept[i]`: row `i` passed the filter;
/// a row without a flag is not kept), sorted by `sort` (ascending; ties by
/// name, then birth): indices into [`super::Host::instances`]. A view
/// caches it per host (by [`super::Host::version`]), so a change on one
/// host sorts that host's rows only.
#[must_use]
pub fn host_order(host: &Host, kept: &[bool], sort: SortKey) -> Vec<usize> {
    let rows = host.instances();
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| kept.get(i).copied().unwrap_or(false))
        .collect();
    order.sort_by(|&a, &b| {
        compare((host, &rows[a]), (host, &rows[b]), sort)
            .then_with(|| rows[a].key.cmp(&rows[b].key))
    });
    order
}

/// `x` against `y` (each with its host) by `sort`, as the console sorts
/// one host's rows: reap attempts most first, locks held first.
fn compare((hx, x): (&Host, &Instance), (hy, y): (&Host, &Instance), sort: SortKey) -> Ordering {
    match sort {
        // By host, then active before tombstoned (as the console's
        // default sort keeps tombstones last), then by name.
        SortKey::Host => x.tombstoned().cmp(&y.tombstoned()),
        SortKey::LeaseExpiry => lease_rank(x).cmp(&lease_rank(y)),
        SortKey::Name => x.key.name.cmp(&y.key.name),
        SortKey::Substrate => x.substrate.cmp(&y.substrate),
        SortKey::ReapAttempts => attempts(hy, y).cmp(&attempts(hx, x)),
        SortKey::Status => (x.status != "active", &x.status, lease_rank(x)).cmp(&(
            y.status != "active",
            &y.status,
            lease_rank(y),
        )),
        SortKey::Lock => lock_rank(x).cmp(&lock_rank(y)),
    }
}

/// The failed reaps of `row` on `host` (its backoff's attempts).
fn attempts(host: &Host, row: &Instance) -> i64 {
    host.backoff(&row.key.name).map_or(0, |b| b.attempts)
}

/// Held locks first, then stale, then unprobed, then none (the console's
/// lock order, as the row's host probed it).
fn lock_rank(row: &Instance) -> u8 {
    match &row.lock {
        None => 3,
        Some(lock) if lock.held => 0,
        Some(lock) if lock.liveness.starts_with("stale") => 1,
        Some(_) => 2,
    }
}

/// The merged order of every host's sorted rows (`per_host[h]`, from
/// [`host_order`]): by host, the hosts' lists one after the other; by any
/// other key, a merge of the sorted lists (ties by host order).
#[must_use]
pub fn merge(fleet: &Fleet, per_host: &[Vec<usize>], sort: SortKey, reversed: bool) -> Vec<RowRef> {
    let mut rows: Vec<RowRef> = per_host
        .iter()
        .enumerate()
        .flat_map(|(host, list)| list.iter().map(move |&index| RowRef { host, index }))
        .collect();
    if sort != SortKey::Host {
        let get = |r: &RowRef| {
            let host = &fleet.hosts[r.host];
            (host, &host.instances()[r.index])
        };
        // Each host's run is sorted already: a stable sort merges the runs.
        rows.sort_by(|a, b| compare(get(a), get(b), sort).then_with(|| a.host.cmp(&b.host)));
    }
    if reversed {
        rows.reverse();
    }
    rows
}
