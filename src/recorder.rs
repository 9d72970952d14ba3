//! The one place an outcome becomes a record: every [`Activity`] (a
//! teardown's result, a refusal, a reaper error, from the reaper, the keys
//! or `reap --once`) goes through a [`Recorder`], which writes the audit
//! line (when this process keeps the audit trail), the log line, and
//! forwards it: to the render loop's channel in the console, to stdout in
//! `reap --once`.

use std::sync::{Arc, Mutex};

use crate::audit;
use crate::event::{Event, EventSender};
use crate::model::activity::{Activity, ActivityKind};
use crate::reaper::jobs::Sink;

/// Where an activity goes after the audit and the log.
#[derive(Debug, Clone)]
pub enum Forward {
    /// To the render loop (the Activity pane).
    Console(EventSender),
    /// One sanitized line on stdout, written as it happens (`reap --once`).
    Stdout,
    /// The same lines, gathered in a buffer and written in large blocks,
    /// and whatever is left by [`Recorder::flush`] (`reap --once
    /// --dry-run`; measured: a write per line was a tenth of the pass).
    /// Only for output that nothing waits on between lines: a dry run runs
    /// no teardown, so its lines come in one burst and the pass ends; a
    /// real pass's `tearing down` must be seen while its `down` runs.
    /// Flush before writing anything else (stderr) and before exiting.
    StdoutBuffered(Buffered),
}

/// The buffer of [`Forward::StdoutBuffered`], shared by the clones of one
/// recorder (64 KiB, then written through).
#[derive(Debug, Clone)]
pub struct Buffered(Arc<Mutex<std::io::BufWriter<std::io::Stdout>>>);

impl Default for Buffered {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout(),
        ))))
    }
}

impl Buffered {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::io::BufWriter<std::io::Stdout>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Add one line (and its newline).
    ///
    /// # Panics
    /// When stdout cannot be written, as `println!` does (the same
    /// message): what `reap --once` did before its output was buffered.
    fn line(&self, text: &str) {
        use std::io::Write as _;
        let mut out = self.lock();
        if let Err(error) = out
            .write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
        {
            panic!("failed printing to stdout: {error}");
        }
    }

    /// Write out what is buffered.
    ///
    /// # Panics
    /// As [`Buffered::line`].
    fn flush(&self) {
        use std::io::Write as _;
        if let Err(error) = self.lock().flush() {
            panic!("failed printing to stdout: {error}");
        }
    }
}

/// Audit + log + forward, for one process.
#[derive(Debug, Clone)]
pub struct Recorder {
    audit: Option<audit::Shared>,
    health: audit::Health,
    forward: Forward,
}

impl Recorder {
    /// A recorder writing to `audit` (none for a read-only console or a dry
    /// run) and forwarding as `forward` says.
    #[must_use]
    pub fn new(audit: Option<audit::Shared>, forward: Forward) -> Self {
        let health = audit::Health::new(audit.clone());
        Self {
            audit,
            health,
            forward,
        }
    }

    /// Whether the audit trail takes writes ([`audit::Health`]), for the
    /// reaper to pause on.
    #[must_use]
    pub fn health(&self) -> audit::Health {
        self.health.clone()
    }

    /// The audit trail, if this process keeps one.
    #[must_use]
    pub const fn audit(&self) -> Option<&audit::Shared> {
        self.audit.as_ref()
    }

    /// Audit and log an activity that is already shown (the UI adds its own
    /// refusals to the Activity pane as the key is pressed). An entry with a
    /// [`Activity::batch`] (a bulk action's refusals) is audited as the
    /// batch's lines in one write and logged as its own one line.
    pub fn persist(&self, activity: &Activity) {
        // Written through the health: a line that fails is kept owed and
        // the reaper pauses until it is written.
        self.health.record(activity);
        log(activity);
    }

    /// Audit, log and forward an activity.
    pub fn record(&self, activity: Activity) {
        self.persist(&activity);
        match &self.forward {
            Forward::Console(tx) => {
                let _ = tx.send(Event::Activity(activity));
            }
            Forward::Stdout => println!("{}", line(&activity)),
            Forward::StdoutBuffered(out) => out.line(&line(&activity)),
        }
    }

    /// Write out the lines [`Forward::StdoutBuffered`] still holds (nothing
    /// to do for the other forwards). Call it before anything else is
    /// written (stderr) and before the process exits.
    pub fn flush(&self) {
        if let Forward::StdoutBuffered(out) = &self.forward {
            out.flush();
        }
    }

    /// This recorder as the reaper's and teardown jobs' [`Sink`].
    #[must_use]
    pub fn sink(&self) -> Sink {
        let recorder = self.clone();
        Arc::new(move |activity: Activity| recorder.record(activity))
    }
}

/// One activity as a plain line: `actor instance kind: detail`, sanitized
/// (no control or escape characters reach the terminal).
#[must_use]
pub fn line(activity: &Activity) -> String {
    let text = format!(
        "{} {} {}: {}",
        activity.actor, activity.instance, activity.kind, activity.detail
    );
    match crate::model::text::sanitize(&text) {
        // Nothing replaced (the common case): the text itself, not a copy.
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(safe) => safe,
    }
}

/// One activity in the log file, at a level that matches it: failures and
/// aborts warn, errors are errors, the rest is info.
fn log(activity: &Activity) {
    let instance = crate::model::text::sanitize(&activity.instance);
    let detail = crate::model::text::sanitize(&activity.detail);
    let actor = activity.actor;
    let kind = activity.kind;
    match kind {
        ActivityKind::Error => tracing::error!(%actor, %instance, "{kind}: {detail}"),
        ActivityKind::Failed | ActivityKind::Aborted | ActivityKind::Stopped => {
            tracing::warn!(%actor, %instance, "{kind}: {detail}");
        }
        _ => tracing::info!(%actor, %instance, "{kind}: {detail}"),
    }
}
