//! Operation-lock liveness, decided exactly as stackless decides it (§2):
//! a holder is alive when it runs on this host and a process with its pid
//! exists whose start time equals the recorded one; a holder on another host
//! cannot be probed and counts as held.

use std::fmt;

use super::rows::OpLock;

/// Probed liveness of every locked instance, keyed by instance name.
pub type LockLiveness = std::collections::HashMap<String, Liveness>;

/// Which case applies to a lock holder.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Liveness {
    /// Same host, the pid exists and started when the lock says: held.
    Alive,
    /// Same host, no live process with that pid (none, or a zombie: exited
    /// and not yet waited for, which stackless 0.4.0 counts as gone too):
    /// the lock is stale.
    StalePidGone,
    /// Same host, the pid exists but started at another time (the pid was
    /// recycled): the lock is stale.
    StalePidReused,
    /// The holder ran on another host (named here): it cannot be probed, so
    /// the lock counts as held. The reaper never takes over a foreign holder.
    ForeignHost(String),
}

impl Liveness {
    /// Whether the lock blocks the reaper and the write keys (§6 step 2).
    #[must_use]
    pub const fn held(&self) -> bool {
        matches!(self, Self::Alive | Self::ForeignHost(_))
    }
}

impl fmt::Display for Liveness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Alive => f.write_str("alive"),
            Self::StalePidGone => f.write_str("stale: pid gone"),
            Self::StalePidReused => f.write_str("stale: pid reused"),
            Self::ForeignHost(_) => f.write_str("foreign host"),
        }
    }
}

/// Decide a holder's liveness.
///
/// - `this_host`: this machine's hostname as `sysinfo::System::host_name()`
///   reports it (`None` when it cannot be read: every holder is then treated
///   as foreign, which is the safe side: held).
/// - `probe(pid)`: the start time (unix seconds, `sysinfo`'s
///   `Process::start_time()`) of the live process with that pid, or `None`
///   when there is none.
///
/// A store older than migration 4 has no `holder_host` (`None`): every
/// stackless of that age ran locks on the local machine only, so the holder is
/// probed as local. A pid outside `1..=u32::MAX` cannot name a process and
/// reads as gone.
#[must_use]
pub fn liveness(
    lock: &OpLock,
    this_host: Option<&str>,
    probe: impl FnOnce(u32) -> Option<u64>,
) -> Liveness {
    if let Some(host) = &lock.holder_host
        && this_host != Some(host.as_str())
    {
        return Liveness::ForeignHost(host.clone());
    }
    let Ok(pid) = u32::try_from(lock.holder_pid) else {
        return Liveness::StalePidGone;
    };
    if pid == 0 {
        return Liveness::StalePidGone;
    }
    match probe(pid) {
        None => Liveness::StalePidGone,
        Some(started) if i64::try_from(started).ok() == Some(lock.holder_start_time) => {
            Liveness::Alive
        }
        Some(_) => Liveness::StalePidReused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(pid: i64, start: i64, host: Option<&str>) -> OpLock {
        OpLock {
            operation: "up".into(),
            holder_pid: pid,
            holder_start_time: start,
            acquired_at: 0,
            holder_host: host.map(str::to_owned),
            claim_id: None,
        }
    }

    #[test]
    fn same_host_same_start_is_alive() {
        let l = lock(4242, 100, Some("vm"));
        assert_eq!(liveness(&l, Some("vm"), |_| Some(100)), Liveness::Alive);
        assert!(Liveness::Alive.held());
    }

    #[test]
    fn same_host_no_process_is_stale_gone() {
        let l = lock(4242, 100, Some("vm"));
        let got = liveness(&l, Some("vm"), |_| None);
        assert_eq!(got, Liveness::StalePidGone);
        assert!(!got.held());
        assert_eq!(got.to_string(), "stale: pid gone");
    }

    #[test]
    fn recycled_pid_is_stale_reused() {
        let l = lock(4242, 100, Some("vm"));
        let got = liveness(&l, Some("vm"), |_| Some(101));
        assert_eq!(got, Liveness::StalePidReused);
        assert_eq!(got.to_string(), "stale: pid reused");
    }

    #[test]
    fn other_host_is_held_without_probing() {
        let l = lock(4242, 100, Some("host-b"));
        let got = liveness(&l, Some("host-a"), |_| panic!("must not probe"));
        assert_eq!(got, Liveness::ForeignHost("host-b".into()));
        assert!(got.held());
        assert_eq!(got.to_string(), "foreign host");
    }

    #[test]
    fn unknown_own_hostname_is_treated_as_foreign() {
        let l = lock(4242, 100, Some("vm"));
        assert!(liveness(&l, None, |_| Some(100)).held());
    }

    #[test]
    fn pre_v4_lock_without_host_is_probed_locally() {
        let l = lock(4242, 100, None);
        assert_eq!(liveness(&l, Some("vm"), |_| Some(100)), Liveness::Alive);
        assert_eq!(liveness(&l, Some("vm"), |_| None), Liveness::StalePidGone);
    }

    #[test]
    fn out_of_range_pids_are_gone() {
        for pid in [-1, 0, i64::MAX, i64::from(u32::MAX) + 1] {
            let l = lock(pid, 100, Some("vm"));
            assert_eq!(
                liveness(&l, Some("vm"), |_| Some(100)),
                Liveness::StalePidGone,
                "pid {pid}"
            );
        }
    }

    #[test]
    fn negative_start_time_never_matches() {
        let l = lock(4242, -5, Some("vm"));
        assert_eq!(
            liveness(&l, Some("vm"), |_| Some(u64::MAX)),
            Liveness::StalePidReused
        );
    }
}
