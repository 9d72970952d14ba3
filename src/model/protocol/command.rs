//! The commands `serve --stdio` reads (docs/protocol.md, "Commands"):
//! one JSON object per line with an `id` and a `cmd`, parsed here into a
//! [`Command`] or the typed error its reply carries. Names are checked
//! DNS-safe here and again by the rules of the key each command mirrors.

use serde_json::Value;

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
}

/// An instance as the client saw it: its name and its birth's
/// `instance_id` (`None` before schema 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The name (DNS-safe: checked when parsed).
    pub name: String,
    /// The birth's `instance_id` the client saw (sent as the row's birth
    /// object, or as the bare string: deprecated).
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
            let target = target(fields)?;
            let lease = lease(fields, &target.name)?;
            Command::Renew(target, lease)
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
    let birth = birth(fields.get("birth"))?;
    Ok(Target { name, birth })
}

/// `birth` as the instance rows send it, `{"instance_id", "resource_namespace"}`
/// (only the `instance_id` is compared), or null/absent (a store before
/// schema 7); the bare `instance_id` string is taken too in protocol 1
/// (deprecated). Returns the `instance_id`.
fn birth(value: Option<&Value>) -> Result<Option<String>, Rejected> {
    let wrong = || {
        rejected(
            "bad_request",
            "`birth` must be the instance row's birth ({\"instance_id\": ..., \"resource_namespace\": ...}), or null",
        )
    };
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(birth)) => {
            match (birth.get("instance_id"), birth.get("resource_namespace")) {
                (Some(Value::String(id)), None | Some(Value::String(_) | Value::Null)) => {
                    Ok(Some(id.clone()))
                }
                _ => Err(wrong()),
            }
        }
        Some(Value::String(id)) => Ok(Some(id.clone())),
        Some(_) => Err(wrong()),
    }
}

/// `renew`'s `lease_secs`: absent or null (the recorded lease), or a JSON
/// number within the keys' bounds ([`verbs::json_lease`]); out of them it
/// is refused as the key's refusal of `name` is (logged, audited).
fn lease(fields: &serde_json::Map<String, Value>, name: &str) -> Result<Option<u64>, Rejected> {
    match fields.get("lease_secs") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => verbs::json_lease(n).map(Some).map_err(|_| Rejected {
            instance: Some(name.to_owned()),
            ..rejected("refused", verbs::LEASE_REFUSAL)
        }),
        Some(_) => Err(rejected(
            "bad_request",
            "`lease_secs` must be a number of seconds, or null",
        )),
    }
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
    fn golf(birth: Option<&str>) -> Target {
        Target {
            name: "golf".into(),
            birth: birth.map(str::to_owned),
        }
    }

    #[test]
    fn leases_outside_the_keys_bounds_are_refused_naming_the_instance() {
        let renew = |lease: &str| {
            parse(&format!(
                r#"{{"id":1,"cmd":"renew","name":"golf","lease_secs":{lease}}}"#
            ))
            .1
        };
        for lease in [
            "0",
            "-1",
            "2592001",
            "9223372036854775807",
            "18446744073709551615",
            "18446744073709551616",
            "3.15e11",
            "1.5",
            "0.5",
            "-0.0",
            "1e300",
        ] {
            assert_eq!(
                renew(lease),
                Err(Rejected {
                    kind: "refused",
                    message: "refused: a lease is 1 s to 30 days".into(),
                    instance: Some("golf".into()),
                }),
                "lease_secs {lease}"
            );
        }
        for (lease, secs) in [
            ("1", 1),
            ("2592000", 2_592_000),
            ("3600.0", 3600),
            ("3.6e3", 3600),
        ] {
            assert_eq!(
                renew(lease),
                Ok(Command::Renew(golf(None), Some(secs))),
                "lease_secs {lease}"
            );
        }
        assert_eq!(renew("null"), Ok(Command::Renew(golf(None), None)));
        assert_eq!(renew(r#""3600""#).map_err(|r| r.kind), Err("bad_request"));
        // Not a number serde_json can hold: not JSON at all.
        assert_eq!(
            parse(r#"{"id":1,"cmd":"renew","name":"golf","lease_secs":1e400}"#),
            (
                Value::Null,
                Err(rejected(
                    "bad_request",
                    "not JSON: number out of range at line 1 column 54"
                ))
            )
        );
    }

    #[test]
    fn birth_is_the_rows_object_or_the_deprecated_string() {
        let reap = |birth: &str| {
            parse(&format!(
                r#"{{"id":1,"cmd":"reap","name":"golf","birth":{birth}}}"#
            ))
            .1
        };
        let id = "70aa7461da17489bb88e709a64f291aa";
        for birth in [
            format!(r#"{{"instance_id":"{id}","resource_namespace":"sl-{id}"}}"#),
            format!(r#"{{"instance_id":"{id}"}}"#),
            format!(r#"{{"instance_id":"{id}","resource_namespace":null}}"#),
            format!(r#""{id}""#),
        ] {
            assert_eq!(
                reap(&birth),
                Ok(Command::Reap(golf(Some(id)))),
                "birth {birth}"
            );
        }
        assert_eq!(reap("null"), Ok(Command::Reap(golf(None))));
        assert_eq!(
            parse(r#"{"id":1,"cmd":"verify","name":"golf"}"#).1,
            Ok(Command::Verify(golf(None)))
        );
        for birth in [
            "5",
            "true",
            "[]",
            "{}",
            r#"{"instance_id":5}"#,
            r#"{"resource_namespace":"sl-x"}"#,
            r#"{"instance_id":"ab","resource_namespace":5}"#,
        ] {
            assert_eq!(
                reap(birth).map_err(|r| r.kind),
                Err("bad_request"),
                "birth {birth}"
            );
        }
    }
}
