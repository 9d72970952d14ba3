//! A recording read back (docs/history.md, "Reading"): the protocol's
//! tables as a client holds them, each `rows` group applied at its
//! `synced` (never half a group), and the [`Snapshot`] they were built
//! from, rebuilt for the report code the live `snapshot` uses. One set of
//! row types: the protocol's ([`crate::model::protocol::rows`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::liveness::LockLiveness;
use crate::model::protocol::MAX_MESSAGE_BYTES;
use crate::model::protocol::lines::{
    Banner, Counts, HelloMessage, Message, ReaperLine, Reset, Rows as RowsMessage, RowsOf,
    ServicesLine, Synced,
};
use crate::model::protocol::rows::{BackoffRow, InstanceRow, OperationRow};
use crate::model::{
    Anomalies, Birth, Generation, Instance, Instances, Lease, Liveness, OpLock, OpStatus,
    Operation, OperationIndex, ReapAttempt, Rows, Snapshot, Status,
};

/// An instance row's key: its name and its birth's `instance_id`.
type InstanceKey = (String, Option<String>);

/// The tables after the last `synced` applied, and what came with them.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// The last `hello` (the store's path, its schema).
    pub hello: Option<HelloMessage>,
    /// Instance rows by key.
    pub instances: BTreeMap<InstanceKey, InstanceRow>,
    /// Operation rows by id (as JSON text).
    pub operations: BTreeMap<String, OperationRow>,
    /// Backoff rows by instance.
    pub backoffs: BTreeMap<String, BackoffRow>,
    /// The `synced.at` of the last group applied (unix seconds).
    pub synced_at: Option<i64>,
    /// The time of the last line applied (unix seconds).
    pub last_t: Option<i64>,
    /// Who reaps, as last said.
    pub reaper: Option<ReaperLine>,
    /// The banners up, by id.
    pub banners: BTreeMap<String, Banner>,
    /// The last group's `seq`.
    pub seq: u64,
    /// Each instance's services as last recorded (`services` lines), by
    /// the instance row's key: the report's service objects.
    pub services: BTreeMap<InstanceKey, Vec<serde_json::Value>>,
    /// The instance rows upserted by the groups applied since
    /// [`Replay::take_changed`] last ran (every row after a `reset`);
    /// `None`: not kept (a reader's replay, [`Replay::new`]).
    changed: Option<Vec<InstanceKey>>,
    /// A `reset` seen since the last `synced`.
    pending_reset: bool,
    /// `rows` seen since the last `synced`.
    pending: Vec<RowsMessage>,
}

impl Replay {
    /// Nothing read yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Nothing read yet, keeping which instance rows change
    /// ([`Replay::take_changed`]): the recorder's.
    #[must_use]
    pub fn recording() -> Self {
        Self {
            changed: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Take one recorded message, recorded at `t`: `rows` wait for their
    /// `synced`; a `reset` empties the tables at that `synced`.
    pub fn apply(&mut self, t: i64, message: Message) {
        self.last_t = Some(t);
        match message {
            Message::Hello(hello) => {
                // A recorder's `hello` says who reaps the store then, as a
                // `reaper` message would (docs/protocol.md, `hello.reaper`).
                if let Some(reaper) = &hello.reaper {
                    self.reaper = Some(reaper.clone());
                }
                self.hello = Some(*hello);
            }
            Message::Reset(_) => {
                self.pending_reset = true;
                self.pending.clear();
            }
            Message::Rows(rows) => self.pending.push(rows),
            Message::Synced(synced) => {
                let reset = std::mem::take(&mut self.pending_reset);
                if reset {
                    self.instances.clear();
                    self.operations.clear();
                    self.backoffs.clear();
                }
                for rows in std::mem::take(&mut self.pending) {
                    self.apply_rows(rows);
                }
                if reset {
                    self.services
                        .retain(|key, _| self.instances.contains_key(key));
                    if let Some(changed) = &mut self.changed {
                        *changed = self.instances.keys().cloned().collect();
                    }
                }
                self.synced_at = synced.at.or(Some(t));
                self.seq = synced.seq;
            }
            Message::Reaper(reaper) => self.reaper = Some(reaper),
            Message::Banner(banner) => {
                self.banners.insert(banner.id.clone(), banner);
            }
            Message::BannerCleared(cleared) => {
                self.banners.remove(&cleared.id);
            }
            Message::Services(line) => {
                let key = (line.name, line.instance_id);
                if line.services.is_empty() {
                    self.services.remove(&key);
                } else {
                    self.services.insert(key, line.services);
                }
            }
            _ => {}
        }
    }

    /// The instance rows (name, birth) upserted since the last call, each
    /// once, oldest change first: whose services the recorder reads again.
    pub fn take_changed(&mut self) -> Vec<InstanceKey> {
        let mut seen = std::collections::BTreeSet::new();
        self.changed
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
            .into_iter()
            .filter(|key| seen.insert(key.clone()))
            .collect()
    }

    /// Every instance row counts as changed (a keyframe's services are
    /// read again: checkpoints and observations change without the row).
    pub fn mark_all_changed(&mut self) {
        if let Some(changed) = &mut self.changed {
            changed.extend(self.instances.keys().cloned());
        }
    }

    /// The model's instance of the row `key`, as [`Replay::snapshot`]
    /// builds it.
    #[must_use]
    pub fn instance(&self, key: &InstanceKey) -> Option<Instance> {
        self.instances.get(key).map(instance_of)
    }

    /// The `services` line that says `key`'s services are `services`, or
    /// `None` when that is what is recorded already.
    #[must_use]
    pub fn services_line(
        &self,
        key: &InstanceKey,
        services: Vec<serde_json::Value>,
    ) -> Option<String> {
        let recorded = self.services.get(key).map_or(&[][..], Vec::as_slice);
        (recorded != services.as_slice()).then(|| services_line(key, services))
    }

    /// The services recorded for the instance `name` of birth
    /// `instance_id` (empty: none).
    #[must_use]
    pub fn services_of(&self, name: &str, instance_id: Option<&str>) -> &[serde_json::Value] {
        self.services
            .get(&(name.to_owned(), instance_id.map(str::to_owned)))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether a whole group was applied (a `reset` and its `synced`).
    #[must_use]
    pub const fn synced(&self) -> bool {
        self.synced_at.is_some()
    }

    /// No group is half applied (no `reset` or `rows` waits for its
    /// `synced`): a segment may end here.
    #[must_use]
    pub fn between_groups(&self) -> bool {
        !self.pending_reset && self.pending.is_empty()
    }

    /// A keyframe (docs/history.md, "Segments"): the protocol lines that
    /// rebuild these tables from nothing, as a client's first snapshot
    /// comes: `hello`, `reset`, `rows` (each under the protocol's longest
    /// line), `synced` (at the last group's time), then who reaps and the
    /// banners up. Empty before the first `synced`.
    #[must_use]
    pub fn keyframe(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.keyframe_with(&mut |line| out.push(line));
        out
    }

    /// [`Replay::keyframe`], each line handed to `emit` as it is made (the
    /// keyframe is never held whole).
    pub fn keyframe_with(&self, emit: &mut dyn FnMut(String)) {
        let Some(at) = self.synced_at else {
            return;
        };
        let line = |m: &Message| serde_json::to_string(m).unwrap_or_default();
        if let Some(hello) = &self.hello {
            emit(line(&Message::Hello(Box::new(hello.clone()))));
        }
        let seq = self.seq;
        emit(line(&Message::Reset(Reset { seq, reason: None })));
        chunked(emit, self.instances.values(), |upsert| {
            RowsMessage::Instances(RowsOf {
                seq,
                upsert,
                remove: Vec::new(),
            })
        });
        chunked(emit, self.operations.values(), |upsert| {
            RowsMessage::Operations(RowsOf {
                seq,
                upsert,
                remove: Vec::new(),
            })
        });
        chunked(emit, self.backoffs.values(), |upsert| {
            RowsMessage::Backoffs(RowsOf {
                seq,
                upsert,
                remove: Vec::new(),
            })
        });
        emit(line(&Message::Synced(Synced {
            seq,
            at: Some(at),
            counts: Counts {
                instances: self.instances.len() as u64,
                operations: self.operations.len() as u64,
                backoffs: self.backoffs.len() as u64,
            },
        })));
        if let Some(reaper) = &self.reaper {
            emit(line(&Message::Reaper(reaper.clone())));
        }
        for banner in self.banners.values() {
            emit(line(&Message::Banner(banner.clone())));
        }
        for (key, services) in &self.services {
            if self.instances.contains_key(key) {
                emit(services_line(key, services.clone()));
            }
        }
    }

    fn apply_rows(&mut self, rows: RowsMessage) {
        match rows {
            RowsMessage::Instances(rows) => {
                for key in rows.remove {
                    let key = (key.name, key.birth.map(|b| b.instance_id));
                    self.instances.remove(&key);
                    self.services.remove(&key);
                }
                for row in rows.upsert {
                    let key = (
                        row.name.clone(),
                        row.birth.as_ref().map(|b| b.instance_id.clone()),
                    );
                    if let Some(changed) = &mut self.changed {
                        changed.push(key.clone());
                    }
                    self.instances.insert(key, row);
                }
            }
            RowsMessage::Operations(rows) => {
                for key in rows.remove {
                    self.operations.remove(&key.id.to_string());
                }
                for row in rows.upsert {
                    self.operations.insert(row.id.to_string(), row);
                }
            }
            RowsMessage::Backoffs(rows) => {
                for key in rows.remove {
                    self.backoffs.remove(&key.instance);
                }
                for row in rows.upsert {
                    self.backoffs.insert(row.instance.clone(), row);
                }
            }
            RowsMessage::Unknown => {}
        }
    }

    /// The snapshot the recorded rows were built from: the rows, the lock
    /// holders' liveness as the recorder's agent probed it, the dead
    /// service counts. Texts were redacted before they were recorded (an
    /// empty redactor here). Operations in the store's order (pending
    /// oldest first, then finished newest first: `store::operations`
    /// orders the finished by rowid, the order they were created in, which
    /// the rows do not carry: by `created_at` here, ties by id).
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        let user_version = self.hello.as_ref().map_or(0, |h| h.schema);
        let mut liveness = LockLiveness::default();
        let mut dead = Vec::new();
        let mut instances: Vec<Arc<Instance>> = Vec::with_capacity(self.instances.len());
        for row in self.instances.values() {
            if let Some(lock) = &row.lock
                && let Some(probed) = liveness_of(&lock.liveness_state, lock.holder_host.as_deref())
            {
                liveness.insert(row.name.clone(), probed);
            }
            if let Ok(count) = u32::try_from(row.services_dead)
                && count > 0
            {
                dead.push((row.name.clone(), count));
            }
            instances.push(Arc::new(instance_of(row)));
        }
        let mut operations: Vec<Operation> = self.operations.values().map(operation_of).collect();
        operations.sort_by(|a, b| {
            let pending = |o: &Operation| o.status.is_pending();
            pending(b).cmp(&pending(a)).then_with(|| {
                if pending(a) {
                    (a.created_at, &a.id).cmp(&(b.created_at, &b.id))
                } else {
                    (b.created_at, &b.id).cmp(&(a.created_at, &a.id))
                }
            })
        });
        let rows = Rows {
            generation: Generation { user_version },
            instances: Instances::from_shared(instances),
            reap_attempts: self.backoffs.values().map(attempt_of).collect(),
            operations,
            operation_index: OperationIndex::default(),
        };
        let mut snapshot = Snapshot::new(rows, liveness);
        snapshot.services_dead = Arc::new(dead.into_iter().collect());
        snapshot
    }
}

/// The `services` line of `key`'s `services`.
fn services_line(key: &InstanceKey, services: Vec<serde_json::Value>) -> String {
    serde_json::to_string(&Message::Services(ServicesLine {
        name: key.0.clone(),
        instance_id: key.1.clone(),
        services,
    }))
    .unwrap_or_default()
}

/// `rows` lines of `rows`, each under [`MAX_MESSAGE_BYTES`] (a row's
/// text was cut to fit one when it was first sent).
fn chunked<'a, R: serde::Serialize + Clone + 'a>(
    out: &mut dyn FnMut(String),
    rows: impl Iterator<Item = &'a R>,
    message: impl Fn(Vec<R>) -> RowsMessage,
) {
    let mut batch: Vec<R> = Vec::new();
    let mut bytes = 0;
    let mut send = |batch: Vec<R>| {
        out(serde_json::to_string(&Message::Rows(message(batch))).unwrap_or_default());
    };
    for row in rows {
        let len = serde_json::to_string(row).map_or(0, |t| t.len() + 1);
        if !batch.is_empty() && bytes + len > MAX_MESSAGE_BYTES - 256 {
            send(std::mem::take(&mut batch));
            bytes = 0;
        }
        bytes += len;
        batch.push(row.clone());
    }
    if !batch.is_empty() {
        send(batch);
    }
}

/// Who reaps the store, in the replay's words (`console pid 12458
/// reaps`, `nobody reaps`, `not known`), from the recorded `by` and
/// `pid` (docs/protocol.md, `reaper`): not the recorder's own words
/// (`reaper: off (read-only); …`), which say what the recorder does.
#[must_use]
pub fn who_reaps(reaper: &ReaperLine) -> String {
    let paused = if reaper.paused { " (paused)" } else { "" };
    match (reaper.by.as_str(), reaper.pid) {
        ("nobody", _) => "nobody reaps".to_owned(),
        ("" | "unknown", _) => "not known".to_owned(),
        (by, Some(pid)) => format!("{by} pid {pid} reaps{paused}"),
        (by, None) => format!("{by} reaps{paused}"),
    }
}

/// A lock's probed liveness from its recorded word (`None`: `unknown`,
/// not probed).
fn liveness_of(word: &str, host: Option<&str>) -> Option<Liveness> {
    Some(match word {
        "alive" => Liveness::Alive,
        "stale_pid_gone" => Liveness::StalePidGone,
        "stale_pid_reused" => Liveness::StalePidReused,
        "foreign_host" => Liveness::ForeignHost(host.unwrap_or_default().to_owned()),
        _ => return None,
    })
}

/// The model's instance from its recorded row.
fn instance_of(row: &InstanceRow) -> Instance {
    Instance {
        name: row.name.clone(),
        substrate: row.substrate.as_str().into(),
        status: Status::parse(&row.status),
        created_at: row.created_at,
        tombstoned_at: row.tombstoned_at,
        lease: row.lease.map(|l| Lease {
            duration_secs: l.duration_secs,
            expires_at: l.expires_at,
        }),
        lock: row.lock.as_ref().map(|l| {
            Box::new(OpLock {
                operation: l.operation.clone(),
                holder_pid: l.holder_pid,
                holder_start_time: l.holder_start_time,
                acquired_at: l.acquired_at,
                holder_host: l.holder_host.clone(),
                claim_id: None,
            })
        }),
        anomalies: Anomalies::default(),
        dirty: row.dirty,
        birth: row.birth.as_ref().map(|b| {
            let namespace = b
                .resource_namespace
                .clone()
                .unwrap_or_else(|| format!("sl-{}", b.instance_id));
            Birth::new(&b.instance_id, &namespace)
        }),
    }
}

/// The model's operation from its recorded row (its error as the envelope
/// error it was parsed into, or the unparsed text).
fn operation_of(row: &OperationRow) -> Operation {
    let error_json = row
        .error
        .as_ref()
        .and_then(|e| serde_json::to_string(e).ok())
        .or_else(|| row.error_unparsed.clone());
    Operation {
        id: row
            .id
            .as_str()
            .map_or_else(|| row.id.to_string(), str::to_owned),
        instance: row.instance.clone(),
        instance_id: None,
        verb: row.verb.clone(),
        status: OpStatus::parse(&row.status),
        cancel_requested: false,
        created_at: row.created_at,
        updated_at: row.updated_at,
        error_json,
        progress: None,
        ran: None,
    }
}

/// The model's reap attempt from its recorded backoff row.
fn attempt_of(row: &BackoffRow) -> ReapAttempt {
    ReapAttempt {
        instance: row.instance.clone(),
        attempts: row.attempts,
        last_error: row.last_error.clone(),
        next_retry_at: row.next_retry_at,
    }
}
