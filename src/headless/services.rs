//! Each instance's recorded service processes, probed on this machine,
//! for `snapshot --json` ([`BatchedServices`], [`probed`]).

use std::path::PathBuf;

use super::report;

/// Every instance's recorded service processes, probed on this machine
/// (pid plus start time) with their log paths, read a batch of
/// [`BatchedServices::BATCH`] instances at a time as `snapshot --json`
/// writes them, in name order (measured: read whole, 70,000 services at
/// 100,000 instances held 70 MB of checkpoints at once). Each batch is its
/// own read transaction after the snapshot's: the services are probed
/// live, not part of the snapshot; a birth's services are only those
/// recorded under its own namespace (a name torn down and born again while
/// the document is written does not lend the new birth's services to the
/// old row). Read whole, in one batch, where a range of names could miss
/// rows: a store read immutably (checked like the snapshot), names that
/// repeat or were decoded lossily, rows read with anomalies (a hand-made
/// store), or a `checkpoints` table that declares a collation.
pub(super) struct BatchedServices<'a> {
    pub(super) store: &'a mut crate::store::Store,
    instances: &'a [std::sync::Arc<crate::model::Instance>],
    state_dir: PathBuf,
    /// The proxy port origins are on (the controller probe's).
    proxy_port: u16,
    probe: Box<dyn crate::store::probe::HostProbe>,
    /// The rows of the batch read last, by name.
    batch: std::collections::HashMap<String, crate::store::services::ServiceRows>,
    /// The observations of the batch read last (schema 11+), by name: the
    /// input of each service's stage.
    observed: std::collections::HashMap<String, Vec<crate::model::detail::Observation>>,
    /// The index in `instances` after the batch read last.
    next: usize,
    /// The last name of the batch read last.
    last: Option<&'a str>,
    /// Read everything in one batch.
    whole: bool,
}

impl<'a> BatchedServices<'a> {
    const BATCH: usize = 1000;

    pub(super) fn new(
        store: &'a mut crate::store::Store,
        snapshot: &'a crate::model::Snapshot,
    ) -> Self {
        let instances: &[std::sync::Arc<crate::model::Instance>] = &snapshot.instances;
        let whole = store.immutable()
            || store.checkpoints_collate()
            || instances.windows(2).any(|w| w[0].name >= w[1].name)
            || instances
                .iter()
                .any(|i| !i.anomalies.is_empty() || i.name.contains('\u{fffd}'));
        let state_dir = store.state_dir();
        let proxy_port = crate::controller::probe::probe(&state_dir)
            .proxy_port
            .unwrap_or(crate::model::services::DEFAULT_PROXY_PORT);
        Self {
            state_dir,
            proxy_port,
            store,
            instances,
            probe: super::probe::services_probe(),
            batch: std::collections::HashMap::new(),
            observed: std::collections::HashMap::new(),
            next: 0,
            last: None,
            whole,
        }
    }

    /// `instance`'s services, reading the batch that holds it when its name
    /// is past the last one read (instances come in the snapshot's order).
    ///
    /// # Errors
    /// The batch could not be read (the document is then not finished).
    pub(super) fn of(
        &mut self,
        instance: &crate::model::Instance,
    ) -> Result<Vec<report::ServiceReport>, crate::store::StoreError> {
        let (rows, observations) = self.rows_of(instance)?;
        Ok(super::streamed_services(
            instance,
            rows,
            observations,
            (&self.state_dir, self.proxy_port),
            self.probe.as_mut(),
        ))
    }

    /// `instance`'s STAGE cell ([`stage_of`]) of [`BatchedServices::of`]'s
    /// services, each process probed on `probe`.
    ///
    /// # Errors
    /// The batch could not be read.
    pub(super) fn stage_of(
        &mut self,
        instance: &crate::model::Instance,
        probe: &mut dyn crate::store::probe::HostProbe,
    ) -> Result<String, crate::store::StoreError> {
        let (rows, observations) = self.rows_of(instance)?;
        Ok(stage_of(
            instance,
            rows,
            observations,
            &self.state_dir,
            probe,
        ))
    }

    /// `instance`'s service rows and observations, from the batch that
    /// holds it.
    fn rows_of(
        &mut self,
        instance: &crate::model::Instance,
    ) -> Result<
        (
            Option<crate::store::services::ServiceRows>,
            Vec<crate::model::detail::Observation>,
        ),
        crate::store::StoreError,
    > {
        let name = instance.name.as_str();
        while self.next < self.instances.len() && self.last.is_none_or(|last| last < name) {
            self.read_batch()?;
        }
        Ok((
            self.batch.get(name).cloned(),
            self.observed.get(name).cloned().unwrap_or_default(),
        ))
    }

    fn read_batch(&mut self) -> Result<(), crate::store::StoreError> {
        let end = if self.whole {
            self.instances.len()
        } else {
            (self.next + Self::BATCH).min(self.instances.len())
        };
        let range = (!self.whole).then(|| {
            (
                self.instances[self.next].name.as_str(),
                self.instances[end - 1].name.as_str(),
            )
        });
        self.last = Some(self.instances[end - 1].name.as_str());
        if self.whole {
            // Past every name: nothing more to read.
            self.last = None;
        }
        self.next = end;
        self.batch = self.store.service_rows_between(false, range)?;
        self.observed = self.store.observations_between(range)?;
        Ok(())
    }

    /// For a store read immutably: every service read now, before the
    /// file is checked to be the one the snapshot read.
    pub(super) fn read_whole(&mut self) -> Result<(), crate::store::StoreError> {
        if self.whole && self.next == 0 && !self.instances.is_empty() {
            self.read_batch()?;
        }
        Ok(())
    }
}

/// The service rows of `instance`'s own birth: a birth's services are
/// only those recorded under its own namespace. `None` when it has none,
/// or rows of another birth; an instance `observed` with no process
/// recorded (a service another provider runs) gets rows with no
/// checkpoint.
pub(super) fn of_birth(
    instance: &crate::model::Instance,
    rows: Option<crate::store::services::ServiceRows>,
    observed: bool,
) -> Option<crate::store::services::ServiceRows> {
    let namespace = instance
        .birth
        .as_ref()
        .map(crate::model::Birth::resource_namespace);
    let namespace = namespace.as_deref().filter(|ns| !ns.is_empty());
    match rows {
        Some(rows) if namespace.is_some_and(|ns| ns != rows.logs_dir_name) => None,
        Some(rows) => Some(rows),
        None if !observed => None,
        None => Some(crate::store::services::ServiceRows {
            checkpoints: Vec::new(),
            substrate: instance.substrate.to_string(),
            logs_dir_name: namespace.unwrap_or(&instance.name).to_owned(),
        }),
    }
}

/// One instance's service rows probed (pid plus start time), with its
/// last `observations`, their logs under `state_dir`, their origins on
/// `proxy_port`, each service's stage (`tombstoned`: every stage
/// `absent`). The log files are not looked at: the report says where a
/// log is ([`report::ServiceReport`]'s `log_path`, or `logs` for one kept
/// elsewhere), never what is there (measured: three `stat`s a service
/// were a tenth of `snapshot --json`).
pub(super) fn probed(
    rows: crate::store::services::ServiceRows,
    observations: Vec<crate::model::detail::Observation>,
    tombstoned: bool,
    (state_dir, proxy_port): (&std::path::Path, u16),
    probe: &mut dyn crate::store::probe::HostProbe,
) -> Vec<report::ServiceReport> {
    services_of(rows, observations, state_dir, probe)
        .iter()
        .map(|service| report::ServiceReport::new(service, proxy_port, tombstoned))
        .collect()
}

/// One instance's services (`crate::model::services::services`) of its
/// rows and last `observations`, each process probed, its log path under
/// `state_dir` (never looked at): what [`probed`] reports and
/// [`stage_of`] derives the STAGE cell from.
fn services_of(
    rows: crate::store::services::ServiceRows,
    observations: Vec<crate::model::detail::Observation>,
    state_dir: &std::path::Path,
    probe: &mut dyn crate::store::probe::HostProbe,
) -> Vec<crate::model::services::Service> {
    let detail = crate::model::detail::InstanceDetail {
        checkpoints: rows.checkpoints,
        substrate: rows.substrate,
        logs_dir_name: rows.logs_dir_name,
        observations,
        ..crate::model::detail::InstanceDetail::default()
    };
    let logs = crate::store::services::logs_dir(state_dir, &detail.logs_dir_name);
    crate::model::services::services(
        &detail,
        &detail.substrate,
        logs.as_deref(),
        |pid| probe.live_start_time(pid),
        |_| crate::model::services::LogState::Missing,
    )
}

/// One instance's STAGE cell in `snapshot`'s table: [`report::stage_cell`]
/// of each of its services (those `snapshot --json` reports for it,
/// [`of_birth`] and [`services_of`]) with its stage
/// (`crate::model::readiness::service_stage`, as
/// [`report::ServiceReport::new`] derives it); nothing else of the report
/// (origins, ports, log paths) is made. Empty without rows or
/// observations.
pub(super) fn stage_of(
    instance: &crate::model::Instance,
    rows: Option<crate::store::services::ServiceRows>,
    observations: Vec<crate::model::detail::Observation>,
    state_dir: &std::path::Path,
    probe: &mut dyn crate::store::probe::HostProbe,
) -> String {
    let Some(rows) = of_birth(instance, rows, !observations.is_empty()) else {
        return String::new();
    };
    let tombstoned = instance.status == crate::model::Status::Tombstoned;
    let services = services_of(rows, observations, state_dir, probe);
    report::stage_cell(services.iter().map(|service| {
        (
            service.name.as_str(),
            crate::model::readiness::service_stage(service, tombstoned).as_str(),
        )
    }))
}
