//! The supervisor thread: drives `succession::supervision::Supervisor` for the
//! helper role, converts its borrowed events into owned
//! [`SupervisorNote`]s for the render loop, evicts a verified tenant of an
//! earlier run, and stops the helper it started when the console quits.

use std::collections::HashMap;
use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use succession::eviction::{self, AnonymousOutcome, Outcome, Policy};
use succession::supervision::{Event as SupEvent, Restart, Supervisor};
use succession::{Role, Run};

use super::{ENV_ROLES_DIR, ENV_RUN, ROLE};
use crate::event::{Event, EventSender, SupervisorKind, SupervisorNote};
use crate::model::time::unix_now;
use crate::process_group;

/// What to supervise.
#[derive(Debug, Clone)]
pub struct HelperConfig {
    /// The helper's argv (`--helper CMD`, split once with shell-words rules).
    pub argv: Vec<String>,
    /// `<state_dir>/stackless-tui/roles/`.
    pub roles_dir: PathBuf,
    /// Restart backoff (succession's default: base 2 s, ceiling 60 s, reset
    /// after a 30 s run). succession doubles the delay before the first
    /// restart, so a helper that exits at once waits 4 s, then 8 s, 16 s,
    /// ... 60 s; one that ran 30 s or more waits the 2 s base.
    pub restart: Restart,
    /// How long an unidentified tenant is left alone before it may be
    /// evicted by image.
    pub grace: Duration,
}

impl HelperConfig {
    /// The helper's name: its program's file name (`--helper
    /// /usr/bin/sh -c ...` is `sh`), as the header and the metrics say it.
    #[must_use]
    pub fn name(&self) -> String {
        let program = self.argv.first().map_or("", String::as_str);
        std::path::Path::new(program)
            .file_name()
            .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned())
    }
}

/// Shared between the supervisor thread and the console: which helper is
/// running (its pid, which is also its process group), how often it was
/// restarted, and whether the console is shutting down.
#[derive(Debug, Default)]
pub struct HelperHandle {
    pid: AtomicU32,
    stopping: AtomicBool,
    restarts: AtomicU64,
}

impl HelperHandle {
    /// How often the supervisor started the helper again after one of its
    /// own exited (a `Started` after an `Exited`; the first start is not
    /// one), since this process started: `stackless_helper_restarts_total`.
    #[must_use]
    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::SeqCst)
    }

    /// The running helper's pid, if one is running.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        match self.pid.load(Ordering::SeqCst) {
            0 => None,
            pid => Some(pid),
        }
    }

    /// Stop supervising and stop the helper: SIGTERM to its process group,
    /// then SIGKILL after `grace`. Waits until the supervisor thread has
    /// reaped it (no zombie, no orphan), up to `grace` + 1 s. Returns whether
    /// a helper was running.
    pub fn stop(&self, grace: Duration) -> bool {
        self.stopping.store(true, Ordering::SeqCst);
        let Some(pid) = self.pid() else {
            return false;
        };
        let group = i32::try_from(pid).unwrap_or(i32::MAX);
        process_group::stop_group(group, grace, Duration::from_secs(1), || {
            self.pid().is_none()
        });
        // Whatever else is left in the group (a grandchild) goes too.
        let _ = process_group::signal(group, nix::sys::signal::Signal::SIGKILL);
        true
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

/// Start the supervisor thread for `config`, reporting to `tx`.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn(
    config: HelperConfig,
    tx: EventSender,
    handle: Arc<HelperHandle>,
) -> io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("helper-supervisor".into())
        .spawn(move || run(&config, &tx, &handle))
}

/// When a back-off of `delay` that starts at `now` (unix seconds) ends:
/// unix seconds, rounded up (a restart is never shown due before it is).
fn restart_due(now: i64, delay: Duration) -> i64 {
    let secs = delay.as_secs() + u64::from(delay.subsec_nanos() > 0);
    now.saturating_add(i64::try_from(secs).unwrap_or(i64::MAX))
}

fn note(kind: SupervisorKind, text: String, until: Option<i64>) -> Event {
    Event::Supervisor(SupervisorNote {
        at: unix_now(),
        kind,
        text: crate::model::text::sanitize(&text).into_owned(),
        until,
    })
}

fn run(config: &HelperConfig, tx: &EventSender, handle: &Arc<HelperHandle>) {
    let role = Role::new(&config.roles_dir, ROLE);
    // The helper's role files are opened by this thread too: never through
    // a symbolic link planted in the roles directory (crate::nofollow).
    let links = crate::nofollow::real_dir(&config.roles_dir)
        .and_then(|()| crate::nofollow::not_a_symlink(role.lock_path()))
        .and_then(|()| crate::nofollow::not_a_symlink(role.record_path()));
    if let Err(error) = links {
        let _ = tx.send(note(
            SupervisorKind::SpawnFailed,
            format!("helper not supervised: {error}"),
            None,
        ));
        return;
    }
    let mine = Run::mint();
    let mut supervisor = Supervisor::new(role, mine)
        .restart(config.restart)
        .grace(config.grace);
    let mut spawn = || spawn_helper(config, handle, mine);
    let mut reporter = Reporter {
        tx,
        handle,
        image: resolve_image(&config.argv[0]),
        standing: HashMap::new(),
        exited: false,
    };
    let mut report = |event: SupEvent<'_>| reporter.on_event(&event);
    while !handle.stopping() {
        crate::fault::inject("supervisor");
        if let Err(error) = supervisor.tick(&mut spawn, &mut report) {
            // succession: treat a probe error as "free" and try again.
            let _ = tx.send(note(
                SupervisorKind::SpawnFailed,
                format!("cannot probe the helper role: {error}"),
                None,
            ));
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

/// Start the helper (`config.argv`) as the leader of its own process
/// group, with this run's id and the roles directory in its environment;
/// its pid goes to `handle`. Refused once the console is quitting.
fn spawn_helper(config: &HelperConfig, handle: &HelperHandle, mine: Run) -> io::Result<Child> {
    if handle.stopping() {
        return Err(io::Error::other("the console is quitting"));
    }
    let mut command = Command::new(&config.argv[0]);
    command
        .args(&config.argv[1..])
        .env(ENV_RUN, mine.get().to_string())
        .env(ENV_ROLES_DIR, &config.roles_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let child = command.spawn()?;
    handle.pid.store(child.id(), Ordering::SeqCst);
    if handle.stopping() {
        // `stop` ran between the check above and the spawn: it may have
        // seen no pid, so stop this child here (the supervisor reaps it).
        if let Ok(group) = i32::try_from(child.id()) {
            let _ = process_group::signal(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
    Ok(child)
}

/// Turns succession's borrowed supervision events into owned
/// [`SupervisorNote`]s for the render loop, doing what an event asks
/// (evicting a verified earlier tenant, cleaning up an exited helper's
/// group) and sending a standing report once.
struct Reporter<'a> {
    tx: &'a EventSender,
    handle: &'a HelperHandle,
    /// The helper executable, resolved (eviction of an unidentified tenant
    /// by image).
    image: Option<PathBuf>,
    /// The standing reports last sent, by kind (role held, tenant gone,
    /// eviction refused).
    standing: HashMap<SupervisorKind, String>,
    /// A helper this supervisor started has exited: the next start is a
    /// restart.
    exited: bool,
}

impl Reporter<'_> {
    fn on_event(&mut self, event: &SupEvent<'_>) {
        let text = event.to_string();
        let message = match event {
            SupEvent::Occupied(_) => note(SupervisorKind::Occupied, text, None),
            SupEvent::Superseded(record) => {
                let _ = self.tx.send(note(SupervisorKind::Superseded, text, None));
                note(SupervisorKind::Evicted, evict(record), None)
            }
            SupEvent::SupersededAnonymously => {
                let _ = self
                    .tx
                    .send(note(SupervisorKind::SupersededAnonymously, text, None));
                note(SupervisorKind::Evicted, self.evict_anonymous(), None)
            }
            SupEvent::Started(_) => {
                if self.exited {
                    self.handle.restarts.fetch_add(1, Ordering::SeqCst);
                }
                note(SupervisorKind::Started, text, None)
            }
            SupEvent::Exited { status, ran_for } => {
                self.exited = true;
                self.exited(*status, *ran_for)
            }
            SupEvent::SpawnFailed(_) => {
                self.handle.pid.store(0, Ordering::SeqCst);
                note(SupervisorKind::SpawnFailed, text, None)
            }
            SupEvent::BackingOff(delay) => note(
                SupervisorKind::BackingOff,
                text,
                Some(restart_due(unix_now(), *delay)),
            ),
        };
        self.send(message);
    }

    /// An unidentified tenant: evicted only when it is the one helper run
    /// from this image.
    fn evict_anonymous(&self) -> String {
        match self
            .image
            .as_deref()
            .map(|p| eviction::evict_anonymous(p, &Policy::default()))
        {
            None => "cannot evict an unidentified tenant: helper image unknown".to_owned(),
            Some(AnonymousOutcome::NoCandidate) => {
                "unidentified tenant is not our helper: left alone".to_owned()
            }
            Some(AnonymousOutcome::Ambiguous { running }) => {
                format!("{running} helpers run from the same image: none evicted")
            }
            Some(AnonymousOutcome::Left) => "evicted an unidentified tenant".to_owned(),
            Some(AnonymousOutcome::Stubborn) => {
                "unidentified tenant ignored TERM and KILL".to_owned()
            }
        }
    }

    /// The helper exited: its group goes too, and the line says whether
    /// the console stopped it.
    fn exited(&self, status: std::process::ExitStatus, ran_for: Duration) -> Event {
        let text = exited_text(status, ran_for);
        let pid = self.handle.pid.swap(0, Ordering::SeqCst);
        // The helper is gone; children it left in its group go too,
        // so a crash loop never piles up orphans.
        if pid != 0 {
            clean_up_group(pid, Duration::from_millis(500));
        }
        if self.handle.stopping() {
            note(
                SupervisorKind::Stopped,
                format!("{text} (stopped by the console)"),
                None,
            )
        } else {
            note(SupervisorKind::Exited, text, None)
        }
    }

    /// Send `message`, except a standing report equal to the last one of
    /// its kind.
    fn send(&mut self, message: Event) {
        // The same standing report (role held, tenant gone, eviction
        // refused) is sent once, not twice a second for as long as it lasts.
        if let Event::Supervisor(note) = &message {
            if matches!(
                note.kind,
                SupervisorKind::Occupied
                    | SupervisorKind::Superseded
                    | SupervisorKind::SupersededAnonymously
                    | SupervisorKind::Evicted
            ) {
                if self.standing.get(&note.kind) == Some(&note.text) {
                    return;
                }
                self.standing.insert(note.kind, note.text.clone());
            } else if note.kind == SupervisorKind::Started {
                self.standing.clear();
            }
        }
        let _ = self.tx.send(message);
    }
}

/// A tenant of an earlier run: verify pid + start time + image before
/// signalling it (`succession::eviction`); the line says what happened.
fn evict(record: &succession::Record) -> String {
    match eviction::evict(record, &Policy::default()) {
        Outcome::AlreadyGone => "earlier tenant already gone".to_owned(),
        Outcome::Left => {
            // Our helpers lead their own process group (pgid =
            // pid): whatever the evicted one left behind goes
            // with it. A group id is never reused while any
            // member lives, so this reaches no stranger.
            clean_up_group(record.tenant.pid, Duration::from_millis(500));
            format!("evicted earlier tenant pid {}", record.tenant.pid)
        }
        Outcome::Refused(why) => format!(
            "did not evict pid {}: it is not the recorded process ({why:?})",
            record.tenant.pid
        ),
        Outcome::Stubborn => format!("pid {} ignored TERM and KILL", record.tenant.pid),
    }
}

/// The Supervisor line for a helper's exit: `helper exited (status 0)
/// after 1.2s`, `helper exited (signal 9) after 300ms` (succession's own
/// line reads `helper exited exit status: 0`).
#[must_use]
pub fn exited_text(status: std::process::ExitStatus, ran_for: Duration) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    let how = match (status.code(), status.signal()) {
        (Some(code), _) => format!("status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => status.to_string(),
    };
    format!("helper exited ({how}) after {ran_for:.1?}")
}

/// Stop every process left in process group `pgid`: TERM, then KILL after
/// `grace` if any is still there.
fn clean_up_group(pgid: u32, grace: Duration) {
    let Ok(group) = i32::try_from(pgid) else {
        return;
    };
    process_group::stop_group(group, grace, Duration::ZERO, || {
        !process_group::alive(group)
    });
}

/// The absolute, resolved path of the helper executable (for eviction of an
/// unidentified tenant by image): as given when it contains a `/`, else
/// looked up on `PATH`.
fn resolve_image(program: &str) -> Option<PathBuf> {
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())?
    };
    std::fs::canonicalize(path).ok()
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::ExitStatus;
    use std::time::Duration;

    /// A back-off's restart is due at unix seconds, rounded up: the pane
    /// never shows it due before it is.
    #[test]
    fn a_back_off_is_due_at_its_end_rounded_up_to_a_second() {
        assert_eq!(super::restart_due(100, Duration::from_secs(3)), 103);
        assert_eq!(super::restart_due(100, Duration::from_millis(2500)), 103);
        assert_eq!(super::restart_due(100, Duration::ZERO), 100);
    }

    #[test]
    fn a_helper_exit_reads_as_a_status_or_a_signal() {
        assert_eq!(
            super::exited_text(ExitStatus::from_raw(0), Duration::from_millis(1200)),
            "helper exited (status 0) after 1.2s"
        );
        assert_eq!(
            super::exited_text(ExitStatus::from_raw(3 << 8), Duration::from_millis(300)),
            "helper exited (status 3) after 300.0ms"
        );
        assert_eq!(
            super::exited_text(ExitStatus::from_raw(9), Duration::from_secs(2)),
            "helper exited (signal 9) after 2.0s"
        );
    }

    #[test]
    fn the_first_restart_waits_4s_as_the_readme_says() {
        // succession doubles its 2 s base before the first restart; a run
        // of 30 s or more goes back to the base.
        let restart = succession::supervision::Restart::default();
        assert_eq!(restart.base, Duration::from_secs(2));
        let first = restart.next_delay(restart.base, Duration::from_millis(20));
        assert_eq!(first, Duration::from_secs(4));
        assert_eq!(
            restart.next_delay(first, Duration::from_millis(20)),
            Duration::from_secs(8)
        );
        assert_eq!(
            restart.next_delay(Duration::from_secs(60), Duration::from_secs(30)),
            Duration::from_secs(2)
        );
    }
}
