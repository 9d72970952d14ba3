//! The teardown command: runs the `down` command for one instance through
//! the one child runner (`crate::process_group::run`: its own process
//! group, a deadline, capped and redacted output). Never through a shell:
//! the instance name is one argv element.

use std::time::Duration;

use crate::model::envelope::Exit;
use crate::model::name::is_dns_safe;
use crate::model::redact::Redactor;
use crate::process_group::run::{Job, Limits};
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

/// The bounds of a teardown's (and a renew's, a verify's) output.
pub(crate) const LIMITS: Limits = Limits {
    stdout_cap: STDOUT_CAP,
    stderr_tail: STDERR_TAIL,
    output_limit: OUTPUT_LIMIT,
    kill_grace: KILL_GRACE,
};

/// Run `argv` with a deadline through the one runner
/// (`crate::process_group::run`): its own process group, stopped whole
/// (SIGTERM, SIGKILL after [`KILL_GRACE`]) at the deadline, when its
/// output passes [`OUTPUT_LIMIT`], or when `stop` is cancelled (`reap
/// --once` interrupted: [`Exit::Interrupted`]); only the first
/// [`STDOUT_CAP`] bytes of stdout and the last [`STDERR_TAIL`] bytes of
/// stderr read, both redacted by `redactor` and the credential rules
/// (`Redactor::child_output`) before anything records them. A command
/// that cannot be started is [`Exit::NotStarted`].
pub(crate) async fn run(
    argv: &[String],
    deadline: Duration,
    stop: &StopToken,
    redactor: &Redactor,
) -> TeardownResult {
    let answer = crate::process_group::run::run(Job {
        argv,
        env: &[],
        deadline,
        stop: Some(stop),
        limits: LIMITS,
        redactor,
    })
    .await;
    TeardownResult {
        exit: answer.exit,
        stdout: answer.stdout,
        stderr_tail: answer.stderr_tail,
        took: answer.took,
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
            &Redactor::default(),
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
            &Redactor::default(),
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
            &Redactor::default(),
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
            &Redactor::default(),
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
        let r = rt().block_on(run(
            &sh("sleep 30"),
            Duration::from_secs(60),
            &stop,
            &Redactor::default(),
        ));
        assert_eq!(r.exit, Exit::Interrupted);
        assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    }

    #[test]
    fn killed_by_signal_is_named() {
        let r = rt().block_on(run(
            &sh("kill -KILL $$"),
            Duration::from_secs(10),
            &StopToken::new(),
            &Redactor::default(),
        ));
        assert_eq!(r.exit, Exit::Signal("SIGKILL".into()));
    }

    #[test]
    fn spawn_failure_is_reported() {
        let r = rt().block_on(run(
            &["/nonexistent/down".to_owned()],
            Duration::from_secs(1),
            &StopToken::new(),
            &Redactor::default(),
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
            &Redactor::default(),
        ));
        assert_eq!(r.exit, Exit::Code(0));
        assert_eq!(r.stdout, "late\n");
        assert_eq!(r.stderr_tail, "err\n");
    }

    #[test]
    fn a_cut_stderr_tail_is_marked_where_it_starts_mid_line() {
        use crate::process_group::run::read_tail;
        use std::io::Write as _;
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"first line\nsecond line\n").unwrap();
        assert_eq!(read_tail(&file, 64), "first line\nsecond line\n");
        assert_eq!(read_tail(&file, 8), "…nd line\n");
        assert_eq!(read_tail(&file, 12), "second line\n");
    }
}
