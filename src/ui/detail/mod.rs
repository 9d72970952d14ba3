//! The detail view's text: everything the store knows about one instance,
//! as a scrollable document of labelled lines.
//!
//! For every `Request::OpenDetail` (Enter, then every new snapshot while
//! the view is open) the I/O worker (`crate::console::io_worker`, on a
//! read-only connection of its own) reads the instance's rows
//! ([`crate::model::detail::InstanceDetail`]: definition,
//! `definition_dir`, `source_overrides`, checkpoints), probes its services
//! ([`crate::model::services::DetailView`]) and answers with
//! `Event::Answer`; a slow read never delays a frame.
//! [`DetailText::new`] sanitizes the answer once (multi-line text is split on
//! `\n` first, then each line is sanitized), so drawing a frame only
//! borrows. The lease, lock and reap
//! attempt come from the live snapshot, so their countdowns move with the
//! clock like the panes do.

pub(crate) mod cursor;
mod doc;
pub(crate) mod services;
pub mod text;
pub(crate) mod v14;

use std::borrow::Cow;

use unicode_width::UnicodeWidthStr;

use crate::model::envelope;
use crate::model::gc::GcPreview;
use crate::model::text::sanitize_short;
use crate::model::{Instance, Liveness, ReapAttempt, Status, time};

pub use doc::{MAX_BLOCK_LINES, MAX_DEFINITION_LINES, MAX_LINE_CHARS, Tone, Zone, relative, when};
pub use text::{CheckpointText, DetailText, json_lines, text_lines};

/// Indentation, borrowed by unlabelled lines.
const SPACES: &str = "                                ";

/// Width of the label column, leading and trailing spaces included.
pub const LABEL_WIDTH: usize = 20;

/// Where the store read for the detail view stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loaded {
    /// Asked for (`Request::OpenDetail`), not answered yet.
    Loading,
    /// Read and sanitized.
    Ready(Box<DetailText>),
    /// The store has no instance of that name (any more).
    Gone,
    /// The read failed (message as the console gave it; sanitized when
    /// drawn).
    Failed(String),
}

/// The open detail view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// The instance, as stored.
    pub name: String,
    /// The store read.
    pub loaded: Loaded,
    /// First drawn row shown (of the document wrapped to the pane's
    /// width).
    pub scroll: usize,
    /// The field under the cursor (`j`/`k`; `y` copies it): an index into
    /// the document's fields ([`DocLine::field`]), in document order.
    pub cursor: usize,
    /// Whether checkpoint payloads are shown (`p`).
    pub payloads: bool,
}

/// One line of the detail document: a label column (may be blank) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocLine<'a> {
    /// The label, padded to [`LABEL_WIDTH`] (empty for unlabelled lines).
    pub label: Cow<'a, str>,
    /// The text.
    pub text: Cow<'a, str>,
    /// How to draw the text.
    pub tone: Tone,
    /// What `y` copies when the cursor is on this line (`None`: the cursor
    /// skips it: headings, blank lines, hints, continuation lines).
    pub field: Option<Field<'a>>,
}

/// A field of the detail document: a labelled value the cursor stops on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// The section and the label, as the copy flash names it:
    /// `lease expires_at`, `lock holder`, `instance name`.
    pub name: String,
    /// The value copied: sanitized text as shown, without a relative time
    /// (`2026-11-29T13:58:06Z`, not `… (in 2m 53s)`); a block's lines
    /// joined with spaces.
    pub value: Cow<'a, str>,
}

impl DocLine<'_> {
    /// The whole line as plain text.
    #[must_use]
    pub fn plain(&self) -> String {
        format!("{}{}", self.label, self.text)
    }
}

struct Doc<'a> {
    lines: Vec<DocLine<'a>>,
    /// The current section's name for field names: its title up to ` (` or
    /// ` ·`, lower case (`lease`, `reap attempt`, `services`).
    section: String,
}

impl<'a> Doc<'a> {
    fn section(&mut self, title: String) {
        if !self.lines.is_empty() {
            self.blank();
        }
        let end = title
            .find(" (")
            .or_else(|| title.find(" ·"))
            .unwrap_or(title.len());
        self.section = title[..end].to_lowercase();
        self.lines.push(DocLine {
            label: Cow::Borrowed(""),
            text: Cow::Owned(format!(" {title}")),
            tone: Tone::Section,
            field: None,
        });
    }

    fn blank(&mut self) {
        self.lines.push(DocLine {
            label: Cow::Borrowed(""),
            text: Cow::Borrowed(""),
            tone: Tone::Plain,
            field: None,
        });
    }

    /// A labelled line; a field (its text copied) unless the label is
    /// empty or the text muted (`none`, `-`, hints).
    fn kv(&mut self, label: &str, text: impl Into<Cow<'a, str>>, tone: Tone) {
        let text = text.into();
        let value = (!label.is_empty() && tone != Tone::Muted).then(|| text.clone());
        self.kv_value(label, text, value, tone);
    }

    /// A labelled line whose field copies `value` (`None`: not a field).
    fn kv_value(
        &mut self,
        label: &str,
        text: impl Into<Cow<'a, str>>,
        value: Option<Cow<'a, str>>,
        tone: Tone,
    ) {
        let field = value.map(|value| Field {
            name: format!("{} {label}", self.section),
            value,
        });
        self.lines.push(DocLine {
            label: Cow::Owned(format!("   {label:<width$} ", width = LABEL_WIDTH - 4)),
            text: text.into(),
            tone,
            field,
        });
    }

    /// A time field: `text` shown, the bare `stamp` copied.
    fn kv_time(&mut self, label: &str, text: String, stamp: String, tone: Tone) {
        self.kv_value(label, text, Some(Cow::Owned(stamp)), tone);
    }

    /// A labelled block: the first line beside the label, the rest under it.
    fn block(&mut self, label: &str, lines: &'a [String], tone: Tone) {
        if lines.is_empty() {
            self.kv(label, "(empty)", Tone::Muted);
            return;
        }
        let joined: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
        let value: Cow<'a, str> = Cow::Owned(joined.join(" "));
        for (i, line) in lines.iter().enumerate() {
            if i == 0 {
                self.kv_value(label, line.as_str(), Some(value.clone()), tone);
            } else {
                self.indented(LABEL_WIDTH, line.as_str(), tone);
            }
        }
    }

    fn indented(&mut self, indent: usize, text: impl Into<Cow<'a, str>>, tone: Tone) {
        self.lines.push(DocLine {
            // Borrowed: a long definition costs no allocation per line.
            label: SPACES
                .get(..indent)
                .map_or_else(|| Cow::Owned(" ".repeat(indent)), Cow::Borrowed),
            text: text.into(),
            tone,
            field: None,
        });
    }
}

/// `text` padded to `width` columns; whole when wider (the row then leaves
/// its column rather than cut the value).
fn pad(text: &str, width: usize) -> String {
    let used = text.width();
    format!("{text}{}", " ".repeat(width.saturating_sub(used)))
}

/// The lines the instance's own rows contribute (from the snapshot).
fn instance_section<'a>(
    doc: &mut Doc<'a>,
    detail: &'a Detail,
    instance: Option<&Instance>,
    (now, zone): (i64, &Zone),
) {
    doc.section("Instance".into());
    doc.kv(
        "name",
        sanitize_short(&detail.name, MAX_LINE_CHARS),
        Tone::Plain,
    );
    let Some(instance) = instance else {
        doc.kv(
            "status",
            "not in the current snapshot (gone from the store?)",
            Tone::Warning,
        );
        return;
    };
    doc.kv(
        "substrate",
        sanitize_short(&instance.substrate, MAX_LINE_CHARS),
        Tone::Plain,
    );
    let (status, tone) = match &instance.status {
        Status::Active => ("active".to_owned(), Tone::Plain),
        Status::Tombstoned => ("tombstoned".to_owned(), Tone::Muted),
        Status::Other(other) => (
            format!(
                "? {} (unknown to this console)",
                sanitize_short(other, MAX_LINE_CHARS)
            ),
            Tone::Warning,
        ),
    };
    doc.kv("status", status, tone);
    if let Some(birth) = &instance.birth {
        doc.kv(
            "instance_id",
            sanitize_short(&birth.instance_id(), MAX_LINE_CHARS),
            Tone::Plain,
        );
        // `resource_namespace` (the label column is 16 wide).
        doc.kv(
            "namespace",
            sanitize_short(&birth.resource_namespace(), MAX_LINE_CHARS),
            Tone::Plain,
        );
    }
    if let Some(dirty) = instance.dirty {
        let (text, tone) = if dirty {
            ("yes: a dirty working tree was snapshotted", Tone::Warning)
        } else {
            ("no", Tone::Plain)
        };
        doc.kv("dirty", text, tone);
    }
    match instance.created_at {
        Some(at) => doc.kv_time(
            "created_at",
            when(at, now, zone),
            time::stamp(at, zone),
            Tone::Plain,
        ),
        None => doc.kv("created_at", "(not an integer)", Tone::Warning),
    }
    match instance.tombstoned_at {
        Some(at) => doc.kv_time(
            "tombstoned_at",
            when(at, now, zone),
            time::stamp(at, zone),
            Tone::Plain,
        ),
        None => doc.kv("tombstoned_at", "-", Tone::Muted),
    }
    for anomaly in &instance.anomalies {
        doc.kv(
            "anomaly",
            sanitize_short(anomaly, MAX_LINE_CHARS),
            Tone::Warning,
        );
    }
}

/// The Lease section; `failed_up`: the row is one a failed or cancelled
/// `up` left ([`crate::model::readiness::failed_up`]).
fn lease_section(
    doc: &mut Doc<'_>,
    instance: Option<&Instance>,
    failed_up: bool,
    (now, zone): (i64, &Zone),
) {
    doc.section("Lease".into());
    match instance.and_then(|i| i.lease) {
        Some(lease) => {
            doc.kv(
                "duration",
                format!(
                    "{} ({}s)",
                    time::span(lease.duration_secs),
                    lease.duration_secs
                ),
                Tone::Plain,
            );
            let expired = lease.expired(now);
            let tone = if expired { Tone::Error } else { Tone::Plain };
            let expires = if expired {
                format!(
                    "{} (expired {})",
                    time::stamp(lease.expires_at, zone),
                    time::ago(lease.expires_at, now)
                )
            } else {
                when(lease.expires_at, now, zone)
            };
            doc.kv_time(
                "expires_at",
                expires,
                time::stamp(lease.expires_at, zone),
                tone,
            );
            let remaining = time::span(lease.remaining(now));
            if expired {
                doc.kv(
                    "remaining",
                    format!("{remaining} (expired: a reaper candidate)"),
                    Tone::Error,
                );
            } else {
                doc.kv("remaining", remaining, Tone::Plain);
            }
        }
        None if failed_up => doc.kv(
            "lease",
            "none: a failed or cancelled up left this row; with no lease to \
             expire no reaper acts on it (stackless down NAME removes it)",
            Tone::Warning,
        ),
        None => {
            let why = match instance.map(|i| &i.status) {
                Some(Status::Tombstoned) => "none (down deleted it)",
                _ => "none",
            };
            doc.kv("lease", why, Tone::Muted);
        }
    }
}

fn lock_section(
    doc: &mut Doc<'_>,
    instance: Option<&Instance>,
    liveness: Option<&Liveness>,
    (now, zone): (i64, &Zone),
) {
    doc.section("Lock".into());
    let Some(lock) = instance.and_then(|i| i.lock.as_ref()) else {
        doc.kv("lock", "none", Tone::Muted);
        return;
    };
    doc.kv(
        "operation",
        sanitize_short(&lock.operation, MAX_LINE_CHARS),
        Tone::Plain,
    );
    let host = match lock.holder_host.as_deref() {
        None => " (store has no holder_host)".to_owned(),
        Some("") => " on ?".to_owned(),
        Some(host) => format!(" on {}", sanitize_short(host, MAX_LINE_CHARS)),
    };
    doc.kv(
        "holder",
        format!("pid {}{host}", lock.holder_pid),
        Tone::Plain,
    );
    doc.kv_time(
        "holder started",
        when(lock.holder_start_time, now, zone),
        time::stamp(lock.holder_start_time, zone),
        Tone::Plain,
    );
    let (text, tone) = match liveness {
        Some(Liveness::Alive) => (
            "alive: the holder runs on this host (held)".to_owned(),
            Tone::Warning,
        ),
        Some(Liveness::ForeignHost(_)) => (
            "foreign host: cannot be probed, counts as held".to_owned(),
            Tone::Warning,
        ),
        Some(stale @ (Liveness::StalePidGone | Liveness::StalePidReused)) => {
            (format!("{stale} (the lock does not block)"), Tone::Warning)
        }
        None => ("unprobed".to_owned(), Tone::Warning),
    };
    doc.kv("liveness", text, tone);
    doc.kv_time(
        "acquired_at",
        when(lock.acquired_at, now, zone),
        time::stamp(lock.acquired_at, zone),
        Tone::Plain,
    );
    match lock.claim_id.as_deref() {
        None => {}
        Some("") => doc.kv(
            "claim_id",
            "(empty: written before migration 6)",
            Tone::Muted,
        ),
        Some(claim) => doc.kv(
            "claim_id",
            sanitize_short(claim, MAX_LINE_CHARS),
            Tone::Plain,
        ),
    }
}

/// The Reap attempt section: the `reap_attempts` row, and its reason read
/// whole. The reason is an envelope when an earlier console wrote it;
/// `code: message` when this one did ([`envelope::stored_reason`]), the
/// whole envelope then coming from the last teardown's Activity (this
/// console's, or an earlier one's read back from `audit.jsonl`) when it
/// is the same failure.
fn reap_section<'a>(
    doc: &mut Doc<'a>,
    attempt: Option<&ReapAttempt>,
    last_teardown: Option<&crate::event::Activity>,
    now: i64,
    zone: &Zone,
) {
    doc.section("Reap attempt".into());
    let Some(attempt) = attempt else {
        doc.kv("reap", "none", Tone::Muted);
        return;
    };
    doc.kv("attempts", attempt.attempts.to_string(), Tone::Error);
    let (retry, tone) = if attempt.next_retry_at > now {
        (
            format!(
                "{} (retry {})",
                time::stamp(attempt.next_retry_at, zone),
                relative(attempt.next_retry_at, now)
            ),
            Tone::Warning,
        )
    } else {
        (
            format!(
                "{} (due: retried on the reaper's next tick)",
                time::stamp(attempt.next_retry_at, zone)
            ),
            Tone::Warning,
        )
    };
    doc.kv_time(
        "next_retry_at",
        retry,
        time::stamp(attempt.next_retry_at, zone),
        tone,
    );
    if let Some(error) = envelope::parse_error(&attempt.last_error) {
        error_fields(doc, &error);
        return;
    }
    let audited = last_teardown
        .filter(|last| last.kind == crate::event::ActivityKind::Failed)
        .filter(|last| envelope::stored_reason(&last.envelope) == attempt.last_error)
        .and_then(|last| envelope::parse_error(&last.envelope));
    if let Some(error) = audited {
        error_fields(doc, &error);
        doc.kv(
            "",
            "the store keeps code: message; the whole envelope is the last teardown's (audit.jsonl)",
            Tone::Muted,
        );
        return;
    }
    prose_reason(doc, &attempt.last_error);
}

/// An error envelope's fields: code, message, step, remediation.
fn error_fields(doc: &mut Doc<'_>, error: &envelope::EnvelopeError) {
    doc.kv(
        "code",
        sanitize_short(&error.code, MAX_LINE_CHARS),
        Tone::Error,
    );
    doc.kv(
        "message",
        sanitize_short(&error.message, MAX_LINE_CHARS),
        Tone::Error,
    );
    if let Some(step) = &error.step {
        doc.kv("step", sanitize_short(step, MAX_LINE_CHARS), Tone::Plain);
    }
    match &error.remediation {
        Some(r) => doc.kv(
            "remediation",
            sanitize_short(r, MAX_LINE_CHARS),
            Tone::Plain,
        ),
        None => doc.kv("remediation", "-", Tone::Muted),
    }
}

/// A `last_error` that is no envelope, as it is, and what it is.
fn prose_reason(doc: &mut Doc<'_>, last_error: &str) {
    let lines = text_lines(last_error, MAX_BLOCK_LINES);
    if lines.is_empty() {
        doc.kv("last_error", "(empty)", Tone::Muted);
    }
    for (i, line) in lines.into_iter().enumerate() {
        if i == 0 {
            doc.kv("last_error", line, Tone::Error);
        } else {
            doc.indented(LABEL_WIDTH, line, Tone::Error);
        }
    }
    let note = if matches!(last_error.trim(), "}" | "]") {
        "not an envelope: the stackless daemon keeps only the last line of `down --json`"
    } else {
        "not a JSON envelope"
    };
    doc.kv("", note, Tone::Muted);
}

fn checkpoints_section<'a>(doc: &mut Doc<'a>, text: &'a DetailText, payloads: bool, zone: &Zone) {
    let hint = if payloads {
        "p hides payloads"
    } else {
        "p shows payloads"
    };
    doc.section(format!("Checkpoints ({}) · {hint}", text.checkpoints.len()));
    if text.checkpoints.is_empty() {
        doc.kv("checkpoints", "none", Tone::Muted);
        return;
    }
    let widest = |f: fn(&CheckpointText) -> &str, min: usize, max: usize| {
        text.checkpoints
            .iter()
            .map(|c| f(c).width())
            .max()
            .unwrap_or(0)
            .clamp(min, max)
    };
    let step = widest(|c| &c.step_id, 4, 32);
    let kind = widest(|c| &c.resource_kind, 4, 20);
    let recorded: Vec<String> = text
        .checkpoints
        .iter()
        .map(|c| {
            c.recorded_at
                .map_or_else(|| "-".to_owned(), |at| time::stamp(at, zone))
        })
        .collect();
    let recorded_width = recorded.iter().map(String::len).max().unwrap_or(0).max(8);
    doc.indented(
        3,
        format!(
            "{}  {}  {}  RESOURCE",
            pad("STEP", step),
            pad("KIND", kind),
            pad("RECORDED", recorded_width)
        ),
        Tone::Muted,
    );
    for (c, recorded) in text.checkpoints.iter().zip(&recorded) {
        doc.indented(
            3,
            format!(
                "{}  {}  {}  {}",
                pad(&c.step_id, step),
                pad(&c.resource_kind, kind),
                pad(recorded, recorded_width),
                c.resource_id
            ),
            Tone::Plain,
        );
        if payloads {
            for line in &c.payload {
                doc.indented(6, line.as_str(), Tone::Code);
            }
        }
    }
}

/// Whether `name`'s row in `snapshot` is one a failed or cancelled `up`
/// left ([`crate::model::readiness::failed_up`]).
fn failed_up(snapshot: &crate::model::Snapshot, name: &str) -> bool {
    snapshot.instance(name).is_some_and(|i| {
        crate::model::readiness::failed_up(
            i,
            snapshot.pending_operation(name).is_some(),
            snapshot.lock_liveness(name).is_some_and(Liveness::held),
        )
    })
}

/// The whole detail document for `detail`, with the instance's live rows
/// from `snapshot` (the instance, its lock's liveness, its reap attempt,
/// its pending operation, the store's generation: who collects a
/// tombstone) and the last teardown this console ran on it
/// (`last_teardown`, from Activity) at `now`, times shown in `zone`.
#[must_use]
pub fn document<'a>(
    detail: &'a Detail,
    snapshot: &crate::model::Snapshot,
    last_teardown: Option<&crate::event::Activity>,
    (now, zone): (i64, &Zone),
) -> Vec<DocLine<'a>> {
    let name = detail.name.as_str();
    let instance = snapshot.instance(name);
    let liveness = snapshot.lock_liveness(name);
    let attempt = snapshot.reap_attempt(name);
    let mut doc = Doc {
        lines: Vec::new(),
        section: String::new(),
    };
    instance_section(&mut doc, detail, instance, (now, zone));
    if let Some(gc) = instance.and_then(|i| GcPreview::of(i, snapshot.generation)) {
        doc.kv("GC", gc.text(now, zone), Tone::Muted);
    }
    match &detail.loaded {
        Loaded::Ready(text) => {
            let dir = if text.definition_dir.is_empty() {
                Cow::Borrowed("(not recorded)")
            } else {
                Cow::Borrowed(text.definition_dir.as_str())
            };
            doc.kv("definition_dir", dir, Tone::Plain);
            doc.block("source_overrides", &text.source_overrides, Tone::Code);
        }
        Loaded::Loading => doc.kv("definition_dir", "reading the store…", Tone::Muted),
        Loaded::Gone => doc.kv(
            "definition_dir",
            "the store has no such instance",
            Tone::Warning,
        ),
        Loaded::Failed(message) => doc.kv(
            "definition_dir",
            format!(
                "cannot read the store: {}",
                sanitize_short(message, MAX_LINE_CHARS)
            ),
            Tone::Error,
        ),
    }
    lease_section(&mut doc, instance, failed_up(snapshot, name), (now, zone));
    lock_section(&mut doc, instance, liveness, (now, zone));
    reap_section(&mut doc, attempt, last_teardown, now, zone);
    if let Some(last) = last_teardown {
        doc.section(if last.restored {
            "Last teardown (by an earlier console, from audit.jsonl)".into()
        } else {
            "Last teardown (by this console)".into()
        });
        for (label, text, tone) in crate::ui::detail::services::last_teardown(last, now, zone) {
            doc.kv(&label, text, tone);
        }
    }
    if let Loaded::Ready(text) = &detail.loaded {
        if !text.services.is_empty() {
            doc.section(format!("Services ({})", text.services.len()));
            let active = instance.is_some_and(|i| i.status == Status::Active);
            for (label, line, tone) in
                crate::ui::detail::services::lines(&text.services, active, now, text.proxy_port)
            {
                doc.kv(&label, line, tone);
            }
        }
        checkpoints_section(&mut doc, text, detail.payloads, zone);
        for (title, lines) in &text.birth_sections {
            doc.section(title.clone());
            for line in lines {
                doc.indented(3, line.as_str(), Tone::Plain);
            }
        }
        doc.section(format!("Definition ({} lines)", text.definition.len()));
        if text.definition.is_empty() {
            doc.kv("definition", "(empty)", Tone::Muted);
        }
        for line in &text.definition {
            doc.indented(3, line.as_str(), Tone::Code);
        }
    }
    doc.lines
}

#[cfg(test)]
mod tests;
