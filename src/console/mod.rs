//! The interactive console's wiring, one room each (the binary's entry
//! point, which chooses this mode, is [`crate::dispatch`]):
//! - this file: prepare, then run;
//! - [`setup`]: everything decided before the terminal is touched;
//! - [`run`]: the threads, the one event channel, shutting down;
//! - [`leader`]: the role thread (takes `console` / `helper-supervisor`,
//!   starts the reaper and the helper supervisor);
//! - [`render_loop`]: the one loop that applies events and draws;
//! - [`terminal`]: raw mode, the alternate screen, the panic gate;
//! - [`logging`]: the log file.
//!
//! `docs/ARCHITECTURE.md` maps the threads and the data flow.

mod actions;
mod agent;
pub(crate) mod input;
mod io_worker;
mod job_starter;
mod leader;
mod logging;
pub(crate) mod metrics_file;
mod queue_down;
mod recording;
pub(crate) mod render_loop;
pub(crate) mod replay;
mod run;
mod setup;
pub(crate) mod terminal;

use std::io::{self, Write as _};
use std::process::ExitCode;

use crate::cli::{Cli, usage};

pub(crate) use agent::{follow, record, serve};

/// The interactive console: prepare (flags, store, roles; exit 2 with the
/// reason before the terminal is touched), then run until the operator
/// quits (exit 0) or a crash report (exit 1).
#[must_use]
pub(crate) fn start(cli: &Cli) -> ExitCode {
    let setup = match setup::prepare(cli, setup::Front::Terminal) {
        Ok(setup) => setup,
        Err(error) => return usage(&error.to_string()),
    };
    match run::run(setup, cli.no_record) {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => {
            let _ = writeln!(io::stderr(), "{report:?}");
            ExitCode::FAILURE
        }
    }
}
