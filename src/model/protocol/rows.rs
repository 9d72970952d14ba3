//! The three tables of the stream (`docs/protocol.md`, "Snapshots"):
//! instance rows keyed by name and birth, operation rows by id, backoff
//! rows by instance, each a JSON object built from one [`Snapshot`] with no
//! field that moves with the clock; and [`Tables`], what a client holds
//! after the last `synced`, which turns the next snapshot into a delta.

use std::collections::HashMap;
use std::hash::BuildHasher as _;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::MAX_TEXT_CHARS;
use crate::model::envelope::{parse_error, read_reason};
use crate::model::{Instance, Liveness, Operation, ReapAttempt, Snapshot};

mod every_row;
mod fit;
mod liveness;
mod written;
pub use fit::{MAX_ROW_BYTES, cut_texts, fit};
use liveness::LivenessWord;
use written::instance_row;

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

/// What an instance row was built from besides the row itself, compared
/// before building it again (a re-probe changes these, not the row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inputs {
    /// `lock.liveness_state`.
    liveness: LivenessWord,
    /// `lock.held`.
    held: bool,
    services_dead: u32,
    failed_up: bool,
    user_version: i64,
}

/// One instance row as last sent (its key, the name and birth, read from
/// the row it was built from).
#[derive(Debug, Clone)]
struct SentInstance {
    /// The row it was built from (shared with the snapshot: a re-read
    /// that kept the row keeps the pointer).
    row: Arc<Instance>,
    inputs: Inputs,
    /// A hash of the JSON sent.
    hash: u64,
    /// Found in the update that last ran ([`Tables::seen`] then); a row
    /// that was not is gone.
    seen: bool,
}

/// The tables as a client holds them after the last `synced`: enough to
/// tell which rows of the next snapshot changed (a hash per row, and for
/// an instance the shared row it was built from: an unchanged one is not
/// built again).
#[derive(Debug, Default)]
pub struct Tables {
    /// By the hash of the key (name, birth); equal keys compared on the
    /// rows themselves, so no key is held twice.
    instances: hashbrown::HashTable<SentInstance>,
    operations: HashMap<String, u64>,
    backoffs: HashMap<String, u64>,
    /// The keys' hasher (`SipHash`, seeded per table): the keys are store
    /// text a hostile store chooses, and a map keyed by them must not
    /// degrade on chosen collisions.
    hasher: std::collections::hash_map::RandomState,
    /// The row texts' hasher: a hash kept per row only to tell a changed
    /// row from the one sent, never a map's key, so a fast one (foldhash,
    /// seeded per process) over the 400-700 bytes of each row.
    texts: foldhash::fast::RandomState,
    /// The dead counts the instance rows held were built with: while a
    /// snapshot carries the same ones (the watcher shares them until a
    /// count changes), a kept row's count is the one held.
    services_dead: Option<Arc<crate::model::snapshot::ServicesDead>>,
    /// The mark of the rows found by the last update (flipped by each).
    seen: bool,
}

impl Tables {
    /// Empty tables: the next [`Tables::update`] sends every row (a
    /// `reset`).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The delta from the tables held to `snapshot`'s, and hold those.
    pub fn update(&mut self, snapshot: &Snapshot) -> Delta {
        let mut tables = vec![
            (Table::Instances, TableDelta::default()),
            (Table::Operations, TableDelta::default()),
            (Table::Backoffs, TableDelta::default()),
        ];
        let counts = self.update_with(snapshot, &mut |table, change| {
            let at = match table {
                Table::Instances => 0,
                Table::Operations => 1,
                Table::Backoffs => 2,
            };
            match change {
                Change::Upsert(text) => tables[at].1.upsert.push(text),
                Change::Remove(text) => tables[at].1.remove.push(text),
            }
        });
        Delta { tables, counts }
    }

    /// [`Tables::update`], each change handed to `each` as it is found
    /// (instances, then operations, then backoffs; in each, upserts then
    /// removes), none held: the first snapshot of a large store is never
    /// held whole as text. Returns the rows held after it per table.
    pub fn update_with(
        &mut self,
        snapshot: &Snapshot,
        each: &mut dyn FnMut(Table, Change),
    ) -> [usize; 3] {
        self.update_instances(snapshot, &mut |change| each(Table::Instances, change));
        update_keyed(
            &mut self.operations,
            &self.texts,
            "id",
            snapshot
                .operations
                .iter()
                .map(|op| (op.id.clone(), to_value(&operation_row(op)))),
            &mut |change| each(Table::Operations, change),
        );
        update_keyed(
            &mut self.backoffs,
            &self.texts,
            "instance",
            snapshot
                .reap_attempts
                .iter()
                .map(|attempt| (attempt.instance.clone(), to_value(&backoff_row(attempt)))),
            &mut |change| each(Table::Backoffs, change),
        );
        [
            self.instances.len(),
            self.operations.len(),
            self.backoffs.len(),
        ]
    }

    /// The instance rows' changes, the table updated in place: a row
    /// found is marked seen this update, a new one inserted, and the rows
    /// not seen are the ones gone (never a second table of every row: at
    /// 100,000 instances each is 6.4 MB).
    fn update_instances(&mut self, snapshot: &Snapshot, each: &mut dyn FnMut(Change)) {
        let hasher = &self.hasher;
        let texts = &self.texts;
        let key_hash = |row: &Instance| hasher.hash_one((&row.name, birth_id(row)));
        let same_dead = self
            .services_dead
            .replace(Arc::clone(&snapshot.services_dead))
            .is_some_and(|held| Arc::ptr_eq(&held, &snapshot.services_dead));
        let seen = !self.seen;
        self.seen = seen;
        let more = snapshot
            .instances
            .len()
            .saturating_sub(self.instances.len());
        self.instances.reserve(more, |s| key_hash(&s.row));
        for row in &*snapshot.instances {
            let hash = key_hash(row);
            // The row kept by the re-read is found by its pointer, without
            // reading the held row (a cache miss a row at 10,000 rows).
            let sent = self
                .instances
                .find_mut(hash, |s| Arc::ptr_eq(&s.row, row) || same_key(&s.row, row));
            let held_dead = sent
                .as_ref()
                .filter(|s| same_dead && Arc::ptr_eq(&s.row, row))
                .map(|s| s.inputs.services_dead);
            let inputs = inputs(snapshot, row, held_dead);
            match sent {
                // Unchanged: kept, no count of the shared row touched.
                Some(sent) if Arc::ptr_eq(&sent.row, row) && sent.inputs == inputs => {
                    sent.seen = seen;
                }
                Some(sent) => {
                    let text = instance_row(snapshot, row, inputs);
                    let text_hash = texts.hash_one(&text);
                    if sent.hash != text_hash {
                        each(Change::Upsert(text));
                    }
                    *sent = SentInstance {
                        row: Arc::clone(row),
                        inputs,
                        hash: text_hash,
                        seen,
                    };
                }
                None => {
                    let text = instance_row(snapshot, row, inputs);
                    let text_hash = texts.hash_one(&text);
                    each(Change::Upsert(text));
                    self.instances.insert_unique(
                        hash,
                        SentInstance {
                            row: Arc::clone(row),
                            inputs,
                            hash: text_hash,
                            seen,
                        },
                        |s| key_hash(&s.row),
                    );
                }
            }
        }
        let mut gone: Vec<Arc<Instance>> = Vec::new();
        self.instances.retain(|s| {
            if s.seen != seen {
                gone.push(Arc::clone(&s.row));
            }
            s.seen == seen
        });
        gone.sort_by(|a, b| (&a.name, birth_id(a)).cmp(&(&b.name, birth_id(b))));
        for row in &gone {
            each(Change::Remove(fit(to_value(&InstanceKeyRow {
                name: row.name.clone(),
                birth: row.birth.as_ref().map(BirthRow::of),
            }))));
        }
    }
}

/// One change of a table, as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A whole row, added or changed.
    Upsert(String),
    /// The key of a row gone.
    Remove(String),
}

/// The birth's `instance_id`, the second half of an instance row's key.
fn birth_id(row: &Instance) -> Option<crate::model::BirthStr<'_>> {
    row.birth.as_ref().map(crate::model::Birth::instance_id)
}

fn same_key(a: &Instance, b: &Instance) -> bool {
    a.name == b.name && birth_id(a) == birth_id(b)
}

/// The delta of a table keyed by a string (operations by `id`, backoffs
/// by `instance`, the key's field `field`): each row's text compared by
/// its hash (`hasher`: the row texts') with the one held.
fn update_keyed(
    held: &mut HashMap<String, u64>,
    hasher: &foldhash::fast::RandomState,
    field: &str,
    rows: impl Iterator<Item = (String, Value)>,
    each: &mut dyn FnMut(Change),
) {
    let mut old = std::mem::take(held);
    for (key, row) in rows {
        let text = fit(row);
        let hash = hasher.hash_one(&text);
        if old.remove(&key) != Some(hash) {
            each(Change::Upsert(text));
        }
        held.insert(key, hash);
    }
    let mut gone: Vec<String> = old.into_keys().collect();
    gone.sort();
    for key in gone {
        let mut object = serde_json::Map::new();
        object.insert(field.to_owned(), Value::String(key));
        each(Change::Remove(fit(Value::Object(object))));
    }
}

/// `row`'s inputs in `snapshot`; `held_dead`: its dead count when known
/// unchanged (the same counts, the same row), else looked up.
fn inputs(snapshot: &Snapshot, row: &Instance, held_dead: Option<u32>) -> Inputs {
    let liveness = snapshot.lock_liveness(&row.name);
    let held = liveness.is_some_and(Liveness::held);
    Inputs {
        liveness: LivenessWord::of(liveness),
        held,
        failed_up: crate::model::readiness::failed_up(
            row,
            snapshot.pending_operation(&row.name).is_some(),
            held,
        ),
        services_dead: held_dead.unwrap_or_else(|| snapshot.dead_services(&row.name)),
        user_version: snapshot.generation.user_version,
    }
}

/// The machine value of a probed liveness (`lock.liveness_state`: one
/// word in the stream and in `snapshot --json`; `unknown`: not probed).
#[must_use]
pub const fn liveness_state(liveness: Option<&Liveness>) -> &'static str {
    LivenessWord::of(liveness).word()
}

/// An instance row (docs/protocol.md "Instance rows";
/// `#/$defs/instance_row`): what the agent writes and a client reads.
/// Fields a client may miss read as their defaults (a new agent may drop
/// none within protocol 1; an unknown field is ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceRow {
    /// The name, as stored.
    pub name: String,
    /// Its birth (`null` before schema 7): with the name, the row's key.
    pub birth: Option<BirthRow>,
    /// The name is DNS-safe (only such names are acted upon).
    #[serde(default)]
    pub dns_safe: bool,
    /// `local`, `render`, ..., as stored.
    #[serde(default)]
    pub substrate: String,
    /// `active`, `tombstoned`, or what the store says.
    #[serde(default)]
    pub status: String,
    /// When it was created (unix seconds).
    #[serde(default)]
    pub created_at: Option<i64>,
    /// When it was tombstoned (unix seconds).
    #[serde(default)]
    pub tombstoned_at: Option<i64>,
    /// Its lease (stackless §6): the same object as `snapshot --json`'s.
    #[serde(default)]
    pub lease: Option<LeaseRow>,
    /// Its operation lock (stackless §2), as this host probed it.
    #[serde(default)]
    pub lock: Option<LockRow>,
    /// `instances.dirty` (schema 10+), `None` before.
    #[serde(default)]
    pub dirty: Option<bool>,
    /// A row left by a failed `up`.
    #[serde(default)]
    pub failed_up: bool,
    /// Recorded service processes found dead.
    #[serde(default)]
    pub services_dead: i64,
    /// A tombstone's collection (D14).
    #[serde(default)]
    pub gc: Option<GcRow>,
}

/// An instance's birth (stackless §1, schema 7+), as the rows and the
/// commands send it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BirthRow {
    /// 32 hex: the second half of the row's key.
    pub instance_id: String,
    /// `sl-...` (always written; a client may miss it).
    #[serde(default)]
    pub resource_namespace: Option<String>,
}

impl BirthRow {
    /// The row's birth.
    #[must_use]
    pub fn of(birth: &crate::model::Birth) -> Self {
        Self {
            instance_id: birth.instance_id().to_owned(),
            resource_namespace: Some(birth.resource_namespace().to_owned()),
        }
    }
}

/// A lease (stackless §6): one object shape in the stream's rows and in
/// `snapshot --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRow {
    /// Its length (seconds).
    pub duration_secs: i64,
    /// When it expires (unix seconds).
    pub expires_at: i64,
}

impl LeaseRow {
    /// The row's lease.
    #[must_use]
    pub const fn of(lease: crate::model::rows::Lease) -> Self {
        Self {
            duration_secs: lease.duration_secs,
            expires_at: lease.expires_at,
        }
    }
}

/// An instance's operation lock (stackless §2) and how the agent probed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRow {
    /// The operation holding it (`up`, `down`, ...), as stored.
    #[serde(default)]
    pub operation: String,
    /// The holder's pid.
    #[serde(default)]
    pub holder_pid: i64,
    /// The holder's start time (as stored).
    #[serde(default)]
    pub holder_start_time: i64,
    /// The holder's host (`None` before migration 4).
    #[serde(default)]
    pub holder_host: Option<String>,
    /// When it was taken (unix seconds).
    #[serde(default)]
    pub acquired_at: i64,
    /// `alive`, `stale_pid_gone`, `stale_pid_reused`, `foreign_host`,
    /// `unknown` (the default when missing).
    #[serde(default = "unknown")]
    pub liveness_state: String,
    /// It blocks the reaper (stackless §2; `true` when missing).
    #[serde(default = "yes")]
    pub held: bool,
}

fn unknown() -> String {
    "unknown".to_owned()
}

const fn yes() -> bool {
    true
}

/// A tombstone's collection (D14): when it is due, and by whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcRow {
    /// When it becomes due (unix seconds).
    pub due_at: i64,
    /// `controller`, `reaper` or `stackless`.
    #[serde(default)]
    pub collected_by: String,
}

/// An instance row's key, as a `remove` sends it: the name and the
/// birth, the same object the row sends (`null` before schema 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceKeyRow {
    /// The name.
    pub name: String,
    /// The birth, as the row sent it. Read also as the bare `instance_id`
    /// string an older agent of protocol 1 sent (its `resource_namespace`
    /// then `None`).
    #[serde(default, deserialize_with = "birth_or_id")]
    pub birth: Option<BirthRow>,
}

/// A key's birth: the row's birth object, null, or the bare `instance_id`
/// string (protocol 1, deprecated).
fn birth_or_id<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<BirthRow>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Row(BirthRow),
        Id(String),
    }
    Ok(
        Option::<Either>::deserialize(deserializer)?.map(|either| match either {
            Either::Row(row) => row,
            Either::Id(instance_id) => BirthRow {
                instance_id,
                resource_namespace: None,
            },
        }),
    )
}

/// One operation row (docs/protocol.md, "Operation rows"; 0.4.0
/// controller), as `snapshot --json`'s operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationRow {
    /// Its id, as stored (a string; a client takes any JSON scalar).
    pub id: Value,
    /// The instance it acts on.
    #[serde(default)]
    pub instance: String,
    /// `up`, `down`, ...
    #[serde(default)]
    pub verb: String,
    /// `pending`, `running`, `succeeded`, ...
    #[serde(default)]
    pub status: String,
    /// Unix seconds.
    #[serde(default)]
    pub created_at: i64,
    /// Unix seconds.
    #[serde(default)]
    pub updated_at: i64,
    /// Its `error_json` as the stackless error envelope, when it parses.
    #[serde(default)]
    pub error: Option<crate::model::envelope::EnvelopeError>,
    /// Its `error_json` as stored, when it does not parse as one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_unparsed: Option<String>,
}

/// An operation row's key, as a `remove` sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationKeyRow {
    /// The operation's id.
    pub id: Value,
}

/// One backoff row (docs/protocol.md, "Backoff rows"; stackless §6), as
/// `snapshot --json`'s `reap_attempt` with its instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackoffRow {
    /// The instance.
    pub instance: String,
    /// Failed reaps so far.
    #[serde(default)]
    pub attempts: i64,
    /// The last failure, as stored.
    #[serde(default)]
    pub last_error: String,
    /// Its stable code, when it has one.
    #[serde(default)]
    pub code: Option<String>,
    /// Its words.
    #[serde(default)]
    pub summary: String,
    /// What to do about it.
    #[serde(default)]
    pub remediation: Option<String>,
    /// When the next reap may be tried (unix seconds).
    #[serde(default)]
    pub next_retry_at: i64,
}

/// A backoff row's key, as a `remove` sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackoffKeyRow {
    /// The instance.
    pub instance: String,
}

/// One operation row, typed.
fn operation_row(op: &Operation) -> OperationRow {
    let error = op.error_json.as_deref().and_then(parse_error);
    let error_unparsed = match (&error, op.error_json.as_deref().map(str::trim)) {
        (None, Some(text)) if !text.is_empty() => Some(text.to_owned()),
        _ => None,
    };
    OperationRow {
        id: Value::String(op.id.clone()),
        instance: op.instance.clone(),
        verb: op.verb.clone(),
        status: op.status.as_str().to_owned(),
        created_at: op.created_at,
        updated_at: op.updated_at,
        error,
        error_unparsed,
    }
}

/// One backoff row, typed.
fn backoff_row(attempt: &ReapAttempt) -> BackoffRow {
    let reason = read_reason(&attempt.last_error);
    BackoffRow {
        instance: attempt.instance.clone(),
        attempts: attempt.attempts,
        last_error: attempt.last_error.clone(),
        code: reason
            .code
            .or_else(|| crate::model::envelope::line_code(&attempt.last_error).map(str::to_owned)),
        summary: reason.summary,
        remediation: reason.remediation,
        next_retry_at: attempt.next_retry_at,
    }
}

/// `row` as a JSON value (a typed row always is one).
fn to_value(row: &impl Serialize) -> Value {
    serde_json::to_value(row).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests;
