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
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr as _};
use tokio::signal::unix::{SignalKind, signal};

use super::actions::Actions;
use super::io_worker::IoWorker;
use super::terminal::{Term, with_terminal};
use crate::event::{Event, EventReceiver};
use crate::reaper::JobRunner;
use crate::recorder::Recorder;
use crate::ui::App;

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
    /// The console's own recording, when it records
    /// (`super::recording`).
    pub(super) recording: Option<super::recording::Feeding>,
}

/// What carries out the App's effects for the one render loop: the
/// console's [`Actions`] on one host (jobs, workers, the reaper's
/// control), `crate::fleet`'s hosts over a fleet (commands to each host's
/// agent, links kept). The loop is the same for both.
pub(crate) trait Carrier {
    /// The shortest time between two frames while events pour in (one
    /// host: none, a frame per batch; over a fleet: 16 ms).
    const FRAME: Duration = Duration::ZERO;
    /// How often [`Carrier::poll`] is due at least, when it is wanted
    /// (over a fleet: links checked for silence, retries started).
    const POLL: Option<Duration> = None;

    /// Apply one event to `app` and carry out what it asks.
    fn handle(&mut self, app: &mut App, event: Event);

    /// The texts copied since the last call (`y`, `Y`), for the terminal
    /// (OSC 52).
    fn take_copies(&mut self, app: &mut App) -> Vec<String>;

    /// After each batch of events, and at least every [`Carrier::POLL`].
    fn poll(&mut self, _app: &mut App) {}
}

impl Carrier for Actions<'_> {
    fn handle(&mut self, app: &mut App, event: Event) {
        Actions::handle(self, app, event);
    }

    fn take_copies(&mut self, _app: &mut App) -> Vec<String> {
        Actions::take_copies(self)
    }
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
    rx: EventReceiver,
    teardowns: &JobRunner,
    recorder: &Recorder,
    wiring: Wiring,
) -> Result<&'static str> {
    let Wiring {
        stackless,
        io,
        control,
        runtime,
        verbs_running,
        recording,
    } = wiring;
    let mut actions = Actions::new(
        teardowns,
        recorder,
        stackless,
        (control, runtime, io),
        verbs_running,
    )
    .wrap_err("cannot start the job-starter thread")?;
    if let Some(feeding) = recording {
        app.start_activity_journal();
        actions.record_into(feeding);
    }
    let why = drive(terminal, &mut app, rx, &mut actions).await;
    actions.finish_recording();
    why
}

/// The one render loop, for one host or a fleet: every event applied in
/// arrival order through `carrier` (whatever else is queued too, until a
/// frame is due), a frame when one is owed ([`App::needs_draw`]) at most
/// one per [`Carrier::FRAME`], the tick each second, the carrier's poll;
/// returns why it ended (`quit`, a signal's name, `terminal closed`).
///
/// # Errors
/// A signal handler could not be installed, or a frame failed to draw for a
/// reason other than a closed terminal.
pub(crate) async fn drive<C: Carrier>(
    terminal: &mut Term,
    app: &mut App,
    mut rx: EventReceiver,
    carrier: &mut C,
) -> Result<&'static str> {
    // From here on this thread draws and reads nothing: asserted in the
    // read paths (debug builds).
    let _render = crate::render_thread::enter();
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut poll = tokio::time::interval(C::POLL.unwrap_or(Duration::from_secs(3600)));
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sigterm = signal(SignalKind::terminate()).wrap_err("cannot watch SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).wrap_err("cannot watch SIGHUP")?;
    let mut sigint = signal(SignalKind::interrupt()).wrap_err("cannot watch SIGINT")?;
    if !draw(terminal, app)? {
        return Ok("terminal closed");
    }
    let _ = app.needs_draw();
    let mut last_frame = Instant::now();
    let mut dirty = false;
    let mut why = "quit";
    loop {
        crate::fault::inject("render");
        let frame_at = tokio::time::Instant::from_std(last_frame + C::FRAME);
        let event = tokio::select! {
            Some(event) = rx.recv() => Some(event),
            _ = ticker.tick() => Some(Event::Tick),
            _ = poll.tick(), if C::POLL.is_some() => None,
            () = tokio::time::sleep_until(frame_at), if dirty => None,
            _ = sigterm.recv() => Some(Event::Terminate("SIGTERM")),
            _ = sighup.recv() => Some(Event::Terminate("SIGHUP")),
            _ = sigint.recv() => Some(Event::Terminate("SIGINT")),
            else => break,
        };
        if let Some(event) = event {
            if let Event::Terminate(signal) = &event {
                why = signal;
            }
            carrier.handle(app, event);
            // Apply whatever else is already queued before drawing once
            // (over a fleet, until a frame is due).
            while !(C::FRAME > Duration::ZERO && dirty && last_frame.elapsed() >= C::FRAME)
                && let Ok(event) = rx.try_recv()
            {
                carrier.handle(app, event);
                dirty |= C::FRAME > Duration::ZERO && app.needs_draw();
            }
        }
        carrier.poll(app);
        let copies = carrier.take_copies(app);
        if !copies
            .iter()
            .all(|text| crate::console::terminal::copy(terminal, text))
        {
            why = "terminal closed";
            break;
        }
        if app.quitting() {
            break;
        }
        dirty |= app.needs_draw();
        if !dirty || last_frame.elapsed() < C::FRAME {
            continue;
        }
        if !draw(terminal, app)? {
            why = "terminal closed";
            break;
        }
        last_frame = Instant::now();
        dirty = false;
        // What the frame did not wait for: the Activity lines of what a
        // new snapshot changed (drawn in a second frame when there are
        // any), then freeing the snapshot it replaced.
        if let Some((previous, logged)) = app.settle() {
            if logged && !draw(terminal, app)? {
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
