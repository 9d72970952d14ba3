//! Command-line flags (clap derive), their environment variables, and the
//! config file. Durations take the usual human form (`1s`, `90s`, `5m`,
//! `1h`; humantime).
//!
//! Precedence, highest first: a flag on the command line, its environment
//! variable (`STACKLESS_TUI_<FLAG>`), the config file
//! (`$XDG_CONFIG_HOME/stackless-tui/config.toml`, else
//! `~/.config/stackless-tui/config.toml`), the built-in default.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};

use crate::model::controller::ReaperChoice;

mod sub;
pub(crate) use sub::{SnapshotFormat, Sub};

/// The default teardown command's arguments after its program, the
/// `--stackless` program (contract §6 step 3: `stackless down {name}
/// --json`).
pub(crate) const DEFAULT_DOWN_ARGS: [&str; 3] = ["down", "{name}", "--json"];

/// Exit status for a usage or store error (the terminal is left untouched).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Print `stackless-tui: {message}` on stderr and return [`EXIT_USAGE`]:
/// a usage or store error, reported before the terminal is touched.
#[must_use]
pub(crate) fn usage(message: &str) -> std::process::ExitCode {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "stackless-tui: {message}");
    std::process::ExitCode::from(EXIT_USAGE)
}

/// The environment variables read besides the flags' own (`env =` on
/// [`Cli`]'s arguments): `STACKLESS_CONTROLLER` (the launcher),
/// `STACKLESS_STATE_URL` (refused by `startup::open_store`), and the XDG
/// variables the default paths come from (empty is unset there by the XDG
/// Base Directory specification).
const OTHER_VARIABLES: [&str; 4] = [
    "STACKLESS_CONTROLLER",
    "STACKLESS_STATE_URL",
    "XDG_STATE_HOME",
    "XDG_CONFIG_HOME",
];

/// The names among `vars` (the environment, name and value) that are set
/// but empty and that this program reads: every variable a flag takes
/// (`STACKLESS_TUI_*`, `STACKLESS_BIN`: the `env =` of [`Cli`]'s
/// arguments) and [`OTHER_VARIABLES`]. An empty variable counts as unset
/// (else `STACKLESS_TUI_STATE=` makes clap fail with "a value is
/// required for '--state <PATH>'"), as stackless 0.4.0 treats an empty
/// `STACKLESS_CONTROLLER`; [`crate::dispatch::main`] removes them before
/// anything reads the environment.
#[must_use]
pub(crate) fn empty_variables(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<OsString> {
    let command = Cli::command();
    let mut read: Vec<OsString> = command
        .get_arguments()
        .chain(
            command
                .get_subcommands()
                .flat_map(clap::Command::get_arguments),
        )
        .filter_map(|arg| arg.get_env().map(std::ffi::OsStr::to_os_string))
        .collect();
    read.extend(OTHER_VARIABLES.map(OsString::from));
    vars.into_iter()
        .filter(|(name, value)| value.is_empty() && read.contains(name))
        .map(|(name, _)| name)
        .collect()
}

/// A live operations console for stackless state stores: instances, leases,
/// operation locks, reap backoffs and a helper supervisor, with a reaper you
/// can watch.
#[derive(Debug, Clone, Parser)]
#[command(name = "stackless-tui", version, about, long_about = None)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one bool per command-line switch (clap): independent flags"
)]
pub struct Cli {
    /// The state store to open (default: $`XDG_STATE_HOME/stackless/state.db`,
    /// else ~/.local/state/stackless/state.db, created on first run).
    #[arg(long, value_name = "PATH", env = "STACKLESS_TUI_STATE", global = true)]
    pub state: Option<PathBuf>,

    /// Run on a freshly seeded demo store in a temporary directory, with a
    /// 5 s tick and a demo helper: `--demo` seeds a stackless 0.4.0
    /// (schema 14) store whose queue the demo's controller stand-in runs;
    /// `--demo v4` the schema-4 store with a demo teardown.
    #[arg(long, value_name = "KIND", num_args = 0..=1, require_equals = true, default_missing_value = "0.4.0", value_parser = DemoKind::parse)]
    pub demo: Option<DemoKind>,

    /// Time between reaper passes (stackless's daemon uses 60s).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, env = "STACKLESS_TUI_TICK", global = true)]
    pub tick: Duration,

    /// Show times in UTC (RFC 3339, `Z`) instead of the local zone (`TZ`
    /// honoured, the zone named: `2026-11-29 19:28:06 IST`): the panes, the
    /// detail, full-text and operation views, and `snapshot`'s table.
    #[arg(long, env = "STACKLESS_TUI_UTC", global = true, value_parser = clap::builder::BoolishValueParser::new())]
    pub utc: bool,

    /// Do not run the reaper (leave reaping to the stackless daemon); the
    /// panes and the r/d keys still work.
    #[arg(long, env = "STACKLESS_TUI_NO_REAPER", global = true, value_parser = clap::builder::BoolishValueParser::new())]
    pub no_reaper: bool,

    /// The console does not record the store into its history directory
    /// (`<state_dir>/stackless-tui/history`, docs/history.md); by default
    /// it does, unless another recorder holds it.
    #[arg(long, env = "STACKLESS_TUI_NO_RECORD", global = true, value_parser = clap::builder::BoolishValueParser::new())]
    pub no_record: bool,

    /// Who reaps: `auto` (this console's reaper stands by while the
    /// stackless controller runs its own lease reaper, and takes over when
    /// it stops or has none, as an embedded controller), `always` (reap
    /// beside it too), `off` (as --no-reaper, which wins). `reap --once`
    /// leaves the store to the controller's lease reaper unless `always`.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ReaperChoice::parse, env = "STACKLESS_TUI_REAPER", global = true)]
    pub reaper: ReaperChoice,

    /// The teardown command, split into argv once at start-up (never run
    /// through a shell); `{name}` is replaced by the instance name as one
    /// whole argument. Default: the --stackless program with `down {name}
    /// --json` (`stackless down {name} --json`).
    #[arg(
        long,
        value_name = "CMD",
        env = "STACKLESS_TUI_DOWN_CMD",
        global = true
    )]
    pub down_cmd: Option<String>,

    /// A teardown still running after this long is killed (its process
    /// group gets TERM, then KILL) and counted as a failed attempt.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration, env = "STACKLESS_TUI_DOWN_TIMEOUT", global = true)]
    pub down_timeout: Duration,

    /// At most this many teardowns run at once; a hung one never delays the
    /// others.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64), env = "STACKLESS_TUI_REAP_CONCURRENCY", global = true)]
    pub reap_concurrency: u16,

    /// A helper command to supervise as the role `helper` (restarted 4 s
    /// after it exits, doubling to 60 s, 2 s after a run of 30 s or more;
    /// stopped when the console quits).
    #[arg(long, value_name = "CMD", env = "STACKLESS_TUI_HELPER")]
    pub helper: Option<String>,

    /// The stackless CLI that `c`, `L`, `v` and a queued `d` run
    /// (`operation cancel ID`, `up --name NAME --lease D`, `verify NAME`,
    /// `down NAME --no-wait`, each with `--json`; stackless 0.4.0), and the
    /// teardown's (`down NAME --json`) unless --down-cmd is given; a bare
    /// name is looked up in PATH. It must reach this store: the console
    /// passes it no `--state-dir`, so point it there with a wrapper when
    /// `--state` is not stackless's default store.
    #[arg(long, value_name = "PATH", default_value = crate::controller::cancel::DEFAULT_PROGRAM, env = "STACKLESS_BIN", global = true)]
    pub stackless: PathBuf,

    /// Open the store read-only: no reaper, no helper, no write keys.
    #[arg(long, env = "STACKLESS_TUI_READ_ONLY", global = true, value_parser = clap::builder::BoolishValueParser::new())]
    pub read_only: bool,

    /// The reaper decides and logs `would reap`, but runs and writes nothing.
    #[arg(long, env = "STACKLESS_TUI_DRY_RUN", global = true, value_parser = clap::builder::BoolishValueParser::new())]
    pub dry_run: bool,

    /// How much the console logs to <state_dir>/stackless-tui/console.log
    /// (stdout belongs to the TUI).
    #[arg(
        long,
        value_name = "LEVEL",
        default_value = "info",
        env = "STACKLESS_TUI_LOG_LEVEL",
        global = true
    )]
    pub log_level: LogLevel,

    /// Read flag defaults from this file instead of
    /// $XDG_CONFIG_HOME/stackless-tui/config.toml.
    #[arg(long, value_name = "PATH", env = "STACKLESS_TUI_CONFIG", global = true)]
    pub config: Option<PathBuf>,

    /// Run the console (or `snapshot`, `reap --once`) on the controller's
    /// host through OpenSSH: `ssh://HOST_ALIAS` or `ssh://USER@HOST`, as
    /// stackless 0.4.0 takes it (also `STACKLESS_CONTROLLER`, stackless's
    /// own variable, ignored beside --state or --demo). The other arguments
    /// are passed on; ports and keys belong in the OpenSSH config. Given
    /// twice or more, it names a fleet: the fleet view (no subcommand), or
    /// `snapshot [--json]` or `snapshot --follow`, over every host.
    #[arg(long, value_name = "ssh://HOST", global = true, action = clap::ArgAction::Append)]
    pub controller: Vec<String>,

    /// A fleet file (TOML: `[[host]]` tables with `target = "ssh://HOST"`
    /// and an optional `label`): the fleet view (no subcommand), or
    /// `snapshot [--json]` or `snapshot --follow`, over every host at once. Also the config file's `fleet`; both ignored beside --state or
    /// --demo, and the command line's --controller wins.
    #[arg(long, value_name = "FILE", env = "STACKLESS_TUI_FLEET", global = true)]
    pub fleet: Option<PathBuf>,

    /// How long a fleet's `snapshot` waits for its hosts (all asked at
    /// once): a host without a whole answer by then is failed as timed out
    /// and its ssh killed; the others' answers are printed.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, env = "STACKLESS_TUI_FLEET_TIMEOUT", global = true)]
    pub fleet_timeout: Duration,

    /// The stackless-tui program on the controller's host (default
    /// `stackless-tui`, looked up in the remote PATH; a relative path is
    /// relative to the remote home; quoted, so `~` is not expanded; empty:
    /// the default).
    #[arg(
        long,
        value_name = "PATH",
        env = "STACKLESS_TUI_REMOTE_BIN",
        global = true
    )]
    pub remote_bin: Option<String>,

    /// The OpenSSH client config for --controller (`ssh -F FILE`; default:
    /// ssh's own, ~/.ssh/config; empty: the default).
    #[arg(
        long,
        value_name = "FILE",
        env = "STACKLESS_TUI_SSH_CONFIG",
        global = true,
        value_parser = clap::value_parser!(OsString)
    )]
    pub ssh_config: Option<OsString>,

    /// Set by --controller on the remote side: the host this console was
    /// reached as over ssh (the header shows `on HOST`).
    #[arg(long, value_name = "HOST", hide = true)]
    pub reached_as: Option<String>,

    /// Write the store's state and the audit trail's counts as metrics
    /// (docs/metrics.md) to this file each reaper tick and when the audit
    /// trail changes, atomically (a temporary file in its directory
    /// renamed over it, mode 0644, no symlink followed): `node_exporter`'s
    /// textfile collector reads it. The console and `serve --stdio`.
    #[arg(
        long,
        value_name = "PATH",
        env = "STACKLESS_TUI_METRICS_FILE",
        global = true
    )]
    pub metrics_file: Option<PathBuf>,

    /// Headless subcommands (snapshot, reap), shell completions, the man
    /// page; without one, the console runs.
    #[command(subcommand)]
    pub command: Option<Sub>,
}

impl Cli {
    /// Who reaps, from `--reaper` and `--no-reaper` (which wins: it is the
    /// "do less" switch).
    #[must_use]
    pub fn reaper_choice(&self) -> ReaperChoice {
        if self.no_reaper {
            ReaperChoice::Off
        } else {
            self.reaper
        }
    }
}

/// Log levels for `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Nothing.
    Off,
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// Every action (the default).
    Info,
    /// Also the watcher's and supervisor's detail.
    Debug,
}

/// Which demo store `--demo` seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoKind {
    /// A stackless 0.4.0 store (schema 14) and the demo's controller
    /// stand-in (`--demo`, `--demo 0.4.0`).
    V14,
    /// The schema-4 store with the demo teardown (`--demo v4`).
    V4,
}

impl DemoKind {
    /// Parse `--demo`'s value: `0.4.0` (also `v14`) or `v4`.
    ///
    /// # Errors
    /// Any other text.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "0.4.0" | "v14" => Ok(Self::V14),
            "v4" => Ok(Self::V4),
            other => Err(format!(
                "`{other}` is not a demo: 0.4.0 (the default: a schema-14 store) or v4"
            )),
        }
    }
}

/// Parse `1s`, `90s`, `5m`, `1h`, `1h 30m` (humantime); a bare number is
/// seconds. Zero is refused.
///
/// # Errors
/// A message clap shows under the flag.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let parsed = if trimmed.chars().all(|c| c.is_ascii_digit()) && !trimmed.is_empty() {
        trimmed
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|e| e.to_string())
    } else {
        humantime::parse_duration(trimmed).map_err(|e| format!("{e} (try 1s, 90s, 5m or 1h)"))
    }?;
    if parsed.is_zero() {
        return Err("must be more than zero".into());
    }
    Ok(parsed)
}

/// The default config file: `$XDG_CONFIG_HOME/stackless-tui/config.toml`
/// when `XDG_CONFIG_HOME` is absolute, else
/// `$HOME/.config/stackless-tui/config.toml`.
#[must_use]
pub(crate) fn default_config_path(
    xdg_config_home: Option<&str>,
    home: Option<&str>,
) -> Option<PathBuf> {
    if let Some(xdg) = xdg_config_home.filter(|x| Path::new(x).is_absolute()) {
        return Some(Path::new(xdg).join("stackless-tui/config.toml"));
    }
    home.filter(|h| Path::new(h).is_absolute())
        .map(|h| Path::new(h).join(".config/stackless-tui/config.toml"))
}

impl Cli {
    /// The teardown command the reaper, `d` and `reap --once` run:
    /// `--down-cmd` split into argv when given, else the `--stackless`
    /// program (one argument, whatever its characters; a path that is not
    /// UTF-8 is read lossily) with [`DEFAULT_DOWN_ARGS`], so one
    /// `--stackless` names the program of every verb.
    ///
    /// # Errors
    /// `--down-cmd` cannot be split, is empty or lacks `{name}`.
    pub(crate) fn down_command(
        &self,
    ) -> Result<crate::reaper::DownCommand, crate::reaper::teardown::DownCommandError> {
        match &self.down_cmd {
            Some(template) => crate::reaper::DownCommand::parse(template),
            None => crate::reaper::DownCommand::from_argv(
                std::iter::once(self.stackless.to_string_lossy().into_owned())
                    .chain(DEFAULT_DOWN_ARGS.iter().map(|a| (*a).to_owned()))
                    .collect(),
            ),
        }
    }
}

/// The flags a config file may set (their long names, as TOML keys).
pub(crate) const CONFIG_KEYS: [&str; 13] = [
    "state",
    "fleet",
    "tick",
    "utc",
    "no-reaper",
    "reaper",
    "down-cmd",
    "down-timeout",
    "reap-concurrency",
    "helper",
    "read-only",
    "dry-run",
    "log-level",
];

/// Turn a config file's text into `--flag value` arguments.
///
/// # Errors
/// A message naming the file and the bad key or value.
pub(crate) fn config_args(
    text: &str,
    file: &Path,
) -> Result<Vec<(String, Option<String>)>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: not valid TOML: {e}", file.display()))?;
    let mut out = Vec::new();
    for (key, value) in &table {
        if !CONFIG_KEYS.contains(&key.as_str()) {
            return Err(format!(
                "{}: unknown key `{key}` (known: {})",
                file.display(),
                CONFIG_KEYS.join(", ")
            ));
        }
        // Each key has one TOML type; anything else is an error naming the
        // file (never passed on to be read as some other argument).
        let wrong = |want: &str| {
            let shown = match value {
                toml::Value::String(s) => format!("{s:?}"),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => other.type_str().to_owned(),
            };
            Err(format!(
                "{}: `{key}` must be {want}, not {} `{shown}`",
                file.display(),
                value.type_str()
            ))
        };
        let text = match (key.as_str(), value) {
            ("utc" | "no-reaper" | "read-only" | "dry-run", toml::Value::Boolean(true)) => None,
            ("utc" | "no-reaper" | "read-only" | "dry-run", toml::Value::Boolean(false)) => {
                continue;
            }
            ("utc" | "no-reaper" | "read-only" | "dry-run", _) => return wrong("true or false"),
            ("reap-concurrency", toml::Value::Integer(i)) => Some(i.to_string()),
            ("reap-concurrency", _) => return wrong("a whole number"),
            (_, toml::Value::String(s)) => Some(s.clone()),
            (_, _) => return wrong("a string"),
        };
        out.push((key.clone(), text));
    }
    Ok(out)
}

/// `--demo KIND` as `--demo=KIND` when `KIND` is a demo ([`DemoKind::parse`]),
/// so `--demo v4` takes its value while `--demo serve --stdio` stays the
/// demo and a subcommand (`--demo` takes a value only after `=`).
fn join_demo_kind(args: Vec<OsString>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        let kind = (arg == "--demo")
            .then(|| {
                args.peek()
                    .and_then(|next| next.to_str())
                    .map(str::to_owned)
            })
            .flatten()
            .filter(|next| DemoKind::parse(next).is_ok());
        match kind {
            Some(kind) => {
                args.next();
                out.push(format!("--demo={kind}").into());
            }
            None => out.push(arg),
        }
    }
    out
}

/// Parse `args` with the precedence flag > environment > config file >
/// built-in default. `read_file` reads the config file (`Ok(None)` when it
/// does not exist).
///
/// # Errors
/// clap's own error (usage, `--help`, `--version`), or a config-file
/// message.
pub(crate) fn parse_with_config(
    args: Vec<OsString>,
    default_config: Option<PathBuf>,
    read_file: impl Fn(&Path) -> std::io::Result<Option<String>>,
) -> Result<Cli, CliError> {
    let args = join_demo_kind(args);
    let command = Cli::command();
    let matches = command
        .clone()
        .try_get_matches_from(args.clone())
        .map_err(CliError::Clap)?;
    let first = Cli::from_arg_matches(&matches).map_err(CliError::Clap)?;
    let (file, explicit) = match &first.config {
        Some(path) => (Some(path.clone()), true),
        None => (default_config, false),
    };
    let Some(file) = file else {
        return Ok(first);
    };
    let text = match read_file(&file) {
        Ok(Some(text)) => text,
        Ok(None) if !explicit => return Ok(first),
        Ok(None) => {
            return Err(CliError::Config(format!(
                "{}: the config file does not exist",
                file.display()
            )));
        }
        Err(e) => return Err(CliError::Config(format!("{}: {e}", file.display()))),
    };
    let mut extra: Vec<OsString> = Vec::new();
    for (key, value) in config_args(&text, &file).map_err(CliError::Config)? {
        let id = key.replace('-', "_");
        // Only where neither the command line nor the environment spoke.
        if matches!(
            matches.value_source(&id),
            None | Some(ValueSource::DefaultValue)
        ) {
            // `--key=value` as one argument: a value can never be taken for
            // a subcommand or a flag.
            extra.push(match value {
                Some(value) => format!("--{key}={value}").into(),
                None => format!("--{key}").into(),
            });
        }
    }
    if extra.is_empty() {
        return Ok(first);
    }
    let mut merged = args;
    let tail = merged.split_off(1.min(merged.len()));
    merged.extend(extra);
    merged.extend(tail);
    let matches = command
        .try_get_matches_from(merged)
        .map_err(|e| CliError::Config(format!("{}: {e}", file.display())))?;
    Cli::from_arg_matches(&matches).map_err(CliError::Clap)
}

/// Why the command line could not be turned into a [`Cli`].
#[derive(Debug)]
pub(crate) enum CliError {
    /// clap's error (also `--help` and `--version`, which print and exit 0).
    Clap(clap::Error),
    /// The config file is unreadable or wrong.
    Config(String),
}

#[cfg(test)]
mod demo_kind_tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        let args = args.iter().map(OsString::from).collect();
        parse_with_config(args, None, |_| Ok(None)).unwrap()
    }

    /// `--demo` is the 0.4.0 demo, `--demo v4` (or `--demo=v4`) the
    /// schema-4 one, and a subcommand after `--demo` is never taken for
    /// its value.
    #[test]
    fn demo_takes_a_kind_and_leaves_a_subcommand_alone() {
        assert_eq!(parse(&["x", "--demo"]).demo, Some(DemoKind::V14));
        assert_eq!(parse(&["x", "--demo", "v4"]).demo, Some(DemoKind::V4));
        assert_eq!(parse(&["x", "--demo=v4"]).demo, Some(DemoKind::V4));
        assert_eq!(parse(&["x", "--demo", "0.4.0"]).demo, Some(DemoKind::V14));
        assert_eq!(parse(&["x"]).demo, None);
        let served = parse(&["x", "--demo", "serve", "--stdio"]);
        assert_eq!(served.demo, Some(DemoKind::V14));
        assert!(matches!(served.command, Some(Sub::Serve { .. })));
        let served = parse(&["x", "--demo", "v4", "serve", "--stdio"]);
        assert_eq!(served.demo, Some(DemoKind::V4));
        assert!(matches!(served.command, Some(Sub::Serve { .. })));
    }
}

#[cfg(test)]
mod tests;
