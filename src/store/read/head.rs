//! The first rows of a big store, read before the whole: the console's
//! first frame at a million instances shows the rows its Instances pane
//! opens on (the soonest leases) in well under a second while the whole
//! read goes on. The snapshot carries
//! [`crate::model::Partial`] (how many of how many), so nothing takes it
//! for the whole store: its counts are not totals and every action waits
//! for the whole read (`model::rules::admit`).

use rusqlite::TransactionBehavior;

use super::{
    Substrates, instance_from_row_with, join_sql_with, probe_liveness, read_reap_attempts,
};
use crate::model::{Instances, OperationIndex, Partial, Rows, Snapshot};
use crate::store::probe::HostProbe;
use crate::store::{Store, StoreError};

/// A store file at least this big (bytes) has its first rows read before
/// the whole on the watcher's first read. Measured (BENCHMARKS.md,
/// "The console at 1M"): a 100,000-instance store the real 0.4.0 writes
/// is about 127 MB and reads whole in about 0.2 s, so below this nothing
/// changes; a million is about 1.27 GB and reads whole in about 1.5 s.
pub const HEAD_FROM_BYTES: u64 = 256 * 1024 * 1024;

/// The first rows as the Instances pane opens on them (its default
/// order, `model::SortKey::LeaseExpiry`: the soonest lease first, ties
/// by name): the `?1` soonest leases, each joined to its instance. A
/// top-N scan of `leases` (no index on `expires_at` in stackless 0.4.0's
/// schema): about 0.2 s at a million.
const HEAD_JOIN: &str = "JOIN (SELECT instance AS name, expires_at AS at FROM leases
                ORDER BY expires_at, instance LIMIT ?1) h ON h.name = i.name";

/// How many rows the first read shows: more than any terminal's height,
/// few enough to read in milliseconds.
pub const HEAD_ROWS: usize = 2000;

impl Store {
    /// [`Store::snapshot_head`]'s read, unchecked.
    pub(in crate::store) fn snapshot_head_once(
        &mut self,
        probe: &mut dyn HostProbe,
        limit: usize,
    ) -> Result<Option<Snapshot>, StoreError> {
        let path = &self.path;
        let err = |e: rusqlite::Error| StoreError::sqlite(path, &e);
        let layout = self.layout;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        let total: i64 = tx
            .query_row("SELECT count(*) FROM instances", [], |row| row.get(0))
            .map_err(err)?;
        let total = u64::try_from(total).unwrap_or(0);
        if total <= limit as u64 {
            return Ok(None);
        }
        let mut instances = Vec::with_capacity(limit);
        {
            let sql = join_sql_with(layout, "", HEAD_JOIN, "ORDER BY h.at, h.name");
            let mut stmt = tx.prepare(&sql).map_err(err)?;
            let mut rows = stmt
                .query([i64::try_from(limit).unwrap_or(i64::MAX)])
                .map_err(err)?;
            let mut substrates = Substrates::default();
            while let Some(row) = rows.next().map_err(err)? {
                instances.push(std::sync::Arc::new(instance_from_row_with(
                    row,
                    &mut substrates,
                )));
            }
        }
        let mut reap_attempts = if layout.reap_attempts {
            read_reap_attempts(&tx).map_err(err)?.0
        } else {
            Vec::new()
        };
        let redactor = if layout.secret_history {
            super::super::secrets::redactor(&tx).map_err(err)?
        } else {
            crate::model::redact::Redactor::default()
        };
        super::super::secrets::redact_rows(&redactor, &mut Vec::new(), &mut reap_attempts);
        tx.commit().map_err(err)?;
        if instances.len() < limit {
            // Fewer leases than rows asked for: the rows without one come
            // next in the view, by name; the whole read shows them.
            return Ok(None);
        }
        // Held in name order, as every snapshot's rows are (`Instances`).
        super::sort_by_name(&mut instances, &mut reap_attempts);
        let read = instances.len();
        let rows = Rows {
            generation: self.generation,
            instances: Instances::from_shared(instances),
            reap_attempts,
            operations: Vec::new(),
            operation_index: OperationIndex::default(),
        };
        let liveness = probe_liveness(&rows, probe);
        let mut snapshot = Snapshot::new(rows, liveness);
        snapshot.immutable = self.immutable;
        snapshot.redactor = std::sync::Arc::new(redactor);
        snapshot.partial = Some(Partial { read, total });
        Ok(Some(snapshot))
    }
}
