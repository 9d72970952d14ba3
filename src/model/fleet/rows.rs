//! One host's rows as the fleet view holds them, made from the
//! protocol's rows (docs/protocol.md "Instance rows", "Operation rows",
//! "Backoff rows"; [`crate::model::protocol::rows`]) as they are applied. Texts are kept as sent (redacted by the agent, not yet
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

/// An instance's lease (stackless §6): the protocol's own lease object.
pub use crate::model::protocol::rows::LeaseRow as Lease;
use crate::model::protocol::rows::{
    BackoffKeyRow, BackoffRow, InstanceKeyRow, InstanceRow, OperationKeyRow, OperationRow,
};

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
}

impl From<InstanceRow> for Instance {
    /// The row as sent; `dns_safe` only when the name is (a host's claim
    /// is checked: stackless §6's name rule).
    fn from(row: InstanceRow) -> Self {
        let (birth, resource_namespace) = row.birth.map_or((None, None), |b| {
            (Some(b.instance_id), b.resource_namespace)
        });
        Self {
            dns_safe: row.dns_safe && crate::model::name::is_dns_safe(&row.name),
            key: InstanceKey {
                name: row.name,
                birth,
            },
            resource_namespace,
            substrate: row.substrate,
            status: row.status,
            created_at: row.created_at,
            tombstoned_at: row.tombstoned_at,
            lease: row.lease,
            lock: row.lock.map(|lock| Lock {
                operation: lock.operation,
                holder_pid: lock.holder_pid,
                holder_host: lock.holder_host,
                liveness: lock.liveness_state,
                held: lock.held,
            }),
            failed_up: row.failed_up,
            services_dead: row.services_dead,
            gc: row.gc.map(|gc| Gc {
                due_at: gc.due_at,
                collected_by: gc.collected_by,
            }),
        }
    }
}

impl From<InstanceKeyRow> for InstanceKey {
    fn from(row: InstanceKeyRow) -> Self {
        Self {
            name: row.name,
            birth: row.birth.map(|b| b.instance_id),
        }
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

impl From<OperationRow> for Operation {
    /// The row as sent; its error as `code: message` (the code alone, the
    /// message alone), or the unparsed text.
    fn from(row: OperationRow) -> Self {
        let error = match row.error {
            Some(error) => Some(match (error.code.is_empty(), error.message.is_empty()) {
                (false, false) => format!("{}: {}", error.code, error.message),
                (false, true) => error.code,
                _ => error.message,
            }),
            None => row.error_unparsed,
        };
        Self {
            id: row.id,
            instance: row.instance,
            verb: row.verb,
            status: row.status,
            created_at: row.created_at,
            updated_at: row.updated_at,
            error,
        }
    }
}

impl From<OperationKeyRow> for Value {
    fn from(row: OperationKeyRow) -> Self {
        row.id
    }
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

impl From<BackoffRow> for Backoff {
    /// The row as sent; its summary, or the last error when it has none.
    fn from(row: BackoffRow) -> Self {
        Self {
            instance: row.instance,
            attempts: row.attempts,
            summary: if row.summary.is_empty() {
                row.last_error
            } else {
                row.summary
            },
            remediation: row.remediation,
            next_retry_at: row.next_retry_at,
        }
    }
}

impl From<BackoffKeyRow> for String {
    fn from(row: BackoffKeyRow) -> Self {
        row.instance
    }
}
