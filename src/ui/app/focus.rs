//! Which pane has the keyboard ([`Focus`]) and the Tab order over one
//! host and over a fleet.

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Focus {
    /// The instances table (top).
    #[default]
    Instances,
    /// The controller's operations (under Instances; only on stores with
    /// an `operations` table, stackless 0.4.0).
    Operations,
    /// The reap backoffs table (middle left).
    Backoffs,
    /// The helper supervisor log (middle right).
    Supervisor,
    /// The activity log (bottom).
    Activity,
    /// The Hosts pane (over a fleet only, `crate::ui::panes::hosts`).
    Hosts,
}

impl Focus {
    /// The next pane in Tab order (Instances → Operations → Backoffs →
    /// Supervisor → Activity → Instances); `operations` false (a store
    /// without the pane) skips Operations.
    #[must_use]
    pub const fn next(self, operations: bool) -> Self {
        match self {
            Self::Instances if operations => Self::Operations,
            Self::Instances | Self::Operations => Self::Backoffs,
            Self::Backoffs => Self::Supervisor,
            Self::Supervisor => Self::Activity,
            Self::Activity | Self::Hosts => Self::Instances,
        }
    }

    /// The previous pane (Shift-Tab); `operations` as for [`Focus::next`].
    #[must_use]
    pub const fn previous(self, operations: bool) -> Self {
        match self {
            Self::Instances => Self::Activity,
            Self::Backoffs if operations => Self::Operations,
            Self::Backoffs | Self::Operations => Self::Instances,
            Self::Supervisor => Self::Backoffs,
            Self::Activity => Self::Supervisor,
            Self::Hosts => Self::Activity,
        }
    }

    /// The next pane over a fleet (`back`: the previous), in Tab order:
    /// Instances → Operations → Backoffs → Activity → Hosts → Instances
    /// (no Supervisor pane over a fleet: each host's agent supervises).
    #[must_use]
    pub const fn next_over_fleet(self, back: bool) -> Self {
        match (self, back) {
            (Self::Hosts, false) | (Self::Operations, true) => Self::Instances,
            (Self::Instances, false) | (Self::Backoffs, true) => Self::Operations,
            (Self::Operations, false) | (Self::Activity | Self::Supervisor, true) => Self::Backoffs,
            (Self::Backoffs | Self::Supervisor, false) | (Self::Hosts, true) => Self::Activity,
            (Self::Activity, false) | (Self::Instances, true) => Self::Hosts,
        }
    }
}
