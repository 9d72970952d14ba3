//! The one runner of a child the console starts for its answer (a
//! teardown's `down`, the operator's `up` and `verify`, `operation
//! cancel`, a queued `down --no-wait`): argv only (never a shell), stdin
//! closed, in a process group of its own, with a deadline, its output
//! bounded and what it answered redacted before anyone reads it.
//!
//! - Output: stdout and stderr go to unlinked temporary files, not pipes:
//!   a child outlives this console intact (no SIGPIPE when the console
//!   exits), a grandchild holding them open delays nothing, and the
//!   kernel drains the child however much it prints. Only the first
//!   [`Limits::stdout_cap`] bytes of stdout and the last
//!   [`Limits::stderr_tail`] bytes of stderr are ever read into memory;
//!   above [`Limits::output_limit`] bytes of either on disk, the group is
//!   stopped ([`Exit::TooMuchOutput`]).
//! - Stopping: at the deadline (or a cancelled [`StopToken`], or too much
//!   output) the whole group gets SIGTERM, then SIGKILL after
//!   [`Limits::kill_grace`], only through [`super::signal`].
//! - What is left: once the child itself has ended (however it ended),
//!   whatever is left of its group (a background grandchild) gets
//!   SIGTERM, then SIGKILL after [`LEFT_GRACE`] (or `kill_grace` if
//!   shorter), before its output is read back; the output limit holds
//!   while anything of the group runs (past it: SIGKILL at once). No
//!   member of a child's group outlives its answer, and nothing writes
//!   into the unlinked output files after it.
//! - Redaction: the stdout kept goes through
//!   [`Redactor::child_output`], the stderr tail through
//!   [`Redactor::child_tail`] (`crate::model::redact`), in [`run`]
//!   itself: no caller, and so no sink, sees what a child printed
//!   unredacted.

use std::ffi::OsStr;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::Command;

use crate::model::envelope::Exit;
use crate::model::redact::Redactor;
use crate::stop::StopToken;

/// How often the deadline, the stop and the output size are checked.
const WATCH: Duration = Duration::from_millis(100);

/// Once the child has ended, how long what is left of its group has
/// between SIGTERM and SIGKILL (at most [`Limits::kill_grace`]).
pub(crate) const LEFT_GRACE: Duration = Duration::from_secs(1);

/// After the SIGKILL to what is left, how long to wait for the group to
/// be gone (its members reaped by their new parent) before reading on.
const LEFT_LINGER: Duration = Duration::from_secs(1);

/// How often what is left of the group is looked at while it stops.
const LEFT_POLL: Duration = Duration::from_millis(20);

/// How much of a child's output is kept and allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// At most this many bytes of the start of stdout are read (bytes).
    pub stdout_cap: usize,
    /// At most this many bytes of the end of stderr are read (bytes).
    pub stderr_tail: usize,
    /// Above this many bytes of stdout or stderr on disk the group is
    /// stopped (bytes).
    pub output_limit: u64,
    /// After the SIGTERM, how long before SIGKILL.
    pub kill_grace: Duration,
}

/// One child to run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job<'a, S: AsRef<OsStr>> {
    /// The program and its arguments.
    pub argv: &'a [S],
    /// Variables added to the inherited environment.
    pub env: &'a [(&'a str, &'a str)],
    /// How long it may run before its group is stopped.
    pub deadline: Duration,
    /// Cancelled: its group is stopped ([`Exit::Interrupted`]).
    pub stop: Option<&'a StopToken>,
    /// Its output's bounds.
    pub limits: Limits,
    /// The `secret_history` values known (an empty one where none is at
    /// hand: the credential rules apply all the same).
    pub redactor: &'a Redactor,
}

/// What a child answered, already redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// How it ended.
    pub exit: Exit,
    /// The first [`Limits::stdout_cap`] bytes of its stdout, lossily
    /// decoded, redacted ([`Redactor::child_output`]).
    pub stdout: String,
    /// The last [`Limits::stderr_tail`] bytes of its stderr (`…` first
    /// when cut mid-line), redacted ([`Redactor::child_tail`]).
    pub stderr_tail: String,
    /// How many bytes it wrote to stdout in all (drained, not kept).
    pub stdout_len: u64,
    /// Wall time from spawn to exit.
    pub took: Duration,
}

/// Run `job` to its end, as the module says. A command that cannot be
/// started is [`Exit::NotStarted`] (`cannot run P: ...`).
pub(crate) async fn run<S: AsRef<OsStr>>(job: Job<'_, S>) -> Answer {
    let started = Instant::now();
    let not_started = |why: String| Answer {
        exit: Exit::NotStarted(why),
        stdout: String::new(),
        stderr_tail: String::new(),
        stdout_len: 0,
        took: started.elapsed(),
    };
    let Some((program, args)) = job.argv.split_first() else {
        return not_started("no command".into());
    };
    let program = program.as_ref();
    let files = tempfile::tempfile().and_then(|out| Ok((out, tempfile::tempfile()?)));
    let handles = files.and_then(|(out, err)| {
        let children = (out.try_clone()?, err.try_clone()?);
        Ok(((out, err), children))
    });
    let ((out, err), (out_child, err_child)) = match handles {
        Ok(handles) => handles,
        Err(error) => return not_started(format!("cannot create output files: {error}")),
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(job.env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::from(out_child))
        .stderr(Stdio::from(err_child))
        .process_group(0)
        .kill_on_drop(false);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return not_started(format!("cannot run {}: {error}", program.to_string_lossy()));
        }
    };
    // The parent's copies of the child's ends are gone with `command`.
    drop(command);
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let exit = watch(&mut child, &job, &out, &err, started).await;
    let took = started.elapsed();
    if let Some(pgid) = pgid {
        stop_what_is_left(pgid, &job.limits, &out, &err).await;
    }
    let exit = match exit {
        Ok(exit) => exit,
        Err(error) => {
            return not_started(format!(
                "waiting for {} failed: {error}",
                program.to_string_lossy()
            ));
        }
    };
    Answer {
        exit,
        stdout: job
            .redactor
            .child_output(&read_head(&out, job.limits.stdout_cap)),
        stderr_tail: job
            .redactor
            .child_tail(&read_tail(&err, job.limits.stderr_tail)),
        stdout_len: size(&out),
        took,
    }
}

/// The size of `file` (bytes; 0 when it cannot be read).
fn size(file: &std::fs::File) -> u64 {
    file.metadata().map_or(0, |m| m.len())
}

/// Wait for `child` (spawned at `started`) to end, stopping its group
/// (SIGTERM, SIGKILL after the grace) at `job`'s deadline, its stop, or
/// past its output limit in `out` or `err`: how it ended.
async fn watch<S: AsRef<OsStr>>(
    child: &mut tokio::process::Child,
    job: &Job<'_, S>,
    out: &std::fs::File,
    err: &std::fs::File,
    started: Instant,
) -> std::io::Result<Exit> {
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    loop {
        if let Ok(status) = tokio::time::timeout(WATCH, child.wait()).await {
            return Ok(exit_of(status?));
        }
        let too_much = size(out).max(size(err)) > job.limits.output_limit;
        let interrupted = job.stop.is_some_and(StopToken::is_cancelled);
        if too_much || interrupted || started.elapsed() >= job.deadline {
            signal_group(pgid, nix::sys::signal::Signal::SIGTERM);
            if tokio::time::timeout(job.limits.kill_grace, child.wait())
                .await
                .is_err()
            {
                signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait().await;
            }
            return Ok(if interrupted {
                Exit::Interrupted
            } else if too_much {
                Exit::TooMuchOutput(job.limits.output_limit)
            } else {
                Exit::TimedOut(job.deadline.as_secs())
            });
        }
    }
}

/// Stop what is left of process group `pgid` once its leader has ended:
/// SIGTERM, then SIGKILL after [`LEFT_GRACE`] (at most `limits`'
/// `kill_grace`) or at once when `out` or `err` passes the output limit;
/// waits (looking every [`LEFT_POLL`]) until the group is gone, at most
/// [`LEFT_LINGER`] after the SIGKILL. Signals only through
/// [`super::signal`] and [`super::alive`].
async fn stop_what_is_left(pgid: i32, limits: &Limits, out: &std::fs::File, err: &std::fs::File) {
    use nix::sys::signal::Signal;
    if !super::alive(pgid) {
        return;
    }
    let _ = super::signal(pgid, Signal::SIGTERM);
    let grace = LEFT_GRACE.min(limits.kill_grace);
    let started = Instant::now();
    let mut killed_at: Option<Instant> = None;
    while super::alive(pgid) {
        let too_much = size(out).max(size(err)) > limits.output_limit;
        match killed_at {
            None if too_much || started.elapsed() >= grace => {
                let _ = super::signal(pgid, Signal::SIGKILL);
                killed_at = Some(Instant::now());
            }
            Some(at) if at.elapsed() >= LEFT_LINGER => return,
            _ => {}
        }
        tokio::time::sleep(LEFT_POLL).await;
    }
}

/// At most `cap` bytes from the start of `file`, lossily decoded.
fn read_head(file: &std::fs::File, cap: usize) -> String {
    use std::io::{Read as _, Seek as _};
    let mut file = file;
    let mut bytes = Vec::new();
    if file.rewind().is_ok() {
        let _ = file.take(cap as u64).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The last `cap` bytes of `file` as text; when more was written, the
/// tail starts with `…` unless it starts a line (it was cut mid-line).
pub(crate) fn read_tail(file: &std::fs::File, cap: usize) -> String {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = file;
    let len = file.metadata().map_or(0, |m| m.len());
    // One byte more when cut: whether the tail starts a line.
    let cut = len > cap as u64;
    let from = len.saturating_sub(cap as u64 + u64::from(cut));
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_ok() {
        let _ = file
            .take(cap as u64 + u64::from(cut))
            .read_to_end(&mut bytes);
    }
    if !cut || bytes.is_empty() {
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let mark = if bytes[0] == b'\n' { "" } else { "…" };
    format!("{mark}{}", String::from_utf8_lossy(&bytes[1..]))
}

/// Signal the child's group, when it has one, through [`super::signal`].
fn signal_group(pgid: Option<i32>, signal: nix::sys::signal::Signal) {
    if let Some(pgid) = pgid {
        let _ = super::signal(pgid, signal);
    }
}

/// How a finished child ended.
fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return Exit::Code(code);
    }
    match status.signal() {
        Some(signal) => Exit::Signal(
            nix::sys::signal::Signal::try_from(signal)
                .map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_owned()),
        ),
        None => Exit::Code(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    const LIMITS: Limits = Limits {
        stdout_cap: 64 * 1024,
        stderr_tail: 4 * 1024,
        output_limit: 256 * 1024 * 1024,
        kill_grace: Duration::from_secs(5),
    };

    fn sh(script: &str, limits: Limits, redactor: &Redactor) -> Answer {
        let argv = ["/bin/sh", "-c", script];
        rt().block_on(run(Job {
            argv: &argv,
            env: &[("CHILD_ENV", "set")],
            deadline: Duration::from_secs(60),
            stop: None,
            limits,
            redactor,
        }))
    }

    /// The peak resident memory of this process (`VmHWM`, KiB).
    fn peak_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// A child printing 200 MB is drained to the end (it exits 0, every
    /// byte counted) while only the cap is kept: the runner's memory does
    /// not follow the child's output.
    #[test]
    fn a_child_printing_200_mb_is_drained_and_only_the_cap_is_kept() {
        let before = peak_kib();
        let answer = sh(
            "head -c 200000000 /dev/zero | tr '\\0' x; echo done >&2",
            LIMITS,
            &Redactor::default(),
        );
        assert_eq!(answer.exit, Exit::Code(0));
        assert_eq!(answer.stdout_len, 200_000_000);
        assert_eq!(answer.stdout.len(), LIMITS.stdout_cap);
        assert_eq!(answer.stderr_tail, "done\n");
        let grew = peak_kib().saturating_sub(before);
        assert!(grew < 64 * 1024, "peak memory grew by {grew} KiB");
    }

    /// Past its output limit a child is stopped with its group, not read.
    #[test]
    fn a_child_past_its_output_limit_is_killed_with_its_group() {
        let limits = Limits {
            output_limit: 8 * 1024 * 1024,
            kill_grace: Duration::from_millis(200),
            ..LIMITS
        };
        let answer = sh(
            "trap '' TERM; while :; do head -c 1000000 /dev/zero; done",
            limits,
            &Redactor::default(),
        );
        assert_eq!(answer.exit, Exit::TooMuchOutput(limits.output_limit));
        assert!(answer.stdout_len > limits.output_limit);
        assert_eq!(answer.stdout.len(), limits.stdout_cap);
    }

    /// What a child answers is redacted in the runner's result: stdout
    /// (a JSON envelope or text) and the stderr tail, by credential rules
    /// and by the `secret_history` values given.
    #[test]
    fn what_a_child_answers_is_redacted_in_the_result() {
        let script = r#"echo '{"ok":false,"error":{"code":"x","message":"bad {\"client_secret\":\"CANARY2\"} token=CANARY3","context":{"password":"CANARY1","url":"https://u:CANARY5@h"}}}'
echo "Authorization: Bearer CANARY4" >&2
echo "X-Api-Key: CANARY6" >&2
echo "Basic CANARY7 and REGISTERED_VALUE $CHILD_ENV" >&2
exit 1"#;
        let redactor = Redactor::new(["REGISTERED_VALUE".to_owned()]);
        let answer = sh(script, LIMITS, &redactor);
        assert_eq!(answer.exit, Exit::Code(1));
        assert_eq!(
            answer.stdout,
            r#"{"ok":false,"error":{"code":"x","message":"bad {\"client_secret\":\"[redacted]\"} token=[redacted]","context":{"password":"[redacted]","url":"https://[redacted]@h"}}}"#
                .to_owned()
                + "\n"
        );
        assert_eq!(
            answer.stderr_tail,
            "Authorization: Bearer [redacted]\nX-Api-Key: [redacted]\nBasic [redacted] and [redacted] set\n"
        );
    }

    /// Whether process `pid` is alive (a zombie counts as gone).
    fn pid_alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
    }

    /// Once the child has answered and exited, what is left of its group
    /// is stopped before the runner returns: a grandchild ignoring
    /// SIGTERM gets SIGKILL after the grace; the answer is the child's.
    #[test]
    fn what_is_left_of_the_group_is_stopped_once_the_child_has_exited() {
        let limits = Limits {
            kill_grace: Duration::from_millis(300),
            ..LIMITS
        };
        let answer = sh(
            "sleep 60 & echo $!; (trap '' TERM; exec sleep 61) & echo $! >&2; exit 3",
            limits,
            &Redactor::default(),
        );
        assert_eq!(answer.exit, Exit::Code(3));
        let pids: Vec<&str> = [answer.stdout.as_str(), answer.stderr_tail.as_str()].to_vec();
        assert_eq!(
            pids.iter().filter(|pid| pid_alive(pid)).count(),
            0,
            "{pids:?}"
        );
    }

    /// The output limit holds while a grandchild writes after the child
    /// has exited: past it the grandchild is killed at once (well before
    /// the grace), and it is gone when the runner returns.
    #[test]
    fn a_grandchild_writing_after_the_child_exited_is_stopped_at_the_limit() {
        let limits = Limits {
            output_limit: 1_500_000,
            kill_grace: Duration::from_secs(60),
            ..LIMITS
        };
        let started = Instant::now();
        // The child exits only once the grandchild ignores SIGTERM (a
        // fifo: no race between its `trap` and the runner's SIGTERM).
        let answer = sh(
            "f=$(mktemp -u); mkfifo \"$f\"; \
             (trap '' TERM; echo > \"$f\"; while :; do head -c 1000000 /dev/zero; done) & \
             read _ < \"$f\"; rm -f \"$f\"; echo $! >&2; exit 0",
            limits,
            &Redactor::default(),
        );
        assert_eq!(answer.exit, Exit::Code(0));
        assert!(!pid_alive(&answer.stderr_tail), "{}", answer.stderr_tail);
        assert!(started.elapsed() < LEFT_GRACE + LEFT_LINGER);
        assert!(
            answer.stdout_len > limits.output_limit,
            "{}",
            answer.stdout_len
        );
    }

    #[test]
    fn no_command_and_a_missing_program_are_not_started() {
        let none: [&str; 0] = [];
        let answer = rt().block_on(run(Job {
            argv: &none,
            env: &[],
            deadline: Duration::from_secs(1),
            stop: None,
            limits: LIMITS,
            redactor: &Redactor::default(),
        }));
        assert_eq!(answer.exit, Exit::NotStarted("no command".into()));
    }
}
