//! `snapshot --follow` over a fleet: one `ssh -T -o BatchMode=yes` per
//! host running its `snapshot --follow` (planned as one `--controller`
//! plans it), all started at once, each host's stdout read line by line on
//! a thread of its own (a line over [`MAX_LINE`]: that host failed, its
//! ssh killed), every line written on stdout with its `host` and a `host`
//! message at each change of a host's state ([`super::link`]); a
//! stale host is reconnected after its backoff. SIGTERM, SIGINT, SIGHUP or
//! stdout closed: every ssh killed, exit 0.

use std::io::{self, BufRead as _, Read as _, Write as _};
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::link::{Link, MAX_LINE, host_message, tag_line, too_long};
use super::once::{Shared, keep_tail, wait};
use crate::launcher::failure::{classify, failure_message, stderr_tail};
use crate::launcher::fleet::FleetHost;
use crate::launcher::plan::Plan;
use crate::model::text::sanitize_short;

/// What a host's reader thread tells the main loop (also the fleet
/// console's readers: [`super::console`]).
pub(super) enum Event {
    /// One line (without its newline).
    Line(Vec<u8>),
    /// A line over [`MAX_LINE`] bytes (nothing of it kept).
    TooLong,
    /// Its ssh ended with this status (or 128 + the signal) and stderr.
    Ended(io::Result<i32>, String),
}

/// One host's connection: its link, its running ssh and which start it
/// is (events of an earlier one are dropped).
struct Host<'a> {
    name: &'a str,
    plan: &'a Plan,
    link: Link,
    child: Option<Shared>,
    generation: u64,
}

/// The current time (unix seconds).
fn unix_now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Follow every host of `plans` (`plans[i]` reaches `hosts[i]`) until a
/// signal or stdout closes; exit 0.
pub(crate) fn run(hosts: &[FleetHost], plans: &[Plan]) -> ExitCode {
    run_with(hosts, plans, write)
}

/// [`run`] with each batch of tagged lines handed to `deliver` (it takes
/// them all) instead of stdout; until a signal or `deliver` fails.
pub(crate) fn run_with(
    hosts: &[FleetHost],
    plans: &[Plan],
    mut deliver: impl FnMut(&mut Vec<String>) -> io::Result<()>,
) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let _signals = catch_signals("follow-signals", move |_| {
        flag.store(true, Ordering::SeqCst);
    });
    let (tx, rx) = mpsc::channel::<(usize, u64, Event)>();
    let now = unix_now();
    let mut all: Vec<Host> = hosts
        .iter()
        .zip(plans)
        .map(|(host, plan)| Host {
            name: host.name(),
            plan,
            link: Link::new(now),
            child: None,
            generation: 0,
        })
        .collect();
    let mut out = Vec::new();
    for (index, host) in all.iter_mut().enumerate() {
        start(index, host, &tx, now, &mut out);
    }
    while !stop.load(Ordering::SeqCst) && deliver(&mut out).is_ok() {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok((index, generation, event)) => {
                if let Some(host) = all.get_mut(index)
                    && host.generation == generation
                {
                    handle(host, event, unix_now(), &mut out);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let now = unix_now();
        for (index, host) in all.iter_mut().enumerate() {
            if host.link.check_silence(now) {
                kill(host);
                out.push(host_message(host.name, &host.link));
            }
            if host.link.due(now) {
                start(index, host, &tx, now, &mut out);
            }
        }
    }
    for host in &mut all {
        if let Some(child) = host.child.take() {
            let mut child = child.lock().unwrap_or_else(PoisonError::into_inner);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    ExitCode::SUCCESS
}

/// Write the lines `out` holds on stdout (then none), flushed.
fn write(out: &mut Vec<String>) -> io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let stdout = io::stdout();
    let mut lock = stdout.lock();
    for line in out.drain(..) {
        lock.write_all(line.as_bytes())?;
        lock.write_all(b"\n")?;
    }
    lock.flush()
}

/// Kill a host's running ssh; whatever its reader still sends (queued
/// lines, its end) is dropped (a new generation).
fn kill(host: &mut Host) {
    host.generation += 1;
    if let Some(child) = host.child.take() {
        let _ = child.lock().unwrap_or_else(PoisonError::into_inner).kill();
    }
}

/// Start host `index`'s ssh at `now` (a new generation) and its reader;
/// its `connecting` message goes to `out`.
fn start(
    index: usize,
    host: &mut Host,
    tx: &Sender<(usize, u64, Event)>,
    now: i64,
    out: &mut Vec<String>,
) {
    host.generation += 1;
    host.link.restarted(now);
    out.push(host_message(host.name, &host.link));
    let mut child = match crate::launcher::ssh::spawn_ssh(host.plan, Stdio::piped()) {
        Ok(child) => child,
        Err(error) => {
            let said = crate::launcher::ssh::cannot_run_ssh(&host.plan.target.host, &error);
            if host.link.fail(now, said) {
                out.push(host_message(host.name, &host.link));
            }
            return;
        }
    };
    let (stdout, stderr, stdin) = (child.stdout.take(), child.stderr.take(), child.stdin.take());
    let child = Arc::new(Mutex::new(child));
    host.child = Some(Arc::clone(&child));
    let (tx, generation) = (tx.clone(), host.generation);
    let spawned = std::thread::Builder::new()
        .name(format!("follow-{index}"))
        .spawn(move || {
            let send = |event| tx.send((index, generation, event)).is_ok();
            let tail = stderr.map(|stderr| std::thread::spawn(move || keep_tail(stderr)));
            if let Some(stdout) = stdout {
                read_lines(stdout, send);
            }
            let tail = tail.and_then(|t| t.join().ok()).unwrap_or_default();
            let status = wait(&child);
            drop(stdin);
            let _ = tx.send((
                index,
                generation,
                Event::Ended(status, String::from_utf8_lossy(&tail).into_owned()),
            ));
        });
    if let Err(error) = spawned {
        kill(host);
        if host
            .link
            .fail(now, format!("cannot start a thread: {error}"))
        {
            out.push(host_message(host.name, &host.link));
        }
    }
}

/// Send each line of `stdout` (at most [`MAX_LINE`] bytes each: a longer
/// one is [`Event::TooLong`] and ends the reading) until its end, or
/// until `send` says nobody listens.
pub(super) fn read_lines(stdout: impl io::Read, send: impl Fn(Event) -> bool) {
    let mut reader = io::BufReader::new(stdout);
    let most = u64::try_from(MAX_LINE).unwrap_or(u64::MAX) + 1;
    loop {
        let mut line = Vec::new();
        match (&mut reader).take(most).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() > MAX_LINE {
            send(Event::TooLong);
            return;
        }
        if !send(Event::Line(line)) {
            return;
        }
    }
}

/// Apply one of a host's events at `now`; its tagged line and any `host`
/// message go to `out`.
fn handle(host: &mut Host, event: Event, now: i64, out: &mut Vec<String>) {
    let changed = match event {
        Event::Line(raw) => match tag_line(host.name, &raw) {
            Ok((tagged, line)) => {
                out.push(tagged);
                host.link.line(now, &line)
            }
            Err(error) => host.link.fail(now, error),
        },
        Event::TooLong => host.link.fail(now, too_long()),
        Event::Ended(status, stderr) => {
            host.child = None;
            let (failure, error) = ended_error(host.plan, status, &stderr);
            host.link.ended(now, failure, error)
        }
    };
    if changed {
        if host.link.state == crate::model::fleet::LinkState::Failed {
            kill(host);
        }
        out.push(host_message(host.name, &host.link));
    }
}

/// How a host's ssh ended, classified as one `--controller` classifies
/// it ([`classify`]), and the sentence.
pub(super) fn ended_error(
    plan: &Plan,
    status: io::Result<i32>,
    stderr: &str,
) -> (Option<crate::launcher::failure::Failure>, String) {
    let code = match status {
        Ok(code) => code,
        Err(error) => {
            return (
                None,
                format!("waiting for ssh to {}: {error}", plan.target.host),
            );
        }
    };
    let tail = stderr_tail(stderr);
    if let Some(failure) = classify(code, stderr) {
        return (Some(failure), failure_message(failure, plan, code, &tail));
    }
    let said = if tail.is_empty() {
        String::new()
    } else {
        format!(": it said {tail:?}")
    };
    let message = format!(
        "{} on {} ended its stream (exit {code}){said}",
        sanitize_short(&plan.remote_bin, 200),
        plan.target.host
    );
    (None, message)
}

/// Call `on_signal` with the signal's name (`SIGTERM`, `SIGINT`,
/// `SIGHUP`) at each of them, on a one-worker tokio runtime whose thread is
/// named `thread` (returned: held while it matters). `None` when they
/// cannot be caught (they then keep their default action: ssh gets SIGTERM
/// by `PR_SET_PDEATHSIG`).
pub(super) fn catch_signals(
    thread: &str,
    on_signal: impl Fn(&'static str) + Clone + Send + 'static,
) -> Option<tokio::runtime::Runtime> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(thread)
        .enable_all()
        .build()
        .ok()?;
    let context = runtime.enter();
    for (kind, name) in [
        (SignalKind::terminate(), "SIGTERM"),
        (SignalKind::interrupt(), "SIGINT"),
        (SignalKind::hangup(), "SIGHUP"),
    ] {
        let mut stream = signal(kind).ok()?;
        let on_signal = on_signal.clone();
        runtime.spawn(async move {
            while stream.recv().await.is_some() {
                on_signal(name);
            }
        });
    }
    drop(context);
    Some(runtime)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<String> {
        let got = std::cell::RefCell::new(Vec::new());
        read_lines(input, |event| {
            got.borrow_mut().push(match event {
                Event::Line(line) => String::from_utf8_lossy(&line).into_owned(),
                Event::TooLong => "TOO LONG".to_owned(),
                Event::Ended(..) => "ENDED".to_owned(),
            });
            true
        });
        got.into_inner()
    }

    #[test]
    fn lines_are_bounded_at_64_kib() {
        assert_eq!(lines(b"a\nbc\n"), ["a", "bc"]);
        let mut most = vec![b'x'; MAX_LINE];
        most.push(b'\n');
        most.extend_from_slice(b"next\n");
        let got = lines(&most);
        assert_eq!(
            (got.len(), got[0].len(), got[1].as_str()),
            (2, MAX_LINE, "next")
        );
        let mut over = vec![b'x'; MAX_LINE + 1];
        over.extend_from_slice(b"\nnever\n");
        assert_eq!(lines(&over), ["TOO LONG"]);
    }
}
