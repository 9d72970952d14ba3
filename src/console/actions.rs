//! What the UI's commands become, for the render loop and for
//! `serve --stdio` alike ([`Actions`]): teardowns started by the
//! `job-starter` thread, renews and verifies on `verb` threads, a cancel
//! or a queued teardown on a tokio task, reads on the I/O worker, the
//! reaper's pause and pass through its control. Nothing here waits for
//! any of them.

use std::ffi::OsString;

use super::io_worker::IoWorker;
use super::job_starter::JobStarter;
use super::queue_down::QueueDownWiring;
use crate::controller::cancel::{self, CancelRequest};
use crate::event::Event;
use crate::model::activity::Actor;
use crate::model::time::unix_now;
use crate::model::{Instance, ReapAttempt};
use crate::reaper::{Intent, Job, JobRunner};
use crate::recorder::Recorder;
use crate::ui::{App, Effect};

/// What runs the operator's renews and verifies (`L`, `v`): the same
/// store, stackless program and dry run as the teardowns.
pub(super) fn verb_runner(
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

/// What the UI's commands are handed to.
pub(super) struct Actions<'a> {
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
    /// The console's own recording, fed from here (`super::recording`;
    /// none for the agent, whose stream `record` keeps, or when off).
    recording: Option<super::recording::Feeding>,
}

impl<'a> Actions<'a> {
    /// What carries out the UI's commands: the `job-starter` thread is
    /// started here.
    ///
    /// # Errors
    /// The `job-starter` thread could not be started.
    pub(super) fn new(
        teardowns: &JobRunner,
        recorder: &'a Recorder,
        stackless: OsString,
        wiring: (
            crate::reaper::ReaperControl,
            tokio::runtime::Handle,
            IoWorker,
        ),
        verbs_running: crate::reaper::InFlight,
    ) -> std::io::Result<Self> {
        let (control, runtime, io) = wiring;
        Ok(Self {
            jobs: JobStarter::spawn(teardowns.clone())?,
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
            recording: None,
        })
    }

    /// Feed the console's recording from every event handled.
    pub(super) fn record_into(&mut self, feeding: super::recording::Feeding) {
        self.recording = Some(feeding);
    }

    /// Stop feeding the recording: its last lines written, its lock
    /// released.
    pub(super) fn finish_recording(&mut self) {
        if let Some(feeding) = self.recording.take() {
            feeding.finish();
        }
    }

    /// The I/O worker the reads go to.
    pub(super) const fn io(&self) -> &IoWorker {
        &self.io
    }

    /// The texts `y`/`Y` asked to copy since the last call.
    pub(super) fn take_copies(&mut self) -> Vec<String> {
        std::mem::take(&mut self.copies)
    }

    /// Apply `event` to `app`, audit what the UI refused by itself, and
    /// carry out the command it returned.
    pub(super) fn handle(&mut self, app: &mut App, event: Event) {
        if let Event::Snapshot(snapshot) = &event {
            // The activities and the console log are redacted by the
            // newest values read.
            self.recorder.secrets().update(&snapshot.redactor);
        }
        super::logging::trace(&event);
        if let Some(feeding) = self.recording.as_mut() {
            feeding.before(app, &event);
        }
        let command = app.handle(event, unix_now());
        if let Some(feeding) = self.recording.as_mut() {
            feeding.after(app);
        }
        self.persist_outbox(app);
        self.carry_out(command);
    }

    /// The UI showed these itself (refusals): audit and log them, on the
    /// I/O worker.
    pub(super) fn persist_outbox(&self, app: &mut App) {
        for activity in app.drain_outbox() {
            self.io.persist(activity);
        }
    }

    /// Carry out one command of the UI's, waiting for none of it.
    pub(super) fn carry_out(&mut self, command: Option<Effect>) {
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
            // Over a fleet only (`crate::fleet` carries it out).
            Some(Effect::Fleet(_) | Effect::Quit | Effect::Seek(_) | Effect::Timeline(_))
            | None => {}
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
