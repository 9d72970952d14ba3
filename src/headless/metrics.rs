//! `snapshot --format openmetrics`: the store's state, who reaps and the
//! audit trail's counts as one `OpenMetrics` document on stdout
//! ([`crate::model::metrics::document`], docs/metrics.md), from the same
//! read-only snapshot `snapshot --json` reports.

use std::io::Write as _;
use std::process::ExitCode;

use crate::cli::Cli;
use crate::model::metrics::{StoreState, document};
use crate::model::time::unix_now;
use crate::startup::absent_default_store;

/// Print the document of the store at `now` (unix seconds; the wall
/// clock when `None`). A store that cannot be read, or no store at
/// stackless's default path (nothing is created), is printed as
/// `stackless_store_up 0`, why on stderr, exit 0: the document says it,
/// so a textfile written from it raises the store-down alert rather than
/// keeping the last good values.
#[must_use]
pub fn snapshot(cli: &Cli, now: Option<i64>) -> ExitCode {
    if let Some(path) = absent_default_store(cli) {
        let line =
            crate::startup::no_store_line(&path, "nothing to show", "a read creates nothing");
        let _ = writeln!(std::io::stderr(), "stackless-tui: {line}");
        return print(&document(None, None, None), ExitCode::SUCCESS);
    }
    let (_, store, snapshot) = match super::read_once(cli) {
        Ok(read) => read,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "stackless-tui: {error}");
            return print(&document(None, None, None), ExitCode::SUCCESS);
        }
    };
    if store.immutable() {
        eprintln!("{}", super::immutable_note(&store));
    }
    let state_dir = store.state_dir();
    drop(store);
    let state = StoreState::of(&snapshot, now.unwrap_or_else(unix_now));
    drop(snapshot);
    let counts = crate::audit::counts(&crate::audit::default_path(&state_dir));
    let reaping = super::who_reaps(&state_dir);
    print(
        &document(
            Some(&state),
            Some(crate::model::metrics::reaper_by(&reaping)),
            counts.as_ref(),
        ),
        ExitCode::SUCCESS,
    )
}

/// `text` on stdout, then `code` (a closed pipe is not an error of ours;
/// another write error is exit 2).
fn print(text: &str, code: ExitCode) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => code,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(error) => super::usage(&error.to_string()),
    }
}
