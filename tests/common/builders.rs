//! Rows built for tests: one builder per row type, so a field added to a
//! row is added here once, not in each file that makes rows.

use stackless_tui::model::{Birth, Instance, Lease, Status};

use super::CAPTURE;

/// An instance row named `name`: active on `local`, created an hour
/// before [`CAPTURE`], a 1 h lease ending at [`CAPTURE`] + 1800, no lock,
/// no anomalies, not dirty, no birth. Each method sets one thing;
/// [`InstanceBuilder::build`] (or `.into()`) gives the [`Instance`].
pub fn instance(name: &str) -> InstanceBuilder {
    InstanceBuilder(Instance {
        name: name.into(),
        substrate: "local".into(),
        status: Status::Active,
        created_at: Some(CAPTURE - 3_600),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 3_600,
            expires_at: CAPTURE + 1_800,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: Some(false),
        birth: None,
    })
}

/// An [`Instance`] being built ([`instance`]).
#[derive(Debug, Clone)]
#[must_use]
pub struct InstanceBuilder(Instance);

impl InstanceBuilder {
    /// On `substrate`.
    pub fn substrate(mut self, substrate: &str) -> Self {
        self.0.substrate = substrate.into();
        self
    }

    /// With `status`, nothing else changed.
    pub fn status(mut self, status: Status) -> Self {
        self.0.status = status;
        self
    }

    /// Created at unix second `at` (`None`: no integer in the row).
    pub fn created(mut self, at: Option<i64>) -> Self {
        self.0.created_at = at;
        self
    }

    /// Tombstoned at unix second `at`.
    pub fn tombstoned(mut self, at: i64) -> Self {
        self.0.status = Status::Tombstoned;
        self.0.tombstoned_at = Some(at);
        self
    }

    /// A lease of `duration_secs` ending at unix second `expires_at`.
    pub fn lease(mut self, duration_secs: i64, expires_at: i64) -> Self {
        self.0.lease = Some(Lease {
            duration_secs,
            expires_at,
        });
        self
    }

    /// No lease.
    pub fn no_lease(mut self) -> Self {
        self.0.lease = None;
        self
    }

    /// `dirty` as read (`None`: before migration 5).
    pub fn dirty(mut self, dirty: Option<bool>) -> Self {
        self.0.dirty = dirty;
        self
    }

    /// The birth with `instance_id` and the namespace 0.4.0 derives from
    /// it (`sl-<instance_id>`).
    pub fn birth(self, instance_id: &str) -> Self {
        self.with_birth(Some(Birth::new(instance_id, &format!("sl-{instance_id}"))))
    }

    /// `birth` as given (`None`: before migration 7).
    pub fn with_birth(mut self, birth: Option<Birth>) -> Self {
        self.0.birth = birth;
        self
    }

    /// The row.
    #[must_use]
    pub fn build(self) -> Instance {
        self.0
    }
}

impl From<InstanceBuilder> for Instance {
    fn from(builder: InstanceBuilder) -> Self {
        builder.build()
    }
}
