//! The teardown runner: runs the `down` command for one instance as a child
//! process in its own process group, with a deadline and capped output.
//! Never through a shell: the instance name is one argv element.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::Command;

use crate::model::envelope::Exit;
use crate::model::name::is_dns_safe;
use crate::stop::StopToken;

/// The placeholder replaced by the instance name.
pub(crate) const NAME_PLACEHOLDER: &str = "{name}";

/// An argv as one line a shell would split back into the same argv: each
/// element through `shell_words::quote` (`sh -c 'sleep 3' golf`), joined by
/// spaces. The one rendering of a teardown command: the `d` dialogs, `Y`
/// and the Activity line's `tearing down: …` all use it. Only for reading
/// (sanitize before drawing): the command is always run as argv, never
/// through a shell.
#[must_use]
pub(crate) fn shell_line<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| shell_words::quote(a.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
/// At most this much stdout is kept (the envelope is small; a runaway `down`
/// printing 100 MB must not grow the console's memory).
pub(crate) const STDOUT_CAP: usize = 256 * 1024;
/// At most this much of the end of stderr is kept, for the activity log.
pub(crate) const STDERR_TAIL: usize = 4 * 1024;
/// After a deadline's TERM, how long before KILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(5);

/// The teardown command as argv, split once at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownCommand {
    argv: Vec<String>,
}

/// Why a `--down-cmd` was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownCommandError {
    /// shell-words could not split it (an unclosed quote).
    #[error("--down-cmd cannot be split into arguments: {0}")]
    Split(String),
    /// Nothing to run.
    #[error("--down-cmd is empty")]
    Empty,
    /// `{name}` appears nowhere, so the command could not know the instance.
    #[error("--down-cmd must contain {{name}} (e.g. `stackless down {{name}} --json`)")]
    NoPlaceholder,
}

impl DownCommand {
    /// Split `template` with POSIX shell-word rules (quotes respected, nothing
    /// expanded, no shell run), e.g. the default `stackless down {name} --json`.
    ///
    /// # Errors
    /// [`DownCommandError`] when it cannot be split, is empty, or lacks
    /// `{name}`.
    pub fn parse(template: &str) -> Result<Self, DownCommandError> {
        let argv =
            shell_words::split(template).map_err(|e| DownCommandError::Split(e.to_string()))?;
        Self::from_argv(argv)
    }

    /// Use an argv template as it is (the demo builds one from paths that may
    /// contain spaces).
    ///
    /// # Errors
    /// As [`DownCommand::parse`].
    pub fn from_argv(argv: Vec<String>) -> Result<Self, DownCommandError> {
        if argv.is_empty() {
            return Err(DownCommandError::Empty);
        }
        if !argv.iter().any(|a| a.contains(NAME_PLACEHOLDER)) {
            return Err(DownCommandError::NoPlaceholder);
        }
        Ok(Self { argv })
    }

    /// The argv for `name`: each `{name}` replaced inside its own element, so
    /// the name is never split or interpreted. `None` when the name is not
    /// DNS-safe: such a name never reaches a command line.
    #[must_use]
    pub fn argv_for(&self, name: &str) -> Option<Vec<String>> {
        if !is_dns_safe(name) {
            return None;
        }
        Some(
            self.argv
                .iter()
                .map(|a| a.replace(NAME_PLACEHOLDER, name))
                .collect(),
        )
    }

    /// The template argv.
    #[must_use]
    pub fn template(&self) -> &[String] {
        &self.argv
    }

    /// Why the program (`argv[0]`) cannot be run, if it cannot: a path
    /// (it holds a `/`) that is not an executable file, or a bare name found
    /// in no directory of `path` (the `PATH` value the teardown inherits).
    /// Checked once at start-up, so a console says so before the first
    /// expiry instead of at it: `` `stackless` is not on PATH ``.
    #[must_use]
    pub fn missing_program(&self, path: Option<&std::ffi::OsStr>) -> Option<String> {
        let program = self.argv.first()?;
        let shown = crate::model::text::sanitize_short(program, 120);
        if program.contains('/') {
            return (!is_executable(std::path::Path::new(program)))
                .then(|| format!("`{shown}` is not an executable file"));
        }
        let found = path.is_some_and(|path| {
            std::env::split_paths(path).any(|dir| is_executable(&dir.join(program)))
        });
        (!found).then(|| format!("`{shown}` is not on PATH"))
    }
}

/// Whether `path` is a regular file with an execute bit (symbolic links
/// followed, as `execve` does).
fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What a teardown did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TeardownResult {
    /// How it ended.
    pub exit: Exit,
    /// Captured stdout (at most [`STDOUT_CAP`] bytes, lossily decoded).
    pub stdout: String,
    /// The last [`STDERR_TAIL`] bytes of stderr.
    pub stderr_tail: String,
    /// Wall time from spawn to exit.
    pub took: Duration,
}

impl TeardownResult {
    /// `down` exited 0: success (contract: "Exit status 0 is success").
    #[must_use]
    pub(crate) fn succeeded(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

/// Above this much stdout or stderr on disk the teardown is killed: the
/// output goes to unlinked temporary files (so a console that exits never
/// leaves a `down` to die of SIGPIPE), and this bounds their size.
pub(crate) const OUTPUT_LIMIT: u64 = 256 * 1024 * 1024;
/// How often the deadline and the output size are checked.
const WATCH: Duration = Duration::from_millis(100);

/// Run `argv` with a deadline. The child gets its own process group; at the
/// deadline the whole group gets SIGTERM, then SIGKILL after
/// [`KILL_GRACE`]. Its stdout and stderr go to unlinked temporary files, not
/// pipes: a teardown outlives this console intact (no SIGPIPE when the
/// console exits), a grandchild holding them open delays nothing, and only
/// the first [`STDOUT_CAP`] bytes of stdout and the last [`STDERR_TAIL`]
/// bytes of stderr are ever read into memory. A command that cannot be
/// started is [`Exit::NotStarted`]. When `stop` is cancelled (`reap --once`
/// interrupted) the group is stopped the same way and the result is
/// [`Exit::Interrupted`].
pub(crate) async fn run(argv: &[String], deadline: Duration, stop: &StopToken) -> TeardownResult {
    let started = Instant::now();
    let not_started = |why: String| TeardownResult {
        exit: Exit::NotStarted(why),
        stdout: String::new(),
        stderr_tail: String::new(),
        took: started.elapsed(),
    };
    let files = tempfile::tempfile().and_then(|out| {
        let err = tempfile::tempfile()?;
        Ok((out, err))
    });
    let (out, err) = match files {
        Ok(files) => files,
        Err(error) => return not_started(format!("cannot create output files: {error}")),
    };
    let handles = out.try_clone().and_then(|o| Ok((o, err.try_clone()?)));
    let (out_child, err_child) = match handles {
        Ok(handles) => handles,
        Err(error) => return not_started(format!("cannot create output files: {error}")),
    };
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::from(out_child))
        .stderr(Stdio::from(err_child))
        .process_group(0)
        .kill_on_drop(false);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return not_started(format!("cannot run {}: {error}", argv[0])),
    };
    // The parent's copies of the child's ends are gone with `command`.
    drop(command);
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let size = |file: &std::fs::File| file.metadata().map_or(0, |m| m.len());
    let exit = loop {
        match tokio::time::timeout(WATCH, child.wait()).await {
            Ok(Ok(status)) => break exit_of(status),
            Ok(Err(error)) => {
                return not_started(format!("waiting for {} failed: {error}", argv[0]));
            }
            Err(_) => {}
        }
        let too_much = size(&out).max(size(&err)) > OUTPUT_LIMIT;
        let interrupted = stop.is_cancelled();
        if too_much || interrupted || started.elapsed() >= deadline {
            signal_group(pgid, nix::sys::signal::Signal::SIGTERM);
            if tokio::time::timeout(KILL_GRACE, child.wait())
                .await
                .is_err()
            {
                signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait().await;
            }
            break if interrupted {
                Exit::Interrupted
            } else if too_much {
                Exit::TooMuchOutput(OUTPUT_LIMIT)
            } else {
                Exit::TimedOut(deadline.as_secs())
            };
        }
    };
    let took = started.elapsed();
    TeardownResult {
        exit,
        stdout: read_head(&out, STDOUT_CAP),
        stderr_tail: read_tail(&err, STDERR_TAIL),
        took,
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

/// At most the last `cap` bytes of `file`, lossily decoded.
/// The last `cap` bytes of `file` as text; when more was written, the
/// tail starts with `…` unless it starts a line (it was cut mid-line).
fn read_tail(file: &std::fs::File, cap: usize) -> String {
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

fn signal_group(pgid: Option<i32>, signal: nix::sys::signal::Signal) {
    if let Some(pgid) = pgid {
        let _ = crate::process_group::signal(pgid, signal);
    }
}

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
    #[test]
    fn a_missing_program_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let down = super::DownCommand::parse("no-such-stackless down {name}").unwrap();
        assert_eq!(
            down.missing_program(Some(dir.path().as_os_str())),
            Some("`no-such-stackless` is not on PATH".to_owned())
        );
        assert_eq!(
            down.missing_program(None),
            Some("`no-such-stackless` is not on PATH".to_owned())
        );
        let sh = super::DownCommand::parse("sh -c true {name}").unwrap();
        assert_eq!(
            sh.missing_program(Some("/nonexistent:/bin:/usr/bin".as_ref())),
            None
        );
        let file = dir.path().join("down");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        let at = super::DownCommand::from_argv(vec![file.display().to_string(), "{name}".into()])
            .unwrap();
        assert_eq!(
            at.missing_program(None),
            Some(format!("`{}` is not an executable file", file.display()))
        );
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(at.missing_program(None), None);
    }

    use super::*;

    #[test]
    fn name_is_one_argv_element() {
        let cmd = DownCommand::parse("stackless down {name} --json").unwrap();
        assert_eq!(
            cmd.argv_for("golf").unwrap(),
            vec!["stackless", "down", "golf", "--json"]
        );
        let quoted =
            DownCommand::parse("'/opt/my tools/stackless' down --instance={name}").unwrap();
        assert_eq!(
            quoted.argv_for("golf").unwrap(),
            vec!["/opt/my tools/stackless", "down", "--instance=golf"]
        );
    }

    #[test]
    fn hostile_names_never_become_argv() {
        let cmd = DownCommand::parse("stackless down {name} --json").unwrap();
        assert_eq!(cmd.argv_for("x; touch /tmp/pwned"), None);
        assert_eq!(cmd.argv_for("--help"), None);
        assert_eq!(cmd.argv_for("$(reboot)"), None);
    }

    #[test]
    fn bad_templates_are_rejected() {
        assert_eq!(DownCommand::parse(""), Err(DownCommandError::Empty));
        assert_eq!(
            DownCommand::parse("stackless down --json"),
            Err(DownCommandError::NoPlaceholder)
        );
        assert!(matches!(
            DownCommand::parse("stackless 'down {name}"),
            Err(DownCommandError::Split(_))
        ));
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn captures_exit_stdout_and_stderr() {
        let r = rt().block_on(run(
            &sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(10),
            &StopToken::new(),
        ));
        assert_eq!(r.exit, Exit::Code(3));
        assert_eq!(r.stdout, "out\n");
        assert_eq!(r.stderr_tail, "err\n");
        assert!(!r.succeeded());
    }

    #[test]
    fn deadline_kills_the_group() {
        let r = rt().block_on(run(
            &sh("sleep 30"),
            Duration::from_millis(300),
            &StopToken::new(),
        ));
        assert_eq!(r.exit, Exit::TimedOut(0));
        assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    }

    #[test]
    fn grandchild_holding_stdout_does_not_hang() {
        let r = rt().block_on(run(
            &sh("sleep 30 & echo started; exit 0"),
            Duration::from_secs(10),
            &StopToken::new(),
        ));
        assert_eq!(r.exit, Exit::Code(0));
        assert_eq!(r.stdout, "started\n");
        assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    }

    #[test]
    fn huge_output_is_capped() {
        let r = rt().block_on(run(
            &sh("head -c 20000000 /dev/zero | tr '\\0' x; exit 1"),
            Duration::from_secs(30),
            &StopToken::new(),
        ));
        assert_eq!(r.exit, Exit::Code(1));
        assert_eq!(r.stdout.len(), STDOUT_CAP);
    }

    #[test]
    fn a_stop_kills_the_group_as_interrupted() {
        let stop = StopToken::new();
        let later = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            later.cancel();
        });
        let r = rt().block_on(run(&sh("sleep 30"), Duration::from_secs(60), &stop));
        assert_eq!(r.exit, Exit::Interrupted);
        assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    }

    #[test]
    fn killed_by_signal_is_named() {
        let r = rt().block_on(run(
            &sh("kill -KILL $$"),
            Duration::from_secs(10),
            &StopToken::new(),
        ));
        assert_eq!(r.exit, Exit::Signal("SIGKILL".into()));
    }

    #[test]
    fn spawn_failure_is_reported() {
        let r = rt().block_on(run(
            &["/nonexistent/down".to_owned()],
            Duration::from_secs(1),
            &StopToken::new(),
        ));
        assert_eq!(
            r.exit,
            Exit::NotStarted(
                "cannot run /nonexistent/down: No such file or directory (os error 2)".into()
            )
        );
    }

    #[test]
    fn output_outlives_the_reader() {
        // stdout goes to a file: a teardown writing after a pause is never
        // killed by SIGPIPE, whoever reads (or stopped reading).
        let r = rt().block_on(run(
            &sh("sleep 0.3; echo late; echo err >&2"),
            Duration::from_secs(10),
            &StopToken::new(),
        ));
        assert_eq!(r.exit, Exit::Code(0));
        assert_eq!(r.stdout, "late\n");
        assert_eq!(r.stderr_tail, "err\n");
    }

    #[test]
    fn a_cut_stderr_tail_is_marked_where_it_starts_mid_line() {
        use std::io::Write as _;
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"first line\nsecond line\n").unwrap();
        assert_eq!(read_tail(&file, 64), "first line\nsecond line\n");
        assert_eq!(read_tail(&file, 8), "…nd line\n");
        assert_eq!(read_tail(&file, 12), "second line\n");
    }
}
