//! The console's log file, `<state_dir>/stackless-tui/console.log` (stdout
//! belongs to the TUI), and the log line of each event. Activities are
//! logged by `crate::recorder`.

use std::path::Path;
use std::sync::Mutex;

use crate::cli::LogLevel;
use crate::event::{Event, StoreHealth, SupervisorKind};
use crate::model::redact::Secrets;

/// The log file, every line redacted by the newest `secret_history`
/// values read (`crate::model::redact`) as it is written: whatever a log
/// line holds (a teardown's stderr, a store error), no secret reaches
/// the file.
struct Redacting {
    file: std::fs::File,
    secrets: Secrets,
}

impl std::io::Write for Redacting {
    /// One formatted event per call (`tracing_subscriber`'s `fmt` writes
    /// each event's line whole): redacted whole, then written whole.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let redactor = self.secrets.current();
        if redactor.is_empty() {
            self.file.write_all(buf)?;
        } else {
            let text = redactor.text(&String::from_utf8_lossy(buf));
            self.file.write_all(text.as_bytes())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Start logging at `level`, redacting by `secrets`. A log that cannot be
/// opened is skipped: logging never stops the console. Returns why it
/// could not be opened (a symbolic link refused, an I/O error), for the
/// Activity pane.
pub(super) fn init(state_dir: &Path, level: LogLevel, secrets: Secrets) -> Option<String> {
    let filter = match level {
        LogLevel::Off => return None,
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
    };
    let path = state_dir.join("stackless-tui").join("console.log");
    // Never through a symbolic link planted at the file or its directory.
    let file = path
        .parent()
        .map_or(Ok(()), crate::nofollow::real_dir)
        .and_then(|()| crate::nofollow::append(&path));
    match file {
        Ok(file) => {
            let _ = tracing_subscriber::fmt()
                .with_writer(Mutex::new(Redacting { file, secrets }))
                .with_ansi(false)
                .with_max_level(filter)
                .try_init();
            None
        }
        Err(error) => Some(format!("console log unavailable: {error}")),
    }
}

/// One event's log line (store text sanitized), at a level that matches it.
pub(super) fn trace(event: &Event) {
    match event {
        Event::Supervisor(note) => match note.kind {
            SupervisorKind::SpawnFailed => tracing::error!("helper: {}", note.text),
            SupervisorKind::Exited => tracing::warn!("helper: {}", note.text),
            _ => tracing::info!("helper: {}", note.text),
        },
        Event::StoreHealth(StoreHealth::Ok) => tracing::info!("store: readable again"),
        Event::StoreHealth(StoreHealth::Busy(since)) => {
            tracing::warn!("store: busy for {}s", since.elapsed().as_secs());
        }
        Event::StoreHealth(StoreHealth::Error(message)) => {
            tracing::error!("store: {}", crate::model::text::sanitize(message));
        }
        Event::Role(role) => tracing::info!("console role: {role:?}"),
        Event::Controller(state) => tracing::info!("controller: {state:?}"),
        Event::Terminate(signal) => tracing::info!("{signal} received: quitting"),
        Event::Snapshot(snapshot) => {
            tracing::debug!(instances = snapshot.instances.len(), "snapshot");
        }
        // Each reason's change is logged where it is learnt
        // (`crate::recorder::Reporter`).
        Event::Pauses(pauses) => tracing::debug!("pauses: {pauses:?}"),
        Event::Logs(crate::model::logview::LogUpdate::Note { service, note, .. }) => {
            tracing::info!("logs: service {service}: {note:?}");
        }
        Event::Reaper(status) => tracing::debug!("reaper: {status:?}"),
        Event::Watch(mode) => tracing::info!("store {}", mode.label()),
        Event::Recording(words) => tracing::info!("history: {words}"),
        Event::Answer(crate::event::Answer::Detail {
            name,
            result: Err(error),
        }) => tracing::warn!(
            "detail of {}: {}",
            crate::model::text::sanitize(name),
            crate::model::text::sanitize(error)
        ),
        Event::Input(_)
        | Event::InputAt(..)
        | Event::Tick
        | Event::Activity(_)
        | Event::Logs(_)
        | Event::Answer(_)
        | Event::Host(_)
        | Event::Replay(_)
        | Event::Timeline(_) => {}
    }
}
