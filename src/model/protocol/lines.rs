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
    /// A type this client does not know.
    #[serde(other)]
    Unknown,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Reset {
    /// The group.
    pub seq: u64,
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

/// What `hello` says besides the protocol's constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The host name, sanitized.
    pub host: String,
    /// The store file.
    pub store: String,
    /// `PRAGMA user_version`.
    pub schema: i64,
    /// `older`, `contract`, `unreleased`, `controller`, `newer`.
    pub generation: &'static str,
    /// No command that writes is taken.
    pub read_only: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `snapshot --follow`: no commands at all.
    pub follow_only: bool,
    /// Who reaps.
    pub reaper: ReaperLine,
    /// The teardown command `reap` and `down` run, as argv with `{name}`
    /// where the name goes (`--down-cmd`; `stackless down {name} --json`
    /// by default), each element sanitized: what a client's question
    /// says runs on this host.
    pub teardown: Vec<String>,
    /// The stackless program `queue_down` and `cancel` run (`--stackless`).
    pub stackless: String,
    /// This host's clock when the line is written (unix seconds).
    pub now: i64,
}

/// The `cmd` values `serve --stdio` takes (`hello.commands`): the names
/// of [`Cmd::ALL`], every [`super::command::Command`] variant's.
pub const COMMANDS: [&str; Cmd::ALL.len()] = names(Cmd::ALL, false);

/// The commands a read-only agent takes: those that only read
/// ([`Cmd::reads`]).
pub const READ_COMMANDS: [&str; READS] = names(Cmd::ALL, true);

/// How many [`Cmd`]s only read.
const READS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < Cmd::ALL.len() {
        if Cmd::ALL[i].reads() {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The names of `all` (only the reads when `reads`), in order.
const fn names<const N: usize>(all: [Cmd; Cmd::ALL.len()], reads: bool) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut at) = (0, 0);
    while i < all.len() {
        if !reads || all[i].reads() {
            out[at] = all[i].as_str();
            at += 1;
        }
        i += 1;
    }
    out
}

/// The `hello` line.
#[must_use]
pub fn hello(hello: &Hello) -> String {
    let commands: &[&str] = if hello.follow_only {
        &[]
    } else if hello.read_only {
        &READ_COMMANDS
    } else {
        &COMMANDS
    };
    line(&Message::Hello(Box::new(HelloMessage {
        protocol: Some(u64::from(PROTOCOL)),
        program: "stackless-tui".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        host: hello.host.clone(),
        store: hello.store.clone(),
        schema: hello.schema,
        generation: hello.generation.to_owned(),
        read_only: hello.read_only,
        dry_run: hello.dry_run,
        follow_only: hello.follow_only,
        commands: commands.iter().map(|c| (*c).to_owned()).collect(),
        reaper: Some(hello.reaper.clone()),
        max_message_bytes: MAX_MESSAGE_BYTES as u64,
        heartbeat_secs: i64::try_from(HEARTBEAT_SECS).ok(),
        teardown: hello.teardown.clone(),
        stackless: Some(hello.stackless.clone()),
        now: Some(hello.now),
    })))
}

/// The `reset` line.
fn reset_line(seq: u64) -> String {
    line(&Message::Reset(Reset { seq }))
}

/// The lines of one snapshot group: `reset` first when `reset`, then the
/// `rows` messages of `delta` (none for a table that did not change),
/// then `synced`. `at`: unix seconds. Each line is handed to `emit` as
/// it is made.
pub fn group(seq: u64, reset: bool, delta: &Delta, at: i64, emit: &mut impl FnMut(String)) {
    if reset {
        emit(reset_line(seq));
    }
    for (table, changes) in &delta.tables {
        let mut chunk = Chunk::new(seq, *table);
        for text in &changes.upsert {
            chunk.push(false, text, emit);
        }
        for text in &changes.remove {
            chunk.push(true, text, emit);
        }
        chunk.flush(emit);
    }
    emit(synced(seq, at, delta.counts));
}

/// [`group`] of the changes from `tables` to `snapshot`, written as they
/// are found (no table's rows held whole: the first snapshot of 100,000
/// instances is 38 MB of rows). Nothing at all when it is not a `reset`
/// and no row changed. Whether a group was written.
pub fn stream_group(
    seq: u64,
    reset: bool,
    tables: &mut Tables,
    snapshot: &Snapshot,
    at: i64,
    emit: &mut impl FnMut(String),
) -> bool {
    if reset {
        emit(reset_line(seq));
    }
    let mut chunk: Option<Chunk> = None;
    let counts = tables.update_with(snapshot, &mut |table, change| {
        if chunk.as_ref().is_some_and(|c| c.table != table)
            && let Some(done) = chunk.take()
        {
            done.flush(emit);
        }
        let current = chunk.get_or_insert_with(|| Chunk::new(seq, table));
        match change {
            Change::Upsert(text) => current.push(false, &text, emit),
            Change::Remove(text) => current.push(true, &text, emit),
        }
    });
    let changed = chunk.is_some();
    if let Some(done) = chunk {
        done.flush(emit);
    }
    if reset || changed {
        emit(synced(seq, at, counts));
    }
    reset || changed
}

fn synced(seq: u64, at: i64, counts: [usize; 3]) -> String {
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    line(&Message::Synced(Synced {
        seq,
        at: Some(at),
        counts: Counts {
            instances: count(counts[0]),
            operations: count(counts[1]),
            backoffs: count(counts[2]),
        },
    }))
}

/// One table's `rows` message being filled: upserts then removes (each
/// already JSON, at most [`MAX_ROW_BYTES`]), flushed as a line before it
/// would pass the limit.
struct Chunk {
    table: Table,
    head: String,
    upsert: String,
    remove: String,
}

impl Chunk {
    /// `{head}"upsert":[...],"remove":[...]}` plus the newline.
    const FRAME: usize = "\"upsert\":[],\"remove\":[]}\n".len();

    fn new(seq: u64, table: Table) -> Self {
        Self {
            table,
            head: format!(
                "{{\"type\":\"rows\",\"seq\":{seq},\"table\":\"{}\",",
                table.as_str()
            ),
            upsert: String::new(),
            remove: String::new(),
        }
    }

    fn push(&mut self, remove: bool, text: &str, emit: &mut impl FnMut(String)) {
        debug_assert!(text.len() <= MAX_ROW_BYTES);
        let used = self.head.len() + Self::FRAME + self.upsert.len() + self.remove.len();
        if used + text.len() + 1 > MAX_MESSAGE_BYTES {
            self.emit(emit);
        }
        let list = if remove {
            &mut self.remove
        } else {
            &mut self.upsert
        };
        if !list.is_empty() {
            list.push(',');
        }
        list.push_str(text);
    }

    fn emit(&mut self, emit: &mut impl FnMut(String)) {
        if self.upsert.is_empty() && self.remove.is_empty() {
            return;
        }
        emit(format!(
            "{}\"upsert\":[{}],\"remove\":[{}]}}",
            self.head, self.upsert, self.remove
        ));
        self.upsert.clear();
        self.remove.clear();
    }

    fn flush(mut self, emit: &mut impl FnMut(String)) {
        self.emit(emit);
    }
}

/// The `reaper` line.
#[must_use]
pub fn reaper(reaper: &ReaperLine) -> String {
    line(&Message::Reaper(reaper.clone()))
}

/// A header banner, as `banner` says it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Banner {
    /// Its stable id (`clock`, `store_busy`, ...).
    pub id: String,
    /// `warning` or `error`.
    pub level: String,
    /// The header's words.
    pub text: String,
}

/// The `banner` line.
#[must_use]
pub fn banner(banner: &Banner) -> String {
    line(&Message::Banner(banner.clone()))
}

/// The `banner_cleared` line.
#[must_use]
pub fn banner_cleared(id: &str) -> String {
    line(&Message::BannerCleared(BannerCleared { id: id.to_owned() }))
}

/// The `activity` line: at (unix seconds), actor, instance, kind, detail
/// (redacted by the caller).
#[must_use]
pub fn activity(activity: &crate::model::activity::Activity, detail: &str) -> String {
    line(&Message::Activity(ActivityMessage {
        at: activity.at,
        actor: activity.actor.to_string(),
        instance: activity.instance.clone(),
        kind: activity.kind.to_string(),
        detail: detail.to_owned(),
    }))
}

/// The `heartbeat` line: `seq` of the last `synced`.
#[must_use]
pub fn heartbeat(at: i64, seq: u64) -> String {
    line(&Message::Heartbeat(Heartbeat { at, seq }))
}

/// A `reply` line.
#[must_use]
pub fn reply(reply: Reply) -> String {
    line(&Message::Reply(reply))
}

/// A reply's `ok: false` line: `kind` (`bad_request`, `unknown_command`,
/// `too_long`, `protocol`, `refused`) and the message.
#[must_use]
pub fn reply_error(id: &Value, kind: &str, message: &str) -> String {
    reply(Reply {
        id: id.clone(),
        ok: false,
        error: Some(ReplyError {
            kind: kind.to_owned(),
            message: message.to_owned(),
        }),
        ..Reply::default()
    })
}

/// The `log` lines of one log line (or piece of one) of the `logs`
/// command `logs`: its text in pieces of at most [`MAX_TEXT_CHARS`]
/// characters, each a message, the later ones `cont: true` (a piece that
/// continues the line before it is `cont: true` too), so nothing of a
/// long line is cut away.
#[must_use]
pub fn log(logs: &Value, service: &str, text: &str, cont: bool) -> Vec<String> {
    let piece = |text: String, cont: bool| {
        line(&Message::Log(LogMessage {
            logs: logs.clone(),
            service: service.to_owned(),
            text,
            at: None,
            cont,
        }))
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(chars.len() / MAX_TEXT_CHARS + 1);
    for (i, part) in chars.chunks(MAX_TEXT_CHARS).enumerate() {
        out.push(piece(part.iter().collect(), cont || i > 0));
    }
    if out.is_empty() {
        out.push(piece(String::new(), cont));
    }
    out
}

/// The `logs_end` line: `stopped`, `replaced`, `gone`, or why it failed.
#[must_use]
pub fn logs_end(logs: &Value, reason: &str) -> String {
    line(&Message::LogsEnd(LogsEnd {
        logs: logs.clone(),
        reason: reason.to_owned(),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::rows::TableDelta;
    use super::*;
    use serde_json::json;

    #[test]
    fn a_big_table_is_split_into_rows_messages_under_the_limit() {
        let row = format!(r#"{{"name":"{}"}}"#, "n".repeat(1_000));
        let delta = Delta {
            tables: vec![(
                Table::Instances,
                TableDelta {
                    upsert: vec![row; 200],
                    remove: vec![r#"{"name":"gone","birth":null}"#.into()],
                },
            )],
            counts: [200, 0, 0],
        };
        let mut out = Vec::new();
        group(3, true, &delta, 1_000, &mut |line| out.push(line));
        assert_eq!(
            out.first().map(String::as_str),
            Some(r#"{"type":"reset","seq":3}"#)
        );
        assert_eq!(
            out.last().map(String::as_str),
            Some(
                r#"{"type":"synced","seq":3,"at":1000,"counts":{"instances":200,"operations":0,"backoffs":0}}"#
            )
        );
        let rows: Vec<RowsOf<InstanceRow, InstanceKeyRow>> = out[1..out.len() - 1]
            .iter()
            .map(|l| {
                assert!(l.len() < MAX_MESSAGE_BYTES, "{}", l.len());
                match read(l.as_bytes()) {
                    Ok(Message::Rows(Rows::Instances(rows))) => rows,
                    other => panic!("not instance rows: {other:?}"),
                }
            })
            .collect();
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|r| r.seq == 3));
        let upserts: usize = rows.iter().map(|r| r.upsert.len()).sum();
        let removes: Vec<&InstanceKeyRow> = rows.iter().flat_map(|r| &r.remove).collect();
        assert_eq!(upserts, 200);
        assert_eq!(
            removes,
            [&InstanceKeyRow {
                name: "gone".into(),
                birth: None
            }]
        );
    }

    #[test]
    fn an_unchanged_table_sends_no_rows_message() {
        let delta = Delta {
            tables: vec![(Table::Operations, TableDelta::default())],
            counts: [1, 2, 3],
        };
        let mut out = Vec::new();
        group(9, false, &delta, 5, &mut |line| out.push(line));
        assert_eq!(
            out,
            [
                r#"{"type":"synced","seq":9,"at":5,"counts":{"instances":1,"operations":2,"backoffs":3}}"#
            ]
        );
    }

    fn store(names: usize, expires_at: i64) -> Snapshot {
        use crate::model::rows::{Birth, Instance, Lease, Rows, Status};
        let instances: Vec<Instance> = (0..names)
            .map(|i| Instance {
                name: format!("{}-{i:04}", "n".repeat(400)),
                substrate: "local".into(),
                status: Status::Active,
                created_at: Some(1),
                tombstoned_at: None,
                lease: Some(Lease {
                    duration_secs: 60,
                    expires_at: if i % 7 == 0 { expires_at } else { 1 },
                }),
                lock: None,
                anomalies: vec![],
                dirty: None,
                birth: Some(Birth::new(&format!("{i:032x}"), "ns")),
            })
            .collect();
        Snapshot::from(Rows {
            generation: crate::model::generation::Generation::new(14),
            instances: instances.into(),
            ..Rows::default()
        })
    }

    #[test]
    fn streamed_groups_are_the_groups_of_the_deltas() {
        let (mut streamed, mut collected) = (Tables::new(), Tables::new());
        for (seq, (snapshot, reset)) in [
            (store(300, 5), true),
            (store(300, 6), false),
            (store(250, 6), false),
            (store(250, 6), false),
        ]
        .into_iter()
        .enumerate()
        {
            let seq = seq as u64 + 1;
            let mut a = Vec::new();
            let wrote = stream_group(seq, reset, &mut streamed, &snapshot, 9, &mut |l| a.push(l));
            let delta = collected.update(&snapshot);
            let mut b = Vec::new();
            if reset || !delta.is_empty() {
                group(seq, reset, &delta, 9, &mut |l| b.push(l));
            }
            assert_eq!(a, b, "group {seq}");
            assert_eq!(wrote, !b.is_empty());
            assert!(a.iter().all(|l| l.len() < MAX_MESSAGE_BYTES));
        }
    }

    #[test]
    fn a_long_log_line_goes_whole_in_pieces() {
        let text: String = (0..3_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let out = log(&json!("l"), "web", &text, false);
        let msgs: Vec<serde_json::Value> = out
            .iter()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        let conts: Vec<bool> = msgs.iter().map(|m| m["cont"] == true).collect();
        assert_eq!(conts, [false, true, true]);
        let whole: String = msgs.iter().filter_map(|m| m["text"].as_str()).collect();
        assert_eq!(whole, text);
        assert_eq!(log(&json!("l"), "web", "", true).len(), 1);
    }

    /// One message of each type, rows of each table, every optional part
    /// filled once.
    fn examples() -> Vec<Message> {
        let reaper = ReaperLine {
            by: "agent".into(),
            pid: Some(42),
            paused: false,
            next_pass_at: Some(1_060),
            text: "reaper: every 60s".into(),
            last_pass: Some(LastPass {
                at: 1_000,
                reaped: 2,
                failed: 1,
                collected: 0,
                skipped: 3,
            }),
        };
        let mut all = vec![
            Message::Hello(Box::new(HelloMessage {
                protocol: Some(1),
                program: "stackless-tui".into(),
                version: "1.0.0".into(),
                host: "h".into(),
                store: "/s".into(),
                schema: 14,
                generation: "controller".into(),
                commands: COMMANDS.map(str::to_owned).to_vec(),
                reaper: Some(reaper.clone()),
                max_message_bytes: 65_536,
                heartbeat_secs: Some(5),
                teardown: vec!["stackless".into(), "down".into(), "{name}".into()],
                stackless: Some("stackless".into()),
                ..HelloMessage::default()
            })),
            Message::Reaper(reaper),
            Message::Reset(Reset { seq: 3 }),
            Message::Synced(Synced {
                seq: 3,
                at: Some(1_000),
                counts: Counts {
                    instances: 1,
                    operations: 2,
                    backoffs: 1,
                },
            }),
            Message::Banner(Banner {
                id: "clock".into(),
                level: "warning".into(),
                text: "clock skew".into(),
            }),
            Message::BannerCleared(BannerCleared { id: "clock".into() }),
            Message::Activity(ActivityMessage {
                at: 5,
                actor: "reaper".into(),
                instance: "bravo".into(),
                kind: "reaped".into(),
                detail: "ok".into(),
            }),
            Message::Heartbeat(Heartbeat { at: 6, seq: 3 }),
            Message::Log(LogMessage {
                logs: Value::from("l"),
                service: "web".into(),
                text: "GET /".into(),
                at: None,
                cont: true,
            }),
            Message::LogsEnd(LogsEnd {
                logs: Value::from("l"),
                reason: "stopped".into(),
            }),
            Message::Unknown,
        ];
        all.extend(rows_examples());
        all.extend(reply_examples());
        all
    }

    /// A `rows` message of each table (and of one a newer agent adds).
    fn rows_examples() -> Vec<Message> {
        let instance: InstanceRow = serde_json::from_str(
            r#"{"name":"bravo","birth":{"instance_id":"b1","resource_namespace":"sl-b1"},"dns_safe":true,"substrate":"local","status":"active","created_at":1,"tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":9000},"lock":{"operation":"up","holder_pid":7,"holder_start_time":8,"holder_host":"h","acquired_at":9,"liveness_state":"alive","held":true},"dirty":false,"failed_up":false,"services_dead":0,"gc":{"due_at":5,"collected_by":"reaper"}}"#,
        )
        .expect("row");
        let operation = OperationRow {
            id: Value::from("op-1"),
            instance: "bravo".into(),
            verb: "down".into(),
            status: "failed".into(),
            created_at: 1,
            updated_at: 2,
            error: crate::model::envelope::parse_error(
                r#"{"ok":false,"error":{"code":"state.lock.held","message":"held"}}"#,
            ),
            error_unparsed: None,
        };
        let backoff = BackoffRow {
            instance: "bravo".into(),
            attempts: 2,
            last_error: "exit 1".into(),
            code: None,
            summary: "exit 1".into(),
            remediation: Some("look".into()),
            next_retry_at: 99,
        };
        vec![
            Message::Rows(Rows::Instances(RowsOf {
                seq: 3,
                upsert: vec![instance],
                remove: vec![InstanceKeyRow {
                    name: "alpha".into(),
                    birth: Some(BirthRow {
                        instance_id: "a1".into(),
                        resource_namespace: Some("sl-a1".into()),
                    }),
                }],
            })),
            Message::Rows(Rows::Operations(RowsOf {
                seq: 3,
                upsert: vec![
                    operation.clone(),
                    OperationRow {
                        error: None,
                        error_unparsed: Some("boom".into()),
                        ..operation
                    },
                ],
                remove: vec![OperationKeyRow {
                    id: Value::from("op-0"),
                }],
            })),
            Message::Rows(Rows::Backoffs(RowsOf {
                seq: 3,
                upsert: vec![backoff],
                remove: vec![BackoffKeyRow {
                    instance: "alpha".into(),
                }],
            })),
            Message::Rows(Rows::Unknown),
        ]
    }

    /// A reply of each kind.
    fn reply_examples() -> Vec<Message> {
        vec![
            Message::Reply(Reply {
                message: Some("reaping bravo".into()),
                ..Reply::ok(&Value::from(7))
            }),
            Message::Reply(Reply {
                detail: Some(DetailReply {
                    name: "bravo".into(),
                    birth: Some(BirthRow {
                        instance_id: "b1".into(),
                        resource_namespace: Some("sl-b1".into()),
                    }),
                    lines: vec!["a".into(), "b".into()],
                }),
                ..Reply::ok(&Value::from("d"))
            }),
            Message::Reply(Reply {
                services: Some(vec!["web".into()]),
                ..Reply::ok(&Value::from("l"))
            }),
            Message::Reply(Reply {
                id: Value::Null,
                ok: false,
                error: Some(ReplyError {
                    kind: "bad_request".into(),
                    message: "not JSON".into(),
                }),
                ..Reply::default()
            }),
        ]
    }

    #[test]
    fn every_message_round_trips_through_its_line() {
        let mut seen = [false; 13];
        for message in examples() {
            seen[match &message {
                Message::Hello(_) => 0,
                Message::Reaper(_) => 1,
                Message::Reset(_) => 2,
                Message::Rows(_) => 3,
                Message::Synced(_) => 4,
                Message::Banner(_) => 5,
                Message::BannerCleared(_) => 6,
                Message::Activity(_) => 7,
                Message::Heartbeat(_) => 8,
                Message::Reply(_) => 9,
                Message::Log(_) => 10,
                Message::LogsEnd(_) => 11,
                Message::Unknown => 12,
            }] = true;
            let text = line(&message);
            assert!(text.len() < MAX_MESSAGE_BYTES);
            let read_back = read(text.as_bytes()).expect(&text);
            if message == Message::Unknown || message == Message::Rows(Rows::Unknown) {
                // Written as a bare tag: read back as itself.
                assert_eq!(read_back, message, "{text}");
                continue;
            }
            assert_eq!(read_back, message, "{text}");
            let derived: Message = serde_json::from_str(&text).expect(&text);
            assert_eq!(derived, message, "{text}");
        }
        assert_eq!(seen, [true; 13]);
    }

    #[test]
    fn a_newer_agents_message_or_table_is_unknown_and_bad_fields_are_not_the_protocol() {
        assert_eq!(
            read(br#"{"type":"future","x":1}"#).ok(),
            Some(Message::Unknown)
        );
        assert_eq!(
            read(br#"{"type":"rows","seq":1,"table":"future","upsert":[1]}"#).ok(),
            Some(Message::Rows(Rows::Unknown))
        );
        assert!(matches!(read(b" [1]"), Err(ReadError::NotObject)));
        assert!(matches!(read(b"{"), Err(ReadError::NotObject)));
        assert!(matches!(
            read(br#"{"type":"synced","at":"soon"}"#),
            Err(ReadError::Fields(kind, _)) if kind == "synced"
        ));
    }

    #[test]
    fn the_writers_lines_are_the_messages_documented_shapes() {
        assert_eq!(heartbeat(6, 3), r#"{"type":"heartbeat","at":6,"seq":3}"#);
        assert_eq!(
            reply_error(&Value::from(1), "refused", "no"),
            r#"{"type":"reply","id":1,"ok":false,"error":{"kind":"refused","message":"no"}}"#
        );
        assert_eq!(
            reply(Reply::ok(&Value::from("p"))),
            r#"{"type":"reply","id":"p","ok":true}"#
        );
        assert_eq!(
            logs_end(&Value::from("l"), "gone"),
            r#"{"type":"logs_end","logs":"l","reason":"gone"}"#
        );
        assert_eq!(
            banner_cleared("clock"),
            r#"{"type":"banner_cleared","id":"clock"}"#
        );
    }

    #[test]
    fn hello_lists_the_command_enums_variants() {
        let commands = |read_only: bool, follow_only: bool| {
            let text = hello(&Hello {
                host: "h".into(),
                store: "/s".into(),
                schema: 14,
                generation: "controller",
                read_only,
                dry_run: false,
                follow_only,
                reaper: ReaperLine::default(),
                teardown: vec![],
                stackless: "stackless".into(),
                now: 1_700_000_000,
            });
            match read(text.as_bytes()) {
                Ok(Message::Hello(hello)) => hello.commands,
                other => panic!("not a hello: {other:?}"),
            }
        };
        let all: Vec<String> = Cmd::ALL.iter().map(|c| c.as_str().to_owned()).collect();
        assert_eq!(commands(false, false), all);
        let reads: Vec<String> = Cmd::ALL
            .iter()
            .filter(|c| c.reads())
            .map(|c| c.as_str().to_owned())
            .collect();
        assert_eq!(commands(true, false), reads);
        assert_eq!(reads, ["detail", "logs", "logs_stop", "ping"]);
        assert!(commands(true, true).is_empty());
    }
}
