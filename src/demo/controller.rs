//! The demo's controller stand-in: it plays the part of stackless 0.4.0's
//! controller for the 0.4.0 demo store, and only there. It is not
//! stackless: it deploys and tears down nothing, it moves the store's rows
//! as the real controller would (docs/stackless-releases.md "Schema 14
//! (0.4.0)", "The CLI (0.4.0)"):
//!
//! - a queued operation starts only while no other operation of the same
//!   name runs (core-0.4.0 src/state/operation.rs:227-232), oldest first;
//! - a running operation records `Started`/`Completed` step events (as the
//!   real `operation_events` rows: `at_epoch_ms`, `index`, `total`,
//!   `step_id`, `step_kind`), one step every [`super::ops::STEP_SECS`]
//!   ([`SLOW_STEP_SECS`] for the health gate of [`super::v14::SLOW_INSTANCE`]);
//! - a cancel requested on a running `up` or `verify` stops it before its
//!   next step (`cancelled`, error `operation.cancelled`);
//! - `up` renews the lease with its `--lease` (else the recorded length),
//!   `verify` at the recorded length (refused `verify.not_declared` when
//!   the definition has no `[stack.verify]`), `down` tombstones the instance
//!   (lease, reap attempts, lock and checkpoints gone; resources `absent`);
//!   a `down` of an instance whose lock is held (a live holder, or another
//!   host) fails `state.lock.held`; a `down` of a `flaky-` instance fails
//!   `engine.teardown.survivors`.
//!
//! [`tick`] is one pass over the queue at a given time; [`spawn`] runs it
//! every [`TICK`] on thread `demo-controller` until the console stops.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::{Value, json};

use super::ops::{STEP_SECS, error_object, event, steps, survivors};

use crate::model::OpLock;
use crate::model::liveness::liveness;
use crate::stop::StopToken;
use crate::store::probe::{HostProbe, SysinfoProbe};
use crate::store::{Access, Store, StoreError};

/// How often the stand-in looks at the queue.
pub const TICK: Duration = Duration::from_millis(500);

/// How long the health gate of [`super::v14::SLOW_INSTANCE`]'s `up` waits,
/// seconds: long enough to be cancelled.
pub const SLOW_STEP_SECS: i64 = 600;

/// Instances whose name starts with this fail every teardown.
pub const FLAKY_PREFIX: &str = "flaky-";

/// One operation as the stand-in reads it.
#[derive(Debug, Clone)]
struct Op {
    id: String,
    instance: String,
    verb: String,
    cancel_requested: bool,
    request: String,
}

/// The service an instance's steps name: its first placement's node
/// (`service:NAME`), else `web`.
fn service_of(db: &Connection, instance: &str) -> rusqlite::Result<String> {
    let node: Option<String> = db
        .query_row(
            "SELECT p.node FROM placements p JOIN instances i ON i.instance_id = p.owner_id \
             WHERE i.name = ?1 ORDER BY p.node LIMIT 1",
            [instance],
            |row| row.get(0),
        )
        .optional()?;
    Ok(node
        .and_then(|n| n.strip_prefix("service:").map(str::to_owned))
        .unwrap_or_else(|| "web".to_owned()))
}

/// One pass over the queue at `now_ms` (unix milliseconds): every running
/// operation moved on, then every queued one whose name is free started.
///
/// # Errors
/// `SQLite` errors (the pass is one transaction: all or nothing).
pub fn tick(store: &mut Store, now_ms: i64, probe: &mut dyn HostProbe) -> Result<(), StoreError> {
    store.demo_write(|tx| {
        let mut busy = Vec::new();
        for op in ops(tx, "running")? {
            if advance(tx, &op, now_ms)? {
                busy.push(op.instance.clone());
            }
        }
        for op in ops(tx, "queued")? {
            if busy.contains(&op.instance) {
                continue;
            }
            if start(tx, &op, now_ms, probe)? {
                busy.push(op.instance.clone());
            }
        }
        Ok(())
    })
}

fn ops(db: &Connection, status: &str) -> rusqlite::Result<Vec<Op>> {
    let mut stmt = db.prepare(
        "SELECT id, instance, verb, cancel_requested, request_json FROM operations \
         WHERE status = ?1 ORDER BY created_at, rowid",
    )?;
    stmt.query_map([status], |row| {
        Ok(Op {
            id: row.get(0)?,
            instance: row.get(1)?,
            verb: row.get(2)?,
            cancel_requested: row.get::<_, i64>(3)? != 0,
            request: row.get(4)?,
        })
    })?
    .collect()
}

/// Move a running operation on; `true` while it still runs.
fn advance(db: &Connection, op: &Op, now_ms: i64) -> rusqlite::Result<bool> {
    if op.cancel_requested && matches!(op.verb.as_str(), "up" | "verify") {
        let error = error_object(
            "operation.cancelled",
            &op.instance,
            &format!(
                "{} of \"{}\" was cancelled before its next step",
                op.verb, op.instance
            ),
            "run it again when it is wanted",
        );
        finish(db, op, "cancelled", None, Some(&error), now_ms)?;
        return Ok(false);
    }
    let service = service_of(db, &op.instance)?;
    let total = steps(&op.verb, &service).len();
    let last = last_event(db, &op.id)?;
    let index = last["index"]
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(0);
    let at = last["at_epoch_ms"].as_i64().unwrap_or(now_ms);
    if last["event"] != "Started" {
        event(
            db,
            &op.id,
            &op.instance,
            &service,
            index + 1,
            "Started",
            now_ms,
        )?;
        return Ok(true);
    }
    let slow = op.instance == super::v14::SLOW_INSTANCE && op.verb == "up" && index == total;
    let step_ms = 1000 * if slow { SLOW_STEP_SECS } else { STEP_SECS };
    if now_ms - at < step_ms {
        return Ok(true);
    }
    if op.verb == "down" && op.instance.starts_with(FLAKY_PREFIX) && index == total {
        event(db, &op.id, &op.instance, &service, index, "Failed", now_ms)?;
        let id = instance_id(db, &op.instance)?.unwrap_or_default();
        finish(
            db,
            op,
            "failed",
            None,
            Some(&survivors(&op.instance, &id)),
            now_ms,
        )?;
        return Ok(false);
    }
    event(
        db,
        &op.id,
        &op.instance,
        &service,
        index,
        "Completed",
        now_ms,
    )?;
    if index < total {
        event(
            db,
            &op.id,
            &op.instance,
            &service,
            index + 1,
            "Started",
            now_ms,
        )?;
        return Ok(true);
    }
    succeed(db, op, now_ms)?;
    Ok(false)
}

/// The last step event of `op_id` (`Null` when it has none).
fn last_event(db: &Connection, op_id: &str) -> rusqlite::Result<Value> {
    let last: Option<String> = db
        .query_row(
            "SELECT event_json FROM operation_events WHERE operation_id = ?1 \
             ORDER BY sequence DESC LIMIT 1",
            [op_id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(last
        .and_then(|l| serde_json::from_str(&l).ok())
        .unwrap_or(Value::Null))
}

fn instance_id(db: &Connection, name: &str) -> rusqlite::Result<Option<String>> {
    db.query_row(
        "SELECT instance_id FROM instances WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .optional()
}

/// Start a queued operation, or finish it at once when it cannot run;
/// `true` when it now runs.
fn start(
    db: &Connection,
    op: &Op,
    now_ms: i64,
    probe: &mut dyn HostProbe,
) -> rusqlite::Result<bool> {
    let status: Option<String> = db
        .query_row(
            "SELECT status FROM instances WHERE name = ?1",
            [&op.instance],
            |r| r.get(0),
        )
        .optional()?;
    let refusal = match (status.as_deref(), op.verb.as_str()) {
        (None, _) | (Some("tombstoned"), "up" | "verify") => Some(error_object(
            "state.instance.not_found",
            &op.instance,
            &format!("no instance named \"{}\"", op.instance),
            "`stackless list` shows known instances",
        )),
        (Some(_), "down") => held(db, &op.instance, probe)?,
        (Some(_), "verify") => undeclared(db, &op.instance)?,
        _ => None,
    };
    if let Some(error) = refusal {
        finish(db, op, "failed", None, Some(&error), now_ms)?;
        return Ok(false);
    }
    if status.as_deref() == Some("tombstoned") {
        let result = json!({"name": op.instance, "spend": null, "status": "AlreadyDown"});
        finish(db, op, "succeeded", Some(&result.to_string()), None, now_ms)?;
        return Ok(false);
    }
    db.execute(
        "UPDATE operations SET status = 'running', updated_at = ?2 WHERE id = ?1",
        params![op.id, now_ms.div_euclid(1000)],
    )?;
    let service = service_of(db, &op.instance)?;
    event(db, &op.id, &op.instance, &service, 1, "Started", now_ms)?;
    Ok(true)
}

/// The `verify.not_declared` error when `name`'s recorded definition has
/// no `[stack.verify]` (stackless-0.4.0 src/verify.rs:110-113), else `None`.
fn undeclared(db: &Connection, name: &str) -> rusqlite::Result<Option<String>> {
    let definition: String = db.query_row(
        "SELECT definition FROM instances WHERE name = ?1",
        [name],
        |r| r.get(0),
    )?;
    Ok((!definition.contains("[stack.verify]")).then(|| {
        error_object(
            "verify.not_declared",
            name,
            "the stack declares no [stack.verify] contract",
            "add a [stack.verify] table with a `run` command to stackless.toml",
        )
    }))
}

/// The `state.lock.held` error when `name`'s lock is held by a live
/// process or another host (stackless §2), else `None`.
fn held(
    db: &Connection,
    name: &str,
    probe: &mut dyn HostProbe,
) -> rusqlite::Result<Option<String>> {
    let lock = db
        .query_row(
            "SELECT operation, holder_pid, holder_start_time, acquired_at, holder_host \
             FROM op_locks WHERE instance = ?1",
            [name],
            |r| {
                Ok(OpLock {
                    operation: r.get(0)?,
                    holder_pid: r.get(1)?,
                    holder_start_time: r.get(2)?,
                    acquired_at: r.get(3)?,
                    holder_host: r.get::<_, Option<String>>(4)?.filter(|h| !h.is_empty()),
                    claim_id: None,
                })
            },
        )
        .optional()?;
    let Some(lock) = lock else {
        return Ok(None);
    };
    let host = probe.host_name().map(str::to_owned);
    if !liveness(&lock, host.as_deref(), |pid| probe.live_start_time(pid)).held() {
        return Ok(None);
    }
    Ok(Some(error_object(
        crate::model::envelope::LOCK_HELD_CODE,
        name,
        &format!(
            "instance \"{name}\" is locked by `{}` (pid {} on {})",
            lock.operation,
            lock.holder_pid,
            lock.holder_host.as_deref().unwrap_or("this host")
        ),
        "another operation is in progress on this instance; wait for it to finish and try again",
    )))
}

/// The lease an `up` asked for (`args.lease`, humantime), in seconds.
fn asked_lease(request: &str) -> Option<i64> {
    let request: Value = serde_json::from_str(request).ok()?;
    let text = request["args"]["lease"].as_str()?;
    let secs = humantime::parse_duration(text).ok()?.as_secs();
    i64::try_from(secs).ok()
}

/// Carry out what a finished operation does to its instance, then mark it
/// succeeded with its result.
fn succeed(db: &Connection, op: &Op, now_ms: i64) -> rusqlite::Result<()> {
    let now = now_ms.div_euclid(1000);
    let name = op.instance.as_str();
    let result = match op.verb.as_str() {
        "up" | "verify" => {
            let recorded: Option<i64> = db
                .query_row(
                    "SELECT duration_secs FROM leases WHERE instance = ?1",
                    [name],
                    |r| r.get(0),
                )
                .optional()?;
            let secs = (op.verb == "up")
                .then(|| asked_lease(&op.request))
                .flatten()
                .or(recorded)
                .unwrap_or(3600);
            db.execute(
                "INSERT INTO leases (instance, duration_secs, expires_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(instance) DO UPDATE SET duration_secs = ?2, expires_at = ?3",
                params![name, secs, now + secs],
            )?;
            db.execute("DELETE FROM reap_attempts WHERE instance = ?1", [name])?;
            json!({"name": name, "duration_ms": STEP_SECS * 1000, "exit_status": 0,
                   "tier": null, "lease_remaining_secs": secs,
                   "instance_id": instance_id(db, name)?})
        }
        _ => {
            db.execute(
                "UPDATE instances SET status = 'tombstoned', tombstoned_at = ?2 WHERE name = ?1",
                params![name, now],
            )?;
            for table in ["leases", "reap_attempts", "op_locks", "checkpoints"] {
                db.execute(&format!("DELETE FROM {table} WHERE instance = ?1"), [name])?;
            }
            db.execute(
                "UPDATE resources SET phase = 'absent', updated_at = ?2 \
                 WHERE owner_id = (SELECT instance_id FROM instances WHERE name = ?1)",
                params![name, now],
            )?;
            json!({"name": name, "spend": null, "status": "Destroyed"})
        }
    };
    finish(db, op, "succeeded", Some(&result.to_string()), None, now_ms)
}

fn finish(
    db: &Connection,
    op: &Op,
    status: &str,
    result: Option<&str>,
    error: Option<&str>,
    now_ms: i64,
) -> rusqlite::Result<()> {
    db.execute(
        "UPDATE operations SET status = ?2, result_json = ?3, error_json = ?4, updated_at = ?5 \
         WHERE id = ?1",
        params![op.id, status, result, error, now_ms.div_euclid(1000)],
    )?;
    Ok(())
}

/// Run [`tick`] every [`TICK`] on the store at `path` (thread
/// `demo-controller`) until `stop` is cancelled. A pass that fails (the
/// store busy) is tried again at the next tick.
///
/// # Errors
/// The thread cannot be started.
pub fn spawn(path: PathBuf, stop: StopToken) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("demo-controller".into())
        .spawn(move || {
            let Ok(mut store) = Store::open(&path, Access::ReadWrite) else {
                return;
            };
            let mut probe = SysinfoProbe::new();
            loop {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                let _ = tick(&mut store, now_ms, &mut probe);
                if stop.sleep(TICK) {
                    return;
                }
            }
        })
        .map(|_| ())
}
