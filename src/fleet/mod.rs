//! The runs over a fleet (two or more hosts, `--controller` twice or
//! more, `--fleet FILE`), as `crate::launcher` planned them
//! ([`FleetLaunch`]): each host reached exactly as one `--controller`
//! reaches it (the ssh plan stays in `crate::launcher::plan`).
//!
//! - `once`: `snapshot [--json]`: one `ssh -T` per host, one merged
//!   document or table (`crate::launcher::fleet`'s pure merge);
//! - `link`: one host's link, pure (connecting, connected, stale after
//!   silence, failed; reconnect backoff; the connecting waves), and the
//!   lines of `snapshot --follow` over a fleet; `follow` runs it;
//! - `console`: the console over every host's agent (`serve --stdio`):
//!   the loop; `hosts`: every host's link and connection as event sources
//!   (`crate::event::Event::Host`); `conn`: one host's ssh and its reader,
//!   writer and stderr threads.

use std::process::ExitCode;

use crate::launcher::{FleetLaunch, FleetWhat};

mod conn;
mod console;
mod follow;
mod hosts;
mod link;
mod once;

/// Run `launch` over its hosts; the process's exit status.
pub(crate) fn run(launch: FleetLaunch) -> ExitCode {
    let FleetLaunch { what, hosts, plans } = launch;
    match what {
        FleetWhat::Console { zone } => console::run(&hosts, &plans, zone),
        FleetWhat::Follow => follow::run(&hosts, &plans),
        FleetWhat::Once {
            json,
            timeout,
            zone,
        } => once::run(&hosts, &plans, (json, timeout), &zone),
    }
}
