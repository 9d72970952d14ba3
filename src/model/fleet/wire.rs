//! One line of an agent's stream (docs/protocol.md "The out-stream") read
//! straight into typed values, on the connection's reader thread: a
//! snapshot's rows become [`Instance`], [`Operation`] and [`Backoff`]
//! values without a JSON tree in between (a tree of 2,000 rows is five
//! times their size, and 50 hosts' first snapshots arrive at once).
//! Unknown fields and message types are ignored (a new field within
//! protocol 1); a known message whose fields have the wrong types is not
//! the protocol (`Err`, and the host is failed).

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::rows::{Backoff, Gc, Instance, InstanceKey, Lease, Lock, Operation};
use super::{Hello, Reaper};

/// One message of an agent's stream, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// `hello`.
    Hello {
        /// What the view keeps of it.
        hello: Hello,
        /// `hello.reaper`.
        reaper: Option<Reaper>,
        /// `hello.protocol` (the link's check).
        protocol: Option<u64>,
        /// `hello.heartbeat_secs` (the link's silence limit).
        heartbeat_secs: Option<i64>,
    },
    /// `reaper`.
    Reaper(Reaper),
    /// `reset`: the next group is a whole snapshot.
    Reset,
    /// `rows`.
    Rows(Rows),
    /// `synced`, with its `at` (unix seconds).
    Synced(Option<i64>),
    /// `banner`: id, level, text.
    Banner(String, String, String),
    /// `banner_cleared`: its id.
    BannerCleared(String),
    /// `activity`.
    Activity(ActivityLine),
    /// `reply`: its id, `ok`, the message (or the error's), the whole line.
    Reply(Value, bool, String, Value),
    /// `log`.
    Log(LogLine),
    /// `logs_end`: the logs id and the reason.
    LogsEnd(Value, String),
    /// `heartbeat`.
    Heartbeat,
    /// A type this view does not know.
    Other,
}

/// One `rows` message, typed by its table.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    /// `instances`: rows upserted, keys removed.
    Instances(Vec<Instance>, Vec<InstanceKey>),
    /// `operations`: rows upserted, ids removed.
    Operations(Vec<Operation>, Vec<Value>),
    /// `backoffs`: rows upserted, instance names removed.
    Backoffs(Vec<Backoff>, Vec<String>),
    /// A table this view does not know.
    Other,
}

impl Rows {
    /// How many rows it upserts and removes.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Instances(up, down) => up.len() + down.len(),
            Self::Operations(up, down) => up.len() + down.len(),
            Self::Backoffs(up, down) => up.len() + down.len(),
            Self::Other => 0,
        }
    }

    /// It upserts and removes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One `activity` message.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ActivityLine {
    /// When (unix seconds).
    #[serde(default)]
    pub at: i64,
    /// `reaper`, `operator`, `controller`, `observed`.
    #[serde(default)]
    pub actor: String,
    /// The instance, as sent.
    #[serde(default)]
    pub instance: String,
    /// The pane's word.
    #[serde(default)]
    pub kind: String,
    /// The rest.
    #[serde(default)]
    pub detail: String,
}

/// One `log` message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LogLine {
    /// The `logs` command's id.
    #[serde(default)]
    pub logs: Value,
    /// The service.
    #[serde(default)]
    pub service: String,
    /// The line.
    #[serde(default)]
    pub text: String,
    /// The continuation of the last line.
    #[serde(default)]
    pub cont: bool,
}

#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "type", default)]
    kind: String,
}

#[derive(Deserialize)]
struct HelloWire {
    protocol: Option<u64>,
    heartbeat_secs: Option<i64>,
    #[serde(default)]
    host: String,
    #[serde(default)]
    schema: i64,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    version: String,
    reaper: Option<ReaperWire>,
    #[serde(default)]
    teardown: Vec<String>,
    stackless: Option<String>,
}

#[derive(Deserialize)]
struct ReaperWire {
    #[serde(default)]
    by: String,
    pid: Option<i64>,
    #[serde(default)]
    paused: bool,
    #[serde(default)]
    text: String,
}

impl From<ReaperWire> for Reaper {
    fn from(wire: ReaperWire) -> Self {
        Self {
            by: wire.by,
            pid: wire.pid,
            paused: wire.paused,
            text: wire.text,
        }
    }
}

#[derive(Deserialize)]
struct RowsWire<'a> {
    #[serde(default)]
    table: String,
    #[serde(borrow)]
    upsert: Option<&'a RawValue>,
    #[serde(borrow)]
    remove: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct BirthWire {
    instance_id: String,
    #[serde(default)]
    resource_namespace: Option<String>,
}

#[derive(Deserialize)]
struct LockWire {
    #[serde(default)]
    operation: String,
    #[serde(default)]
    holder_pid: i64,
    holder_host: Option<String>,
    liveness_state: Option<String>,
    held: Option<bool>,
}

#[derive(Deserialize)]
struct GcWire {
    due_at: i64,
    #[serde(default)]
    collected_by: String,
}

#[derive(Deserialize)]
struct InstanceWire {
    name: String,
    birth: Option<BirthWire>,
    #[serde(default)]
    dns_safe: bool,
    #[serde(default)]
    substrate: String,
    #[serde(default)]
    status: String,
    created_at: Option<i64>,
    tombstoned_at: Option<i64>,
    lease: Option<Lease>,
    lock: Option<LockWire>,
    #[serde(default)]
    failed_up: bool,
    #[serde(default)]
    services_dead: i64,
    gc: Option<GcWire>,
}

impl From<InstanceWire> for Instance {
    fn from(wire: InstanceWire) -> Self {
        let (birth, resource_namespace) = wire.birth.map_or((None, None), |b| {
            (Some(b.instance_id), b.resource_namespace)
        });
        Self {
            dns_safe: wire.dns_safe && crate::model::name::is_dns_safe(&wire.name),
            key: InstanceKey {
                name: wire.name,
                birth,
            },
            resource_namespace,
            substrate: wire.substrate,
            status: wire.status,
            created_at: wire.created_at,
            tombstoned_at: wire.tombstoned_at,
            lease: wire.lease,
            lock: wire.lock.map(|lock| Lock {
                operation: lock.operation,
                holder_pid: lock.holder_pid,
                holder_host: lock.holder_host,
                liveness: lock.liveness_state.unwrap_or_else(|| "unknown".to_owned()),
                held: lock.held.unwrap_or(true),
            }),
            failed_up: wire.failed_up,
            services_dead: wire.services_dead,
            gc: wire.gc.map(|gc| Gc {
                due_at: gc.due_at,
                collected_by: gc.collected_by,
            }),
        }
    }
}

#[derive(Deserialize)]
struct InstanceKeyWire {
    name: String,
    birth: Option<String>,
}

#[derive(Deserialize)]
struct ErrorWire {
    code: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct OperationWire {
    id: Value,
    #[serde(default)]
    instance: String,
    #[serde(default)]
    verb: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    created_at: i64,
    #[serde(default)]
    updated_at: i64,
    error: Option<ErrorWire>,
    error_unparsed: Option<String>,
}

impl From<OperationWire> for Operation {
    fn from(wire: OperationWire) -> Self {
        let error = match wire.error {
            Some(error) => {
                let code = error.code.unwrap_or_default();
                let message = error.message.unwrap_or_default();
                Some(match (code.is_empty(), message.is_empty()) {
                    (false, false) => format!("{code}: {message}"),
                    (false, true) => code,
                    _ => message,
                })
            }
            None => wire.error_unparsed,
        };
        Self {
            id: wire.id,
            instance: wire.instance,
            verb: wire.verb,
            status: wire.status,
            created_at: wire.created_at,
            updated_at: wire.updated_at,
            error,
        }
    }
}

#[derive(Deserialize)]
struct IdWire {
    id: Value,
}

#[derive(Deserialize)]
struct BackoffWire {
    instance: String,
    #[serde(default)]
    attempts: i64,
    summary: Option<String>,
    last_error: Option<String>,
    remediation: Option<String>,
    #[serde(default)]
    next_retry_at: i64,
}

impl From<BackoffWire> for Backoff {
    fn from(wire: BackoffWire) -> Self {
        Self {
            instance: wire.instance,
            attempts: wire.attempts,
            summary: wire.summary.or(wire.last_error).unwrap_or_default(),
            remediation: wire.remediation,
            next_retry_at: wire.next_retry_at,
        }
    }
}

#[derive(Deserialize)]
struct InstanceNameWire {
    instance: String,
}

#[derive(Deserialize)]
struct SyncedWire {
    at: Option<i64>,
}

#[derive(Deserialize)]
struct BannerWire {
    #[serde(default)]
    id: String,
    #[serde(default)]
    level: String,
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct LogsEndWire {
    #[serde(default)]
    logs: Value,
    #[serde(default)]
    reason: String,
}

/// A list of `T` from `raw` (absent: empty), each converted.
fn list<'a, W: Deserialize<'a>, T: From<W>>(
    raw: Option<&'a RawValue>,
) -> serde_json::Result<Vec<T>> {
    match raw {
        None => Ok(Vec::new()),
        Some(raw) => {
            let wires: Vec<W> = serde_json::from_str(raw.get())?;
            Ok(wires.into_iter().map(T::from).collect())
        }
    }
}

impl From<InstanceKeyWire> for InstanceKey {
    fn from(wire: InstanceKeyWire) -> Self {
        Self {
            name: wire.name,
            birth: wire.birth,
        }
    }
}

impl From<IdWire> for Value {
    fn from(wire: IdWire) -> Self {
        wire.id
    }
}

impl From<InstanceNameWire> for String {
    fn from(wire: InstanceNameWire) -> Self {
        wire.instance
    }
}

fn rows(raw: &[u8]) -> serde_json::Result<Rows> {
    let wire: RowsWire = serde_json::from_slice(raw)?;
    Ok(match wire.table.as_str() {
        "instances" => Rows::Instances(
            list::<InstanceWire, _>(wire.upsert)?,
            list::<InstanceKeyWire, _>(wire.remove)?,
        ),
        "operations" => Rows::Operations(
            list::<OperationWire, _>(wire.upsert)?,
            list::<IdWire, _>(wire.remove)?,
        ),
        "backoffs" => Rows::Backoffs(
            list::<BackoffWire, _>(wire.upsert)?,
            list::<InstanceNameWire, _>(wire.remove)?,
        ),
        _ => Rows::Other,
    })
}

fn reply(raw: &[u8]) -> serde_json::Result<Message> {
    let line: Value = serde_json::from_slice(raw)?;
    let ok = line.get("ok").and_then(Value::as_bool) == Some(true);
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or_default().to_owned();
    let message = if ok {
        text(line.get("message"))
    } else {
        text(line.pointer("/error/message"))
    };
    let id = line.get("id").cloned().unwrap_or(Value::Null);
    Ok(Message::Reply(id, ok, message, line))
}

fn hello(raw: &[u8]) -> serde_json::Result<Message> {
    let wire: HelloWire = serde_json::from_slice(raw)?;
    Ok(Message::Hello {
        hello: Hello {
            host: wire.host,
            schema: wire.schema,
            read_only: wire.read_only,
            dry_run: wire.dry_run,
            commands: wire.commands,
            version: wire.version,
            teardown: wire.teardown,
            stackless: wire.stackless,
        },
        reaper: wire.reaper.map(Reaper::from),
        protocol: wire.protocol,
        heartbeat_secs: wire.heartbeat_secs,
    })
}

/// Read one line of an agent's stream (`raw`, without its newline).
///
/// # Errors
/// The sentence (the host's error) when it is not a JSON object, or a
/// known message whose fields are not protocol 1's.
pub fn parse(raw: &[u8]) -> Result<Message, String> {
    let not_object = || {
        format!(
            "its stream sent a line that is not a JSON object ({} bytes): not the protocol",
            raw.len()
        )
    };
    if raw.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(not_object());
    }
    let kind = serde_json::from_slice::<Peek>(raw)
        .map_err(|_| not_object())?
        .kind;
    let message = match kind.as_str() {
        "hello" => hello(raw),
        "reaper" => serde_json::from_slice::<ReaperWire>(raw).map(|r| Message::Reaper(r.into())),
        "reset" => Ok(Message::Reset),
        "rows" => rows(raw).map(Message::Rows),
        "synced" => serde_json::from_slice::<SyncedWire>(raw).map(|s| Message::Synced(s.at)),
        "banner" => serde_json::from_slice::<BannerWire>(raw)
            .map(|b| Message::Banner(b.id, b.level, b.text)),
        "banner_cleared" => {
            serde_json::from_slice::<BannerWire>(raw).map(|b| Message::BannerCleared(b.id))
        }
        "activity" => serde_json::from_slice::<ActivityLine>(raw).map(Message::Activity),
        "reply" => reply(raw),
        "log" => serde_json::from_slice::<LogLine>(raw).map(Message::Log),
        "logs_end" => {
            serde_json::from_slice::<LogsEndWire>(raw).map(|e| Message::LogsEnd(e.logs, e.reason))
        }
        "heartbeat" => Ok(Message::Heartbeat),
        _ => Ok(Message::Other),
    };
    message.map_err(|error| {
        let kind = crate::model::text::sanitize_short(&kind, 32);
        format!("its stream sent a {kind} message that is not protocol 1 ({error})")
    })
}
