//! One `stackless ... --json` command run for its answer, as `c`'s cancel
//! and `d`'s queued teardown run theirs: argv only (never a shell), stdin
//! closed, stderr dropped, `STACKLESS_NO_SELF_UPDATE=1`, in a process
//! group of its own that is killed whole at the deadline, stdout read up
//! to [`MAX_OUTPUT`] bytes.

use std::ffi::OsString;
use std::time::Duration;

/// The most of a command's stdout read (bytes).
pub const MAX_OUTPUT: usize = 1 << 20;

/// Run `argv` (already checked) within `timeout`: `Ok((exit code, stdout
/// as lossy UTF-8))`, or why there is no answer (`cannot run P: ...`,
/// `timed out after 30s`, `cannot read its answer: ...`).
///
/// # Errors
/// The text of why it gave no answer.
pub async fn answer(argv: &[OsString], timeout: Duration) -> Result<(Option<i32>, String), String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("no command".into());
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .env("STACKLESS_NO_SELF_UPDATE", "1")
        // Its own process group, so a timeout stops whatever it started.
        .process_group(0)
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", program.to_string_lossy()))?;
    let group = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .filter(|&pid| pid > 1)
        .map(nix::unistd::Pid::from_raw);
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Err(_) => {
            // The child itself is killed on drop; its group goes too.
            if let Some(group) = group {
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            }
            Err(format!(
                "timed out after {}",
                humantime::format_duration(timeout)
            ))
        }
        Ok(Err(error)) => Err(format!("cannot read its answer: {error}")),
        Ok(Ok(output)) => {
            let stdout = &output.stdout[..output.stdout.len().min(MAX_OUTPUT)];
            Ok((
                output.status.code(),
                String::from_utf8_lossy(stdout).into_owned(),
            ))
        }
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
