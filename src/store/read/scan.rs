//! The fast path of a snapshot's instances: three plain table scans
//! (`instances`, `leases`, `op_locks`, in rowid order, no index seeks)
//! joined here by name, each row kept from the file's last read when it
//! did not change ([`crate::store::row_reuse`]: one copy of the rows at
//! 100,000 instances, not two).

use std::sync::Arc;

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use super::{
    LEASE_SCAN_SQL, Substrates, col, instance_columns, instance_extras, lease_columns, lenient_int,
    lock_columns, lock_scan_sql, note_created_at,
};
use crate::model::Instance;
use crate::store::Layout;
use crate::store::row_reuse::{Candidates, Previous, RowPlace};

/// The instances read, in name order, and each one's place (empty: no
/// places known).
type Scanned = (Vec<Arc<Instance>>, Vec<RowPlace>);

/// The same rows as [`super::join_instances`], read as three plain table scans
/// (rowid order, no index seeks), sorted by name here and joined through a
/// hash of the names; with each row's place (rowid, position) for the next
/// read. A row that has not changed since `previous` (the file's last read,
/// [`crate::store::row_reuse`]) is that read's row, shared, not a copy. `None`
/// when the result could differ from the SQL join, which then runs
/// instead: a table declares a collation (`=` would not be byte equality),
/// a name is not valid UTF-8 text (lossy decoding could merge two), a join
/// key is neither text nor NULL (SQL's type rules would apply), or a name,
/// lease or lock appears twice (the join would repeat the instance).
/// stackless's own stores never hit any of these.
pub(super) fn scan_instances(
    conn: &Connection,
    layout: Layout,
    previous: Option<&Previous>,
) -> rusqlite::Result<Option<Scanned>> {
    let mut rowids = true;
    {
        let mut stmt = conn.prepare_cached(
            "SELECT name, sql FROM sqlite_master
             WHERE type = 'table' AND name IN ('instances', 'leases', 'op_locks')",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            if let ValueRef::Text(sql) = col(row, 1) {
                if sql.windows(7).any(|w| w.eq_ignore_ascii_case(b"collate")) {
                    return Ok(None);
                }
                if col(row, 0) == ValueRef::Text(b"instances")
                    && sql.windows(5).any(|w| w.eq_ignore_ascii_case(b"rowid"))
                {
                    // `WITHOUT ROWID` (no `rowid` to select), or a column
                    // named `rowid` (it would shadow the real one): no hint.
                    rowids = false;
                }
            }
        }
    }
    let Some((mut instances, places)) = scan_instance_table(conn, layout, previous, rowids)? else {
        return Ok(None);
    };
    if instances.windows(2).any(|w| w[0].name == w[1].name) {
        return Ok(None);
    }
    // Lease and lock rows are matched through a hash of the positions (a
    // binary search per row costs a cache miss per step at 100,000
    // instances) and applied in place: a shared row is copied only if its
    // lease or lock changed.
    let hasher = NameHash::new();
    let hash = |name: &[u8]| {
        use std::hash::BuildHasher as _;
        hasher.hash_one(name)
    };
    let mut positions: hashbrown::HashTable<u32> =
        hashbrown::HashTable::with_capacity(instances.len());
    for (index, instance) in instances.iter().enumerate() {
        let Ok(index) = u32::try_from(index) else {
            return Ok(None);
        };
        positions.insert_unique(hash(instance.name.as_bytes()), index, |&i| {
            hash(instances[i as usize].name.as_bytes())
        });
    }
    let mut keyed = Keyed {
        instances: &mut instances,
        positions: &positions,
        hash: &hash,
    };
    let leases = keyed.scan(
        conn,
        LEASE_SCAN_SQL,
        lease_columns,
        |instance, lease| instance.lease == *lease,
        |instance, lease| instance.lease = lease.flatten(),
        |instance| instance.lease.is_some(),
    )?;
    let sql = lock_scan_sql(layout);
    let locks = keyed.scan(
        conn,
        &sql,
        lock_columns,
        |instance, lock| instance.lock.as_deref() == Some(lock),
        |instance, lock| instance.lock = lock.map(Box::new),
        |instance| instance.lock.is_some(),
    )?;
    if leases.is_none() || locks.is_none() {
        return Ok(None);
    }
    for instance in &mut instances {
        if instance.created_at.is_none() {
            note_created_at(Arc::make_mut(instance));
        }
    }
    Ok(Some((instances, places)))
}

/// The `instances` table in rowid order, each row the previous read's
/// when unchanged, then sorted by name; with the rows' places. `None` when a
/// name is not valid UTF-8 text.
fn scan_instance_table(
    conn: &Connection,
    layout: Layout,
    previous: Option<&Previous>,
    rowids: bool,
) -> rusqlite::Result<Option<Scanned>> {
    // Sized up front: growing a vector of 100,000 rows by doubling would
    // hold two copies at once (the count comes from the small name index).
    let count: i64 = conn
        .prepare_cached("SELECT count(*) FROM instances")?
        .query_row([], |r| r.get(0))?;
    let count = usize::try_from(count).unwrap_or(0);
    let mut scanned: Vec<Option<Arc<Instance>>> = Vec::with_capacity(count);
    // `None` once a rowid does not fit a `u32` (no places then).
    let mut scanned_rowids: Option<Vec<u32>> = rowids.then(|| Vec::with_capacity(count));
    let mut candidates = previous.map(Candidates::new);
    let mut substrates = Substrates::default();
    let sql = instance_scan_sql(layout, rowids);
    // Each row's position in the earlier read while every row so far is
    // the same name at the same rowid (then the name order is the earlier
    // one, and no sort is needed).
    let mut earlier: Option<Vec<u32>> = candidates.as_ref().map(|_| Vec::with_capacity(count));
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let ValueRef::Text(raw) = col(row, 0) else {
            return Ok(None);
        };
        let Ok(name) = std::str::from_utf8(raw) else {
            return Ok(None);
        };
        let rowid = lenient_int(col(row, 8));
        let candidate = rowid
            .zip(candidates.as_mut())
            .and_then(|(rowid, candidates)| candidates.at(rowid))
            .filter(|(_, old)| old.name.as_bytes() == raw);
        match (&mut earlier, candidate) {
            (Some(positions), Some((position, _))) => positions.push(position),
            (Some(_), None) => earlier = None,
            _ => {}
        }
        let kept = candidate
            .map(|(_, old)| old)
            .filter(|old| unchanged(row, old));
        let instance = match kept {
            Some(old) => Arc::clone(old),
            None => {
                let mut instance =
                    instance_columns(row, name.to_owned(), Vec::new(), &mut substrates);
                instance_extras(row, 5, &mut instance);
                Arc::new(instance)
            }
        };
        scanned.push(Some(instance));
        if let Some(list) = &mut scanned_rowids {
            match rowid.and_then(|r| u32::try_from(r).ok()) {
                Some(rowid) => list.push(rowid),
                None => scanned_rowids = None,
            }
        }
    }
    let order = match earlier {
        // The same names at the same rowids as the earlier read: its order.
        Some(positions)
            if candidates
                .as_ref()
                .is_some_and(|c| c.len() == positions.len()) =>
        {
            earlier_order(&positions).unwrap_or_else(|| name_order(&scanned))
        }
        _ => name_order(&scanned),
    };
    let places = scanned_rowids.map_or_else(Vec::new, |rowids| places_of(&order, &rowids));
    // Sized up front: collected from a `filter_map` it would grow by
    // doubling (a copy of the slots held twice, and up to twice the slots
    // kept: at a million rows 1,048,576).
    let mut instances = Vec::with_capacity(order.len());
    instances.extend(order.iter().filter_map(|&at| scanned[at as usize].take()));
    Ok(Some((instances, places)))
}

/// The `instances` scan's query: `name, substrate, status, created_at,
/// tombstoned_at`, then `dirty`, `instance_id`, `resource_namespace` and
/// `rowid` (columns 5 to 8), each `NULL` where the layout (or, for `rowid`,
/// the table) has none.
fn instance_scan_sql(layout: Layout, rowids: bool) -> String {
    let pick = |present: bool, column: &'static str| if present { column } else { "NULL" };
    format!(
        "SELECT name, substrate, status, created_at, tombstoned_at, {}, {}, {}, {}
         FROM instances",
        pick(layout.dirty, "dirty"),
        pick(layout.birth, "instance_id"),
        pick(layout.birth, "resource_namespace"),
        pick(rowids, "rowid"),
    )
}

/// Each row's place for the next read, sorted by rowid: `(rowid, position
/// in name order)`, from the rows' scan `order` (indices into the scan,
/// by name) and their `rowids` (in scan order).
fn places_of(order: &[u32], rowids: &[u32]) -> Vec<RowPlace> {
    let mut places = vec![(0, 0); order.len()];
    for (position, &at) in order.iter().enumerate() {
        places[at as usize] = (rowids[at as usize], position as u32);
    }
    if !places.is_sorted_by_key(|&(rowid, _)| rowid) {
        places.sort_unstable_by_key(|&(rowid, _)| rowid);
    }
    places
}

/// Whether the `instances` row at hand (the columns of
/// [`scan_instance_table`]) is exactly `old`, as read last time: the same
/// name (compared by the caller), substrate, status, times, `dirty` and
/// birth, each of the type stackless writes, and `old` read without
/// anomalies (which a lease or a lock could have added). Allocates nothing.
fn unchanged(row: &rusqlite::Row<'_>, old: &Instance) -> bool {
    let text = |index: usize, value: &str| col(row, index) == ValueRef::Text(value.as_bytes());
    let int = |index: usize, value: Option<i64>| match col(row, index) {
        ValueRef::Integer(i) => value == Some(i),
        ValueRef::Null => value.is_none(),
        _ => false,
    };
    let birth = match (&old.birth, col(row, 6)) {
        (None, ValueRef::Null) => true,
        (Some(birth), ValueRef::Text(id)) => {
            id == birth.instance_id().as_bytes() && text(7, &birth.resource_namespace())
        }
        _ => false,
    };
    old.anomalies.is_empty()
        && text(1, &old.substrate)
        && text(2, old.status.as_str())
        && int(3, old.created_at)
        && old.created_at.is_some()
        && int(4, old.tombstoned_at)
        && lenient_int(col(row, 5)).map(|d| d != 0) == old.dirty
        && birth
}

/// The scan order of the rows whose positions in the earlier read are
/// `positions` (one per row, in scan order): its inverse, when `positions`
/// is a permutation of `0..len`; `None` otherwise (then the rows are
/// sorted afresh: nothing is trusted that would drop or repeat a row).
fn earlier_order(positions: &[u32]) -> Option<Vec<u32>> {
    const UNSET: u32 = u32::MAX;
    let mut order = vec![UNSET; positions.len()];
    for (at, &position) in positions.iter().enumerate() {
        let slot = order.get_mut(position as usize)?;
        if *slot != UNSET {
            return None;
        }
        *slot = u32::try_from(at).ok()?;
    }
    Some(order)
}

/// The positions of `rows` in name order (byte order), without comparing
/// whole names throughout: order a compact key (the name's first 12
/// bytes, the position in the low 32 bits: 16 B a row, sorted in place),
/// then each run of rows whose first 12 bytes tie by the whole name.
fn name_order(rows: &[Option<Arc<Instance>>]) -> Vec<u32> {
    const PREFIX: usize = 12;
    fn key(name: &str, at: u32) -> u128 {
        let mut bytes = [0u8; 16];
        let n = name.len().min(PREFIX);
        bytes[..n].copy_from_slice(&name.as_bytes()[..n]);
        // Zero padding keeps byte order: a name sorts before its extensions.
        (u128::from_be_bytes(bytes) & !u128::from(u32::MAX)) | u128::from(at)
    }
    let name = |at: u32| rows[at as usize].as_deref().map_or("", |i| i.name.as_str());
    let mut keyed: Vec<u128> = (0..rows.len())
        .filter_map(|at| u32::try_from(at).ok())
        .map(|at| key(name(at), at))
        .collect();
    keyed.sort_unstable();
    let prefix = |k: u128| k >> 32;
    let mut start = 0;
    while start < keyed.len() {
        let tie = prefix(keyed[start]);
        let mut end = start + 1;
        while end < keyed.len() && prefix(keyed[end]) == tie {
            end += 1;
        }
        if end - start > 1 {
            // Ties on 12 bytes: by the whole name, then scan order (the
            // low bits, already ascending within the run).
            keyed[start..end].sort_by(|&a, &b| name(a as u32).cmp(name(b as u32)));
        }
        start = end;
    }
    // The low 32 bits are the position.
    keyed.into_iter().map(|k| k as u32).collect()
}

/// The instances being read, and where each name is, for the lease and
/// lock scans.
struct Keyed<'a, H: Fn(&[u8]) -> u64> {
    instances: &'a mut Vec<Arc<Instance>>,
    positions: &'a hashbrown::HashTable<u32>,
    hash: &'a H,
}

impl<H: Fn(&[u8]) -> u64> Keyed<'_, H> {
    /// Rows of a table keyed by instance name (column 0), matched to their
    /// instance through the positions, each read by `read` from column 1 on
    /// and put on its instance by `put` where `same` says it differs (a
    /// shared row is copied first); an instance no row names gets `put(None)`
    /// if `has` says it holds one. Rows naming no instance are skipped (the
    /// join would drop them). `Ok(None)` when the fast path cannot be
    /// trusted: a key that is neither text nor NULL, or two rows for one
    /// instance.
    fn scan<T>(
        &mut self,
        conn: &Connection,
        sql: &str,
        read: fn(&rusqlite::Row<'_>, usize, &mut Vec<String>) -> T,
        same: impl Fn(&Instance, &T) -> bool,
        put: impl Fn(&mut Instance, Option<T>),
        has: impl Fn(&Instance) -> bool,
    ) -> rusqlite::Result<Option<()>> {
        let mut seen = vec![false; self.instances.len()];
        let mut stmt = conn.prepare_cached(sql)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let key = match col(row, 0) {
                ValueRef::Null => continue,
                ValueRef::Text(key) => key,
                _ => return Ok(None),
            };
            let instances = &*self.instances;
            let Some(&index) = self.positions.find((self.hash)(key), |&i| {
                instances[i as usize].name.as_bytes() == key
            }) else {
                continue;
            };
            let index = index as usize;
            if std::mem::replace(&mut seen[index], true) {
                return Ok(None);
            }
            let mut notes = Vec::new();
            let value = read(row, 1, &mut notes);
            let instance = &mut self.instances[index];
            if !same(instance, &value) {
                put(Arc::make_mut(instance), Some(value));
            }
            if !notes.is_empty() {
                Arc::make_mut(instance).anomalies.extend(notes);
            }
        }
        for (instance, seen) in self.instances.iter_mut().zip(seen) {
            if !seen && has(instance) {
                put(Arc::make_mut(instance), None);
            }
        }
        Ok(Some(()))
    }
}

/// A fast hash for instance names (multiply-rotate over 8-byte words, as
/// rustc's `FxHash`), seeded per process so that a crafted store cannot
/// aim collisions at it. `SipHash` cost a sixth of a 100,000-row snapshot.
#[derive(Clone, Copy)]
struct NameHash(u64);

impl NameHash {
    fn new() -> Self {
        use std::hash::BuildHasher as _;
        Self(std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64))
    }
}

impl std::hash::BuildHasher for NameHash {
    type Hasher = NameHasher;
    fn build_hasher(&self) -> NameHasher {
        NameHasher(self.0)
    }
}

struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.write(&n.to_le_bytes());
    }

    fn finish(&self) -> u64 {
        // Fold the high bits down: hashbrown takes its bucket from the low
        // bits and its tag from the top seven.
        self.0 ^ (self.0 >> 29)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    #[test]
    fn the_name_order_is_byte_order_with_ties_past_the_compact_key() {
        // Ties on the first 12 bytes, a name that extends another, an
        // empty name, multi-byte text, a name twice (scan order kept).
        let names = [
            "preview-pr-00012",
            "preview-pr-0001",
            "preview-pr-",
            "",
            "b",
            "preview-pr-00012",
            "preview-pr-0001\u{e9}",
            "preview-pq",
            "a\0b",
            "a",
        ];
        let rows: Vec<Option<Arc<crate::model::Instance>>> = names
            .iter()
            .map(|name| {
                Some(Arc::new(crate::model::Instance {
                    name: (*name).to_owned(),
                    substrate: "local".into(),
                    status: crate::model::Status::Active,
                    created_at: Some(0),
                    tombstoned_at: None,
                    lease: None,
                    lock: None,
                    anomalies: Default::default(),
                    dirty: None,
                    birth: None,
                }))
            })
            .collect();
        let mut expected: Vec<u32> = (0..10).collect();
        expected.sort_by(|&a, &b| names[a as usize].cmp(names[b as usize]));
        assert_eq!(super::name_order(&rows), expected);
        assert_eq!(expected, [3, 9, 8, 4, 7, 2, 1, 0, 5, 6]);
    }

    #[test]
    fn the_earlier_order_is_used_only_when_it_is_a_permutation() {
        assert_eq!(super::earlier_order(&[2, 0, 1]), Some(vec![1, 2, 0]));
        assert_eq!(super::earlier_order(&[0, 1, 1]), None, "a position twice");
        assert_eq!(super::earlier_order(&[0, 3, 1]), None, "past the end");
        assert_eq!(super::earlier_order(&[]), Some(vec![]));
    }
}
