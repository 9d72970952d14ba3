//! The binary's entry point: parse the flags (and the config file), then
//! run the mode they choose: here (the interactive [`crate::console`],
//! [`crate::headless`]'s `snapshot` and `reap --once`, the demo's
//! `demo-down` and `demo-helper`, `completions`, `man`) or, through
//! `--controller`, on the controller's host ([`crate::launcher`]).

use std::ffi::OsString;
use std::io::{self, Write as _};
use std::process::ExitCode;

use crate::cli::{Cli, CliError, EXIT_USAGE, Sub, usage};

/// The binary's entry point: parse the flags (and the config file), then run
/// the mode they choose, here or (`--controller`) on the controller's host.
/// Exit status: 0 done, 1 a failure while running (a failed teardown in
/// `reap --once`, a crash report), 2 a usage or store error (the terminal
/// untouched), 128 + N when `reap --once` was stopped by signal N; through
/// `--controller`, the remote status (ssh's 255 when ssh failed, 127 when
/// the host has no stackless-tui), or 128 + N when the launcher itself was
/// interrupted by signal N.
#[must_use]
pub fn main() -> ExitCode {
    unset_empty_variables();
    let _ = color_eyre::install();
    let args: Vec<OsString> = std::env::args_os().collect();
    // `--controller`: the console runs on the controller's host, reached
    // through ssh before anything here starts (`crate::launcher`).
    match crate::launcher::launch_if_remote(&args) {
        Some(crate::launcher::Launch::Done(code)) => return code,
        Some(crate::launcher::Launch::Fleet(run)) => return crate::fleet::run(run),
        None => {}
    }
    match parse(args) {
        Ok(cli) => dispatch(&cli),
        Err(code) => code,
    }
}

/// Remove from this process's environment the variables it reads that are
/// set but empty ([`crate::cli::empty_variables`]): an empty variable
/// counts as unset, for clap (which reads `std::env` itself: `--state`'s
/// `STACKLESS_TUI_STATE=` was "a value is required"), the launcher, the
/// default paths, and the programs run from here.
fn unset_empty_variables() {
    for name in crate::cli::empty_variables(std::env::vars_os()) {
        // SAFETY: called first thing in `main`, before any thread exists
        // (nothing else reads or writes the environment meanwhile).
        unsafe {
            std::env::remove_var(name);
        }
    }
}

/// The flags over the config file (`$XDG_CONFIG_HOME/stackless-tui/config.toml`).
fn parse(args: Vec<OsString>) -> Result<Cli, ExitCode> {
    let config = crate::cli::default_config_path(
        std::env::var("XDG_CONFIG_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    );
    let parsed = crate::cli::parse_with_config(args, config, |path| {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            // Absent, or in a directory this user cannot look into (HOME of
            // another user under sudo): there is no config file to honour.
            Err(_) if std::fs::metadata(path).is_err() => Ok(None),
            Err(e) => Err(e),
        }
    });
    match parsed {
        Ok(cli) => Ok(cli),
        Err(CliError::Clap(error)) => {
            let _ = error.print();
            Err(if error.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(CliError::Config(message)) => Err(usage(&message)),
    }
}

/// Run the mode the flags chose.
fn dispatch(cli: &Cli) -> ExitCode {
    match &cli.command {
        Some(Sub::DemoDown { name, .. }) => match &cli.state {
            Some(state) => crate::demo::down::run(state, name),
            None => usage("demo-down needs --state"),
        },
        Some(Sub::DemoHelper) => crate::demo::helper::run(),
        Some(Sub::DemoStackless { args }) => match &cli.state {
            Some(state) => crate::demo::stackless::run(state, args),
            None => usage("demo-stackless needs --state"),
        },
        Some(Sub::Snapshot { follow: true, .. }) => crate::console::follow(cli),
        Some(Sub::Snapshot {
            json,
            format,
            now,
            at: Some(at),
            history,
            host,
            ..
        }) => match (
            crate::cli::SnapshotFormat::chosen(*json, *format),
            crate::history::host_dir(cli, history.as_deref(), host.as_deref()),
        ) {
            (crate::cli::SnapshotFormat::OpenMetrics, _) => usage(
                "snapshot --at reads a recording as a table or JSON (--json); --format openmetrics is the store as it is now",
            ),
            (_, Err(e)) => usage(&e),
            (chosen, Ok(history)) => crate::history::snapshot_at(
                cli,
                chosen == crate::cli::SnapshotFormat::Json,
                at,
                *now,
                history.as_deref(),
            ),
        },
        Some(Sub::Snapshot {
            json, format, now, ..
        }) => crate::headless::snapshot(
            cli,
            crate::cli::SnapshotFormat::chosen(*json, *format),
            *now,
        ),
        Some(Sub::Record {
            history,
            retain,
            max_size,
        }) => match crate::history::retention(retain, max_size) {
            Ok(retention) => crate::history::record(cli, history.as_deref(), retention),
            Err(e) => usage(&e),
        },
        Some(Sub::Replay { at, history, host }) => {
            match crate::history::host_dir(cli, history.as_deref(), host.as_deref()) {
                Ok(history) => {
                    crate::console::replay::start(cli, at.as_deref(), history.as_deref())
                }
                Err(e) => usage(&e),
            }
        }
        Some(Sub::History { history }) => crate::history::history(cli, history.as_deref()),
        Some(Sub::Serve { .. }) => crate::console::serve(cli),
        Some(Sub::Reap { .. }) => crate::headless::reap_once(cli),
        Some(Sub::Completions { shell }) => {
            clap_complete::generate(
                *shell,
                &mut for_completions(),
                "stackless-tui",
                &mut io::stdout(),
            );
            ExitCode::SUCCESS
        }
        Some(Sub::Man) => match crate::man::render(&mut io::stdout()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                let _ = writeln!(io::stderr(), "stackless-tui: {error}");
                ExitCode::FAILURE
            }
        },
        None => crate::console::start(cli),
    }
}

/// The command line as completions offer it: without the hidden flags
/// (`--reached-as`) and subcommands (the demo's helpers), which clap's
/// generators would list (they do not filter hidden items).
fn for_completions() -> clap::Command {
    let full = <Cli as clap::CommandFactory>::command();
    let mut shown = clap::Command::new("stackless-tui").version(env!("CARGO_PKG_VERSION"));
    if let Some(about) = full.get_about() {
        shown = shown.about(about.clone());
    }
    for arg in full.get_arguments().filter(|arg| !arg.is_hide_set()) {
        shown = shown.arg(arg.clone());
    }
    for sub in full.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        shown = shown.subcommand(sub.clone());
    }
    shown
}
