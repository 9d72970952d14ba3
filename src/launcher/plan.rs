//! The console where the controller is (stackless 0.4.0 fleets), as pure
//! rules: which controller targets are accepted, how the remote binary may
//! be named, the exact `ssh` argv, and what an `ssh` exit status means for
//! the operator. No I/O: [`crate::launcher`] spawns the `ssh` this plans.
//!
//! stackless 0.4.0 reaches a fleet's controller through OpenSSH
//! (`STACKLESS_CONTROLLER=ssh://HOST` or `--controller`; its client runs
//! `ssh -T ... -- HOST 'stackless daemon remote-control'`,
//! `stackless-0.4.0/src/client/remote.rs`). This console runs itself on
//! that host the same way: `ssh -t -- HOST stackless-tui ARGS`.

use std::ffi::OsString;

/// The remote program when none is named (`--remote-bin`,
/// `STACKLESS_TUI_REMOTE_BIN`): looked up in the remote `PATH`.
pub(crate) const DEFAULT_REMOTE_BIN: &str = "stackless-tui";

/// stackless 0.4.0's own words for a target it refuses
/// (`SshController::new`, `stackless-0.4.0/src/client/remote.rs`).
pub(crate) const TARGET_RULE: &str =
    "use ssh://HOST_ALIAS or ssh://USER@HOST; configure ports and keys in OpenSSH config";

/// A controller target stackless 0.4.0 accepts: `ssh://HOST_ALIAS`,
/// `ssh://USER@HOST` (the `ssh://` prefix is optional there too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
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
    pub(crate) fn parse(text: &str) -> Result<Self, &'static str> {
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
    pub(crate) fn destination(&self) -> String {
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
pub(crate) fn check_remote_bin(bin: &str) -> Result<(), &'static str> {
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

/// Whether the remote side runs the console (a terminal: `ssh -t`), a
/// headless subcommand (`snapshot`, `reap --once`) or one of the protocol's
/// streams (`serve --stdio`, `snapshot --follow`: docs/protocol.md); all
/// but the console get `ssh -T` and batch mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The interactive console.
    Console,
    /// A headless subcommand: its stdout, stderr and exit status pass
    /// through; ssh's stdin is a pipe the launcher holds (the local stdin
    /// is not read) and closes on a signal.
    Headless,
    /// `serve --stdio`: the local stdin is copied to the remote agent as it
    /// comes (its commands) and its end closes the agent's stdin (which
    /// stops it, docs/protocol.md "Stopping"); a signal closes it too. The
    /// out-stream passes through as ssh writes it.
    Serve,
    /// `snapshot --follow`: the out-stream passes through as ssh writes it;
    /// the local stdin is not read (the remote side reads none); a signal
    /// is passed on to ssh, which closes the connection (the remote stream
    /// then stops at its next write, as on a closed stdout).
    Follow,
}

/// Everything the launcher needs: where, what, how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
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
pub(crate) enum OnTheHost {
    /// The launcher's own (`--remote-bin`, `--ssh-config`, `--fleet`,
    /// `--fleet-timeout`): used here.
    Launcher,
    /// A safety switch passed on as this flag when it is on
    /// (`STACKLESS_TUI_DRY_RUN` → `--dry-run`, `..._READ_ONLY` →
    /// `--read-only`, `..._NO_REAPER` → `--no-reaper`): a local "do less"
    /// must never be lost on the way.
    Flag(&'static str),
    /// `STACKLESS_TUI_REAPER`: `off` is a safety switch, passed on as
    /// `--reaper off`; `auto` and `always` are not applied there.
    Reaper,
    /// Not applied there (the host's own environment and config file
    /// apply): named on stderr.
    NotApplied,
}

/// Where the setting of the flag with clap id `id` (read from its
/// environment variable) goes.
#[must_use]
pub(crate) fn env_on_the_host(id: &str) -> OnTheHost {
    match id {
        "remote_bin" | "ssh_config" | "fleet" | "fleet_timeout" => OnTheHost::Launcher,
        "dry_run" => OnTheHost::Flag("--dry-run"),
        "read_only" => OnTheHost::Flag("--read-only"),
        "no_reaper" => OnTheHost::Flag("--no-reaper"),
        "reaper" => OnTheHost::Reaper,
        _ => OnTheHost::NotApplied,
    }
}

/// The warning for settings that do not reach `host` (`names`: the
/// environment variables).
#[must_use]
pub(crate) fn not_applied_message(host: &str, names: &[String]) -> String {
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
         local safety switches (dry-run, read-only, no-reaper, reaper = off) as their flags; the host's own \
         environment and config file apply there. {pass}.",
        names.join(", ")
    )
}

/// The launcher's own flags: removed from what is forwarded. Each takes
/// one value.
pub(crate) const LAUNCHER_FLAGS: [&str; 5] = [
    "--controller",
    "--remote-bin",
    "--ssh-config",
    "--fleet",
    "--fleet-timeout",
];

/// The hidden flag the remote side is started with: the host it was
/// reached as (for the header's `on HOST`).
pub(crate) const REACHED_AS: &str = "--reached-as";

/// `args` (without the program name) minus the launcher's flags
/// ([`LAUNCHER_FLAGS`], as `--flag VALUE` or `--flag=VALUE`, clap's two
/// spellings), up to a `--`, after which everything is positional and kept.
#[must_use]
pub(crate) fn strip_launcher_args(args: &[OsString]) -> Vec<OsString> {
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
    /// headless command or a stream `-T` (no terminal: the stream's bytes
    /// pass unchanged) and `BatchMode=yes` (no prompt a script could
    /// hang on, as stackless's own client); both get
    /// `StrictHostKeyChecking=yes` (on the command line it wins over the
    /// config for the destination; a `ProxyJump` hop is a separate ssh that
    /// reads only the config) and `ConnectTimeout=10` as stackless passes them;
    /// then `--`, the destination, and the remote command: the remote
    /// program, `--reached-as HOST`, the forwarded arguments, each quoted
    /// for the POSIX shell that ssh hands the joined command line to.
    #[must_use]
    pub(crate) fn ssh_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        if let Some(config) = &self.ssh_config {
            out.push("-F".into());
            out.push(config.clone());
        }
        match self.mode {
            Mode::Console => out.push("-t".into()),
            Mode::Headless | Mode::Serve | Mode::Follow => {
                out.extend(["-T".into(), "-o".into(), "BatchMode=yes".into()]);
            }
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
    pub(crate) fn remote_command(&self) -> Vec<String> {
        let mut words = vec![
            self.remote_bin.clone(),
            REACHED_AS.to_owned(),
            self.target.host.clone(),
        ];
        words.extend(self.forwarded.iter().cloned());
        words
    }
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
        // The protocol's streams: no terminal (its bytes unchanged), no
        // prompt, the same quoted words.
        assert_eq!(plan(Mode::Serve).ssh_args(), headless);
        assert_eq!(plan(Mode::Follow).ssh_args(), headless);
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
}
