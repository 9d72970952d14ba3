//! The subcommands' definitions (`Sub` and their arguments), re-exported
//! as `crate::cli::Sub` and `crate::cli::SnapshotFormat`.

use clap::{Subcommand, ValueEnum};

/// What `snapshot` prints (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SnapshotFormat {
    /// What the panes show, as a table.
    Table,
    /// One JSON document (`--json`).
    Json,
    /// The `OpenMetrics` text format (docs/metrics.md).
    #[value(name = "openmetrics")]
    OpenMetrics,
}

impl SnapshotFormat {
    /// The format `--json` and `--format` choose (clap refuses both
    /// together): `--json` is `json`, neither is `table`.
    #[must_use]
    pub fn chosen(json: bool, format: Option<Self>) -> Self {
        match (json, format) {
            (_, Some(format)) => format,
            (true, None) => Self::Json,
            (false, None) => Self::Table,
        }
    }
}

/// Subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Sub {
    /// Print what the panes show (instances with lease, lock liveness,
    /// backoff state, due time) and exit.
    Snapshot {
        /// One JSON document (with a `schema_version`) instead of a table:
        /// `--format json`.
        #[arg(long)]
        json: bool,
        /// What to print: `table` (the default), `json` (as `--json`) or
        /// `openmetrics` (the store's state and the audit trail's counts
        /// as metrics, docs/metrics.md, ending `# EOF`).
        #[arg(long, value_enum, value_name = "FORMAT", conflicts_with_all = ["json", "follow"])]
        format: Option<SnapshotFormat>,
        /// Evaluate countdowns at this unix time instead of now (for
        /// reproducible output).
        #[arg(long, value_name = "UNIX_SECONDS")]
        now: Option<i64>,
        /// Stream the store instead: the protocol of `serve --stdio`
        /// (docs/protocol.md) on stdout, read-only, taking no commands,
        /// until a signal or a closed stdout.
        #[arg(long, conflicts_with_all = ["json", "now", "at"])]
        follow: bool,
        /// The store as recorded at this time (docs/history.md): RFC 3339,
        /// unix seconds, or `10m ago`. A time before the recording or in a
        /// gap is said, exit 1: no row is invented.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// The recording's directory (default
        /// `<state_dir>/stackless-tui/history`).
        #[arg(long, value_name = "DIR", requires = "at")]
        history: Option<std::path::PathBuf>,
        /// The host of a fleet's recording (`record --fleet`): its
        /// subdirectory of the history directory.
        #[arg(long, value_name = "NAME", requires = "at")]
        host: Option<String>,
    },
    /// Record the store (read-only, no reaper) into the history directory
    /// until a signal: every change of its rows, who reaps, the banners
    /// and the Activity lines, in compressed segments (docs/history.md).
    Record {
        /// The recording's directory (default
        /// `<state_dir>/stackless-tui/history`).
        #[arg(long, value_name = "DIR")]
        history: Option<std::path::PathBuf>,
        /// Keep this long (humantime: `7d`, `12h`).
        #[arg(long, value_name = "SPAN", default_value = "7d")]
        retain: String,
        /// Keep at most this much (`256MB`, `1GiB`).
        #[arg(long, value_name = "SIZE", default_value = "256MB")]
        max_size: String,
    },
    /// The console on a recording (docs/history.md, "Replay"): read-only,
    /// a time cursor in the header; `[` `]` step through the changes,
    /// `{` `}` by a minute, `>` to the live end.
    Replay {
        /// Where the cursor starts: RFC 3339, unix seconds, `03:12`, or
        /// `10m ago` (default: the recording's last line).
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// The recording's directory (default
        /// `<state_dir>/stackless-tui/history`).
        #[arg(long, value_name = "DIR")]
        history: Option<std::path::PathBuf>,
        /// The host of a fleet's recording (`record --fleet`): its
        /// subdirectory of the history directory.
        #[arg(long, value_name = "NAME")]
        host: Option<String>,
    },
    /// What is recorded: the span, the size, the segments and the gaps.
    History {
        /// The recording's directory (default
        /// `<state_dir>/stackless-tui/history`).
        #[arg(long, value_name = "DIR")]
        history: Option<std::path::PathBuf>,
    },
    /// The console's engine without a terminal (docs/protocol.md): the
    /// store as newline-delimited JSON on stdout (a snapshot, then
    /// deltas), commands on stdin (reap, down, cancel, renew, ...), each
    /// checked by the rules of its key. Stops at the end of stdin.
    Serve {
        /// Speak the protocol on stdin and stdout (required: the only
        /// transport; reach another host with `--controller ssh://HOST`).
        #[arg(long, required = true)]
        stdio: bool,
        /// Hold the reaper's first pass this many seconds, its countdown
        /// sent as the `reaper` message's `next_pass_at` (a `pause` before
        /// it keeps it from running): nothing is acted upon before the
        /// client has seen where this agent reaps. A fleet console passes
        /// 10. Default 0: at once.
        #[arg(long, value_name = "SECS", default_value_t = 0)]
        first_pass_after: u64,
    },
    /// Run the reaper and exit: 0 when every decision succeeded, 1 when a
    /// teardown failed, 2 on a usage or store error.
    Reap {
        /// Exactly one pass (required: the console is the long-running
        /// reaper).
        #[arg(long, required = true)]
        once: bool,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), generated from these same definitions.
    Man,
    /// The demo's stand-in for `stackless down NAME --json`.
    #[command(hide = true)]
    DemoDown {
        /// The instance to tear down (the store is the global `--state`).
        name: String,
        /// Accepted for parity with `stackless down --json` (output is
        /// always JSON).
        #[arg(long)]
        json: bool,
    },
    /// The demo's helper: claims the helper role with succession, runs a
    /// while and exits.
    #[command(hide = true)]
    DemoHelper,
    /// The 0.4.0 demo's stand-in for the stackless CLI (`operation cancel`,
    /// `up --name --lease`, `verify`, `down [--no-wait]`) on the store
    /// `--state` names.
    #[command(hide = true)]
    DemoStackless {
        /// stackless's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}
