//! The stackless controller (0.4.0; the daemon of 0.2/0.3) serving a
//! store, as probed beside it under `<state_dir>` (docs/stackless-releases.md,
//! "Files under `<state_dir>`"). Pure data.

/// What the console knows of the controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ControllerState {
    /// The pid holding `controller.lock` (an flock, found in `/proc/locks`);
    /// `None` when no controller runs (or it cannot be seen).
    pub pid: Option<u32>,
    /// stackless's own persistence warning when leases are enforced only
    /// while the controller happens to run: `leases enforced only while the
    /// daemon happens to be running: <daemon.persistence>`.
    pub persistence_warning: Option<String>,
    /// The port stackless's proxy serves origins on
    /// ([`crate::model::services::proxy_port`]: the controller's
    /// `--proxy-port`, else `STACKLESS_PROXY_PORT`, else 4444); `None`
    /// before the first probe.
    pub proxy_port: Option<u16>,
}
