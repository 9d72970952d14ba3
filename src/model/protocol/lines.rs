//! The out-stream's messages as lines (docs/protocol.md, "The
//! out-stream"), each JSON text without its newline and at most
//! [`MAX_MESSAGE_BYTES`] with it: a table's rows are split over as many
//! `rows` messages as they need.

use serde::Serialize;
use serde_json::{Value, json};

use super::command::Cmd;
use super::rows::{Change, Delta, MAX_ROW_BYTES, Table, Tables, fit};
use super::{HEARTBEAT_SECS, MAX_MESSAGE_BYTES, MAX_TEXT_CHARS, PROTOCOL};
use crate::model::Snapshot;

/// Who reaps the store, as `hello.reaper` and the `reaper` message say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReaperLine {
    /// `agent`, `console`, `controller`, `nobody`, `unknown`.
    pub by: &'static str,
    /// The pid of whoever reaps, when known.
    pub pid: Option<u32>,
    /// The operator's pause (`pause`, `P`).
    pub paused: bool,
    /// When this agent's next pass is due (unix seconds).
    pub next_pass_at: Option<i64>,
    /// The header's words (`reaper: every 60s`).
    pub text: String,
    /// This agent's last finished pass: `{at, reaped, failed, skipped}`.
    pub last_pass: Option<Value>,
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
    fit(json!({
        "type": "hello",
        "protocol": PROTOCOL,
        "program": "stackless-tui",
        "version": env!("CARGO_PKG_VERSION"),
        "host": hello.host,
        "store": hello.store,
        "schema": hello.schema,
        "generation": hello.generation,
        "read_only": hello.read_only,
        "dry_run": hello.dry_run,
        "follow_only": hello.follow_only,
        "commands": commands,
        "reaper": hello.reaper,
        "max_message_bytes": MAX_MESSAGE_BYTES,
        "heartbeat_secs": HEARTBEAT_SECS,
        "teardown": hello.teardown,
        "stackless": hello.stackless,
    }))
}

/// The lines of one snapshot group: `reset` first when `reset`, then the
/// `rows` messages of `delta` (none for a table that did not change),
/// then `synced`. `at`: unix seconds. Each line is handed to `emit` as
/// it is made.
pub fn group(seq: u64, reset: bool, delta: &Delta, at: i64, emit: &mut impl FnMut(String)) {
    if reset {
        emit(json!({ "type": "reset", "seq": seq }).to_string());
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
        emit(json!({ "type": "reset", "seq": seq }).to_string());
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
    json!({
        "type": "synced",
        "seq": seq,
        "at": at,
        "counts": {
            "instances": counts[0],
            "operations": counts[1],
            "backoffs": counts[2],
        },
    })
    .to_string()
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
pub fn reaper(line: &ReaperLine) -> String {
    let mut value = json!({ "type": "reaper" });
    if let (Value::Object(fields), Ok(Value::Object(more))) =
        (&mut value, serde_json::to_value(line))
    {
        fields.extend(more);
    }
    fit(value)
}

/// A header banner, as `banner` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Banner {
    /// Its stable id (`clock`, `store_busy`, ...).
    pub id: &'static str,
    /// `warning` or `error`.
    pub level: &'static str,
    /// The header's words.
    pub text: String,
}

/// The `banner` line.
#[must_use]
pub fn banner(banner: &Banner) -> String {
    fit(json!({
        "type": "banner",
        "id": banner.id,
        "level": banner.level,
        "text": banner.text,
    }))
}

/// The `banner_cleared` line.
#[must_use]
pub fn banner_cleared(id: &str) -> String {
    json!({ "type": "banner_cleared", "id": id }).to_string()
}

/// The `activity` line: at (unix seconds), actor, instance, kind, detail
/// (redacted by the caller).
#[must_use]
pub fn activity(activity: &crate::model::activity::Activity, detail: &str) -> String {
    fit(json!({
        "type": "activity",
        "at": activity.at,
        "actor": activity.actor.to_string(),
        "instance": activity.instance,
        "kind": activity.kind.to_string(),
        "detail": detail,
    }))
}

/// The `heartbeat` line: `seq` of the last `synced`.
#[must_use]
pub fn heartbeat(at: i64, seq: u64) -> String {
    json!({ "type": "heartbeat", "at": at, "seq": seq }).to_string()
}

/// A reply's `ok: true` line: the command's id and what it carries
/// (`detail`, `services`: the fields of `extra`, an object).
#[must_use]
pub fn reply_ok(id: &Value, extra: Value) -> String {
    let mut value = json!({ "type": "reply", "id": id, "ok": true });
    if let (Value::Object(fields), Value::Object(more)) = (&mut value, extra) {
        fields.extend(more);
    }
    fit(value)
}

/// A reply's `ok: false` line: `kind` (`bad_request`, `unknown_command`,
/// `too_long`, `protocol`, `refused`) and the message.
#[must_use]
pub fn reply_error(id: &Value, kind: &str, message: &str) -> String {
    fit(json!({
        "type": "reply",
        "id": id,
        "ok": false,
        "error": { "kind": kind, "message": message },
    }))
}

/// The `log` lines of one log line (or piece of one) of the `logs`
/// command `logs`: its text in pieces of at most [`MAX_TEXT_CHARS`]
/// characters, each a message, the later ones `cont: true` (a piece that
/// continues the line before it is `cont: true` too), so nothing of a
/// long line is cut away.
#[must_use]
pub fn log(logs: &Value, service: &str, text: &str, cont: bool) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(chars.len() / MAX_TEXT_CHARS + 1);
    for (i, piece) in chars.chunks(MAX_TEXT_CHARS).enumerate() {
        let piece: String = piece.iter().collect();
        out.push(fit(json!({
            "type": "log",
            "logs": logs,
            "service": service,
            "text": piece,
            "at": null,
            "cont": cont || i > 0,
        })));
    }
    if out.is_empty() {
        out.push(fit(json!({
            "type": "log", "logs": logs, "service": service, "text": "", "at": null, "cont": cont,
        })));
    }
    out
}

/// The `logs_end` line: `stopped`, `replaced`, `gone`, or why it failed.
#[must_use]
pub fn logs_end(logs: &Value, reason: &str) -> String {
    fit(json!({ "type": "logs_end", "logs": logs, "reason": reason }))
}

#[cfg(test)]
mod tests {
    use super::super::rows::TableDelta;
    use super::*;

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
        let rows: Vec<serde_json::Value> = out[1..out.len() - 1]
            .iter()
            .map(|l| {
                assert!(l.len() < MAX_MESSAGE_BYTES, "{}", l.len());
                serde_json::from_str(l).expect("json")
            })
            .collect();
        assert_eq!(rows.len(), 4);
        let upserts: usize = rows
            .iter()
            .map(|m| m["upsert"].as_array().map_or(0, Vec::len))
            .sum();
        let removes: usize = rows
            .iter()
            .map(|m| m["remove"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!((upserts, removes), (200, 1));
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
}
