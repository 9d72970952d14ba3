//! The one place the console asks the operating system about processes for
//! lock liveness: `sysinfo`, exactly as stackless reads it (stackless §2:
//! `System::host_name()`, `Process::start_time()`).

use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

/// Answers the two questions lock liveness asks.
pub trait HostProbe {
    /// This machine's hostname, as `sysinfo::System::host_name()` reports it.
    fn host_name(&self) -> Option<&str>;
    /// Start time (unix seconds) of the live process `pid`, or `None`.
    fn start_time(&mut self, pid: u32) -> Option<u64>;

    /// As [`HostProbe::start_time`], but a zombie (exited, not yet waited
    /// for by its parent: a `kill -9`ed service whose parent has not reaped
    /// it) counts as gone, as stackless decides a process alive
    /// (core-0.4.0 src/process.rs `start_time_of`, behind both
    /// `ProcessStamp::is_alive` for lock holders and the service probe).
    /// For lock holders (§2) and service processes.
    fn live_start_time(&mut self, pid: u32) -> Option<u64> {
        self.start_time(pid)
    }
}

/// The real probe, backed by `sysinfo`.
#[derive(Debug)]
pub struct SysinfoProbe {
    host: Option<String>,
    system: System,
}

impl SysinfoProbe {
    /// Read the hostname once; processes are refreshed per query.
    #[must_use]
    pub fn new() -> Self {
        Self {
            host: System::host_name(),
            system: System::new(),
        }
    }
}

impl Default for SysinfoProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl HostProbe for SysinfoProbe {
    fn host_name(&self) -> Option<&str> {
        self.host.as_deref()
    }

    fn start_time(&mut self, pid: u32) -> Option<u64> {
        let pid = Pid::from_u32(pid);
        self.system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing(),
        );
        self.system.process(pid).map(sysinfo::Process::start_time)
    }

    fn live_start_time(&mut self, pid: u32) -> Option<u64> {
        let pid = Pid::from_u32(pid);
        self.system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing(),
        );
        self.system
            .process(pid)
            .filter(|p| p.status() != sysinfo::ProcessStatus::Zombie)
            .map(sysinfo::Process::start_time)
    }
}

/// A fixed probe for tests and benches: a hostname and a table of
/// `pid -> start time`. Compiled only for dev targets (the `bench-support`
/// feature, which the self dev-dependency turns on), never in a release.
#[cfg(any(test, feature = "bench-support"))]
#[derive(Debug, Clone, Default)]
pub struct FixedProbe {
    /// What `host_name` answers.
    pub host: Option<String>,
    /// Live processes: pid and start time (unix seconds).
    pub processes: Vec<(u32, u64)>,
}

#[cfg(any(test, feature = "bench-support"))]
impl HostProbe for FixedProbe {
    fn host_name(&self) -> Option<&str> {
        self.host.as_deref()
    }

    fn start_time(&mut self, pid: u32) -> Option<u64> {
        self.processes
            .iter()
            .find(|(p, _)| *p == pid)
            .map(|(_, start)| *start)
    }
}

/// A probe that asks the kernel first whether the pid exists at all
/// (`kill(pid, 0)`, one cheap syscall) and answers "no such process"
/// itself when it does not; only pids that exist reach the wrapped probe
/// (sysinfo opens and reads several `/proc` files per pid). Most locks left
/// behind at scale name dead holders, and re-probing them every second
/// through sysinfo was nearly all of the console's idle CPU (250 local
/// locks: about 1 % of a core), and 100 ms of every 100,000-instance
/// snapshot. The watcher, the reaper and `reap --once` all probe through
/// this (see [`checked_sysinfo`]).
#[derive(Debug)]
pub struct CheckedProbe<P> {
    inner: P,
}

impl<P> CheckedProbe<P> {
    /// Wrap a probe (`&mut SysinfoProbe`, `Box<SysinfoProbe>`, ...).
    pub const fn new(inner: P) -> Self {
        Self { inner }
    }
}

impl<P> HostProbe for CheckedProbe<P>
where
    P: std::ops::DerefMut,
    P::Target: HostProbe,
{
    fn host_name(&self) -> Option<&str> {
        self.inner.host_name()
    }

    fn start_time(&mut self, pid: u32) -> Option<u64> {
        if !may_exist(pid) {
            return None;
        }
        self.inner.start_time(pid)
    }

    fn live_start_time(&mut self, pid: u32) -> Option<u64> {
        if !may_exist(pid) {
            return None;
        }
        self.inner.live_start_time(pid)
    }
}

/// False only when the kernel says there is no process (or thread) with
/// this id (`ESRCH`); a pid that exists but belongs to another user
/// (`EPERM`) or does not fit a `pid_t` is left to the wrapped probe.
fn may_exist(pid: u32) -> bool {
    match i32::try_from(pid) {
        Ok(raw) if raw > 0 => !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
            Err(nix::errno::Errno::ESRCH)
        ),
        _ => true,
    }
}

/// The probe every path that acts uses: [`SysinfoProbe`] behind
/// [`CheckedProbe`] (`kill(pid, 0)` first: a dead pid costs microseconds,
/// not a `/proc` walk).
#[must_use]
pub fn checked_sysinfo() -> Box<dyn HostProbe + Send> {
    Box::new(CheckedProbe::new(Box::new(SysinfoProbe::new())))
}
