//! A client of the stream protocol that knows only `docs/protocol.md` and
//! `docs/protocol.schema.json`: [`validate`] checks one out-line against
//! the schema, [`validate_command`] one command line, and [`Reader`]
//! rebuilds the tables, the reaper, the banners and the Activity lines
//! from the out-lines as a client would, parsing them as
//! `serde_json::Value` (never the crate's own types) and failing loudly
//! on anything the document does not allow.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// The protocol version this client speaks (`hello.protocol`).
pub const CLIENT_PROTOCOL: u64 = 1;

struct Compiled {
    schemas: boon::Schemas,
    message: boon::SchemaIndex,
    command: boon::SchemaIndex,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.schema.json");
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        let message = compiler
            .compile(path, &mut schemas)
            .unwrap_or_else(|e| panic!("docs/protocol.schema.json does not compile: {e:#}"));
        let command = compiler
            .compile(&format!("{path}#/$defs/command"), &mut schemas)
            .unwrap_or_else(|e| panic!("#/$defs/command does not compile: {e:#}"));
        Compiled {
            schemas,
            message,
            command,
        }
    })
}

fn check(line: &str, index: impl Fn(&Compiled) -> boon::SchemaIndex) -> Result<(), String> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {}", short(line)))?;
    let compiled = compiled();
    compiled
        .schemas
        .validate(&value, index(compiled))
        .map_err(|e| format!("{e}\n  in: {}", short(line)))
}

/// `line` (one out-message, without its newline) is valid under
/// `docs/protocol.schema.json`; else why not.
pub fn validate(line: &str) -> Result<(), String> {
    check(line, |c| c.message)
}

/// `line` (one command, without its newline) is valid under the schema's
/// `#/$defs/command`; else why not.
pub fn validate_command(line: &str) -> Result<(), String> {
    check(line, |c| c.command)
}

/// At most 300 characters of `line`, for messages.
pub fn short(line: &str) -> String {
    let mut text: String = line.chars().take(300).collect();
    if text.len() < line.len() {
        text.push('…');
    }
    text
}

/// An instance row's key: the name and the birth's `instance_id` (null
/// before schema 7).
pub type InstanceKey = (String, Option<String>);

/// The three tables as a client holds them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tables {
    /// Instance rows by `(name, birth.instance_id)`.
    pub instances: BTreeMap<InstanceKey, Value>,
    /// Operation rows by `id`.
    pub operations: BTreeMap<String, Value>,
    /// Backoff rows by `instance`.
    pub backoffs: BTreeMap<String, Value>,
}

/// What one applied line was, for a caller that waits on the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// `hello`.
    Hello,
    /// A group ended: its `seq`; the tables as it left them.
    Synced(u64),
    /// A `reply`, as it came.
    Reply(Value),
    /// Any other message.
    Other(String),
}

/// The client: tables, reaper, banners and Activity rebuilt from the
/// out-lines, checked against the document as they come.
#[derive(Debug, Default)]
pub struct Reader {
    /// The `hello` message.
    pub hello: Option<Value>,
    /// The tables as the rows so far left them.
    pub tables: Tables,
    /// The tables at the last `synced` (one consistent read of the store).
    pub shown: Tables,
    /// The group being received: its `seq`.
    pub group: Option<u64>,
    /// The last `synced` group's `seq`.
    pub synced: Option<u64>,
    /// The last `synced.at`.
    pub synced_at: Option<i64>,
    /// The last `reaper` message (or `hello.reaper`).
    pub reaper: Option<Value>,
    /// The banners set, by id.
    pub banners: BTreeMap<String, Value>,
    /// Every `activity` message, in order.
    pub activity: Vec<Value>,
    /// Every `reply`, in order.
    pub replies: Vec<Value>,
    /// Every `log` and `logs_end` message, in order.
    pub logs: Vec<Value>,
    /// How many `heartbeat`s came.
    pub heartbeats: usize,
    /// Types this client does not know (ignored, as the document says).
    pub ignored: Vec<String>,
}

fn field<'v>(message: &'v Value, name: &str) -> Result<&'v Value, String> {
    message
        .get(name)
        .ok_or_else(|| format!("`{name}` missing in {message}"))
}

fn int(message: &Value, name: &str) -> Result<i64, String> {
    field(message, name)?
        .as_i64()
        .ok_or_else(|| format!("`{name}` is not an integer in {message}"))
}

fn text<'v>(message: &'v Value, name: &str) -> Result<&'v str, String> {
    field(message, name)?
        .as_str()
        .ok_or_else(|| format!("`{name}` is not a string in {message}"))
}

/// An instance row's or remove key's `(name, birth)`: the birth is the
/// row's `birth.instance_id` or a key's `birth` string.
fn instance_key(row: &Value) -> Result<InstanceKey, String> {
    let name = text(row, "name")?.to_owned();
    let birth = match field(row, "birth")? {
        Value::Null => None,
        Value::String(id) => Some(id.clone()),
        Value::Object(_) => Some(text(&row["birth"], "instance_id")?.to_owned()),
        other => return Err(format!("`birth` is {other} in {row}")),
    };
    Ok((name, birth))
}

impl Reader {
    /// A client that has read nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one out-line (without its newline): what it was, or why it
    /// breaks the document.
    pub fn apply(&mut self, line: &str) -> Result<Seen, String> {
        let message: Value =
            serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {}", short(line)))?;
        let kind = text(&message, "type")?.to_owned();
        if kind != "hello" && self.hello.is_none() {
            return Err(format!("`{kind}` before `hello`"));
        }
        if let Some(max) = self
            .hello
            .as_ref()
            .and_then(|h| h["max_message_bytes"].as_u64())
            && line.len() as u64 + 1 > max
        {
            return Err(format!(
                "a {kind} line of {} bytes with its newline, over max_message_bytes {max}",
                line.len() + 1
            ));
        }
        match kind.as_str() {
            "hello" => self.on_hello(message),
            "reset" => self.on_reset(&message),
            "rows" => self.on_rows(&message),
            "synced" => self.on_synced(&message),
            "reaper" => {
                self.reaper = Some(message);
                Ok(Seen::Other(kind))
            }
            "banner" => {
                self.banners
                    .insert(text(&message, "id")?.to_owned(), message);
                Ok(Seen::Other(kind))
            }
            "banner_cleared" => {
                self.banners.remove(text(&message, "id")?);
                Ok(Seen::Other(kind))
            }
            "activity" => {
                self.activity.push(message);
                Ok(Seen::Other(kind))
            }
            "heartbeat" => {
                let seq = u64::try_from(int(&message, "seq")?).ok();
                if seq != self.synced {
                    return Err(format!(
                        "heartbeat seq {seq:?}, the last synced was {:?}",
                        self.synced
                    ));
                }
                self.heartbeats += 1;
                Ok(Seen::Other(kind))
            }
            "reply" => {
                self.replies.push(message.clone());
                Ok(Seen::Reply(message))
            }
            "log" | "logs_end" => {
                self.logs.push(message);
                Ok(Seen::Other(kind))
            }
            _ => {
                self.ignored.push(kind.clone());
                Ok(Seen::Other(kind))
            }
        }
    }

    fn on_hello(&mut self, message: Value) -> Result<Seen, String> {
        if self.hello.is_some() {
            return Err("a second `hello`".into());
        }
        let protocol = field(&message, "protocol")?;
        match protocol.as_u64() {
            Some(CLIENT_PROTOCOL) => {}
            Some(newer) if newer > CLIENT_PROTOCOL => {
                return Err(format!(
                    "protocol {newer} is newer than this client ({CLIENT_PROTOCOL})"
                ));
            }
            _ => {
                return Err(format!(
                    "protocol {protocol} is not one this client speaks ({CLIENT_PROTOCOL})"
                ));
            }
        }
        self.reaper = Some(field(&message, "reaper")?.clone());
        self.hello = Some(message);
        Ok(Seen::Hello)
    }

    fn on_reset(&mut self, message: &Value) -> Result<Seen, String> {
        let seq = self.open_group(message)?;
        if self.group.is_some() {
            return Err(format!("`reset` {seq} inside group {:?}", self.group));
        }
        self.tables = Tables::default();
        self.group = Some(seq);
        Ok(Seen::Other("reset".into()))
    }

    /// The `seq` a message of a new group must carry: one more than the
    /// last `synced` (1 for the first).
    fn open_group(&self, message: &Value) -> Result<u64, String> {
        let seq = u64::try_from(int(message, "seq")?).map_err(|e| e.to_string())?;
        let want = self.synced.map_or(1, |s| s + 1);
        if seq != want {
            return Err(format!("seq {seq} where {want} was due: {message}"));
        }
        Ok(seq)
    }

    fn on_rows(&mut self, message: &Value) -> Result<Seen, String> {
        let seq = self.open_group(message)?;
        match self.group {
            Some(group) if group == seq => {}
            Some(group) => return Err(format!("rows of seq {seq} inside group {group}")),
            None if self.synced.is_none() => {
                return Err("the first group does not start with `reset`".into());
            }
            None => self.group = Some(seq),
        }
        let upsert = field(message, "upsert")?
            .as_array()
            .ok_or("`upsert` is not an array")?;
        let remove = field(message, "remove")?
            .as_array()
            .ok_or("`remove` is not an array")?;
        let tables = &mut self.tables;
        match text(message, "table")? {
            "instances" => {
                for row in upsert {
                    tables.instances.insert(instance_key(row)?, row.clone());
                }
                for key in remove {
                    let key = instance_key(key)?;
                    tables
                        .instances
                        .remove(&key)
                        .ok_or_else(|| format!("remove of instance {key:?}, not held"))?;
                }
            }
            "operations" => keyed(&mut tables.operations, "id", upsert, remove)?,
            "backoffs" => keyed(&mut tables.backoffs, "instance", upsert, remove)?,
            other => return Err(format!("rows of an unknown table {other}")),
        }
        Ok(Seen::Other("rows".into()))
    }

    fn on_synced(&mut self, message: &Value) -> Result<Seen, String> {
        let seq = self.open_group(message)?;
        if self.synced.is_none() && self.group.is_none() {
            return Err("the first group does not start with `reset`".into());
        }
        let counts = field(message, "counts")?;
        let own = [
            ("instances", self.tables.instances.len()),
            ("operations", self.tables.operations.len()),
            ("backoffs", self.tables.backoffs.len()),
        ];
        for (table, held) in own {
            let said = counts[table].as_u64();
            if said != Some(held as u64) {
                return Err(format!(
                    "synced {seq}: counts.{table} is {said:?}, this client holds {held}"
                ));
            }
        }
        self.group = None;
        self.synced = Some(seq);
        self.synced_at = Some(int(message, "at")?);
        self.shown = self.tables.clone();
        Ok(Seen::Synced(seq))
    }
}

/// Apply a string-keyed table's rows (`field`: the key's field).
fn keyed(
    table: &mut BTreeMap<String, Value>,
    field: &str,
    upsert: &[Value],
    remove: &[Value],
) -> Result<(), String> {
    for row in upsert {
        table.insert(text(row, field)?.to_owned(), row.clone());
    }
    for key in remove {
        let key = text(key, field)?;
        table
            .remove(key)
            .ok_or_else(|| format!("remove of {field} {key}, not held"))?;
    }
    Ok(())
}
