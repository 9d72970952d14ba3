//! One `stackless ... --json` command run for its answer, as `c`'s cancel
//! and `d`'s queued teardown run theirs, through the one child runner
//! (`crate::process_group::run`): argv only (never a shell), stdin
//! closed, `STACKLESS_NO_SELF_UPDATE=1`, in a process group of its own
//! that is stopped whole at the deadline, stdout read up to
//! [`MAX_OUTPUT`] bytes (the rest drained to a file, never into memory;
//! past [`OUTPUT_LIMIT`] the group is stopped), what it answered redacted
//! (`Redactor::child_output`) before it is read.

use std::ffi::OsString;
use std::time::Duration;

use crate::model::envelope::Exit;
use crate::model::redact::Redactor;
use crate::process_group::run::{Job, Limits, run};

/// The most of a command's stdout read (bytes).
pub const MAX_OUTPUT: usize = 1 << 20;

/// Above this much stdout or stderr the command's group is stopped
/// (bytes): an answer is one small envelope.
pub const OUTPUT_LIMIT: u64 = 16 << 20;

/// The bounds of an answer's output.
const LIMITS: Limits = Limits {
    stdout_cap: MAX_OUTPUT,
    stderr_tail: 4 * 1024,
    output_limit: OUTPUT_LIMIT,
    kill_grace: Duration::from_secs(1),
};

/// Run `argv` (already checked) within `timeout`: `Ok((exit code, stdout
/// as lossy UTF-8, redacted))`, or why there is no answer (`cannot run P:
/// ...`, `timed out after 30s`, `printed more than 16777216 bytes`).
///
/// # Errors
/// The text of why it gave no answer.
pub async fn answer(argv: &[OsString], timeout: Duration) -> Result<(Option<i32>, String), String> {
    let answer = run(Job {
        argv,
        env: &[("STACKLESS_NO_SELF_UPDATE", "1")],
        deadline: timeout,
        stop: None,
        limits: LIMITS,
        redactor: &Redactor::default(),
    })
    .await;
    match answer.exit {
        Exit::Code(code) => Ok((Some(code), answer.stdout)),
        Exit::Signal(_) => Ok((None, answer.stdout)),
        Exit::TimedOut(_) => Err(format!(
            "timed out after {}",
            humantime::format_duration(timeout)
        )),
        Exit::TooMuchOutput(bytes) => Err(format!("printed more than {bytes} bytes")),
        Exit::NotStarted(why) => Err(why),
        Exit::Interrupted => Err("interrupted".into()),
    }
}

/// Why a command that gave no envelope failed: `exited with status 1:
/// <its last non-empty stdout line>` (`no output`), or `killed by a
/// signal`.
#[must_use]
pub fn failure(code: Option<i32>, stdout: &str) -> String {
    match code {
        Some(code) => {
            let last = stdout
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("no output");
            format!("exited with status {code}: {last}")
        }
        None => "killed by a signal".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_of(script: &str) -> Result<(Option<i32>, String), String> {
        let argv: Vec<OsString> = vec!["/bin/sh".into(), "-c".into(), script.into()];
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(answer(&argv, Duration::from_secs(60)))
    }

    /// The peak resident memory of this process (`VmHWM`, KiB).
    fn peak_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// A 200 MB answer is never read into memory: the group is stopped
    /// past [`OUTPUT_LIMIT`] and this process's peak memory stays where
    /// it was.
    #[test]
    fn a_200_mb_answer_is_stopped_not_read_into_memory() {
        let before = peak_kib();
        assert_eq!(
            answer_of("head -c 200000000 /dev/zero | tr '\\0' x"),
            Err(format!("printed more than {OUTPUT_LIMIT} bytes"))
        );
        let grew = peak_kib().saturating_sub(before);
        assert!(grew < 64 * 1024, "peak memory grew by {grew} KiB");
    }

    /// A failing `operation cancel`'s answer comes back redacted, and so
    /// does the line read from it.
    #[test]
    fn a_failing_answer_comes_back_redacted() {
        let (code, stdout) = answer_of(
            r#"echo 'progress token=CANARY3 https://u:CANARY5@h'; echo 'X-Api-Key: CANARY6 Basic CANARY7 {"password":"CANARY1"}'; exit 4"#,
        )
        .unwrap();
        assert_eq!(code, Some(4));
        assert_eq!(
            stdout,
            "progress token=[redacted] https://[redacted]@h\nX-Api-Key: [redacted] Basic [redacted] {\"password\":\"[redacted]\"}\n"
        );
        assert_eq!(
            failure(code, &stdout),
            "exited with status 4: X-Api-Key: [redacted] Basic [redacted] {\"password\":\"[redacted]\"}"
        );
    }
}
