//! The out-stream's messages as lines (docs/protocol.md, "The
//! out-stream"), each JSON text without its newline and at most
//! [`MAX_MESSAGE_BYTES`] with it: a table's rows are split over as many
//! `rows` messages as they need.

use serde::Serialize;
use serde_json::{Value, json};

use super::rows::{Delta, MAX_ROW_BYTES, fit};
use super::{HEARTBEAT_SECS, MAX_MESSAGE_BYTES, PROTOCOL};

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
}

/// The `cmd` values `serve --stdio` takes (`hello.commands`).
pub const COMMANDS: [&str; 13] = [
    "reap",
    "down",
    "queue_down",
    "cancel",
    "pause",
    "resume",
    "pass",
    "renew",
    "verify",
    "detail",
    "logs",
    "logs_stop",
    "ping",
];

/// The `hello` line.
#[must_use]
pub fn hello(hello: &Hello) -> String {
    let commands: &[&str] = if hello.follow_only { &[] } else { &COMMANDS };
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
    }))
}

/// The lines of one snapshot group: `reset` first when `reset`, then the
/// `rows` messages of `delta` (none for a table that did not change),
/// then `synced`. `at`: unix seconds.
#[must_use]
pub fn group(seq: u64, reset: bool, delta: &Delta, at: i64) -> Vec<String> {
    let mut out = Vec::new();
    if reset {
        out.push(json!({ "type": "reset", "seq": seq }).to_string());
    }
    for (table, changes) in &delta.tables {
        let head = format!(
            "{{\"type\":\"rows\",\"seq\":{seq},\"table\":\"{}\",",
            table.as_str()
        );
        rows_lines(&head, &changes.upsert, &changes.remove, &mut out);
    }
    out.push(
        json!({
            "type": "synced",
            "seq": seq,
            "at": at,
            "counts": {
                "instances": delta.counts[0],
                "operations": delta.counts[1],
                "backoffs": delta.counts[2],
            },
        })
        .to_string(),
    );
    out
}

/// `rows` messages carrying `upsert` then `remove` (each element already
/// JSON, at most [`MAX_ROW_BYTES`]), each line under the limit.
fn rows_lines(head: &str, upsert: &[String], remove: &[String], out: &mut Vec<String>) {
    // `{head}"upsert":[...],"remove":[...]}` plus the newline.
    const FRAME: usize = "\"upsert\":[],\"remove\":[]}\n".len();
    let budget = MAX_MESSAGE_BYTES - head.len() - FRAME;
    debug_assert!(MAX_ROW_BYTES < budget);
    let mut ups: Vec<&str> = Vec::new();
    let mut rems: Vec<&str> = Vec::new();
    let mut used = 0usize;
    let flush = |ups: &mut Vec<&str>, rems: &mut Vec<&str>, out: &mut Vec<String>| {
        if ups.is_empty() && rems.is_empty() {
            return;
        }
        out.push(format!(
            "{head}\"upsert\":[{}],\"remove\":[{}]}}",
            ups.join(","),
            rems.join(",")
        ));
        ups.clear();
        rems.clear();
    };
    for (is_remove, text) in upsert
        .iter()
        .map(|t| (false, t))
        .chain(remove.iter().map(|t| (true, t)))
    {
        let cost = text.len() + 1;
        if used + cost > budget {
            flush(&mut ups, &mut rems, out);
            used = 0;
        }
        used += cost;
        if is_remove {
            rems.push(text);
        } else {
            ups.push(text);
        }
    }
    flush(&mut ups, &mut rems, out);
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

/// A `log` line of the `logs` command `logs`.
#[must_use]
pub fn log(logs: &Value, service: &str, text: &str) -> String {
    fit(json!({ "type": "log", "logs": logs, "service": service, "text": text }))
}

/// The `logs_end` line: `stopped`, `replaced`, `gone`, or why it failed.
#[must_use]
pub fn logs_end(logs: &Value, reason: &str) -> String {
    fit(json!({ "type": "logs_end", "logs": logs, "reason": reason }))
}
