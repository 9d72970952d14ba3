//! One host's rows as its agent sends them (docs/protocol.md "Instance
//! rows", "Operation rows", "Backoff rows"), as typed values (read by
//! [`super::wire`]). Texts are kept as sent (redacted by the agent, not yet
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
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
    /// Its birth's `resource_namespace` (`sl-...`), as sent (`None` before
    /// schema 7).
    pub resource_namespace: Option<String>,
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

    /// Its birth as a command sends it: the row's own shape,
    /// `{"instance_id", "resource_namespace"}` (docs/protocol.md,
    /// "Commands"), or `null` before schema 7.
    #[must_use]
    pub fn birth_value(&self) -> Value {
        self.key.birth.as_ref().map_or(Value::Null, |id| {
            serde_json::json!({
                "instance_id": id,
                "resource_namespace": self.resource_namespace,
            })
        })
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
