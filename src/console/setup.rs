//! Everything the console decides before the terminal is touched: the store
//! (or the demo's), the teardown command, the reaper's and the helper's
//! configuration, and the header texts. Every failure is a
//! [`StartupError`] printed with exit status 2.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{Cli, DemoKind};
use crate::model::controller::ReaperChoice;
use crate::model::time::unix_now;
use crate::reaper::{DownCommand, ReaperConfig};
use crate::startup::{Create, StartupError, open_store, reaper_config};
use crate::store::{Access, Store};
use crate::supervisor::HelperConfig;
use crate::ui::{AppConfig, HelperMode, ReaperMode, TeardownInfo};

/// The demo's reaper tick (the default 60 s would keep a newcomer waiting).
pub(super) const DEMO_TICK: Duration = Duration::from_secs(5);

/// Everything decided before the terminal is touched.
pub(super) struct Setup {
    pub log_level: crate::cli::LogLevel,
    /// The store file.
    pub path: PathBuf,
    /// The directory holding it (stackless's `<state_dir>`).
    pub state_dir: PathBuf,
    pub access: Access,
    /// The background reaper's configuration; `None` when it is off.
    pub reaper: Option<ReaperConfig>,
    /// `--reaper` (with `--no-reaper`): whether the reaper stands by while
    /// the controller runs its lease reaper.
    pub choice: ReaperChoice,
    /// The configuration the keys' teardowns use (same command and limits).
    pub action: ReaperConfig,
    pub helper: Option<HelperConfig>,
    pub app: AppConfig,
    /// The teardown command for the `d` dialog, and whether its program
    /// was found (checked here, once: said at start, before any expiry).
    pub teardown: TeardownInfo,
    /// The stackless CLI `c` runs (`--stackless`, `STACKLESS_BIN`).
    pub stackless: std::ffi::OsString,
    /// The demo this console runs, if any (`--demo`).
    pub demo: Option<DemoKind>,
    /// Keeps the demo's temporary directory alive until exit.
    pub demo_dir: Option<crate::demo::DemoDir>,
    /// The zone log times are shown in: UTC with `--utc`, else the local
    /// one (`TZ` honoured; UTC when it cannot be read).
    pub zone: jiff::tz::TimeZone,
    /// Nothing was at stackless's default path and an empty store was
    /// created there: said once in the Activity pane.
    pub created: bool,
    /// `--metrics-file`: written each reaper tick (`super::metrics_file`).
    pub metrics_file: Option<PathBuf>,
}

/// What the console runs behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Front {
    /// The interactive console: stdin and stdout must be a terminal.
    Terminal,
    /// `serve --stdio`, `snapshot --follow`: pipes (docs/protocol.md).
    Stream,
}

/// Resolve the store, the teardown command and the helper.
///
/// # Errors
/// The store cannot be opened, a flag is unusable, or there is no terminal
/// (checked last, so a bad store or flag is reported as such, and before
/// anything runs, so a console without a terminal changes nothing).
pub(super) fn prepare(cli: &Cli, front: Front) -> Result<Setup, StartupError> {
    let (path, access, store, demo_dir, created) = open(cli)?;
    let state_dir = store.state_dir();
    drop(store);

    let stand_in = match (&demo_dir, cli.demo) {
        (Some(dir), Some(DemoKind::V14)) => Some(write_stand_in(dir.path(), &path)?),
        _ => None,
    };
    let down = teardown_command(cli, stand_in.as_deref(), &path)?;
    let tick = if cli.demo.is_some() && cli.tick == Duration::from_secs(60) {
        DEMO_TICK
    } else {
        cli.tick
    };
    let teardown = TeardownInfo {
        argv: down.template().to_vec(),
        // Only a console that may tear down needs to find the program.
        missing: (access == Access::ReadWrite)
            .then(|| down.missing_program(std::env::var_os("PATH").as_deref()))
            .flatten(),
        stackless: stand_in.as_ref().map_or_else(
            || cli.stackless.to_string_lossy().into_owned(),
            |p| p.display().to_string(),
        ),
    };
    let action = reaper_config(cli, down, tick);
    let reaper_off = reaper_off_reason(cli, access);
    let reaper = reaper_off.is_none().then(|| action.clone());
    let helper = helper_config(cli, access, &state_dir)?;
    let app = AppConfig {
        store_label: if stand_in.is_some() {
            format!("demo 0.4.0, played by stand-ins: {}", path.display())
        } else if cli.demo.is_some() {
            format!("demo store {}", path.display())
        } else {
            path.display().to_string()
        },
        reaper: reaper_off.map_or(
            ReaperMode::Every {
                tick,
                dry_run: cli.dry_run,
                always: cli.reaper == ReaperChoice::Always,
            },
            ReaperMode::Off,
        ),
        helper: helper_mode(cli, helper.as_ref(), access),
        write_keys: write_keys(access),
        host: cli.reached_as.clone(),
        no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    };
    use std::io::IsTerminal as _;
    if front == Front::Terminal && (!io::stdout().is_terminal() || !io::stdin().is_terminal()) {
        return Err(StartupError::NoTerminal);
    }
    Ok(Setup {
        log_level: cli.log_level,
        path,
        state_dir,
        access,
        reaper,
        choice: cli.reaper_choice(),
        action,
        helper,
        app,
        teardown,
        stackless: stand_in.map_or_else(
            || cli.stackless.clone().into_os_string(),
            std::path::PathBuf::into_os_string,
        ),
        demo: cli.demo,
        demo_dir,
        zone: crate::startup::display_zone(cli.utc),
        created,
        metrics_file: cli.metrics_file.clone(),
    })
}

/// The path, the access, the store, the demo's directory, and whether the
/// store was created at stackless's default path.
type Opened = (PathBuf, Access, Store, Option<crate::demo::DemoDir>, bool);

/// The demo's freshly seeded store, or the store the flags name.
fn open(cli: &Cli) -> Result<Opened, StartupError> {
    let Some(kind) = cli.demo else {
        let access = if cli.read_only {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        };
        let opened = open_store(cli, access, Create::AsStackless)?;
        return Ok((opened.path, access, opened.store, None, opened.created));
    };
    let dir = crate::demo::DemoDir::create().map_err(|e| {
        StartupError::Demo(format!("cannot create the demo's temporary directory: {e}"))
    })?;
    let path = dir.path().join("state.db");
    let seeded = match kind {
        DemoKind::V14 => crate::demo::v14::seed(&path, unix_now(), &own_holder()),
        DemoKind::V4 => crate::demo::seed(&path, unix_now(), &own_holder()),
    };
    seeded.map_err(|e| {
        StartupError::Demo(format!(
            "cannot seed the demo store at {}: {e}",
            path.display()
        ))
    })?;
    let store = Store::open(&path, Access::ReadWrite)?;
    Ok((path, Access::ReadWrite, store, Some(dir), false))
}

/// The teardown the reaper and `d` run: the 0.4.0 demo's `stackless down
/// NAME --json` through its stand-in, the schema-4 demo's `demo-down`, or
/// `--down-cmd`.
fn teardown_command(
    cli: &Cli,
    stand_in: Option<&Path>,
    path: &Path,
) -> Result<DownCommand, StartupError> {
    Ok(if let Some(stackless) = stand_in {
        DownCommand::from_argv(vec![
            stackless.display().to_string(),
            "down".into(),
            "{name}".into(),
            "--json".into(),
        ])?
    } else if cli.demo.is_some() {
        demo_command(vec![
            "demo-down".into(),
            "--state".into(),
            path.display().to_string(),
            "{name}".into(),
            "--json".into(),
        ])?
    } else {
        cli.down_command()?
    })
}

/// The 0.4.0 demo's `stackless`: a wrapper in `dir` that runs this
/// executable's `demo-stackless` on the store at `path`.
fn write_stand_in(dir: &Path, path: &Path) -> Result<PathBuf, StartupError> {
    let exe = std::env::current_exe().map_err(StartupError::CurrentExe)?;
    crate::demo::stackless::wrapper(dir, &exe, path)
        .map_err(|e| StartupError::Demo(format!("cannot write the demo's stackless stand-in: {e}")))
}

/// This executable with `args` (the demo's `down` and helper).
fn demo_command(args: Vec<String>) -> Result<DownCommand, StartupError> {
    let exe = std::env::current_exe().map_err(StartupError::CurrentExe)?;
    let mut argv = vec![exe.display().to_string()];
    argv.extend(args);
    Ok(DownCommand::from_argv(argv)?)
}

/// The helper to supervise: `--helper` split into argv (never through a
/// shell), the demo's own helper, or none. A read-only console runs none.
fn helper_config(
    cli: &Cli,
    access: Access,
    state_dir: &Path,
) -> Result<Option<HelperConfig>, StartupError> {
    let argv = if cli.demo.is_some() && cli.helper.is_none() {
        let exe = std::env::current_exe().map_err(StartupError::CurrentExe)?;
        Some(vec![exe.display().to_string(), "demo-helper".into()])
    } else if let Some(cmd) = &cli.helper {
        let argv = shell_words::split(cmd).map_err(|e| {
            StartupError::Helper(format!("--helper cannot be split into arguments: {e}"))
        })?;
        if argv.is_empty() {
            return Err(StartupError::Helper("--helper is empty".into()));
        }
        Some(argv)
    } else {
        None
    };
    Ok(match (argv, access) {
        (Some(argv), Access::ReadWrite) => Some(HelperConfig {
            argv,
            roles_dir: crate::supervisor::roles_dir(state_dir),
            restart: succession::supervision::Restart::default(),
            grace: Duration::from_secs(15),
        }),
        _ => None,
    })
}

/// Why the reaper is never started: the flags and the access only. The
/// store's generation is not a reason here: it can change under a running
/// console (swapped, upgraded, restored), so the reaper is started and
/// pauses itself while the store as it is now cannot be reaped
/// (`Generation::reaper_off`), and the header says so from the snapshot.
fn reaper_off_reason(cli: &Cli, access: Access) -> Option<String> {
    if access == Access::ReadOnly {
        Some("read-only".into())
    } else if cli.no_reaper {
        Some("--no-reaper".into())
    } else if cli.reaper == ReaperChoice::Off {
        Some("--reaper off".into())
    } else {
        None
    }
}

/// The helper for the header: the program's file name, off (read-only),
/// or none.
fn helper_mode(cli: &Cli, helper: Option<&HelperConfig>, access: Access) -> HelperMode {
    match (helper, &cli.helper, access) {
        (Some(h), _, _) => HelperMode::Program(
            h.name()
                + if cli.demo.is_some() && cli.helper.is_none() {
                    " demo-helper"
                } else {
                    ""
                },
        ),
        (None, Some(_), Access::ReadOnly) => HelperMode::OffReadOnly,
        _ => HelperMode::None,
    }
}

/// Whether `r` and `d` may act, and if not the reason the footer gives:
/// the access only (fixed for the run). The generation is the snapshot's,
/// checked at each key press (`App`), as it may change while the console
/// runs.
fn write_keys(access: Access) -> Result<(), String> {
    if access == Access::ReadOnly {
        Err("the store is open read-only (--read-only): r, d, L and v are off".to_owned())
    } else {
        Ok(())
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
