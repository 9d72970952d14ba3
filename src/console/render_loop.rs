//! The one render loop: it owns the UI state ([`App`]), takes every
//! [`Event`] (the one-second tick, signals, and what the terminal's input
//! thread and the background threads send over the one channel) in arrival
//! order, applies
//! whatever else is already queued, then draws one frame. Commands the UI
//! returns (reap, tear down, open a detail, cancel an operation) are carried
//! out here: teardowns on their own threads (started by the `job-starter`
//! thread, `super::job_starter`), a cancel on a tokio task
//! (`crate::controller::cancel`), every read (the detail, the logs view's
//! opens, scroll-back and searches) on the I/O worker (`super::io_worker`), whose
//! answers come back as events. The loop itself reads no file and no
//! store (`crate::render_thread`, asserted in debug builds).

use std::ffi::OsString;
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr as _};
use tokio::signal::unix::{SignalKind, signal};

use super::io_worker::IoWorker;
use super::job_starter::JobStarter;
use super::queue_down::QueueDownWiring;
use super::terminal::{Term, with_terminal};
use crate::controller::cancel::{self, CancelRequest};
use crate::event::{Event, EventReceiver};
use crate::model::activity::Actor;
use crate::model::time::unix_now;
use crate::model::{Instance, ReapAttempt};
use crate::reaper::{Intent, Job, JobRunner};
use crate::recorder::Recorder;
use crate::ui::{App, Effect};

/// What the render loop hands the UI's commands to, besides the teardown
/// jobs and the recorder.
pub(super) struct Wiring {
    /// The stackless program (`--stackless`), for `c`'s `operation cancel`.
    pub(super) stackless: OsString,
    /// The I/O worker: the detail and the logs view's reads.
    pub(super) io: IoWorker,
    /// This console's reaper control (`P`, `R`).
    pub(super) control: crate::reaper::ReaperControl,
    /// The console's tokio runtime: `c`'s cancel runs on it (teardowns
    /// do not: each waits for its `down` on a runtime of its own).
    pub(super) runtime: tokio::runtime::Handle,
    /// The renews and verifies running (`renew alpha`): the exit reports
    /// each as left running.
    pub(super) verbs_running: crate::reaper::InFlight,
}

/// Run until the operator quits, a signal arrives or the terminal closes;
/// returns why (`quit`, `SIGTERM`, `terminal closed`, ...).
///
/// # Errors
/// A signal handler could not be installed, or a frame failed to draw for a
/// reason other than a closed terminal.
pub(super) async fn run(
    terminal: &mut Term,
    mut app: App,
    mut rx: EventReceiver,
    teardowns: &JobRunner,
    recorder: &Recorder,
    wiring: Wiring,
) -> Result<&'static str> {
    // From here on this thread draws and reads nothing: asserted in the
    // read paths (debug builds).
    let _render = crate::render_thread::enter();
    let Wiring {
        stackless,
        io,
        control,
        runtime,
        verbs_running,
    } = wiring;
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sigterm = signal(SignalKind::terminate()).wrap_err("cannot watch SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).wrap_err("cannot watch SIGHUP")?;
    let mut sigint = signal(SignalKind::interrupt()).wrap_err("cannot watch SIGINT")?;
    if !draw(terminal, &mut app)? {
        return Ok("terminal closed");
    }
    let mut why = "quit";
    let mut actions = Actions {
        jobs: JobStarter::spawn(teardowns.clone())
            .wrap_err("cannot start the job-starter thread")?,
        recorder,
        queue_down: QueueDownWiring {
            program: stackless.clone(),
            path: teardowns.path().to_path_buf(),
            dry_run: teardowns.config().dry_run,
        },
        verbs: verb_runner(&stackless, teardowns, recorder, verbs_running),
        stackless,
        control,
        runtime,
        io,
        copies: Vec::new(),
    };
    loop {
        crate::fault::inject("render");
        let event = tokio::select! {
            Some(event) = rx.recv() => event,
            _ = ticker.tick() => Event::Tick,
            _ = sigterm.recv() => Event::Terminate("SIGTERM"),
            _ = sighup.recv() => Event::Terminate("SIGHUP"),
            _ = sigint.recv() => Event::Terminate("SIGINT"),
            else => break,
        };
        if let Event::Terminate(signal) = &event {
            why = signal;
        }
        actions.handle(&mut app, event);
        // Apply whatever else is already queued before drawing once.
        while let Ok(event) = rx.try_recv() {
            actions.handle(&mut app, event);
        }
        let copies = std::mem::take(&mut actions.copies);
        if !copies.iter().all(|text| copy(terminal, text)) {
            why = "terminal closed";
            break;
        }
        if app.quitting() {
            break;
        }
        if !draw(terminal, &mut app)? {
            why = "terminal closed";
            break;
        }
        // What the frame did not wait for: the Activity lines of what a
        // new snapshot changed (drawn in a second frame when there are
        // any), then freeing the snapshot it replaced.
        if let Some((previous, logged)) = app.settle() {
            if logged && !draw(terminal, &mut app)? {
                why = "terminal closed";
                break;
            }
            drop(previous);
        }
    }
    Ok(why)
}

/// Draw one frame. `Ok(false)` when the terminal is gone (the window was
/// closed: writes fail with an I/O error), which ends the console like a
/// hang-up. While a panic is being reported, nothing is drawn and this
/// thread waits for the hook to end the process. The App is told when the
/// frame began (`App::drawn`: a confirmation dialog shown from then on).
fn draw(terminal: &mut Term, app: &mut App) -> Result<bool> {
    app.drawn(std::time::Instant::now());
    let app = &*app;
    match with_terminal(|| {
        terminal
            .draw(|frame| crate::ui::draw(frame, app))
            .map(|_| ())
    }) {
        None => loop {
            std::thread::park();
        },
        Some(Ok(())) => Ok(true),
        Some(Err(error)) => {
            tracing::warn!("terminal write failed: {error}; quitting");
            Ok(false)
        }
    }
}

/// What the loop does with the UI's commands.
/// What runs the operator's renews and verifies (`L`, `v`): the same
/// store, stackless program and dry run as the teardowns.
fn verb_runner(
    stackless: &OsString,
    teardowns: &JobRunner,
    recorder: &Recorder,
    running: crate::reaper::InFlight,
) -> crate::reaper::verbs::VerbRunner {
    crate::reaper::verbs::VerbRunner {
        path: teardowns.path().to_owned(),
        program: stackless.to_string_lossy().into_owned(),
        dry_run: teardowns.config().dry_run,
        recorder: recorder.clone(),
        clock: std::sync::Arc::new(unix_now),
        deadline: crate::reaper::verbs::DEADLINE,
        running,
    }
}

struct Actions<'a> {
    /// Starts the operator's teardowns, off this thread.
    jobs: JobStarter,
    recorder: &'a Recorder,
    /// What `d`'s queued teardown runs and re-reads.
    queue_down: QueueDownWiring,
    /// Runs the operator's renews and verifies, each on a thread of its
    /// own (`L`, `v`).
    verbs: crate::reaper::verbs::VerbRunner,
    /// The stackless CLI `c` runs.
    stackless: OsString,
    /// This console's reaper (`P`, `R`).
    control: crate::reaper::ReaperControl,
    /// Where `c`'s cancel task runs.
    runtime: tokio::runtime::Handle,
    /// The reads, off this thread.
    io: IoWorker,
    /// Texts `y`/`Y` asked to copy, written before the next frame.
    copies: Vec<String>,
}

/// Write the OSC 52 sequence for `text` to the terminal (through its
/// handle, so it is ordered with the frames); `false` when the terminal
/// is gone.
fn copy(terminal: &mut Term, text: &str) -> bool {
    use std::io::Write as _;
    let sequence = crate::ui::clipboard::osc52(text);
    match with_terminal(|| {
        let backend = terminal.backend_mut();
        backend
            .write_all(sequence.as_bytes())
            .and_then(|()| backend.flush())
    }) {
        None => loop {
            std::thread::park();
        },
        Some(Ok(())) => true,
        Some(Err(error)) => {
            tracing::warn!("terminal write failed: {error}; quitting");
            false
        }
    }
}

impl Actions<'_> {
    fn handle(&mut self, app: &mut App, event: Event) {
        if let Event::Snapshot(snapshot) = &event {
            // The activities and the console log are redacted by the
            // newest values read.
            self.recorder.secrets().update(&snapshot.redactor);
        }
        super::logging::trace(&event);
        let command = app.handle(event, unix_now());
        // The UI showed these itself (refusals): audit and log them, on
        // the I/O worker.
        for activity in app.drain_outbox() {
            self.io.persist(activity);
        }
        match command {
            Some(Effect::Reap { instance, attempt }) => {
                self.start_job(instance, attempt, Intent::Reap);
            }
            Some(Effect::TearDown { instance, attempt }) => {
                self.start_job(instance, attempt, Intent::TearDown);
            }
            Some(Effect::Bulk {
                intent,
                jobs,
                queued,
            }) => {
                self.jobs.start_bulk(
                    jobs.into_iter()
                        .map(|(instance, attempt)| Job {
                            instance,
                            attempt,
                            actor: Actor::Operator,
                            intent,
                        })
                        .collect(),
                );
                super::queue_down::spawn_all(
                    &self.runtime,
                    self.queue_down.clone(),
                    queued,
                    self.recorder.clone(),
                    unix_now,
                );
            }
            Some(Effect::Io(request)) => self.io.send(request),
            Some(Effect::CancelOperation { id, instance, verb }) => {
                // On a task: the render loop never waits for stackless.
                cancel::spawn(
                    &self.runtime,
                    self.stackless.clone(),
                    CancelRequest { id, instance, verb },
                    self.recorder.clone(),
                    unix_now,
                );
            }
            Some(Effect::QueueDown { instance, behind }) => super::queue_down::spawn(
                &self.runtime,
                self.queue_down.clone(),
                instance,
                behind,
                self.recorder.clone(),
                unix_now,
            ),
            Some(Effect::Verbs(requests)) => {
                // Each on a thread of its own: the render loop never waits.
                for request in requests {
                    // A thread that cannot start has said so as an Activity.
                    let _ = self.verbs.spawn(request);
                }
            }
            Some(Effect::PauseReaper(paused)) => self.control.set_paused(paused),
            Some(Effect::ReaperPass) => self.control.request_pass(),
            Some(Effect::Copy { text }) => self.copies.push(text),
            Some(Effect::Quit) | None => {}
        }
    }

    /// The operator's `r` or `d` on one instance, as a job of its own,
    /// started by the `job-starter` thread.
    fn start_job(&self, instance: Instance, attempt: Option<ReapAttempt>, intent: Intent) {
        self.jobs.start(Job {
            instance,
            attempt,
            actor: Actor::Operator,
            intent,
        });
    }
}
