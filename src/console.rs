//! The console's wiring: flags → store → background threads (watcher, reaper,
//! helper supervisor) → one event channel → one render loop. The terminal is
//! restored on every way out: normal quit, Ctrl-C, SIGTERM/SIGHUP/SIGINT, and
//! a panic in any thread.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Parser as _;
use color_eyre::eyre::{Result, WrapErr as _};
use futures::StreamExt as _;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::{Cli, DEFAULT_DOWN_CMD, Sub};
use crate::event::{Actor, Event, EventReceiver, EventSender};
use crate::model::Generation;
use crate::model::time::unix_now;
use crate::reaper::{DownCommand, InFlight, Intent, Reaper, ReaperConfig};
use crate::store::probe::SysinfoProbe;
use crate::store::{Access, Store, StoreError};
use crate::supervisor::{HelperConfig, HelperHandle};
use crate::ui::{App, AppConfig, Command};

/// How long the helper gets between TERM and KILL when the console quits.
pub const HELPER_STOP_GRACE: Duration = Duration::from_secs(3);
/// The demo's reaper tick.
pub const DEMO_TICK: Duration = Duration::from_secs(5);

/// Exit status for a usage or store error (the terminal is left untouched).
pub const EXIT_USAGE: u8 = 2;

/// The binary's entry point.
#[must_use]
pub fn main() -> ExitCode {
    let _ = color_eyre::install();
    let cli = Cli::parse();
    match &cli.command {
        Some(Sub::DemoDown { state, name, .. }) => return crate::demo::down::run(state, name),
        Some(Sub::DemoHelper) => return crate::demo::helper::run(),
        None => {}
    }
    let setup = match prepare(&cli) {
        Ok(setup) => setup,
        Err(message) => {
            let _ = writeln!(io::stderr(), "stackless-tui: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match run(setup) {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => {
            let _ = writeln!(io::stderr(), "{report:?}");
            ExitCode::FAILURE
        }
    }
}

/// Everything decided before the terminal is touched.
struct Setup {
    path: PathBuf,
    access: Access,
    reaper: Option<ReaperConfig>,
    action: ReaperConfig,
    helper: Option<HelperConfig>,
    app: AppConfig,
    /// Keeps the demo's temporary directory alive until exit.
    _demo_dir: Option<tempfile::TempDir>,
}

/// Resolve the store, the teardown command and the helper; every failure is
/// a one-paragraph message for exit status 2.
fn prepare(cli: &Cli) -> Result<Setup, String> {
    let mut demo_dir = None;
    let (path, access, store) = if cli.demo {
        let dir = tempfile::Builder::new()
            .prefix("stackless-tui-demo-")
            .tempdir()
            .map_err(|e| format!("cannot create the demo's temporary directory: {e}"))?;
        let path = dir.path().join("state.db");
        crate::demo::seed(&path, unix_now(), &own_holder())
            .map_err(|e| format!("cannot seed the demo store at {}: {e}", path.display()))?;
        let store = Store::open(&path, Access::ReadWrite).map_err(|e| e.to_string())?;
        demo_dir = Some(dir);
        (path, Access::ReadWrite, store)
    } else {
        if let Ok(url) = std::env::var("STACKLESS_STATE_URL")
            && !url.is_empty()
        {
            {
                return Err(StoreError::RemoteUnsupported(
                    crate::model::text::sanitize(&url).into_owned(),
                )
                .to_string());
            }
        }
        let access = if cli.read_only {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        };
        if let Some(path) = &cli.state {
            let store = Store::open(path, access).map_err(|e| e.to_string())?;
            (path.clone(), access, store)
        } else {
            let path = crate::store::default_path(
                std::env::var("XDG_STATE_HOME").ok().as_deref(),
                std::env::var("HOME").ok().as_deref(),
            )
            .ok_or("cannot find the default stackless store: neither XDG_STATE_HOME nor HOME is an absolute path. Pass --state PATH.")?;
            let store = if access == Access::ReadOnly {
                Store::open(&path, access)
            } else {
                // stackless creates its store on first run; so does this
                // console at the default path (never at a --state path).
                Store::open_or_create(&path)
            }
            .map_err(|e| e.to_string())?;
            (path, access, store)
        }
    };
    let generation = store.generation();
    let state_dir = store.state_dir();
    drop(store);

    let down = if cli.demo {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
        DownCommand::from_argv(vec![
            exe.display().to_string(),
            "demo-down".into(),
            "--state".into(),
            path.display().to_string(),
            "{name}".into(),
            "--json".into(),
        ])
    } else {
        DownCommand::parse(&cli.down_cmd)
    }
    .map_err(|e| e.to_string())?;
    let tick = if cli.demo && cli.tick == Duration::from_secs(60) {
        DEMO_TICK
    } else {
        cli.tick
    };
    let action = ReaperConfig {
        down,
        tick,
        down_timeout: cli.down_timeout,
        dry_run: cli.dry_run,
    };
    let reaper_off = reaper_off_reason(cli, access, generation);
    let reaper = reaper_off.is_none().then(|| action.clone());
    let reaper_line = match &reaper_off {
        Some(why) => format!("reaper: off ({why})"),
        None if cli.dry_run => format!(
            "reaper: every {} (dry run)",
            humantime::format_duration(tick)
        ),
        None => format!("reaper: every {}", humantime::format_duration(tick)),
    };

    let helper_argv = if cli.demo && cli.helper.is_none() {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
        Some(vec![exe.display().to_string(), "demo-helper".into()])
    } else {
        match &cli.helper {
            Some(cmd) => {
                let argv = shell_words::split(cmd)
                    .map_err(|e| format!("--helper cannot be split into arguments: {e}"))?;
                if argv.is_empty() {
                    return Err("--helper is empty".into());
                }
                Some(argv)
            }
            None => None,
        }
    };
    let helper = match (helper_argv, access) {
        (Some(argv), Access::ReadWrite) => Some(HelperConfig {
            argv,
            roles_dir: crate::supervisor::roles_dir(&state_dir),
            restart: succession::supervision::Restart::default(),
            grace: Duration::from_secs(15),
        }),
        _ => None,
    };
    let helper_line = match (&helper, &cli.helper, access) {
        (Some(h), _, _) => format!(
            "helper: {}",
            Path::new(&h.argv[0])
                .file_name()
                .map_or_else(|| h.argv[0].clone(), |n| n.to_string_lossy().into_owned())
                + if cli.demo && cli.helper.is_none() {
                    " demo-helper"
                } else {
                    ""
                }
        ),
        (None, Some(_), Access::ReadOnly) => "helper: off (read-only)".into(),
        _ => "helper: none".into(),
    };
    let write_keys = if access == Access::ReadOnly {
        Err("the store is open read-only (--read-only): r and d are off".to_owned())
    } else if !generation.allows_write_keys() {
        Err(format!(
            "schema v{} is older than this console: r and d are off until stackless upgrades the store",
            generation.user_version
        ))
    } else {
        Ok(())
    };
    let app = AppConfig {
        store_label: if cli.demo {
            format!("demo store {}", path.display())
        } else {
            path.display().to_string()
        },
        reaper_line,
        helper_line,
        write_keys,
    };
    let _ = DEFAULT_DOWN_CMD;
    Ok(Setup {
        path,
        access,
        reaper,
        action,
        helper,
        app,
        _demo_dir: demo_dir,
    })
}

fn reaper_off_reason(cli: &Cli, access: Access, generation: Generation) -> Option<String> {
    if access == Access::ReadOnly {
        Some("read-only".into())
    } else if cli.no_reaper {
        Some("--no-reaper".into())
    } else if !generation.allows_reaper() {
        Some(format!("schema v{}", generation.user_version))
    } else {
        None
    }
}

/// This process as a lock holder (the demo's "locked by a live process").
fn own_holder() -> crate::demo::LiveHolder {
    let pid = std::process::id();
    let mut system = sysinfo::System::new();
    let spid = sysinfo::Pid::from_u32(pid);
    system.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[spid]), true);
    crate::demo::LiveHolder {
        pid,
        start_time: system.process(spid).map_or(0, sysinfo::Process::start_time),
        host: sysinfo::System::host_name().unwrap_or_default(),
    }
}

type Term = Terminal<CrosstermBackend<io::Stdout>>;

fn enter_terminal() -> Result<Term> {
    crossterm::terminal::enable_raw_mode().wrap_err("cannot switch the terminal to raw mode")?;
    crossterm::execute!(
        io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        crossterm::cursor::Hide
    )
    .wrap_err("cannot enter the alternate screen")?;
    Terminal::new(CrosstermBackend::new(io::stdout())).wrap_err("cannot start the terminal backend")
}

/// Put the terminal back as it was. Safe to call more than once, from any
/// thread (the panic hook calls it).
pub fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        io::stdout(),
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

fn run(setup: Setup) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let inflight = InFlight::default();
    let helper_handle = Arc::new(HelperHandle::default());

    // A panic in any thread: restore the terminal, stop the helper, print
    // color-eyre's report, exit non-zero.
    let previous = std::panic::take_hook();
    let hook_helper = Arc::clone(&helper_handle);
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        hook_helper.stop(Duration::from_secs(1));
        previous(info);
        std::process::exit(101);
    }));

    crate::store::watcher::spawn(
        setup.path.clone(),
        setup.access,
        tx.clone(),
        Arc::clone(&stop),
    )
    .wrap_err("cannot start the store watcher")?;
    if let Some(config) = setup.reaper.clone() {
        let store = Store::open(&setup.path, Access::ReadWrite)
            .wrap_err("cannot open the store for the reaper")?;
        let reaper = Reaper::new(
            store,
            Box::new(SysinfoProbe::new()),
            config,
            inflight.clone(),
            runtime.handle().clone(),
            Box::new(unix_now),
            activity_sink(tx.clone()),
        );
        crate::reaper::runner::spawn(reaper, Arc::clone(&stop))
            .wrap_err("cannot start the reaper")?;
    }
    if let Some(config) = setup.helper.clone() {
        crate::supervisor::thread::spawn(config, tx.clone(), Arc::clone(&helper_handle))
            .wrap_err("cannot start the helper supervisor")?;
    }

    let mut terminal = enter_terminal()?;
    let app = App::new(setup.app.clone(), unix_now());
    let context = ActionContext {
        path: setup.path.clone(),
        config: setup.action.clone(),
        inflight: inflight.clone(),
        runtime: runtime.handle().clone(),
        tx: tx.clone(),
    };
    let outcome = runtime.block_on(render_loop(&mut terminal, app, rx, &context));

    stop.store(true, Ordering::SeqCst);
    let stopped_helper = helper_handle.stop(HELPER_STOP_GRACE);
    restore_terminal();
    let running = inflight.names();
    if !running.is_empty() {
        let names: Vec<String> = running
            .iter()
            .map(|n| crate::model::text::sanitize(n).into_owned())
            .collect();
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: left {} teardown(s) to finish on their own: {} (each is a `down` in its own process group holding its own lock)",
            names.len(),
            names.join(", ")
        );
    }
    if stopped_helper {
        let _ = writeln!(io::stderr(), "stackless-tui: stopped the helper");
    }
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome
}

fn activity_sink(tx: EventSender) -> Box<dyn FnMut(crate::event::Activity) + Send> {
    Box::new(move |activity| {
        let _ = tx.send(Event::Activity(activity));
    })
}

/// What an operator key needs to act on its own thread.
struct ActionContext {
    path: PathBuf,
    config: ReaperConfig,
    inflight: InFlight,
    runtime: tokio::runtime::Handle,
    tx: EventSender,
}

impl ActionContext {
    /// Run `r` or `d` on a thread of its own, with its own store connection,
    /// through the reaper's own path (re-check, teardown, record).
    fn spawn(
        &self,
        instance: crate::model::Instance,
        attempt: Option<crate::model::ReapAttempt>,
        intent: Intent,
    ) {
        let path = self.path.clone();
        let config = self.config.clone();
        let inflight = self.inflight.clone();
        let runtime = self.runtime.clone();
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("operator-action".into())
            .spawn(move || {
                let store = match Store::open(&path, Access::ReadWrite) {
                    Ok(store) => store,
                    Err(error) => {
                        let _ = tx.send(Event::Activity(crate::event::Activity::new(
                            unix_now(),
                            Actor::Operator,
                            &instance.name,
                            crate::event::ActivityKind::Error,
                            error.to_string(),
                        )));
                        return;
                    }
                };
                let mut reaper = Reaper::new(
                    store,
                    Box::new(SysinfoProbe::new()),
                    config,
                    inflight,
                    runtime,
                    Box::new(unix_now),
                    activity_sink(tx),
                );
                reaper.reap(&instance, attempt.as_ref(), Actor::Operator, intent);
            });
        if let Err(error) = spawned {
            let _ = self.tx.send(Event::Activity(crate::event::Activity::new(
                unix_now(),
                Actor::Operator,
                "",
                crate::event::ActivityKind::Error,
                format!("cannot start the action: {error}"),
            )));
        }
    }
}

async fn render_loop(
    terminal: &mut Term,
    mut app: App,
    mut rx: EventReceiver,
    context: &ActionContext,
) -> Result<()> {
    let mut input = crossterm::event::EventStream::new();
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sigterm = signal(SignalKind::terminate()).wrap_err("cannot watch SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).wrap_err("cannot watch SIGHUP")?;
    let mut sigint = signal(SignalKind::interrupt()).wrap_err("cannot watch SIGINT")?;
    terminal.draw(|frame| crate::ui::draw(frame, &app))?;
    loop {
        let event = tokio::select! {
            Some(event) = rx.recv() => event,
            Some(Ok(event)) = input.next() => Event::Input(event),
            _ = ticker.tick() => Event::Tick,
            _ = sigterm.recv() => Event::Terminate("SIGTERM"),
            _ = sighup.recv() => Event::Terminate("SIGHUP"),
            _ = sigint.recv() => Event::Terminate("SIGINT"),
            else => break,
        };
        handle(&mut app, event, context);
        // Apply whatever else is already queued before drawing once.
        while let Ok(event) = rx.try_recv() {
            handle(&mut app, event, context);
        }
        if app.quitting() {
            break;
        }
        terminal.draw(|frame| crate::ui::draw(frame, &app))?;
    }
    Ok(())
}

fn handle(app: &mut App, event: Event, context: &ActionContext) {
    match app.handle(event, unix_now()) {
        Some(Command::Reap { instance }) => {
            let attempt = app.snapshot().reap_attempt(&instance.name).cloned();
            context.spawn(instance, attempt, Intent::Reap);
        }
        Some(Command::TearDown { instance }) => {
            let attempt = app.snapshot().reap_attempt(&instance.name).cloned();
            context.spawn(instance, attempt, Intent::TearDown);
        }
        Some(Command::Quit) | None => {}
    }
}
