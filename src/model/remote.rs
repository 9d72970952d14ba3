//! The console where the controller is (stackless 0.4.0 fleets), as pure
//! rules: which controller targets are accepted, how the remote binary may
//! be named, the exact `ssh` argv, and what an `ssh` exit status means for
//! the operator. No I/O: `crate::remote` spawns the `ssh` this plans.
//!
//! stackless 0.4.0 reaches a fleet's controller through OpenSSH
//! (`STACKLESS_CONTROLLER=ssh://HOST` or `--controller`; its client runs
//! `ssh -T ... -- HOST 'stackless daemon remote-control'`,
//! `stackless-0.4.0/src/client/remote.rs`). This console runs itself on
//! that host the same way: `ssh -t -- HOST stackless-tui ARGS`.

use std::ffi::OsString;

use crate::model::text::sanitize_short;

/// The remote program when none is named (`--remote-bin`,
/// `STACKLESS_TUI_REMOTE_BIN`): looked up in the remote `PATH`.
pub const DEFAULT_REMOTE_BIN: &str = "stackless-tui";

/// stackless 0.4.0's own words for a target it refuses
/// (`SshController::new`, `stackless-0.4.0/src/client/remote.rs`).
pub const TARGET_RULE: &str =
    "use ssh://HOST_ALIAS or ssh://USER@HOST; configure ports and keys in OpenSSH config";

/// A controller target stackless 0.4.0 accepts: `ssh://HOST_ALIAS`,
/// `ssh://USER@HOST` (the `ssh://` prefix is optional there too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The user before the `@`, if any.
    pub user: Option<String>,
    /// The host name or OpenSSH `Host` alias.
    pub host: String,
}

impl Target {
    /// Validate `text` exactly as stackless 0.4.0 validates `--controller`
    /// and `STACKLESS_CONTROLLER` (`SshController::new` in
    /// `stackless-0.4.0/src/client/remote.rs`): strip one `ssh://`, then
    /// refuse an empty target, one over 255 bytes, one starting with `-`
    /// (ssh would read it as an option: `ssh://-oProxyCommand=...`), more
    /// than one `@`, an empty user or host (`ssh://user@`, `ssh://@host`),
    /// and any byte but ASCII letters, digits and `@._-`: so no shell
    /// metacharacter (`;`, `$(`, space, newline), no path (`/`), no port
    /// (`:22`; ports belong in the OpenSSH config).
    ///
    /// # Errors
    /// [`TARGET_RULE`], stackless's own message.
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        let target = text.strip_prefix("ssh://").unwrap_or(text);
        if target.is_empty()
            || target.len() > 255
            || target.starts_with('-')
            || target.matches('@').count() > 1
            || target.split('@').any(str::is_empty)
            || !target
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"@._-".contains(&byte))
        {
            return Err(TARGET_RULE);
        }
        Ok(match target.split_once('@') {
            Some((user, host)) => Self {
                user: Some(user.to_owned()),
                host: host.to_owned(),
            },
            None => Self {
                user: None,
                host: target.to_owned(),
            },
        })
    }

    /// What ssh is given as its destination: `USER@HOST` or `HOST`.
    #[must_use]
    pub fn destination(&self) -> String {
        match &self.user {
            Some(user) => format!("{user}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

/// Check the remote program's name (`--remote-bin`): not empty, at most
/// 4096 bytes, not starting with `-`, no control character. Anything else
/// is allowed because it is quoted for the remote shell (so `~` and `$HOME`
/// are not expanded; a relative path is relative to the remote home, where
/// ssh starts the command).
///
/// # Errors
/// Why it is refused.
pub fn check_remote_bin(bin: &str) -> Result<(), &'static str> {
    if bin.is_empty() {
        Err("is empty")
    } else if bin.len() > 4096 {
        Err("is longer than 4096 bytes")
    } else if bin.starts_with('-') {
        Err("starts with '-'")
    } else if bin.chars().any(char::is_control) {
        Err("contains a control character")
    } else {
        Ok(())
    }
}

/// Whether the remote side runs the console (a terminal: `ssh -t`) or a
/// headless subcommand (`snapshot`, `reap --once`: `ssh -T`, batch mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The interactive console.
    Console,
    /// A headless subcommand: its stdout, stderr and exit status pass
    /// through.
    Headless,
}

/// Everything the launcher needs: where, what, how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The controller's host.
    pub target: Target,
    /// The remote program ([`check_remote_bin`] passed).
    pub remote_bin: String,
    /// `--ssh-config FILE`: given to ssh as `-F FILE`.
    pub ssh_config: Option<OsString>,
    /// The arguments forwarded to the remote program (the launcher's own
    /// flags already removed by [`strip_launcher_args`]).
    pub forwarded: Vec<String>,
    /// Console or headless.
    pub mode: Mode,
    /// The local environment variables this run read that do not reach
    /// the host ([`env_on_the_host`]): named on stderr before ssh runs.
    pub not_applied: Vec<String>,
}

/// What becomes of a local `STACKLESS_TUI_*` (or `STACKLESS_BIN`) setting
/// on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnTheHost {
    /// The launcher's own (`--remote-bin`, `--ssh-config`): used here.
    Launcher,
    /// A safety switch passed on as this flag when it is on
    /// (`STACKLESS_TUI_DRY_RUN` → `--dry-run`, `..._READ_ONLY` →
    /// `--read-only`, `..._NO_REAPER` → `--no-reaper`): a local "do less"
    /// must never be lost on the way.
    Flag(&'static str),
    /// Not applied there (the host's own environment and config file
    /// apply): named on stderr.
    NotApplied,
}

/// Where the setting of the flag with clap id `id` (read from its
/// environment variable) goes.
#[must_use]
pub fn env_on_the_host(id: &str) -> OnTheHost {
    match id {
        "remote_bin" | "ssh_config" => OnTheHost::Launcher,
        "dry_run" => OnTheHost::Flag("--dry-run"),
        "read_only" => OnTheHost::Flag("--read-only"),
        "no_reaper" => OnTheHost::Flag("--no-reaper"),
        _ => OnTheHost::NotApplied,
    }
}

/// The warning for settings that do not reach `host` (`names`: the
/// environment variables).
#[must_use]
pub fn not_applied_message(host: &str, names: &[String]) -> String {
    let (these, pass) = if names.len() == 1 {
        (
            "this local setting is",
            "Pass it as a flag to apply it there",
        )
    } else {
        (
            "these local settings are",
            "Pass them as flags to apply them there",
        )
    };
    format!(
        "warning: {these} not applied on {host}: {}. Only the command line travels, and the \
         local safety switches (dry-run, read-only, no-reaper) as their flags; the host's own \
         environment and config file apply there. {pass}.",
        names.join(", ")
    )
}

/// The launcher's own flags: removed from what is forwarded. Each takes
/// one value.
pub const LAUNCHER_FLAGS: [&str; 3] = ["--controller", "--remote-bin", "--ssh-config"];

/// The hidden flag the remote side is started with: the host it was
/// reached as (for the header's `on HOST`).
pub const REACHED_AS: &str = "--reached-as";

/// `args` (without the program name) minus the launcher's flags
/// ([`LAUNCHER_FLAGS`], as `--flag VALUE` or `--flag=VALUE`, clap's two
/// spellings), up to a `--`, after which everything is positional and kept.
#[must_use]
pub fn strip_launcher_args(args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            out.push(arg.clone());
            out.extend(iter.cloned());
            break;
        }
        let text = arg.to_string_lossy();
        if LAUNCHER_FLAGS.contains(&text.as_ref()) {
            iter.next();
            continue;
        }
        if LAUNCHER_FLAGS
            .iter()
            .any(|flag| text.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
        {
            continue;
        }
        out.push(arg.clone());
    }
    out
}

impl Plan {
    /// The ssh arguments (after the program name), as argv: never a local
    /// shell. `-F FILE` when a config is named; the console gets `-t`, a
    /// headless command `-T` and `BatchMode=yes` (no prompt a script could
    /// hang on, as stackless's own client); both get
    /// `StrictHostKeyChecking=yes` (on the command line it wins over the
    /// config for the destination; a `ProxyJump` hop is a separate ssh that
    /// reads only the config) and `ConnectTimeout=10` as stackless passes them;
    /// then `--`, the destination, and the remote command: the remote
    /// program, `--reached-as HOST`, the forwarded arguments, each quoted
    /// for the POSIX shell that ssh hands the joined command line to.
    #[must_use]
    pub fn ssh_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        if let Some(config) = &self.ssh_config {
            out.push("-F".into());
            out.push(config.clone());
        }
        match self.mode {
            Mode::Console => out.push("-t".into()),
            Mode::Headless => out.extend(["-T".into(), "-o".into(), "BatchMode=yes".into()]),
        }
        for option in ["StrictHostKeyChecking=yes", "ConnectTimeout=10"] {
            out.push("-o".into());
            out.push(option.into());
        }
        out.push("--".into());
        out.push(self.target.destination().into());
        for word in self.remote_command() {
            out.push(shell_words::quote(&word).into_owned().into());
        }
        out
    }

    /// The remote command's words before quoting.
    #[must_use]
    pub fn remote_command(&self) -> Vec<String> {
        let mut words = vec![
            self.remote_bin.clone(),
            REACHED_AS.to_owned(),
            self.target.host.clone(),
        ];
        words.extend(self.forwarded.iter().cloned());
        words
    }
}

/// What went wrong, read from ssh's exit status and the tail of its
/// stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
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
}

/// Classify an ssh exit `code` with `stderr` (its last bytes). `None`: the
/// remote program ran and this is its own status (passed through as is).
#[must_use]
pub fn classify(code: i32, stderr: &str) -> Option<Failure> {
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
pub fn stderr_tail(stderr: &str) -> String {
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
pub fn failure_message(failure: Failure, plan: &Plan, code: i32, tail: &str) -> String {
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
    }
}

/// What the operator sees when the launcher itself was interrupted (the
/// signal `number`, named `name`, e.g. `SIGTERM`): not an ssh failure. The
/// console's ssh got the signal and closed the connection; a headless
/// command was told to stop (its pipe closed: a `reap --once` pass stops
/// its running teardowns and starts no more). `killed`: ssh did not end
/// within the grace and was killed.
#[must_use]
pub fn interrupted_message(plan: &Plan, number: i32, name: &str, killed: bool) -> String {
    let host = &plan.target.host;
    let what = match plan.mode {
        Mode::Console => format!("the console on {host} was stopped (ssh closed the connection)"),
        Mode::Headless => format!(
            "the remote command on {host} was told to stop (a `reap --once` pass stops its \
             running teardowns and starts no more; its last lines are above)"
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
pub fn signal_name(number: i32) -> String {
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

    #[test]
    fn targets_as_stackless_0_4_0_accepts_them() {
        // stackless-0.4.0/src/client/remote.rs,
        // remote_host_cannot_inject_options_or_shell_commands, plus ours.
        for (text, user, host) in [
            ("ssh://builder", None, "builder"),
            (
                "ssh://deploy@controller.example",
                Some("deploy"),
                "controller.example",
            ),
            ("dev-alias", None, "dev-alias"),
            ("ssh://testhost", None, "testhost"),
        ] {
            assert_eq!(
                Target::parse(text),
                Ok(Target {
                    user: user.map(str::to_owned),
                    host: host.to_owned()
                }),
                "{text}"
            );
        }
        for text in [
            "",
            "-oProxyCommand=x",
            "host;id",
            "$(id)",
            "user@",
            "@host",
            "user@host:22",
            "ssh://host/path",
            "host\nother",
            "ssh://",
            "ssh://-oProxyCommand=touch /tmp/x",
            "ssh://host;rm",
            "ssh://user@",
            "ssh://a@b@c",
            "/srv/stackless/state.db",
            "./state.db",
            "ssh://host name",
            "ssh://hóst",
            &"a".repeat(256),
        ] {
            assert_eq!(Target::parse(text), Err(TARGET_RULE), "{text:?}");
        }
        assert!(Target::parse(&"a".repeat(255)).is_ok());
    }

    #[test]
    fn remote_bins() {
        for ok in [
            "stackless-tui",
            "/opt/stackless-tui/bin/stackless-tui",
            ".cargo/bin/stackless-tui",
            "/path with space/x",
        ] {
            assert_eq!(check_remote_bin(ok), Ok(()), "{ok}");
        }
        assert_eq!(check_remote_bin(""), Err("is empty"));
        assert_eq!(check_remote_bin("-x"), Err("starts with '-'"));
        assert_eq!(
            check_remote_bin("a\nb"),
            Err("contains a control character")
        );
    }

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn launcher_flags_are_not_forwarded() {
        assert_eq!(
            strip_launcher_args(&os(&[
                "--controller",
                "ssh://h",
                "--state",
                "/s.db",
                "--remote-bin=/x",
                "snapshot",
                "--ssh-config",
                "/c",
                "--json",
            ])),
            os(&["--state", "/s.db", "snapshot", "--json"])
        );
        assert_eq!(
            strip_launcher_args(&os(&["--controller=ssh://h", "--", "--controller", "x"])),
            os(&["--", "--controller", "x"])
        );
        assert_eq!(
            strip_launcher_args(&os(&["--controllers", "--controller"])),
            os(&["--controllers"])
        );
    }

    fn plan(mode: Mode) -> Plan {
        Plan {
            target: Target::parse("ssh://deploy@fleet-1").unwrap(),
            remote_bin: "/opt/my tools/stackless-tui".into(),
            ssh_config: Some("/tmp/ssh_config".into()),
            forwarded: vec![
                "--state".into(),
                "/srv/it's here/state.db".into(),
                "--down-cmd".into(),
                "stackless down {name} --json; rm -rf /".into(),
                "$(id)".into(),
            ],
            mode,
            not_applied: Vec::new(),
        }
    }

    #[test]
    fn the_ssh_argv_quotes_every_remote_word() {
        let tail = [
            "--",
            "deploy@fleet-1",
            "'/opt/my tools/stackless-tui'",
            "--reached-as",
            "fleet-1",
            "--state",
            "'/srv/it'\\''s here/state.db'",
            "--down-cmd",
            "'stackless down {name} --json; rm -rf /'",
            "'$(id)'",
        ];
        let mut console = os(&[
            "-F",
            "/tmp/ssh_config",
            "-t",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "ConnectTimeout=10",
        ]);
        console.extend(os(&tail));
        assert_eq!(plan(Mode::Console).ssh_args(), console);
        let mut headless = os(&[
            "-F",
            "/tmp/ssh_config",
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "ConnectTimeout=10",
        ]);
        headless.extend(os(&tail));
        assert_eq!(plan(Mode::Headless).ssh_args(), headless);
        // What the remote shell makes of it: the words, unchanged.
        let args = plan(Mode::Console).ssh_args();
        let start = args.iter().position(|a| a == "--").unwrap() + 2;
        let line = args[start..]
            .iter()
            .map(|w| w.to_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            shell_words::split(&line).unwrap(),
            plan(Mode::Console).remote_command()
        );
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
}
