//! The agent's side: each out-message written as one line
//! (`hello`, a group of `reset`/`rows`/`synced`, `reaper`, banners,
//! Activity, heartbeats, replies, logs), from the typed messages of
//! [`super`].

use serde_json::Value;

use super::*;

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
fn reset_line(seq: u64, reason: Option<&str>) -> String {
    line(&Message::Reset(Reset {
        seq,
        reason: reason.map(str::to_owned),
    }))
}

/// The lines of one snapshot group: `reset` first when `reset`, then the
/// `rows` messages of `delta` (none for a table that did not change),
/// then `synced`. `at`: unix seconds. Each line is handed to `emit` as
/// it is made.
pub fn group(seq: u64, reset: bool, delta: &Delta, at: i64, emit: &mut impl FnMut(String)) {
    if reset {
        emit(reset_line(seq, None));
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

/// [`group`] of the changes from `tables` to `snapshot` (a `reset` says
/// the snapshot's [`Snapshot::reopened`] as its `reason`), written as they
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
        emit(reset_line(seq, snapshot.reopened));
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

/// A keyframe's group without its `reset` (the caller writes it, with no
/// `reason`): every row of `snapshot` as upserts ([`Tables::every_row`],
/// the rows a `reset` group of it sends, none held and no table built),
/// then `synced` (`at`: unix seconds). Each line is handed to `emit` as
/// it is made.
pub fn every_row_group(seq: u64, snapshot: &Snapshot, at: i64, emit: &mut impl FnMut(String)) {
    let mut chunk: Option<Chunk> = None;
    let counts = Tables::every_row(snapshot, &mut |table, text| {
        if chunk.as_ref().is_some_and(|c| c.table != table)
            && let Some(done) = chunk.take()
        {
            done.flush(emit);
        }
        chunk
            .get_or_insert_with(|| Chunk::new(seq, table))
            .push(false, &text, emit);
    });
    if let Some(done) = chunk {
        done.flush(emit);
    }
    emit(synced(seq, at, counts));
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
