//! Headless modes for scripts and cron: `snapshot` prints what the panes
//! show, `reap --once` runs one reaper pass with the console's own rules.
//! Exit codes: 0 success, 1 a teardown failed, 2 a usage or store error.

pub mod metrics;
pub mod probe;
pub mod report;
mod services;
mod stream;

use services::{BatchedServices, of_birth, probed};
pub use stream::TABLE_READ_WHOLE_UP_TO;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

use crate::cli::{Cli, EXIT_USAGE, SnapshotFormat};
use crate::model::controller::ReaperChoice;
use crate::model::time::unix_now;
use crate::reaper::{DownCommand, JobRunner, Reaper};
use crate::recorder::{Forward, Recorder};
use crate::roles::{CONSOLE_ROLE, Refused, Wanted};
use crate::startup::{Create, absent_default_store, no_store_line, open_store, reaper_config};
use crate::stop::StopToken;
use crate::store::Access;

/// How many times `snapshot` reads an immutably opened store again when
/// it changed while it was read.
const IMMUTABLE_READS: usize = 3;

/// Open the store read-only and read its snapshot (the services are read
/// while `snapshot --json` writes, [`BatchedServices`]). A store
/// read immutably ([`crate::store::Store::immutable`]) that changed while
/// it was read (a writer started) is read again, up to
/// [`IMMUTABLE_READS`] times.
pub(crate) fn read_once(
    cli: &Cli,
) -> Result<(PathBuf, crate::store::Store, crate::model::Snapshot), String> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let crate::startup::Opened {
            path, mut store, ..
        } = open_store(cli, Access::ReadOnly, Create::Never).map_err(|e| e.to_string())?;
        // The console's probe (`kill(pid, 0)` before sysinfo): the same
        // answers, a dead holder in microseconds.
        let snapshot = store
            .snapshot(crate::store::probe::checked_sysinfo().as_mut())
            .map_err(|e| e.to_string())?;
        if !store.immutable() || store.file_state() == crate::store::FileState::Same {
            return Ok((path, store, snapshot));
        }
        if attempt >= IMMUTABLE_READS {
            return Err(format!(
                "{} changed each time it was read as an immutable snapshot (a writer is at work, \
                 and this user cannot create the -shm SQLite needs to read it while it is \
                 written): run again when it is idle, or as a user who can write its directory",
                path.display()
            ));
        }
    }
}

/// The note `snapshot` prints on stderr when the store was read immutably.
#[must_use]
pub fn immutable_note(store: &crate::store::Store) -> String {
    format!(
        "stackless-tui: read-only (immutable: dir not writable): {} is not writable by this \
         user, so SQLite cannot create the -shm a WAL store needs; the store has no commits \
         waiting in its -wal, so {} was read as it is on disk, and nothing was written.",
        store.state_dir().display(),
        store.path().display()
    )
}

/// `stackless-tui snapshot [--json | --format FORMAT] [--now UNIX]`. With
/// no store at stackless's default path it creates none and says so, exit
/// 0 (as `reap --once --dry-run` does): on stdout for the table, on
/// stderr for `--json` (stdout stays empty, never a document of nothing)
/// and for `openmetrics` (stdout: `stackless_store_up 0`, [`metrics`]).
#[must_use]
pub fn snapshot(cli: &Cli, format: SnapshotFormat, now: Option<i64>) -> ExitCode {
    let json = match format {
        SnapshotFormat::OpenMetrics => return metrics::snapshot(cli, now),
        SnapshotFormat::Json => true,
        SnapshotFormat::Table => false,
    };
    if let Some(path) = absent_default_store(cli) {
        return no_store_to_show(&path, json);
    }
    if let Some(code) = stream::stream(cli, json, now) {
        return code;
    }
    let (path, mut store, snapshot) = match read_once(cli) {
        Ok(read) => read,
        Err(error) => return usage(&error),
    };
    if store.immutable() {
        eprintln!("{}", immutable_note(&store));
    }
    let clock = doubted(now, &snapshot);
    if let Some(doubt) = &clock {
        eprintln!("stackless-tui: {doubt}");
    }
    let now = now.unwrap_or_else(unix_now);
    // Streamed: neither the report nor its text is ever held whole.
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = if json {
        let shown = path.display().to_string();
        let mut services = BatchedServices::new(&mut store, &snapshot);
        // A store read immutably: its services read now, and the file
        // checked to be the one the snapshot read.
        if let Err(error) = services.read_whole() {
            return usage(&error.to_string());
        }
        if services.store.immutable()
            && services.store.file_state() != crate::store::FileState::Same
        {
            return usage(&format!(
                "{} changed while it was read as an immutable snapshot: run again when it is idle",
                crate::model::text::sanitize(&path.display().to_string())
            ));
        }
        let written = report::write_json(
            &mut out,
            &snapshot,
            now,
            &shown,
            &mut |instance| services.of(instance).map_err(|e| e.to_string()),
            clock.as_ref(),
        );
        if let Err(error) = written {
            if error.is_io() {
                return match std::io::Error::from(error) {
                    e if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                    e => usage(&e.to_string()),
                };
            }
            // A services read failed: the document stops unfinished (what
            // is still buffered is dropped, never completed as if whole).
            let _ = out.into_parts();
            return usage(&format!("snapshot --json stopped: {error}"));
        }
        Ok(())
    } else {
        // Each instance's STAGE cell, its services read one at a time.
        let stages = match table_stages(&mut store, &snapshot, probe::services_probe().as_mut()) {
            Ok(stages) => stages,
            Err(error) => return usage(&error.to_string()),
        };
        report::write_table_staged(
            &mut out,
            &snapshot,
            now,
            &path.display().to_string(),
            &stages,
            &crate::startup::display_zone(cli.utc),
            clock.as_ref(),
        )
        .and_then(|()| who_reaps_line(&mut out, &store.state_dir()))
    };
    // A closed pipe (`| head`) is not an error of ours.
    match written.and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(error) => return usage(&error.to_string()),
    }
    ExitCode::SUCCESS
}

/// One instance's services as the streamed `snapshot` and `snapshot
/// --json` report them (the table's STAGE is [`report::stage_text`] of
/// them): its service rows of its own birth (`rows`, none of another
/// birth's resource namespace), with its last `observations`, probed on
/// `probe`, their logs under `state_dir` and their origins on
/// `proxy_port`; empty without rows or observations.
pub fn streamed_services(
    instance: &crate::model::Instance,
    rows: Option<crate::store::services::ServiceRows>,
    observations: Vec<crate::model::detail::Observation>,
    (state_dir, proxy_port): (&std::path::Path, u16),
    probe: &mut dyn crate::store::probe::HostProbe,
) -> Vec<report::ServiceReport> {
    match of_birth(instance, rows, !observations.is_empty()) {
        Some(rows) => probed(
            rows,
            observations,
            instance.status == crate::model::Status::Tombstoned,
            (state_dir, proxy_port),
            probe,
        ),
        None => Vec::new(),
    }
}

/// `instances`' services as `snapshot --json` reports them, each as the
/// report's service objects (empty: none), read from the store at `path`
/// opened read-only for this read alone (a store swapped or restored in
/// place is the one read): the recorder's `services` lines
/// (docs/history.md, "Services").
///
/// # Errors
/// The store could not be opened or read.
pub fn recorded_services(
    path: &std::path::Path,
    instances: &[crate::model::Instance],
) -> Result<Vec<Vec<serde_json::Value>>, crate::store::StoreError> {
    let mut store = crate::store::Store::open(path, crate::store::Access::ReadOnly)?;
    let state_dir = store.state_dir();
    let proxy_port = crate::controller::probe::probe(&state_dir)
        .proxy_port
        .unwrap_or(crate::model::services::DEFAULT_PROXY_PORT);
    let mut probe = crate::store::probe::checked_sysinfo();
    let mut out = Vec::with_capacity(instances.len());
    for instance in instances {
        let name = instance.name.as_str();
        let mut rows = store.service_rows_between(false, Some((name, name)))?;
        let observed = store
            .observations_between(Some((name, name)))?
            .remove(name)
            .unwrap_or_default();
        let services = streamed_services(
            instance,
            rows.remove(name),
            observed,
            (&state_dir, proxy_port),
            probe.as_mut(),
        );
        out.push(
            services
                .iter()
                .filter_map(|s| serde_json::to_value(s).ok())
                .collect(),
        );
    }
    Ok(out)
}

/// One instance's STAGE cell as the streamed `snapshot` writes it: the
/// [`report::stage_text`] of [`streamed_services`]' services, derived
/// from the same rows and probe without making the rest of each
/// service's report.
pub fn streamed_stage(
    instance: &crate::model::Instance,
    rows: Option<crate::store::services::ServiceRows>,
    observations: Vec<crate::model::detail::Observation>,
    state_dir: &std::path::Path,
    probe: &mut dyn crate::store::probe::HostProbe,
) -> String {
    services::stage_of(instance, rows, observations, state_dir, probe)
}

/// Each instance's STAGE cell of `snapshot` (by position,
/// [`report::write_table_staged`]): the [`report::stage_text`] of the
/// services `snapshot --json` reports for it, derived from its rows as
/// they are walked beside the instances in name order
/// ([`crate::store::Store::walk_services`]: one instance's services held
/// at a time, nothing else of their report made), each process probed on
/// `probe`; where the walk declines (a store read immutably, a
/// hand-made one, one committed to since the snapshot was read), read as
/// `snapshot --json` reads them ([`BatchedServices`]), probed on `probe`
/// too.
///
/// # Errors
/// A services read failed.
pub fn table_stages(
    store: &mut crate::store::Store,
    snapshot: &crate::model::Snapshot,
    probe: &mut dyn crate::store::probe::HostProbe,
) -> Result<report::Stages, crate::store::StoreError> {
    let state_dir = store.state_dir();
    let mut stages = report::Stages::with_capacity(snapshot.instances.len());
    let walked = store.walk_services(&snapshot.instances, &mut |instance, rows, observations| {
        stages.push(&services::stage_of(
            instance,
            rows,
            observations,
            &state_dir,
            probe,
        ));
        Ok::<(), std::convert::Infallible>(())
    });
    match walked {
        Ok(true) => return Ok(stages),
        Ok(false) => {}
        Err(crate::store::StreamStop::Store(error)) => return Err(error),
        Err(crate::store::StreamStop::Reader(never)) => match never {},
    }
    let mut services = BatchedServices::new(store, snapshot);
    services.read_whole()?;
    for instance in &snapshot.instances {
        stages.push(&services.stage_of(instance, probe)?);
    }
    Ok(stages)
}

/// What the reaper would do now includes whether it would act at all: a
/// wall clock that looks wrong pauses it (`reap --once` refuses the same
/// way). An explicit `now` is the operator's time, not doubted.
fn doubted(
    now: Option<i64>,
    snapshot: &crate::model::Snapshot,
) -> Option<crate::reaper::clock::ClockDoubt> {
    if now.is_some() {
        return None;
    }
    let wall = unix_now();
    crate::reaper::kernel_clock::check(wall).or_else(|| {
        crate::reaper::clock::doubt_from_store(
            wall,
            crate::model::clock_evidence::newest_write(&snapshot.rows).as_ref(),
        )
    })
}

/// The table's last line: `who reaps: ...` ([`who_reaps`]).
fn who_reaps_line(
    out: &mut impl std::io::Write,
    state_dir: &std::path::Path,
) -> std::io::Result<()> {
    writeln!(out, "who reaps: {}", who_reaps(state_dir).text())
}

/// Who reaps the store in `state_dir` now (the table's last line): the
/// controller's lease reaper, a console holding the `console` role, or
/// nobody (`crate::model::controller::reaping`).
pub(crate) fn who_reaps(state_dir: &std::path::Path) -> crate::model::controller::Reaping {
    crate::model::controller::reaping(
        &crate::controller::probe::probe(state_dir),
        crate::roles::observe(&crate::supervisor::roles_dir(state_dir), CONSOLE_ROLE),
    )
}

/// `snapshot` with no store at stackless's default `path`: said (on
/// stdout for the table, on stderr for `--json`), exit 0.
fn no_store_to_show(path: &std::path::Path, json: bool) -> ExitCode {
    let line = no_store_line(path, "nothing to show", "a read creates nothing");
    if json {
        let _ = writeln!(std::io::stderr(), "stackless-tui: {line}");
    } else {
        println!("{line}");
    }
    ExitCode::SUCCESS
}

/// `stackless-tui reap --once [--dry-run]`: one pass of the reaper, waiting
/// for its teardowns. Each activity is printed as a line. Exits 0 when every
/// decision succeeded, 1 when a teardown failed or the store failed mid-pass,
/// 2 on a usage or store error. When a console is active on this store (it
/// holds the `console` role), nothing is done: that console reaps.
/// SIGTERM, SIGINT or SIGHUP (and, reached by `--controller`, the end of
/// stdin) stops the pass: running teardowns are stopped, queued ones not
/// started (audited `teardown`/`interrupted`, nothing recorded in the
/// store), and it exits 128 + the signal (129 for the launcher gone).
#[must_use]
pub fn reap_once(cli: &Cli) -> ExitCode {
    if cli.read_only {
        return usage("reap --once writes the store; it cannot run with --read-only");
    }
    // A dry run writes nothing, not even the default store it would create.
    if cli.dry_run
        && let Some(path) = absent_default_store(cli)
    {
        println!(
            "{}",
            no_store_line(&path, "nothing to reap", "a dry run creates nothing")
        );
        return ExitCode::SUCCESS;
    }
    let target = match ReapTarget::open(cli) {
        Ok(target) => target,
        Err(code) => return code,
    };
    let state_dir = target.store.state_dir();
    let role = match take_console_role(cli, &state_dir) {
        Ok(role) => role,
        Err(code) => return code,
    };
    // Who reaps is said first: a missing teardown command matters only to
    // a pass that reaps here.
    if let Some(missing) = &target.missing
        && !cli.dry_run
    {
        return usage(&format!(
            "reap --once: {missing}: nothing was torn down (check --down-cmd, or PATH)"
        ));
    }
    let audit = reap_audit(cli, &state_dir);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return usage(&error.to_string()),
    };
    // A dry run's lines come in one burst (no teardown runs between them):
    // buffered, and flushed before stderr is written and before exit.
    let forward = if cli.dry_run {
        Forward::StdoutBuffered(crate::recorder::Buffered::default())
    } else {
        Forward::Stdout
    };
    let recorder = Recorder::new(audit, forward).with_would_reap_note(target.missing);
    let stop = StopToken::new();
    let why = watch_for_stop(&runtime, &stop, cli.reached_as.is_some());
    let jobs = JobRunner::new(
        target.path,
        reaper_config(cli, target.down, cli.tick),
        recorder.clone(),
    )
    .with_stop(stop);
    let mut reaper = Reaper::new(target.store, crate::store::probe::checked_sysinfo(), jobs);
    let summary = reaper.pass();
    let stopped = why.get().copied();
    recorder.flush();
    if recorder.printed() == 0 && stopped.is_none() {
        // A pass with nothing to say says so, in the
        // form of its other lines (`actor instance kind: detail`); neither
        // audited nor logged: nothing happened.
        recorder.print_line(&nothing_to_reap());
    }
    drop(role);
    let code = pass_exit(stopped, &summary);
    match recorder.stdout_failed() {
        // A closed pipe (`| head`) is not an error of ours: the pass went
        // on, its lines audited and logged.
        None | Some((std::io::ErrorKind::BrokenPipe, _)) => code,
        Some((_, error)) => usage(&format!(
            "reap --once: cannot write stdout ({error}): the pass went on; its lines are in the audit trail and the log"
        )),
    }
}

/// The line of a `reap --once` pass (real or dry) that printed nothing
/// else: `reaper  skipped: nothing to reap: no instance is expired`.
fn nothing_to_reap() -> crate::model::activity::Activity {
    use crate::model::activity::{Activity, ActivityKind, Actor};
    Activity::new(
        unix_now(),
        Actor::Reaper,
        "",
        ActivityKind::Skipped,
        "nothing to reap: no instance is expired",
    )
}

/// What `reap --once` tears down with: the store opened read-write (a
/// generation that allows a reaper), `--down-cmd` parsed and, for a real
/// pass, found.
struct ReapTarget {
    /// The store's path, as opened.
    path: PathBuf,
    /// The store, read-write.
    store: crate::store::Store,
    /// The teardown command (`--down-cmd`).
    down: DownCommand,
    /// Why the teardown command cannot run (`None`: found); a dry run
    /// notes it on its `would reap` lines.
    missing: Option<String>,
}

impl ReapTarget {
    /// Parse `--down-cmd`, open the store and look the teardown command
    /// up once, before any instance (`missing`).
    ///
    /// # Errors
    /// The usage exit (2) already said on stderr: a bad `--down-cmd`, or a
    /// store that cannot be opened or reaped here.
    fn open(cli: &Cli) -> Result<Self, ExitCode> {
        let down = cli
            .down_command()
            .map_err(|error| usage(&error.to_string()))?;
        let crate::startup::Opened {
            path,
            store,
            created,
        } = open_store(cli, Access::ReadWrite, Create::AsStackless)
            .map_err(|error| usage(&error.to_string()))?;
        if created {
            println!("{}", crate::startup::created_line(&path));
        }
        if !store.generation().allows_reaper() {
            return Err(usage(&store.generation().banner().unwrap_or_default()));
        }
        // The teardown command is checked once, before any instance (and
        // refused by `reap_once` once it is known that this pass reaps).
        let missing = missing_teardown(&down);
        Ok(Self {
            path,
            store,
            down,
            missing,
        })
    }
}

/// The `console` role under `state_dir`, taken for a real pass (a dry run
/// changes nothing: it needs no role and leaves no files), unless the
/// controller's lease reaper reaps the store (`--reaper auto`).
///
/// # Errors
/// The exit code, already said: 0 when the controller's lease reaper or an
/// active console reaps this store (who, with its pid), 2 when the role
/// files failed.
fn take_console_role(cli: &Cli, state_dir: &std::path::Path) -> Result<Wanted, ExitCode> {
    let controller = crate::controller::probe::probe(state_dir);
    // `--reaper auto` (the default) leaves the store to the controller's
    // lease reaper while it runs (`crate::model::controller::stance`).
    // (`reap --once` is itself the run: `off` does not apply to it.)
    let choice = match cli.reaper {
        ReaperChoice::Always => ReaperChoice::Always,
        ReaperChoice::Auto | ReaperChoice::Off => ReaperChoice::Auto,
    };
    if let crate::model::controller::Stance::Controller(pid) =
        crate::model::controller::stance(choice, false, &controller)
    {
        println!(
            "the stackless controller (pid {pid}) runs its lease reaper and reaps this store; \
             nothing done (--reaper always reaps here too)"
        );
        return Err(ExitCode::SUCCESS);
    }
    let mut role = Wanted::new(&crate::supervisor::roles_dir(state_dir), CONSOLE_ROLE);
    if !cli.dry_run {
        match role.try_take(&crate::roles::record()) {
            Ok(_) => {}
            Err(Refused::Occupied(pid)) => {
                let who = pid.map_or_else(
                    || "an active stackless-tui console".to_owned(),
                    |pid| format!("the stackless-tui console pid {pid}"),
                );
                println!("{who} reaps this store; nothing done");
                return Err(ExitCode::SUCCESS);
            }
            Err(Refused::Error(text)) => return Err(usage(&text)),
        }
    }
    Ok(role)
}

/// The audit trail under `state_dir` for a real pass (`None` for a dry
/// run, or when it cannot be opened).
fn reap_audit(cli: &Cli, state_dir: &std::path::Path) -> Option<crate::audit::Shared> {
    if cli.dry_run {
        return None;
    }
    crate::audit::AuditLog::open(
        &crate::audit::default_path(state_dir),
        crate::audit::DEFAULT_CAP,
    )
    .ok()
    .map(|log| Arc::new(Mutex::new(log)))
}

/// `reap --once`'s exit once its pass is over: 128 + the signal when it was
/// stopped (said on stderr with the pass's counts), 1 when a teardown
/// failed or the store failed mid-pass, else 0.
fn pass_exit(
    stopped: Option<Stop>,
    summary: &crate::model::reaper_status::PassSummary,
) -> ExitCode {
    if let Some(why) = stopped {
        let _ = writeln!(
            std::io::stderr(),
            "stackless-tui: reap --once {}: the pass was stopped ({} teardown(s) stopped or not \
             started, nothing recorded for them; {} reaped, {} failed)",
            why.said(),
            summary.stopped,
            summary.reaped,
            summary.failed
        );
        return ExitCode::from(why.exit_code());
    }
    if summary.failed > 0 || summary.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Why the teardown command cannot run, as `reap --once` says it:
/// `teardown command 'no-such-stackless' not found on PATH`, `teardown
/// command '/opt/x/down' is not an executable file` (`None`: found).
fn missing_teardown(down: &DownCommand) -> Option<String> {
    let path = std::env::var_os("PATH");
    down.missing_program(path.as_deref())?;
    let program = down
        .argv_for("x")
        .and_then(|argv| argv.into_iter().next())?;
    let shown = crate::model::text::sanitize_short(&program, 120);
    Some(if program.contains('/') {
        format!("teardown command '{shown}' is not an executable file")
    } else {
        format!("teardown command '{shown}' not found on PATH")
    })
}

/// Why `reap --once` stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// An operator's SIGTERM, SIGINT or SIGHUP.
    Signal(nix::sys::signal::Signal),
    /// On the `--controller` remote side (`--reached-as`): stdin reached
    /// its end, so the launcher closed its pipe (interrupted) or is gone
    /// (killed, the connection dropped).
    LauncherGone,
}

impl Stop {
    fn said(self) -> String {
        match self {
            Self::Signal(signal) => format!("interrupted by {}", signal.as_str()),
            Self::LauncherGone => "interrupted: the --controller launcher closed the connection \
                                   (it was interrupted, or the connection dropped)"
                .to_owned(),
        }
    }

    /// 128 + the signal; a launcher gone counts as a hang-up (129).
    fn exit_code(self) -> u8 {
        let signal = match self {
            Self::Signal(signal) => signal,
            Self::LauncherGone => nix::sys::signal::Signal::SIGHUP,
        };
        u8::try_from(128 + signal as i32).unwrap_or(1)
    }
}

/// Cancel `stop` on SIGTERM, SIGINT or SIGHUP, and, when this run was
/// reached over ssh by `--controller` (`remote`), when stdin ends: the
/// launcher holds the write end of a pipe it never writes to and closes it
/// when it is interrupted, and it closes by itself when the launcher or the
/// connection dies (ssh -T sends the remote side no signal). The first
/// reason is kept in the returned cell.
fn watch_for_stop(
    runtime: &tokio::runtime::Runtime,
    stop: &StopToken,
    remote: bool,
) -> Arc<OnceLock<Stop>> {
    use nix::sys::signal::Signal;
    use tokio::signal::unix::{SignalKind, signal};
    let why = Arc::new(OnceLock::new());
    for (kind, sig) in [
        (SignalKind::terminate(), Signal::SIGTERM),
        (SignalKind::interrupt(), Signal::SIGINT),
        (SignalKind::hangup(), Signal::SIGHUP),
    ] {
        let stream = {
            let _context = runtime.enter();
            signal(kind)
        };
        let Ok(mut stream) = stream else { continue };
        let (stop, why) = (stop.clone(), Arc::clone(&why));
        runtime.spawn(async move {
            if stream.recv().await.is_some() {
                let _ = why.set(Stop::Signal(sig));
                stop.cancel();
            }
        });
    }
    if remote {
        let (stop, why) = (stop.clone(), Arc::clone(&why));
        let _ = std::thread::Builder::new()
            .name("launcher-watch".into())
            .spawn(move || {
                let mut buf = [0u8; 256];
                loop {
                    match std::io::stdin().read(&mut buf) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = why.set(Stop::LauncherGone);
                stop.cancel();
            });
    }
    why
}

pub(crate) fn usage(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "stackless-tui: {message}");
    ExitCode::from(EXIT_USAGE)
}
