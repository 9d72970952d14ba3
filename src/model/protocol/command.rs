//! The commands `serve --stdio` reads (docs/protocol.md, "Commands"):
//! one JSON object per line with an `id` and a `cmd`, parsed here into a
//! [`Command`] or the typed error its reply carries. Names are checked
//! DNS-safe here and again by the rules of the key each command mirrors.

use serde_json::Value;

use super::PROTOCOL;
use crate::model::name::is_dns_safe;

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
    /// `L`, then `y`: the lease in seconds (`None`: the recorded one).
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
}

/// An instance as the client saw it: its name and its birth's
/// `instance_id` (`None` before schema 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The name (DNS-safe: checked when parsed).
    pub name: String,
    /// The birth the client saw.
    pub birth: Option<String>,
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
    let command = command(&fields);
    (id, command)
}

fn command(fields: &serde_json::Map<String, Value>) -> Result<Command, Rejected> {
    let Some(cmd) = fields.get("cmd").and_then(Value::as_str) else {
        return Err(rejected("bad_request", "`cmd` (a string) is missing"));
    };
    Ok(match cmd {
        "reap" => Command::Reap(target(fields)?),
        "down" => Command::Down(target(fields)?),
        "queue_down" => Command::QueueDown(target(fields)?),
        "cancel" => {
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
        "pause" => Command::Pause,
        "resume" => Command::Resume,
        "pass" => Command::Pass,
        "renew" => {
            let lease = match fields.get("lease_secs") {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(secs) if secs > 0 => Some(secs),
                    _ => {
                        return Err(rejected(
                            "bad_request",
                            "`lease_secs` must be a positive integer",
                        ));
                    }
                },
            };
            Command::Renew(target(fields)?, lease)
        }
        "verify" => Command::Verify(target(fields)?),
        "detail" => Command::Detail(any_name(fields)?),
        "logs" => {
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
        "logs_stop" => match fields.get("logs") {
            Some(v @ (Value::String(_) | Value::Number(_))) => Command::LogsStop(v.clone()),
            _ => {
                return Err(rejected(
                    "bad_request",
                    "`logs` (the id of the logs command) is missing",
                ));
            }
        },
        "ping" => Command::Ping,
        other => {
            return Err(rejected(
                "unknown_command",
                format!(
                    "unknown command {}",
                    serde_json::Value::String(crate::model::text::sanitize_short(other, 64))
                ),
            ));
        }
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
    let birth = match fields.get("birth") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(rejected(
                "bad_request",
                "`birth` must be the instance_id string, or null",
            ));
        }
    };
    Ok(Target { name, birth })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_ids() {
        assert_eq!(
            parse(r#"{"id":7,"cmd":"reap","name":"golf","birth":"ab"}"#),
            (
                Value::from(7),
                Ok(Command::Reap(Target {
                    name: "golf".into(),
                    birth: Some("ab".into())
                }))
            )
        );
        assert_eq!(
            parse(r#"{"id":"x","cmd":"renew","name":"golf","lease_secs":3600}"#).1,
            Ok(Command::Renew(
                Target {
                    name: "golf".into(),
                    birth: None
                },
                Some(3600)
            ))
        );
        assert_eq!(parse(r#"{"id":1,"cmd":"pause"}"#).1, Ok(Command::Pause));
    }

    #[test]
    fn bad_lines_get_typed_errors() {
        let kind = |line: &str| parse(line).1.map_err(|r| r.kind);
        assert_eq!(kind("not json"), Err("bad_request"));
        assert_eq!(kind("[1]"), Err("bad_request"));
        assert_eq!(kind(r#"{"cmd":"ping"}"#), Err("bad_request"));
        assert_eq!(kind(r#"{"id":1,"cmd":"rm -rf"}"#), Err("unknown_command"));
        assert_eq!(
            kind(r#"{"id":1,"cmd":"reap","name":"a;rm -rf /"}"#),
            Err("refused")
        );
        assert_eq!(
            kind(r#"{"id":1,"cmd":"reap","name":"golf","birth":5}"#),
            Err("bad_request")
        );
        assert_eq!(
            kind(r#"{"id":1,"protocol":2,"cmd":"ping"}"#),
            Err("protocol")
        );
        assert_eq!(
            kind(r#"{"id":1,"cmd":"cancel","operation":"../x"}"#),
            Err("refused")
        );
        let long_id = format!(r#"{{"id":"{}","cmd":"ping"}}"#, "x".repeat(65));
        assert_eq!(parse(&long_id).0, Value::Null);
    }
}
