//! This machine's processes read once for a whole `snapshot`'s services
//! ([`ProcessTable`]).

use std::collections::HashMap;

/// One process as [`ProcessTable`] keeps it: its start time (unix
/// seconds) and whether it is a zombie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    /// `sysinfo::Process::start_time`.
    pub start_time: u64,
    /// Exited, not yet waited for by its parent (counts as gone to
    /// [`crate::store::probe::HostProbe::live_start_time`]).
    pub zombie: bool,
}

/// A [`crate::store::probe::HostProbe`] over this machine's process
/// table, read by `read` once, at the first question, and answered from
/// it for the rest of the read: one `sysinfo` refresh of every process
/// (and task: `sysinfo`'s per-pid refresh answers for a thread id too)
/// for a snapshot's services, not a probe per service (a `kill(pid, 0)`
/// each and a `/proc` read for each pid that exists: 70,000 services at
/// 100,000 instances). The answers are the per-pid probe's
/// ([`crate::store::probe::SysinfoProbe`]: start time, a zombie gone) as
/// of one instant.
pub struct ProcessTable<F> {
    host: Option<String>,
    read: F,
    processes: Option<HashMap<u32, Process>>,
}

impl<F: FnMut() -> HashMap<u32, Process>> ProcessTable<F> {
    /// A table of this `host` (`sysinfo::System::host_name()`), read by
    /// `read` when first asked.
    pub const fn new(host: Option<String>, read: F) -> Self {
        Self {
            host,
            read,
            processes: None,
        }
    }

    /// `pid`'s process, the table read on the first call.
    fn process(&mut self, pid: u32) -> Option<Process> {
        let read = &mut self.read;
        self.processes.get_or_insert_with(read).get(&pid).copied()
    }
}

impl<F: FnMut() -> HashMap<u32, Process>> crate::store::probe::HostProbe for ProcessTable<F> {
    fn host_name(&self) -> Option<&str> {
        self.host.as_deref()
    }

    fn start_time(&mut self, pid: u32) -> Option<u64> {
        self.process(pid).map(|p| p.start_time)
    }

    fn live_start_time(&mut self, pid: u32) -> Option<u64> {
        self.process(pid)
            .filter(|p| !p.zombie)
            .map(|p| p.start_time)
    }
}

/// Every process and task on this machine, by pid, as one `sysinfo`
/// refresh reads them (start time and status only).
#[must_use]
pub fn read_processes() -> HashMap<u32, Process> {
    use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System};
    let mut system = System::new();
    system.refresh_processes_specifics(ProcessesToUpdate::All, true, ProcessRefreshKind::nothing());
    system
        .processes()
        .iter()
        .map(|(pid, process)| {
            (
                pid.as_u32(),
                Process {
                    start_time: process.start_time(),
                    zombie: process.status() == sysinfo::ProcessStatus::Zombie,
                },
            )
        })
        .collect()
}

/// The probe of a `snapshot`'s services: [`ProcessTable`] of
/// [`read_processes`], this machine's hostname.
#[must_use]
pub fn services_probe() -> Box<dyn crate::store::probe::HostProbe + Send> {
    Box::new(ProcessTable::new(
        sysinfo::System::host_name(),
        read_processes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::probe::HostProbe as _;

    /// The table is read once, at the first question, however many are
    /// asked; a zombie is gone to `live_start_time` and not to
    /// `start_time`; a pid not in the table is gone.
    #[test]
    fn the_process_table_is_read_once_for_every_question() {
        let mut reads = 0;
        let mut table = ProcessTable::new(Some("vm".to_owned()), || {
            reads += 1;
            HashMap::from([
                (
                    10,
                    Process {
                        start_time: 1_700_000_000,
                        zombie: false,
                    },
                ),
                (
                    11,
                    Process {
                        start_time: 1_700_000_005,
                        zombie: true,
                    },
                ),
            ])
        });
        assert_eq!(table.host_name(), Some("vm"));
        let answers = [
            table.live_start_time(10),
            table.live_start_time(11),
            table.start_time(11),
            table.live_start_time(12),
            table.live_start_time(10),
        ];
        assert_eq!(
            answers,
            [
                Some(1_700_000_000),
                None,
                Some(1_700_000_005),
                None,
                Some(1_700_000_000)
            ]
        );
        drop(table);
        assert_eq!(reads, 1);
    }

    /// This process, read from the real table, is alive with the start
    /// time the per-pid probe gives it.
    #[test]
    fn the_real_table_answers_as_the_per_pid_probe() {
        let pid = std::process::id();
        let mut table = ProcessTable::new(None, read_processes);
        let mut per_pid = crate::store::probe::SysinfoProbe::new();
        let expected = per_pid.live_start_time(pid);
        assert!(expected.is_some());
        assert_eq!(table.live_start_time(pid), expected);
        assert_eq!(table.live_start_time(u32::MAX), None);
    }
}
