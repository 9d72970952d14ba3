//! A dry run's re-checks read at once: when one in twenty or
//! more of the store's instances are on the worklist, five plain table
//! scans in the pass's one read transaction ([`Store::begin_read`]) cost
//! less than a re-check statement per name (on the 0.4.0 schema about
//! 7,000 instructions per instance row scanned against 35,000 per
//! re-check, its six index seeks and the statement's set-up and reset; in
//! wall time, with the cache misses of seeks into a 100,000-instance
//! store, about 34 us a re-check against 0.15 s for the scans: with 10,000
//! of 100,000 expired, 0.72-0.93 s per name against 0.29-0.33 s at once,
//! the same output).
//!
//! The scans only say, per name, whether its rows are exactly what the
//! decision saw: the [`Recheck`] that [`Store::recheck`] would read in
//! that transaction (the same rows, through the same column readers:
//! `read::instance_columns`, `instance_extras`, `lease_columns`,
//! `lock_columns`, `attempt_from_row`) equals the one of the snapshot's
//! rows, with no operation pending. Such a name is not read again (the
//! teardown job's `changed` finds nothing in an unchanged re-read); any
//! other is re-checked by [`Store::recheck`] in the same transaction, so
//! what is reported about it comes from the one re-check path a real pass
//! takes. Only a bit per worklist name is kept: the pass holds no second
//! snapshot.
//!
//! Where a scan could pair rows differently from the per-name query (a
//! table declares a collation, a name or key is neither text nor NULL, a
//! key appears twice for a name, the decision saw a name twice, a
//! statement fails) nothing is known and every name is re-checked by
//! [`Store::recheck`].

use std::collections::HashMap;

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use super::lenient::col;
use super::read::{
    LEASE_SCAN_SQL, Substrates, attempt_from_row, collates, instance_columns, instance_extras,
    lease_columns, lock_columns, lock_scan_sql, version,
};
use super::{Layout, Recheck, Store, StoreError};
use crate::model::{Instance, ReapAttempt};

/// Re-check in bulk when the worklist is at least one in this many of the
/// store's instances (see the module doc for the measurement: the two ways
/// break even near 5 %).
pub const BULK_SHARE: usize = 20;

/// The worklist names whose rows, read at once, are as the decision saw
/// them.
pub(super) type Held = std::collections::HashSet<String>;

/// What the decision saw of one name, as a dry run hands it to
/// [`Store::begin_read_of`]: its instance row (with lease and lock) and
/// its `reap_attempts` row.
pub type Seen<'a> = (&'a Instance, Option<&'a ReapAttempt>);

/// One name as the scans find it.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one fact a scan found about the name (independent flags)"
)]
struct Entry<'a> {
    seen: Seen<'a>,
    row: bool,
    lease: bool,
    lock: bool,
    attempt: bool,
    differs: bool,
}

impl Entry<'_> {
    /// Every [`Recheck`] field read equal to the decision's (nothing
    /// pending: a pending row sets `differs`). A field added to
    /// [`Recheck`] fails to build [`COMPARED`] until it is compared here.
    fn unchanged(&self) -> bool {
        let (instance, attempt) = self.seen;
        self.row
            && !self.differs
            && (self.lease || instance.lease.is_none())
            && (self.lock || instance.lock.is_none())
            && (self.attempt || attempt.is_none())
    }
}

/// The fields [`Entry::unchanged`] covers, by name: this stops compiling
/// when [`Recheck`] gains one.
const COMPARED: fn(&Recheck) = |Recheck {
                                    status: _,
                                    lease: _,
                                    lock: _,
                                    attempt: _,
                                    birth: _,
                                    created_at: _,
                                    pending: _,
                                }| {};

impl Store {
    /// [`Store::begin_read`], then the worklist `seen` known unchanged
    /// ([`Store::unchanged_in_read`] until [`Store::end_read`]): every name
    /// when nothing was committed to the file since this connection's last
    /// [`Store::snapshot`] (its `PRAGMA data_version` and
    /// `total_changes()` as that read saw them; that snapshot's rows
    /// paired as the re-check pairs them, and `seen` taken from it), so
    /// the store is read once; else, when `seen` is at least one in
    /// [`BULK_SHARE`] of the store's `instances`, the names whose rows,
    /// read at once in that transaction, are as seen. For a dry run only,
    /// as [`Store::begin_read`] is.
    ///
    /// # Errors
    /// As [`Store::begin_read`]; a scan that fails only leaves every name
    /// to [`Store::recheck`].
    pub fn begin_read_of(&mut self, seen: &[Seen<'_>], instances: usize) -> Result<(), StoreError> {
        let _ = COMPARED;
        self.begin_read()?;
        if let Some((read, pending)) = self.snapshot_version.take()
            && version(&self.conn).ok() == Some(read)
        {
            // Nothing was committed since the decision's snapshot was
            // read: each re-check would read the rows it saw. The store is
            // read once, not twice. (A name with an operation pending, or
            // seen twice, is left to its re-check.)
            let mut held = Held::with_capacity(seen.len());
            let mut twice = Held::new();
            for (instance, _) in seen {
                if !held.insert(instance.name.clone()) {
                    twice.insert(instance.name.clone());
                }
            }
            held.retain(|name| !pending.contains(name) && !twice.contains(name));
            self.held = Some(held);
            return Ok(());
        }
        if seen.len().saturating_mul(BULK_SHARE) >= instances {
            self.held = read_all(&self.conn, self.layout, seen).ok().flatten();
        }
        Ok(())
    }

    /// Whether `name`'s rows, read at once by [`Store::begin_read_of`] in
    /// the read transaction still open, are exactly what the decision saw
    /// with nothing pending: its [`Store::recheck`] would find nothing
    /// changed. `false` when that is not known: re-check it.
    #[must_use]
    pub fn unchanged_in_read(&self, name: &str) -> bool {
        self.held.as_ref().is_some_and(|held| held.contains(name))
    }
}

/// The names of `seen` whose rows are unchanged; `Ok(None)` where a scan
/// cannot be trusted to pair rows as the per-name query does (see the
/// module doc).
fn read_all(
    conn: &Connection,
    layout: Layout,
    seen: &[Seen<'_>],
) -> rusqlite::Result<Option<Held>> {
    if collates(conn)? {
        return Ok(None);
    }
    let mut found: HashMap<&str, Entry<'_>> = HashMap::with_capacity(seen.len());
    for &(instance, attempt) in seen {
        let entry = Entry {
            seen: (instance, attempt),
            row: false,
            lease: false,
            lock: false,
            attempt: false,
            differs: false,
        };
        // A name seen twice (a hand-made table without a key, read by the
        // join): which row each saw is not known here.
        if found.insert(instance.name.as_str(), entry).is_some() {
            return Ok(None);
        }
    }
    let pick = |present: bool, column: &'static str| if present { column } else { "NULL" };
    let instances = format!(
        "SELECT name, substrate, status, created_at, tombstoned_at, {}, {}, {} FROM instances",
        pick(layout.dirty, "dirty"),
        pick(layout.birth, "instance_id"),
        pick(layout.birth, "resource_namespace"),
    );
    let mut substrates = Substrates::default();
    let ok = scan(conn, &instances, &mut found, true, |row, entry| {
        if std::mem::replace(&mut entry.row, true) {
            return false;
        }
        let mut read = instance_columns(row, String::new(), Vec::new(), &mut substrates);
        instance_extras(row, 5, &mut read);
        let seen = entry.seen.0;
        entry.differs |= read.status != seen.status
            || read.birth != seen.birth
            || read.created_at != seen.created_at;
        true
    })?;
    if !ok || !keyed(conn, layout, &mut found)? {
        return Ok(None);
    }
    Ok(Some(
        found
            .into_iter()
            .filter(|(_, entry)| entry.unchanged())
            .map(|(name, _)| name.to_owned())
            .collect(),
    ))
}

/// Compare each found name's lease, lock and reap attempt, and note any
/// pending operation; `false` where a key appears twice for one name.
fn keyed(
    conn: &Connection,
    layout: Layout,
    found: &mut HashMap<&str, Entry<'_>>,
) -> rusqlite::Result<bool> {
    let leases = LEASE_SCAN_SQL;
    let ok = scan(conn, leases, found, false, |row, entry| {
        if std::mem::replace(&mut entry.lease, true) {
            return false;
        }
        entry.differs |= lease_columns(row, 1, &mut Vec::new()) != entry.seen.0.lease;
        true
    })?;
    let locks = lock_scan_sql(layout);
    let ok = ok
        && scan(conn, &locks, found, false, |row, entry| {
            if std::mem::replace(&mut entry.lock, true) {
                return false;
            }
            let lock = lock_columns(row, 1, &mut Vec::new());
            entry.differs |= entry.seen.0.lock.as_deref() != Some(&lock);
            true
        })?;
    let attempts = "SELECT instance, attempts, last_error, next_retry_at FROM reap_attempts";
    let ok = ok
        && (!layout.reap_attempts
            || scan(conn, attempts, found, false, |row, entry| {
                if std::mem::replace(&mut entry.attempt, true) {
                    return false;
                }
                entry.differs |= !crate::model::rows::same_attempt_for_the_reaper(
                    entry.seen.1,
                    Some(&attempt_from_row(row, 0)),
                );
                true
            })?);
    // Any pending operation: `Store::recheck` says which.
    let pending = "SELECT instance FROM operations WHERE status IN ('queued', 'running')";
    Ok(ok
        && (!layout.operations
            || scan(conn, pending, found, false, |_, entry| {
                entry.differs = true;
                true
            })?))
}

/// Every row of `sql`, keyed by its column 0, handed to `take` with the
/// entry of the name it matches (rows of other names, and NULL keys, are
/// skipped: the per-name query never pairs them; so are rows of a name
/// whose instance row was not found: its re-check reads it as gone).
/// `instances`: these are the instance rows themselves. `false` as soon as
/// a key is neither text nor NULL, or `take` refuses a row (a key twice).
fn scan(
    conn: &Connection,
    sql: &str,
    found: &mut HashMap<&str, Entry<'_>>,
    instances: bool,
    mut take: impl FnMut(&rusqlite::Row<'_>, &mut Entry<'_>) -> bool,
) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let key = match col(row, 0) {
            ValueRef::Null => continue,
            ValueRef::Text(key) => key,
            _ => return Ok(false),
        };
        let Some(entry) = std::str::from_utf8(key)
            .ok()
            .and_then(|key| found.get_mut(key))
        else {
            continue;
        };
        if !instances && !entry.row {
            continue;
        }
        if !take(row, entry) {
            return Ok(false);
        }
    }
    Ok(true)
}
