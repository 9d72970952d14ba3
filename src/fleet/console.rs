//! The console over a fleet (`--fleet FILE`, or `--controller` twice or
//! more, with no subcommand): one `ssh -T -o BatchMode=yes` per host
//! running its agent, `serve --stdio` (docs/protocol.md; planned as one
//! `--controller ... serve --stdio` plans it: the same forwarded local
//! safety flags, host key checking on), started in waves; the one `App`
//! over the fleet (`App::over_fleet`: the fleet's rows, [`FleetState`], are
//! its source of rows) in the one render loop
//! (`crate::console::render_loop::drive`), on this terminal.
//!
//! Each host's connection (`super::conn`: its reader, writer and stderr
//! threads, a bounded queue of typed lines) wakes the loop on the one
//! event channel (`Event::Host`); the loop's carrier here
//! ([`FleetCarrier`]) drains it into the App's fleet, keeps each host's
//! link (`super::hosts`, by `super::link`'s rules: connecting, connected,
//! stale after 3 heartbeats of silence or when its ssh ends, failed when
//! it cannot work until someone acts; a stale host is connected again
//! after its backoff, a failed one is not), and hands each of the App's
//! commands (`Effect::Fleet`) to its host's writer without waiting. A
//! frame is drawn only when something drawn changed
//! ([`FleetState::needs_draw`]: heartbeats cost none), at most one per
//! [`FRAME`] while lines pour in; the tick draws once a second. Quit,
//! SIGTERM, SIGINT or SIGHUP: the terminal is given back, every ssh's stdin
//! closed (each agent stops as at the end of its stdin: its teardowns
//! stopped and audited, docs/protocol.md "Stopping"), the ssh processes
//! given `super::hosts::STOP_WAIT`, then the rest killed; exit 0.

use std::io::{self, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use super::hosts::{Hosts, now};
use crate::console::render_loop::{Carrier, drive};
use crate::console::terminal::{self, RestoreOnDrop, Term, with_terminal};
use crate::event::{Event, EventReceiver, EventSender};
use crate::launcher::fleet::FleetHost;
use crate::launcher::plan::Plan;
use crate::ui::app::over_fleet::FleetState;
use crate::ui::{App, AppConfig, Effect, HelperMode, ReaperMode};

/// The shortest time between two frames while lines pour in (about 60
/// frames a second).
const FRAME: Duration = Duration::from_millis(16);

/// The longest the loop waits for an event: links are checked (silence, a retry
/// due) at least this often.
const POLL: Duration = Duration::from_millis(200);

/// Run the console over every host of `plans` (`plans[i]` reaches
/// `hosts[i]`, in [`crate::launcher::plan::Mode::Serve`]) on this terminal, its
/// times shown in `zone`, until the operator quits or a signal; exit 0 (1
/// when the terminal cannot be used).
pub(crate) fn run(hosts: &[FleetHost], plans: &[Plan], zone: jiff::tz::TimeZone) -> ExitCode {
    let (events, received): (EventSender, EventReceiver) = tokio::sync::mpsc::unbounded_channel();
    install_panic_hook();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        let _ = writeln!(io::stderr(), "stackless-tui: cannot start the fleet's loop");
        return ExitCode::FAILURE;
    };
    let Some(entered) = with_terminal(terminal::enter) else {
        // Another thread panicked already; its hook exits the process.
        loop {
            std::thread::park();
        }
    };
    let restore = RestoreOnDrop;
    let mut term = match entered {
        Ok(term) => term,
        Err(error) => return failed(&format!("{error:#}"), restore),
    };
    let input = events.clone();
    if let Err(error) = crate::console::input::spawn_with(move |event, read| {
        input.send(Event::InputAt(event, read)).is_ok()
    }) {
        return failed(
            &format!("cannot start the terminal input thread: {error}"),
            restore,
        );
    }
    let (now_s, now_ms) = now();
    let names = hosts.iter().map(|host| host.name().to_owned()).collect();
    let mut fleet = FleetState::new(names, now_ms);
    fleet.set_zone(zone);
    for (index, host) in hosts.iter().enumerate() {
        fleet.set_alias(index, &host.target.host);
    }
    let mut app = App::over_fleet(fleet, fleet_config(hosts.len()), now_s);
    let Some(hosts) = Hosts::new(hosts, plans, events) else {
        return failed("cannot start the connection starter thread", restore);
    };
    let mut carrier = FleetCarrier { hosts };
    let why = runtime.block_on(drive(&mut term, &mut app, received, &mut carrier));
    if let Err(error) = why {
        tracing::warn!("the fleet's loop ended: {error:#}");
    }
    leave_terminal(term, restore);
    carrier.hosts.stop();
    ExitCode::SUCCESS
}

/// The App's configuration over a fleet of `count` hosts: no local store,
/// reaper or helper here (each host's agent has its own).
fn fleet_config(count: usize) -> AppConfig {
    AppConfig {
        store_label: format!("a fleet of {count} hosts"),
        reaper: ReaperMode::Off("each host's agent reaps there".to_owned()),
        helper: HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    }
}

/// The terminal could not be used: given back, the reason said, exit 1.
fn failed(message: &str, restore: RestoreOnDrop) -> ExitCode {
    drop(restore);
    let _ = writeln!(io::stderr(), "stackless-tui: {message}");
    ExitCode::FAILURE
}

/// A panic in any thread: the terminal given back before the report
/// (every ssh gets SIGTERM as this process exits: `PR_SET_PDEATHSIG`),
/// exit 101.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        terminal::close_for_panic();
        previous(info);
        std::process::exit(101);
    }));
}

/// Give the terminal back once: restored here, and neither `term` nor
/// `restore` dropped (a second "leave the alternate screen" would move
/// the cursor; a closed terminal's drop would print to a dead stderr).
fn leave_terminal(term: Term, restore: RestoreOnDrop) {
    terminal::restore_terminal();
    std::mem::forget(restore);
    std::mem::forget(term);
}

/// What carries out the App's effects over a fleet, in the one render
/// loop (`crate::console::render_loop::drive`): each command to its
/// host's writer (never waited for; refused at once when it cannot go),
/// each host connection's wake-up applied to the fleet shown, every link
/// checked after each batch and at least every [`POLL`].
struct FleetCarrier<'a> {
    hosts: Hosts<'a>,
}

impl Carrier for FleetCarrier<'_> {
    const FRAME: Duration = FRAME;
    const POLL: Option<Duration> = Some(POLL);

    fn handle(&mut self, app: &mut App, event: Event) {
        let effect = match event {
            Event::Host(wake) => {
                if let Some(fleet) = app.fleet_mut() {
                    self.hosts.wake(wake, fleet);
                }
                app.settle_fleet();
                return;
            }
            event => app.handle_ms(event, now().1),
        };
        if let (Some(Effect::Fleet(sent)), Some(fleet)) = (effect, app.fleet_mut()) {
            for effect in sent {
                self.hosts.send(fleet, effect);
            }
        }
        app.settle_fleet();
    }

    fn take_copies(&mut self, app: &mut App) -> Vec<String> {
        app.fleet_mut()
            .map(FleetState::take_copies)
            .unwrap_or_default()
    }

    fn poll(&mut self, app: &mut App) {
        if let Some(fleet) = app.fleet_mut() {
            self.hosts.check(fleet);
        }
        app.settle_fleet();
    }
}

#[cfg(test)]
#[path = "console_tests.rs"]
mod tests;
