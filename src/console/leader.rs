//! The role thread: takes (or waits for) this console's succession roles
//! (`crate::roles`) and starts each part once its role is held: the reaper
//! needs `console`, the helper supervisor needs `helper-supervisor`. A
//! standby console retries every [`STANDBY_POLL`] and takes over within
//! that of the active one exiting or dying. Stops when the console's
//! cancellation token is cancelled (woken at once, not at the next poll).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::controller::probe::ControllerProbe;
use crate::event::{Event, EventSender, RoleState, SupervisorKind, SupervisorNote};
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::controller::{ReaperChoice, Reaping, Stance, stance};
use crate::model::time::unix_now;
use crate::reaper::{JobRunner, Reaper, ReaperControl};
use crate::recorder::Recorder;
use crate::roles::{CONSOLE_ROLE, Holder, Refused, SUPERVISOR_ROLE, Wanted};
use crate::stop::StopToken;
use crate::store::{Access, Store};
use crate::supervisor::{HelperConfig, HelperHandle};

/// How often a standby console tries to take over.
pub(super) const STANDBY_POLL: Duration = Duration::from_millis(500);

/// What the role thread needs to start the reaper and the helper.
pub(super) struct Leader {
    pub roles_dir: PathBuf,
    /// The store's directory, where the controller is probed.
    pub state_dir: PathBuf,
    pub run_reaper: bool,
    /// `--dry-run`: the reaper runs without a role (it changes nothing),
    /// and stands by like a real one (`--reaper auto`).
    pub dry_run: bool,
    /// `--reaper`: `auto` stands by while the controller runs its lease
    /// reaper (`crate::model::controller::stance`).
    pub choice: ReaperChoice,
    pub helper: Option<HelperConfig>,
    pub teardowns: JobRunner,
    pub tx: EventSender,
    pub recorder: Recorder,
    /// The console's token: cancelled on quit.
    pub stop: StopToken,
    pub helper_handle: Arc<HelperHandle>,
    /// The operator's hold on the reaper (`P`, `R`), kept across role
    /// changes.
    pub control: crate::reaper::ReaperControl,
    /// Keep the roles after `stop` until the process exits (the demo: its
    /// temporary directory, roles and all, is deleted on the way out, and
    /// a standby console on the demo's store must not take over meanwhile
    /// and write into it; once the directory is gone it refuses to create
    /// it again, `crate::nofollow::real_dir`).
    pub hold_roles_to_exit: bool,
}

impl Leader {
    /// Spawn the role thread.
    ///
    /// # Errors
    /// The thread could not be spawned.
    pub(super) fn spawn(self) -> std::io::Result<std::thread::JoinHandle<()>> {
        std::thread::Builder::new()
            .name("console-role".into())
            .spawn(move || self.run())
    }

    /// Take the roles this console needs, until the console quits. A
    /// console that runs neither part (watch only, `--no-reaper`,
    /// `--dry-run`) takes no role and blocks nobody: it says who reaps
    /// (`round_watch`), or runs its dry run's reaper (`round_dry_run`).
    fn run(self) {
        let record = crate::roles::record();
        let mut reaper = self
            .run_reaper
            .then(|| Wanted::new(&self.roles_dir, CONSOLE_ROLE));
        let mut supervisor = self
            .helper
            .is_some()
            .then(|| Wanted::new(&self.roles_dir, SUPERVISOR_ROLE));
        let mut seen = Seen::default();
        loop {
            if let Some(wanted) = reaper.as_mut() {
                self.round_stance(wanted, &record, &mut seen);
            } else if self.dry_run {
                self.round_dry_run(&mut seen);
            } else {
                self.round_watch(&mut seen);
            }
            if let Some(wanted) = supervisor.as_mut() {
                self.round_supervisor(wanted, &record);
            }
            if self.stop.sleep(STANDBY_POLL) {
                break;
            }
        }
        if self.hold_roles_to_exit {
            // The kernel gives the locks back when the process exits.
            loop {
                std::thread::park();
            }
        }
        // Dropping the tenancies gives the roles back.
        drop(reaper);
        drop(supervisor);
    }

    /// One round of the reaper's role: the stance (`crate::model::
    /// controller::stance`) from `--reaper`, the operator's pause and the
    /// controller as probed now; take the role to reap, or give it up and
    /// say who reaps instead.
    fn round_stance(&self, wanted: &mut Wanted, record: &succession::Record, seen: &mut Seen) {
        let controller = seen.probe.probe(&self.state_dir);
        let now = stance(self.choice, self.control.paused(), &controller);
        match now {
            Stance::Reap => {
                if let Some(Stance::Controller(pid)) = seen.stance {
                    let why = if controller.pid == Some(pid) {
                        format!(
                            "the controller (pid {pid}) runs no lease reaper: this console reaps"
                        )
                    } else {
                        format!("the controller (pid {pid}) stopped: this console reaps")
                    };
                    self.role_note(why);
                }
                if seen.stance.is_some_and(|before| before != Stance::Reap) {
                    // Whoever holds the role now is reported again.
                    wanted.last_holder = Holder::Unreported;
                    wanted.last_error = None;
                }
                seen.reported = None;
                self.round_reaper(wanted, record);
            }
            Stance::Controller(pid) => {
                if wanted.give_up() || seen.stance != Some(now) {
                    self.role_note(format!(
                        "the controller (pid {pid}) runs stackless's lease reaper: this console's reaper stands by (--reaper always reaps here too)"
                    ));
                }
                seen.report(&self.tx, RoleState::ControllerReaps { pid });
            }
            Stance::Paused => {
                let gave_up = wanted.give_up();
                let reaping = controller.reaping_pid().map_or_else(
                    || match wanted.holder() {
                        Ok(Some(pid)) => Reaping::Console(pid),
                        Ok(None) | Err(_) => Reaping::Nobody,
                    },
                    Reaping::Controller,
                );
                if gave_up {
                    self.role_note(format!(
                        "paused: the console role is given up while paused; {}",
                        reaping.text()
                    ));
                }
                seen.report(&self.tx, RoleState::Released { now: reaping });
            }
        }
        seen.stance = Some(now);
    }

    /// A dry run's reaper needs no role: it runs while the stance is to
    /// reap and stands by for the controller's lease reaper as a real one
    /// does, so what it says it would do is what would be done.
    fn round_dry_run(&self, seen: &mut Seen) {
        let controller = seen.probe.probe(&self.state_dir);
        match stance(self.choice, false, &controller) {
            Stance::Reap | Stance::Paused => {
                if seen.dry_run.is_none() {
                    if let Some(Stance::Controller(pid)) = seen.stance {
                        self.role_note(format!(
                            "the controller (pid {pid}) no longer reaps: this console's dry run goes on"
                        ));
                    }
                    seen.dry_run = Some(self.start_reaper());
                }
                // A dry run tears nothing down: who really reaps is whoever
                // holds the role (or nobody), as a console whose reaper is
                // off sees it.
                let now = self.reaping_now(&controller);
                seen.report(&self.tx, RoleState::Watching { now });
                seen.stance = Some(Stance::Reap);
            }
            Stance::Controller(pid) => {
                if let Some(part) = seen.dry_run.take() {
                    part.cancel();
                }
                if seen.stance != Some(Stance::Controller(pid)) {
                    self.role_note(format!(
                        "the controller (pid {pid}) runs stackless's lease reaper: this console's dry run stands by (--reaper always)"
                    ));
                }
                seen.report(&self.tx, RoleState::ControllerReaps { pid });
                seen.stance = Some(Stance::Controller(pid));
            }
        }
    }

    /// A console whose reaper is off (`--no-reaper`, `--reaper off`,
    /// read-only) takes no role; it says who reaps instead: the
    /// controller's lease reaper, the console holding the role, or nobody.
    fn round_watch(&self, seen: &mut Seen) {
        let controller = seen.probe.probe(&self.state_dir);
        let now = self.reaping_now(&controller);
        seen.report(&self.tx, RoleState::Watching { now });
    }

    /// Who reaps, seen without taking a role: the controller's lease
    /// reaper, the console holding the `console` role, or nobody.
    fn reaping_now(&self, controller: &crate::model::controller::ControllerState) -> Reaping {
        crate::model::controller::reaping(
            controller,
            crate::roles::observe(&self.roles_dir, CONSOLE_ROLE),
        )
    }

    fn round_reaper(&self, wanted: &mut Wanted, record: &succession::Record) {
        if wanted.lost() {
            self.error(format!(
                "the {} role's lock file was removed: reaper stopped, taking the role again",
                wanted.name
            ));
        }
        match wanted.try_take(record) {
            Ok(true) => {
                // Whoever holds it next is reported again (the same
                // console taking it back included).
                wanted.last_holder = Holder::Unreported;
                wanted.last_error = None;
                let _ = self.tx.send(Event::Role(RoleState::Active));
                wanted.part = Some(self.start_reaper());
            }
            Ok(false) => {}
            Err(Refused::Occupied(pid)) => {
                wanted.last_error = None;
                if wanted.last_holder != Holder::Reported(pid) {
                    wanted.last_holder = Holder::Reported(pid);
                    let _ = self.tx.send(Event::Role(RoleState::Standby { pid }));
                }
            }
            Err(Refused::Error(text)) => {
                wanted.last_holder = Holder::Unreported;
                if wanted.last_error.as_deref() != Some(text.as_str()) {
                    wanted.last_error = Some(text.clone());
                    let _ = self.tx.send(Event::Role(RoleState::Unavailable {
                        reason: text.clone(),
                    }));
                }
                self.error(text);
            }
        }
    }

    fn round_supervisor(&self, wanted: &mut Wanted, record: &succession::Record) {
        // The supervisor keeps running; the role is simply taken again with
        // a fresh lock file.
        let _ = wanted.lost();
        match wanted.try_take(record) {
            Ok(true) => self.start_supervisor(),
            Ok(false) => {}
            Err(Refused::Occupied(pid)) => {
                if wanted.last_holder != Holder::Reported(pid) {
                    wanted.last_holder = Holder::Reported(pid);
                    let who = pid.map_or_else(
                        || "another console".to_owned(),
                        |p| format!("console pid {p}"),
                    );
                    let _ = self.tx.send(Event::Supervisor(SupervisorNote {
                        at: unix_now(),
                        kind: SupervisorKind::Occupied,
                        text: format!("standby: the helper is supervised by {who}"),
                        until: None,
                    }));
                }
            }
            Err(Refused::Error(text)) => self.error(text),
        }
    }

    /// Start the reaper; returns the token that stops it when the role is
    /// lost (a child of the console's, so quitting stops it too).
    fn start_reaper(&self) -> StopToken {
        let part = self.stop.child();
        match spawn_reaper(&self.teardowns, &self.control, self.choice, part.clone()) {
            Ok(_) => {}
            Err(StartError::Open(error)) => {
                self.error(format!("cannot open the store for the reaper: {error}"));
            }
            Err(StartError::Spawn(error)) => {
                self.error(format!("cannot start the reaper: {error}"));
            }
        }
        part
    }

    fn start_supervisor(&self) {
        if let Some(config) = self.helper.clone()
            && let Err(error) = crate::supervisor::thread::spawn(
                config,
                self.tx.clone(),
                Arc::clone(&self.helper_handle),
            )
        {
            self.error(format!("cannot start the helper supervisor: {error}"));
        }
    }

    /// Say in Activity (and the audit, the log) that who reaps changed.
    fn role_note(&self, text: String) {
        self.recorder.record(Activity::new(
            unix_now(),
            Actor::Reaper,
            "",
            ActivityKind::Role,
            text,
        ));
    }

    fn error(&self, text: String) {
        self.recorder.record(Activity::new(
            unix_now(),
            Actor::Reaper,
            "",
            ActivityKind::Error,
            text,
        ));
    }
}

/// What the role thread last saw and said of the reaper's role.
#[derive(Default)]
struct Seen {
    /// The controller probe (asks a new controller whether it reaps).
    probe: ControllerProbe,
    /// The stance of the last round.
    stance: Option<Stance>,
    /// The role state last sent by [`Seen::report`].
    reported: Option<RoleState>,
    /// A dry run's reaper, while it runs (its stop token).
    dry_run: Option<StopToken>,
}

impl Seen {
    /// Send `state` unless it was the last one sent by this.
    fn report(&mut self, tx: &EventSender, state: RoleState) {
        if self.reported.as_ref() != Some(&state) {
            let _ = tx.send(Event::Role(state.clone()));
            self.reported = Some(state);
        }
    }
}

/// Why the reaper thread did not start.
#[derive(Debug)]
pub(super) enum StartError {
    /// Its store connection could not be opened.
    Open(crate::store::StoreError),
    /// The thread could not be spawned.
    Spawn(std::io::Error),
}

/// The one place the console builds and starts its reaper thread (the
/// active console's role thread, and a dry run's, which needs no role):
/// a read-write connection of its own, the host probe, the jobs shared
/// with the keys, the operator's `control`, its status reported to the
/// jobs' recorder's channel (`Event::Reaper`), and the controller probed
/// again before each teardown it starts (who reaps, under `choice`:
/// `crate::model::controller::hand_over`). Stops when `stop` is cancelled.
///
/// # Errors
/// The store could not be opened, or the thread spawned.
pub(super) fn spawn_reaper(
    teardowns: &JobRunner,
    control: &ReaperControl,
    choice: ReaperChoice,
    stop: StopToken,
) -> Result<std::thread::JoinHandle<()>, StartError> {
    let store = Store::open(teardowns.path(), Access::ReadWrite).map_err(StartError::Open)?;
    let state_dir = store.state_dir();
    let mut probe = ControllerProbe::default();
    let reaper = Reaper::new(
        store,
        crate::store::probe::checked_sysinfo(),
        teardowns.clone(),
    )
    .with_control(control.clone(), teardowns.recorder().reporter())
    .with_who_reaps(Box::new(move || {
        crate::model::controller::hand_over(choice, &probe.probe(&state_dir))
    }));
    crate::reaper::runner::spawn(reaper, stop).map_err(StartError::Spawn)
}
