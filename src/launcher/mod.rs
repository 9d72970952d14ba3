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
pub(crate) mod fleet_follow;
mod fleet_follow_run;
mod fleet_run;
pub(crate) mod plan;

use crate::cli::{Cli, EXIT_USAGE, Sub};
use crate::model::text::sanitize_short;
use failure::{classify, failure_message, interrupted_message, stderr_tail};
use plan::{
    DEFAULT_REMOTE_BIN, Mode, OnTheHost, Plan, Target, check_remote_bin, env_on_the_host,
    not_applied_message, strip_launcher_args,
};

/// The OpenSSH client, looked up in `PATH` (as stackless 0.4.0 runs it).
pub(crate) const SSH: &str = "ssh";

/// How much of ssh's stderr is kept for the message (the rest is only
/// passed through).
const TAIL_BYTES: usize = 4096;

/// The binary's first step: when the command line (`args`, program name
/// first) and the environment send this run to a controller's host, launch
/// it there and return ssh's exit status (or exit 2 for a refused target),
/// else `None` to run here.
///
/// Decided from the command line and the environment; of the local config
/// file only `state` (a local store: the console stays here beside
/// `STACKLESS_CONTROLLER`) and the safety switches are read (the host's
/// own config applies there, and a forwarded `--config PATH` names a file
/// there). Local safety switches travel as flags; other local settings
/// from the environment are named as not applied there. A command line
/// clap refuses is left to the local parse, which reports it.
#[must_use]
pub(crate) fn launch_if_remote(args: &[OsString]) -> Option<ExitCode> {
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
        Err(message) => return Some(fail(&message, EXIT_USAGE)),
        Ok(Some(hosts)) if hosts.len() >= 2 => {
            return Some(launch_fleet(&cli, args, &from_env, &hosts));
        }
        // One host: today's launcher, reaching it as one --controller.
        Ok(Some(hosts)) => cli.controller = hosts.into_iter().map(|host| host.given).collect(),
        Ok(None) => {}
    }
    match plan(&cli, args, controller, &from_env) {
        Ok(Some(plan)) => Some(launch(&plan)),
        Ok(None) => {
            warn_unused_launcher_flags(&matches);
            None
        }
        Err(message) => Some(fail(&message, EXIT_USAGE)),
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
        (None, Some(text)) if !text.is_empty() && cli.state.is_none() && !cli.demo => {
            (text, "STACKLESS_CONTROLLER")
        }
        _ => return Ok(None),
    };
    let mode = match &cli.command {
        None => Mode::Console,
        Some(Sub::Serve { .. }) => Mode::Serve,
        Some(Sub::Snapshot { follow: true, .. }) => Mode::Follow,
        Some(Sub::Snapshot { .. } | Sub::Reap { .. }) => Mode::Headless,
        Some(Sub::Completions { .. } | Sub::Man | Sub::DemoDown { .. } | Sub::DemoHelper) => {
            return Ok(None);
        }
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
    if !cli.controller.is_empty() || (!fleet_on_line && (cli.state.is_some() || cli.demo)) {
        return Ok(None);
    }
    let shown = crate::model::text::sanitize(&file.display().to_string()).into_owned();
    let text = read(file).map_err(|error| format!("the fleet file {shown}: {error}"))?;
    fleet::parse_fleet_file(&text, std::path::Path::new(&shown)).map(Some)
}

/// Run `snapshot [--json]` over a fleet of two or more `hosts` (the only
/// commands a fleet runs yet; the others are refused, exit 2, nothing
/// run): each host planned exactly as one `--controller` plans it
/// ([`plan`]: the same forwarded arguments and local safety flags), the
/// table asked for as `--json` and drawn here.
fn launch_fleet(
    cli: &Cli,
    args: &[OsString],
    from_env: &[(String, String)],
    hosts: &[fleet::FleetHost],
) -> ExitCode {
    let (json, follow) = match &cli.command {
        Some(Sub::Snapshot { follow, json, .. }) => (*json, *follow),
        other => return fail(&fleet_refusal(other.as_ref(), hosts.len()), EXIT_USAGE),
    };
    let mut plans = Vec::new();
    for host in hosts {
        let mut one = cli.clone();
        one.controller = vec![host.given.clone()];
        match plan(&one, args, None, from_env) {
            Ok(Some(mut plan)) => {
                if !json && !follow {
                    // No positional follows `snapshot`: the end is after it.
                    let end = plan.forwarded.iter().position(|a| a == "--");
                    let end = end.unwrap_or(plan.forwarded.len());
                    plan.forwarded.insert(end, "--json".to_owned());
                }
                plans.push(plan);
            }
            Ok(None) => return fail("the fleet names no host to run on", EXIT_USAGE),
            Err(message) => return fail(&message, EXIT_USAGE),
        }
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
    if follow {
        return fleet_follow_run::run(hosts, &plans);
    }
    fleet_run::run(
        hosts,
        &plans,
        (json, cli.fleet_timeout),
        &crate::startup::display_zone(cli.utc),
    )
}

/// Why a fleet does not run `command` yet (`count` hosts).
fn fleet_refusal(command: Option<&Sub>, count: usize) -> String {
    let what = match command {
        None => {
            return format!(
                "the fleet view is not built yet: over {count} hosts only `snapshot`, \
                 `snapshot --json` and `snapshot --follow` run; run the console with one --controller ssh://HOST"
            );
        }
        Some(Sub::Serve { .. }) => "`serve --stdio`",
        Some(Sub::Reap { .. }) => "`reap --once`",
        Some(_) => "this command",
    };
    format!(
        "{what} over a fleet is not built yet: over {count} hosts only `snapshot`, \
         `snapshot --json` and `snapshot --follow` run; run {what} with one --controller ssh://HOST"
    )
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

/// Run `plan` through ssh and exit with its status (see the module doc).
/// The console needs a terminal here too: without one, exit 2 before ssh
/// runs.
#[must_use]
pub(crate) fn launch(plan: &Plan) -> ExitCode {
    let host = &plan.target.host;
    if plan.mode == Mode::Console && !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
        return fail(&needs_a_terminal(plan), EXIT_USAGE);
    }
    if !plan.not_applied.is_empty() {
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: {}",
            not_applied_message(host, &plan.not_applied)
        );
    }
    // The terminal as it is now, put back if the console's session ends
    // abnormally (the remote console cannot restore it then).
    let saved = (plan.mode == Mode::Console)
        .then(|| nix::sys::termios::tcgetattr(io::stdin()).ok())
        .flatten();
    // Registered before ssh starts (a signal from then on is held for it).
    let signals = Signals::register();
    let mut child = match spawn_ssh(plan, Stdio::inherit()) {
        Ok(child) => child,
        Err(error) => return fail(&cannot_run_ssh(host, &error), EXIT_USAGE),
    };
    // Headless and streams: ssh's stdin is a pipe this launcher holds;
    // closing it tells the remote side to stop (`reap --once` watches its
    // stdin: `headless::reap_once`; `serve --stdio` stops at its end).
    // Only `serve --stdio` gets the local stdin, copied through.
    let pipe = Arc::new(Mutex::new(child.stdin.take()));
    if plan.mode == Mode::Serve {
        let pipe = Arc::clone(&pipe);
        // Not joined: it may sit in a read of the local stdin at exit.
        let _copier = std::thread::Builder::new()
            .name("ssh-stdin".into())
            .spawn(move || copy_stdin(&pipe));
    }
    let caught: Arc<OnceLock<Signal>> = Arc::new(OnceLock::new());
    let forwarder = signals.map(|signals| {
        signals.watch(
            child.id(),
            plan.mode,
            Arc::clone(&pipe),
            Arc::clone(&caught),
        )
    });
    let copier = child.stderr.take().map(|stderr| {
        std::thread::Builder::new()
            .name("ssh-stderr".into())
            .spawn(move || pass_through(stderr))
    });
    let (status, killed) = wait_bounded(&mut child, &caught);
    if let Some(runtime) = forwarder {
        runtime.shutdown_background();
    }
    drop(pipe);
    let tail = match copier {
        Some(Ok(handle)) => handle.join().unwrap_or_default(),
        _ => Vec::new(),
    };
    let status = match status {
        Ok(status) => status,
        Err(error) => return fail(&format!("waiting for ssh to {host}: {error}"), 1),
    };
    let code = exit_code(status);
    if plan.mode == Mode::Console && (code != 0 || caught.get().is_some()) {
        restore_local_terminal(saved.as_ref());
    }
    if let Some(signal) = caught.get() {
        return fail(
            &interrupted_message(plan, *signal as i32, signal.as_str(), killed),
            u8::try_from(128 + *signal as i32).unwrap_or(1),
        );
    }
    let stderr = String::from_utf8_lossy(&tail);
    let exit = u8::try_from(code).unwrap_or(1);
    match classify(code, &stderr) {
        None => ExitCode::from(exit),
        Some(failure) => fail(
            &failure_message(failure, plan, code, &stderr_tail(&stderr)),
            exit,
        ),
    }
}

/// ssh could not be started.
fn cannot_run_ssh(host: &str, error: &io::Error) -> String {
    format!(
        "cannot run ssh to reach {host}: {error}. The OpenSSH client (`ssh`) must be on PATH \
         (Debian: apt-get install openssh-client)."
    )
}

/// ssh's status as an exit code: its own, or 128 + the signal that killed
/// it.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// How long ssh may take to end after the launcher was interrupted (the
/// remote pass stops its teardowns within their 5 s kill grace) before it
/// is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(30);

/// Start ssh: stdin passed through for the console, a pipe for a headless
/// command or a stream (which also gets a process group of its own, so a
/// terminal's Ctrl-C reaches only this launcher, which then stops the
/// remote side in order; and ssh never reads a terminal from a background
/// group: `serve --stdio`'s local stdin is copied by [`copy_stdin`]);
/// stdout as given (passed through: ssh writes the stream as it arrives;
/// a fleet's host: a pipe), stderr piped. ssh gets SIGTERM when this
/// launcher dies, even by SIGKILL (`PR_SET_PDEATHSIG`).
fn spawn_ssh(plan: &Plan, stdout: Stdio) -> io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt as _;
    let mut command = Command::new(SSH);
    command
        .args(plan.ssh_args())
        .stdout(stdout)
        .stderr(Stdio::piped());
    match plan.mode {
        Mode::Console => command.stdin(Stdio::inherit()),
        Mode::Headless | Mode::Serve | Mode::Follow => {
            command.stdin(Stdio::piped()).process_group(0)
        }
    };
    let parent = nix::unistd::getpid();
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (prctl, getppid), no allocation, no lock.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(io::Error::from)?;
            // The launcher died before the line above: nobody would send it.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::other("the launcher is gone"));
            }
            Ok(())
        });
    }
    command.spawn()
}

/// Wait for ssh; once the launcher was interrupted (`caught`), at most
/// [`STOP_GRACE`], then kill it. `true` when it had to be killed.
fn wait_bounded(
    child: &mut std::process::Child,
    caught: &OnceLock<Signal>,
) -> (io::Result<std::process::ExitStatus>, bool) {
    let mut since: Option<Instant> = None;
    let mut killed = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Ok(status), killed),
            Ok(None) => {}
            Err(error) => return (Err(error), killed),
        }
        if caught.get().is_some() {
            let since = *since.get_or_insert_with(Instant::now);
            if !killed && since.elapsed() >= STOP_GRACE {
                let _ = child.kill();
                killed = true;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Put the local terminal back after the console's session ended
/// abnormally (the remote console could not): the terminal modes recorded
/// before ssh started (raw mode off), then out of the alternate screen,
/// mouse capture, bracketed paste and focus reporting off, the cursor
/// shown.
fn restore_local_terminal(saved: Option<&nix::sys::termios::Termios>) {
    if let Some(saved) = saved {
        let _ =
            nix::sys::termios::tcsetattr(io::stdin(), nix::sys::termios::SetArg::TCSANOW, saved);
    }
    let _ = crossterm::execute!(
        io::stdout(),
        crossterm::event::DisableMouseCapture,
        crossterm::event::DisableBracketedPaste,
        crossterm::event::DisableFocusChange,
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// The "needs a terminal" refusal, with the command to use instead built
/// from what was given (target, `--ssh-config`, `--remote-bin`), quoted.
fn needs_a_terminal(plan: &Plan) -> String {
    let mut words = vec![
        "stackless-tui".to_owned(),
        "--controller".to_owned(),
        format!("ssh://{}", plan.target.destination()),
    ];
    if let Some(config) = &plan.ssh_config {
        words.push("--ssh-config".to_owned());
        words.push(config.to_string_lossy().into_owned());
    }
    if plan.remote_bin != DEFAULT_REMOTE_BIN {
        words.push("--remote-bin".to_owned());
        words.push(plan.remote_bin.clone());
    }
    let command = sanitize_short(&shell_words::join(&words), 600);
    format!(
        "the console needs a terminal (stdin and stdout are not both a TTY), also when it runs \
         on {host}. For scripts and cron use `{command} snapshot` or `{command} reap --once`.",
        host = plan.target.host
    )
}

/// SIGTERM, SIGHUP and SIGINT caught on a one-worker tokio runtime
/// ([`Signals::register`]), then acted on ([`Signals::watch`]) until the
/// runtime is shut down.
struct Signals {
    runtime: tokio::runtime::Runtime,
    streams: Vec<(tokio::signal::unix::Signal, Signal)>,
}

impl Signals {
    /// Catch the signals from now on. `None` (they keep their default
    /// action) when the runtime or a handler cannot be made.
    fn register() -> Option<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ssh-signals")
            .enable_all()
            .build()
            .ok()?;
        let streams = {
            let _context = runtime.enter();
            [
                (SignalKind::terminate(), Signal::SIGTERM),
                (SignalKind::hangup(), Signal::SIGHUP),
                (SignalKind::interrupt(), Signal::SIGINT),
            ]
            .into_iter()
            .map(|(kind, sig)| signal(kind).map(|stream| (stream, sig)))
            .collect::<Result<Vec<_>, _>>()
            .ok()?
        };
        Some(Self { runtime, streams })
    }

    /// On every caught signal (one caught before this is held): keep the
    /// first in `caught`; the console's and `snapshot --follow`'s ssh
    /// (`pid`) gets the signal (it closes the connection: the console gives
    /// the terminal back, the remote stream stops at its next write); a
    /// headless command's or `serve --stdio`'s `pipe` is closed (the remote
    /// pass stops, the agent stops as at the end of its stdin; their last
    /// lines still come back). The runtime returned keeps doing so until
    /// it is shut down.
    fn watch(
        self,
        pid: u32,
        mode: Mode,
        pipe: Arc<Mutex<Option<std::process::ChildStdin>>>,
        caught: Arc<OnceLock<Signal>>,
    ) -> tokio::runtime::Runtime {
        let target = i32::try_from(pid).ok().map(nix::unistd::Pid::from_raw);
        for (mut stream, sig) in self.streams {
            let (pipe, caught) = (Arc::clone(&pipe), Arc::clone(&caught));
            self.runtime.spawn(async move {
                while stream.recv().await.is_some() {
                    let _ = caught.set(sig);
                    match (mode, target) {
                        (Mode::Console | Mode::Follow, Some(target)) => {
                            let _ = nix::sys::signal::kill(target, sig);
                        }
                        (Mode::Console | Mode::Follow, None) => {}
                        (Mode::Headless | Mode::Serve, _) => {
                            pipe.lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .take();
                        }
                    }
                }
            });
        }
        self.runtime
    }
}

/// `serve --stdio`'s commands: copy the local stdin to ssh's (`pipe`) as
/// it comes, each read passed on at once, then close ssh's stdin at the
/// local stdin's end (or error), so the remote agent sees the end of its
/// stdin and stops (docs/protocol.md "Stopping"). Ends at once when the
/// pipe was closed (a signal: [`Signals::watch`]) or ssh is gone.
fn copy_stdin(pipe: &Mutex<Option<std::process::ChildStdin>>) {
    let lock = || {
        pipe.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let mut stdin = io::stdin().lock();
    let mut buf = [0u8; 8192];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut guard = lock();
        let Some(to_ssh) = guard.as_mut() else {
            return;
        };
        if to_ssh
            .write_all(&buf[..n])
            .and_then(|()| to_ssh.flush())
            .is_err()
        {
            break;
        }
    }
    lock().take();
}

/// Copy ssh's stderr to ours as it comes; return its last [`TAIL_BYTES`].
fn pass_through(mut stderr: std::process::ChildStderr) -> Vec<u8> {
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let _ = io::stderr().write_all(&buf[..n]);
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > TAIL_BYTES {
                    tail.drain(..tail.len() - TAIL_BYTES);
                }
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    tail
}

/// Print `stackless-tui: {message}` and exit with `code`.
fn fail(message: &str, code: u8) -> ExitCode {
    let _ = writeln!(io::stderr(), "stackless-tui: {message}");
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn decide(args: &[&str], env: Option<&str>) -> Result<Option<Plan>, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let cli = Cli::parse_from(&args);
        plan(&cli, &args, env.map(str::to_owned), &[])
    }

    #[test]
    fn who_goes_remote() {
        let plan = decide(
            &[
                "stackless-tui",
                "--controller",
                "ssh://h",
                "snapshot",
                "--json",
            ],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(plan.mode, Mode::Headless);
        assert_eq!(plan.remote_bin, "stackless-tui");
        assert_eq!(plan.forwarded, ["snapshot", "--json"]);
        let plan = decide(&["stackless-tui"], Some("ssh://u@h"))
            .unwrap()
            .unwrap();
        assert_eq!(plan.mode, Mode::Console);
        assert_eq!(plan.target.destination(), "u@h");
        // stackless ignores the variable beside a local state path; so do we.
        assert_eq!(
            decide(&["stackless-tui", "--state", "/s.db"], Some("h")),
            Ok(None)
        );
        assert_eq!(decide(&["stackless-tui", "--demo"], Some("h")), Ok(None));
        assert_eq!(decide(&["stackless-tui"], Some("")), Ok(None));
        assert_eq!(decide(&["stackless-tui", "man"], Some("h")), Ok(None));
        assert_eq!(
            decide(&["stackless-tui", "--controller", "h", "man"], None),
            Ok(None)
        );
        // The remote side never hops again.
        assert_eq!(
            decide(&["stackless-tui", "--reached-as", "h"], Some("h")),
            Ok(None)
        );
        assert_eq!(
            decide(&["stackless-tui", "--reached-as", "h;rm"], None),
            Err("--reached-as \"h;rm\": not a host name stackless accepts".to_owned())
        );
        assert!(
            decide(
                &["stackless-tui", "--reached-as", "h", "--controller", "h"],
                None
            )
            .is_err()
        );
    }

    /// The protocol's streams get their own modes (the local stdin copied
    /// through for `serve --stdio`; none read for `snapshot --follow`) and
    /// exactly this argv: `-T`, batch mode, host key checking, every
    /// remote word quoted.
    #[test]
    fn streams_go_remote_in_their_own_modes() {
        let args = [
            "stackless-tui",
            "--controller",
            "ssh://deploy@fleet-1",
            "--ssh-config",
            "/my ssh/config",
            "--remote-bin",
            "/opt/st/stackless-tui",
            "--state",
            "/srv/it's/state.db",
        ];
        let serve = decide(&[&args[..], &["serve", "--stdio"]].concat(), None)
            .unwrap()
            .unwrap();
        assert_eq!(serve.mode, Mode::Serve);
        let follow = decide(&[&args[..], &["snapshot", "--follow"]].concat(), None)
            .unwrap()
            .unwrap();
        assert_eq!(follow.mode, Mode::Follow);
        let once = decide(&[&args[..], &["snapshot", "--json"]].concat(), None)
            .unwrap()
            .unwrap();
        assert_eq!(once.mode, Mode::Headless);
        let argv = |plan: &Plan| {
            plan.ssh_args()
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        let head = [
            "-F",
            "/my ssh/config",
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "ConnectTimeout=10",
            "--",
            "deploy@fleet-1",
            "/opt/st/stackless-tui",
            "--reached-as",
            "fleet-1",
            "--state",
            "'/srv/it'\\''s/state.db'",
        ];
        assert_eq!(argv(&serve), [&head[..], &["serve", "--stdio"]].concat());
        assert_eq!(
            argv(&follow),
            [&head[..], &["snapshot", "--follow"]].concat()
        );
    }

    #[test]
    fn refusals_name_the_source() {
        assert_eq!(
            decide(&["stackless-tui", "--controller", "ssh://host;rm"], None),
            Err(format!(
                "--controller \"ssh://host;rm\": {}",
                plan::TARGET_RULE
            ))
        );
        assert_eq!(
            decide(&["stackless-tui"], Some("ssh://user@")),
            Err(format!(
                "STACKLESS_CONTROLLER \"ssh://user@\": {}",
                plan::TARGET_RULE
            ))
        );
        assert_eq!(
            decide(
                &["stackless-tui", "--controller", "h", "--remote-bin=-x"],
                None
            ),
            Err(
                "--remote-bin \"-x\" starts with '-': name the stackless-tui program on h"
                    .to_owned()
            )
        );
    }
}
