//! The console's one filter (`crate::ui::filter`: `/`, `:filter`) over a
//! fleet host's rows: each row read as a filter [`Row`] (its host's name
//! and alias for `host:` and the plain words, its lock as its host probed
//! it, its backoff and pending operation from its host's tables, its
//! expiry on its host's clock).

use std::collections::HashMap;

use crate::model::fleet::Host;
use crate::model::fleet::rows::Instance;
use crate::model::operation::OpStatus;
use crate::ui::filter::{Filter, LockSeen, Row};

/// One fleet row as the filter reads it.
struct FleetRow<'a> {
    row: &'a Instance,
    host: &'a str,
    haystack: String,
    /// This host's clock now (unix seconds).
    now: i64,
    backoff: Option<i64>,
    pending: Option<&'a OpStatus>,
}

impl Row for FleetRow<'_> {
    fn haystack(&self) -> &str {
        &self.haystack
    }

    fn status(&self) -> &str {
        &self.row.status
    }

    fn expired(&self) -> bool {
        self.row.expired(self.now)
    }

    fn failed_up(&self) -> bool {
        self.row.failed_up
    }

    fn substrate(&self) -> &str {
        &self.row.substrate
    }

    fn name(&self) -> &str {
        &self.row.key.name
    }

    fn host(&self) -> &str {
        self.host
    }

    fn lock(&self) -> LockSeen {
        match &self.row.lock {
            None => LockSeen::None,
            Some(lock) => match lock.liveness.as_str() {
                "alive" => LockSeen::Alive,
                "foreign_host" => LockSeen::Foreign,
                "stale_pid_gone" | "stale_pid_reused" => LockSeen::Stale,
                _ => LockSeen::Unknown,
            },
        }
    }

    fn backoff(&self) -> Option<(i64, i64)> {
        self.backoff.map(|retry_at| (retry_at, self.now))
    }

    fn pending(&self) -> Option<&OpStatus> {
        self.pending
    }
}

/// Which of `host`'s rows `filter` keeps when this machine's clock reads
/// `now` (unix seconds; each row is read on its host's clock): a flag per
/// row of [`Host::instances`].
#[must_use]
pub(super) fn kept(filter: &Filter, host: &Host, now: i64) -> Vec<bool> {
    let rows = host.instances();
    if filter.is_empty() {
        return vec![true; rows.len()];
    }
    let names = host.search_name();
    let host_now = host.host_now(now);
    let statuses: Vec<(&str, OpStatus)> = host
        .operations()
        .iter()
        .filter(|op| op.pending())
        .map(|op| (op.instance.as_str(), OpStatus::parse(&op.status)))
        .collect();
    let pending: HashMap<&str, &OpStatus> = statuses.iter().map(|(name, s)| (*name, s)).collect();
    rows.iter()
        .map(|row| {
            let haystack = format!(
                "{}\0{}\0{}\0{}",
                row.key.name, row.substrate, row.status, names
            )
            .to_lowercase();
            filter.matches_row(&FleetRow {
                row,
                host: &names,
                haystack,
                now: host_now,
                backoff: host.backoff(&row.key.name).map(|b| b.next_retry_at),
                pending: pending.get(row.key.name.as_str()).copied(),
            })
        })
        .collect()
}
