//! The machine-readable model of what the panes show, built purely from a
//! [`Snapshot`] and `now` (unix seconds). Serialized by `stackless-tui
//! snapshot --json`; its shape is versioned by [`SCHEMA_VERSION`].

use serde::Serialize;

use crate::model::envelope::{EnvelopeError, parse_error, read_reason};
use crate::model::name::is_dns_safe;
use crate::model::protocol::rows::LeaseRow;
use crate::model::time::{lease_text, retry_text};
use crate::model::{Instance, Operation, Snapshot};
use crate::reaper::clock::ClockDoubt;

mod nested;
mod rules;
mod table;
use nested::Nested;
pub(crate) use rules::Rules;
pub(crate) use table::{HEADER, widen, write_line};
pub use table::{Stages, stage_cell, stage_text};
pub use table::{TableStream, table, write_table, write_table_staged};

/// The version of this document's shape. Bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole document.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The store file.
    pub store: String,
    /// The store's `PRAGMA user_version`.
    pub store_user_version: i64,
    /// The time countdowns were evaluated at (unix seconds).
    pub now: i64,
    /// Every instance, by name.
    pub instances: Vec<InstanceReport>,
    /// The controller's operations (v14; empty before v8): every pending
    /// one (queued, running; oldest first), then the
    /// [`crate::model::operation::FINISHED_SHOWN`] most recent finished ones
    /// (newest first).
    pub operations: Vec<OperationReport>,
}

/// One `operations` row (never its `request_json`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct OperationReport {
    /// The operation id (a uuid).
    pub id: String,
    /// The instance name at submit time.
    pub instance: String,
    /// `up`, `down`, `verify`, `gc`.
    pub verb: String,
    /// `queued`, `running`, `succeeded`, `failed`, `cancelled`,
    /// `interrupted`.
    pub status: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
    /// The parsed `error_json` (schema-2 error object: `code`, `message`,
    /// `remediation`, ...), `null` when there is none or it does not parse.
    pub error: Option<EnvelopeError>,
    /// `error_json` as stored (sanitized, at most 2,000 characters) when it
    /// is there but does not parse; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_unparsed: Option<String>,
}

/// Which birth an instance row is (v7+): the stream's birth object
/// (docs/protocol.md "Instance rows"), one shape in both.
pub use crate::model::protocol::rows::BirthRow as BirthReport;

/// One instance.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct InstanceReport {
    /// The name as stored (JSON-escaped; may be hostile).
    pub name: String,
    /// Whether the name is DNS-safe (only such names are ever acted upon).
    pub dns_safe: bool,
    /// `local`, `render`, `vercel`, ...
    pub substrate: String,
    /// `active`, `tombstoned`, or what the store says.
    pub status: String,
    /// Unix seconds.
    pub created_at: Option<i64>,
    /// Unix seconds.
    pub tombstoned_at: Option<i64>,
    /// The lease, when it has one.
    pub lease: Option<LeaseReport>,
    /// The operation lock, when one is held.
    pub lock: Option<LockReport>,
    /// The reap backoff, when a teardown has failed.
    pub reap_attempt: Option<AttemptReport>,
    /// What the reaper would do now: `reap`, `skip: locked`,
    /// `skip: operation pending`, `wait: backoff`, `refuse: not DNS-safe`,
    /// or `null` when it is not on the worklist (lease not expired,
    /// tombstoned).
    pub reaper: Option<String>,
    /// `reaper` as a machine value: `reap`, `skip_locked`, `skip_pending`,
    /// `wait_backoff`, `refuse_name`, `paused_clock` (the wall clock looks
    /// wrong: the reaper would not act), or `null` where `reaper` is.
    pub reaper_action: Option<&'static str>,
    /// The birth (v7+, stackless 0.4.0), `null` before.
    pub birth: Option<BirthReport>,
    /// `dirty` (v5+), `null` before.
    pub dirty: Option<bool>,
    /// For a tombstone: when it becomes due for GC and who collects it
    /// ([`crate::model::gc::GcPreview`]); absent for any other row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc: Option<GcReport>,
    /// An active row left by a failed or cancelled `up`: no lease, nothing
    /// pending, no live lock (`crate::model::readiness::failed_up`); no
    /// reaper acts on it (the console's row: `failed up: no lease`).
    pub failed_up: bool,
    /// The services whose process stackless recorded (a `start:<service>`
    /// checkpoint of kind `process`), by name; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceReport>,
}

/// One service process: what the checkpoint records, probed (read back
/// from a recording's `services` line by `snapshot --at`).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct ServiceReport {
    /// The service name.
    pub name: String,
    /// The pid stackless started.
    pub pid: Option<i64>,
    /// Whether that process still runs (pid plus start time, probed on
    /// this machine when the snapshot was taken).
    pub alive: Option<bool>,
    /// `http://<host>:<proxy port>` routed to it through the stackless
    /// proxy, as stackless 0.4.0 `status` reports it
    /// ([`crate::model::services::Service::origin`]); `null` when no host
    /// is, or its process is dead.
    pub origin: Option<String>,
    /// The port it listens on (127.0.0.1).
    pub port: Option<u16>,
    /// Its stage as stackless 0.4.0's `list` and `status` derive it
    /// (`crate::model::readiness::stage`): `healthy`, `started`,
    /// `drifted`, `unhealthy` (present and unready: a failed `up` that
    /// kept its lease, its health check failing), `unknown`, `absent`.
    pub stage: String,
    /// `<state_dir>/logs/<dir>/<service>.log` (`null` for a name that is
    /// not DNS-safe, and for a service placed off this machine: see
    /// `logs`).
    pub log_path: Option<String>,
    /// Where the logs are when not on this disk, e.g. `kept by render, not
    /// on this disk` (the detail view's rule: a service placed on another
    /// provider than `local`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs: Option<String>,
}

impl ServiceReport {
    /// The report of one probed service, its origin on `proxy_port`, its
    /// stage under an instance `tombstoned` or not.
    #[must_use]
    pub fn new(
        service: &crate::model::services::Service,
        proxy_port: u16,
        tombstoned: bool,
    ) -> Self {
        let elsewhere = service.log == crate::model::services::LogState::Elsewhere;
        Self {
            name: service.name.clone(),
            pid: service.start.as_ref().map(|s| s.pid),
            alive: service.process.map(|p| !p.dead()),
            origin: service.origin(proxy_port),
            port: service.start.as_ref().and_then(|s| s.port),
            stage: crate::model::readiness::service_stage(service, tombstoned)
                .as_str()
                .to_owned(),
            log_path: service.log_path.clone().filter(|_| !elsewhere),
            logs: elsewhere.then(|| format!("kept by {}, not on this disk", service.runs_on)),
        }
    }
}

/// When a tombstone becomes due for GC (D14: `tombstoned_at` + 7 days)
/// and who collects it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GcReport {
    /// Unix seconds.
    pub due_at: i64,
    /// `due_at <= now`.
    pub due: bool,
    /// Seconds until it is due, 0 once due.
    pub due_in_secs: i64,
    /// `controller` (stackless 0.4.0's, a `gc` operation), `reaper`
    /// (stackless's or this console's, schemas 4 and 5) or `stackless`
    /// (another schema: this console does not collect).
    pub collected_by: &'static str,
    /// The preview, for the table's words.
    #[serde(skip)]
    pub preview: crate::model::gc::GcPreview,
}

impl GcReport {
    fn new(preview: crate::model::gc::GcPreview, now: i64) -> Self {
        Self {
            due_at: preview.due_at,
            due: preview.due(now),
            due_in_secs: preview.due_in(now),
            collected_by: preview.collector.as_str(),
            preview,
        }
    }
}

/// A lease: the stream's lease object (docs/protocol.md "Instance rows",
/// `duration_secs` and `expires_at`: one shape in both) and what moves
/// with the clock.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LeaseReport {
    /// The lease as the stream sends it.
    #[serde(flatten)]
    pub lease: LeaseRow,
    /// Seconds left, never negative.
    pub remaining_secs: i64,
    /// Seconds since it expired (`now - expires_at`), 0 while it runs.
    pub overdue_secs: i64,
    /// `expires_at <= now`.
    pub expired: bool,
    /// As the pane shows it: `4h 12m left`, `expired 3m 12s ago`.
    pub text: String,
}

/// An operation lock.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LockReport {
    /// `up`, `down`, `verify`, ...
    pub operation: String,
    /// As stored.
    pub holder_pid: i64,
    /// Unix seconds.
    pub holder_start_time: i64,
    /// `null` for stores older than migration 4.
    pub holder_host: Option<String>,
    /// Unix seconds.
    pub acquired_at: i64,
    /// `alive`, `stale: pid gone`, `stale: pid reused`, `foreign host`.
    pub liveness: String,
    /// `liveness` as a machine value: `alive`, `stale_pid_gone`,
    /// `stale_pid_reused`, `foreign_host`, `unknown` (not probed).
    pub liveness_state: &'static str,
    /// Whether it blocks the reaper.
    pub held: bool,
}

/// A reap backoff.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AttemptReport {
    /// Consecutive failures.
    pub attempts: i64,
    /// As stored.
    pub last_error: String,
    /// The code: the envelope's, when `last_error` is an envelope, or the
    /// code of a one-line `code: message` (what this console writes).
    pub code: Option<String>,
    /// `code: message`, or the raw text.
    pub summary: String,
    /// The envelope's remediation.
    pub remediation: Option<String>,
    /// Unix seconds.
    pub next_retry_at: i64,
    /// `next_retry_at <= now`.
    pub due: bool,
    /// `retry in 1m 04s` or `due`.
    pub text: String,
}

/// Build the report without services. Pure.
#[must_use]
pub fn build(snapshot: &Snapshot, now: i64, store: &str) -> Report {
    build_with(
        snapshot,
        now,
        store,
        &std::collections::HashMap::new(),
        None,
    )
}

/// Build the report, with each instance's probed `services` (by instance
/// name; see `crate::store::services`). Pure. The whole document in
/// memory: `snapshot --json` streams it instead ([`write_json`]).
#[must_use]
pub fn build_with(
    snapshot: &Snapshot,
    now: i64,
    store: &str,
    services: &std::collections::HashMap<String, Vec<ServiceReport>>,
    clock: Option<&ClockDoubt>,
) -> Report {
    let rules = Rules::new(snapshot, clock);
    Report {
        schema_version: SCHEMA_VERSION,
        store: store.to_owned(),
        store_user_version: snapshot.generation.user_version,
        now,
        instances: snapshot
            .instances
            .iter()
            .map(|instance| {
                let mut report = instance_report(snapshot, &rules, instance, now);
                report.services = services.get(&instance.name).cloned().unwrap_or_default();
                report
            })
            .collect(),
        operations: snapshot.operations.iter().map(operation_report).collect(),
    }
}

/// Services probed per instance name.
pub type Services = std::collections::HashMap<String, Vec<ServiceReport>>;

/// Write the JSON document of [`build_with`] to `out`, pretty-printed and
/// ending with a newline, byte for byte what `serde_json::to_string_pretty`
/// makes of it, but one instance at a time: the document is never held
/// whole (at 100,000 instances it would be about 120 MB).
///
/// # Errors
/// Writing to `out` failed.
pub fn write_json<W: std::io::Write>(
    // Generic, not `dyn`: serde's many small writes (a key, a colon, an
    // indent) then inline into the buffer (measured: a dynamic call each
    // was a fifth of `snapshot --json` at 100,000 instances).
    out: &mut W,
    snapshot: &Snapshot,
    now: i64,
    store: &str,
    services: &mut ServicesOf<'_>,
    clock: Option<&ClockDoubt>,
) -> serde_json::Result<()> {
    let document = Streamed {
        snapshot,
        rules: Rules::new(snapshot, clock),
        now,
        store,
        services: std::cell::RefCell::new(services),
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    out.write_all(b"\n").map_err(serde_json::Error::io)
}

/// [`write_json`]'s document written as a streamed snapshot comes
/// (`crate::store::Store::stream_snapshot`): the head (every field before
/// `instances`) from the snapshot's head, then each instance as it is
/// read, then the operations; byte for byte [`write_json`]'s. Only one
/// instance is held at a time.
pub struct JsonStream<'a, W: std::io::Write> {
    out: &'a mut W,
    store: &'a str,
    now: i64,
    clock: Option<&'a ClockDoubt>,
    /// Built from the head.
    rules: Option<Rules>,
    /// Instances written so far.
    written: usize,
    /// The head's and the tail's text before they are cut into `out`.
    scratch: Vec<u8>,
}

/// The fields before `instances`, in [`Report`]'s order.
#[derive(Serialize)]
struct Head<'a> {
    schema_version: u32,
    store: &'a str,
    store_user_version: i64,
    now: i64,
}

/// The field after `instances`.
#[derive(Serialize)]
struct Tail {
    operations: Vec<OperationReport>,
}

impl<'a, W: std::io::Write> JsonStream<'a, W> {
    /// A document of `store` (the path shown) at `now` (unix seconds),
    /// the reaper paused by `clock` when it is doubted, written to `out`.
    pub fn new(out: &'a mut W, store: &'a str, now: i64, clock: Option<&'a ClockDoubt>) -> Self {
        Self {
            out,
            store,
            now,
            clock,
            rules: None,
            written: 0,
            scratch: Vec::with_capacity(4096),
        }
    }

    /// Everything before the first instance, from `head` (the snapshot
    /// without instances).
    ///
    /// # Errors
    /// Writing failed.
    pub fn head(&mut self, head: &Snapshot) -> std::io::Result<()> {
        self.rules = Some(Rules::new(head, self.clock));
        self.scratch.clear();
        serde_json::to_writer_pretty(
            &mut self.scratch,
            &Head {
                schema_version: SCHEMA_VERSION,
                store: self.store,
                store_user_version: head.generation.user_version,
                now: self.now,
            },
        )?;
        // `{ ... "now": N\n}` without its closing line.
        let open = self.scratch.strip_suffix(b"\n}").unwrap_or(&self.scratch);
        self.out.write_all(open)?;
        self.out.write_all(b",\n  \"instances\": [")
    }

    /// One instance of `head` (its liveness in `head`) with its probed
    /// `services`, indented as an element of `instances`.
    ///
    /// # Errors
    /// Writing failed.
    pub fn instance(
        &mut self,
        head: &Snapshot,
        instance: &Instance,
        services: Vec<ServiceReport>,
    ) -> std::io::Result<()> {
        let Some(rules) = &self.rules else {
            return Err(std::io::Error::other("an instance before the head"));
        };
        let mut report = instance_report(head, rules, instance, self.now);
        report.services = services;
        self.out.write_all(if self.written == 0 {
            b"\n    "
        } else {
            b",\n    "
        })?;
        self.written += 1;
        // Serialized straight into `out`, as an element of `instances`
        // (two levels in) of the pretty document.
        let mut serializer = serde_json::Serializer::with_formatter(&mut *self.out, Nested::at(2));
        report.serialize(&mut serializer)?;
        Ok(())
    }

    /// The end of `instances`, the operations of `head`, the document's
    /// end and its newline.
    ///
    /// # Errors
    /// Writing failed.
    pub fn finish(&mut self, head: &Snapshot) -> std::io::Result<()> {
        self.out
            .write_all(if self.written == 0 { b"]" } else { b"\n  ]" })?;
        self.scratch.clear();
        serde_json::to_writer_pretty(
            &mut self.scratch,
            &Tail {
                operations: head.operations.iter().map(operation_report).collect(),
            },
        )?;
        // `{\n  "operations": ...\n}` after its opening brace.
        let rest = self.scratch.strip_prefix(b"{").unwrap_or(&self.scratch);
        self.out.write_all(b",")?;
        self.out.write_all(rest)?;
        self.out.write_all(b"\n")
    }
}

/// The document of [`build_with`], serialized from the snapshot as it goes
/// (same fields, same order as [`Report`]).
struct Streamed<'a> {
    snapshot: &'a Snapshot,
    rules: Rules,
    now: i64,
    store: &'a str,
    /// Each instance's services, asked for in name order (the caller may
    /// read them a batch at a time).
    services: std::cell::RefCell<&'a mut ServicesOf<'a>>,
}

/// Where [`write_json`] gets an instance's services; an `Err` (its
/// message) stops the document, unfinished.
pub type ServicesOf<'a> = dyn FnMut(&Instance) -> Result<Vec<ServiceReport>, String> + 'a;

impl Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        struct Instances<'b, 'c>(&'b Streamed<'c>);
        impl Serialize for Instances<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let d = self.0;
                // Each instance's services asked for as it is written (the
                // caller reads them a batch at a time, bounding memory); flattened,
                // the same fields in the same order as [`InstanceReport`]'s.
                use serde::ser::{Error as _, SerializeSeq as _};
                let mut seq = serializer.serialize_seq(Some(d.snapshot.instances.len()))?;
                for instance in &d.snapshot.instances {
                    let services =
                        (*d.services.borrow_mut())(instance).map_err(S::Error::custom)?;
                    seq.serialize_element(&WithServices {
                        report: instance_report(d.snapshot, &d.rules, instance, d.now),
                        services,
                    })?;
                }
                seq.end()
            }
        }
        struct Operations<'b>(&'b [Operation]);
        impl Serialize for Operations<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(operation_report))
            }
        }
        let mut s = serializer.serialize_struct("Report", 6)?;
        s.serialize_field("schema_version", &SCHEMA_VERSION)?;
        s.serialize_field("store", self.store)?;
        s.serialize_field("store_user_version", &self.snapshot.generation.user_version)?;
        s.serialize_field("now", &self.now)?;
        s.serialize_field("instances", &Instances(self))?;
        s.serialize_field("operations", &Operations(&self.snapshot.operations))?;
        s.end()
    }
}

/// One instance's report with its services (`services` of `report` left
/// empty, so skipped).
#[derive(Serialize)]
struct WithServices {
    #[serde(flatten)]
    report: InstanceReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    services: Vec<ServiceReport>,
}

/// One instance's report, without its services (empty).
fn instance_report(
    snapshot: &Snapshot,
    rules: &Rules,
    instance: &Instance,
    now: i64,
) -> InstanceReport {
    let looked = rules.look(snapshot, instance);
    let liveness = looked.liveness;
    let reaper = rules.reaper(instance, now, &looked);
    InstanceReport {
        name: instance.name.clone(),
        dns_safe: is_dns_safe(&instance.name),
        substrate: instance.substrate.to_string(),
        status: instance.status.as_str().to_owned(),
        created_at: instance.created_at,
        tombstoned_at: instance.tombstoned_at,
        lease: instance.lease.map(|l| LeaseReport {
            lease: LeaseRow::of(l),
            remaining_secs: l.remaining(now),
            overdue_secs: now.saturating_sub(l.expires_at).max(0),
            expired: l.expired(now),
            text: lease_text(l.expires_at, now),
        }),
        lock: instance.lock.as_ref().map(|l| LockReport {
            operation: l.operation.clone(),
            holder_pid: l.holder_pid,
            holder_start_time: l.holder_start_time,
            holder_host: l.holder_host.clone(),
            acquired_at: l.acquired_at,
            liveness: liveness.map_or_else(|| "unknown".to_owned(), ToString::to_string),
            liveness_state: crate::model::protocol::rows::liveness_state(liveness),
            held: liveness.is_some_and(crate::model::Liveness::held),
        }),
        reap_attempt: looked.attempt.map(|a| {
            let reason = read_reason(&a.last_error);
            AttemptReport {
                attempts: a.attempts,
                last_error: a.last_error.clone(),
                code: reason.code.or_else(|| {
                    crate::model::envelope::line_code(&a.last_error).map(str::to_owned)
                }),
                summary: reason.summary,
                remediation: reason.remediation,
                next_retry_at: a.next_retry_at,
                due: a.next_retry_at <= now,
                text: retry_text(a.next_retry_at, now),
            }
        }),
        reaper: reaper.map(|(text, _)| text.to_owned()),
        reaper_action: reaper.map(|(_, action)| action),
        birth: instance.birth.as_ref().map(BirthReport::of),
        dirty: instance.dirty,
        gc: crate::model::gc::GcPreview::of(instance, snapshot.generation)
            .map(|preview| GcReport::new(preview, now)),
        failed_up: looked.failed_up(instance),
        services: Vec::new(),
    }
}

fn operation_report(op: &Operation) -> OperationReport {
    OperationReport {
        id: op.id.clone(),
        instance: op.instance.clone(),
        verb: op.verb.clone(),
        status: op.status.as_str().to_owned(),
        created_at: op.created_at,
        updated_at: op.updated_at,
        error: op.error_json.as_deref().and_then(parse_error),
        error_unparsed: op
            .error_json
            .as_deref()
            .filter(|text| parse_error(text).is_none() && !text.trim().is_empty())
            .map(|text| crate::model::text::sanitize_short(text.trim(), 2_000)),
    }
}

#[cfg(test)]
mod tests;
