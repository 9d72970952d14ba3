//! The three tables of the stream (`docs/protocol.md`, "Snapshots"):
//! instance rows keyed by name and birth, operation rows by id, backoff
//! rows by instance, each a JSON object built from one [`Snapshot`] with no
//! field that moves with the clock; and [`Tables`], what a client holds
//! after the last `synced`, which turns the next snapshot into a delta.

use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{CUT_TEXT_CHARS, MAX_MESSAGE_BYTES, MAX_TEXT_CHARS};
use crate::model::envelope::{parse_error, read_reason};
use crate::model::name::is_dns_safe;
use crate::model::{Instance, Liveness, Operation, ReapAttempt, Snapshot};

/// One of the stream's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Instance rows, keyed by `{name, birth}`.
    Instances,
    /// The controller's operations (schema 14), keyed by `{id}`.
    Operations,
    /// Reap backoffs (stackless §6), keyed by `{instance}`.
    Backoffs,
}

impl Table {
    /// `instances`, `operations`, `backoffs`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Instances => "instances",
            Self::Operations => "operations",
            Self::Backoffs => "backoffs",
        }
    }
}

/// The rows of one table that changed: each upsert a whole row, each
/// remove a key, both as JSON text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableDelta {
    /// Rows added or changed.
    pub upsert: Vec<String>,
    /// Keys of rows gone.
    pub remove: Vec<String>,
}

impl TableDelta {
    /// Nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.upsert.is_empty() && self.remove.is_empty()
    }
}

/// What changed between the tables as last sent and a snapshot, and how
/// many rows each holds after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// `(table, its changes)`, instances first.
    pub tables: Vec<(Table, TableDelta)>,
    /// Rows held after it: instances, operations, backoffs.
    pub counts: [usize; 3],
}

impl Delta {
    /// No row changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(|(_, d)| d.is_empty())
    }
}

/// An instance row's key: the name and the birth's `instance_id` (`None`
/// before schema 7, where the name alone is the key).
type InstanceKey = (String, Option<String>);

/// What an instance row was built from besides the row itself, compared
/// before building it again (a re-probe changes these, not the row).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inputs {
    liveness: Option<Liveness>,
    services_dead: u32,
    failed_up: bool,
    user_version: i64,
}

/// One instance row as last sent.
#[derive(Debug, Clone)]
struct SentInstance {
    /// The row it was built from (shared with the snapshot: a re-read
    /// that kept the row keeps the pointer).
    row: Arc<Instance>,
    inputs: Inputs,
    /// A hash of the JSON sent.
    hash: u64,
}

/// The tables as a client holds them after the last `synced`: enough to
/// tell which rows of the next snapshot changed (a hash per row, and for
/// an instance the shared row it was built from: an unchanged one is not
/// built again).
#[derive(Debug, Default)]
pub struct Tables {
    instances: HashMap<InstanceKey, SentInstance>,
    operations: HashMap<String, u64>,
    backoffs: HashMap<String, u64>,
    hasher: std::collections::hash_map::RandomState,
}

impl Tables {
    /// Empty tables: the next [`Tables::update`] sends every row (a
    /// `reset`).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn hash(&self, text: &str) -> u64 {
        self.hasher.hash_one(text)
    }

    /// The delta from the tables held to `snapshot`'s, and hold those.
    pub fn update(&mut self, snapshot: &Snapshot) -> Delta {
        let instances = self.update_instances(snapshot);
        let operations = update_keyed(
            &mut self.operations,
            &self.hasher,
            "id",
            snapshot
                .operations
                .iter()
                .map(|op| (op.id.clone(), operation_row(op))),
        );
        let backoffs = update_keyed(
            &mut self.backoffs,
            &self.hasher,
            "instance",
            snapshot
                .reap_attempts
                .iter()
                .map(|attempt| (attempt.instance.clone(), backoff_row(attempt))),
        );
        Delta {
            tables: vec![
                (Table::Instances, instances),
                (Table::Operations, operations),
                (Table::Backoffs, backoffs),
            ],
            counts: [
                self.instances.len(),
                self.operations.len(),
                self.backoffs.len(),
            ],
        }
    }

    fn update_instances(&mut self, snapshot: &Snapshot) -> TableDelta {
        let mut delta = TableDelta::default();
        let mut old = std::mem::take(&mut self.instances);
        let mut next = HashMap::with_capacity(snapshot.instances.len());
        for row in &*snapshot.instances {
            let key: InstanceKey = (
                row.name.clone(),
                row.birth.as_ref().map(|b| b.instance_id().to_owned()),
            );
            let inputs = inputs(snapshot, row);
            let sent = old.remove(&key);
            if let Some(sent) = sent.as_ref()
                && Arc::ptr_eq(&sent.row, row)
                && sent.inputs == inputs
            {
                next.insert(key, sent.clone());
                continue;
            }
            let text = fit(instance_row(snapshot, row, &inputs));
            let hash = self.hash(&text);
            if sent.as_ref().is_none_or(|s| s.hash != hash) {
                delta.upsert.push(text);
            }
            next.insert(
                key,
                SentInstance {
                    row: Arc::clone(row),
                    inputs,
                    hash,
                },
            );
        }
        let mut gone: Vec<InstanceKey> = old.into_keys().collect();
        gone.sort();
        delta.remove = gone
            .into_iter()
            .map(|(name, birth)| fit(json!({ "name": name, "birth": birth })))
            .collect();
        self.instances = next;
        delta
    }
}

/// The delta of a table keyed by a string (operations by `id`, backoffs
/// by `instance`, the key's field `field`): each row's text compared by
/// hash with the one held.
fn update_keyed(
    held: &mut HashMap<String, u64>,
    hasher: &std::collections::hash_map::RandomState,
    field: &str,
    rows: impl Iterator<Item = (String, Value)>,
) -> TableDelta {
    let mut delta = TableDelta::default();
    let mut old = std::mem::take(held);
    for (key, row) in rows {
        let text = fit(row);
        let hash = hasher.hash_one(&text);
        if old.remove(&key) != Some(hash) {
            delta.upsert.push(text);
        }
        held.insert(key, hash);
    }
    let mut gone: Vec<String> = old.into_keys().collect();
    gone.sort();
    delta.remove = gone
        .into_iter()
        .map(|key| {
            let mut object = serde_json::Map::new();
            object.insert(field.to_owned(), Value::String(key));
            fit(Value::Object(object))
        })
        .collect();
    delta
}

fn inputs(snapshot: &Snapshot, row: &Instance) -> Inputs {
    let liveness = snapshot.lock_liveness(&row.name).cloned();
    let held = liveness.as_ref().is_some_and(Liveness::held);
    Inputs {
        failed_up: crate::model::readiness::failed_up(
            row,
            snapshot.pending_operation(&row.name).is_some(),
            held,
        ),
        liveness,
        services_dead: snapshot.dead_services(&row.name),
        user_version: snapshot.generation.user_version,
    }
}

/// The machine value of a probed liveness (`lock.liveness_state`, as in
/// `snapshot --json`).
const fn liveness_state(liveness: Option<&Liveness>) -> &'static str {
    match liveness {
        Some(Liveness::Alive) => "alive",
        Some(Liveness::StalePidGone) => "stale_pid_gone",
        Some(Liveness::StalePidReused) => "stale_pid_reused",
        Some(Liveness::ForeignHost(_)) => "foreign_host",
        None => "unknown",
    }
}

/// One instance row (docs/protocol.md, "Instance rows"): the fields of
/// `snapshot --json`'s instance that do not move with the clock.
fn instance_row(snapshot: &Snapshot, row: &Instance, inputs: &Inputs) -> Value {
    let liveness = inputs.liveness.as_ref();
    json!({
        "name": row.name,
        "birth": row.birth.as_ref().map(|b| json!({
            "instance_id": b.instance_id(),
            "resource_namespace": b.resource_namespace(),
        })),
        "dns_safe": is_dns_safe(&row.name),
        "substrate": &*row.substrate,
        "status": row.status.as_str(),
        "created_at": row.created_at,
        "tombstoned_at": row.tombstoned_at,
        "lease": row.lease.map(|l| json!({
            "duration_secs": l.duration_secs,
            "expires_at": l.expires_at,
        })),
        "lock": row.lock.as_ref().map(|l| json!({
            "operation": l.operation,
            "holder_pid": l.holder_pid,
            "holder_start_time": l.holder_start_time,
            "holder_host": l.holder_host,
            "acquired_at": l.acquired_at,
            "liveness_state": liveness_state(liveness),
            "held": liveness.is_some_and(Liveness::held),
        })),
        "dirty": row.dirty,
        "failed_up": inputs.failed_up,
        "services_dead": inputs.services_dead,
        "gc": crate::model::gc::GcPreview::of(row, snapshot.generation).map(|p| json!({
            "due_at": p.due_at,
            "collected_by": p.collector.as_str(),
        })),
    })
}

/// One operation row (docs/protocol.md, "Operation rows"), as
/// `snapshot --json`'s operation.
fn operation_row(op: &Operation) -> Value {
    let parsed = op.error_json.as_deref().and_then(parse_error);
    let mut row = json!({
        "id": op.id,
        "instance": op.instance,
        "verb": op.verb,
        "status": op.status.as_str(),
        "created_at": op.created_at,
        "updated_at": op.updated_at,
        "error": parsed.as_ref().map(|e| serde_json::to_value(e).unwrap_or(Value::Null)),
    });
    if parsed.is_none()
        && let Some(text) = op.error_json.as_deref().map(str::trim)
        && !text.is_empty()
        && let Value::Object(fields) = &mut row
    {
        fields.insert("error_unparsed".into(), Value::String(text.to_owned()));
    }
    row
}

/// One backoff row (docs/protocol.md, "Backoff rows"), as `snapshot
/// --json`'s `reap_attempt` with its instance.
fn backoff_row(attempt: &ReapAttempt) -> Value {
    let reason = read_reason(&attempt.last_error);
    json!({
        "instance": attempt.instance,
        "attempts": attempt.attempts,
        "last_error": attempt.last_error,
        "code": reason.code.or_else(|| {
            crate::model::envelope::line_code(&attempt.last_error).map(str::to_owned)
        }),
        "summary": reason.summary,
        "remediation": reason.remediation,
        "next_retry_at": attempt.next_retry_at,
    })
}

/// The row's JSON text, its texts cut to [`MAX_TEXT_CHARS`]; one that
/// would still not fit a message has them cut to [`CUT_TEXT_CHARS`] and
/// `"cut": true`.
#[must_use]
pub fn fit(mut row: Value) -> String {
    cut_texts(&mut row, MAX_TEXT_CHARS);
    let text = row.to_string();
    if text.len() <= MAX_ROW_BYTES {
        return text;
    }
    cut_texts(&mut row, CUT_TEXT_CHARS);
    if let Value::Object(fields) = &mut row {
        fields.insert("cut".into(), Value::Bool(true));
    }
    row.to_string()
}

/// The longest row a `rows` message carries: the message's own fields fit
/// in the rest.
pub const MAX_ROW_BYTES: usize = MAX_MESSAGE_BYTES - 256;

/// Cut every string in `value` to `max` characters, the last one `…`.
pub fn cut_texts(value: &mut Value, max: usize) {
    match value {
        Value::String(text) => {
            if let Some((at, _)) = text.char_indices().nth(max) {
                let keep = text[..at]
                    .char_indices()
                    .nth(max - 1)
                    .map_or(at, |(i, _)| i);
                text.truncate(keep);
                text.push('…');
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cut_texts(v, max)),
        Value::Object(fields) => fields.values_mut().for_each(|v| cut_texts(v, max)),
        _ => {}
    }
}
