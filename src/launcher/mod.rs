//! The remote launcher: `--controller ssh://HOST` (or stackless's
//! `STACKLESS_CONTROLLER`) runs this console, or `snapshot` / `reap --once`,
//! on the controller's host through OpenSSH, before anything local starts:
//! no store is opened (with `-t`, ssh itself puts the local terminal in raw
//! mode; the launcher puts the terminal back only when the session ends
//! abnormally). It spawns `ssh` (found in `PATH`, with
//! `PR_SET_PDEATHSIG`) with an argv ([`Plan::ssh_args`], never a local
//! shell), passes stdout through (stdin too for the console; a headless
//! command's ssh gets a pipe the launcher holds, whose closing tells the
//! remote side to stop), copies ssh's stderr through while keeping its
//! tail, and exits with ssh's status, explaining 126, 127 and 255
//! ([`failure::failure_message`]), or with 128 + the signal
//! when the launcher was interrupted (TERM, HUP, INT).

use std::ffi::OsString;
use std::io::{self, IsTerminal as _, Read as _, Write as _};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

pub(crate) mod failure;
pub(crate) mod fleet;
pub(crate) mod ssh;

pub(crate) use fleet::{FleetLaunch, FleetWhat, Launch};
pub(crate) use ssh::launch;
pub(crate) mod plan;

use crate::cli::{Cli, EXIT_USAGE, Sub};
use crate::model::text::sanitize_short;
use failure::{classify, failure_message, interrupted_message, stderr_tail};
use fleet::{fleet_format_refusal, fleet_needs_a_terminal, fleet_refusal};
use plan::{
    DEFAULT_REMOTE_BIN, Mode, OnTheHost, Plan, Target, check_remote_bin, env_on_the_host,
    not_applied_message, strip_launcher_args,
};

/// How long each host's agent holds its first reaper pass when a fleet
/// console opens it (seconds; `serve --stdio --first-pass-after`): the
/// console shows who reaps where, and the countdown, before any host acts;
/// `P` or `:pause all` meanwhile keeps the pass from running.
pub(crate) const FIRST_PASS_AFTER_SECS: u64 = 10;

/// The OpenSSH client, looked up in `PATH` (as stackless 0.4.0 runs it).
pub(crate) const SSH: &str = "ssh";

/// How much of ssh's stderr is kept for the message (the rest is only
/// passed through).
const TAIL_BYTES: usize = 4096;

/// The binary's first step: when the command line (`args`, program name
/// first) and the environment send this run to a controller's host, launch
/// it there and return ssh's exit status (or exit 2 for a refused target);
/// over a fleet, the run planned for `crate::fleet` to start
/// ([`Launch::Fleet`]); else `None` to run here.
///
/// Decided from the command line and the environment; of the local config
/// file only `state` (a local store: the console stays here beside
/// `STACKLESS_CONTROLLER`) and the safety switches are read (the host's
/// own config applies there, and a forwarded `--config PATH` names a file
/// there). Local safety switches travel as flags; other local settings
/// from the environment are named as not applied there. A command line
/// clap refuses is left to the local parse, which reports it.
#[must_use]
pub(crate) fn launch_if_remote(args: &[OsString]) -> Option<Launch> {
    let matches = <Cli as clap::CommandFactory>::command()
        .try_get_matches_from(args)
        .ok()?;
    let mut cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).ok()?;
    let mut from_env = env_sourced(&matches);
    let controller = std::env::var("STACKLESS_CONTROLLER").ok();
    if let Some((file, table)) = local_config(&cli) {
        apply_local_config(&mut cli, &matches, &file, &table, &mut from_env);
    }
    let fleet_on_line =
        matches.value_source("fleet") == Some(clap::parser::ValueSource::CommandLine);
    match fleet_hosts(&cli, fleet_on_line, |file| std::fs::read_to_string(file)) {
        Err(message) => return Some(Launch::Done(fail(&message, EXIT_USAGE))),
        Ok(Some(hosts)) if hosts.len() >= 2 => {
            return Some(match launch_fleet(&cli, args, &from_env, hosts) {
                Ok(run) => Launch::Fleet(run),
                Err(code) => Launch::Done(code),
            });
        }
        // One host: today's launcher, reaching it as one --controller.
        Ok(Some(hosts)) => cli.controller = hosts.into_iter().map(|host| host.given).collect(),
        Ok(None) => {}
    }
    match plan(&cli, args, controller, &from_env) {
        Ok(Some(plan)) => Some(Launch::Done(launch(&plan))),
        Ok(None) => {
            warn_unused_launcher_flags(&matches);
            None
        }
        Err(message) => Some(Launch::Done(fail(&message, EXIT_USAGE))),
    }
}

/// The local config file (`--config`, `STACKLESS_TUI_CONFIG`, else the
/// default path) as a TOML table, for the launcher's few keys; `None` when
/// there is none or it cannot be read or parsed (a local run reports that
/// itself).
fn local_config(cli: &Cli) -> Option<(std::path::PathBuf, toml::Table)> {
    let file = cli.config.clone().or_else(|| {
        crate::cli::default_config_path(
            std::env::var("XDG_CONFIG_HOME").ok().as_deref(),
            std::env::var("HOME").ok().as_deref(),
        )
    })?;
    let table = std::fs::read_to_string(&file).ok()?.parse().ok()?;
    Some((file, table))
}

/// Decide whether this run goes to a controller's host: `Ok(None)` to run
/// here. `args` is the whole command line (program name first);
/// `env_controller` is `STACKLESS_CONTROLLER`; `from_env` the flags whose
/// value came from their environment variable, as `(clap id, variable)`
/// ([`env_sourced`]): the safety switches among them are passed on as
/// flags, the rest named as not applied on the host
/// ([`plan::env_on_the_host`]).
///
/// - `--reached-as HOST` (the remote side): runs here, never hops again
///   (`STACKLESS_CONTROLLER` on that host is ignored; `--controller` is
///   refused); `HOST` must be a host stackless accepts.
/// - `--controller TARGET` always names the host; `STACKLESS_CONTROLLER`
///   does unless `--state` (flag, environment, or the local config file's
///   `state`: [`apply_local_config`]) or `--demo` names a local store (stackless 0.4.0
///   also ignores it when `--state-dir` is given: `ClientBuilder::build`,
///   `stackless-0.4.0/src/client/mod.rs`). An empty variable is unset.
/// - `completions`, `man` and the demo's helpers always run here.
///
/// # Errors
/// The message (without the `stackless-tui: ` prefix) for a target, a
/// remote program or an argument that cannot be used; nothing has run.
pub(crate) fn plan(
    cli: &Cli,
    args: &[OsString],
    env_controller: Option<String>,
    from_env: &[(String, String)],
) -> Result<Option<Plan>, String> {
    if let Some(host) = &cli.reached_as {
        if !Target::parse(host).is_ok_and(|t| t.user.is_none() && t.host == *host) {
            return Err(format!(
                "--reached-as {:?}: not a host name stackless accepts",
                sanitize_short(host, 80)
            ));
        }
        if !cli.controller.is_empty() {
            return Err(
                "--controller cannot be combined with --reached-as: this console was \
                 itself reached over ssh and does not hop again"
                    .to_owned(),
            );
        }
        return Ok(None);
    }
    let (text, source) = match (cli.controller.first(), env_controller) {
        (Some(text), _) => (text.clone(), "--controller"),
        (None, Some(text)) if !text.is_empty() && cli.state.is_none() && cli.demo.is_none() => {
            (text, "STACKLESS_CONTROLLER")
        }
        _ => return Ok(None),
    };
    let mode = match &cli.command {
        None => Mode::Console,
        Some(Sub::Serve { .. }) => Mode::Serve,
        Some(Sub::Snapshot { follow: true, .. }) => Mode::Follow,
        Some(Sub::Snapshot { .. } | Sub::Reap { .. } | Sub::History { .. }) => Mode::Headless,
        Some(
            Sub::Completions { .. }
            | Sub::Man
            | Sub::Record { .. }
            | Sub::Replay { .. }
            | Sub::DemoDown { .. }
            | Sub::DemoHelper
            | Sub::DemoStackless { .. },
        ) => return Ok(None),
    };
    let target = Target::parse(&text)
        .map_err(|rule| format!("{source} {:?}: {rule}", sanitize_short(&text, 80)))?;
    // An empty value (`STACKLESS_TUI_REMOTE_BIN=`) is unset.
    let remote_bin = cli
        .remote_bin
        .clone()
        .filter(|bin| !bin.is_empty())
        .unwrap_or_else(|| DEFAULT_REMOTE_BIN.to_owned());
    let bin_source = if from_env.iter().any(|(id, _)| id == "remote_bin") {
        "STACKLESS_TUI_REMOTE_BIN"
    } else {
        "--remote-bin"
    };
    check_remote_bin(&remote_bin).map_err(|why| {
        format!(
            "{bin_source} {:?} {why}: name the stackless-tui program on {}",
            sanitize_short(&remote_bin, 80),
            target.host
        )
    })?;
    let forwarded = strip_launcher_args(args.get(1..).unwrap_or_default())
        .into_iter()
        .map(|arg| {
            arg.into_string().map_err(|arg| {
                format!(
                    "the argument {:?} is not UTF-8 and cannot be passed to {} over ssh",
                    arg.to_string_lossy(),
                    target.host
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (mut flags, not_applied) = local_settings(cli, from_env);
    // In front: before any subcommand or `--` (`--no-reaper` is not global).
    flags.extend(forwarded);
    Ok(Some(Plan {
        target,
        remote_bin,
        ssh_config: cli.ssh_config.clone().filter(|file| !file.is_empty()),
        forwarded: flags,
        mode,
        not_applied,
    }))
}

/// The hosts of a fleet this run names, `None` when it names none (or one
/// `--controller`: today's launcher, [`plan`]). `fleet_on_line`: `--fleet`
/// was on the command line (else `cli.fleet` came from
/// `STACKLESS_TUI_FLEET` or the local config file's `fleet`); `read`
/// reads the fleet file.
///
/// - `--reached-as` (the remote side): never a fleet (`--fleet` there is
///   refused; `--controller` is refused by [`plan`]).
/// - `completions`, `man` and the demo's helpers: never a fleet.
/// - `--controller` given twice or more: those hosts
///   ([`fleet::from_controllers`]); beside `--fleet` on the command line:
///   refused.
/// - `--fleet FILE` on the command line: its hosts
///   ([`fleet::parse_fleet_file`]); from the environment or the config
///   file, unless one `--controller`, `--state` or `--demo` was given (as
///   `STACKLESS_CONTROLLER` is ignored beside a local store); an empty
///   value is unset.
///
/// # Errors
/// A target, label or file that cannot be used, naming it; nothing has
/// run.
pub(crate) fn fleet_hosts(
    cli: &Cli,
    fleet_on_line: bool,
    read: impl Fn(&std::path::Path) -> io::Result<String>,
) -> Result<Option<Vec<fleet::FleetHost>>, String> {
    if cli.reached_as.is_some() {
        if fleet_on_line {
            return Err(
                "--fleet cannot be combined with --reached-as: this console was itself \
                 reached over ssh and does not hop again"
                    .to_owned(),
            );
        }
        return Ok(None);
    }
    if matches!(
        cli.command,
        Some(Sub::Completions { .. } | Sub::Man | Sub::DemoDown { .. } | Sub::DemoHelper)
    ) {
        return Ok(None);
    }
    if !cli.controller.is_empty() && fleet_on_line {
        return Err(
            "name the hosts either with --controller (once per host) or with --fleet FILE, \
             not both"
                .to_owned(),
        );
    }
    if cli.controller.len() >= 2 {
        return fleet::from_controllers(&cli.controller).map(Some);
    }
    let Some(file) = cli
        .fleet
        .as_deref()
        .filter(|file| !file.as_os_str().is_empty())
    else {
        return Ok(None);
    };
    if !cli.controller.is_empty() || (!fleet_on_line && (cli.state.is_some() || cli.demo.is_some()))
    {
        return Ok(None);
    }
    let shown = crate::model::text::sanitize(&file.display().to_string()).into_owned();
    let text = read(file).map_err(|error| format!("the fleet file {shown}: {error}"))?;
    fleet::parse_fleet_file(&text, std::path::Path::new(&shown)).map(Some)
}

/// Plan the console, `snapshot [--json]` or `snapshot --follow` over a
/// fleet of two or more `hosts` (the others are refused: `Err`, exit 2,
/// nothing run): each host planned exactly as one `--controller` plans it
/// ([`plan`]: the same forwarded arguments and local safety flags); the
/// console as one `--controller ... serve --stdio` (its agent, in
/// [`Mode::Serve`]: `-T`, batch mode, host key checking), drawn here
/// (`crate::fleet` runs it); `snapshot`'s table asked for as `--json` and
/// drawn here.
fn launch_fleet(
    cli: &Cli,
    args: &[OsString],
    from_env: &[(String, String)],
    hosts: Vec<fleet::FleetHost>,
) -> Result<FleetLaunch, ExitCode> {
    let recorded = fleet_recording(cli)?;
    let (json, follow, console) = match &cli.command {
        Some(Sub::Snapshot {
            format: Some(_), ..
        }) => {
            return Err(fail(&fleet_format_refusal(hosts.len()), EXIT_USAGE));
        }
        Some(Sub::Snapshot { follow, json, .. }) => (*json, *follow, false),
        Some(Sub::Record { .. }) => (false, true, false),
        None => (false, false, true),
        Some(other) => return Err(fail(&fleet_refusal(other, hosts.len()), EXIT_USAGE)),
    };
    let mut plans = Vec::new();
    for host in &hosts {
        let mut one = cli.clone();
        one.controller = vec![host.given.clone()];
        if recorded.is_some() {
            one.command = Some(FOLLOW);
        }
        if console {
            one.command = Some(Sub::Serve {
                stdio: true,
                first_pass_after: FIRST_PASS_AFTER_SECS,
            });
        }
        match plan(&one, args, None, from_env) {
            Ok(Some(mut plan)) => {
                // No positional follows: the end is before any `--`.
                let end = plan.forwarded.iter().position(|a| a == "--");
                let end = end.unwrap_or(plan.forwarded.len());
                if recorded.is_some() {
                    follow_for_record(&mut plan.forwarded, end);
                } else if console {
                    plan.forwarded.splice(
                        end..end,
                        [
                            "serve".to_owned(),
                            "--stdio".to_owned(),
                            "--first-pass-after".to_owned(),
                            FIRST_PASS_AFTER_SECS.to_string(),
                        ],
                    );
                } else if !json && !follow {
                    plan.forwarded.insert(end, "--json".to_owned());
                }
                plans.push(plan);
            }
            Ok(None) => return Err(fail("the fleet names no host to run on", EXIT_USAGE)),
            Err(message) => return Err(fail(&message, EXIT_USAGE)),
        }
    }
    if console && !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
        return Err(fail(&fleet_needs_a_terminal(hosts.len()), EXIT_USAGE));
    }
    if let Some(first) = plans.first()
        && !first.not_applied.is_empty()
    {
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: {}",
            not_applied_message("the fleet's hosts", &first.not_applied)
        );
    }
    let zone = crate::startup::display_zone(cli.utc);
    let what = if let Some((dir, retention)) = recorded {
        FleetWhat::Record { dir, retention }
    } else if console {
        FleetWhat::Console { zone }
    } else if follow {
        FleetWhat::Follow
    } else {
        FleetWhat::Once {
            json,
            timeout: cli.fleet_timeout,
            zone,
        }
    };
    Ok(FleetLaunch { what, hosts, plans })
}

/// `snapshot --follow`: what each host of a recorded fleet runs.
const FOLLOW: Sub = Sub::Snapshot {
    json: false,
    format: None,
    now: None,
    follow: true,
    at: None,
    history: None,
    host: None,
};

/// A recorded fleet's host's arguments (`forwarded`, its subcommand
/// before `end`): `snapshot --follow` in place of `record` and its own
/// arguments, which stay here (the first `record` is the subcommand: no
/// global option before it takes that word as its value).
fn follow_for_record(forwarded: &mut Vec<String>, end: usize) {
    let at = forwarded[..end].iter().position(|a| a == "record");
    forwarded.truncate(at.unwrap_or(end));
    forwarded.extend(["snapshot".to_owned(), "--follow".to_owned()]);
}

/// `record` over a fleet: its history directory and retention (`None`:
/// another command).
///
/// # Errors
/// `--retain` or `--max-size` is not one, or no directory can be named
/// (exit 2, nothing run).
fn fleet_recording(
    cli: &Cli,
) -> Result<Option<(std::path::PathBuf, crate::history::record::Retention)>, ExitCode> {
    let Some(Sub::Record {
        history,
        retain,
        max_size,
    }) = &cli.command
    else {
        return Ok(None);
    };
    let retention =
        crate::history::retention(retain, max_size).map_err(|e| fail(&e, EXIT_USAGE))?;
    let mut here = cli.clone();
    here.controller.clear();
    let dir =
        crate::history::history_dir(&here, history.as_deref()).map_err(|e| fail(&e, EXIT_USAGE))?;
    Ok(Some((dir, retention)))
}

/// The local settings of `from_env` ([`plan`]): the safety switches that
/// are on, as the flags to pass on, and the names of the rest, not applied
/// on the host.
fn local_settings(cli: &Cli, from_env: &[(String, String)]) -> (Vec<String>, Vec<String>) {
    let mut flags = Vec::new();
    let mut not_applied = Vec::new();
    for (id, variable) in from_env {
        match env_on_the_host(id) {
            OnTheHost::Launcher => {}
            OnTheHost::Flag(flag) => {
                let on = match id.as_str() {
                    "dry_run" => cli.dry_run,
                    "read_only" => cli.read_only,
                    _ => cli.no_reaper,
                };
                if on {
                    flags.push(flag.to_owned());
                }
            }
            OnTheHost::Reaper if cli.reaper == crate::model::controller::ReaperChoice::Off => {
                flags.extend(["--reaper".to_owned(), "off".to_owned()]);
            }
            OnTheHost::Reaper | OnTheHost::NotApplied => not_applied.push(variable.clone()),
        }
    }
    (flags, not_applied)
}

/// What the launcher takes from the local config file `table` (read from
/// `file`) where neither the command line nor the environment spoke:
/// `state` (the console then stays local beside `STACKLESS_CONTROLLER`, as
/// `--state` and `STACKLESS_TUI_STATE` keep it), and `dry-run`,
/// `read-only`, `no-reaper` set to `true` and `reaper = "off"` (passed on as their flags, like
/// the environment's: added to `from_env` as `key (FILE)`), and `fleet`
/// (a fleet file, where `--fleet` and `STACKLESS_TUI_FLEET` are not given:
/// [`fleet_hosts`]). Nothing else of it is read.
pub(crate) fn apply_local_config(
    cli: &mut Cli,
    matches: &clap::ArgMatches,
    file: &std::path::Path,
    table: &toml::Table,
    from_env: &mut Vec<(String, String)>,
) {
    let unset = |id: &str| {
        matches!(
            matches.value_source(id),
            None | Some(clap::parser::ValueSource::DefaultValue)
        )
    };
    if cli.state.is_none()
        && let Some(toml::Value::String(state)) = table.get("state")
    {
        cli.state = Some(state.into());
        // Beside --controller it is a path here: said not to apply there.
        from_env.push(("state".to_owned(), format!("state ({})", file.display())));
    }
    for (key, id) in [
        ("dry-run", "dry_run"),
        ("read-only", "read_only"),
        ("no-reaper", "no_reaper"),
    ] {
        if unset(id) && table.get(key) == Some(&toml::Value::Boolean(true)) {
            match id {
                "dry_run" => cli.dry_run = true,
                "read_only" => cli.read_only = true,
                _ => cli.no_reaper = true,
            }
            from_env.push((id.to_owned(), format!("{key} ({})", file.display())));
        }
    }
    if cli.fleet.is_none()
        && let Some(toml::Value::String(fleet)) = table.get("fleet")
    {
        cli.fleet = Some(fleet.into());
        from_env.push(("fleet".to_owned(), format!("fleet ({})", file.display())));
    }
    if unset("reaper") && table.get("reaper") == Some(&toml::Value::String("off".to_owned())) {
        cli.reaper = crate::model::controller::ReaperChoice::Off;
        from_env.push(("reaper".to_owned(), format!("reaper ({})", file.display())));
    }
}

/// A local run given `--remote-bin` or `--ssh-config` on its command line
/// (they only serve `--controller`): say on stderr that they are ignored.
/// (Not refused: clap's `requires` cannot see `STACKLESS_CONTROLLER`, and
/// their variables may be set for every command in a profile.)
pub(crate) fn warn_unused_launcher_flags(matches: &clap::ArgMatches) {
    let given: Vec<&str> = [
        ("remote_bin", "--remote-bin"),
        ("ssh_config", "--ssh-config"),
    ]
    .into_iter()
    .filter(|(id, _)| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
    .map(|(_, flag)| flag)
    .collect();
    if !given.is_empty() && matches.get_one::<String>("reached_as").is_none() {
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: warning: {} ignored: {} only used with --controller ssh://HOST (or \
             STACKLESS_CONTROLLER), and this run is local",
            given.join(" and "),
            if given.len() == 1 {
                "it is"
            } else {
                "they are"
            }
        );
    }
}

/// The flags of `matches` whose value came from their environment
/// variable, as `(clap id, variable name)`.
#[must_use]
pub(crate) fn env_sourced(matches: &clap::ArgMatches) -> Vec<(String, String)> {
    use clap::CommandFactory as _;
    Cli::command()
        .get_arguments()
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_string_lossy().into_owned();
            let id = arg.get_id().as_str();
            (matches.value_source(id) == Some(clap::parser::ValueSource::EnvVariable))
                .then(|| (id.to_owned(), variable))
        })
        .collect()
}

/// Print `stackless-tui: {message}` and exit with `code`.
fn fail(message: &str, code: u8) -> ExitCode {
    let _ = writeln!(io::stderr(), "stackless-tui: {message}");
    ExitCode::from(code)
}

#[cfg(test)]
mod tests;
