//! `serve --stdio` and `snapshot --follow`: the console's engine without a
//! terminal (docs/protocol.md). The same start-up, threads, role claim and
//! reaper as the console ([`super::run::Engine`]); the one loop applies
//! the same events to the same [`App`], and instead of drawing it writes
//! what changed as protocol lines to stdout; `serve --stdio` takes
//! commands from stdin (`agent-stdin`, [`stdin`]), each passed through the
//! rules of the key it mirrors ([`App::remote`]).

mod out;
pub(super) mod session;
mod stdin;

use std::io::{self, Write as _};
use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr as _};

use super::run::{Engine, new_app};
use super::setup::{self, Front, Setup};
use crate::cli::{Cli, usage};

/// Which of the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `serve --stdio`: commands on stdin; its end stops the agent.
    Serve,
    /// `snapshot --follow`: read-only, stdin not read.
    Follow,
}

/// Where the out-stream goes: stdout, or the recorder's writer.
type Sink = Option<Box<dyn io::Write + Send>>;

/// `serve --stdio`.
#[must_use]
pub(crate) fn serve(cli: &Cli) -> ExitCode {
    start(cli, Mode::Serve)
}

/// `serve --stdio --first-pass-after SECS`: how long the reaper's first
/// pass is held (none by default, or for `snapshot --follow`).
fn first_pass_after(cli: &Cli) -> std::time::Duration {
    match &cli.command {
        Some(crate::cli::Sub::Serve {
            first_pass_after, ..
        }) => std::time::Duration::from_secs(*first_pass_after),
        _ => std::time::Duration::ZERO,
    }
}

/// `snapshot --follow`: the store read-only, no reaper, no helper.
#[must_use]
pub(crate) fn follow(cli: &Cli) -> ExitCode {
    // A read: no store at the default path is said (on stderr: stdout is
    // the protocol's), none is created, exit 0.
    if let Some(path) = crate::startup::absent_default_store(cli) {
        let line =
            crate::startup::no_store_line(&path, "nothing to follow", "a read creates nothing");
        let _ = writeln!(io::stderr(), "stackless-tui: {line}");
        return ExitCode::SUCCESS;
    }
    let mut cli = cli.clone();
    cli.read_only = true;
    cli.no_reaper = true;
    cli.helper = None;
    start(&cli, Mode::Follow)
}

/// `record` (`crate::history`): the `snapshot --follow` pipeline (the
/// store read-only, no reaper, no helper), its lines written into `sink`
/// instead of stdout.
#[must_use]
pub(crate) fn record(cli: &Cli, sink: impl io::Write + Send + 'static) -> ExitCode {
    let mut cli = cli.clone();
    cli.read_only = true;
    cli.no_reaper = true;
    cli.helper = None;
    start_into(&cli, Mode::Follow, Some(Box::new(sink)))
}

fn start(cli: &Cli, mode: Mode) -> ExitCode {
    start_into(cli, mode, None)
}

fn start_into(cli: &Cli, mode: Mode, sink: Sink) -> ExitCode {
    let setup = match setup::prepare(cli, Front::Stream) {
        Ok(setup) => setup,
        Err(error) => return usage(&error.to_string()),
    };
    match run(setup, mode, first_pass_after(cli), sink) {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => {
            let _ = writeln!(io::stderr(), "{report:?}");
            ExitCode::FAILURE
        }
    }
}

/// Run until stdin ends (`serve`), a signal, or stdout closes.
fn run(setup: Setup, mode: Mode, first_pass_after: std::time::Duration, sink: Sink) -> Result<()> {
    let (engine, rx) = Engine::prepare(&setup, Front::Stream)?;
    engine.control.set_first_pass_after(first_pass_after);
    engine.start_threads(&setup)?;
    let commands = match mode {
        Mode::Serve => Some(stdin::spawn().wrap_err("cannot start the stdin thread")?),
        Mode::Follow => None,
    };
    let mut app = new_app(&setup, &engine.teardowns);
    app.start_activity_journal();
    let io = engine.io_worker(&setup)?;
    let outcome = engine.runtime.block_on(session::run(
        app,
        rx,
        commands,
        session::Wiring {
            engine: &engine,
            setup: &setup,
            io,
            follow_only: mode == Mode::Follow,
            sink,
        },
    ));
    let stopped_helper = engine.stop();
    let reason = outcome
        .as_ref()
        .map_or_else(|e| format!("error: {e}"), |why| (*why).to_owned());
    engine.finish(&setup, &reason, stopped_helper);
    outcome.map(|_| ())
}
