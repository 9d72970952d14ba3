//! One host's connection for the console over a fleet (`super::console`): its ssh, the
//! reader, writer and stderr threads, the bounded queues between them and
//! the loop, and the command routing that never waits.

use std::io;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::follow::{Event as Read, read_lines};
use super::link::Line;
use super::once::{Shared, keep_tail, wait};
use crate::event::{Event, EventSender};
use crate::launcher::plan::Plan;
use crate::model::fleet::LinkState;
use crate::model::fleet::wake::HostWake;
use crate::model::fleet::wire::{self, Message};
use crate::model::protocol::lines::{Reply, ReplyError};

/// The lines one connection's reader may hold for the loop: when they
/// wait, that host's reader stops reading (its ssh, then its agent, are
/// held back by the pipe), never the others.
pub(super) const LINE_QUEUE: usize = 1024;

/// The commands waiting for one host's agent to read them: beyond this a
/// command is refused at once ([`refused`]).
pub(super) const COMMAND_QUEUE: usize = 64;

/// What a connection's reader puts in its queue.
pub(super) enum HostEvent {
    /// One line, read into a typed message ([`wire::parse`], on the
    /// reader's thread), and what it is for the link.
    Line(Box<Message>, Line),
    /// A line that is not a JSON object: the sentence.
    NotProtocol(String),
    /// A line over [`super::link::MAX_LINE`] bytes.
    TooLong,
    /// Its ssh ended with this status (or 128 + the signal) and stderr.
    Ended(io::Result<i32>, String),
}

/// The connections the `fleet-start` thread started and the loop has not
/// taken yet: (host, generation, the connection or why it could not
/// start), announced by [`HostWake::Started`].
pub(super) type Handoff = Arc<Mutex<Vec<(usize, u64, Result<Conn, String>)>>>;

/// Start the `fleet-start` thread: it starts each connection it is asked
/// for (host index, generation) with `plans[index]`, one after another,
/// puts it in `handoff` and wakes the loop with [`HostWake::Started`]:
/// spawning ssh never runs on the thread that reads keys or draws. `None`
/// when the thread cannot start.
pub(super) fn starter(
    plans: Vec<Plan>,
    events: EventSender,
    handoff: Handoff,
) -> Option<Sender<(usize, u64)>> {
    let (orders, taken) = mpsc::channel::<(usize, u64)>();
    std::thread::Builder::new()
        .name("fleet-start".to_owned())
        .spawn(move || {
            for (index, generation) in taken {
                let Some(plan) = plans.get(index) else {
                    continue;
                };
                let started = connect(index, generation, plan, &events);
                handoff
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((index, generation, started));
                let woken = events.send(Event::Host(HostWake::Started {
                    host: index,
                    generation,
                }));
                if woken.is_err() {
                    return;
                }
            }
        })
        .ok()?;
    Some(orders)
}

/// One running connection: its ssh, its reader's queue, and the channel to
/// its writer (`None` once closed at quit).
pub(super) struct Conn {
    pub(super) child: Shared,
    pub(super) queue: Receiver<HostEvent>,
    /// Set by the reader when it woke the loop; cleared by the loop
    /// before it drains the queue.
    pub(super) pending: Arc<AtomicBool>,
    /// When the reader last read a line (unix seconds): the host is not
    /// silent while its lines wait in the queue for the loop.
    pub(super) arrived: Arc<AtomicI64>,
    pub(super) commands: Option<SyncSender<String>>,
}

/// What a reader hands on: a line into its connection's queue (blocking
/// while it is full), then the loop woken unless it was already.
struct Reader {
    index: usize,
    generation: u64,
    lines: SyncSender<HostEvent>,
    pending: Arc<AtomicBool>,
    arrived: Arc<AtomicI64>,
    wake: EventSender,
}

impl Reader {
    /// `false` when nobody takes its lines any more (the connection was
    /// killed).
    fn put(&self, event: HostEvent) -> bool {
        self.arrived
            .store(jiff::Timestamp::now().as_second(), Ordering::SeqCst);
        if self.lines.send(event).is_err() {
            return false;
        }
        if !self.pending.swap(true, Ordering::SeqCst) {
            let _ = self.wake.send(Event::Host(HostWake::Queued {
                host: self.index,
                generation: self.generation,
            }));
        }
        true
    }
}

/// Spawn `plan`'s ssh and its reader, writer and stderr threads.
///
/// # Errors
/// The sentence when ssh or a thread cannot start (then nothing runs).
pub(super) fn connect(
    index: usize,
    generation: u64,
    plan: &Plan,
    wake: &EventSender,
) -> Result<Conn, String> {
    let mut child = crate::launcher::ssh::spawn_ssh(plan, Stdio::piped())
        .map_err(|error| crate::launcher::ssh::cannot_run_ssh(&plan.target.host, &error))?;
    let (stdout, stderr, stdin) = (child.stdout.take(), child.stderr.take(), child.stdin.take());
    let child = Arc::new(Mutex::new(child));
    let (lines, queue) = mpsc::sync_channel(LINE_QUEUE);
    let pending = Arc::new(AtomicBool::new(false));
    let arrived = Arc::new(AtomicI64::new(0));
    let reader = Reader {
        index,
        generation,
        lines,
        pending: Arc::clone(&pending),
        arrived: Arc::clone(&arrived),
        wake: wake.clone(),
    };
    let (commands, orders) = mpsc::sync_channel::<String>(COMMAND_QUEUE);
    let conn = Conn {
        child: Arc::clone(&child),
        queue,
        pending,
        arrived,
        commands: Some(commands),
    };
    let read = std::thread::Builder::new()
        .name(format!("fleet-read-{index}"))
        .spawn(move || {
            let tail = stderr.and_then(|stderr| {
                std::thread::Builder::new()
                    .name(format!("fleet-stderr-{index}"))
                    .spawn(move || keep_tail(stderr))
                    .ok()
            });
            if let Some(stdout) = stdout {
                read_lines(stdout, |event| reader.put(queued(event)));
            }
            let tail = tail.and_then(|t| t.join().ok()).unwrap_or_default();
            let status = wait(&child);
            reader.put(HostEvent::Ended(
                status,
                String::from_utf8_lossy(&tail).into_owned(),
            ));
        });
    let write = read.and_then(|_| {
        std::thread::Builder::new()
            .name(format!("fleet-write-{index}"))
            .spawn(move || {
                if let Some(stdin) = stdin {
                    write_commands(stdin, &orders);
                }
            })
    });
    if let Err(error) = write {
        let mut child = conn.child.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("cannot start a thread: {error}"));
    }
    Ok(conn)
}

/// A reader's event as its queue holds it: a line parsed (a line that is
/// not a JSON object is said as such).
pub(super) fn queued(event: Read) -> HostEvent {
    match event {
        Read::Line(raw) => match wire::parse(&raw) {
            Ok(message) => {
                let line = Line::of(&message);
                HostEvent::Line(Box::new(message), line)
            }
            Err(error) => HostEvent::NotProtocol(error),
        },
        Read::TooLong => HostEvent::TooLong,
        Read::Ended(status, stderr) => HostEvent::Ended(status, stderr),
    }
}

/// Write each command of `orders` to ssh's `stdin` as one line, flushed,
/// until the channel closes (quit, the connection killed) or ssh stops
/// reading; then ssh's stdin is closed (the agent stops at its end).
pub(super) fn write_commands(mut stdin: impl io::Write, orders: &Receiver<String>) {
    for line in orders {
        let written = stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush());
        if written.is_err() {
            return;
        }
    }
}

/// Hand command `line` to host `name`'s writer (`commands`, `None` when it
/// has no connection: its link is `state`) without waiting; `Err` with the
/// refused `reply` ([`refused`]) when it cannot go: no connection, or
/// [`COMMAND_QUEUE`] commands already waiting (its agent is not reading
/// them: stopped, or its connection stalled).
pub(super) fn route(
    commands: Option<&SyncSender<String>>,
    name: &str,
    state: LinkState,
    line: String,
) -> Result<(), Box<Message>> {
    let Some(commands) = commands else {
        let why = format!("{name} is {}: nothing was sent", state.name());
        return Err(refused(&line, &why));
    };
    match commands.try_send(line) {
        Ok(()) => Ok(()),
        Err(TrySendError::Full(line)) => Err(refused(
            &line,
            &format!("{name} is not reading its commands ({COMMAND_QUEUE} waiting)"),
        )),
        Err(TrySendError::Disconnected(line)) => Err(refused(
            &line,
            &format!("{name} is not connected: nothing was sent"),
        )),
    }
}

/// The `reply` refusing command `line` (its `id`, else `null`) with
/// `message` (docs/protocol.md "Commands": `kind` `refused`).
#[must_use]
pub(super) fn refused(line: &str, message: &str) -> Box<Message> {
    /// A command line's `id` alone (the rest skipped, no tree built).
    #[derive(serde::Deserialize)]
    struct Id {
        #[serde(default)]
        id: Value,
    }
    let id = serde_json::from_str::<Id>(line).map_or(Value::Null, |command| command.id);
    Box::new(Message::Reply(Reply {
        id,
        ok: false,
        error: Some(ReplyError {
            kind: "refused".to_owned(),
            message: message.to_owned(),
        }),
        ..Reply::default()
    }))
}
