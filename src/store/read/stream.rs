//! A snapshot streamed in name order: the same rows as
//! [`Store::snapshot`](crate::store::Store::snapshot), each instance handed
//! out as `SQLite` reads it (the SQL join ordered by name, walked through
//! the `instances` primary key: `SQLite` orders, no sort here) with its
//! lock holder's liveness and its process checkpoints, so a reader that
//! writes each one as it comes (`snapshot --json`) holds one instance at a
//! time, not the store.
//!
//! Only where the order and the pairing are exactly the whole read's
//! (whose rows are sorted by their decoded names and matched to one
//! liveness per name): every name valid UTF-8 text, one row per name in
//! `instances`, `leases` and `op_locks` (a unique index on the name, and
//! keys that are text in a table that is not STRICT), no table declaring a
//! collation, a store not read immutably (that read is checked against
//! the file afterwards, and read again when it changed). Anything else is
//! declined before a row is handed out, and the caller reads whole.
//! stackless's own stores are never declined.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, TransactionBehavior};

use super::{Layout, Store, StoreError, Substrates, col, instance_from_row_with, join_sql};
use crate::model::detail::Observation;
use crate::model::liveness::{LockLiveness, liveness};
use crate::model::{Instance, Rows, Snapshot};
use crate::store::lenient::{lenient_int, lenient_text};
use crate::store::probe::HostProbe;
use crate::store::services::ServiceRows;

/// What reads the stream: the snapshot's head (every row but the
/// instances: operations, reap attempts, the redactor, the generation)
/// once, then each instance in name order.
pub trait StreamReader {
    /// Why the reader stopped the stream (a write failed).
    type Error;

    /// How many times the instances are handed out, in the same read and
    /// order, each lock holder's liveness as probed the first time: a
    /// reader that must see every row before it writes one (the table's
    /// column widths) asks for more than one. One by default.
    fn passes(&self) -> usize {
        1
    }

    /// Whether pass `pass` wants only the tombstones (status
    /// `tombstoned`: the rest of the rows are not read in it). No by
    /// default.
    fn only_tombstones(&self, pass: usize) -> bool {
        let _ = pass;
        false
    }

    /// Whether each instance's process checkpoints are read (they are by
    /// default; a reader that shows no services reads none).
    fn wants_services(&self) -> bool {
        true
    }

    /// Whether pass `pass` reads each instance's process checkpoints and
    /// observations (a reader that keeps what the first pass derived from
    /// them reads them once: the table's STAGE). [`Self::wants_services`]
    /// by default.
    fn services_in(&self, pass: usize) -> bool {
        let _ = pass;
        self.wants_services()
    }

    /// The head, before any instance: `head` has no instances and no
    /// liveness.
    ///
    /// # Errors
    /// The reader's own: the stream stops.
    fn head(&mut self, head: &Snapshot) -> Result<(), Self::Error>;

    /// One instance of the pass `pass` (from 0); `head`'s liveness holds
    /// this instance's lock holder's (and no other), `services` its
    /// process checkpoints (`start:<service>` of kind `process`, by step)
    /// when it has any and they are wanted, `observations` its services'
    /// last observations (schema 11+, by node; empty when not wanted).
    ///
    /// # Errors
    /// The reader's own: the stream stops.
    fn instance(
        &mut self,
        pass: usize,
        head: &Snapshot,
        instance: &Instance,
        services: Option<ServiceRows>,
        observations: Vec<Observation>,
    ) -> Result<(), Self::Error>;

    /// After the last instance, with the same head.
    ///
    /// # Errors
    /// The reader's own.
    fn finish(&mut self, head: &Snapshot) -> Result<(), Self::Error>;
}

/// Why a stream stopped.
#[derive(Debug)]
pub enum StreamStop<E> {
    /// The store failed.
    Store(StoreError),
    /// The reader stopped it.
    Reader(E),
}

/// The query of the process checkpoints, in the order the stream's names
/// come (the `checkpoints` primary key), columns as [`next_checkpoint`]
/// reads them.
const CHECKPOINTS_SQL: &str = "SELECT instance, step_id, resource_kind, resource_id, payload, \
     recorded_at FROM checkpoints
     WHERE resource_kind = 'process' AND step_id LIKE 'start:%'
     ORDER BY instance, step_id";

/// The query of the services' last observations (schema 11+), in the
/// order the stream's names come, columns as [`next_observation`] reads
/// them (as [`Store::observations_between`] reads them).
const OBSERVATIONS_SQL: &str = "SELECT i.name, o.node, o.evidence_json, o.observed_at
     FROM observations o JOIN instances i ON i.instance_id = o.owner_id
     ORDER BY i.name, o.node";

impl Store {
    /// Stream the snapshot to `reader` in one read transaction: the head,
    /// then each instance in name order (module doc). When `wall` is given
    /// (unix seconds, the clock the reaper column is judged by), the
    /// stream also declines where the store's newest write could be
    /// evidence against it (`crate::model::clock_evidence`: the exact
    /// evidence, with the row it is in, needs the whole read).
    ///
    /// `Ok(false)`: declined, nothing was handed out; read whole.
    ///
    /// # Errors
    /// `SQLite` errors (then the reader may have had part of the stream),
    /// or the reader's.
    pub fn stream_snapshot<R: StreamReader>(
        &mut self,
        probe: &mut dyn HostProbe,
        wall: Option<i64>,
        reader: &mut R,
    ) -> Result<bool, StreamStop<R::Error>> {
        if self.immutable {
            return Ok(false);
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() == 0) {
            return Err(StreamStop::Store(StoreError::Empty(self.path.clone())));
        }
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StreamStop::Store(StoreError::sqlite(&path, &e));
        let layout = self.layout;
        let generation = self.generation;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        if !streamable(&tx).map_err(err)? {
            return Ok(false);
        }
        let (mut head, attempt_keys_text) =
            read_head(&tx, layout, &mut self.queue, generation).map_err(err)?;
        if let Some(wall) = wall
            && !newest_write_within(&tx, &head, wall).map_err(err)?
        {
            return Ok(false);
        }
        reader.head(&head).map_err(StreamStop::Reader)?;
        let mut probed = Probed {
            probe,
            host: None,
            first: LockLiveness::new(),
        };
        probed.host = probed.probe.host_name().map(str::to_owned);
        for pass in 0..reader.passes().max(1) {
            stream_rows(&tx, (&path, layout), pass, &mut probed, &mut head, reader)?;
        }
        // What a dry run's re-checks may take from this read, as from the
        // whole read's (`Store::begin_read_of`): its rows paired as each
        // re-check pairs them (the stream's own checks, no collation, every
        // reap attempt keyed by text and once).
        let attempts = &head.rows.reap_attempts;
        let paired = attempt_keys_text
            && !super::collates(&tx).map_err(err)?
            && attempts.windows(2).all(|w| w[0].instance != w[1].instance);
        let version = if paired {
            Some(super::version(&tx).map_err(err)?)
        } else {
            None
        };
        tx.commit().map_err(err)?;
        self.snapshot_version = version.map(|version| {
            let pending = head
                .rows
                .pending_operations()
                .iter()
                .map(|op| op.instance.clone())
                .collect();
            (version, pending)
        });
        reader.finish(&head).map_err(StreamStop::Reader)?;
        Ok(true)
    }
}

impl Store {
    /// How many rows `instances` has (`count(*)`, read through its
    /// smallest index).
    ///
    /// # Errors
    /// `SQLite` errors.
    pub fn instance_count(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT count(*) FROM instances", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| StoreError::sqlite(&self.path, &e))
    }
}

/// Every check of the module doc that the schema and the names answer.
fn streamable(conn: &Connection) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare(
        "SELECT name, sql FROM sqlite_master
         WHERE type = 'table' AND name IN ('instances', 'leases', 'op_locks', 'checkpoints')",
    )?;
    let mut rows = stmt.query([])?;
    let mut tables = Vec::new();
    while let Some(row) = rows.next()? {
        let name = lenient_text(col(row, 0)).unwrap_or_default();
        let sql = lenient_text(col(row, 1))
            .unwrap_or_default()
            .to_ascii_lowercase();
        if sql.contains("collate") {
            return Ok(false);
        }
        tables.push((name, sql.trim_end().ends_with("strict")));
    }
    drop(rows);
    for (table, strict) in &tables {
        let key = match table.as_str() {
            "instances" => "name",
            "checkpoints" => "instance",
            _ => {
                if !unique_on(conn, table, "instance")? {
                    return Ok(false);
                }
                "instance"
            }
        };
        if !strict && !keys_are_text(conn, table, key)? {
            return Ok(false);
        }
    }
    if !tables.iter().any(|(t, _)| t == "instances") || !unique_on(conn, "instances", "name")? {
        return Ok(false);
    }
    // Every name valid UTF-8 text (the name index alone is read).
    let mut stmt = conn.prepare("SELECT name FROM instances")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        match col(row, 0) {
            ValueRef::Text(name) if std::str::from_utf8(name).is_ok() => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// Whether `table` has a unique index on `column` alone.
fn unique_on(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    let found: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_index_list(?1) AS il
         WHERE il.\"unique\" = 1
           AND (SELECT count(*) FROM pragma_index_info(il.name)) = 1
           AND (SELECT name FROM pragma_index_info(il.name)) = ?2",
        [table, column],
        |row| row.get(0),
    )?;
    Ok(found > 0)
}

/// Whether every `key` of `table` is text (a table that is not STRICT may
/// hold other types, which SQL's `=` would pair by its affinity rules).
fn keys_are_text(conn: &Connection, table: &str, key: &str) -> rusqlite::Result<bool> {
    let other: Option<i64> = conn
        .query_row(
            &format!("SELECT 1 FROM \"{table}\" WHERE typeof(\"{key}\") != 'text' LIMIT 1"),
            [],
            |row| row.get(0),
        )
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    Ok(other.is_none())
}

/// Every row of the snapshot but the instances, read and redacted as
/// [`Store::snapshot`] reads them; and whether every reap attempt is keyed
/// by text.
fn read_head(
    tx: &Connection,
    layout: Layout,
    queue: &mut crate::store::operations::QueueMemory,
    generation: crate::model::Generation,
) -> rusqlite::Result<(Snapshot, bool)> {
    let (mut reap_attempts, attempt_keys_text) = if layout.reap_attempts {
        super::read_reap_attempts(tx)?
    } else {
        (Vec::new(), true)
    };
    let mut operations = if layout.operations {
        crate::store::operations::read_operations(tx, layout, queue)?
    } else {
        Vec::new()
    };
    let redactor = if layout.secret_history {
        crate::store::secrets::redactor(tx)?
    } else {
        crate::model::redact::Redactor::default()
    };
    crate::store::secrets::redact_rows(&redactor, &mut operations, &mut reap_attempts);
    super::sort_by_name(&mut [], &mut reap_attempts);
    let rows = Rows {
        generation,
        instances: crate::model::Instances::default(),
        reap_attempts,
        operations,
        operation_index: crate::model::OperationIndex::default(),
    };
    let _ = rows.pending_operations();
    let mut head = Snapshot::new(rows, LockLiveness::new());
    head.redactor = std::sync::Arc::new(redactor);
    Ok((head, attempt_keys_text))
}

/// Whether no write time in the store is far enough ahead of `wall` to
/// doubt it (`crate::model::clock_evidence::behind`): the newest
/// `created_at`, `tombstoned_at` and lock `acquired_at` of the tables
/// (every lock row: at least the rows the whole read pairs) and the
/// operations read. `false` also when one of them is not an integer
/// (the whole read reads it leniently).
fn newest_write_within(tx: &Connection, head: &Snapshot, wall: i64) -> rusqlite::Result<bool> {
    let int = |value: ValueRef<'_>| match value {
        ValueRef::Integer(i) => Some(Some(i)),
        ValueRef::Null => Some(None),
        _ => None,
    };
    let mut newest = crate::model::clock_evidence::newest_write(&head.rows).map(|n| n.at);
    let mut offer = |at: Option<Option<i64>>| -> bool {
        match at {
            Some(at) => {
                newest = newest.max(at);
                true
            }
            None => false,
        }
    };
    let (created, tombstoned) = tx.query_row(
        "SELECT max(created_at), max(tombstoned_at) FROM instances",
        [],
        |row| Ok((int(col(row, 0)), int(col(row, 1)))),
    )?;
    if !offer(created) || !offer(tombstoned) {
        return Ok(false);
    }
    let acquired = tx.query_row("SELECT max(acquired_at) FROM op_locks", [], |row| {
        Ok(int(col(row, 0)))
    })?;
    if !offer(acquired) {
        return Ok(false);
    }
    Ok(newest.is_none_or(|at| {
        crate::model::clock_evidence::behind(
            wall,
            &crate::model::clock_evidence::NewestWrite {
                at,
                what: String::new(),
            },
        )
        .is_none()
    }))
}

/// The lock holders' probe, with this host's name and the liveness each
/// holder had when first probed (a later pass reads the same).
struct Probed<'p> {
    probe: &'p mut dyn HostProbe,
    host: Option<String>,
    first: LockLiveness,
}

/// The instances in name order, each with its liveness (in `head`) and
/// process checkpoints (when wanted), to `reader`, as its pass `pass`.
fn stream_rows<R: StreamReader>(
    tx: &Connection,
    (path, layout): (&std::path::Path, Layout),
    pass: usize,
    probed: &mut Probed<'_>,
    head: &mut Snapshot,
    reader: &mut R,
) -> Result<(), StreamStop<R::Error>> {
    let err = |e: rusqlite::Error| StreamStop::Store(StoreError::sqlite(path, &e));
    let (mut checkpoints_stmt, mut observations_stmt) = if reader.services_in(pass) {
        services_statements(tx).map_err(err)?
    } else {
        (None, None)
    };
    let mut checkpoints = match &mut checkpoints_stmt {
        Some(stmt) => Some(stmt.query([]).map_err(err)?),
        None => None,
    };
    let mut observations = match &mut observations_stmt {
        Some(stmt) => Some(stmt.query([]).map_err(err)?),
        None => None,
    };
    let mut checkpoint_ahead = Ahead::default();
    let mut observation_ahead = Ahead::default();
    let tail = if reader.only_tombstones(pass) {
        "WHERE i.status = 'tombstoned' ORDER BY i.name"
    } else {
        "ORDER BY i.name"
    };
    let mut stmt = tx.prepare_cached(&join_sql(layout, tail)).map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    let mut substrates = Substrates::default();
    while let Some(row) = rows.next().map_err(err)? {
        let instance = instance_from_row_with(row, &mut substrates);
        let name = instance.name.as_bytes();
        let found = match &mut checkpoints {
            Some(cursor) => checkpoint_ahead
                .take_for(name, || next_checkpoint(cursor))
                .map_err(err)?,
            None => Vec::new(),
        };
        let observed = match &mut observations {
            Some(cursor) => observation_ahead
                .take_for(name, || next_observation(cursor))
                .map_err(err)?,
            None => Vec::new(),
        };
        let services = (!found.is_empty()).then(|| ServiceRows {
            checkpoints: found,
            substrate: lenient_text(col(row, 1)).unwrap_or_default(),
            logs_dir_name: lenient_text(col(row, 17))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| instance.name.clone()),
        });
        let live = head.liveness_mut();
        live.clear();
        if let Some(lock) = &instance.lock {
            let l = match probed.first.get(&instance.name) {
                Some(first) => first.clone(),
                None => {
                    let probe = &mut *probed.probe;
                    let l = liveness(lock, probed.host.as_deref(), |pid| {
                        probe.live_start_time(pid)
                    });
                    if reader.passes() > 1 {
                        probed.first.insert(instance.name.clone(), l.clone());
                    }
                    l
                }
            };
            live.insert(instance.name.clone(), l);
        }
        reader
            .instance(pass, head, &instance, services, observed)
            .map_err(StreamStop::Reader)?;
    }
    Ok(())
}

/// The next process checkpoint of [`CHECKPOINTS_SQL`]: its instance key
/// (the bytes of text; another type sorts before every text, so it pairs
/// with no streamed name) and the checkpoint, read as
/// [`Store::service_rows`] reads it.
pub(super) fn next_checkpoint(
    rows: &mut rusqlite::Rows<'_>,
) -> rusqlite::Result<Option<(Vec<u8>, crate::model::detail::Checkpoint)>> {
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let key = match col(row, 0) {
        ValueRef::Text(key) => key.to_vec(),
        _ => Vec::new(),
    };
    let text = |i| lenient_text(col(row, i)).unwrap_or_default();
    Ok(Some((
        key,
        crate::model::detail::Checkpoint {
            step_id: text(1),
            resource_kind: text(2),
            resource_id: text(3),
            payload: text(4),
            recorded_at: lenient_int(col(row, 5)),
        },
    )))
}

/// The statements of the process checkpoints (none without a
/// `checkpoints` table) and of the last observations (none before schema
/// 11: the query does not prepare, and there is nothing observed; none
/// when the table has no row: its query walks every instance in name
/// order to look each one's observations up, a tenth of the services'
/// read at 100,000 instances with nothing observed).
pub(super) fn services_statements(
    tx: &Connection,
) -> rusqlite::Result<(
    Option<rusqlite::CachedStatement<'_>>,
    Option<rusqlite::CachedStatement<'_>>,
)> {
    let has_checkpoints: i64 = tx.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'",
        [],
        |row| row.get(0),
    )?;
    let checkpoints = if has_checkpoints > 0 {
        Some(tx.prepare_cached(CHECKPOINTS_SQL)?)
    } else {
        None
    };
    let observed = tx
        .query_row("SELECT EXISTS (SELECT 1 FROM observations)", [], |row| {
            row.get::<_, i64>(0)
        })
        .is_ok_and(|any| any != 0);
    let observations = if observed {
        tx.prepare_cached(OBSERVATIONS_SQL).ok()
    } else {
        None
    };
    Ok((checkpoints, observations))
}

/// A cursor's row read ahead of the stream's names: its key (the bytes of
/// a name) and its value. Rows come in the names' byte order, so each
/// name takes the rows of its key and skips those before it.
pub(super) struct Ahead<T> {
    started: bool,
    row: Option<(Vec<u8>, T)>,
}

impl<T> Default for Ahead<T> {
    fn default() -> Self {
        Self {
            started: false,
            row: None,
        }
    }
}

impl<T> Ahead<T> {
    /// The values keyed `name`, read from `next` (rows keyed before
    /// `name` are skipped: they pair with no streamed name).
    pub(super) fn take_for(
        &mut self,
        name: &[u8],
        mut next: impl FnMut() -> rusqlite::Result<Option<(Vec<u8>, T)>>,
    ) -> rusqlite::Result<Vec<T>> {
        let mut found = Vec::new();
        if !self.started {
            self.row = next()?;
            self.started = true;
        }
        loop {
            match &self.row {
                Some((key, _)) if key.as_slice() < name => {}
                Some((key, _)) if key.as_slice() == name => {
                    if let Some((_, value)) = self.row.take() {
                        found.push(value);
                    }
                }
                _ => return Ok(found),
            }
            self.row = next()?;
        }
    }
}

/// The next observation of [`OBSERVATIONS_SQL`]: its instance's name (the
/// bytes of text; another type pairs with no streamed name) and the
/// observation, parsed as [`Store::observations_between`] parses it.
pub(super) fn next_observation(
    rows: &mut rusqlite::Rows<'_>,
) -> rusqlite::Result<Option<(Vec<u8>, Observation)>> {
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let key = match col(row, 0) {
        ValueRef::Text(key) => key.to_vec(),
        _ => Vec::new(),
    };
    let text = |i| lenient_text(col(row, i)).unwrap_or_default();
    Ok(Some((
        key,
        Observation::parse(text(1), &text(2), lenient_int(col(row, 3))),
    )))
}
