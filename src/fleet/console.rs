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
//! processes given [`STOP_WAIT`], then the rest killed; exit 0.

use std::io::{self, Write as _};
use std::process::ExitCode;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use super::follow::{catch_signals, ended_error};
use super::link::{Link as Rules, MAX_CONNECTING, next_wave, too_long};
use crate::console::terminal::{self, RestoreOnDrop, Term, with_terminal};
use crate::launcher::fleet::FleetHost;
use crate::launcher::plan::Plan;
use crate::model::fleet::notes::{Outstanding, Unanswered};
use crate::model::fleet::wire::Message;
use crate::model::fleet::{Link, LinkState};
use crate::ui::fleet::{FleetApp, FleetEffect};

use super::conn::{Conn, HostEvent, LINE_QUEUE, Wake, route, starter};

/// The shortest time between two frames while lines pour in (about 60
/// frames a second).
const FRAME: Duration = Duration::from_millis(16);

/// The view's tick ([`FleetApp::tick`]), and the longest time between
/// two frames.
const TICK: Duration = Duration::from_secs(1);

/// The longest the main loop sleeps: links are checked (silence, a retry
/// due) at least this often.
const POLL: Duration = Duration::from_millis(200);

/// How long the ssh processes get to end after their stdin was closed at
/// quit (their agents stop their teardowns within 5 s: those still running
/// then are the agents' to stop) before they are killed.
pub(crate) const STOP_WAIT: Duration = Duration::from_secs(3);

/// One host: its link, its connection, and which start it is (wake-ups of
/// an earlier one are dropped).
struct Host<'a> {
    name: &'a str,
    plan: &'a Plan,
    link: Rules,
    generation: u64,
    conn: Option<Conn>,
    /// Not started yet: it waits for a place in a wave
    /// ([`MAX_CONNECTING`]).
    waiting: bool,
    /// Asked of the starter thread; its connection not handed back yet.
    starting: bool,
    /// The commands its connection sent and its agent has not answered.
    unanswered: Unanswered,
}

/// The current time as (unix seconds, unix milliseconds).
fn now() -> (i64, i64) {
    let ms = jiff::Timestamp::now().as_millisecond();
    (ms.div_euclid(1000), ms)
}

/// Run the fleet view over every host of `plans` (`plans[i]` reaches
/// `hosts[i]`, in [`crate::launcher::plan::Mode::Serve`]) on this terminal, its
/// times shown in `zone`, until the operator quits or a signal; exit 0 (1
/// when the terminal cannot be used).
pub(crate) fn run(hosts: &[FleetHost], plans: &[Plan], zone: jiff::tz::TimeZone) -> ExitCode {
    let (wake, woken) = mpsc::channel::<Wake>();
    let signal_wake = wake.clone();
    let _signals = catch_signals("fleet-signals", move |name| {
        let _ = signal_wake.send(Wake::Signal(name));
    });
    install_panic_hook();
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
    let input = wake.clone();
    if let Err(error) = crate::console::input::spawn_with(move |event, read| {
        input.send(Wake::Input(event, read)).is_ok()
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
    let mut all: Vec<Host> = hosts
        .iter()
        .zip(plans)
        .zip(1u64..)
        .map(|((host, plan), seed)| Host {
            name: host.name(),
            plan,
            link: Rules::new(now().0).seeded(seed),
            generation: 0,
            conn: None,
            waiting: true,
            starting: false,
            unanswered: Unanswered::default(),
        })
        .collect();
    let Some(starts) = starter(plans.to_vec(), wake.clone()) else {
        return failed("cannot start the connection starter thread", restore);
    };
    let _why = event_loop(&mut term, &mut app, &mut all, (&wake, &woken, &starts));
    leave_terminal(term, restore);
    stop_all(&mut all);
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

/// The main loop: every wake-up applied in arrival order (whatever else is
/// queued too, until a frame is due), links checked, the tick; a frame
/// when something drawn changed ([`FleetApp::needs_draw`], or the
/// terminal's size), at most one per [`FRAME`], at least once a [`TICK`]
/// (the tick is drawn). Returns why it ended (`quit`, a signal's name,
/// `terminal closed`).
fn event_loop(
    term: &mut Term,
    app: &mut FleetApp,
    all: &mut [Host],
    (wake, woken, starts): (&Sender<Wake>, &Receiver<Wake>, &Sender<(usize, u64)>),
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
        let mut next = match woken.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(first) => Some(first),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return "no input",
        };
        while let Some(event) = next {
            match handle(event, app, all, wake) {
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
            next = woken.try_recv().ok();
        }
        check_links(all, app, starts);
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            let effects = app.tick(now().1);
            for effect in effects {
                send(all, app, effect);
            }
        }
        dirty |= app.needs_draw();
        if app.quit() {
            return "quit";
        }
    }
}

/// Apply one wake-up: `Ok(true)` when the terminal was resized (a frame
/// is owed at the new size), `Err(why)` when the loop is to end (a
/// signal).
fn handle(
    event: Wake,
    app: &mut FleetApp,
    all: &mut [Host],
    wake: &Sender<Wake>,
) -> Result<bool, &'static str> {
    match event {
        Wake::Signal(name) => return Err(name),
        Wake::Input(crossterm::event::Event::Key(key), read) => {
            let effects = app.key_at(key, read, now().1);
            for effect in effects {
                send(all, app, effect);
            }
        }
        Wake::Input(crossterm::event::Event::Mouse(mouse), _) => app.mouse(mouse),
        Wake::Input(crossterm::event::Event::Resize(..), _) => return Ok(true),
        Wake::Input(..) => {}
        Wake::Host(index, generation) => drain(index, generation, app, all, wake),
        Wake::Started(index, generation, started) => {
            started_conn(index, generation, started, app, all, wake);
        }
    }
    Ok(false)
}

/// Apply what host `index`'s connection `generation` queued (at most
/// [`LINE_QUEUE`] lines at a time: a flooding host then waits for its
/// next turn behind the others' wake-ups).
fn drain(index: usize, generation: u64, app: &mut FleetApp, all: &mut [Host], wake: &Sender<Wake>) {
    let Some(host) = all.get_mut(index) else {
        return;
    };
    if host.generation != generation {
        return;
    }
    if let Some(conn) = &host.conn {
        conn.pending.store(false, Ordering::SeqCst);
    }
    for _ in 0..LINE_QUEUE {
        let Some(conn) = &host.conn else {
            return;
        };
        match conn.queue.try_recv() {
            Ok(event) => apply(index, host, event, app),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
        }
    }
    if let Some(conn) = &host.conn
        && !conn.pending.swap(true, Ordering::SeqCst)
    {
        let _ = wake.send(Wake::Host(index, generation));
    }
}

/// Host `index`'s connection `generation`, started by the starter thread:
/// kept (and whatever it already queued drained) when that start is still
/// current, else its ssh killed; a start that failed fails the host.
fn started_conn(
    index: usize,
    generation: u64,
    started: Result<Conn, String>,
    app: &mut FleetApp,
    all: &mut [Host],
    wake: &Sender<Wake>,
) {
    let Some(host) = all.get_mut(index) else {
        return;
    };
    if host.generation != generation || !host.starting {
        if let Ok(conn) = started {
            kill_conn(conn);
        }
        return;
    }
    host.starting = false;
    match started {
        Ok(conn) => {
            host.conn = Some(conn);
            drain(index, generation, app, all, wake);
        }
        Err(error) => {
            let (now_s, now_ms) = now();
            if host.link.fail(now_s, error) {
                app.link(index, view_link(&host.link), now_ms);
            }
        }
    }
}

/// Host `index`'s link as the view takes it.
fn view_link(link: &Rules) -> Link {
    Link {
        state: link.state,
        since: link.since,
        error: link.error.clone(),
        retry_at: link.retry_at,
        skew: link.skew,
    }
}

/// Apply one of host `index`'s queued events: its line to the view, its
/// link's change reported (a failed host's ssh killed).
fn apply(index: usize, host: &mut Host, event: HostEvent, app: &mut FleetApp) {
    let (now_s, now_ms) = now();
    let changed = match event {
        HostEvent::Line(message, line) => {
            if matches!(host.link.state, LinkState::Stale | LinkState::Failed) {
                return;
            }
            let skew = host.link.skew;
            let changed = host.link.line(now_s, &line) || host.link.skew != skew;
            if let Message::Reply(reply) = &*message {
                host.unanswered.answered(&reply.id);
            }
            if host.link.state != LinkState::Failed {
                app.message(index, *message, now_ms);
            }
            changed
        }
        HostEvent::NotProtocol(error) => host.link.fail(now_s, error),
        HostEvent::TooLong => host.link.fail(now_s, too_long()),
        HostEvent::Ended(status, stderr) => {
            // Its queue is empty (the end comes last); its writer stops.
            host.conn = None;
            let (failure, error) = ended_error(host.plan, status, &stderr);
            let changed = host.link.ended(now_s, failure, error);
            let lost = host.unanswered.lost();
            report_lost(index, host, app, lost);
            changed
        }
    };
    if changed {
        if host.link.state == LinkState::Failed {
            kill(index, host, app);
        }
        app.link(index, view_link(&host.link), now_ms);
    }
}

/// Each command of `lost` (sent on host `index`'s connection, never
/// answered) told as lost with it: a `console` Activity line, never taken
/// as done.
fn report_lost(index: usize, host: &Host, app: &mut FleetApp, lost: Vec<Outstanding>) {
    for command in lost {
        let instance = command.instance.clone().unwrap_or_default();
        let words = command.lost_text(host.name);
        app.note(index, "lost", &instance, words, now().1);
    }
}

/// Every host's link at this time: a silent one made stale (its ssh
/// killed); then, while fewer than [`MAX_CONNECTING`] are connecting, a
/// waiting one or a stale one whose retry is due is started (by the
/// starter thread: `starts`); each change reported to the view.
fn check_links(all: &mut [Host], app: &mut FleetApp, starts: &Sender<(usize, u64)>) {
    let (now_s, now_ms) = now();
    for (index, host) in all.iter_mut().enumerate() {
        if host.waiting {
            continue;
        }
        // A line read but still queued counts: silence is the host's, not
        // this loop's.
        if let Some(conn) = &host.conn {
            let arrived = conn.arrived.load(Ordering::SeqCst);
            if matches!(
                host.link.state,
                LinkState::Connecting | LinkState::Connected
            ) {
                host.link.last_line = host.link.last_line.max(arrived);
            }
        }
        if host.link.check_silence(now_s) {
            kill(index, host, app);
            app.link(index, view_link(&host.link), now_ms);
        }
    }
    let connecting = all.iter().filter(|host| counts_connecting(host)).count();
    let free = MAX_CONNECTING.saturating_sub(connecting);
    if free == 0 {
        return;
    }
    let candidates = all.iter().enumerate().filter_map(|(index, host)| {
        if host.waiting {
            Some((index, None))
        } else if host.link.due(now_s) {
            Some((index, host.link.retry_at))
        } else {
            None
        }
    });
    for index in next_wave(candidates, free) {
        if let Some(host) = all.get_mut(index) {
            start(index, host, starts, app);
        }
    }
}

/// It takes a place in the connecting wave: asked of the starter, or its
/// ssh running with no `hello` yet.
fn counts_connecting(host: &Host) -> bool {
    host.starting || (host.conn.is_some() && host.link.state == LinkState::Connecting)
}

/// Kill host `index`'s connection: its ssh killed, its queue and command
/// channel dropped (its reader and writer stop), a new generation, so
/// whatever it still sends is dropped (a start still with the starter
/// thread too), and each command it left unanswered told as lost.
fn kill(index: usize, host: &mut Host, app: &mut FleetApp) {
    host.generation += 1;
    host.starting = false;
    if let Some(conn) = host.conn.take() {
        kill_conn(conn);
    }
    let lost = host.unanswered.lost();
    report_lost(index, host, app, lost);
}

/// Kill one connection's ssh (its reader then ends).
fn kill_conn(conn: Conn) {
    let _ = conn
        .child
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .kill();
}

/// Start host `index`'s connection (a new generation): `connecting`, its
/// ssh asked of the starter thread (`starts`: [`conn::starter`]), which
/// hands it back as [`Wake::Started`]; `failed` when that thread is gone.
fn start(index: usize, host: &mut Host, starts: &Sender<(usize, u64)>, app: &mut FleetApp) {
    let (now_s, now_ms) = now();
    host.generation += 1;
    host.waiting = false;
    host.link.restarted(now_s);
    app.link(index, view_link(&host.link), now_ms);
    if starts.send((index, host.generation)).is_ok() {
        host.starting = true;
    } else if host
        .link
        .fail(now_s, "the connection starter thread is gone".to_owned())
    {
        app.link(index, view_link(&host.link), now_ms);
    }
}

/// Send one of the view's effects: a command to its host's writer, or,
/// when it cannot go, the view told at once with a refused `reply`
/// ([`route`]).
fn send(all: &mut [Host], app: &mut FleetApp, effect: FleetEffect) {
    let FleetEffect::Send { host: index, line } = effect;
    let Some(host) = all.get_mut(index) else {
        return;
    };
    let commands = host.conn.as_ref().and_then(|conn| conn.commands.as_ref());
    let copy = line.clone();
    match route(commands, host.name, host.link.state, line) {
        Ok(()) => {
            if let Some(pushed) = host.unanswered.sent(&copy) {
                report_lost(index, host, app, vec![pushed]);
            }
        }
        Err(reply) => app.message(index, *reply, now().1),
    }
}

/// At quit: every ssh's stdin closed (each agent stops as at the end of
/// its stdin), their lines read and dropped while they stop, up to
/// [`STOP_WAIT`] for them to end, then the rest killed.
fn stop_all(all: &mut [Host]) {
    for host in all.iter_mut() {
        if let Some(conn) = &mut host.conn {
            conn.commands = None;
        }
    }
    let deadline = Instant::now() + STOP_WAIT;
    loop {
        let mut running = 0;
        for conn in all.iter().filter_map(|host| host.conn.as_ref()) {
            while conn.queue.try_recv().is_ok() {}
            let ended = conn
                .child
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .try_wait();
            if matches!(ended, Ok(None)) {
                running += 1;
            }
        }
        if running == 0 || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for conn in all.iter_mut().filter_map(|host| host.conn.take()) {
        let mut child = conn.child.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
#[path = "console_tests.rs"]
mod tests;
