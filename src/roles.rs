//! The one place that claims this console's succession roles under
//! `<state_dir>/stackless-tui/roles/`: [`CONSOLE_ROLE`] (whoever holds it
//! runs the reaper: one console per store, and `reap --once` takes it for
//! its pass) and [`SUPERVISOR_ROLE`] (whoever holds it supervises the
//! helper). A role is held while its [`succession::Tenancy`] lives.

use std::path::Path;

use succession::{ClaimError, Identity, Occupancy, Record, Role, Run, Tenant};

use crate::nofollow::file_identity;
use crate::stop::StopToken;

/// The role a console (or `reap --once`) claims to run the reaper.
pub const CONSOLE_ROLE: &str = "console";
/// The role a console claims to supervise the helper.
pub const SUPERVISOR_ROLE: &str = "helper-supervisor";

/// This process's claim record: a fresh run id and this process as tenant.
#[must_use]
pub fn record() -> Record {
    Record::new(
        Identity::new(Run::mint(), crate::supervisor::COMPAT),
        Tenant::current(),
    )
}

/// Why a role could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Another live process holds it (its pid when its record says).
    Occupied(Option<u32>),
    /// The role files could not be read or written (the text says why).
    Error(String),
}

/// Who holds the role `name` under `roles_dir`, seen by a process that
/// never takes it (a console whose reaper is off, read-only, a dry run):
/// nothing is created, no symbolic link or second name followed.
/// `Ok(None)`: nobody; `Ok(Some(pid))`: a process (its pid when its record
/// says).
///
/// # Errors
/// The role files could not be read (a planted link, permissions).
pub fn observe(roles_dir: &Path, name: &'static str) -> Result<Option<Option<u32>>, String> {
    let role = Role::new(roles_dir, name);
    let lock = role.lock_path();
    match std::fs::symlink_metadata(lock) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot read the {name} role: {error}")),
        Ok(_) => {}
    }
    let refused = |error: std::io::Error| format!("cannot read the {name} role: {error}");
    for path in [roles_dir, lock, role.record_path()] {
        crate::nofollow::not_a_symlink(path).map_err(refused)?;
    }
    for file in [lock, role.record_path()] {
        crate::nofollow::not_hard_linked(file, |links| {
            format!("{} has {links} hard links: refused", file.display())
        })
        .map_err(refused)?;
    }
    match role.occupancy() {
        Ok(Occupancy::Free) => Ok(None),
        Ok(Occupancy::HeldBy(holder)) => Ok(Some(Some(holder.tenant.pid))),
        Ok(Occupancy::HeldAnonymously) => Ok(Some(None)),
        Err(error) => Err(refused(error)),
    }
}

/// Which holder of a role this process last reported (a standby is
/// reported once per holder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Holder {
    /// None yet, or the role was since taken or failed: the next holder
    /// is reported.
    #[default]
    Unreported,
    /// Another process, with its pid when its record says.
    Reported(Option<u32>),
}

/// One role this process wants, and whether it holds it.
#[derive(Debug)]
pub struct Wanted {
    role: Role,
    /// The role's name ([`CONSOLE_ROLE`] or [`SUPERVISOR_ROLE`]).
    pub name: &'static str,
    held: Option<succession::Tenancy>,
    /// `(device, inode)` of the lock file when it was taken.
    lock_file: Option<(u64, u64)>,
    /// Cancels what this role started (the reaper), if the role is lost.
    pub part: Option<StopToken>,
    /// The holder last reported, so a standby is reported once per holder.
    pub last_holder: Holder,
    /// The error last reported, so it is reported once until it changes.
    pub last_error: Option<String>,
}

impl Wanted {
    /// The role `name` in `roles_dir`, not yet claimed.
    #[must_use]
    pub fn new(roles_dir: &Path, name: &'static str) -> Self {
        Self {
            role: Role::new(roles_dir, name),
            name,
            held: None,
            lock_file: None,
            part: None,
            last_error: None,
            last_holder: Holder::Unreported,
        }
    }

    /// Try to take the role. `Ok(true)` when it was just taken, `Ok(false)`
    /// when it was already held by this process.
    ///
    /// # Errors
    /// [`Refused`]: another process holds it, or the role files failed.
    pub fn try_take(&mut self, record: &Record) -> Result<bool, Refused> {
        if self.held.is_some() {
            return Ok(false);
        }
        self.refuse_links().map_err(|error| {
            Refused::Error(format!("cannot take the {} role: {error}", self.name))
        })?;
        match self.role.claim(record) {
            Ok(tenancy) => {
                self.held = Some(tenancy);
                self.lock_file = file_identity(self.role.lock_path());
                Ok(true)
            }
            Err(ClaimError::Occupied) => Err(Refused::Occupied(match self.role.occupancy() {
                Ok(Occupancy::HeldBy(holder)) => Some(holder.tenant.pid),
                _ => None,
            })),
            Err(error) => Err(Refused::Error(format!(
                "cannot take the {} role: {error}",
                self.name
            ))),
        }
    }

    /// Give the role up when held (`P` pauses the reaper, or the
    /// controller's lease reaper reaps): what it started is cancelled
    /// (the reaper thread; teardowns already running finish on their own
    /// threads) and the lock is released. `true` when it was held.
    pub fn give_up(&mut self) -> bool {
        if self.held.is_none() {
            return false;
        }
        if let Some(part) = self.part.take() {
            part.cancel();
        }
        self.held = None;
        self.lock_file = None;
        self.last_holder = Holder::Unreported;
        true
    }

    /// Whether this process holds the role.
    #[must_use]
    pub const fn is_held(&self) -> bool {
        self.held.is_some()
    }

    /// Who holds the role when this process does not: `Ok(None)` when
    /// nobody does, `Ok(Some(pid))` for another process (its pid when its
    /// record says).
    ///
    /// # Errors
    /// The role files could not be read (the text says why).
    pub fn holder(&self) -> Result<Option<Option<u32>>, String> {
        if self.held.is_some() {
            return Ok(Some(Some(std::process::id())));
        }
        self.refuse_links()
            .map_err(|error| format!("cannot read the {} role: {error}", self.name))?;
        match self.role.occupancy() {
            Ok(Occupancy::Free) => Ok(None),
            Ok(Occupancy::HeldBy(holder)) => Ok(Some(Some(holder.tenant.pid))),
            Ok(Occupancy::HeldAnonymously) => Ok(Some(None)),
            Err(error) => Err(format!("cannot read the {} role: {error}", self.name)),
        }
    }

    /// The roles directory (and the `stackless-tui` directory holding it)
    /// must be real directories and the role's lock and claim files must
    /// not be symbolic links nor have a second name: succession opens the lock file with
    /// `O_CREAT`, which would follow a planted link and create or lock its
    /// target. The directory is created here if missing.
    fn refuse_links(&self) -> std::io::Result<()> {
        let lock = self.role.lock_path();
        if let Some(dir) = lock.parent() {
            if let Some(parent) = dir.parent() {
                crate::nofollow::not_a_symlink(parent)?;
            }
            crate::nofollow::real_dir(dir)?;
        }
        crate::nofollow::not_a_symlink(lock)?;
        crate::nofollow::not_a_symlink(self.role.record_path())?;
        // succession opens the lock file and, when the role is occupied,
        // closes it again: a second name of the store planted there would
        // drop this process's locks on the store (`store::files`).
        for file in [lock, self.role.record_path()] {
            crate::nofollow::not_hard_linked(file, |links| {
                format!(
                    "{} has {links} hard links: refused (remove it; the console creates a plain file there)",
                    file.display()
                )
            })?;
        }
        Ok(())
    }

    /// Whether a held role's lock file was deleted or replaced (its
    /// directory removed and restored): the lock no longer excludes anyone,
    /// so the role is given up, what it started is cancelled, and it is
    /// taken again (a new lock file) on the next [`Wanted::try_take`].
    pub fn lost(&mut self) -> bool {
        if self.held.is_none() || file_identity(self.role.lock_path()) == self.lock_file {
            return false;
        }
        self.held = None;
        self.lock_file = None;
        if let Some(part) = self.part.take() {
            part.cancel();
        }
        true
    }
}
