//! The runs over a fleet (two or more hosts, `--controller` twice or
//! more, `--fleet FILE`), as `crate::launcher` planned them
//! ([`FleetLaunch`]): each host reached exactly as one `--controller`
//! reaches it (the ssh plan stays in `crate::launcher::plan`).
//!
//! - `once`: `snapshot [--json]`: one `ssh -T` per host, one merged
//!   document or table (`crate::launcher::fleet`'s pure merge);
//! - `follow` also records: `record` over a fleet, each host's stream
//!   into its own recording (`crate::history::fleet`);
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
        FleetWhat::Record { dir, retention } => {
            let names: Vec<&str> = hosts
                .iter()
                .map(crate::launcher::fleet::FleetHost::name)
                .collect();
            match crate::history::fleet::Recorders::start(&names, &dir, retention) {
                Ok(mut recorders) => {
                    let code = follow::run_with(&hosts, &plans, |out| {
                        recorders.take(out);
                        Ok(())
                    });
                    recorders.finish();
                    code
                }
                Err(code) => code,
            }
        }
        FleetWhat::Once {
            json,
            timeout,
            zone,
        } => once::run(&hosts, &plans, (json, timeout), &zone),
    }
}
