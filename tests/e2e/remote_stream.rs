//! The protocol's streams through `--controller ssh://HOST`
//! (docs/protocol.md): `serve --stdio` gets the local stdin copied through
//! to the remote agent (its commands; its end stops the agent) and
//! `snapshot --follow` streams as ssh writes; a signal to the launcher stops
//! the remote side in order. First with a fake `ssh` first in `PATH` (the
//! launcher's own part), then through a real sshd on 127.0.0.1
//! ([`crate::sshd`]).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use crate::harness::{BIN, UI, run_plain, signal_pid};
use crate::remote::{fake_ssh_script, text, wait_for_file, wait_status};

/// The launcher's stdout, line by line, as it comes (a thread reads it).
pub(crate) struct Lines(Receiver<String>);

impl Lines {
    pub(crate) fn new(stdout: ChildStdout) -> Self {
        Self::closing_after(stdout, |_| false)
    }

    /// As [`Lines::new`], but the reader closes its end of the pipe after
    /// the first line `last` accepts (as `| head` does).
    pub(crate) fn closing_after(
        stdout: ChildStdout,
        last: impl Fn(&str) -> bool + Send + 'static,
    ) -> Self {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let done = last(&line);
                if tx.send(line).is_err() || done {
                    break;
                }
            }
        });
        Self(rx)
    }

    /// The next line, within `timeout` (panics naming `what` otherwise).
    #[track_caller]
    pub(crate) fn next(&self, what: &str, timeout: Duration) -> String {
        self.0
            .recv_timeout(timeout)
            .unwrap_or_else(|e| panic!("no line ({what}) within {timeout:?}: {e}"))
    }
}

fn launcher(args: &[&str], path: &str) -> Child {
    Command::new(BIN)
        .args(args)
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the launcher")
}

fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    stderr
}

/// `serve --stdio` through the launcher: each local line reaches ssh at
/// once (the fake answers it, the answer comes back before the next is
/// sent), the end of the local stdin closes ssh's (the remote agent's end
/// of stdin) and ssh's status is the launcher's; a SIGTERM to the launcher
/// closes ssh's stdin too (the agent stops as at its end, its last lines
/// still come back) and the launcher exits 143 saying so.
#[test]
fn a_serve_launcher_copies_stdin_through_and_closes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = dir.path().join("started");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "touch '{}'\nwhile IFS= read -r line; do printf 'got %s\\n' \"$line\"; done\n\
             echo 'remote: stdin ended' >&2\nexit 7",
            started.display()
        ),
    );
    let mut child = launcher(&["--controller", "ssh://h", "serve", "--stdio"], &path);
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    for command in [r#"{"id":1,"cmd":"ping"}"#, r#"{"id":"2","cmd":"pass"}"#] {
        writeln!(stdin, "{command}").expect("write a command");
        stdin.flush().expect("flush");
        assert_eq!(lines.next(command, UI), format!("got {command}"));
    }
    drop(stdin);
    let status = wait_status(&mut child);
    assert_eq!(status.code(), Some(7), "{status:?}");
    assert_eq!(stderr_of(&mut child), "remote: stdin ended\n");

    // A signal: ssh's stdin is closed while the local one stays open.
    std::fs::remove_file(&started).expect("rm started");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "touch '{}'\nwhile IFS= read -r line; do :; done\n\
             echo 'remote: agent stopped' >&2\nexit 0",
            started.display()
        ),
    );
    let mut child = launcher(&["--controller", "ssh://h", "serve", "--stdio"], &path);
    let stdin = child.stdin.take().expect("stdin");
    wait_for_file(&started);
    signal_pid(child.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut child);
    drop(stdin);
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(
        stderr_of(&mut child),
        "remote: agent stopped\nstackless-tui: interrupted by SIGTERM: the agent on h was told \
         to stop (its stdin was closed, as at the end of the local stdin: a teardown under way \
         is left to finish there and audited `left-running`; its last lines are above). Exit \
         143.\n"
    );
}

/// `snapshot --follow` through the launcher: ssh's lines come through as
/// written, the local stdin is not read (ssh's is a pipe the launcher
/// holds), and a SIGTERM goes to ssh (the remote stream takes no stdin, so
/// the connection is closed); the launcher exits 143 saying so.
#[test]
fn a_follow_launcher_streams_and_passes_a_signal_to_ssh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = dir.path().join("started");
    let seen = dir.path().join("stdin-seen");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "trap 'echo \"ssh: got TERM\" >&2; exit 255' TERM\necho '{{\"type\":\"hello\"}}'\n\
             timeout 0.5 cat > '{}'\ntouch '{}'\nwhile :; do sleep 0.05; done",
            seen.display(),
            started.display()
        ),
    );
    let mut child = launcher(&["--controller", "ssh://h", "snapshot", "--follow"], &path);
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "not for ssh").expect("write");
    assert_eq!(lines.next("hello", UI), r#"{"type":"hello"}"#);
    wait_for_file(&started);
    assert_eq!(std::fs::read_to_string(&seen).expect("seen"), "");
    signal_pid(child.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut child);
    drop(stdin);
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(
        stderr_of(&mut child),
        "ssh: got TERM\nstackless-tui: interrupted by SIGTERM: the stream from h was closed \
         (ssh closed the connection; `snapshot --follow` there stops at its next write). Exit \
         143.\n"
    );
}

/// A remote stackless-tui that knows `--reached-as` but not the streams:
/// its clap error passes through, then the launcher names the cause, exit 2.
#[test]
fn an_older_remote_without_the_streams_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, said) in [
        (
            ["serve", "--stdio"],
            "error: unrecognized subcommand 'serve'\n\nUsage: stackless-tui [OPTIONS] [COMMAND]",
        ),
        (
            ["snapshot", "--follow"],
            "error: unexpected argument '--follow' found\n\nUsage: stackless-tui snapshot [OPTIONS]",
        ),
    ] {
        let path = fake_ssh_script(
            dir.path(),
            &format!("printf '%s\\n' \"{said}\" >&2\nexit 2"),
        );
        let (code, stdout, stderr) = run_plain(
            &[&["--controller", "ssh://fleet-1"][..], &args[..]].concat(),
            &[("PATH", &path)],
        );
        assert_eq!(code, Some(2));
        assert!(stdout.is_empty());
        assert_eq!(
            text(&stderr),
            format!(
                "{said}\nstackless-tui: stackless-tui on fleet-1 is older than this \
                 stackless-tui: it does not speak the stream protocol (`serve --stdio`, \
                 `snapshot --follow`; exit 2). Install this version there (from a checkout of \
                 stackless-tui: `cargo install --locked --path .`, or copy this binary to the \
                 host).\n"
            )
        );
    }
}
