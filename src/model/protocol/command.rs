//! The commands `serve --stdio` reads (docs/protocol.md, "Commands"):
//! one JSON object per line with an `id` and a `cmd`, parsed here into a
//! [`Command`] or the typed error its reply carries. Names are checked
//! DNS-safe here and again by the rules of the key each command mirrors.
//! The same [`Command`] is what a client writes ([`Request`], serialized
//! tagged by `cmd`), and [`Cmd`] lists the `cmd` values (`hello.commands`).

use std::collections::HashSet;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::PROTOCOL;
use crate::model::name::is_dns_safe;
use crate::model::verbs;

/// A command, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `r` then `y`.
    Reap(Target),
    /// `d` then `y`.
    Down(Target),
    /// `d` on an instance with a pending operation, then `y`.
    QueueDown(Target),
    /// `c` then `y`: the operation's id.
    Cancel(String),
    /// `P` (pause).
    Pause,
    /// `P` (resume).
    Resume,
    /// `R`.
    Pass,
    /// `L`, then `y`: the lease in seconds, within the keys' bounds
    /// ([`verbs::lease_bound`]); `None`: the recorded one.
    Renew(Target, Option<u64>),
    /// `v`, then `y`.
    Verify(Target),
    /// Enter: the detail.
    Detail(String),
    /// `l`: the logs, of one service or all.
    Logs(String, Option<String>),
    /// Close the logs stream the `logs` command with this id opened.
    LogsStop(Value),
    /// Nothing: answered `ok`.
    Ping,
    /// The metrics (docs/metrics.md): answered with the document's lines.
    Metrics,
}

/// A command's `cmd`: one per [`Command`] variant ([`Command::cmd`]), the
/// list `hello.commands` says ([`super::lines::COMMANDS`] is [`Cmd::ALL`]'s
/// names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cmd {
    /// [`Command::Reap`].
    Reap,
    /// [`Command::Down`].
    Down,
    /// [`Command::QueueDown`].
    QueueDown,
    /// [`Command::Cancel`].
    Cancel,
    /// [`Command::Pause`].
    Pause,
    /// [`Command::Resume`].
    Resume,
    /// [`Command::Pass`].
    Pass,
    /// [`Command::Renew`].
    Renew,
    /// [`Command::Verify`].
    Verify,
    /// [`Command::Detail`].
    Detail,
    /// [`Command::Logs`].
    Logs,
    /// [`Command::LogsStop`].
    LogsStop,
    /// [`Command::Ping`].
    Ping,
    /// [`Command::Metrics`].
    Metrics,
}

impl Cmd {
    /// Every `cmd`, in `hello.commands`' order.
    pub const ALL: [Self; 14] = [
        Self::Reap,
        Self::Down,
        Self::QueueDown,
        Self::Cancel,
        Self::Pause,
        Self::Resume,
        Self::Pass,
        Self::Renew,
        Self::Verify,
        Self::Detail,
        Self::Logs,
        Self::LogsStop,
        Self::Ping,
        Self::Metrics,
    ];

    /// The `cmd` text (serde's name of the variant).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Reap => "reap",
            Self::Down => "down",
            Self::QueueDown => "queue_down",
            Self::Cancel => "cancel",
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Pass => "pass",
            Self::Renew => "renew",
            Self::Verify => "verify",
            Self::Detail => "detail",
            Self::Logs => "logs",
            Self::LogsStop => "logs_stop",
            Self::Ping => "ping",
            Self::Metrics => "metrics",
        }
    }

    /// It only reads: taken by a read-only agent too.
    #[must_use]
    pub const fn reads(self) -> bool {
        matches!(
            self,
            Self::Detail | Self::Logs | Self::LogsStop | Self::Ping | Self::Metrics
        )
    }

    /// The `cmd` named `text`, if any.
    #[must_use]
    pub fn named(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|cmd| cmd.as_str() == text)
    }
}

impl Command {
    /// Its `cmd`.
    #[must_use]
    pub const fn cmd(&self) -> Cmd {
        match self {
            Self::Reap(_) => Cmd::Reap,
            Self::Down(_) => Cmd::Down,
            Self::QueueDown(_) => Cmd::QueueDown,
            Self::Cancel(_) => Cmd::Cancel,
            Self::Pause => Cmd::Pause,
            Self::Resume => Cmd::Resume,
            Self::Pass => Cmd::Pass,
            Self::Renew(..) => Cmd::Renew,
            Self::Verify(_) => Cmd::Verify,
            Self::Detail(_) => Cmd::Detail,
            Self::Logs(..) => Cmd::Logs,
            Self::LogsStop(_) => Cmd::LogsStop,
            Self::Ping => Cmd::Ping,
            Self::Metrics => Cmd::Metrics,
        }
    }

    /// Its fields after `cmd`, as docs/protocol.md "Commands" names them.
    fn fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match self {
            Self::Reap(t) | Self::Down(t) | Self::QueueDown(t) | Self::Verify(t) => t.fields(map),
            Self::Renew(t, lease) => {
                t.fields(map)?;
                map.serialize_entry("lease_secs", lease)
            }
            Self::Cancel(operation) => map.serialize_entry("operation", operation),
            Self::Detail(name) => map.serialize_entry("name", name),
            Self::Logs(name, service) => {
                map.serialize_entry("name", name)?;
                match service {
                    Some(service) => map.serialize_entry("service", service),
                    None => Ok(()),
                }
            }
            Self::LogsStop(logs) => map.serialize_entry("logs", logs),
            Self::Pause | Self::Resume | Self::Pass | Self::Ping | Self::Metrics => Ok(()),
        }
    }
}

/// A command as a JSON object tagged by `cmd` (no `id`: [`Request`] adds it).
impl Serialize for Command {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("cmd", &self.cmd())?;
        self.fields(&mut map)?;
        map.end()
    }
}

/// One command line as a client writes it: `{"id": ..., "cmd": ..., ...}`
/// (docs/protocol.md "Commands"); [`parse`] reads it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// The id the reply carries (a string of at most [`MAX_ID_CHARS`], or
    /// an integer).
    pub id: &'a Value,
    /// The command.
    pub command: &'a Command,
}

impl Request<'_> {
    /// The line, without its newline.
    #[must_use]
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Request<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("cmd", &self.command.cmd())?;
        self.command.fields(&mut map)?;
        map.end()
    }
}

/// An instance as the client saw it: its name and its birth (`None`
/// before schema 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The name (DNS-safe: checked when parsed).
    pub name: String,
    /// The birth's `instance_id` the client saw (sent as the row's birth
    /// object, or as the bare string: deprecated). The only part compared.
    pub birth: Option<String>,
    /// The birth's `resource_namespace`, when the client sent the row's
    /// birth object with it (written back as it came; never compared).
    pub resource_namespace: Option<String>,
    /// The row's `created_at` (unix seconds) the client saw, sent beside
    /// `birth: null`: what tells births apart on a store before schema 7
    /// (no `instance_id`; [`crate::model::birth_check`]). Compared only
    /// when there is no `instance_id`; written only beside a null birth.
    pub created_at: Option<i64>,
}

impl Target {
    /// `name` and `birth` (the row's birth object, or null).
    fn fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry("name", &self.name)?;
        let birth = self.birth.as_ref().map(|id| BirthArg {
            instance_id: id,
            resource_namespace: self.resource_namespace.as_deref(),
        });
        map.serialize_entry("birth", &birth)?;
        match (&self.birth, self.created_at) {
            (None, Some(at)) => map.serialize_entry("created_at", &at),
            _ => Ok(()),
        }
    }
}

/// A command's `birth` object (`#/$defs/command_birth`).
#[derive(Serialize)]
struct BirthArg<'a> {
    instance_id: &'a str,
    resource_namespace: Option<&'a str>,
}

/// Why a line is not a command: the reply's `error.kind` and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// `bad_request`, `unknown_command`, `protocol`, `refused`.
    pub kind: &'static str,
    /// What is wrong, in words.
    pub message: String,
    /// The instance a refusal is about (a name that is not DNS-safe): the
    /// refusal is logged and audited as a key's refusal of it is.
    pub instance: Option<String>,
}

fn rejected(kind: &'static str, message: impl Into<String>) -> Rejected {
    Rejected {
        kind,
        message: message.into(),
        instance: None,
    }
}

/// The longest name taken by the commands that only read (`detail`,
/// `logs`), in bytes: any name the store holds may be looked at, as Enter
/// opens the detail of any row.
pub const MAX_NAME_BYTES: usize = 4_096;

/// The longest `id` string taken.
pub const MAX_ID_CHARS: usize = 64;

/// Parse one line (without its newline). Returns the id to answer with
/// (`null` when the line has none usable) and the command or why not.
pub fn parse(line: &str) -> (Value, Result<Command, Rejected>) {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            return (
                Value::Null,
                Err(rejected("bad_request", format!("not JSON: {e}"))),
            );
        }
    };
    let Value::Object(fields) = value else {
        return (
            Value::Null,
            Err(rejected("bad_request", "a command is a JSON object")),
        );
    };
    // serde_json's Map keeps the last of a key given twice: the keys are
    // read again, as written, to refuse that.
    let keys = serde_json::from_str::<Keys>(line);
    if let Ok(Keys(keys)) = &keys
        && keys.iter().filter(|k| k.as_str() == "id").count() > 1
    {
        return (Value::Null, Err(given_twice("id")));
    }
    let id = match fields.get("id") {
        Some(Value::String(s)) if s.chars().count() <= MAX_ID_CHARS => Value::String(s.clone()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n.clone()),
        _ => {
            return (
                Value::Null,
                Err(rejected(
                    "bad_request",
                    "`id` must be a string of at most 64 characters or an integer",
                )),
            );
        }
    };
    if let Some(version) = fields.get("protocol")
        && version.as_u64() != Some(u64::from(PROTOCOL))
    {
        return (
            id,
            Err(rejected(
                "protocol",
                format!("this agent speaks protocol {PROTOCOL}, not {version}"),
            )),
        );
    }
    match keys {
        Ok(Keys(keys)) => {
            let mut seen = HashSet::new();
            if let Some(key) = keys.iter().find(|k| !seen.insert(k.as_str())) {
                return (id, Err(given_twice(key)));
            }
        }
        Err(e) => {
            return (
                id,
                Err(rejected(
                    "bad_request",
                    format!("a field is given twice: {e}"),
                )),
            );
        }
    }
    let command = command(&fields, line);
    (id, command)
}

fn given_twice(key: &str) -> Rejected {
    rejected(
        "bad_request",
        format!(
            "a field is given twice: {}",
            Value::String(crate::model::text::sanitize_short(key, 64))
        ),
    )
}

/// A command object's keys as written, in order, duplicates kept; an
/// object inside it (`birth`) that gives a key twice is an error.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> Visitor<'de> for Top {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<Unique>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(Top)
    }
}

/// Any JSON value none of whose objects gives a key twice.
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Unique)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = Self;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(Self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(Self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(Self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(Self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(Self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(Self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<Self>()?.is_some() {}
        Ok(Self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "{}",
                    Value::String(crate::model::text::sanitize_short(&key, 64))
                )));
            }
            map.next_value::<Self>()?;
        }
        Ok(Self)
    }
}

/// `lease_secs` as written on the line (its JSON text), if given.
#[derive(Deserialize)]
struct LeaseText<'a> {
    #[serde(borrow, default)]
    lease_secs: Option<&'a RawValue>,
}

fn command(fields: &serde_json::Map<String, Value>, line: &str) -> Result<Command, Rejected> {
    let Some(text) = fields.get("cmd").and_then(Value::as_str) else {
        return Err(rejected("bad_request", "`cmd` (a string) is missing"));
    };
    let Some(cmd) = Cmd::named(text) else {
        return Err(rejected(
            "unknown_command",
            format!(
                "unknown command {}",
                serde_json::Value::String(crate::model::text::sanitize_short(text, 64))
            ),
        ));
    };
    Ok(match cmd {
        Cmd::Reap => Command::Reap(target(fields)?),
        Cmd::Down => Command::Down(target(fields)?),
        Cmd::QueueDown => Command::QueueDown(target(fields)?),
        Cmd::Cancel => {
            let id = string(fields, "operation")?;
            if id.is_empty()
                || id.len() > 64
                || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                return Err(rejected(
                    "refused",
                    "refused: not an operation id (1-64 of [0-9A-Za-z-])",
                ));
            }
            Command::Cancel(id)
        }
        Cmd::Pause => Command::Pause,
        Cmd::Resume => Command::Resume,
        Cmd::Pass => Command::Pass,
        Cmd::Renew => {
            let target = target(fields)?;
            let lease = lease(fields, line, &target.name)?;
            Command::Renew(target, lease)
        }
        Cmd::Verify => Command::Verify(target(fields)?),
        Cmd::Detail => Command::Detail(any_name(fields)?),
        Cmd::Logs => {
            let service = match fields.get("service") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if is_dns_safe(s) => Some(s.clone()),
                Some(_) => {
                    return Err(rejected(
                        "refused",
                        "refused: `service` is not a DNS-safe name",
                    ));
                }
            };
            Command::Logs(any_name(fields)?, service)
        }
        Cmd::LogsStop => match fields.get("logs") {
            Some(v @ (Value::String(_) | Value::Number(_))) => Command::LogsStop(v.clone()),
            _ => {
                return Err(rejected(
                    "bad_request",
                    "`logs` (the id of the logs command) is missing",
                ));
            }
        },
        Cmd::Ping => Command::Ping,
        Cmd::Metrics => Command::Metrics,
    })
}

fn string(fields: &serde_json::Map<String, Value>, key: &str) -> Result<String, Rejected> {
    match fields.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(rejected(
            "bad_request",
            format!("`{key}` (a string) is missing"),
        )),
    }
}

/// `name`, DNS-safe (the keys act on no other: stackless §6's name rule).
fn name(fields: &serde_json::Map<String, Value>) -> Result<String, Rejected> {
    let name = any_name(fields)?;
    if !is_dns_safe(&name) {
        return Err(Rejected {
            instance: Some(name),
            ..rejected(
                "refused",
                "refused: the name is not DNS-safe; nothing is done to it",
            )
        });
    }
    Ok(name)
}

/// `name`, any string of at most [`MAX_NAME_BYTES`] (used only as a SQL
/// parameter and a key).
fn any_name(fields: &serde_json::Map<String, Value>) -> Result<String, Rejected> {
    let name = string(fields, "name")?;
    if name.len() > MAX_NAME_BYTES {
        return Err(rejected(
            "bad_request",
            format!("`name` is over {MAX_NAME_BYTES} bytes"),
        ));
    }
    Ok(name)
}

fn target(fields: &serde_json::Map<String, Value>) -> Result<Target, Rejected> {
    let name = name(fields)?;
    let (birth, resource_namespace) = birth(fields.get("birth"))?;
    let created_at = match fields.get("created_at") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.is_i64() => n.as_i64(),
        Some(_) => {
            return Err(rejected(
                "bad_request",
                "`created_at` must be the instance row's `created_at` (an integer), or null",
            ));
        }
    };
    Ok(Target {
        name,
        birth,
        resource_namespace,
        created_at,
    })
}

/// `birth` as the instance rows send it, `{"instance_id", "resource_namespace"}`
/// (only the `instance_id` is compared), or null/absent (a store before
/// schema 7); the bare `instance_id` string is taken too in protocol 1
/// (deprecated). Returns the `instance_id` and the `resource_namespace`.
fn birth(value: Option<&Value>) -> Result<(Option<String>, Option<String>), Rejected> {
    let wrong = || {
        rejected(
            "bad_request",
            "`birth` must be the instance row's birth ({\"instance_id\": ..., \"resource_namespace\": ...}), or null",
        )
    };
    match value {
        None | Some(Value::Null) => Ok((None, None)),
        Some(Value::Object(birth)) => {
            match (birth.get("instance_id"), birth.get("resource_namespace")) {
                (Some(Value::String(id)), None | Some(Value::Null)) => Ok((Some(id.clone()), None)),
                (Some(Value::String(id)), Some(Value::String(ns))) => {
                    Ok((Some(id.clone()), Some(ns.clone())))
                }
                _ => Err(wrong()),
            }
        }
        Some(Value::String(id)) => Ok((Some(id.clone()), None)),
        Some(_) => Err(wrong()),
    }
}

/// `renew`'s `lease_secs`: absent or null (the recorded lease), or a JSON
/// number, judged as written on `line`, within the keys' bounds ([`verbs::json_lease`]); out of them it
/// is refused as the key's refusal of `name` is (logged, audited).
fn lease(
    fields: &serde_json::Map<String, Value>,
    line: &str,
    name: &str,
) -> Result<Option<u64>, Rejected> {
    match fields.get("lease_secs") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            // The number as written (a fraction an f64 would round whole
            // is still a fraction).
            let written = serde_json::from_str::<LeaseText>(line)
                .ok()
                .and_then(|t| t.lease_secs)
                .map_or_else(|| n.to_string(), |raw| raw.get().to_owned());
            verbs::json_lease(&written).map(Some).map_err(|_| Rejected {
                instance: Some(name.to_owned()),
                ..rejected("refused", verbs::LEASE_REFUSAL)
            })
        }
        Some(_) => Err(rejected(
            "bad_request",
            "`lease_secs` must be a number of seconds, or null",
        )),
    }
}

#[cfg(test)]
mod tests;
