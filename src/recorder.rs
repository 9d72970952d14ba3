//! The one place an outcome becomes a record: every [`Activity`] (a
//! teardown's result, a refusal, a reaper error, from the reaper, the keys
//! or `reap --once`) goes through a [`Recorder`], which writes the audit
//! line (when this process keeps the audit trail), the log line, and
//! forwards it: to the render loop's channel in the console, to stdout in
//! `reap --once`. Beside it, the [`Reporter`]: how the reaper, the jobs and
//! the recorder itself tell the console of a change in the reaper's status
//! or in why it is held (typed events, sent on change; nothing polled).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::audit;
use crate::event::{Event, EventSender};
use crate::model::activity::{Activity, ActivityKind};
use crate::model::reaper_status::{PauseReasons, ReaperStatus};
use crate::model::redact::Secrets;

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
    /// Kept in a list, in order (tests, and anything that reads the
    /// activities back).
    Collect(Arc<Mutex<Vec<Activity>>>),
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
    /// # Errors
    /// The write's error (stdout closed or full).
    fn line(&self, text: &str) -> std::io::Result<()> {
        use std::io::Write as _;
        let mut out = self.lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
    }

    /// Write out what is buffered.
    ///
    /// # Errors
    /// As [`Buffered::line`].
    fn flush(&self) -> std::io::Result<()> {
        use std::io::Write as _;
        self.lock().flush()
    }
}

/// Audit + log + forward, for one process.
#[derive(Debug, Clone)]
pub struct Recorder {
    audit: Option<audit::Shared>,
    health: audit::Health,
    forward: Forward,
    /// Told when the audit trail stops or starts taking writes.
    reporter: Reporter,
    /// Added to each `would reap` line (`reap --once --dry-run` with a
    /// teardown command that cannot run: why it would not).
    would_reap_note: Option<String>,
    /// What every activity is redacted by before it is audited, logged or
    /// forwarded: the newest `secret_history` values read (the render loop
    /// and the reaper put each snapshot's).
    secrets: Secrets,
    /// How many lines went to stdout ([`Forward::Stdout`],
    /// [`Forward::StdoutBuffered`]), shared by the clones: `reap --once`
    /// says when its pass printed none.
    printed: Arc<AtomicUsize>,
    /// The first error writing stdout, shared by the clones: after it
    /// nothing more is written there, and the pass goes on (its lines are
    /// still audited and logged); `reap --once` says it at the end.
    stdout_failed: Arc<Mutex<Option<std::io::Error>>>,
}

impl Recorder {
    /// A recorder writing to `audit` (none for a read-only console or a dry
    /// run) and forwarding as `forward` says.
    #[must_use]
    pub fn new(audit: Option<audit::Shared>, forward: Forward) -> Self {
        let health = audit::Health::new(audit.clone());
        let reporter = match &forward {
            Forward::Console(tx) => Reporter::new(Some(tx.clone())),
            _ => Reporter::default(),
        };
        Self {
            audit,
            health,
            forward,
            reporter,
            would_reap_note: None,
            secrets: Secrets::new(),
            printed: Arc::default(),
            stdout_failed: Arc::default(),
        }
    }

    /// This recorder, redacting by `secrets` (shared with the console's
    /// log and whoever reads the snapshots).
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// The secrets this recorder redacts by: update them with each
    /// snapshot read (`Secrets::update`).
    #[must_use]
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// This recorder, adding `note` to each `would reap` line it forwards
    /// (`reap --once --dry-run`: why the teardown would not run).
    #[must_use]
    pub fn with_would_reap_note(mut self, note: Option<String>) -> Self {
        self.would_reap_note = note;
        self
    }

    /// Whether the audit trail takes writes ([`audit::Health`]), for the
    /// reaper to pause on.
    #[must_use]
    pub fn health(&self) -> audit::Health {
        self.health.clone()
    }

    /// Why the audit trail does not take writes, while it does not (read
    /// only: [`Recorder::retry_audit`] writes the owed lines).
    #[must_use]
    pub fn audit_failure(&self) -> Option<String> {
        self.health.failure()
    }

    /// Write the audit lines owed, if any (the reaper's pass, before it
    /// decides whether the trail holds it), and report the outcome.
    pub fn retry_audit(&self) {
        self.health.retry();
        self.reporter.audit(self.health.failure());
    }

    /// Where this recorder reports changes (the console's event channel,
    /// or nowhere).
    #[must_use]
    pub fn reporter(&self) -> Reporter {
        self.reporter.clone()
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
        let mut redacted = activity.clone();
        redacted.redact(&self.secrets.current());
        self.persist_redacted(&redacted);
    }

    fn persist_redacted(&self, activity: &Activity) {
        // Written through the health: a line that fails is kept owed and
        // the reaper pauses until it is written.
        self.health.record(activity);
        self.reporter.audit(self.health.failure());
        log(activity);
    }

    /// Audit, log and forward an activity.
    pub fn record(&self, mut activity: Activity) {
        if let Some(note) = &self.would_reap_note
            && activity.kind == ActivityKind::WouldReap
            && activity.detail != crate::model::activity::WOULD_GC_TOMBSTONE
        {
            activity.detail = format!("{} ({note})", activity.detail);
        }
        activity.redact(&self.secrets.current());
        self.persist_redacted(&activity);
        match &self.forward {
            Forward::Console(tx) => {
                let _ = tx.send(Event::Activity(activity));
            }
            Forward::Stdout => self.write_stdout(true, || {
                use std::io::Write as _;
                writeln!(std::io::stdout().lock(), "{}", line(&activity))
            }),
            Forward::StdoutBuffered(out) => self.write_stdout(true, || out.line(&line(&activity))),
            Forward::Collect(list) => list
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(activity),
        }
    }

    /// How many lines this recorder (and its clones) wrote to stdout.
    #[must_use]
    pub fn printed(&self) -> usize {
        self.printed.load(Ordering::Relaxed)
    }

    /// Write out the lines [`Forward::StdoutBuffered`] still holds (nothing
    /// to do for the other forwards). Call it before anything else is
    /// written (stderr) and before the process exits.
    pub fn flush(&self) {
        if let Forward::StdoutBuffered(out) = &self.forward {
            self.write_stdout(false, || out.flush());
        }
    }

    /// Print one line with [`line`]'s words on stdout as the forwarded
    /// ones are (nothing once stdout failed).
    pub fn print_line(&self, activity: &Activity) {
        match &self.forward {
            Forward::StdoutBuffered(out) => {
                self.write_stdout(true, || {
                    out.line(&line(activity)).and_then(|()| out.flush())
                });
            }
            _ => self.write_stdout(true, || {
                use std::io::Write as _;
                writeln!(std::io::stdout().lock(), "{}", line(activity))
            }),
        }
    }

    /// The first error writing stdout, if any ([`Recorder::record`] stops
    /// writing there after it).
    #[must_use]
    pub fn stdout_failed(&self) -> Option<(std::io::ErrorKind, String)> {
        self.stdout_failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(|e| (e.kind(), e.to_string()))
    }

    /// Run `write` unless stdout already failed; count a line written
    /// (`line`), keep the first error.
    fn write_stdout(&self, line: bool, write: impl FnOnce() -> std::io::Result<()>) {
        let mut failed = self
            .stdout_failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if failed.is_some() {
            return;
        }
        match write() {
            Ok(()) => {
                if line {
                    self.printed.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(error) => *failed = Some(error),
        }
    }
}

/// How the reaper, the teardown jobs, the clock watch and the recorder tell
/// the console of a change: the reaper's status (`Event::Reaper`) and why
/// it is held (`Event::Pauses`, all reasons at once, sent only when one
/// changes). Cheap to clone; every clone shares one set of reasons. With
/// no channel (`reap --once`, tests) the reasons are kept and nothing is
/// sent.
#[derive(Debug, Clone, Default)]
pub struct Reporter {
    tx: Option<EventSender>,
    pauses: Arc<Mutex<PauseReasons>>,
}

impl Reporter {
    /// A reporter sending to `tx` (none: nowhere).
    #[must_use]
    pub fn new(tx: Option<EventSender>) -> Self {
        Self {
            tx,
            pauses: Arc::default(),
        }
    }

    /// The reaper thread's status (`Event::Reaper`).
    pub fn status(&self, status: ReaperStatus) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Event::Reaper(status));
        }
    }

    /// The wall clock's doubt as just checked (`None`: it looks right).
    pub fn clock(&self, doubt: Option<String>) {
        self.change(
            |p| &mut p.clock,
            doubt,
            |doubt| match doubt {
                Some(doubt) => tracing::warn!("{doubt}"),
                None => tracing::info!("the wall clock looks right"),
            },
        );
    }

    /// Why the store would not take the newest owed reap record, while
    /// one is owed (`None`: none is).
    pub fn unrecorded(&self, error: Option<String>) {
        self.change(
            |p| &mut p.unrecorded,
            error,
            |error| match error {
                Some(error) => tracing::warn!(
                    "reaper paused: failures cannot be recorded in the store ({error})"
                ),
                None => tracing::info!("the store accepts writes again"),
            },
        );
    }

    /// Why the audit trail does not take writes (`None`: it does).
    pub fn audit(&self, failure: Option<String>) {
        self.change(
            |p| &mut p.audit,
            failure,
            |error| match error {
                Some(error) => {
                    tracing::warn!("reaper paused: the audit trail cannot be written ({error})");
                }
                None => tracing::info!("the audit trail takes writes again"),
            },
        );
    }

    /// The reasons as last reported.
    #[must_use]
    pub fn pauses(&self) -> PauseReasons {
        self.pauses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Set one reason; when it changed, log the change (`said`) and send
    /// the whole set (only to a console: nothing is sent or logged
    /// without a channel, as `reap --once` says its pauses as Activity
    /// lines).
    fn change(
        &self,
        field: impl FnOnce(&mut PauseReasons) -> &mut Option<String>,
        value: Option<String>,
        said: impl FnOnce(Option<&str>),
    ) {
        let mut pauses = self
            .pauses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let slot = field(&mut pauses);
        if *slot == value {
            return;
        }
        slot.clone_from(&value);
        if let Some(tx) = &self.tx {
            said(value.as_deref());
            // Sent under the lock: two changes arrive in the order made.
            let _ = tx.send(Event::Pauses(pauses.clone()));
        }
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
