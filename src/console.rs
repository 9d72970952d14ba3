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

use color_eyre::eyre::{Result, WrapErr as _};
use futures::StreamExt as _;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};

use std::sync::Mutex;

use succession::{ClaimError, Identity, Occupancy, Record, Role, Run, Tenant};

use crate::audit::{self, AuditLog};
use crate::cli::{Cli, CliError, DEFAULT_DOWN_CMD, Sub};
use crate::event::{Activity, ActivityKind, Actor, Event, EventReceiver, EventSender, RoleState};
use crate::model::Generation;
use crate::model::time::unix_now;
use crate::reaper::runner::Sink;
use crate::reaper::{DownCommand, InFlight, Intent, Reaper, ReaperConfig, Teardowns};
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
    let config = crate::cli::default_config_path(
        std::env::var("XDG_CONFIG_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    );
    let cli = match crate::cli::parse_with_config(std::env::args_os().collect(), config, |path| {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            // Absent, or in a directory this user cannot look into (HOME of
            // another user under sudo): there is no config file to honour.
            Err(_) if std::fs::metadata(path).is_err() => Ok(None),
            Err(e) => Err(e),
        }
    }) {
        Ok(cli) => cli,
        Err(CliError::Clap(error)) => {
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
        Err(CliError::Config(message)) => {
            let _ = writeln!(io::stderr(), "stackless-tui: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match &cli.command {
        Some(Sub::DemoDown { name, .. }) => {
            let Some(state) = &cli.state else {
                let _ = writeln!(io::stderr(), "stackless-tui: demo-down needs --state");
                return ExitCode::from(EXIT_USAGE);
            };
            return crate::demo::down::run(state, name);
        }
        Some(Sub::DemoHelper) => return crate::demo::helper::run(),
        Some(Sub::Snapshot { json, now }) => return crate::headless::snapshot(&cli, *json, *now),
        Some(Sub::Reap { .. }) => return crate::headless::reap_once(&cli),
        Some(Sub::Completions { shell }) => {
            clap_complete::generate(
                *shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "stackless-tui",
                &mut io::stdout(),
            );
            return ExitCode::SUCCESS;
        }
        Some(Sub::Man) => {
            return match clap_mangen::Man::new(<Cli as clap::CommandFactory>::command())
                .render(&mut io::stdout())
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    let _ = writeln!(io::stderr(), "stackless-tui: {error}");
                    ExitCode::FAILURE
                }
            };
        }
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

/// Open the store the flags name: `--state PATH` (which must exist), else
/// stackless's default path (created with the v4 schema on first run, as
/// stackless does, unless `access` is read-only). Refuses
/// `STACKLESS_STATE_URL` (the remote fleet plane). Errors are one paragraph
/// for exit status 2.
///
/// # Errors
/// The message to print.
pub fn open_store(cli: &Cli, access: Access) -> Result<(PathBuf, Store), String> {
    if let Ok(url) = std::env::var("STACKLESS_STATE_URL")
        && !url.is_empty()
    {
        return Err(
            StoreError::RemoteUnsupported(crate::model::text::sanitize(&url).into_owned())
                .to_string(),
        );
    }
    if let Some(path) = &cli.state {
        let store = Store::open(path, access).map_err(|e| e.to_string())?;
        return Ok((path.clone(), store));
    }
    let path = crate::store::default_path(
        std::env::var("XDG_STATE_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )
    .ok_or("cannot find the default stackless store: neither XDG_STATE_HOME nor HOME is an absolute path. Pass --state PATH.")?;
    let store = if access == Access::ReadOnly {
        Store::open(&path, access)
    } else {
        // stackless creates its store on first run; so does this console at
        // the default path (never at a --state path).
        Store::open_or_create(&path)
    }
    .map_err(|e| e.to_string())?;
    Ok((path, store))
}

/// Everything decided before the terminal is touched.
struct Setup {
    log_level: crate::cli::LogLevel,
    path: PathBuf,
    state_dir: PathBuf,
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
        let access = if cli.read_only {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        };
        let (path, store) = open_store(cli, access)?;
        (path, access, store)
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
        concurrency: usize::from(cli.reap_concurrency),
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
    // Last of the checks, so a bad store or flag is reported as such; and
    // before anything runs, so a console without a terminal changes nothing.
    use std::io::IsTerminal as _;
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        return Err(
            "the console needs a terminal (stdin and stdout are not both a TTY). \
            For scripts and cron use `stackless-tui snapshot` or `stackless-tui reap --once`; \
            over ssh, use `ssh -t`."
                .into(),
        );
    }
    Ok(Setup {
        log_level: cli.log_level,
        path,
        state_dir,
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

/// Frames go out in one write each (stdout's own buffer is 1 KiB, which
/// would split a frame into many writes and tear it on a slow terminal).
type Term = Terminal<CrosstermBackend<io::BufWriter<io::Stdout>>>;

/// `true` while the TUI may use the terminal. The panic hook turns it off
/// (under this lock) before restoring the terminal, so no other thread
/// enters the alternate screen or draws a frame over the panic report.
static TERMINAL_GATE: Mutex<bool> = Mutex::new(true);

/// Run `f` with the terminal, unless a panic has taken it back (`None`).
fn with_terminal<R>(f: impl FnOnce() -> R) -> Option<R> {
    let gate = TERMINAL_GATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*gate {
        return None;
    }
    let result = f();
    drop(gate);
    Some(result)
}

/// For the panic hook: close the gate and restore the terminal. Waits a
/// moment for a frame being drawn; when the panicking thread is the one
/// drawing (it holds the gate), restores without it.
fn close_terminal_for_panic() {
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    loop {
        match TERMINAL_GATE.try_lock() {
            Ok(mut gate) => {
                *gate = false;
                restore_terminal();
                return;
            }
            Err(std::sync::TryLockError::Poisoned(poisoned)) => {
                *poisoned.into_inner() = false;
                restore_terminal();
                return;
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                if std::time::Instant::now() >= deadline {
                    restore_terminal();
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

fn enter_terminal() -> Result<Term> {
    crossterm::terminal::enable_raw_mode().wrap_err("cannot switch the terminal to raw mode")?;
    crossterm::execute!(
        io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        crossterm::event::EnableMouseCapture,
        crossterm::cursor::Hide
    )
    .wrap_err("cannot enter the alternate screen")?;
    Terminal::new(CrosstermBackend::new(io::BufWriter::with_capacity(
        1 << 16,
        io::stdout(),
    )))
    .wrap_err("cannot start the terminal backend")
}

/// The reaper's lock-liveness probe: `kill(pid, 0)` before asking sysinfo,
/// as the watcher does (a dead pid costs microseconds, not a /proc walk).
fn checked_probe() -> Box<dyn crate::store::probe::HostProbe + Send> {
    Box::new(crate::store::probe::CheckedProbe::new(Box::new(
        SysinfoProbe::new(),
    )))
}

/// Restores the terminal when dropped (an early `?` return included).
struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Put the terminal back as it was. Safe to call more than once, from any
/// thread (the panic hook calls it).
pub fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        io::stdout(),
        crossterm::event::DisableMouseCapture,
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
    init_log(&setup.state_dir, setup.log_level);
    tracing::info!(store = %setup.path.display(), pid = std::process::id(), "console started");

    // The audit trail: only a console that may write keeps one.
    let audit = if setup.access == Access::ReadWrite {
        AuditLog::open(&audit::default_path(&setup.state_dir), audit::DEFAULT_CAP)
            .map(|log| Arc::new(Mutex::new(log)))
            .map_err(|e| {
                let _ = tx.send(Event::Activity(Activity::new(
                    unix_now(),
                    Actor::Reaper,
                    "",
                    ActivityKind::Error,
                    format!("audit trail unavailable: {e}"),
                )));
            })
            .ok()
    } else {
        None
    };
    let sink: Sink = {
        let tx = tx.clone();
        let audit = audit.clone();
        Arc::new(move |activity: Activity| {
            if let Some(log) = &audit {
                let _ = audit::record(log, &activity);
            }
            log_activity(&activity);
            let _ = tx.send(Event::Activity(activity));
        })
    };
    let teardowns = Teardowns {
        path: setup.path.clone(),
        config: setup.action.clone(),
        inflight: inflight.clone(),
        runtime: runtime.handle().clone(),
        clock: Arc::new(unix_now),
        report: Arc::clone(&sink),
    };
    if let Some(log) = &audit {
        let _ = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .console(unix_now(), "start", &format!("pid {}", std::process::id()));
    }

    // A panic in any thread: restore the terminal, stop the helper, print
    // color-eyre's report, exit non-zero.
    let previous = std::panic::take_hook();
    let hook_helper = Arc::clone(&helper_handle);
    let hook_audit = audit.clone();
    std::panic::set_hook(Box::new(move |info| {
        close_terminal_for_panic();
        hook_helper.stop(Duration::from_secs(1));
        if let Some(log) = &hook_audit
            && let Ok(mut log) = log.try_lock()
        {
            let _ = log.console(unix_now(), "stop", &format!("panic: {info}"));
        }
        previous(info);
        std::process::exit(101);
    }));

    // The terminal first: nothing below (watcher, reaper, helper) may act
    // before the console can show what it does.
    let Some(entered) = with_terminal(enter_terminal) else {
        // A background thread panicked already; its hook exits the process.
        loop {
            std::thread::park();
        }
    };
    let mut terminal = entered?;
    // Whatever goes wrong from here on, the terminal is given back.
    let restore_guard = RestoreOnDrop;

    crate::store::watcher::spawn(
        setup.path.clone(),
        setup.access,
        tx.clone(),
        Arc::clone(&stop),
    )
    .wrap_err("cannot start the store watcher")?;

    // The reaper and the helper run only in the one active console per
    // store (succession role `console`); others stand by.
    let dry_run = setup.action.dry_run;
    if dry_run && setup.reaper.is_some() {
        // A dry run changes nothing, so it needs no role and blocks nobody.
        let store =
            Store::open(&setup.path, Access::ReadWrite).wrap_err("cannot open the store")?;
        let reaper = Reaper::new(store, checked_probe(), teardowns.clone());
        crate::reaper::runner::spawn(reaper, vec![Arc::clone(&stop)])
            .wrap_err("cannot start the reaper")?;
    }
    let run_reaper = setup.reaper.is_some() && !dry_run;
    if run_reaper || setup.helper.is_some() {
        let leader = Leader {
            roles_dir: crate::supervisor::roles_dir(&setup.state_dir),
            path: setup.path.clone(),
            run_reaper,
            helper: setup.helper.clone(),
            teardowns: teardowns.clone(),
            tx: tx.clone(),
            stop: Arc::clone(&stop),
            helper_handle: Arc::clone(&helper_handle),
        };
        std::thread::Builder::new()
            .name("console-role".into())
            .spawn(move || leader.run())
            .wrap_err("cannot start the console role thread")?;
    }

    let app = App::new(setup.app.clone(), unix_now());
    let outcome = runtime.block_on(render_loop(
        &mut terminal,
        app,
        rx,
        &teardowns,
        audit.as_ref(),
    ));

    stop.store(true, Ordering::SeqCst);
    let stopped_helper = helper_handle.stop(HELPER_STOP_GRACE);
    restore_terminal();
    // Restored once, here: a second "leave the alternate screen" would move
    // the cursor back over the lines printed below.
    std::mem::forget(restore_guard);
    // The terminal may be gone (the window was closed): ratatui's own drop
    // would try to show the cursor and print the failure to a dead stderr.
    std::mem::forget(terminal);
    if setup._demo_dir.is_some() {
        // The demo's store is deleted on exit: let its (1.5 s) teardowns
        // finish first rather than pull the store from under them.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !inflight.names().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let running = inflight.names();
    let reason = outcome
        .as_ref()
        .map_or_else(|e| format!("error: {e}"), |why| (*why).to_owned());
    if let Some(log) = &audit {
        let detail = if running.is_empty() {
            reason
        } else {
            format!("{reason}; left running: {}", running.join(", "))
        };
        let _ = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .console(unix_now(), "stop", &detail);
    }
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
    tracing::info!("console stopped");
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome.map(|_| ())
}

/// Takes (or waits for) the succession role `console` for this store, then
/// starts the reaper and the helper supervisor.
struct Leader {
    roles_dir: PathBuf,
    path: PathBuf,
    run_reaper: bool,
    helper: Option<HelperConfig>,
    teardowns: Teardowns,
    tx: EventSender,
    stop: Arc<AtomicBool>,
    helper_handle: Arc<HelperHandle>,
}

/// The role this console claims to run the reaper and the helper.
pub const CONSOLE_ROLE: &str = "console";
/// The role a console claims to supervise the helper.
pub const SUPERVISOR_ROLE: &str = "helper-supervisor";
/// How often a standby console tries to take over.
pub const STANDBY_POLL: Duration = Duration::from_millis(500);

/// One role this console wants, and whether it holds it.
struct Wanted {
    role: Role,
    name: &'static str,
    held: Option<succession::Tenancy>,
    /// `(device, inode)` of the lock file when it was taken.
    lock_file: Option<(u64, u64)>,
    /// Stops what this role started (the reaper), if the role is lost.
    part_stop: Option<Arc<AtomicBool>>,
    last_holder: Option<Option<u32>>,
    last_error: Option<String>,
}

impl Wanted {
    fn new(roles_dir: &Path, name: &'static str) -> Self {
        Self {
            role: Role::new(roles_dir, name),
            name,
            held: None,
            lock_file: None,
            part_stop: None,
            last_holder: None,
            last_error: None,
        }
    }

    /// Try to take the role. `Ok(true)` when it was just taken; `Err(pid)`
    /// when another process holds it (its pid when its record says).
    fn try_take(&mut self, record: &Record) -> Result<bool, Option<u32>> {
        if self.held.is_some() {
            return Ok(false);
        }
        match self.role.claim(record) {
            Ok(tenancy) => {
                self.held = Some(tenancy);
                self.lock_file = lock_identity(self.role.lock_path());
                Ok(true)
            }
            Err(ClaimError::Occupied) => Err(match self.role.occupancy() {
                Ok(Occupancy::HeldBy(holder)) => Some(holder.tenant.pid),
                _ => None,
            }),
            Err(error) => {
                self.last_error = Some(format!("cannot take the {} role: {error}", self.name));
                Err(None)
            }
        }
    }
}

fn lock_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Wanted {
    /// Whether a held role's lock file was deleted or replaced (its
    /// directory removed and restored): the lock no longer excludes anyone,
    /// so the role is given up, what it started is stopped, and it is taken
    /// again (a new lock file) on the next round.
    fn lost(&mut self) -> bool {
        if self.held.is_none() || lock_identity(self.role.lock_path()) == self.lock_file {
            return false;
        }
        self.held = None;
        self.lock_file = None;
        if let Some(stop) = self.part_stop.take() {
            stop.store(true, Ordering::SeqCst);
        }
        true
    }
}

impl Leader {
    /// Take the roles this console needs and start each part once its role
    /// is held: the reaper needs `console`, the helper supervisor needs
    /// `helper-supervisor`. A console that runs neither (watch only,
    /// `--no-reaper`, `--dry-run`) takes no role and blocks nobody.
    fn run(self) {
        let record = Record::new(
            Identity::new(Run::mint(), crate::supervisor::COMPAT),
            Tenant::current(),
        );
        let mut reaper = self
            .run_reaper
            .then(|| Wanted::new(&self.roles_dir, CONSOLE_ROLE));
        let mut supervisor = self
            .helper
            .is_some()
            .then(|| Wanted::new(&self.roles_dir, SUPERVISOR_ROLE));
        while !self.stop.load(Ordering::SeqCst) {
            if let Some(wanted) = reaper.as_mut() {
                if wanted.lost() {
                    self.error(format!(
                        "the {} role's lock file was removed: reaper stopped, taking the role again",
                        wanted.name
                    ));
                }
                match wanted.try_take(&record) {
                    Ok(true) => {
                        let _ = self.tx.send(Event::Role(RoleState::Active));
                        wanted.part_stop = Some(self.start_reaper());
                    }
                    Ok(false) => {}
                    Err(pid) => {
                        if wanted.last_holder != Some(pid) {
                            wanted.last_holder = Some(pid);
                            let _ = self.tx.send(Event::Role(RoleState::Standby { pid }));
                        }
                    }
                }
                self.report_role_error(wanted);
            }
            if let Some(wanted) = supervisor.as_mut() {
                // The supervisor keeps running; the role is simply taken
                // again with a fresh lock file.
                let _ = wanted.lost();
                match wanted.try_take(&record) {
                    Ok(true) => self.start_supervisor(),
                    Ok(false) => {}
                    Err(pid) => {
                        if wanted.last_holder != Some(pid) {
                            wanted.last_holder = Some(pid);
                            let who = pid.map_or_else(
                                || "another console".to_owned(),
                                |p| format!("console pid {p}"),
                            );
                            let _ = self
                                .tx
                                .send(Event::Supervisor(crate::event::SupervisorNote {
                                    at: unix_now(),
                                    kind: crate::event::SupervisorKind::Occupied,
                                    text: format!("standby: the helper is supervised by {who}"),
                                    until: None,
                                }));
                        }
                    }
                }
                self.report_role_error(wanted);
            }
            std::thread::sleep(STANDBY_POLL);
        }
        // Dropping the tenancies gives the roles back.
        drop(reaper);
        drop(supervisor);
    }

    fn report_role_error(&self, wanted: &mut Wanted) {
        if let Some(text) = wanted.last_error.take() {
            self.error(text);
        }
    }

    /// Start the reaper; returns the flag that stops it when the role is
    /// lost (the console's own stop flag stops it too).
    fn start_reaper(&self) -> Arc<AtomicBool> {
        let stop = Arc::new(AtomicBool::new(false));
        match Store::open(&self.path, Access::ReadWrite) {
            Ok(store) => {
                let reaper = Reaper::new(store, checked_probe(), self.teardowns.clone());
                if let Err(error) = crate::reaper::runner::spawn(
                    reaper,
                    vec![Arc::clone(&stop), Arc::clone(&self.stop)],
                ) {
                    self.error(format!("cannot start the reaper: {error}"));
                }
            }
            Err(error) => self.error(format!("cannot open the store for the reaper: {error}")),
        }
        stop
    }

    fn start_supervisor(&self) {
        if let Some(config) = self.helper.clone()
            && let Err(error) = crate::supervisor::thread::spawn(
                config,
                self.tx.clone(),
                Arc::clone(&self.helper_handle),
            )
        {
            self.error(format!("cannot start the helper supervisor: {error}"));
        }
    }

    fn error(&self, text: String) {
        (self.teardowns.report)(Activity::new(
            unix_now(),
            Actor::Reaper,
            "",
            ActivityKind::Error,
            text,
        ));
    }
}

async fn render_loop(
    terminal: &mut Term,
    mut app: App,
    mut rx: EventReceiver,
    teardowns: &Teardowns,
    audit: Option<&audit::Shared>,
) -> Result<&'static str> {
    let mut input = crossterm::event::EventStream::new();
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sigterm = signal(SignalKind::terminate()).wrap_err("cannot watch SIGTERM")?;
    let mut sighup = signal(SignalKind::hangup()).wrap_err("cannot watch SIGHUP")?;
    let mut sigint = signal(SignalKind::interrupt()).wrap_err("cannot watch SIGINT")?;
    if !draw(terminal, &app)? {
        return Ok("terminal closed");
    }
    let mut why = "quit";
    let mut details = DetailReader {
        path: teardowns.path.clone(),
        store: None,
    };
    loop {
        crate::fault::inject("render");
        let event = tokio::select! {
            Some(event) = rx.recv() => event,
            Some(Ok(event)) = input.next() => Event::Input(event),
            _ = ticker.tick() => Event::Tick,
            _ = sigterm.recv() => Event::Terminate("SIGTERM"),
            _ = sighup.recv() => Event::Terminate("SIGHUP"),
            _ = sigint.recv() => Event::Terminate("SIGINT"),
            else => break,
        };
        if let Event::Terminate(signal) = &event {
            why = signal;
        }
        handle(&mut app, event, teardowns, audit, &mut details);
        // Apply whatever else is already queued before drawing once.
        while let Ok(event) = rx.try_recv() {
            handle(&mut app, event, teardowns, audit, &mut details);
        }
        if app.quitting() {
            break;
        }
        if !draw(terminal, &app)? {
            why = "terminal closed";
            break;
        }
    }
    Ok(why)
}

/// Draw one frame. `Ok(false)` when the terminal is gone (the window was
/// closed: writes fail with an I/O error), which ends the console like a
/// hang-up. While a panic is being reported, nothing is drawn and this
/// thread waits for the hook to end the process.
fn draw(terminal: &mut Term, app: &App) -> Result<bool> {
    match with_terminal(|| {
        terminal
            .draw(|frame| crate::ui::draw(frame, app))
            .map(|_| ())
    }) {
        None => loop {
            std::thread::park();
        },
        Some(Ok(())) => Ok(true),
        Some(Err(error)) => {
            tracing::warn!("terminal write failed: {error}; quitting");
            Ok(false)
        }
    }
}

/// Reads an instance's detail rows for the detail view, on a read-only
/// connection of its own with a short busy timeout (the render loop must not
/// stall behind another process's lock).
struct DetailReader {
    path: PathBuf,
    store: Option<Store>,
}

impl DetailReader {
    fn read(&mut self, name: &str) -> Result<Option<crate::store::detail::InstanceDetail>, String> {
        if self.store.is_none() {
            let store = Store::open(&self.path, Access::ReadOnly).map_err(|e| e.to_string())?;
            let _ = store.set_busy_timeout(Duration::from_millis(50));
            self.store = Some(store);
        }
        let Some(store) = self.store.as_mut() else {
            return Err("the store is not open".into());
        };
        store.instance_detail(name).map_err(|e| {
            self.store = None;
            e.to_string()
        })
    }
}

/// Log to `<state_dir>/stackless-tui/console.log` (stdout belongs to the
/// TUI). A log that cannot be opened is skipped: logging never stops the
/// console.
fn init_log(state_dir: &Path, level: crate::cli::LogLevel) {
    use crate::cli::LogLevel;
    let filter = match level {
        LogLevel::Off => return,
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
    };
    let path = state_dir.join("stackless-tui").join("console.log");
    let file = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
        });
    if let Ok(file) = file {
        let _ = tracing_subscriber::fmt()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_max_level(filter)
            .try_init();
    }
}

/// One activity in the log file, at a level that matches it: failures and
/// aborts warn, errors are errors, the rest is info.
fn log_activity(activity: &Activity) {
    let instance = crate::model::text::sanitize(&activity.instance);
    let detail = crate::model::text::sanitize(&activity.detail);
    let actor = activity.actor;
    let kind = activity.kind;
    match kind {
        ActivityKind::Error => tracing::error!(%actor, %instance, "{kind}: {detail}"),
        ActivityKind::Failed | ActivityKind::Aborted => {
            tracing::warn!(%actor, %instance, "{kind}: {detail}");
        }
        _ => tracing::info!(%actor, %instance, "{kind}: {detail}"),
    }
}

fn trace_event(event: &Event) {
    match event {
        Event::Supervisor(note) => match note.kind {
            crate::event::SupervisorKind::SpawnFailed => {
                tracing::error!("helper: {}", note.text);
            }
            crate::event::SupervisorKind::Exited => tracing::warn!("helper: {}", note.text),
            _ => tracing::info!("helper: {}", note.text),
        },
        Event::StoreHealth(crate::event::StoreHealth::Ok) => {
            tracing::info!("store: readable again")
        }
        Event::StoreHealth(crate::event::StoreHealth::Busy(since)) => {
            tracing::warn!("store: busy for {}s", since.elapsed().as_secs());
        }
        Event::StoreHealth(crate::event::StoreHealth::Error(message)) => {
            tracing::error!("store: {}", crate::model::text::sanitize(message));
        }
        Event::Role(role) => tracing::info!("console role: {role:?}"),
        Event::Terminate(signal) => tracing::info!("{signal} received: quitting"),
        Event::Snapshot(snapshot) => {
            tracing::debug!(instances = snapshot.instances.len(), "snapshot")
        }
        Event::Input(_) | Event::Tick | Event::Activity(_) => {}
    }
}

fn handle(
    app: &mut App,
    event: Event,
    teardowns: &Teardowns,
    audit: Option<&audit::Shared>,
    details: &mut DetailReader,
) {
    trace_event(&event);
    let command = app.handle(event, unix_now());
    for activity in app.drain_outbox() {
        log_activity(&activity);
        if let Some(log) = audit {
            let _ = audit::record(log, &activity);
        }
    }
    let (instance, intent) = match command {
        Some(Command::Reap { instance }) => (instance, Intent::Reap),
        Some(Command::TearDown { instance }) => (instance, Intent::TearDown),
        Some(Command::OpenDetail { name }) => {
            let result = details.read(&name);
            app.show_detail(&name, result);
            return;
        }
        Some(Command::Quit) | None => return,
    };
    let attempt = app.snapshot().reap_attempt(&instance.name).cloned();
    // Refusals (in flight, not DNS-safe) are reported by `spawn` itself.
    let _ = teardowns.spawn(instance, attempt, Actor::Operator, intent);
}
