//! The console's threads and the one event channel: start-up in order
//! (audit, panic hook, terminal, watcher, roles), the render loop, and a
//! clean shutdown (cancel the token, stop the helper, restore the
//! terminal, say what was left running).

use std::io::{self, Write as _};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr as _};

use super::leader::Leader;
use super::setup::Setup;
use super::terminal::{self, RestoreOnDrop, with_terminal};
use crate::audit::{self, AuditLog};
use crate::event::{Event, EventSender};
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::time::unix_now;
use crate::reaper::{InFlight, JobRunner, ReaperControl};
use crate::recorder::{Forward, Recorder};
use crate::stop::StopToken;
use crate::store::Access;
use crate::supervisor::HelperHandle;
use crate::ui::App;

/// How long the helper gets between TERM and KILL when the console quits.
pub(super) const HELPER_STOP_GRACE: Duration = Duration::from_secs(3);

/// What the console and `serve --stdio` share: the runtime, the one
/// event channel's sending half, the stop token, the helper, the
/// recorder (audit trail, log, activities), the teardowns, the reaper's
/// control and the renews and verifies running.
pub(super) struct Engine {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) tx: EventSender,
    pub(super) stop: StopToken,
    pub(super) helper_handle: Arc<HelperHandle>,
    pub(super) recorder: Recorder,
    /// The operator's teardowns (and the reaper's): they outlive the
    /// console, never stopped.
    pub(super) teardowns: JobRunner,
    /// The operator's hold on the reaper (`P`, `R`): in this process's
    /// memory only; paused, the role thread gives the `console` role up,
    /// so `reap --once` and other consoles may reap meanwhile.
    pub(super) control: ReaperControl,
    pub(super) verbs_running: InFlight,
    /// The audit trail's counts and the helper's restarts, for the
    /// metrics file and `serve --stdio`'s `metrics`.
    pub(super) metrics: super::metrics_file::Sources,
    /// `serve --stdio`: the teardowns stop with the agent (as `reap
    /// --once`'s on a signal: TERM, then KILL, audited `interrupted`).
    stream: bool,
}

impl Engine {
    /// Everything before the first thread: the runtime, the channel, the
    /// log, the audit trail (its `start` line), the panic hook. Returns the
    /// channel's receiving half with it.
    ///
    /// # Errors
    /// The runtime could not be started.
    pub(super) fn prepare(
        setup: &Setup,
        front: super::setup::Front,
    ) -> Result<(Self, crate::event::EventReceiver)> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .wrap_err("cannot start the async runtime")?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let helper_handle = Arc::new(HelperHandle::default());
        // The newest secret values read: the console log, the audit trail and
        // the activities are redacted by them (the render loop updates them
        // with each snapshot, the reaper with each of its own).
        let secrets = crate::model::redact::Secrets::new();
        start_logging(setup, &tx, &secrets);
        let recorder = Recorder::new(open_audit(setup, &tx), Forward::Console(tx.clone()))
            .with_secrets(secrets);
        let stop = StopToken::new();
        let stream = front == super::setup::Front::Stream;
        let mut teardowns =
            JobRunner::new(setup.path.clone(), setup.action.clone(), recorder.clone());
        if stream {
            // The agent's teardowns stop with it, as `reap --once`'s do on
            // a signal; the console's outlive it.
            teardowns = teardowns.with_stop(stop.clone());
        }
        audit_console(&recorder, "start", &format!("pid {}", std::process::id()));
        install_panic_hook(
            Arc::clone(&helper_handle),
            recorder.audit().cloned(),
            !stream,
        );
        let metrics = super::metrics_file::Sources {
            audit: crate::audit::CountsCache::default(),
            helper: setup
                .helper
                .as_ref()
                .map(|helper| (helper.name(), Arc::clone(&helper_handle))),
            extra: None,
        };
        Ok((
            Self {
                runtime,
                tx,
                stop,
                helper_handle,
                recorder,
                teardowns,
                control: ReaperControl::default(),
                verbs_running: InFlight::default(),
                metrics,
                stream,
            },
            rx,
        ))
    }

    /// The store watcher, the clock watch and the role thread (the reaper,
    /// the helper).
    ///
    /// # Errors
    /// A thread could not be started.
    pub(super) fn start_threads(&self, setup: &Setup) -> Result<()> {
        // The audit trail is counted off every loop, for the metrics file
        // and `serve --stdio`'s `metrics`; a console without a metrics
        // file reads no counts.
        if setup.metrics_file.is_some() || self.stream {
            crate::audit::watch_counts(
                crate::audit::default_path(&setup.state_dir),
                self.metrics.audit.clone(),
                self.stop.clone(),
            )
            .wrap_err("cannot start the audit trail's counter")?;
        }
        if let Some(file) = &setup.metrics_file {
            super::metrics_file::spawn(
                file.clone(),
                setup.path.clone(),
                setup.action.tick,
                self.metrics.clone(),
                self.stop.clone(),
            )
            .wrap_err("cannot start the metrics file writer")?;
        }
        start_threads(
            setup,
            &self.teardowns,
            &self.tx,
            &self.recorder,
            &self.stop,
            &self.helper_handle,
            &self.control,
        )
    }

    /// The I/O worker for the reads the UI (or a command) asks for.
    ///
    /// # Errors
    /// Its thread could not be started.
    pub(super) fn io_worker(&self, setup: &Setup) -> Result<super::io_worker::IoWorker> {
        super::io_worker::IoWorker::spawn(
            self.teardowns.path().to_owned(),
            setup.state_dir.clone(),
            self.tx.clone(),
            self.recorder.clone(),
        )
        .wrap_err("cannot start the I/O worker thread")
    }

    /// Stop the threads and the helper; whether the helper was stopped.
    pub(super) fn stop(&self) -> bool {
        self.stop.cancel();
        self.helper_handle.stop(HELPER_STOP_GRACE)
    }

    /// After the loop (and the terminal, if any, given back): say and
    /// audit what was left running, audit the stop, shut the runtime down.
    pub(super) fn finish(self, setup: &Setup, reason: &str, stopped_helper: bool) {
        if self.stream {
            // Stopped with the token: each records `interrupted` once its
            // `down` is gone (TERM, then KILL after `KILL_GRACE`).
            let deadline = std::time::Instant::now()
                + crate::reaper::teardown::KILL_GRACE
                + Duration::from_secs(2);
            while !self.teardowns.inflight().names().is_empty()
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        report_verbs_left(&self.verbs_running, &self.recorder, reason);
        report_exit(
            setup,
            self.teardowns.inflight(),
            &self.recorder,
            reason,
            stopped_helper,
        );
        self.runtime.shutdown_timeout(Duration::from_millis(200));
    }
}

/// Run the console until it quits.
///
/// # Errors
/// The runtime, the terminal or a thread could not be started, or the
/// render loop failed.
pub(super) fn run(setup: Setup, no_record: bool) -> Result<()> {
    let (engine, rx) = Engine::prepare(&setup, super::setup::Front::Terminal)?;
    // The terminal first: nothing below (watcher, reaper, helper) may act
    // before the console can show what it does.
    let Some(entered) = with_terminal(terminal::enter) else {
        // A background thread panicked already; its hook exits the process.
        loop {
            std::thread::park();
        }
    };
    let mut term = entered?;
    // Whatever goes wrong from here on, the terminal is given back.
    let restore_guard = RestoreOnDrop;
    engine.start_threads(&setup)?;
    super::input::spawn(engine.tx.clone()).wrap_err("cannot start the terminal input thread")?;
    let app = new_app(&setup, &engine.teardowns);
    let (recording, said) = super::recording::start(
        no_record,
        setup.demo.is_some(),
        &setup.state_dir,
        &setup.path,
    );
    let _ = engine.tx.send(Event::Recording(said.words()));
    let outcome = engine.runtime.block_on(super::render_loop::run(
        &mut term,
        app,
        rx,
        &engine.teardowns,
        &engine.recorder,
        super::render_loop::Wiring {
            stackless: setup.stackless.clone(),
            io: engine.io_worker(&setup)?,
            control: engine.control.clone(),
            runtime: engine.runtime.handle().clone(),
            verbs_running: engine.verbs_running.clone(),
            recording,
        },
    ));
    let stopped_helper = engine.stop();
    leave_terminal(term, restore_guard);
    let reason = outcome
        .as_ref()
        .map_or_else(|e| format!("error: {e}"), |why| (*why).to_owned());
    engine.finish(&setup, &reason, stopped_helper);
    outcome.map(|_| ())
}

/// The console's log file (`--log-level`; a log that cannot be opened is
/// said in the Activity pane, and the console runs on without one), then
/// a teardown command that is not found, said at start when a reaper runs.
fn start_logging(setup: &Setup, tx: &EventSender, secrets: &crate::model::redact::Secrets) {
    if let Some(why) = super::logging::init(&setup.state_dir, setup.log_level, secrets.clone()) {
        // Said in the Activity pane; the console runs on without a log.
        let _ = tx.send(Event::Activity(Activity::new(
            unix_now(),
            Actor::Reaper,
            "",
            ActivityKind::Error,
            why,
        )));
    }
    tracing::info!(store = %setup.path.display(), pid = std::process::id(), "console started");
    if setup.created {
        // Created as stackless would on its first run, and said so: an
        // empty table is then no surprise.
        let _ = tx.send(Event::Activity(Activity::new(
            unix_now(),
            Actor::Operator,
            "",
            ActivityKind::StoreCreated,
            crate::startup::created_line(&setup.path),
        )));
    }
    if setup.demo == Some(crate::cli::DemoKind::V14) {
        // The demo is honest about who plays stackless: said at start.
        let _ = tx.send(Event::Activity(Activity::new(
            unix_now(),
            Actor::Operator,
            "",
            ActivityKind::StoreCreated,
            crate::demo::stackless::HELLO.to_owned(),
        )));
    }
    if let Some(missing) = &setup.teardown.missing
        && setup.reaper.is_some()
    {
        // Said at start (and in the header), not first at an expiry; with
        // no reaper (--no-reaper, read-only) the header's banner says it
        // once, and no reaper error is logged.
        let _ = tx.send(Event::Activity(Activity::new(
            unix_now(),
            Actor::Reaper,
            "",
            ActivityKind::Error,
            format!("teardown command not found: {missing}: set --down-cmd"),
        )));
    }
}

/// The UI's state at start: the last teardowns' output read back from the
/// audit trail (at most [`audit::READ_BACK`] bytes), the teardown command
/// and the zone.
pub(super) fn new_app(setup: &Setup, teardowns: &JobRunner) -> App {
    let mut app = App::new(setup.app.clone(), unix_now());
    // The last teardowns' output survives a restart in the audit trail.
    let audit_path = audit::default_path(&setup.state_dir);
    app.restore_teardowns(audit::last_teardowns(&audit_path, audit::READ_BACK));
    app.set_teardown(setup.teardown.clone());
    app.set_stackless(setup.stackless.to_string_lossy().into_owned());
    app.set_down_command(teardowns.config().down.clone());
    app.set_under_tmux(std::env::var_os("TMUX").is_some_and(|v| !v.is_empty()));
    app.set_dry_run(teardowns.config().dry_run);
    app.set_zone(setup.zone.clone());
    if setup.demo == Some(crate::cli::DemoKind::V14) {
        // The stand-in runs as a thread of this process.
        app.set_controller_stand_in(std::process::id());
    }
    app
}

/// Give the terminal back once the render loop is over: restored here,
/// once, and neither `term` nor `restore_guard` dropped.
fn leave_terminal(term: terminal::Term, restore_guard: RestoreOnDrop) {
    terminal::restore_terminal();
    // Restored once, here: a second "leave the alternate screen" would move
    // the cursor back over the lines printed below.
    std::mem::forget(restore_guard);
    // The terminal may be gone (the window was closed): ratatui's own drop
    // would try to show the cursor and print the failure to a dead stderr.
    std::mem::forget(term);
}

/// The audit trail: only a console that may write keeps one. An audit that
/// cannot be opened is said in the Activity pane, and the console runs on.
fn open_audit(setup: &Setup, tx: &EventSender) -> Option<audit::Shared> {
    if setup.access != Access::ReadWrite {
        return None;
    }
    match AuditLog::open(&audit::default_path(&setup.state_dir), audit::DEFAULT_CAP) {
        Ok(log) => Some(Arc::new(Mutex::new(log))),
        Err(e) => {
            let _ = tx.send(Event::Activity(Activity::new(
                unix_now(),
                Actor::Reaper,
                "",
                ActivityKind::Error,
                format!("audit trail unavailable: {e}"),
            )));
            None
        }
    }
}

/// One console line in the audit trail (`start`, `stop`).
fn audit_console(recorder: &Recorder, action: &str, detail: &str) {
    if let Some(log) = recorder.audit() {
        let _ = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .console(unix_now(), action, detail);
    }
}

/// A panic in any thread: restore the terminal (the console's: an agent's
/// stdout is the protocol stream, never a terminal's escape codes), stop
/// the helper, print color-eyre's report, exit 101.
fn install_panic_hook(helper: Arc<HelperHandle>, audit: Option<audit::Shared>, terminal: bool) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if terminal {
            terminal::close_for_panic();
        }
        helper.stop(Duration::from_secs(1));
        if let Some(log) = &audit
            && let Ok(mut log) = log.try_lock()
        {
            let _ = log.console(unix_now(), "stop", &format!("panic: {info}"));
        }
        previous(info);
        std::process::exit(101);
    }));
}

/// The store watcher, then the reaper and the helper: these run only in
/// the one active console per store (succession role `console`); others
/// stand by. A dry run changes nothing, so its reaper needs no role.
fn start_threads(
    setup: &Setup,
    teardowns: &JobRunner,
    tx: &EventSender,
    recorder: &Recorder,
    stop: &StopToken,
    helper_handle: &Arc<HelperHandle>,
    control: &ReaperControl,
) -> Result<()> {
    crate::store::watcher::spawn(setup.path.clone(), setup.access, tx.clone(), stop.clone())
        .wrap_err("cannot start the store watcher")?;
    match setup.demo {
        Some(crate::cli::DemoKind::V4) => {
            crate::demo::logs::spawn_writer(setup.state_dir.clone(), stop.clone())
                .wrap_err("cannot start the demo's log writer")?;
        }
        Some(crate::cli::DemoKind::V14) => {
            crate::demo::controller::spawn(setup.path.clone(), stop.clone())
                .wrap_err("cannot start the demo's controller stand-in")?;
        }
        None => {}
    }
    let dry_run = setup.action.dry_run;
    // The wall clock against the kernel's, every second, reported when
    // its doubt changes: it holds `r` whether or not a reaper runs here.
    crate::reaper::runner::watch_clock(teardowns.clone(), stop.clone())
        .wrap_err("cannot start the clock watch")?;
    let run_reaper = setup.reaper.is_some() && !dry_run;
    // Always: it runs the reaper (with the role, or a dry run's without),
    // or says who reaps when this console does not.
    {
        Leader {
            roles_dir: crate::supervisor::roles_dir(&setup.state_dir),
            state_dir: setup.state_dir.clone(),
            run_reaper,
            dry_run: dry_run && setup.reaper.is_some(),
            choice: setup.choice,
            helper: setup.helper.clone(),
            teardowns: teardowns.clone(),
            tx: tx.clone(),
            recorder: recorder.clone(),
            stop: stop.clone(),
            helper_handle: Arc::clone(helper_handle),
            control: control.clone(),
            hold_roles_to_exit: setup.demo_dir.is_some(),
        }
        .spawn()
        .wrap_err("cannot start the console role thread")?;
    }
    Ok(())
}

/// After the terminal is restored: let the demo's teardowns finish (its
/// store is deleted on exit), audit the stop, and say on stderr what was
/// left running.
/// The renews and verifies still running at exit (`renew alpha`): said on
/// stderr and audited as left running; their `stackless` keeps running in
/// its own process group and the controller's operation stays durable.
fn report_verbs_left(running: &InFlight, recorder: &Recorder, reason: &str) {
    let running = running.names();
    if running.is_empty() {
        return;
    }
    if let Some(log) = recorder.audit() {
        let mut log = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for key in &running {
            let (verb, name) = key.split_once(' ').unwrap_or(("renew", key));
            let action = if verb == "verify" { "verify" } else { "lease" };
            let _ = log.left_running_as(
                unix_now(),
                name,
                action,
                &crate::model::verbs::left_running_text(verb, reason),
            );
        }
    }
    let shown: Vec<String> = running
        .iter()
        .map(|n| crate::model::text::sanitize(n).into_owned())
        .collect();
    let _ = writeln!(
        io::stderr(),
        "stackless-tui: left running: {} (each stackless command finishes on its own; the controller keeps its operation)",
        shown.join(", ")
    );
}

fn report_exit(
    setup: &Setup,
    inflight: &InFlight,
    recorder: &Recorder,
    reason: &str,
    stopped_helper: bool,
) {
    if setup.demo_dir.is_some() {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !inflight.names().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let running = inflight.names();
    let detail = if running.is_empty() {
        reason.to_owned()
    } else {
        format!("{reason}; left running: {}", running.join(", "))
    };
    if let Some(log) = recorder.audit() {
        let mut log = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for name in &running {
            let _ = log.left_running(
                unix_now(),
                name,
                &format!(
                    "the console stopped ({reason}) while this teardown ran: its `down` is left to finish in its own process group, holding the instance's lock"
                ),
            );
        }
    }
    audit_console(recorder, "stop", &detail);
    if !running.is_empty() {
        let names: Vec<String> = running
            .iter()
            .map(|n| crate::model::text::sanitize(n).into_owned())
            .collect();
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: left {} teardown(s) to finish on their own: {} (each is a `down` in its own process group holding its own lock)",
            names.len(),
            names.join(", ")
        );
    }
    if stopped_helper {
        let _ = writeln!(io::stderr(), "stackless-tui: stopped the helper");
    }
    tracing::info!("console stopped");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A renew and a verify running at quit are
    /// audited as left running, each with its action and what it means.
    #[test]
    fn renews_and_verifies_left_running_are_audited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, 1 << 20).expect("open");
        let recorder = Recorder::new(
            Some(Arc::new(Mutex::new(log))),
            Forward::Collect(Arc::default()),
        );
        let running = InFlight::default();
        let _renew = running.claim("renew alpha");
        let _verify = running.claim("verify bravo");
        report_verbs_left(&running, &recorder, "quit");
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        let got: Vec<(&str, &str, &str, &str)> = lines
            .iter()
            .map(|l| {
                (
                    l["instance"].as_str().unwrap_or(""),
                    l["action"].as_str().unwrap_or(""),
                    l["outcome"].as_str().unwrap_or(""),
                    l["reason"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "alpha",
                    "lease",
                    "left-running",
                    "the console stopped (quit) while this renew ran: its `stackless up` is left to finish in its own process group, and the controller's up operation may still take effect"
                ),
                (
                    "bravo",
                    "verify",
                    "left-running",
                    "the console stopped (quit) while this verify ran: its `stackless verify` is left to finish in its own process group, and the controller's verify operation may still take effect"
                )
            ]
        );
    }
}
