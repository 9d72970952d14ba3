//! Writing rows that only the demo and the benches write, without a
//! connection leaving the adapter: seeding a fresh store (the demo's mix,
//! the benches' generated stores) and the demo's own `down` (one
//! `BEGIN IMMEDIATE` transaction, as stackless's `down` takes its write
//! lock first). The console itself writes only reap bookkeeping
//! (`store::write`).
//!
//! The rows are the schema-4 columns the stackless CLI writes (contract
//! §2, `docs/stackless-state-store.md`); a seeded store has no later
//! column (`op_locks.claim_id`, migration 6). The 0.4.0 demo's store is
//! made from stackless 0.4.0's own migrations instead
//! ([`Store::create_from_migrations`]), and its rows written by the demo
//! in transactions on the store's own connection ([`Store::demo_write`]).

use rusqlite::{OptionalExtension as _, Transaction, TransactionBehavior, params};

use super::{Access, Store, StoreError};
use crate::model::{Lease, OpLock, Status};

/// One instance to seed, with the rows that hang off it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedInstance {
    /// `instances.name` (DNS-safe).
    pub name: String,
    /// `instances.substrate` (`local`, `render`, `vercel`, ...).
    pub substrate: String,
    /// `instances.status`.
    pub status: Status,
    /// `instances.definition`: the stack's TOML.
    pub definition: String,
    /// `instances.source_overrides`: a JSON object.
    pub source_overrides: String,
    /// `instances.created_at`, unix seconds.
    pub created_at: i64,
    /// `instances.tombstoned_at`, unix seconds (tombstoned rows).
    pub tombstoned_at: Option<i64>,
    /// `instances.definition_dir`: where the stack's definition lives.
    pub definition_dir: String,
    /// Its `leases` row.
    pub lease: Option<Lease>,
    /// Its `op_locks` row (`claim_id` is not written: schema 4).
    pub lock: Option<OpLock>,
    /// Its `reap_attempts` row.
    pub attempt: Option<SeedAttempt>,
    /// Its `checkpoints` rows, in insertion order.
    pub checkpoints: Vec<SeedCheckpoint>,
}

/// A `reap_attempts` row (contract §6: the reaper's backoff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedAttempt {
    /// Failed teardowns so far.
    pub attempts: i64,
    /// The last failure as stored (an envelope, or whatever was written).
    pub last_error: String,
    /// Unix seconds before which the reaper does not try again.
    pub next_retry_at: i64,
}

/// A `checkpoints` row: one resource an instance's `up` recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedCheckpoint {
    /// `step_id` (`start:web`, ...).
    pub step_id: String,
    /// `resource_kind` (`process`, `source`, `render.service`, ...).
    pub resource_kind: String,
    /// `resource_id` (a pid, a path, a substrate id).
    pub resource_id: String,
    /// `payload`: a JSON object.
    pub payload: String,
    /// `recorded_at`, unix seconds.
    pub recorded_at: i64,
}

impl Store {
    /// Insert `instances` and their rows in one transaction (nothing is
    /// written unless all are). For a store this process just created
    /// ([`Store::open_or_create`]); the instances are read one at a time,
    /// so a generator need not hold them all.
    ///
    /// # Errors
    /// Any `SQLite` error (a duplicate name, a full disk); nothing is
    /// committed then.
    pub fn seed(&self, instances: impl IntoIterator<Item = SeedInstance>) -> rusqlite::Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut ins_instance = tx.prepare(
                "INSERT INTO instances (name, substrate, status, definition, source_overrides,
                                        created_at, tombstoned_at, definition_dir)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            let mut ins_lease = tx.prepare(
                "INSERT INTO leases (instance, duration_secs, expires_at) VALUES (?1, ?2, ?3)",
            )?;
            let mut ins_lock = tx.prepare(
                "INSERT INTO op_locks (instance, operation, holder_pid, holder_start_time,
                                       acquired_at, holder_host)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            let mut ins_attempt = tx.prepare(
                "INSERT INTO reap_attempts (instance, attempts, last_error, next_retry_at)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut ins_checkpoint = tx.prepare(
                "INSERT INTO checkpoints (instance, step_id, resource_kind, resource_id,
                                          payload, recorded_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for i in instances {
                ins_instance.execute(params![
                    i.name,
                    i.substrate,
                    i.status.as_str(),
                    i.definition,
                    i.source_overrides,
                    i.created_at,
                    i.tombstoned_at,
                    i.definition_dir
                ])?;
                if let Some(lease) = &i.lease {
                    ins_lease.execute(params![i.name, lease.duration_secs, lease.expires_at])?;
                }
                if let Some(lock) = &i.lock {
                    ins_lock.execute(params![
                        i.name,
                        lock.operation,
                        lock.holder_pid,
                        lock.holder_start_time,
                        lock.acquired_at,
                        lock.holder_host
                    ])?;
                }
                if let Some(attempt) = &i.attempt {
                    ins_attempt.execute(params![
                        i.name,
                        attempt.attempts,
                        attempt.last_error,
                        attempt.next_retry_at
                    ])?;
                }
                for c in &i.checkpoints {
                    ins_checkpoint.execute(params![
                        i.name,
                        c.step_id,
                        c.resource_kind,
                        c.resource_id,
                        c.payload,
                        c.recorded_at
                    ])?;
                }
            }
        }
        tx.commit()
    }

    /// Move everything in the write-ahead log into the database file and
    /// empty the log (`PRAGMA wal_checkpoint(TRUNCATE)`): a generated store
    /// handed to the benches is then one file. The console itself never
    /// checkpoints (`docs/ARCHITECTURE.md`, the store's files).
    ///
    /// # Errors
    /// Any `SQLite` error.
    pub fn checkpoint_seeded(&self) -> rusqlite::Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
    }

    /// Begin the demo's `down` of one instance: a `BEGIN IMMEDIATE`
    /// transaction (the write lock first, as stackless's `down`), rolled
    /// back when the [`DemoDown`] is dropped without
    /// [`DemoDown::mark_tombstoned`].
    ///
    /// # Errors
    /// Any `SQLite` error (busy past the busy timeout).
    pub fn begin_demo_down(&self) -> rusqlite::Result<DemoDown<'_>> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate).map(DemoDown)
    }
}

/// The demo's `down` of one instance, in one write transaction: read what
/// decides it, then tombstone it or drop this (rolled back).
#[derive(Debug)]
pub struct DemoDown<'s>(Transaction<'s>);

impl Store {
    /// A fresh store at `path` made by `migrations` (each one's SQL, in
    /// order), then `PRAGMA user_version = user_version`: the 0.4.0 demo's
    /// schema-14 store, made from stackless 0.4.0's own migrations
    /// (`crate::demo::v14`). Counted like every connection (`epoch`).
    ///
    /// # Errors
    /// `path` exists or cannot be made ([`StoreError::Unreadable`]); any
    /// `SQLite` error.
    pub fn create_from_migrations(
        path: &std::path::Path,
        migrations: &[&str],
        user_version: i64,
    ) -> Result<Self, StoreError> {
        super::files::create_new(path)
            .map_err(|e| StoreError::Unreadable(path.to_owned(), e.to_string()))?;
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let registration = super::epoch::register_within(&canonical, super::SETTLE)
            .map_err(|n| StoreError::Settling(canonical.clone(), n))?;
        let conn = Self::connect(&canonical, Access::ReadWrite, false, false)?;
        let err = |e: rusqlite::Error| StoreError::sqlite(&canonical, &e);
        for migration in migrations {
            conn.execute_batch(migration).map_err(err)?;
        }
        conn.pragma_update(None, "user_version", user_version)
            .map_err(err)?;
        drop(conn);
        drop(registration);
        Self::open(path, Access::ReadWrite)
    }

    /// One write of the demo's own rows (the 0.4.0 demo's seed, and its
    /// stand-ins for stackless's controller and CLI: `crate::demo`):
    /// `write` in one immediate transaction on this store's connection,
    /// committed when it returns `Ok`, rolled back otherwise.
    ///
    /// # Errors
    /// Any `SQLite` error (busy past the busy timeout).
    pub fn demo_write<T>(
        &mut self,
        write: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| StoreError::sqlite(&path, &e);
        let tx =
            Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate).map_err(err)?;
        let out = write(&tx).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(out)
    }
}

impl DemoDown<'_> {
    /// `instances.status` of `name`, as stored; `None` when there is no
    /// such instance.
    ///
    /// # Errors
    /// Any `SQLite` error.
    pub fn status(&self, name: &str) -> rusqlite::Result<Option<String>> {
        self.0
            .query_row(
                "SELECT status FROM instances WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
    }

    /// The `op_locks` row of `name` (schema 4: no `claim_id`).
    ///
    /// # Errors
    /// Any `SQLite` error.
    pub fn op_lock(&self, name: &str) -> rusqlite::Result<Option<OpLock>> {
        self.0
            .query_row(
                "SELECT operation, holder_pid, holder_start_time, acquired_at, holder_host
                 FROM op_locks WHERE instance = ?1",
                [name],
                |r| {
                    Ok(OpLock {
                        operation: r.get(0)?,
                        holder_pid: r.get(1)?,
                        holder_start_time: r.get(2)?,
                        acquired_at: r.get(3)?,
                        holder_host: Some(r.get(4)?),
                        claim_id: None,
                    })
                },
            )
            .optional()
    }

    /// `(resource_kind, resource_id)` of the first checkpoint `name`
    /// recorded (by `recorded_at`, then `step_id`).
    ///
    /// # Errors
    /// Any `SQLite` error.
    pub fn first_checkpoint(&self, name: &str) -> rusqlite::Result<Option<(String, String)>> {
        self.0
            .query_row(
                "SELECT resource_kind, resource_id FROM checkpoints WHERE instance = ?1
                 ORDER BY recorded_at, step_id LIMIT 1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
    }

    /// Tombstone `name` at `now` (unix seconds), delete its lease, reap
    /// attempts and operation lock, and commit.
    ///
    /// # Errors
    /// Any `SQLite` error; nothing is committed then.
    pub fn mark_tombstoned(self, name: &str, now: i64) -> rusqlite::Result<()> {
        self.0.execute(
            "UPDATE instances SET status = 'tombstoned', tombstoned_at = ?2 WHERE name = ?1",
            params![name, now],
        )?;
        for table in ["leases", "reap_attempts", "op_locks"] {
            self.0
                .execute(&format!("DELETE FROM {table} WHERE instance = ?1"), [name])?;
        }
        self.0.commit()
    }
}
