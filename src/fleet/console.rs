//! The console over a fleet (`--fleet FILE`, or `--controller` twice or
//! more, with no subcommand): one `ssh -T -o BatchMode=yes` per host
//! running its agent, `serve --stdio` (docs/protocol.md; planned as one
//! `--controller ... serve --stdio` plans it: the same forwarded local
//! safety flags, host key checking on), all started at once; the fleet
//! view ([`FleetApp`]) is fed every host's lines and link, drawn on this
//! terminal, and its commands go to the owning host's agent.
//!
//! Each connection has three threads: `fleet-read-N` reads the host's
//! stdout line by line (at most [`super::link::MAX_LINE`] bytes a
//! line, as `snapshot --follow` over a fleet reads it), parses each line
//! as JSON and puts it
//! in the connection's own bounded queue ([`LINE_QUEUE`] lines: a flooding
//! host blocks only its own reader, and its memory is bounded), waking the
//! main loop once until the loop has drained that queue; `fleet-write-N`
//! writes the view's commands to ssh's stdin from a bounded channel
//! ([`conn::COMMAND_QUEUE`]: when it is full the command is refused at once,
//! never waited for, so a stopped host never holds the screen);
//! `fleet-stderr-N` keeps the tail of ssh's stderr for the host's error.
//!
//! The main thread keeps each host's link by the rules of `snapshot
//! --follow` over a fleet ([`super::link::Link`]: connecting,
//! connected, stale after 3 heartbeats of silence or when its ssh ends,
//! failed when it cannot work until someone acts; a stale host is
//! connected again after its backoff, a failed one is not), reports each
//! change to the view, and draws a frame only when something drawn
//! changed ([`FleetApp::needs_draw`]: heartbeats cost none), at most one
//! per [`FRAME`] while lines pour in, and at least once a second (the
//! view's tick is drawn). The view's
//! quit, SIGTERM, SIGINT or SIGHUP: the terminal is given back, every
//! ssh's stdin closed (each agent stops as at the end of its stdin: its
//! teardowns stopped and audited, docs/protocol.md "Stopping"), the ssh
//! processes given `super::hosts::STOP_WAIT`, then the rest killed; exit 0.

use std::io::{self, Write as _};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::follow::catch_signals;
use super::hosts::{Hosts, now};
use crate::console::terminal::{self, RestoreOnDrop, Term, with_terminal};
use crate::event::{Event, EventReceiver, EventSender};
use crate::launcher::fleet::FleetHost;
use crate::launcher::plan::Plan;
use crate::ui::fleet::FleetApp;

/// The shortest time between two frames while lines pour in (about 60
/// frames a second).
const FRAME: Duration = Duration::from_millis(16);

/// The view's tick ([`FleetApp::tick`]), and the longest time between
/// two frames.
const TICK: Duration = Duration::from_secs(1);

/// The longest the main loop sleeps: links are checked (silence, a retry
/// due) at least this often.
const POLL: Duration = Duration::from_millis(200);

/// Run the fleet view over every host of `plans` (`plans[i]` reaches
/// `hosts[i]`, in [`crate::launcher::plan::Mode::Serve`]) on this terminal, its
/// times shown in `zone`, until the operator quits or a signal; exit 0 (1
/// when the terminal cannot be used).
pub(crate) fn run(hosts: &[FleetHost], plans: &[Plan], zone: jiff::tz::TimeZone) -> ExitCode {
    let (events, mut received): (EventSender, EventReceiver) =
        tokio::sync::mpsc::unbounded_channel();
    let signal_events = events.clone();
    let _signals = catch_signals("fleet-signals", move |name| {
        let _ = signal_events.send(Event::Terminate(name));
    });
    install_panic_hook();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        let _ = writeln!(io::stderr(), "stackless-tui: cannot start the fleet's loop");
        return ExitCode::FAILURE;
    };
    let Some(entered) = with_terminal(terminal::enter) else {
        // Another thread panicked already; its hook exits the process.
        loop {
            std::thread::park();
        }
    };
    let restore = RestoreOnDrop;
    let mut term = match entered {
        Ok(term) => term,
        Err(error) => return failed(&format!("{error:#}"), restore),
    };
    let input = events.clone();
    if let Err(error) = crate::console::input::spawn_with(move |event, read| {
        input.send(Event::InputAt(event, read)).is_ok()
    }) {
        return failed(
            &format!("cannot start the terminal input thread: {error}"),
            restore,
        );
    }
    let (_, now_ms) = now();
    let names = hosts.iter().map(|host| host.name().to_owned()).collect();
    let mut app = FleetApp::new(names, now_ms);
    app.set_zone(zone);
    for (index, host) in hosts.iter().enumerate() {
        app.set_alias(index, &host.target.host);
    }
    let Some(mut all) = Hosts::new(hosts, plans, events) else {
        return failed("cannot start the connection starter thread", restore);
    };
    let _why = runtime.block_on(event_loop(&mut term, &mut app, &mut all, &mut received));
    leave_terminal(term, restore);
    all.stop();
    ExitCode::SUCCESS
}

/// The terminal could not be used: given back, the reason said, exit 1.
fn failed(message: &str, restore: RestoreOnDrop) -> ExitCode {
    drop(restore);
    let _ = writeln!(io::stderr(), "stackless-tui: {message}");
    ExitCode::FAILURE
}

/// A panic in any thread: the terminal given back before the report
/// (every ssh gets SIGTERM as this process exits: `PR_SET_PDEATHSIG`),
/// exit 101.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        terminal::close_for_panic();
        previous(info);
        std::process::exit(101);
    }));
}

/// Give the terminal back once: restored here, and neither `term` nor
/// `restore` dropped (a second "leave the alternate screen" would move
/// the cursor; a closed terminal's drop would print to a dead stderr).
fn leave_terminal(term: Term, restore: RestoreOnDrop) {
    terminal::restore_terminal();
    std::mem::forget(restore);
    std::mem::forget(term);
}

/// Draw one frame; `false` when the terminal is gone. The instant it
/// began is the view's ([`FleetApp::drawn`]): a question drawn in it is
/// answered only by keys read since.
fn draw(term: &mut Term, app: &mut FleetApp) -> bool {
    app.drawn(Instant::now());
    let (_, now_ms) = now();
    match with_terminal(|| {
        term.draw(|frame| crate::ui::fleet::draw(frame, &*app, now_ms))
            .map(|_| ())
    }) {
        // A panic took the terminal back; its hook exits the process.
        None => loop {
            std::thread::park();
        },
        Some(result) => result.is_ok(),
    }
}

/// The loop: every event applied in arrival order (whatever else is
/// queued too, until a frame is due), links checked, the tick; a frame
/// when something drawn changed ([`FleetApp::needs_draw`], or the
/// terminal's size), at most one per [`FRAME`], at least once a [`TICK`]
/// (the tick is drawn). Returns why it ended (`quit`, a signal's name,
/// `terminal closed`).
async fn event_loop(
    term: &mut Term,
    app: &mut FleetApp,
    all: &mut Hosts<'_>,
    received: &mut EventReceiver,
) -> &'static str {
    let mut last_tick = Instant::now();
    let mut last_frame: Option<Instant> = None;
    let mut dirty = true;
    loop {
        let frame_due = last_frame.map_or_else(Instant::now, |at| at + FRAME);
        if dirty && Instant::now() >= frame_due {
            if !draw(term, app) {
                return "terminal closed";
            }
            last_frame = Some(Instant::now());
            dirty = false;
        }
        let mut until = (last_tick + TICK).min(Instant::now() + POLL);
        if dirty {
            until = until.min(frame_due);
        }
        let wait = until.saturating_duration_since(Instant::now());
        let mut next = match tokio::time::timeout(wait, received.recv()).await {
            Ok(Some(first)) => Some(first),
            Err(_) => None,
            Ok(None) => return "no input",
        };
        while let Some(event) = next {
            match handle(event, app, all) {
                Err(why) => return why,
                Ok(resized) => dirty |= resized || app.needs_draw(),
            }
            for text in app.take_copies() {
                if !terminal::copy(term, &text) {
                    return "terminal closed";
                }
            }
            if app.quit() {
                return "quit";
            }
            if dirty && last_frame.is_none_or(|at| at.elapsed() >= FRAME) {
                break;
            }
            next = received.try_recv().ok();
        }
        all.check(app);
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            let effects = app.tick(now().1);
            for effect in effects {
                all.send(app, effect);
            }
        }
        dirty |= app.needs_draw();
        if app.quit() {
            return "quit";
        }
    }
}

/// Apply one event: `Ok(true)` when the terminal was resized (a frame is
/// owed at the new size), `Err(why)` when the loop is to end (a signal).
/// The one-host console's events (a snapshot, a role) never come here.
fn handle(event: Event, app: &mut FleetApp, all: &mut Hosts) -> Result<bool, &'static str> {
    use crossterm::event::Event as Term;
    match event {
        Event::Terminate(name) => return Err(name),
        Event::InputAt(Term::Key(key), read) => {
            for effect in app.key_at(key, read, now().1) {
                all.send(app, effect);
            }
        }
        Event::Input(Term::Key(key)) => {
            for effect in app.key_at(key, Instant::now(), now().1) {
                all.send(app, effect);
            }
        }
        Event::InputAt(Term::Mouse(mouse), _) | Event::Input(Term::Mouse(mouse)) => {
            app.mouse(mouse);
        }
        Event::InputAt(Term::Resize(..), _) | Event::Input(Term::Resize(..)) => return Ok(true),
        Event::Host(wake) => all.wake(wake, app),
        _ => {}
    }
    Ok(false)
}

#[cfg(test)]
#[path = "console_tests.rs"]
mod tests;
