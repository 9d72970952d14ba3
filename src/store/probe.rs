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
}

/// A fixed probe for tests and headless checks: a hostname and a table of
/// `pid -> start time`.
#[derive(Debug, Clone, Default)]
pub struct FixedProbe {
    /// What `host_name` answers.
    pub host: Option<String>,
    /// Live processes: pid and start time (unix seconds).
    pub processes: Vec<(u32, u64)>,
}

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
