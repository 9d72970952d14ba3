//! `stackless-tui demo-helper`: a short-lived helper built on succession, for
//! the supervisor pane to watch. It claims the role [`ROLE`] on behalf of the
//! console run that spawned it ([`ENV_RUN`]), works for about [`LIFETIME`],
//! then exits so the supervisor restarts it with backoff. It leaves at once
//! when the process that spawned it goes away, so no orphan keeps the role.
//!
//! It writes to stderr only when it cannot start (a missing or malformed
//! environment variable, an unclaimable role) or when the role is already
//! taken: a console that runs it under a terminal UI should give it a null
//! or piped stderr.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use succession::{ClaimError, Identity, Record, Role, Run, Tenancy, Tenant};

use crate::supervisor::{COMPAT, ENV_ROLES_DIR, ENV_RUN, ROLE};

/// How long the helper works before exiting on its own.
pub const LIFETIME: Duration = Duration::from_secs(8);

/// How often it checks that its parent is still the process that spawned it.
pub const PARENT_CHECK: Duration = Duration::from_millis(200);

/// Claim the helper role in `roles_dir` for the console run `run`, publishing
/// this process as the tenant (pid, and with sysinfo its start time and
/// image).
///
/// # Errors
/// [`ClaimError::Occupied`] when another live process holds the role;
/// [`ClaimError::Io`] / [`ClaimError::Unpublishable`] on file trouble.
pub fn claim(roles_dir: &Path, run: u64) -> Result<Tenancy, ClaimError> {
    let role = Role::new(roles_dir, ROLE);
    let record = Record::new(Identity::new(Run::from_raw(run), COMPAT), Tenant::current());
    role.claim(&record)
}

/// What [`serve`] ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Worked for the whole lifetime.
    Done,
    /// The process that spawned it went away.
    Orphaned,
}

/// Hold `tenancy` for `lifetime`, checking every [`PARENT_CHECK`] that
/// `parent_alive()` still holds; return as soon as it does not. The tenancy
/// is dropped (the role released) on return.
pub fn serve(
    tenancy: Tenancy,
    lifetime: Duration,
    mut parent_alive: impl FnMut() -> bool,
) -> Ending {
    let _tenancy = tenancy;
    let started = Instant::now();
    loop {
        if !parent_alive() {
            return Ending::Orphaned;
        }
        let elapsed = started.elapsed();
        if elapsed >= lifetime {
            return Ending::Done;
        }
        std::thread::sleep(PARENT_CHECK.min(lifetime.saturating_sub(elapsed)));
    }
}

/// Read [`ENV_RUN`] and [`ENV_ROLES_DIR`] from `get`.
///
/// # Errors
/// The message to print when either is missing or the run is not a decimal
/// `u64`.
pub fn read_env(get: impl Fn(&str) -> Option<String>) -> Result<(u64, PathBuf), String> {
    let run = get(ENV_RUN).ok_or_else(|| {
        format!("{ENV_RUN} is not set: demo-helper is started by the console's supervisor")
    })?;
    let run = run
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("{ENV_RUN}={run:?} is not a decimal u64 run token"))?;
    let roles_dir = get(ENV_ROLES_DIR)
        .filter(|d| !d.is_empty())
        .ok_or_else(|| {
            format!(
                "{ENV_ROLES_DIR} is not set: demo-helper is started by the console's supervisor"
            )
        })?;
    Ok((run, PathBuf::from(roles_dir)))
}

/// `stackless-tui demo-helper`: claim the role for the spawning run, work for
/// [`LIFETIME`] while the parent lives, exit 0. Exit 2 when the environment
/// is missing, 1 when the role cannot be claimed, 0 when it is already held.
#[must_use]
pub fn run() -> ExitCode {
    let parent = std::os::unix::process::parent_id();
    let (run, roles_dir) = match read_env(|key| std::env::var(key).ok()) {
        Ok(found) => found,
        Err(message) => {
            eprintln!("demo-helper: {message}");
            return ExitCode::from(2);
        }
    };
    let tenancy = match claim(&roles_dir, run) {
        Ok(tenancy) => tenancy,
        Err(ClaimError::Occupied) => {
            eprintln!("demo-helper: the {ROLE} role is already held; leaving it be");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            let detail = std::error::Error::source(&error)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            eprintln!(
                "demo-helper: cannot claim the {ROLE} role in {}: {error}{detail}",
                roles_dir.display()
            );
            return ExitCode::from(1);
        }
    };
    serve(tenancy, LIFETIME, || {
        std::os::unix::process::parent_id() == parent
    });
    ExitCode::SUCCESS
}
