//! The services of a snapshot read whole, walked beside its instances in
//! name order ([`Store::walk_services`]): what `snapshot`'s STAGE column
//! needs, one instance at a time.

use std::sync::Arc;

use rusqlite::TransactionBehavior;

use super::stream::{Ahead, next_checkpoint, next_observation, services_statements};
use super::{Store, StoreError};
use crate::model::Instance;
use crate::model::detail::Observation;
use crate::store::StreamStop;
use crate::store::services::ServiceRows;

/// What [`Store::walk_services`] hands each instance to: the instance,
/// its service rows (`None`: no process checkpoint) and its services'
/// last observations (empty: none).
pub(crate) type EachServices<'a, E> =
    dyn FnMut(&Instance, Option<ServiceRows>, Vec<Observation>) -> Result<(), E> + 'a;

impl Store {
    /// Each of `instances` (this store's last snapshot's, in its order)
    /// handed to `each` with its process checkpoints (`start:<service>` of
    /// kind `process`, by step) as [`ServiceRows`] (its substrate and logs
    /// directory as the snapshot read them: the birth's
    /// `resource_namespace` when not empty, else the name) and its
    /// services' last observations (schema 11+, by node): the rows [`Store::service_rows_between`] and
    /// [`Store::observations_between`] read, but in one read transaction
    /// after the snapshot's, by the stream's two cursors in name order
    /// (the `checkpoints` primary key: nothing joined, sorted or hashed),
    /// so one instance's services are held at a time.
    ///
    /// `Ok(false)`: declined before any instance was handed out, where a
    /// walk in byte order could pair rows otherwise than those reads: a
    /// store read immutably, names not strictly increasing in byte order
    /// or decoded lossily, an instance read with anomalies or with no
    /// birth (before schema 7, or a hand-made row: its logs directory is
    /// the join's), a `checkpoints` table that declares a collation; and
    /// anything committed since the snapshot was read (`PRAGMA
    /// data_version` and `total_changes()` as it saw them, or a snapshot
    /// whose rows were not paired as the re-checks pair them): each
    /// checkpoint is keyed by name only, and the join reads which birth
    /// the name is now (a name torn down and born again since lends the
    /// new birth's services to no row of the old one).
    ///
    /// # Errors
    /// `SQLite` errors (then `each` may have had part of the walk), or
    /// `each`'s.
    pub fn walk_services<E>(
        &mut self,
        instances: &[Arc<Instance>],
        each: &mut EachServices<'_, E>,
    ) -> Result<bool, StreamStop<E>> {
        if self.immutable || !walkable(instances) || self.checkpoints_collate() {
            return Ok(false);
        }
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StreamStop::Store(StoreError::sqlite(&path, &e));
        let read = self.snapshot_version.as_ref().map(|(read, _)| *read);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        if read.is_none() || super::version(&tx).ok() != read {
            return Ok(false);
        }
        {
            let (mut checkpoints_stmt, mut observations_stmt) =
                services_statements(&tx).map_err(err)?;
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
            for instance in instances {
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
                let rows = (!found.is_empty()).then(|| service_rows(instance, found));
                each(instance, rows, observed).map_err(StreamStop::Reader)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(true)
    }
}

/// Whether [`Store::walk_services`] pairs `instances` with their rows as
/// the join by name does (its doc).
fn walkable(instances: &[Arc<Instance>]) -> bool {
    instances
        .windows(2)
        .all(|w| w[0].name.as_bytes() < w[1].name.as_bytes())
        && instances
            .iter()
            .all(|i| i.anomalies.is_empty() && i.birth.is_some() && !i.name.contains('\u{fffd}'))
}

/// `instance`'s service rows of its `checkpoints`, with the substrate and
/// logs directory [`Store::service_rows_between`] reads from its row.
fn service_rows(
    instance: &Instance,
    checkpoints: Vec<crate::model::detail::Checkpoint>,
) -> ServiceRows {
    let namespace = instance
        .birth
        .as_ref()
        .map(crate::model::Birth::resource_namespace);
    let namespace = namespace.as_deref().filter(|ns| !ns.is_empty());
    ServiceRows {
        checkpoints,
        substrate: instance.substrate.to_string(),
        logs_dir_name: namespace.unwrap_or(&instance.name).to_owned(),
    }
}
