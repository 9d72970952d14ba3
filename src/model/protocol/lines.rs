//! The out-stream's messages as lines (docs/protocol.md, "The
//! out-stream"), each JSON text without its newline and at most
//! [`MAX_MESSAGE_BYTES`] with it: a table's rows are split over as many
//! `rows` messages as they need. Every message is a [`Message`]: the agent
//! writes them, a client reads them back with [`read`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::command::Cmd;
use super::rows::{
    BackoffKeyRow, BackoffRow, BirthRow, Change, Delta, InstanceKeyRow, InstanceRow, MAX_ROW_BYTES,
    OperationKeyRow, OperationRow, Table, Tables, fit,
};
use super::{HEARTBEAT_SECS, MAX_MESSAGE_BYTES, MAX_TEXT_CHARS, PROTOCOL};
use crate::model::Snapshot;

/// Who reaps the store, as `hello.reaper` and the `reaper` message say it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReaperLine {
    /// `agent`, `console`, `controller`, `nobody`, `unknown`.
    pub by: String,
    /// The pid of whoever reaps, when known.
    pub pid: Option<i64>,
    /// The operator's pause (`pause`, `P`).
    pub paused: bool,
    /// When this agent's next pass is due (unix seconds).
    pub next_pass_at: Option<i64>,
    /// The header's words (`reaper: every 60s`).
    pub text: String,
    /// This agent's last finished pass.
    pub last_pass: Option<LastPass>,
}

/// A finished reaper pass (`reaper.last_pass`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LastPass {
    /// When it ended (unix seconds).
    pub at: i64,
    /// Instances torn down.
    pub reaped: u64,
    /// Teardowns that failed.
    pub failed: u64,
    /// Tombstones collected.
    pub collected: u64,
    /// Instances skipped.
    pub skipped: u64,
}

/// One out-stream message (docs/protocol.md "The out-stream";
/// `docs/protocol.schema.json`), tagged by `type`. What a newer agent adds
/// is [`Message::Unknown`] to a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// The first line (boxed: the largest by far).
    Hello(Box<HelloMessage>),
    /// Who reaps changed.
    Reaper(ReaperLine),
    /// The next group is a whole snapshot.
    Reset(Reset),
    /// One table's changed rows.
    Rows(Rows),
    /// A group is complete.
    Synced(Synced),
    /// A header banner is up.
    Banner(Banner),
    /// A banner is down.
    BannerCleared(BannerCleared),
    /// One Activity line.
    Activity(ActivityMessage),
    /// The stream is alive.
    Heartbeat(Heartbeat),
    /// A command's answer.
    Reply(Reply),
    /// One log line (or a piece of one) of a `logs` command.
    Log(LogMessage),
    /// A `logs` stream ended.
    LogsEnd(LogsEnd),
    /// One instance's services as `snapshot --json` reports them (a
    /// recording's line: `record` only, docs/history.md).
    Services(ServicesLine),
    /// A type this client does not know.
    #[serde(other)]
    Unknown,
}

/// The `services` message (docs/protocol.md, "services"): one instance's
/// services as `snapshot --json` reports them (its `services` array, each
/// element the report's service object, kept as JSON: the report's type
/// is the one set of serde types), written by `record` when the
/// instance's row changed and in every keyframe. An empty array: none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServicesLine {
    /// The instance's name.
    pub name: String,
    /// Its birth's `instance_id` (`null`: a row of no birth).
    #[serde(default)]
    pub instance_id: Option<String>,
    /// The report's service objects.
    #[serde(default)]
    pub services: Vec<Value>,
}

/// The `hello` message (every field defaults when missing, for a client).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HelloMessage {
    /// [`PROTOCOL`].
    pub protocol: Option<u64>,
    /// `stackless-tui`.
    pub program: String,
    /// The agent's version.
    pub version: String,
    /// The host name, sanitized.
    pub host: String,
    /// The store file.
    pub store: String,
    /// `PRAGMA user_version`.
    pub schema: i64,
    /// `older`, `contract`, `unreleased`, `controller`, `newer`.
    pub generation: String,
    /// No command that writes is taken.
    pub read_only: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `snapshot --follow`: no commands at all.
    pub follow_only: bool,
    /// The `cmd`s taken ([`COMMANDS`], [`READ_COMMANDS`], or none).
    pub commands: Vec<String>,
    /// Who reaps.
    pub reaper: Option<ReaperLine>,
    /// [`MAX_MESSAGE_BYTES`].
    pub max_message_bytes: u64,
    /// [`HEARTBEAT_SECS`].
    pub heartbeat_secs: Option<i64>,
    /// The teardown argv (see [`Hello::teardown`]).
    pub teardown: Vec<String>,
    /// The stackless program `queue_down` and `cancel` run.
    pub stackless: Option<String>,
    /// The host's clock when it was written (unix seconds): a client
    /// measures the host's clock skew from it (and from each
    /// `heartbeat.at`), and counts leases down on the host's clock. `None`
    /// from an older agent.
    pub now: Option<i64>,
}

/// `reset`: the group `seq` is a whole snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Reset {
    /// The group.
    pub seq: u64,
    /// Why a later `reset` comes (the store file read anew: replaced,
    /// rewritten in place, migrated); absent on the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One `rows` message, typed by its `table`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "table", rename_all = "snake_case")]
pub enum Rows {
    /// Instance rows, keyed by name and birth.
    Instances(RowsOf<InstanceRow, InstanceKeyRow>),
    /// Operation rows, keyed by id.
    Operations(RowsOf<OperationRow, OperationKeyRow>),
    /// Backoff rows, keyed by instance.
    Backoffs(RowsOf<BackoffRow, BackoffKeyRow>),
    /// A table this client does not know.
    #[serde(other)]
    Unknown,
}

/// A `rows` message's body: rows upserted, keys removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsOf<U, K> {
    /// The group.
    #[serde(default)]
    pub seq: u64,
    /// Whole rows, added or changed.
    #[serde(default = "Vec::new")]
    pub upsert: Vec<U>,
    /// Keys of rows gone.
    #[serde(default = "Vec::new")]
    pub remove: Vec<K>,
}

impl Rows {
    /// How many rows it upserts and removes.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Instances(r) => r.upsert.len() + r.remove.len(),
            Self::Operations(r) => r.upsert.len() + r.remove.len(),
            Self::Backoffs(r) => r.upsert.len() + r.remove.len(),
            Self::Unknown => 0,
        }
    }

    /// It upserts and removes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `synced`: the group `seq` is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Synced {
    /// The group.
    pub seq: u64,
    /// When its snapshot was read (unix seconds).
    pub at: Option<i64>,
    /// Rows held after it.
    pub counts: Counts,
}

/// Rows held per table after a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    /// Instance rows.
    pub instances: u64,
    /// Operation rows.
    pub operations: u64,
    /// Backoff rows.
    pub backoffs: u64,
}

/// `banner_cleared`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BannerCleared {
    /// The banner's id.
    pub id: String,
}

/// `activity`: one Activity line.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ActivityMessage {
    /// When (unix seconds).
    pub at: i64,
    /// `reaper`, `operator`, `controller`, `observed`.
    pub actor: String,
    /// The instance.
    pub instance: String,
    /// The pane's word.
    pub kind: String,
    /// The rest (redacted by the agent).
    pub detail: String,
}

/// `heartbeat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Heartbeat {
    /// Now (unix seconds).
    pub at: i64,
    /// The last `synced`'s group.
    pub seq: u64,
}

/// `reply`: a command's answer, once per command.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Reply {
    /// The command's id (`null` when it had none usable).
    pub id: Value,
    /// It was taken.
    pub ok: bool,
    /// What a key's action led to, in the key's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `detail`'s answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<DetailReply>,
    /// `logs`' answer: the services followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<String>>,
    /// `metrics`' answer: the `OpenMetrics` document (docs/metrics.md), one
    /// string a line without its newline, `# EOF` last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Vec<String>>,
    /// Why not (`ok: false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ReplyError>,
}

impl Reply {
    /// `ok: true` and nothing more.
    #[must_use]
    pub fn ok(id: &Value) -> Self {
        Self {
            id: id.clone(),
            ok: true,
            ..Self::default()
        }
    }

    /// The reply's words: `message`, or the error's.
    #[must_use]
    pub fn words(&self) -> &str {
        match (&self.message, &self.error) {
            (Some(message), _) if self.ok => message,
            (_, Some(error)) if !self.ok => &error.message,
            _ => "",
        }
    }
}

/// A `detail` reply's body.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DetailReply {
    /// The instance.
    pub name: String,
    /// Its birth, as its row sends it.
    pub birth: Option<BirthRow>,
    /// The detail view's lines.
    pub lines: Vec<String>,
}

/// A refused reply's `error`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplyError {
    /// `bad_request`, `unknown_command`, `too_long`, `protocol`, `refused`.
    pub kind: String,
    /// What is wrong, in words.
    pub message: String,
}

/// `log`: one log line or a piece of one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LogMessage {
    /// The `logs` command's id.
    pub logs: Value,
    /// The service.
    pub service: String,
    /// The text, at most [`MAX_TEXT_CHARS`] characters.
    pub text: String,
    /// When it was written, if known (unix seconds; always `null` now).
    pub at: Option<i64>,
    /// It continues the line before it.
    pub cont: bool,
}

/// `logs_end`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LogsEnd {
    /// The `logs` command's id.
    pub logs: Value,
    /// `stopped`, `replaced`, `gone`, or why it failed.
    pub reason: String,
}

/// `message` as its line, its texts fitted ([`fit`]).
#[must_use]
pub fn line(message: &Message) -> String {
    fit(serde_json::to_value(message).unwrap_or(Value::Null))
}

/// Why a line of an agent's stream is not a message.
#[derive(Debug)]
pub enum ReadError {
    /// The line is not a JSON object.
    NotObject,
    /// A known message (its `type`) whose fields have the wrong types.
    Fields(String, serde_json::Error),
}

/// Read one line of an agent's stream (`raw`, without its newline) into
/// its [`Message`] straight from the text: the `type` is read first, then
/// the message's own type from the same text (no JSON tree of the line is
/// built: a `rows` line of 2,000 rows as a tree is five times its size).
/// Unknown fields are ignored; an unknown `type` or `table` is
/// [`Message::Unknown`] / [`Rows::Unknown`].
///
/// # Errors
/// [`ReadError`]: not a JSON object, or a known message whose fields have
/// the wrong types.
pub fn read(raw: &[u8]) -> Result<Message, ReadError> {
    #[derive(Deserialize)]
    struct Peek {
        #[serde(rename = "type", default)]
        kind: String,
        #[serde(default)]
        table: Option<Value>,
    }
    fn of<'a, T: Deserialize<'a>>(
        raw: &'a [u8],
        wrap: fn(T) -> Message,
    ) -> serde_json::Result<Message> {
        serde_json::from_slice(raw).map(wrap)
    }
    if raw.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ReadError::NotObject);
    }
    let peek: Peek = serde_json::from_slice(raw).map_err(|_| ReadError::NotObject)?;
    let message = match peek.kind.as_str() {
        "hello" => of(raw, |hello| Message::Hello(Box::new(hello))),
        "reaper" => of(raw, Message::Reaper),
        "reset" => of(raw, Message::Reset),
        "rows" => rows(raw, peek.table.as_ref().and_then(Value::as_str)).map(Message::Rows),
        "synced" => of(raw, Message::Synced),
        "banner" => of(raw, Message::Banner),
        "banner_cleared" => of(raw, Message::BannerCleared),
        "activity" => of(raw, Message::Activity),
        "heartbeat" => of(raw, Message::Heartbeat),
        "reply" => of(raw, Message::Reply),
        "log" => of(raw, Message::Log),
        "logs_end" => of(raw, Message::LogsEnd),
        "services" => of(raw, Message::Services),
        _ => Ok(Message::Unknown),
    };
    message.map_err(|error| ReadError::Fields(peek.kind, error))
}

/// A `rows` line's body by its `table`.
fn rows(raw: &[u8], table: Option<&str>) -> serde_json::Result<Rows> {
    Ok(match table {
        Some("instances") => Rows::Instances(serde_json::from_slice(raw)?),
        Some("operations") => Rows::Operations(serde_json::from_slice(raw)?),
        Some("backoffs") => Rows::Backoffs(serde_json::from_slice(raw)?),
        _ => Rows::Unknown,
    })
}

mod write;

pub use write::{
    Banner, COMMANDS, Hello, READ_COMMANDS, activity, banner, banner_cleared, every_row_group,
    group, heartbeat, hello, log, logs_end, reaper, reply, reply_error, stream_group,
};

#[cfg(test)]
mod tests;
