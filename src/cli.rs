//! Command-line flags (clap derive). Durations take the usual human form
//! (`1s`, `90s`, `5m`, `1h`; humantime).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// The default teardown command (contract §6 step 3).
pub const DEFAULT_DOWN_CMD: &str = "stackless down {name} --json";

/// A live operations console for stackless state stores: instances, leases,
/// operation locks, reap backoffs and a helper supervisor, with a reaper you
/// can watch.
#[derive(Debug, Clone, Parser)]
#[command(name = "stackless-tui", version, about, long_about = None)]
pub struct Cli {
    /// The state store to open (default: $XDG_STATE_HOME/stackless/state.db,
    /// else ~/.local/state/stackless/state.db, created on first run).
    #[arg(long, value_name = "PATH")]
    pub state: Option<PathBuf>,

    /// Run on a freshly seeded demo store in a temporary directory, with a
    /// demo teardown, a demo helper and a 5 s tick.
    #[arg(long)]
    pub demo: bool,

    /// Time between reaper passes (stackless's daemon uses 60s).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub tick: Duration,

    /// Do not run the reaper (leave reaping to the stackless daemon); the
    /// panes and the r/d keys still work.
    #[arg(long)]
    pub no_reaper: bool,

    /// The teardown command, split into argv once at start-up (never run
    /// through a shell); `{name}` is replaced by the instance name as one
    /// whole argument.
    #[arg(long, value_name = "CMD", default_value = DEFAULT_DOWN_CMD)]
    pub down_cmd: String,

    /// A teardown still running after this long is killed (its process
    /// group gets TERM, then KILL) and counted as a failed attempt.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub down_timeout: Duration,

    /// A helper command to supervise as the role `helper` (restarted with
    /// backoff when it exits; stopped when the console quits).
    #[arg(long, value_name = "CMD")]
    pub helper: Option<String>,

    /// Open the store read-only: no reaper, no helper, no write keys.
    #[arg(long)]
    pub read_only: bool,

    /// The reaper decides and logs `would reap`, but runs and writes nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Internal subcommands (the demo's teardown and helper).
    #[command(subcommand)]
    pub command: Option<Sub>,
}

/// Subcommands. The demo ones are what `--demo` runs in place of
/// `stackless down` and a real helper.
#[derive(Debug, Clone, Subcommand)]
pub enum Sub {
    /// The demo's stand-in for `stackless down NAME --json`.
    #[command(hide = true)]
    DemoDown {
        /// The demo store.
        #[arg(long, value_name = "PATH")]
        state: PathBuf,
        /// The instance to tear down.
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
}

/// Parse `1s`, `90s`, `5m`, `1h`, `1h 30m` (humantime); a bare number is
/// seconds. Zero is refused.
///
/// # Errors
/// A message clap shows under the flag.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn every_flag_has_a_long_name_and_help() {
        Cli::command().debug_assert();
        for arg in Cli::command().get_arguments() {
            if arg.get_id() == "help" || arg.get_id() == "version" {
                continue;
            }
            assert!(
                arg.get_long().is_some(),
                "{} has no long name",
                arg.get_id()
            );
            assert!(arg.get_help().is_some(), "{} has no help", arg.get_id());
        }
    }

    #[test]
    fn defaults() {
        let cli = Cli::parse_from(["stackless-tui"]);
        assert_eq!(cli.tick, Duration::from_secs(60));
        assert_eq!(cli.down_timeout, Duration::from_secs(600));
        assert_eq!(cli.down_cmd, DEFAULT_DOWN_CMD);
        assert!(!cli.demo && !cli.no_reaper && !cli.read_only && !cli.dry_run);
    }
}
