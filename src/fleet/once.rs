//! `snapshot [--json]` over a fleet: one `ssh -T` per host, all started at
//! once, each host's stdout read by a thread of its own into a bounded
//! buffer ([`MAX_HOST_DOCUMENT`]), every host given until `--fleet-timeout`
//! (60 s) after the start (a host still running then is killed and failed
//! as timed out), then one merged document
//! ([`crate::launcher::fleet::merge`]) or table on stdout, one stderr line per failed
//! host (after what each answered host said on stderr, named), exit 0
//! when every host answered and 1 when the document is partial.

use std::io::{self, Read as _, Write as _};
use std::process::{Child, ExitCode, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::launcher::failure::stderr_tail;
use crate::launcher::fleet::{
    Answer, FleetHost, MAX_HOST_DOCUMENT, answer, failed_lines, fleet_table, merge, said_lines,
};
use crate::launcher::plan::Plan;

/// How much of a host's ssh stderr is kept (its tail) for the error.
const TAIL_BYTES: usize = 4096;

/// Ask every host of `plans` (`plans[i]` reaches `hosts[i]`) for its
/// `snapshot --json` (each given `timeout` from now), merge the answers,
/// print the document (`json`) or the table (times in `zone`), name each
/// failed host on stderr, and exit 0 (every host answered) or 1
/// (partial).
pub(crate) fn run(
    hosts: &[FleetHost],
    plans: &[Plan],
    (json, timeout): (bool, Duration),
    zone: &jiff::tz::TimeZone,
) -> ExitCode {
    let (answers, stderrs): (Vec<Answer>, Vec<String>) =
        ask_all(plans, Instant::now() + timeout, timeout)
            .into_iter()
            .unzip();
    // What an answered host said on stderr (a warning there) is passed on.
    let said: Vec<String> = hosts
        .iter()
        .zip(answers.iter().zip(&stderrs))
        .filter(|(_, (answer, _))| matches!(answer, Answer::Document(_)))
        .flat_map(|(host, (_, stderr))| said_lines(host.name(), stderr))
        .collect();
    let (document, whole) = merge(hosts, answers);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = if json {
        serde_json::to_writer_pretty(&mut out, &document)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
    } else {
        out.write_all(fleet_table(&document, zone).as_bytes())
    };
    let written = written.and_then(|()| out.flush());
    drop(out);
    if let Err(error) = written
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: writing the fleet snapshot: {error}"
        );
        return ExitCode::from(crate::cli::EXIT_USAGE);
    }
    for line in said.into_iter().chain(failed_lines(&document)) {
        let _ = writeln!(io::stderr(), "{line}");
    }
    if whole {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// One host's running ssh, shared with the deadline (which kills it).
pub(super) type Shared = Arc<Mutex<Child>>;

/// Start every host's ssh at once and collect their answers (each with
/// the tail of its stderr), in order; a host without one at `deadline`
/// (`timeout` after the start) is killed and failed as timed out.
fn ask_all(plans: &[Plan], deadline: Instant, timeout: Duration) -> Vec<(Answer, String)> {
    let mut answers: Vec<Option<(Answer, String)>> = plans.iter().map(|_| None).collect();
    let mut running: Vec<Option<Shared>> = plans.iter().map(|_| None).collect();
    let (tx, rx) = mpsc::channel::<(usize, (Answer, String))>();
    for (index, plan) in plans.iter().enumerate() {
        match crate::launcher::ssh::spawn_ssh(plan, Stdio::piped()) {
            Ok(mut child) => {
                let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
                let stdin = child.stdin.take();
                let child = Arc::new(Mutex::new(child));
                running[index] = Some(Arc::clone(&child));
                let (mine, tx) = (plan.clone(), tx.clone());
                let spawned = std::thread::Builder::new()
                    .name(format!("fleet-{index}"))
                    .spawn(move || {
                        let answer = read_host(&mine, &child, stdout, stderr);
                        // Held until the host is done (closing it tells the
                        // remote side to stop).
                        drop(stdin);
                        let _ = tx.send((index, answer));
                    });
                if let Err(error) = spawned {
                    answers[index] = Some((
                        Answer::Failed(format!(
                            "cannot start a thread for {}: {error}",
                            plan.target.host
                        )),
                        String::new(),
                    ));
                }
            }
            Err(error) => {
                answers[index] = Some((
                    Answer::Failed(crate::launcher::ssh::cannot_run_ssh(
                        &plan.target.host,
                        &error,
                    )),
                    String::new(),
                ));
            }
        }
    }
    drop(tx);
    while answers.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((index, answer)) => answers[index] = Some(answer),
            Err(_) => break,
        }
    }
    answers
        .into_iter()
        .zip(running)
        .map(|(answer, child)| {
            answer.unwrap_or_else(|| {
                if let Some(child) = child {
                    let _ = child.lock().unwrap_or_else(PoisonError::into_inner).kill();
                }
                (
                    Answer::Failed(format!(
                        "timed out: no whole answer within {} (--fleet-timeout; its ssh was \
                         killed)",
                        humantime::format_duration(timeout)
                    )),
                    String::new(),
                )
            })
        })
        .collect()
}

/// Read one host's stdout (at most [`MAX_HOST_DOCUMENT`] bytes: past that
/// its ssh is killed and the host failed) and stderr's tail, wait for its
/// ssh, and say what it answered (with its stderr's tail).
fn read_host(
    plan: &Plan,
    child: &Shared,
    stdout: Option<std::process::ChildStdout>,
    stderr: Option<std::process::ChildStderr>,
) -> (Answer, String) {
    let tail = stderr.map(|stderr| std::thread::spawn(move || keep_tail(stderr)));
    let (document, over) = stdout.map_or((Vec::new(), false), |stdout| {
        read_bounded(stdout, MAX_HOST_DOCUMENT)
    });
    if over {
        let _ = child.lock().unwrap_or_else(PoisonError::into_inner).kill();
    }
    let status = wait(child);
    let stderr = tail.and_then(|t| t.join().ok()).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    if over {
        let failed = Answer::Failed(format!(
            "the snapshot from {} is over {} MiB: not merged (run `snapshot --json` with one \
             --controller for this host)",
            plan.target.host,
            MAX_HOST_DOCUMENT >> 20
        ));
        return (failed, stderr);
    }
    let answered = match status {
        Ok(code) => answer(plan, code, &document, &stderr, &stderr_tail(&stderr)),
        Err(error) => Answer::Failed(format!("waiting for ssh to {}: {error}", plan.target.host)),
    };
    (answered, stderr)
}

/// Everything `stdout` gives, up to `limit` bytes (never more held);
/// `true` when it had more (the bytes are then dropped). A read error
/// keeps nothing.
fn read_bounded(stdout: impl io::Read, limit: usize) -> (Vec<u8>, bool) {
    let mut document = Vec::new();
    let most = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let read = stdout.take(most).read_to_end(&mut document);
    let over = document.len() > limit;
    if read.is_err() || over {
        document = Vec::new();
    }
    (document, over)
}

/// ssh's exit status (or 128 + the signal), waited for without holding
/// the lock between polls (the deadline may kill it meanwhile).
pub(super) fn wait(child: &Shared) -> io::Result<i32> {
    loop {
        let polled = child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .try_wait()?;
        if let Some(status) = polled {
            return Ok(crate::launcher::ssh::exit_code(status));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last [`TAIL_BYTES`] of a host's ssh stderr, kept rather than copied
/// as it comes (several hosts' lines would interleave): an answered host's
/// lines are passed on after the document, named
/// ([`crate::launcher::fleet::said_lines`]); a failed host's tail is quoted in its
/// error.
pub(super) fn keep_tail(mut stderr: std::process::ChildStderr) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > TAIL_BYTES {
                    tail.drain(..tail.len() - TAIL_BYTES);
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_document_is_bounded() {
        assert_eq!(
            read_bounded(&b"0123456789"[..], 10),
            (b"0123456789".to_vec(), false)
        );
        assert_eq!(read_bounded(&b"0123456789a"[..], 10), (Vec::new(), true));
        assert_eq!(read_bounded(&b""[..], 10), (Vec::new(), false));
        assert_eq!(MAX_HOST_DOCUMENT, 512 * 1024 * 1024);
    }
}
