//! Every host of the console over a fleet as an event source: its link
//! (`super::link`'s rules: connecting, connected, stale after silence,
//! failed; reconnect backoff; connecting waves of at most
//! [`MAX_CONNECTING`]), its connection (`super::conn`: ssh and its reader,
//! writer and stderr threads, whose wake-ups come into the one event
//! channel as [`Event::Host`]), and the commands it left unanswered (told
//! as lost with their connection, never as done).

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Sender, TryRecvError};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::conn::{Conn, Handoff, HostEvent, LINE_QUEUE, route, starter};
use super::follow::ended_error;
use super::link::{Link as Rules, MAX_CONNECTING, next_wave, too_long};
use crate::event::{Event, EventSender};
use crate::launcher::fleet::FleetHost;
use crate::launcher::plan::Plan;
use crate::model::fleet::notes::{Outstanding, Unanswered};
use crate::model::fleet::wake::HostWake;
use crate::model::fleet::wire::Message;
use crate::model::fleet::{Link, LinkState};
use crate::ui::app::over_fleet::{FleetEffect, FleetState};

/// How long the ssh processes get to end after their stdin was closed at
/// quit (their agents stop their teardowns within 5 s: those still running
/// then are the agents' to stop) before they are killed.
pub(super) const STOP_WAIT: Duration = Duration::from_secs(3);

/// The current time as (unix seconds, unix milliseconds).
pub(super) fn now() -> (i64, i64) {
    let ms = jiff::Timestamp::now().as_millisecond();
    (ms.div_euclid(1000), ms)
}

/// Every host of the fleet, in the fleet's order, and what starts their
/// connections.
pub(super) struct Hosts<'a> {
    all: Vec<Host<'a>>,
    /// Orders to the `fleet-start` thread: (host, generation).
    starts: Sender<(usize, u64)>,
    /// What it started, until taken.
    handoff: Handoff,
    /// The one event channel: the connections' wake-ups.
    events: EventSender,
}

impl<'a> Hosts<'a> {
    /// Every host of `hosts` (reached by `plans[i]`), none started yet:
    /// the first [`Hosts::check`] starts the first wave. `None` when the
    /// `fleet-start` thread cannot start.
    pub(super) fn new(
        hosts: &'a [FleetHost],
        plans: &'a [Plan],
        events: EventSender,
    ) -> Option<Self> {
        let handoff = Handoff::default();
        let starts = starter(plans.to_vec(), events.clone(), Arc::clone(&handoff))?;
        let all = hosts
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
        Some(Self {
            all,
            starts,
            handoff,
            events,
        })
    }

    /// One connection's wake-up: its queue drained into `app`, or the
    /// connection the starter handed off taken (or killed when no longer
    /// wanted).
    pub(super) fn wake(&mut self, wake: HostWake, app: &mut FleetState) {
        match wake {
            HostWake::Queued { host, generation } => {
                drain(host, generation, app, &mut self.all, &self.events);
            }
            HostWake::Started { host, generation } => {
                let taken = {
                    let mut handed = self.handoff.lock().unwrap_or_else(PoisonError::into_inner);
                    handed
                        .iter()
                        .position(|(h, g, _)| *h == host && *g == generation)
                        .map(|at| handed.swap_remove(at).2)
                };
                if let Some(started) = taken {
                    started_conn(host, generation, started, app, &mut self.all, &self.events);
                }
            }
        }
    }

    /// Every link at this time ([`check_links`]).
    pub(super) fn check(&mut self, app: &mut FleetState) {
        check_links(&mut self.all, app, &self.starts);
    }

    /// One of the view's effects sent ([`send`]).
    pub(super) fn send(&mut self, app: &mut FleetState, effect: FleetEffect) {
        send(&mut self.all, app, effect);
    }

    /// At quit ([`stop_all`]).
    pub(super) fn stop(&mut self) {
        stop_all(&mut self.all);
    }
}

/// One host: its link, its connection, and which start it is (wake-ups of
/// an earlier one are dropped).
pub(super) struct Host<'a> {
    pub(super) name: &'a str,
    pub(super) plan: &'a Plan,
    pub(super) link: Rules,
    pub(super) generation: u64,
    pub(super) conn: Option<Conn>,
    /// Not started yet: it waits for a place in a wave
    /// ([`MAX_CONNECTING`]).
    pub(super) waiting: bool,
    /// Asked of the starter thread; its connection not handed back yet.
    pub(super) starting: bool,
    /// The commands its connection sent and its agent has not answered.
    pub(super) unanswered: Unanswered,
}

/// Apply what host `index`'s connection `generation` queued (at most
/// [`LINE_QUEUE`] lines at a time: a flooding host then waits for its
/// next turn behind the others' wake-ups).
fn drain(
    index: usize,
    generation: u64,
    app: &mut FleetState,
    all: &mut [Host],
    wake: &EventSender,
) {
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
        let _ = wake.send(Event::Host(HostWake::Queued {
            host: index,
            generation,
        }));
    }
}

/// Host `index`'s connection `generation`, started by the starter thread:
/// kept (and whatever it already queued drained) when that start is still
/// current, else its ssh killed; a start that failed fails the host.
fn started_conn(
    index: usize,
    generation: u64,
    started: Result<Conn, String>,
    app: &mut FleetState,
    all: &mut [Host],
    wake: &EventSender,
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
pub(super) fn view_link(link: &Rules) -> Link {
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
pub(super) fn apply(index: usize, host: &mut Host, event: HostEvent, app: &mut FleetState) {
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
fn report_lost(index: usize, host: &Host, app: &mut FleetState, lost: Vec<Outstanding>) {
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
fn check_links(all: &mut [Host], app: &mut FleetState, starts: &Sender<(usize, u64)>) {
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
fn kill(index: usize, host: &mut Host, app: &mut FleetState) {
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
fn start(index: usize, host: &mut Host, starts: &Sender<(usize, u64)>, app: &mut FleetState) {
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
fn send(all: &mut [Host], app: &mut FleetState, effect: FleetEffect) {
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
