//! The 0.4.0 demo store: a fresh schema-14 store (stackless 0.4.0,
//! docs/stackless-releases.md "Schema 14 (0.4.0)") made from the real
//! migrations (`tests/fixtures/ddl/001..014`), seeded as the real 0.4.0
//! writes its rows (a birth per instance: `instance_id`,
//! `resource_namespace = sl-<instance_id>`; operations with their events,
//! result and error objects; placements and observations), times relative
//! to `now`. The real 0.4.0 `list`, `status` and `operation list` accept
//! it (tests/real/demo.rs).
//!
//! What a newcomer sees (`N` = the seed time); the demo's controller
//! stand-in ([`super::controller`]) runs the queue:
//!
//! | instance | substrate | state |
//! |---|---|---|
//! | `api-gateway-dev` | local | lease 20 h left, healthy |
//! | `checkout-preview` | render | lease 6 h left of 8 h, a `--source` pin: renew it (`L`) |
//! | `docs-site-pr-412` | vercel | lease 3 h left, `[stack.verify]`: verify it (`v`) |
//! | `billing-sandbox` | render | lease of 10 min runs out at N+25 s: reaped |
//! | `orders-e2e` | local | a running `up`, a queued `down` behind it |
//! | `ml-training-run` | render | a running `up` whose health gate waits 10 min, a queued `verify` behind it: cancel either (`c`) |
//! | `preview-pr-88` | local | a failed `up` (health check 404) that kept its lease: stage `unhealthy` |
//! | `flaky-gpu-worker` | render | expired, a failed `down` (survivors) with its envelope, 2 failed reaps; every teardown fails |
//! | `payments-staging` | render | expired, `up` lock held by the console itself: refused |
//! | `inventory-sync` | local | stale `verify` lock (pid gone), lease 14 h left |
//! | `ml-feature-store` | render | `up` lock from host `ci-runner-7`, lease 5 h left |
//! | `marketing-preview` | vercel | torn down 2 days ago by a `down` |

use std::path::Path;

use color_eyre::Result;
use color_eyre::eyre::{bail, eyre};
use rusqlite::{Connection, params};

use crate::store::Store;

use super::ops::{Operation, insert_operation, operation_id};
use super::seed::{FOREIGN_HOST, LiveHolder, STALE_PID};

/// The migrations 0.4.0 runs to reach schema 14, in order.
const MIGRATIONS: [&str; 14] = [
    include_str!("../../tests/fixtures/ddl/001_init.sql"),
    include_str!("../../tests/fixtures/ddl/002_definition_dir.sql"),
    include_str!("../../tests/fixtures/ddl/003_reaper.sql"),
    include_str!("../../tests/fixtures/ddl/004_lock_host.sql"),
    include_str!("../../tests/fixtures/ddl/005_dirty.sql"),
    include_str!("../../tests/fixtures/ddl/006_operation_identity.sql"),
    include_str!("../../tests/fixtures/ddl/007_resources.sql"),
    include_str!("../../tests/fixtures/ddl/008_operations.sql"),
    include_str!("../../tests/fixtures/ddl/009_stripe_contexts.sql"),
    include_str!("../../tests/fixtures/ddl/010_secret_history.sql"),
    include_str!("../../tests/fixtures/ddl/011_revisions.sql"),
    include_str!("../../tests/fixtures/ddl/012_execution_grants.sql"),
    include_str!("../../tests/fixtures/ddl/013_operation_inputs.sql"),
    include_str!("../../tests/fixtures/ddl/014_placements.sql"),
];

/// The instance whose running `up` waits at its health gate for
/// [`super::controller::SLOW_STEP_SECS`]: there to be cancelled.
pub const SLOW_INSTANCE: &str = "ml-training-run";

/// The instance whose lease runs out first (at `N + 25 s`).
pub const EXPIRING: &str = "billing-sandbox";

/// The instance with a running `up` and a queued `down` behind it.
pub const QUEUED_DOWN: &str = "orders-e2e";

/// The instance whose failed `up` kept its lease (stage `unhealthy`).
pub const UNHEALTHY: &str = "preview-pr-88";

const MINUTE: i64 = 60;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// One seeded instance.
struct Spec {
    name: &'static str,
    substrate: &'static str,
    service: &'static str,
    /// Recorded lease length, seconds.
    lease: i64,
    /// Lease expiry offset from `now`; `None`: tombstoned at `-2 days`.
    expires: Option<i64>,
    source_overrides: &'static str,
    /// `verify = true`: the definition has a `[stack.verify]`.
    verify: bool,
    /// The last observation: `ready`, `unready`, or `None` (never observed).
    readiness: Option<&'static str>,
}

fn specs() -> Vec<Spec> {
    let spec = |name, substrate, service, lease, expires| Spec {
        name,
        substrate,
        service,
        lease,
        expires,
        source_overrides: "{}",
        verify: false,
        readiness: Some("ready"),
    };
    vec![
        spec("api-gateway-dev", "local", "gateway", DAY, Some(20 * HOUR)),
        Spec {
            source_overrides: r#"{"web":"/home/operator/src/checkout-web-hotfix"}"#,
            ..spec(
                "checkout-preview",
                "render",
                "web",
                8 * HOUR,
                Some(6 * HOUR),
            )
        },
        Spec {
            verify: true,
            ..spec(
                "docs-site-pr-412",
                "vercel",
                "site",
                8 * HOUR,
                Some(3 * HOUR),
            )
        },
        spec(EXPIRING, "render", "api", 10 * MINUTE, Some(25)),
        Spec {
            readiness: None,
            ..spec(QUEUED_DOWN, "local", "api", DAY, Some(23 * HOUR))
        },
        Spec {
            readiness: None,
            ..spec(SLOW_INSTANCE, "render", "trainer", 8 * HOUR, Some(8 * HOUR))
        },
        Spec {
            readiness: Some("unready"),
            ..spec(
                UNHEALTHY,
                "local",
                "web",
                2 * HOUR,
                Some(2 * HOUR - 4 * MINUTE),
            )
        },
        spec(
            "flaky-gpu-worker",
            "render",
            "worker",
            8 * HOUR,
            Some(-40 * MINUTE),
        ),
        spec(
            "payments-staging",
            "render",
            "api",
            8 * HOUR,
            Some(-15 * MINUTE),
        ),
        spec("inventory-sync", "local", "sync", DAY, Some(14 * HOUR)),
        spec(
            "ml-feature-store",
            "render",
            "api",
            8 * HOUR,
            Some(5 * HOUR),
        ),
        Spec {
            readiness: None,
            ..spec("marketing-preview", "vercel", "site", 8 * HOUR, None)
        },
    ]
}

/// A definition the real 0.4.0 parses (stackless-core-0.4.0 src/def/model.rs:
/// `source` and `health` tables, how it runs under `[services.NAME.<substrate>]`).
fn definition(spec: &Spec) -> String {
    let run = match spec.substrate {
        "local" => "run = \"./bin/serve --port $PORT\"".to_owned(),
        "render" => "plan = \"starter\"\nstart = \"./bin/serve\"".to_owned(),
        _ => "framework = \"nextjs\"".to_owned(),
    };
    let verify = if spec.verify {
        "\n[stack.verify]\nrun = \"npx playwright test\"\n"
    } else {
        ""
    };
    format!(
        "[stack]\nname = \"{name}\"\n\n[services.{service}]\nsource = {{ repo = \"https://example.invalid/{name}\", ref = \"main\" }}\nhealth = {{ path = \"/healthz\" }}\n\n[services.{service}.{substrate}]\n{run}\n{verify}",
        name = spec.name,
        service = spec.service,
        substrate = spec.substrate,
    )
}

/// The birth id of the `index`th seeded instance: 32 lowercase hex, as
/// 0.4.0 writes them (splitmix64 of the index: the same ids every run).
pub(super) fn instance_id(index: usize) -> String {
    let mix = |x: u64| {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let index = index as u64;
    format!("{:016x}{:016x}", mix(index), mix(index + 1000))
}

/// Create a fresh schema-14 demo store at `path` with the rows described
/// in the module docs, times relative to `now` (unix seconds), and a
/// `logs/<resource_namespace>/<service>.log` for every instance.
///
/// # Errors
/// `path` already exists; `SQLite` errors creating or writing the store;
/// I/O errors creating the logs.
pub fn seed(path: &Path, now: i64, holder: &LiveHolder) -> Result<()> {
    if path.exists() {
        bail!(
            "{} already exists: the demo only seeds a fresh store",
            path.display()
        );
    }
    let state_dir = path
        .parent()
        .ok_or_else(|| eyre!("{} has no parent directory", path.display()))?;
    let live_start =
        i64::try_from(holder.start_time).map_err(|_| eyre!("start time out of range"))?;
    let mut store = Store::create_from_migrations(path, &MIGRATIONS, 14)?;
    store.demo_write(|tx| {
        for (index, spec) in specs().iter().enumerate() {
            let id = instance_id(index);
            insert_instance(tx, spec, &id, now)?;
            insert_history(tx, spec, &id, now)?;
        }
        insert_locks(tx, now, holder, live_start)?;
        insert_pending(tx, now)
    })?;
    for (index, spec) in specs().iter().enumerate() {
        let logs = state_dir
            .join("logs")
            .join(format!("sl-{}", instance_id(index)));
        std::fs::create_dir_all(&logs)?;
        std::fs::write(
            logs.join(format!("{}.log", spec.service)),
            format!("{}: listening on $PORT\n", spec.service),
        )?;
    }
    Ok(())
}

fn insert_instance(tx: &Connection, spec: &Spec, id: &str, now: i64) -> rusqlite::Result<()> {
    let created = spec.expires.map_or(now - 3 * DAY, |e| now + e - spec.lease);
    let tombstoned = spec.expires.is_none().then_some(now - 2 * DAY);
    tx.execute(
        "INSERT INTO instances (name, substrate, status, definition, source_overrides, \
         created_at, tombstoned_at, definition_dir, dirty, instance_id, resource_namespace) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, ?10)",
        params![
            spec.name,
            spec.substrate,
            if tombstoned.is_some() {
                "tombstoned"
            } else {
                "active"
            },
            definition(spec),
            spec.source_overrides,
            created,
            tombstoned,
            format!("/home/operator/src/{}", spec.name),
            id,
            format!("sl-{id}"),
        ],
    )?;
    tx.execute(
        "INSERT INTO placements (owner_id, node, provider) VALUES (?1, ?2, ?3)",
        params![id, format!("service:{}", spec.service), spec.substrate],
    )?;
    let Some(expires) = spec.expires else {
        return Ok(());
    };
    tx.execute(
        "INSERT INTO leases (instance, duration_secs, expires_at) VALUES (?1, ?2, ?3)",
        params![spec.name, spec.lease, now + expires],
    )?;
    tx.execute(
        "INSERT INTO checkpoints (instance, step_id, resource_kind, resource_id, payload, \
         recorded_at) VALUES (?1, ?2, 'source', ?3, '{}', ?4)",
        params![
            spec.name,
            format!("materialize:{}", spec.service),
            format!("/home/operator/src/{}", spec.name),
            created + 2,
        ],
    )?;
    if let Some(readiness) = spec.readiness {
        let evidence = serde_json::json!({
            "configuration": "applied",
            "drift": [],
            "error_code": null,
            "existence": "present",
            "observed_at": (now - 30) * 1000,
            "readiness": readiness,
        });
        tx.execute(
            "INSERT INTO observations (owner_id, node, evidence_json, observed_at) \
             VALUES (?1, ?2, ?3, ?4)",
            params![
                id,
                format!("service:{}", spec.service),
                evidence.to_string(),
                now - 30
            ],
        )?;
    }
    Ok(())
}

/// The finished operations each instance's past left: its `up` (failed
/// with a health check 404 for [`UNHEALTHY`]), the failed `down` of the
/// flaky instance, the `down` of the tombstoned one.
fn insert_history(tx: &Connection, spec: &Spec, id: &str, now: i64) -> rusqlite::Result<()> {
    // Its `up` ran 42 s and finished by `now`: nothing seeded is in the
    // future (a lease renewed just now still had an `up` before it).
    let created = spec
        .expires
        .map_or(now - 3 * DAY, |e| now + e - spec.lease)
        .min(now - 42);
    let up_status = if spec.name == UNHEALTHY {
        "failed"
    } else {
        "succeeded"
    };
    let error = (spec.name == UNHEALTHY).then(|| health_404(spec, id));
    let result = error.is_none().then(|| {
        serde_json::json!({
            "duration_ms": 41_200,
            "executed": [format!("materialize:{}", spec.service), format!("start:{}", spec.service), format!("health:{}", spec.service)],
            "instance_id": id,
            "name": spec.name,
        })
        .to_string()
    });
    let request = up_request(spec);
    insert_operation(
        tx,
        &Operation {
            id: &operation_id(id, 1),
            instance: spec.name,
            instance_id: id,
            verb: "up",
            status: up_status,
            request: &request,
            result: result.as_deref(),
            error: error.as_deref(),
            created,
            updated: created + 42,
        },
    )?;
    let down = match (spec.name, spec.expires) {
        ("flaky-gpu-worker", _) => Some((
            "failed",
            None,
            Some(super::ops::survivors(spec.name, id)),
            now - 5 * MINUTE,
        )),
        (_, None) => Some((
            "succeeded",
            Some(r#"{"name":"marketing-preview","spend":null,"status":"Destroyed"}"#.to_owned()),
            None,
            now - 2 * DAY - 40,
        )),
        _ => None,
    };
    if let Some((status, result, error, at)) = down {
        insert_operation(
            tx,
            &Operation {
                id: &operation_id(id, 2),
                instance: spec.name,
                instance_id: id,
                verb: "down",
                status,
                request: &format!(r#"{{"name":"{}","verb":"down"}}"#, spec.name),
                result: result.as_deref(),
                error: error.as_deref(),
                created: at,
                updated: at + 40,
            },
        )?;
    }
    if spec.name == "flaky-gpu-worker" {
        tx.execute(
            "INSERT INTO reap_attempts (instance, attempts, last_error, next_retry_at) \
             VALUES (?1, 2, ?2, ?3)",
            params![spec.name, super::ops::survivors(spec.name, id), now + 12],
        )?;
    }
    Ok(())
}

/// An `up`'s `request_json` as 0.4.0 records it: the CLI's arguments, the
/// directory it ran in and the definition it read.
fn up_request(spec: &Spec) -> String {
    let dir = format!("/home/operator/src/{}", spec.name);
    serde_json::json!({
        "args": {
            "allow_host_execution": spec.substrate == "local",
            "confirm_paid": false,
            "dirty": false,
            "file": format!("{dir}/stackless.toml"),
            "lease": crate::model::verbs::lease_word(u64::try_from(spec.lease).unwrap_or(3600)),
            "name": spec.name,
            "on": spec.substrate,
            "sources": [],
        },
        "cwd": dir,
        "definition": definition(spec),
        "verb": "up",
    })
    .to_string()
}

/// The error object 0.4.0 stores for an `up` whose health check answered
/// 404 (`local.health_failed`, as the real fixture's).
fn health_404(spec: &Spec, id: &str) -> String {
    serde_json::json!({
        "code": "local.health_failed",
        "context": {
            "command": null, "exit_status": null, "hook": null, "log_hint": null,
            "log_path": format!("/home/operator/.local/state/stackless/logs/sl-{id}/{}.log", spec.service),
            "log_tail": "127.0.0.1 - - \"GET /healthz HTTP/1.1\" 404 -\n",
            "service": spec.service, "source_dir": null,
        },
        "instance": spec.name,
        "message": format!("health check of service \"{}\" failed: GET /healthz answered 404", spec.service),
        "remediation": "the instance keeps its lease; fix the service and run `stackless up` again, or `stackless down` it",
        "schema_version": 2,
    })
    .to_string()
}

/// The live, stale and foreign locks (as in the schema-4 demo).
fn insert_locks(
    tx: &Connection,
    now: i64,
    holder: &LiveHolder,
    live_start: i64,
) -> rusqlite::Result<()> {
    let rows: [(&str, &str, i64, i64, i64, &str); 3] = [
        (
            "payments-staging",
            "up",
            i64::from(holder.pid),
            live_start,
            now - 90,
            &holder.host,
        ),
        (
            "inventory-sync",
            "verify",
            i64::from(STALE_PID),
            now - 3 * HOUR - 4,
            now - 3 * HOUR,
            &holder.host,
        ),
        (
            "ml-feature-store",
            "up",
            23_817,
            now - 7 * MINUTE,
            now - 6 * MINUTE,
            FOREIGN_HOST,
        ),
    ];
    for (name, operation, pid, start, acquired, host) in rows {
        tx.execute(
            "INSERT INTO op_locks (instance, operation, holder_pid, holder_start_time, \
             acquired_at, holder_host, claim_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                name,
                operation,
                pid,
                start,
                acquired,
                host,
                format!("claim-{name}")
            ],
        )?;
    }
    Ok(())
}

/// The queue: a running `up` on [`QUEUED_DOWN`] with a `down` queued
/// behind it, and a running `up` on [`SLOW_INSTANCE`] (at its health gate)
/// with a `verify` queued behind it.
fn insert_pending(tx: &Connection, now: i64) -> rusqlite::Result<()> {
    let specs = specs();
    for (name, step_started_ago, queued) in
        [(QUEUED_DOWN, 2, "down"), (SLOW_INSTANCE, 40, "verify")]
    {
        let Some(index) = specs.iter().position(|s| s.name == name) else {
            continue;
        };
        let spec = &specs[index];
        let id = instance_id(index);
        let up = operation_id(&id, 3);
        let request = up_request(spec);
        let started = now - step_started_ago - 10;
        insert_operation(
            tx,
            &Operation {
                id: &up,
                instance: name,
                instance_id: &id,
                verb: "up",
                status: "running",
                request: &request,
                result: None,
                error: None,
                created: started,
                updated: started,
            },
        )?;
        let ms = |at: i64| at * 1000;
        super::ops::event(tx, &up, name, spec.service, 1, "Started", ms(started))?;
        super::ops::event(tx, &up, name, spec.service, 1, "Completed", ms(started + 4))?;
        super::ops::event(tx, &up, name, spec.service, 2, "Started", ms(started + 4))?;
        super::ops::event(
            tx,
            &up,
            name,
            spec.service,
            2,
            "Completed",
            ms(started + 10),
        )?;
        super::ops::event(
            tx,
            &up,
            name,
            spec.service,
            3,
            "Started",
            ms(now - step_started_ago),
        )?;
        insert_operation(
            tx,
            &Operation {
                id: &operation_id(&id, 4),
                instance: name,
                instance_id: &id,
                verb: queued,
                status: "queued",
                request: &format!(r#"{{"name":"{name}","verb":"{queued}"}}"#),
                result: None,
                error: None,
                created: now - 5,
                updated: now - 5,
            },
        )?;
    }
    Ok(())
}
