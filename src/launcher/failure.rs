//! What an `ssh` exit status (and the tail of its stderr) means for the
//! operator, and the paragraph they read: pure rules, [`crate::launcher`]
//! prints them.

use super::plan::{Mode, Plan};
use crate::model::text::sanitize_short;

/// What went wrong, read from ssh's exit status and the tail of its
/// stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// 127: the remote shell found no such program.
    NotInstalled,
    /// 127 with the shell saying the file exists but `cannot execute` it
    /// (`required file not found`, `bad interpreter`): its interpreter or
    /// loader is missing.
    CannotStart,
    /// 255 and ssh said nothing: the remote program was killed by a signal
    /// (ssh reports an `exit-signal` as 255 without a word).
    Signalled,
    /// 129-159: the remote shell reports its program ended by signal
    /// `code - 128` (killed, or it exited that way after catching it).
    BySignal,
    /// 255: the connection was closed mid-session (`Connection to HOST
    /// closed by remote host.`, a broken pipe).
    Closed,
    /// 126: found but cannot be run.
    NotExecutable,
    /// 255 while connecting (name, network, refused, timed out).
    Connect,
    /// 255: the host key is unknown or changed.
    HostKey,
    /// 255: the login was refused.
    Auth,
    /// 255 with nothing recognisable.
    Ssh,
    /// 2 with clap's `unexpected argument '--reached-as'`: the remote
    /// stackless-tui predates `--controller` (seen by headless commands;
    /// the console's stderr goes through the remote terminal).
    OlderRemote,
    /// 2 with clap's `unrecognized subcommand 'serve'`, `unexpected
    /// argument '--follow'` or `unexpected argument '--first-pass-after'`
    /// (a fleet console's agent flag): the remote stackless-tui knows
    /// `--reached-as` but predates the stream protocol as this console
    /// speaks it (docs/protocol.md).
    NoStreams,
}

/// Classify an ssh exit `code` with `stderr` (its last bytes). `None`: the
/// remote program ran and this is its own status (passed through as is).
#[must_use]
pub(crate) fn classify(code: i32, stderr: &str) -> Option<Failure> {
    match code {
        127 if [
            "cannot execute",
            "bad interpreter",
            "required file not found",
        ]
        .iter()
        .any(|needle| stderr.contains(needle)) =>
        {
            Some(Failure::CannotStart)
        }
        127 => Some(Failure::NotInstalled),
        126 => Some(Failure::NotExecutable),
        129..=159 => Some(Failure::BySignal),
        255 => Some(classify_ssh(stderr)),
        2 if stderr.contains("unexpected argument '--reached-as'") => Some(Failure::OlderRemote),
        2 if stderr.contains("unrecognized subcommand 'serve'")
            || stderr.contains("unexpected argument '--follow'")
            || stderr.contains("unexpected argument '--first-pass-after'") =>
        {
            Some(Failure::NoStreams)
        }
        _ => None,
    }
}

fn classify_ssh(stderr: &str) -> Failure {
    const HOST_KEY: [&str; 4] = [
        "Host key verification failed",
        "REMOTE HOST IDENTIFICATION HAS CHANGED",
        "No matching host key",
        "host key for",
    ];
    const AUTH: [&str; 3] = [
        "Permission denied",
        "Too many authentication failures",
        "no more authentication methods",
    ];
    const CONNECT: [&str; 9] = [
        "Could not resolve hostname",
        "Connection refused",
        "Connection timed out",
        "Operation timed out",
        "No route to host",
        "Network is unreachable",
        "Connection closed by",
        "Connection reset",
        "kex_exchange_identification",
    ];
    const CLOSED: [&str; 3] = [
        "closed by remote host",
        "client_loop: send disconnect",
        "Broken pipe",
    ];
    let has = |list: &[&str]| list.iter().any(|needle| stderr.contains(needle));
    if stderr.trim().is_empty() {
        Failure::Signalled
    } else if has(&HOST_KEY) {
        Failure::HostKey
    } else if has(&AUTH) {
        Failure::Auth
    } else if has(&CLOSED) {
        Failure::Closed
    } else if has(&CONNECT) {
        Failure::Connect
    } else {
        Failure::Ssh
    }
}

/// The last non-empty line of ssh's stderr, sanitized and cut to 300
/// characters (what the message quotes).
#[must_use]
pub(crate) fn stderr_tail(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(|line| sanitize_short(line, 300))
        .unwrap_or_default()
}

/// The one paragraph the operator sees for `failure` (`code` is ssh's exit
/// status, `tail` from [`stderr_tail`]).
#[must_use]
pub(crate) fn failure_message(failure: Failure, plan: &Plan, code: i32, tail: &str) -> String {
    let host = &plan.target.host;
    let bin = sanitize_short(&plan.remote_bin, 200);
    let said = if tail.is_empty() {
        String::new()
    } else {
        format!(": ssh said {tail:?}")
    };
    let shell_said = if tail.is_empty() {
        String::new()
    } else {
        format!(": the remote shell said {tail:?}")
    };
    match failure {
        Failure::NotInstalled => format!(
            "{bin} is not installed on {host} (the remote shell cannot find it: exit 127). \
             Install it there (from a checkout of stackless-tui: `cargo install --locked --path .`, \
             or copy this binary to the host), or name where it is with --remote-bin PATH \
             (STACKLESS_TUI_REMOTE_BIN)."
        ),
        Failure::CannotStart => format!(
            "{bin} on {host} was found but cannot be started (exit 127){shell_said}: its interpreter \
             or dynamic loader is missing there (a binary built for another system or libc?). \
             Check the file on the host, or name another with --remote-bin PATH."
        ),
        Failure::Signalled => format!(
            "{bin} on {host} was killed by a signal (ssh exits {code} and says nothing when the \
             remote program ends by a signal): by an operator's kill, or the OOM killer \
             (`journalctl -k` on the host)."
        ),
        Failure::BySignal => {
            let signal = signal_name(code - 128);
            format!(
                "{bin} on {host} was stopped by {signal} there (exit {code} = 128 + the \
                 signal): someone or something on the host signalled it (an operator's kill, \
                 the OOM killer, a shutdown)."
            )
        }
        Failure::Closed => format!(
            "the connection to {host} was closed (exit {code}){said}: the session ended before \
             the remote program did (the host rebooted, sshd restarted, or the network \
             dropped). Run it again; ServerAliveInterval in the OpenSSH config keeps an idle \
             session open."
        ),
        Failure::NotExecutable => format!(
            "{bin} on {host} cannot be run (exit 126: not executable, or a directory){said}. \
             Check the file on the host, or name another with --remote-bin PATH."
        ),
        Failure::Connect => format!(
            "ssh could not connect to {host} (exit {code}){said}. Check the host name, its \
             port and the network (ports and proxies belong in the OpenSSH config: \
             ~/.ssh/config, or --ssh-config FILE)."
        ),
        Failure::HostKey => format!(
            "ssh could not verify the host key of {host} (exit {code}){said}. Host key \
             verification stays on: connect once with `ssh {host}` and check its fingerprint, \
             or add its key to known_hosts; a changed key may mean the host was replaced or \
             an attack, ask its administrator."
        ),
        Failure::Auth => format!(
            "ssh could not log in to {host} (exit {code}){said}. Check the user and the key \
             (ssh-add, IdentityFile in the OpenSSH config); headless commands run with \
             BatchMode=yes, so no password is asked."
        ),
        Failure::Ssh => format!("ssh to {host} failed (exit {code}){said}."),
        Failure::OlderRemote => format!(
            "{bin} on {host} is older than this stackless-tui: it does not know --reached-as \
             (exit {code}). Install this version there (from a checkout of stackless-tui: \
             `cargo install --locked --path .`, or copy this binary to the host)."
        ),
        Failure::NoStreams => format!(
            "{bin} on {host} is older than this stackless-tui: it does not speak the stream \
             protocol (`serve --stdio`, `snapshot --follow`; exit {code}). Install this version \
             there (from a checkout of stackless-tui: `cargo install --locked --path .`, or \
             copy this binary to the host)."
        ),
    }
}

/// What the operator sees when the launcher itself was interrupted (the
/// signal `number`, named `name`, e.g. `SIGTERM`): not an ssh failure. The
/// console's ssh got the signal and closed the connection; a headless
/// command was told to stop (its pipe closed: a `reap --once` pass stops
/// its running teardowns and starts no more); so was `serve --stdio`'s
/// agent (the end of its stdin); `snapshot --follow`'s ssh got the signal. `killed`: ssh did not end
/// within the grace and was killed.
#[must_use]
pub(crate) fn interrupted_message(plan: &Plan, number: i32, name: &str, killed: bool) -> String {
    let host = &plan.target.host;
    let what = match plan.mode {
        Mode::Console => format!("the console on {host} was stopped (ssh closed the connection)"),
        Mode::Headless => format!(
            "the remote command on {host} was told to stop (a `reap --once` pass stops its \
             running teardowns and starts no more; its last lines are above)"
        ),
        Mode::Serve => format!(
            "the agent on {host} was told to stop (its stdin was closed, as at the end of the \
             local stdin: a teardown under way there is stopped, audited `interrupted`, nothing \
             recorded; its last lines are above)"
        ),
        Mode::Follow => format!(
            "the stream from {host} was closed (ssh closed the connection; `snapshot --follow` \
             there stops at its next write)"
        ),
    };
    let killed = if killed {
        "; it did not end within 30 s, so ssh was killed"
    } else {
        ""
    };
    format!(
        "interrupted by {name}: {what}{killed}. Exit {}.",
        128 + number
    )
}

/// The Linux name of signal `number` (`SIGKILL`), or `signal N`.
#[must_use]
pub(crate) fn signal_name(number: i32) -> String {
    const NAMES: [&str; 15] = [
        "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
        "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
    ];
    usize::try_from(number)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("signal {number}"), |name| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::plan::Target;

    fn plan(mode: Mode) -> Plan {
        Plan {
            target: Target::parse("ssh://deploy@fleet-1").unwrap(),
            remote_bin: "/opt/my tools/stackless-tui".into(),
            ssh_config: None,
            forwarded: Vec::new(),
            mode,
            not_applied: Vec::new(),
        }
    }

    #[test]
    fn ssh_failures() {
        assert_eq!(classify(0, ""), None);
        assert_eq!(classify(2, "stackless-tui: bad"), None);
        assert_eq!(
            classify(127, "bash: stackless-tui: command not found"),
            Some(Failure::NotInstalled)
        );
        assert_eq!(classify(126, ""), Some(Failure::NotExecutable));
        assert_eq!(classify(137, ""), Some(Failure::BySignal));
        assert_eq!(classify(128, ""), None);
        assert_eq!(
            failure_message(Failure::BySignal, &plan(Mode::Console), 137, ""),
            "/opt/my tools/stackless-tui on fleet-1 was stopped by SIGKILL there (exit 137 = 128 \
             + the signal): someone or something on the host signalled it (an operator's kill, \
             the OOM killer, a shutdown)."
        );
        for said in [
            "bash: line 1: /x/stackless-tui: cannot execute: required file not found",
            "bash: /x/stackless-tui: /nonexistent/interp: bad interpreter: No such file or directory",
        ] {
            assert_eq!(classify(127, said), Some(Failure::CannotStart), "{said}");
        }
        assert_eq!(
            classify(
                2,
                "error: unexpected argument '--reached-as' found\n\nUsage: stackless-tui [OPTIONS]"
            ),
            Some(Failure::OlderRemote)
        );
        assert_eq!(
            classify(
                2,
                "error: unexpected argument '--first-pass-after' found\n\nUsage: stackless-tui serve"
            ),
            Some(Failure::NoStreams)
        );
        for (stderr, failure) in [
            ("Host key verification failed.\n", Failure::HostKey),
            (
                "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.\n",
                Failure::HostKey,
            ),
            (
                "root@127.0.0.1: Permission denied (publickey).",
                Failure::Auth,
            ),
            (
                "ssh: connect to host 127.0.0.1 port 1: Connection refused",
                Failure::Connect,
            ),
            (
                "ssh: Could not resolve hostname nope: Name or service not known",
                Failure::Connect,
            ),
            ("something else", Failure::Ssh),
            ("", Failure::Signalled),
            (
                "Connection to 127.0.0.1 closed by remote host.\n",
                Failure::Closed,
            ),
            (
                "client_loop: send disconnect: Broken pipe\n",
                Failure::Closed,
            ),
            ("Connection closed by 127.0.0.1 port 22\n", Failure::Connect),
        ] {
            assert_eq!(classify(255, stderr), Some(failure), "{stderr}");
        }
        assert_eq!(stderr_tail("a\n\x1b[2Jb\n\n"), "␛[2Jb");
        let plan = plan(Mode::Headless);
        assert_eq!(
            failure_message(
                Failure::Auth,
                &plan,
                255,
                "x: Permission denied (publickey)."
            ),
            "ssh could not log in to fleet-1 (exit 255): ssh said \"x: Permission denied (publickey).\". \
             Check the user and the key (ssh-add, IdentityFile in the OpenSSH config); headless \
             commands run with BatchMode=yes, so no password is asked."
        );
    }

    /// The protocol's streams: a remote stackless-tui without them, and
    /// what a signal to their launcher did.
    #[test]
    fn stream_failures() {
        for said in [
            "error: unrecognized subcommand 'serve'\n\nUsage: stackless-tui [OPTIONS] [COMMAND]",
            "error: unexpected argument '--follow' found\n\nUsage: stackless-tui snapshot",
        ] {
            assert_eq!(classify(2, said), Some(Failure::NoStreams), "{said}");
        }
        assert_eq!(
            classify(2, "error: unexpected argument '--bogus' found"),
            None
        );
        assert_eq!(
            failure_message(Failure::NoStreams, &plan(Mode::Serve), 2, ""),
            "/opt/my tools/stackless-tui on fleet-1 is older than this stackless-tui: it does \
             not speak the stream protocol (`serve --stdio`, `snapshot --follow`; exit 2). \
             Install this version there (from a checkout of stackless-tui: `cargo install \
             --locked --path .`, or copy this binary to the host)."
        );
        assert_eq!(
            interrupted_message(&plan(Mode::Serve), 15, "SIGTERM", false),
            "interrupted by SIGTERM: the agent on fleet-1 was told to stop (its stdin was \
             closed, as at the end of the local stdin: a teardown under way there is stopped, \
             audited `interrupted`, nothing recorded; its last lines are above). Exit 143."
        );
        assert_eq!(
            interrupted_message(&plan(Mode::Follow), 2, "SIGINT", true),
            "interrupted by SIGINT: the stream from fleet-1 was closed (ssh closed the \
             connection; `snapshot --follow` there stops at its next write); it did not end \
             within 30 s, so ssh was killed. Exit 130."
        );
    }
}
