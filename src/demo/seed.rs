//! The demo store: a fresh stackless v4 store seeded with a realistic mix of
//! instances, timed relative to `now` so that a reaper ticking every few
//! seconds shows, within a minute, a reap succeeding, a failure backing off
//! and counting down, and a tombstone being garbage-collected, next to the
//! states that never change (a live lock, a stale lock, a foreign host).
//!
//! What a newcomer sees (`N` = the seed time):
//!
//! | instance | substrate | state |
//! |---|---|---|
//! | `api-gateway-dev` | local | lease 20 h left |
//! | `checkout-preview` | render | lease 6 h left, a `--source` pin |
//! | `docs-site-pr-412` | vercel | lease 3 h left |
//! | `billing-sandbox` | render | expires at N+20 s, then reaped |
//! | `feature-flags-demo` | vercel | expires at N+40 s, then reaped |
//! | `orders-e2e` | local | expired 3 min ago: reaped on the first tick |
//! | `payments-staging` | render | expired, `up` lock held by the console itself: skipped forever |
//! | `flaky-gpu-worker` | render | expired 40 min ago, 2 failed reaps, retry at N+12 s; every teardown fails |
//! | `inventory-sync` | local | stale `verify` lock (pid gone), lease 14 h left |
//! | `ml-feature-store` | render | `up` lock from host `ci-runner-7`, lease 5 h left |
//! | `legacy-auth-spike` | local | tombstoned 8 days ago: garbage-collected |
//! | `marketing-preview` | vercel | tombstoned 2 days ago: kept |

use std::path::Path;

use crate::model::{Lease, OpLock, Status};
use crate::store::Store;
use crate::store::seed::{SeedAttempt, SeedCheckpoint, SeedInstance};
use color_eyre::Result;
use color_eyre::eyre::{bail, eyre};

/// A live process to name as a lock holder (the console passes its own pid,
/// sysinfo start time, and sysinfo hostname), so the demo has a lock the
/// reaper must skip for as long as the console runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveHolder {
    /// The holder's process id.
    pub pid: u32,
    /// Its start time, unix seconds, as `sysinfo`'s `Process::start_time()`
    /// reports it.
    pub start_time: u64,
    /// This machine's hostname, as `sysinfo::System::host_name()` reports it.
    pub host: String,
}

/// The pid named by the demo's stale lock: no such process is expected to
/// exist, so the lock reads as "stale: pid gone".
pub const STALE_PID: u32 = 999_999;

/// The host named by the demo's foreign lock.
pub const FOREIGN_HOST: &str = "ci-runner-7";

const MINUTE: i64 = 60;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// Default lease lengths (contract, "Leases"): local 24 h, render and vercel
/// 8 h.
fn lease_duration(substrate: &str) -> i64 {
    if substrate == "local" {
        24 * HOUR
    } else {
        8 * HOUR
    }
}

/// How one seeded instance's lifecycle stands.
enum State {
    /// Active with a lease expiring at this offset from `now`.
    Leased(i64),
    /// Tombstoned at this offset from `now` (no lease).
    Tombstoned(i64),
}

/// Who holds a seeded instance's operation lock.
enum Holder {
    /// The live process passed to [`seed`].
    Live,
    /// [`STALE_PID`] on this host.
    Stale,
    /// A process on [`FOREIGN_HOST`].
    Foreign,
}

struct Lock {
    operation: &'static str,
    holder: Holder,
    /// Offset from `now` at which the lock was taken.
    acquired: i64,
}

struct Checkpoint {
    step_id: &'static str,
    resource_kind: &'static str,
    resource_id: &'static str,
    payload: &'static str,
}

struct Spec {
    name: &'static str,
    substrate: &'static str,
    /// The directory the definition was read from (under the operator's
    /// home: `~/src/<project>`).
    project: &'static str,
    definition: &'static str,
    source_overrides: &'static str,
    state: State,
    lock: Option<Lock>,
    checkpoints: &'static [Checkpoint],
    log: &'static str,
}

/// The one-line failure envelope the reaper recorded for the flaky instance
/// (as consoles before `code: message` stored it: the whole envelope,
/// re-serialized on one line; the detail view still reads it whole).
pub const FLAKY_LAST_ERROR: &str = concat!(
    r#"{"ok":false,"error":{"schema_version":1,"code":"engine.teardown.survivors","#,
    r#""message":"teardown of \"flaky-gpu-worker\" left survivors: [\"render:srv-d0gpu7flaky4w1\"]","#,
    r#""instance":"flaky-gpu-worker","#,
    r#""remediation":"these resources still exist and may bill or hold state: [\"render:srv-d0gpu7flaky4w1\"]; re-run `stackless down` to retry, or remove them on the substrate and re-run to verify"}}"#
);

#[expect(
    clippy::too_many_lines,
    reason = "a data table: the demo's instances, one literal each"
)]
fn specs() -> Vec<Spec> {
    vec![
        Spec {
            name: "api-gateway-dev",
            substrate: "local",
            project: "api-gateway",
            definition: "[stack]\nname = \"api-gateway\"\n\n[services.gateway]\nbuild = \"cargo build --release\"\nrun = \"./target/release/gateway --port 8080\"\nhealth = \"http://127.0.0.1:8080/healthz\"\n\n[services.redis]\nimage = \"redis:7-alpine\"\nport = 6379\n",
            source_overrides: "{}",
            state: State::Leased(20 * HOUR),
            lock: None,
            checkpoints: &[
                Checkpoint {
                    step_id: "services.redis.container",
                    resource_kind: "local.container",
                    resource_id: "stackless-api-gateway-dev-redis",
                    payload: r#"{"image":"redis:7-alpine","port":6379}"#,
                },
                Checkpoint {
                    step_id: "services.gateway.process",
                    resource_kind: "local.process",
                    resource_id: "pid:48213",
                    payload: r#"{"pid":48213,"port":8080,"log":"gateway.log"}"#,
                },
            ],
            log: "build: cargo build --release (41.2s)\nstart: gateway --port 8080 (pid 48213)\nhealth: http://127.0.0.1:8080/healthz ok after 1.8s\n",
        },
        Spec {
            name: "checkout-preview",
            substrate: "render",
            project: "checkout",
            definition: "[stack]\nname = \"checkout\"\n\n[services.web]\nsource = \"../checkout-web\"\nbuild = \"npm ci && npm run build\"\nstart = \"npm start\"\nplan = \"starter\"\n",
            source_overrides: r#"{"web":"/home/operator/src/checkout-web-hotfix"}"#,
            state: State::Leased(6 * HOUR),
            lock: None,
            checkpoints: &[Checkpoint {
                step_id: "services.web.render_service",
                resource_kind: "render.service",
                resource_id: "srv-cq81checkout7p",
                payload: r#"{"service_id":"srv-cq81checkout7p","url":"https://checkout-preview.onrender.com","plan":"starter"}"#,
            }],
            log: "render: created service srv-cq81checkout7p (starter)\nrender: deploy dep-cq81k2 live\n",
        },
        Spec {
            name: "docs-site-pr-412",
            substrate: "vercel",
            project: "docs-site",
            definition: "[stack]\nname = \"docs-site\"\n\n[services.site]\nframework = \"nextjs\"\nbuild = \"pnpm build\"\n",
            source_overrides: "{}",
            state: State::Leased(3 * HOUR),
            lock: None,
            checkpoints: &[Checkpoint {
                step_id: "services.site.deployment",
                resource_kind: "vercel.deployment",
                resource_id: "dpl_7Hq2docsPr412",
                payload: r#"{"deployment_id":"dpl_7Hq2docsPr412","url":"https://docs-site-pr-412.vercel.app"}"#,
            }],
            log: "vercel: deployment dpl_7Hq2docsPr412 ready\n",
        },
        Spec {
            name: "billing-sandbox",
            substrate: "render",
            project: "billing",
            definition: "[stack]\nname = \"billing\"\n\n[services.api]\nbuild = \"go build ./cmd/billing\"\nstart = \"./billing serve\"\nplan = \"starter\"\n\n[services.db]\nkind = \"postgres\"\nplan = \"basic-256mb\"\n",
            source_overrides: "{}",
            state: State::Leased(20),
            lock: None,
            checkpoints: &[
                Checkpoint {
                    step_id: "services.db.render_postgres",
                    resource_kind: "render.postgres",
                    resource_id: "dpg-cq7billing0db",
                    payload: r#"{"database_id":"dpg-cq7billing0db","plan":"basic-256mb"}"#,
                },
                Checkpoint {
                    step_id: "services.api.render_service",
                    resource_kind: "render.service",
                    resource_id: "srv-cq7billing0api",
                    payload: r#"{"service_id":"srv-cq7billing0api","url":"https://billing-sandbox.onrender.com"}"#,
                },
            ],
            log: "render: created postgres dpg-cq7billing0db\nrender: created service srv-cq7billing0api\n",
        },
        Spec {
            name: "feature-flags-demo",
            substrate: "vercel",
            project: "feature-flags",
            definition: "[stack]\nname = \"feature-flags\"\n\n[services.dashboard]\nframework = \"vite\"\nbuild = \"npm run build\"\n",
            source_overrides: "{}",
            state: State::Leased(40),
            lock: None,
            checkpoints: &[],
            log: "vercel: deployment dpl_4Ff9flagsDemo ready\n",
        },
        Spec {
            name: "orders-e2e",
            substrate: "local",
            project: "orders",
            definition: "[stack]\nname = \"orders\"\n\n[services.api]\nrun = \"python -m orders.api\"\nport = 8000\n\n[services.worker]\nrun = \"python -m orders.worker\"\n",
            source_overrides: "{}",
            state: State::Leased(-3 * MINUTE),
            lock: None,
            checkpoints: &[],
            log: "start: orders.api (pid 51877)\nstart: orders.worker (pid 51879)\n",
        },
        Spec {
            name: "payments-staging",
            substrate: "render",
            project: "payments",
            definition: "[stack]\nname = \"payments\"\n\n[services.api]\nbuild = \"cargo build --release\"\nstart = \"./target/release/payments\"\nplan = \"standard\"\n",
            source_overrides: "{}",
            state: State::Leased(-15 * MINUTE),
            lock: Some(Lock {
                operation: "up",
                holder: Holder::Live,
                acquired: -90,
            }),
            checkpoints: &[],
            log: "up: redeploying api (lease renews when up completes)\n",
        },
        Spec {
            name: "flaky-gpu-worker",
            substrate: "render",
            project: "gpu-worker",
            definition: "[stack]\nname = \"gpu-worker\"\n\n[services.worker]\nimage = \"ghcr.io/acme/gpu-worker:2.3\"\nplan = \"pro-plus\"\n\n[services.worker.disk]\nsize_gb = 50\n",
            source_overrides: "{}",
            state: State::Leased(-40 * MINUTE),
            lock: None,
            checkpoints: &[Checkpoint {
                step_id: "services.worker.render_service",
                resource_kind: "render.service",
                resource_id: "srv-d0gpu7flaky4w1",
                payload: r#"{"service_id":"srv-d0gpu7flaky4w1","plan":"pro-plus","disk_gb":50}"#,
            }],
            log: "render: created service srv-d0gpu7flaky4w1 (pro-plus, 50 GB disk)\ndown: render API still lists srv-d0gpu7flaky4w1 after delete\n",
        },
        Spec {
            name: "inventory-sync",
            substrate: "local",
            project: "inventory",
            definition: "[stack]\nname = \"inventory\"\n\n[services.sync]\nrun = \"node sync.js\"\nschedule = \"*/5 * * * *\"\n",
            source_overrides: "{}",
            state: State::Leased(14 * HOUR),
            lock: Some(Lock {
                operation: "verify",
                holder: Holder::Stale,
                acquired: -3 * HOUR,
            }),
            checkpoints: &[],
            log: "verify: started (pid 999999)\n",
        },
        Spec {
            name: "ml-feature-store",
            substrate: "render",
            project: "feature-store",
            definition: "[stack]\nname = \"feature-store\"\n\n[services.api]\nimage = \"ghcr.io/acme/feast:0.40\"\nplan = \"standard\"\n\n[services.redis]\nkind = \"keyvalue\"\n",
            source_overrides: "{}",
            state: State::Leased(5 * HOUR),
            lock: Some(Lock {
                operation: "up",
                holder: Holder::Foreign,
                acquired: -6 * MINUTE,
            }),
            checkpoints: &[],
            log: "up: started on ci-runner-7\n",
        },
        Spec {
            name: "legacy-auth-spike",
            substrate: "local",
            project: "auth-spike",
            definition: "[stack]\nname = \"auth-spike\"\n\n[services.auth]\nrun = \"./bin/auth --dev\"\nport = 9090\n",
            source_overrides: "{}",
            state: State::Tombstoned(-8 * DAY),
            lock: None,
            checkpoints: &[],
            log: "start: auth --dev (pid 30211)\ndown: stopped pid 30211; verified nothing remains\n",
        },
        Spec {
            name: "marketing-preview",
            substrate: "vercel",
            project: "marketing",
            definition: "[stack]\nname = \"marketing\"\n\n[services.site]\nframework = \"astro\"\nbuild = \"npm run build\"\n",
            source_overrides: "{}",
            state: State::Tombstoned(-2 * DAY),
            lock: None,
            checkpoints: &[],
            log: "vercel: deployment dpl_2Mk8marketing ready\ndown: deleted dpl_2Mk8marketing; verified\n",
        },
    ]
}

/// Create a fresh demo store at `path` with the stackless v4 schema and the
/// seeded mix described in the module docs, times relative to `now` (unix
/// seconds). Also creates `<state_dir>/logs/<name>/` with a small log file
/// for every instance, and service logs for the local ones
/// ([`super::logs::seed`]).
///
/// # Errors
/// `path` already exists (a demo never writes into an existing store);
/// [`crate::store::StoreError`] creating or writing the store; I/O errors
/// creating the logs.
pub fn seed(path: &Path, now: i64, holder: &LiveHolder) -> Result<()> {
    if path.exists() {
        bail!(
            "{} already exists: the demo only seeds a fresh store",
            path.display()
        );
    }
    let store = Store::open_or_create(path)?;
    let state_dir = store.state_dir();
    let mut rows = Vec::new();
    for spec in specs() {
        rows.push(seed_row(&spec, now, holder)?);
        let logs = state_dir.join("logs").join(spec.name);
        std::fs::create_dir_all(&logs)?;
        std::fs::write(logs.join("stackless.log"), spec.log)?;
    }
    super::logs::seed(&state_dir, now)?;
    store.seed(rows)?;
    Ok(())
}

/// The rows of one seeded instance, times relative to `now`.
fn seed_row(spec: &Spec, now: i64, holder: &LiveHolder) -> Result<SeedInstance> {
    let home = "/home/operator/src";
    let duration = lease_duration(spec.substrate);
    let (status, tombstoned_at, created_at) = match spec.state {
        // Created one full lease before it expires (never renewed), but
        // at least a little while ago.
        State::Leased(offset) => (Status::Active, None, now + offset - duration),
        State::Tombstoned(offset) => (Status::Tombstoned, Some(now + offset), now + offset - DAY),
    };
    let lease = match spec.state {
        State::Leased(offset) => Some(Lease {
            duration_secs: duration,
            expires_at: now + offset,
        }),
        State::Tombstoned(_) => None,
    };
    let lock = match &spec.lock {
        Some(lock) => Some(op_lock(lock, now, holder)?),
        None => None,
    };
    let checkpoints = spec
        .checkpoints
        .iter()
        .enumerate()
        .map(|(index, checkpoint)| SeedCheckpoint {
            step_id: checkpoint.step_id.to_owned(),
            resource_kind: checkpoint.resource_kind.to_owned(),
            resource_id: checkpoint.resource_id.to_owned(),
            payload: checkpoint.payload.to_owned(),
            recorded_at: created_at + 30 * i64::try_from(index + 1).unwrap_or(1),
        })
        .collect();
    Ok(SeedInstance {
        name: spec.name.to_owned(),
        substrate: spec.substrate.to_owned(),
        status,
        definition: spec.definition.to_owned(),
        source_overrides: spec.source_overrides.to_owned(),
        created_at,
        tombstoned_at,
        definition_dir: format!("{home}/{}", spec.project),
        lease,
        lock,
        // Two failed reaps already, the next one due in 12 s.
        attempt: (spec.name == "flaky-gpu-worker").then(|| SeedAttempt {
            attempts: 2,
            last_error: FLAKY_LAST_ERROR.to_owned(),
            next_retry_at: now + 12,
        }),
        checkpoints,
    })
}

/// The `op_locks` row of a seeded lock, its holder named as `lock.holder`
/// says.
fn op_lock(lock: &Lock, now: i64, holder: &LiveHolder) -> Result<OpLock> {
    let (pid, start_time, host) = match lock.holder {
        Holder::Live => (
            i64::from(holder.pid),
            i64::try_from(holder.start_time)
                .map_err(|_| eyre!("holder start time out of range"))?,
            holder.host.clone(),
        ),
        Holder::Stale => (
            i64::from(STALE_PID),
            now - 3 * HOUR - 4,
            holder.host.clone(),
        ),
        Holder::Foreign => (23_817, now - 7 * MINUTE, FOREIGN_HOST.to_owned()),
    };
    Ok(OpLock {
        operation: lock.operation.to_owned(),
        holder_pid: pid,
        holder_start_time: start_time,
        acquired_at: now + lock.acquired,
        holder_host: Some(host),
        claim_id: None,
    })
}
