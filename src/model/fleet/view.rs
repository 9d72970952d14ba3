//! The merged Instances table over every host: the filter (words and
//! field terms, `host:` among them) and the sort, as one order of row
//! references. Pure: `now` (unix seconds) is a parameter.

use std::cmp::Ordering;

use super::Fleet;
use super::rows::Instance;

/// What the merged table is sorted by (`s` cycles, `S` reverses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// Host (in the fleet's order), then name.
    Host,
    /// Lease expiry, soonest first (no lease after, tombstones last).
    Lease,
    /// Name, then host.
    Name,
    /// Status (`active`, then the rest), then lease.
    Status,
}

impl SortKey {
    /// The next key `s` moves to.
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Host => Self::Lease,
            Self::Lease => Self::Name,
            Self::Name => Self::Status,
            Self::Status => Self::Host,
        }
    }

    /// The words the header shows (`sort: host`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Lease => "lease expiry",
            Self::Name => "name",
            Self::Status => "status",
        }
    }
}

/// One row of the merged table: host index and the row's index in that
/// host's [`super::Host::instances`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRef {
    /// The host's index.
    pub host: usize,
    /// The instance's index on that host.
    pub index: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Any,
    Host,
    Name,
    Status,
    Substrate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    field: Field,
    word: String,
    negated: bool,
}

/// A parsed filter: words separated by spaces, all of which must match.
/// A bare word matches the host, name, substrate or status (any part,
/// ignoring case); `host:`, `name:`, `substrate:` match that field;
/// `status:` takes `expired`, `active`, `tombstoned`, `failed-up`,
/// `locked` or a part of the stored status; `!` before a term negates it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    terms: Vec<Term>,
}

impl Filter {
    /// Parse `text` (the `/` prompt's).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let terms = text
            .split_whitespace()
            .filter_map(|word| {
                let (negated, word) = match word.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, word),
                };
                let (field, word) = match word.split_once(':') {
                    Some(("host", rest)) => (Field::Host, rest),
                    Some(("name", rest)) => (Field::Name, rest),
                    Some(("status", rest)) => (Field::Status, rest),
                    Some(("substrate", rest)) => (Field::Substrate, rest),
                    _ => (Field::Any, word),
                };
                (!word.is_empty()).then(|| Term {
                    field,
                    word: word.to_lowercase(),
                    negated,
                })
            })
            .collect();
        Self { terms }
    }

    /// No term.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Instance `row` of host `host` matches at `now`.
    #[must_use]
    pub fn matches(&self, host: &str, row: &Instance, now: i64) -> bool {
        self.terms
            .iter()
            .all(|term| term.negated != term.matches(host, row, now))
    }
}

fn contains(text: &str, word: &str) -> bool {
    text.to_lowercase().contains(word)
}

impl Term {
    fn matches(&self, host: &str, row: &Instance, now: i64) -> bool {
        let word = self.word.as_str();
        match self.field {
            Field::Host => contains(host, word),
            Field::Name => contains(&row.key.name, word),
            Field::Substrate => contains(&row.substrate, word),
            Field::Status => status_matches(row, word, now),
            Field::Any => {
                contains(host, word)
                    || contains(&row.key.name, word)
                    || contains(&row.substrate, word)
                    || contains(&row.status, word)
            }
        }
    }
}

fn status_matches(row: &Instance, word: &str, now: i64) -> bool {
    match word {
        "expired" => row.expired(now),
        "failed-up" => row.failed_up,
        "locked" => row.lock.as_ref().is_some_and(|lock| lock.held),
        _ => contains(&row.status, word),
    }
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

/// The merged table's rows: every host's instances that `filter` keeps at
/// `now`, sorted by `sort` (reversed when `descending`); ties by host
/// order, then name, then birth, so the order is total and stable.
#[must_use]
pub fn order(
    fleet: &Fleet,
    filter: &Filter,
    sort: SortKey,
    descending: bool,
    now: i64,
) -> Vec<RowRef> {
    let per_host: Vec<Vec<usize>> = fleet
        .hosts
        .iter()
        .map(|host| host_order(host, filter, sort, now))
        .collect();
    merge(fleet, &per_host, sort, descending)
}

/// One host's rows that `filter` keeps at `now`, sorted by `sort`
/// (ascending; ties by name, then birth): indices into
/// [`super::Host::instances`]. A view caches it per host (by
/// [`super::Host::version`]), so a change on one host sorts that host's
/// rows only.
#[must_use]
pub fn host_order(host: &super::Host, filter: &Filter, sort: SortKey, now: i64) -> Vec<usize> {
    let rows = host.instances();
    let names = host.search_name();
    // `status:expired` on the host's clock: its reaper reads it.
    let now = host.host_now(now);
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| filter.matches(&names, &rows[i], now))
        .collect();
    order.sort_by(|&a, &b| {
        compare(&rows[a], &rows[b], sort).then_with(|| rows[a].key.cmp(&rows[b].key))
    });
    order
}

fn compare(x: &Instance, y: &Instance, sort: SortKey) -> Ordering {
    match sort {
        // By host, then active before tombstoned (as the console's
        // default sort keeps tombstones last), then by name.
        SortKey::Host => x.tombstoned().cmp(&y.tombstoned()),
        SortKey::Lease => lease_rank(x).cmp(&lease_rank(y)),
        SortKey::Name => x.key.name.cmp(&y.key.name),
        SortKey::Status => (x.status != "active", &x.status, lease_rank(x)).cmp(&(
            y.status != "active",
            &y.status,
            lease_rank(y),
        )),
    }
}

/// The merged order of every host's sorted rows (`per_host[h]`, from
/// [`host_order`]): by host, the hosts' lists one after the other; by any
/// other key, a merge of the sorted lists (ties by host order).
#[must_use]
pub fn merge(
    fleet: &Fleet,
    per_host: &[Vec<usize>],
    sort: SortKey,
    descending: bool,
) -> Vec<RowRef> {
    let mut rows: Vec<RowRef> = per_host
        .iter()
        .enumerate()
        .flat_map(|(host, list)| list.iter().map(move |&index| RowRef { host, index }))
        .collect();
    if sort != SortKey::Host {
        let get = |r: &RowRef| &fleet.hosts[r.host].instances()[r.index];
        // Each host's run is sorted already: a stable sort merges the runs.
        rows.sort_by(|a, b| compare(get(a), get(b), sort).then_with(|| a.host.cmp(&b.host)));
    }
    if descending {
        rows.reverse();
    }
    rows
}
