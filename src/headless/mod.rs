//! Headless modes for scripts and cron: `snapshot` prints what the panes
//! show, `reap --once` runs one reaper pass with the console's own rules.
//! Exit codes: 0 success, 1 a teardown failed, 2 a usage or store error.

pub mod report;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use crate::cli::{Cli, EXIT_USAGE};
use crate::model::time::unix_now;
use crate::reaper::{DownCommand, InFlight, Reaper, Teardowns};
use crate::recorder::{Forward, Recorder};
use crate::roles::{CONSOLE_ROLE, Refused, Wanted};
use crate::startup::{open_store, reaper_config};
use crate::store::Access;
use crate::store::probe::SysinfoProbe;

/// Services per instance, as [`probed_services`] returns them.
type Services = std::collections::HashMap<String, Vec<report::ServiceReport>>;

/// How many times `snapshot` reads an immutably opened store again when
/// it changed while it was read.
const IMMUTABLE_READS: usize = 3;

/// Open the store read-only and read its snapshot and services. A store
/// read immutably ([`crate::store::Store::immutable`]) that changed while
/// it was read (a writer started) is read again, up to
/// [`IMMUTABLE_READS`] times.
fn read_once(
    cli: &Cli,
) -> Result<
    (
        PathBuf,
        crate::store::Store,
        crate::model::Snapshot,
        Services,
    ),
    String,
> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let (path, mut store) = open_store(cli, Access::ReadOnly).map_err(|e| e.to_string())?;
        let snapshot = store
            .snapshot(&mut SysinfoProbe::new())
            .map_err(|e| e.to_string())?;
        let services = probed_services(&mut store).map_err(|e| e.to_string())?;
        if !store.immutable() || store.file_state() == crate::store::FileState::Same {
            return Ok((path, store, snapshot, services));
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

/// `stackless-tui snapshot [--json] [--now UNIX]`.
#[must_use]
pub fn snapshot(cli: &Cli, json: bool, now: Option<i64>) -> ExitCode {
    let (path, store, snapshot, services) = match read_once(cli) {
        Ok(read) => read,
        Err(error) => return usage(&error),
    };
    if store.immutable() {
        eprintln!("{}", immutable_note(&store));
    }
    let report = report::build_with(
        &snapshot,
        now.unwrap_or_else(unix_now),
        &path.display().to_string(),
        &services,
    );
    let text = if json {
        match serde_json::to_string_pretty(&report) {
            Ok(mut text) => {
                text.push('\n');
                text
            }
            Err(error) => return usage(&error.to_string()),
        }
    } else {
        report::table(&report)
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

/// Every instance's recorded service processes, probed on this machine
/// (pid plus start time) with their log paths.
fn probed_services(
    store: &mut crate::store::Store,
) -> Result<std::collections::HashMap<String, Vec<report::ServiceReport>>, crate::store::StoreError>
{
    let state_dir = store.state_dir();
    let mut probe = crate::store::probe::checked_sysinfo();
    let rows = store.service_rows(false)?;
    Ok(rows
        .into_iter()
        .map(|(name, rows)| {
            let mut detail = crate::model::detail::InstanceDetail {
                checkpoints: rows.checkpoints,
                substrate: rows.substrate,
                logs_dir_name: rows.logs_dir_name,
                ..crate::model::detail::InstanceDetail::default()
            };
            crate::store::services::observe(&mut detail, &state_dir, probe.as_mut());
            let services = detail
                .services
                .iter()
                .map(report::ServiceReport::new)
                .collect();
            (name, services)
        })
        .collect())
}

/// `stackless-tui reap --once [--dry-run]`: one pass of the reaper, waiting
/// for its teardowns. Each activity is printed as a line. Exits 0 when every
/// decision succeeded, 1 when a teardown failed or the store failed mid-pass,
/// 2 on a usage or store error. When a console is active on this store (it
/// holds the `console` role), nothing is done: that console reaps.
#[must_use]
pub fn reap_once(cli: &Cli) -> ExitCode {
    if cli.read_only {
        return usage("reap --once writes the store; it cannot run with --read-only");
    }
    let (path, store) = match open_store(cli, Access::ReadWrite) {
        Ok(opened) => opened,
        Err(error) => return usage(&error.to_string()),
    };
    if !store.generation().allows_reaper() {
        return usage(&store.generation().banner().unwrap_or_default());
    }
    let down = match DownCommand::parse(&cli.down_cmd) {
        Ok(down) => down,
        Err(error) => return usage(&error.to_string()),
    };
    let state_dir = store.state_dir();
    // A dry run changes nothing: it needs no role and leaves no files.
    let mut role = Wanted::new(&crate::supervisor::roles_dir(&state_dir), CONSOLE_ROLE);
    if !cli.dry_run {
        match role.try_take(&crate::roles::record()) {
            Ok(_) => {}
            Err(Refused::Occupied(_)) => {
                println!("an active stackless-tui console reaps this store; nothing done");
                return ExitCode::SUCCESS;
            }
            Err(Refused::Error(text)) => return usage(&text),
        }
    }
    let audit = if cli.dry_run {
        None
    } else {
        crate::audit::AuditLog::open(
            &crate::audit::default_path(&state_dir),
            crate::audit::DEFAULT_CAP,
        )
        .ok()
        .map(|log| Arc::new(Mutex::new(log)))
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return usage(&error.to_string()),
    };
    let recorder = Recorder::new(audit, Forward::Stdout);
    let jobs = Teardowns {
        path,
        config: reaper_config(cli, down, cli.tick),
        inflight: InFlight::default(),
        runtime: runtime.handle().clone(),
        clock: Arc::new(unix_now),
        report: recorder.sink(),
        clock_check: true,
        unrecorded: Default::default(),
    };
    let mut reaper = Reaper::new(store, crate::store::probe::checked_sysinfo(), jobs);
    let summary = reaper.pass();
    drop(role);
    if summary.failed > 0 || summary.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn usage(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "stackless-tui: {message}");
    ExitCode::from(EXIT_USAGE)
}
