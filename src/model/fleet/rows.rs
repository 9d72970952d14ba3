//! One host's rows as its agent sends them (docs/protocol.md "Instance
//! rows", "Operation rows", "Backoff rows"), read from the JSON into typed
//! values. Texts are kept as sent (redacted by the agent, not yet
//! sanitized): they are sanitized where they are drawn, and a name goes
//! back to its host exactly as read.

use serde_json::Value;

/// An instance's key on its host: its name and its birth's `instance_id`
/// (`None` on stores before schema 7, where the name alone is the key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceKey {
    /// The name, as stored.
    pub name: String,
    /// The birth's `instance_id` (32 hex), or `None`.
    pub birth: Option<String>,
}

/// An instance's lease (stackless §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Its length (seconds).
    pub duration_secs: i64,
    /// When it expires (unix seconds).
    pub expires_at: i64,
}

/// An instance's operation lock (stackless §2), as its host probed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    /// The operation holding it (`up`, `down`, ...), as stored.
    pub operation: String,
    /// The holder's pid.
    pub holder_pid: i64,
    /// The holder's host, as stored (`None` before migration 4).
    pub holder_host: Option<String>,
    /// `alive`, `stale_pid_gone`, `stale_pid_reused`, `foreign_host`,
    /// `unknown`.
    pub liveness: String,
    /// It blocks the reaper (stackless §2).
    pub held: bool,
}

/// A tombstone's collection (D14): when it is due, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gc {
    /// When it becomes due (unix seconds).
    pub due_at: i64,
    /// `controller`, `reaper` or `stackless`.
    pub collected_by: String,
}

/// One instance row of a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Its key (name and birth).
    pub key: InstanceKey,
    /// The name is DNS-safe (only such names are acted upon).
    pub dns_safe: bool,
    /// `local`, `render`, ..., as stored.
    pub substrate: String,
    /// `active`, `tombstoned`, or what the store says.
    pub status: String,
    /// When it was created (unix seconds).
    pub created_at: Option<i64>,
    /// When it was tombstoned (unix seconds).
    pub tombstoned_at: Option<i64>,
    /// Its lease.
    pub lease: Option<Lease>,
    /// Its operation lock.
    pub lock: Option<Lock>,
    /// A row left by a failed `up`.
    pub failed_up: bool,
    /// Recorded service processes found dead.
    pub services_dead: i64,
    /// A tombstone's collection.
    pub gc: Option<Gc>,
}

impl Instance {
    /// Active with a lease expired at `now` (unix seconds; stackless §6:
    /// `expires_at <= now`).
    #[must_use]
    pub fn expired(&self, now: i64) -> bool {
        self.status == "active" && self.lease.is_some_and(|lease| lease.expires_at <= now)
    }

    /// Tombstoned.
    #[must_use]
    pub fn tombstoned(&self) -> bool {
        self.status == "tombstoned"
    }

    /// Its birth as a command sends it (`null` before schema 7).
    #[must_use]
    pub fn birth_value(&self) -> Value {
        self.key.birth.clone().map_or(Value::Null, Value::String)
    }
}

/// One operation row of a host (0.4.0 controller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Its id, as sent (a string or a number).
    pub id: Value,
    /// The instance it works on.
    pub instance: String,
    /// `up`, `down`, `verify`, `gc`.
    pub verb: String,
    /// `queued`, `running`, `succeeded`, `failed`, `cancelled`,
    /// `interrupted`.
    pub status: String,
    /// When it was created (unix seconds).
    pub created_at: i64,
    /// When it last changed (unix seconds).
    pub updated_at: i64,
    /// Its error's `code: message`, if any.
    pub error: Option<String>,
}

impl Operation {
    /// `queued` or `running`.
    #[must_use]
    pub fn pending(&self) -> bool {
        matches!(self.status.as_str(), "queued" | "running")
    }
}

/// One backoff row of a host (a failed reap, stackless §6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    /// The instance.
    pub instance: String,
    /// Failed attempts so far.
    pub attempts: i64,
    /// `code: message` (redacted by the agent).
    pub summary: String,
    /// What to do about it, if stackless says.
    pub remediation: Option<String>,
    /// When the reaper tries again (unix seconds).
    pub next_retry_at: i64,
}

fn text(row: &Value, field: &str) -> Option<String> {
    row.get(field).and_then(Value::as_str).map(str::to_owned)
}

fn int(row: &Value, field: &str) -> Option<i64> {
    row.get(field).and_then(Value::as_i64)
}

/// A birth as a row or a `remove` key carries it: an object's
/// `instance_id`, a string, or `null`.
fn birth_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(id) => Some(id.clone()),
        Value::Object(birth) => birth
            .get("instance_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
}

/// The key of an instance row or of an instance `remove` key; `None`
/// without a string `name`.
#[must_use]
pub fn instance_key(row: &Value) -> Option<InstanceKey> {
    Some(InstanceKey {
        name: text(row, "name")?,
        birth: birth_of(row.get("birth")),
    })
}

/// An instance row; `None` when it has no string `name` (not the
/// protocol: dropped).
#[must_use]
pub fn instance(row: &Value) -> Option<Instance> {
    let key = instance_key(row)?;
    let lease = row.get("lease").and_then(|lease| {
        Some(Lease {
            duration_secs: int(lease, "duration_secs")?,
            expires_at: int(lease, "expires_at")?,
        })
    });
    let lock = row.get("lock").filter(|l| l.is_object()).map(|lock| Lock {
        operation: text(lock, "operation").unwrap_or_default(),
        holder_pid: int(lock, "holder_pid").unwrap_or(0),
        holder_host: text(lock, "holder_host"),
        liveness: text(lock, "liveness_state").unwrap_or_else(|| "unknown".to_owned()),
        held: lock.get("held").and_then(Value::as_bool).unwrap_or(true),
    });
    let gc = row.get("gc").and_then(|gc| {
        Some(Gc {
            due_at: int(gc, "due_at")?,
            collected_by: text(gc, "collected_by").unwrap_or_default(),
        })
    });
    Some(Instance {
        dns_safe: row.get("dns_safe").and_then(Value::as_bool) == Some(true)
            && crate::model::name::is_dns_safe(&key.name),
        key,
        substrate: text(row, "substrate").unwrap_or_default(),
        status: text(row, "status").unwrap_or_default(),
        created_at: int(row, "created_at"),
        tombstoned_at: int(row, "tombstoned_at"),
        lease,
        lock,
        failed_up: row.get("failed_up").and_then(Value::as_bool) == Some(true),
        services_dead: int(row, "services_dead").unwrap_or(0),
        gc,
    })
}

/// An operation row; `None` without an `id`.
#[must_use]
pub fn operation(row: &Value) -> Option<Operation> {
    let id = row
        .get("id")
        .filter(|id| id.is_string() || id.is_number())?;
    let error = match row.get("error") {
        Some(error @ Value::Object(_)) => {
            let code = text(error, "code").unwrap_or_default();
            let message = text(error, "message").unwrap_or_default();
            Some(match (code.is_empty(), message.is_empty()) {
                (false, false) => format!("{code}: {message}"),
                (false, true) => code,
                _ => message,
            })
        }
        _ => text(row, "error_unparsed"),
    };
    Some(Operation {
        id: id.clone(),
        instance: text(row, "instance").unwrap_or_default(),
        verb: text(row, "verb").unwrap_or_default(),
        status: text(row, "status").unwrap_or_default(),
        created_at: int(row, "created_at").unwrap_or(0),
        updated_at: int(row, "updated_at").unwrap_or(0),
        error,
    })
}

/// A backoff row; `None` without an `instance`.
#[must_use]
pub fn backoff(row: &Value) -> Option<Backoff> {
    Some(Backoff {
        instance: text(row, "instance")?,
        attempts: int(row, "attempts").unwrap_or(0),
        summary: text(row, "summary")
            .or_else(|| text(row, "last_error"))
            .unwrap_or_default(),
        remediation: text(row, "remediation"),
        next_retry_at: int(row, "next_retry_at").unwrap_or(0),
    })
}

/// The key of an operation's `remove`: its `id`.
#[must_use]
pub fn operation_key(key: &Value) -> Option<Value> {
    key.get("id").cloned()
}

/// The key of a backoff's `remove`: its `instance`.
#[must_use]
pub fn backoff_key(key: &Value) -> Option<String> {
    text(key, "instance")
}
