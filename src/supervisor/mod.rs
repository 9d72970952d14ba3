//! The helper supervisor: a `succession::supervision::Supervisor` for the role
//! `helper` in `<state_dir>/stackless-tui/roles/`, on a thread of its own,
//! reporting succession's events to the render loop.

use succession::Compat;

/// The role the helper claims.
pub const ROLE: &str = "helper";
/// Environment variable carrying this console's `succession::Run` (decimal
/// `u64`) to the helper it spawns, so the helper can claim the role on behalf
/// of this run and check its allegiance.
pub const ENV_RUN: &str = "STACKLESS_TUI_RUN";
/// Environment variable carrying the roles directory to the helper.
pub const ENV_ROLES_DIR: &str = "STACKLESS_TUI_ROLES_DIR";
/// The console/helper protocol fingerprint (succession `Compat`). Bump when
/// the helper protocol changes incompatibly.
pub const COMPAT: Compat = Compat::from_raw(1);

/// `<state_dir>/stackless-tui/roles/`: where succession keeps role files.
#[must_use]
pub fn roles_dir(state_dir: &std::path::Path) -> std::path::PathBuf {
    state_dir.join("stackless-tui").join("roles")
}

pub mod thread;

pub use thread::{HelperConfig, HelperHandle};
