//! The controller serving a store, seen from the files beside it under
//! `<state_dir>` (docs/stackless-releases.md, "Controller/daemon on disk"):
//! - `controller.lock` (0.4.0 only): an empty file the controller holds with
//!   an exclusive `flock` for its whole life (core-0.4.0/src/lockfile.rs:32-58;
//!   daemon-0.4.0/src/server.rs:86-93). It holds no pid: the holder is found
//!   in `/proc/locks` by the file's device and inode. The lock is never
//!   taken here: a controller starting at that moment would fail.
//! - `daemon.persistence`: one line written at each Operator start,
//!   `registered` or why boot persistence failed (daemon-0.4.0/src/launchd.rs:66-82,
//!   273-282). Anything else is stackless's own warning that leases are
//!   enforced only while the daemon happens to run.
//!
//! Files are opened without following symlinks (`O_NOFOLLOW`) or blocking
//! on a FIFO (`O_NONBLOCK`), only regular files are read, and reads are
//! capped. Cheap enough for the watcher to call every second.

use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use crate::model::controller::ControllerState;

/// The most read from `daemon.persistence` (bytes).
pub const PERSISTENCE_CAP: u64 = 1024;
/// The most read from `/proc/locks` (bytes): thousands of lock lines.
pub const PROC_LOCKS_CAP: u64 = 4 * 1024 * 1024;
/// The prefix of stackless's persistence warning
/// (daemon-0.4.0/src/launchd.rs:273-282).
pub const PERSISTENCE_PREFIX: &str =
    "leases enforced only while the daemon happens to be running: ";

/// The most read from a controller's `/proc/<pid>/cmdline` (bytes).
pub const CMDLINE_CAP: u64 = 64 * 1024;

/// Probe the controller serving the store in `state_dir` once, with no
/// memory of an earlier probe (`snapshot`, `reap --once`): see
/// [`ControllerProbe::probe`].
#[must_use]
pub fn probe(state_dir: &Path) -> ControllerState {
    ControllerProbe::default().probe(state_dir)
}

/// Probes the controller again and again (the store watcher every second,
/// the role thread every half second), asking whether it runs a lease
/// reaper only when a new controller pid is seen.
#[derive(Debug, Default)]
pub struct ControllerProbe {
    /// The controller pid last asked about, its answer, and when.
    asked: Option<(u32, Option<bool>, std::time::Instant)>,
}

/// How long a controller that did not answer (one starting: it holds
/// `controller.lock` before it serves `daemon.sock`) waits to be asked
/// again.
pub const ASK_AGAIN: std::time::Duration = std::time::Duration::from_secs(5);

impl ControllerProbe {
    /// The controller serving the store in `state_dir`: the pid holding
    /// `controller.lock` (0.4.0, from `/proc/locks`), else the daemon
    /// answering on `daemon.sock` (0.2/0.3, its peer credentials; `None`
    /// when neither, or this is not Linux); whether it runs a lease reaper
    /// (`crate::controller::lease_reaper`, asked once per pid); and the
    /// persistence warning; and the proxy port (that pid's `--proxy-port`,
    /// else this process's `STACKLESS_PROXY_PORT`, else 4444:
    /// [`crate::model::services::proxy_port`]). Never fails: what cannot
    /// be read is not known.
    pub fn probe(&mut self, state_dir: &Path) -> ControllerState {
        let socket = super::lease_reaper::socket_path(state_dir);
        let locked = lock_holder(&state_dir.join("controller.lock"));
        let pid = locked.or_else(|| super::lease_reaper::socket_peer(&socket));
        let cmdline = pid.and_then(cmdline).unwrap_or_default();
        let lease_reaper = pid.and_then(|pid| match self.asked {
            Some((asked, answer, at))
                if asked == pid && (answer.is_some() || at.elapsed() < ASK_AGAIN) =>
            {
                answer
            }
            _ => {
                let answer = locked
                    .and_then(|_| super::lease_reaper::ask(&socket))
                    .or_else(|| super::lease_reaper::lease_reaper_in_args(&cmdline));
                self.asked = Some((pid, answer, std::time::Instant::now()));
                answer
            }
        });
        ControllerState {
            pid,
            lease_reaper,
            persistence_warning: persistence_warning(&state_dir.join("daemon.persistence")),
            proxy_port: Some(crate::model::services::proxy_port(
                crate::model::services::proxy_port_flag(&cmdline),
                std::env::var("STACKLESS_PROXY_PORT").ok().as_deref(),
            )),
        }
    }
}

/// `/proc/<pid>/cmdline` split on NUL (lossy UTF-8, at most
/// [`CMDLINE_CAP`] bytes); `None` when it cannot be read.
fn cmdline(pid: u32) -> Option<Vec<String>> {
    let file = std::fs::File::open(format!("/proc/{pid}/cmdline")).ok()?;
    let text = read_capped(file, CMDLINE_CAP)?;
    Some(
        text.split('\0')
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// Open a regular file for reading without following a symlink or
/// blocking; `None` for anything else.
fn open_regular(path: &Path) -> Option<(std::fs::File, std::fs::Metadata)> {
    // Never a file with a second name: it could be the store, whose locks
    // a close here would drop (`store::files`).
    crate::nofollow::not_hard_linked(path, |_| String::new()).ok()?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    meta.is_file().then_some((file, meta))
}

fn read_capped(file: std::fs::File, cap: u64) -> Option<String> {
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The pid holding an flock on `lock_file`, from `/proc/locks`. The file
/// is only `lstat`ed (its device and inode are all `/proc/locks` names),
/// never opened: a close of a descriptor on it could drop a lock of this
/// process's, were it the store (`store::files`).
fn lock_holder(lock_file: &Path) -> Option<u32> {
    let meta = std::fs::symlink_metadata(lock_file).ok()?;
    if !meta.is_file() {
        return None;
    }
    let dev = meta.dev();
    let locks = std::fs::File::open("/proc/locks").ok()?;
    let text = read_capped(locks, PROC_LOCKS_CAP)?;
    holder_in_proc_locks(&text, dev_major(dev), dev_minor(dev), meta.ino())
}

/// `daemon.persistence` as stackless's warning, when it is one: the file
/// exists, is not empty after trimming, and is not `registered`. The text
/// is as read (lossy UTF-8, at most [`PERSISTENCE_CAP`] bytes): sanitize
/// before display.
fn persistence_warning(path: &Path) -> Option<String> {
    let (file, _meta) = open_regular(path)?;
    let text = read_capped(file, PERSISTENCE_CAP)?;
    let trimmed = text.trim();
    (!trimmed.is_empty() && trimmed != "registered")
        .then(|| format!("{PERSISTENCE_PREFIX}{trimmed}"))
}

/// glibc's `gnu_dev_major` for a Linux `st_dev`.
#[must_use]
pub const fn dev_major(dev: u64) -> u64 {
    ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)
}

/// glibc's `gnu_dev_minor` for a Linux `st_dev`.
#[must_use]
pub const fn dev_minor(dev: u64) -> u64 {
    (dev & 0xff) | ((dev >> 12) & !0xff)
}

/// The pid of the first active lock in `/proc/locks` text on the file with
/// device `major:minor` and `inode`. A line reads
/// `1: FLOCK  ADVISORY  WRITE 12345 fe:00:5390355 0 EOF` (fs/locks.c:
/// `%d %02x:%02x:%lu`: major and minor in hex, the inode in decimal).
/// Waiters (`1: -> FLOCK ...`) and unparsable lines are skipped, as are
/// pids that are not positive (an OFD lock shows `-1`).
#[must_use]
pub fn holder_in_proc_locks(text: &str, major: u64, minor: u64, inode: u64) -> Option<u32> {
    text.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let _ordinal = fields.next()?;
        let kind = fields.next()?;
        if kind == "->" {
            return None;
        }
        let _advisory = fields.next()?;
        let _mode = fields.next()?;
        let pid: u32 = fields.next()?.parse().ok().filter(|p| *p > 0)?;
        let mut id = fields.next()?.split(':');
        let maj = u64::from_str_radix(id.next()?, 16).ok()?;
        let min = u64::from_str_radix(id.next()?, 16).ok()?;
        let ino: u64 = id.next()?.parse().ok()?;
        (id.next().is_none() && maj == major && min == minor && ino == inode).then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCKS: &str = "1: FLOCK  ADVISORY  WRITE 14045 fe:00:5390355 0 EOF
2: FLOCK  ADVISORY  READ 14046 fe:00:10133508 0 EOF
2: -> FLOCK  ADVISORY  WRITE 999 fe:00:10133508 0 EOF
3: OFDLCK ADVISORY  WRITE -1 08:11:42 0 EOF
4: POSIX  ADVISORY  WRITE 8803 08:11:42 0 EOF
5: FLOCK  ADVISORY  WRITE 7 103:0a:77 0 EOF
garbage line
";

    #[test]
    fn proc_locks_lines_are_matched_by_device_and_inode() {
        assert_eq!(holder_in_proc_locks(LOCKS, 0xfe, 0, 5_390_355), Some(14045));
        assert_eq!(
            holder_in_proc_locks(LOCKS, 0xfe, 0, 10_133_508),
            Some(14046)
        );
        // The OFD lock's -1 is skipped; the POSIX holder on the same file is found.
        assert_eq!(holder_in_proc_locks(LOCKS, 8, 0x11, 42), Some(8803));
        // Hex major and minor.
        assert_eq!(holder_in_proc_locks(LOCKS, 0x103, 0x0a, 77), Some(7));
        assert_eq!(holder_in_proc_locks(LOCKS, 0xfe, 1, 5_390_355), None);
        assert_eq!(holder_in_proc_locks(LOCKS, 0xfe, 0, 1), None);
        assert_eq!(holder_in_proc_locks("", 0, 0, 0), None);
    }

    #[test]
    fn device_numbers_split_as_glibc_does() {
        // makedev(0xfe, 0) and makedev(259, 10).
        assert_eq!((dev_major(0xfe00), dev_minor(0xfe00)), (0xfe, 0));
        assert_eq!((dev_major(0x1030a), dev_minor(0x1030a)), (259, 10));
    }

    #[test]
    fn persistence_warning_as_stackless_words_it() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        let unheld = ControllerState {
            proxy_port: Some(crate::model::services::proxy_port(
                None,
                std::env::var("STACKLESS_PROXY_PORT").ok().as_deref(),
            )),
            ..ControllerState::default()
        };
        assert_eq!(probe(state), unheld);
        std::fs::write(state.join("daemon.persistence"), "registered\n").unwrap();
        assert_eq!(probe(state).persistence_warning, None);
        std::fs::write(state.join("daemon.persistence"), "  \n").unwrap();
        assert_eq!(probe(state).persistence_warning, None);
        std::fs::write(
            state.join("daemon.persistence"),
            "cannot run launchctl: No such file or directory (os error 2)\n",
        )
        .unwrap();
        assert_eq!(
            probe(state).persistence_warning.as_deref(),
            Some(
                "leases enforced only while the daemon happens to be running: cannot run launchctl: No such file or directory (os error 2)"
            )
        );
        std::fs::write(state.join("daemon.persistence"), "x".repeat(5000)).unwrap();
        let long = probe(state).persistence_warning.unwrap();
        assert_eq!(long.len(), PERSISTENCE_PREFIX.len() + 1024);
        // A symlink is not followed.
        std::fs::remove_file(state.join("daemon.persistence")).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "secret").unwrap();
        std::os::unix::fs::symlink(&elsewhere, state.join("daemon.persistence")).unwrap();
        assert_eq!(probe(state).persistence_warning, None);
        // An unheld lock file has no holder.
        std::fs::write(state.join("controller.lock"), "").unwrap();
        assert_eq!(probe(state).pid, None);
    }
}
