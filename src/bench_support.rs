//! Load-test support, shared by `examples/gen_store.rs` and `benches/scale.rs`:
//! a seeded generator of large stackless v4 stores with a realistic mix of
//! rows. Not part of the console: compiled only with the `bench-support`
//! feature, which the benches, examples and tests turn on (Cargo.toml);
//! nothing in `src/` calls it.
//!
//! The mix, for `N` instances (exact counts, positions chosen by the seed):
//!
//! | share | rows |
//! |---|---|
//! | 30 % | tombstoned 1 min to 10 days ago (about 30 % of those are past the 7-day GC window), no lease |
//! | 5 % | active with an operation lock (`up`/`verify`/`down`); half on this host with a pid that cannot exist (above Linux's `PID_MAX_LIMIT`, so every probe says "pid gone"), half on foreign hosts |
//! | 2 % | active, lease expired, a `reap_attempts` row (1 to 8 attempts; retry from 1 min ago to 1 h ahead; 60 % one-line envelopes, 40 % a lone `}` as the stackless daemon stores it) |
//! | the rest | active; 25 % of active leases expired up to 2 days ago, 75 % running up to their full duration (local 24 h, render/vercel 8 h) |
//!
//! Every instance has 2 to 5 `checkpoints` rows (source, process with a JSON
//! payload, health action) and a ~270-byte TOML definition, like the rows the
//! real stackless writes (tests/fixtures/stackless-real-v4.db). Names are
//! DNS-safe, at most 24 characters (`{project}-{role}-{base36 index}`), and
//! are inserted in random name order, as a store filled over time is.

use std::path::Path;

use crate::model::{Lease, OpLock, Status};
use crate::store::Store;
use crate::store::seed::{SeedAttempt, SeedCheckpoint, SeedInstance};

/// The fixed "now" the benches use (the fixtures' capture time).
pub const BENCH_NOW: i64 = 1_795_960_686;

/// First pid used for local lock holders: above Linux's `PID_MAX_LIMIT`
/// (4,194,304), so no process can ever have it and liveness is
/// deterministic ("stale: pid gone") on every machine.
pub const IMPOSSIBLE_PID_BASE: i64 = 4_194_305;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenSpec {
    /// Number of instances.
    pub instances: usize,
    /// PRNG seed: the same spec writes the same rows.
    pub seed: u64,
    /// The unix second leases and backoffs are spread around.
    pub now: i64,
    /// The hostname written as `holder_host` for local locks (pass
    /// `sysinfo::System::host_name()` so the console probes them).
    pub host: String,
}

/// What was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GenSummary {
    /// Instances written.
    pub instances: usize,
    /// Active instances.
    pub active: usize,
    /// Active instances whose lease has expired at `now`.
    pub expired: usize,
    /// Tombstoned instances.
    pub tombstoned: usize,
    /// Tombstones past the 7-day GC window at `now`.
    pub gc_due: usize,
    /// Instances with an `op_locks` row.
    pub locked: usize,
    /// Of those, locks on `host` (probed by the console).
    pub locked_local: usize,
    /// `reap_attempts` rows.
    pub backoffs: usize,
    /// `checkpoints` rows.
    pub checkpoints: usize,
}

/// A tiny seeded PRNG (SplitMix64): reproducible everywhere, no crate.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: bias is negligible for the ranges used here.
        u64::try_from((u128::from(self.next_u64()) * u128::from(n)) >> 64).unwrap_or(0)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.abs_diff(lo).saturating_add(1);
        lo.saturating_add_unsigned(self.below(span))
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        let len = u64::try_from(items.len()).unwrap_or(u64::MAX);
        &items[usize::try_from(self.below(len)).unwrap_or(0)]
    }
}

const PROJECTS: [&str; 16] = [
    "checkout",
    "payments",
    "search",
    "billing",
    "inventory",
    "auth",
    "docs",
    "ml-features",
    "orders",
    "notify",
    "gateway",
    "analytics",
    "media",
    "pricing",
    "catalog",
    "reports",
];
const ROLES: [&str; 8] = [
    "api", "web", "worker", "pr", "e2e", "preview", "agent", "sandbox",
];
const FOREIGN_HOSTS: [&str; 6] = [
    "ci-runner-1",
    "ci-runner-2",
    "ci-runner-7",
    "agent-node-03",
    "agent-node-11",
    "build-box",
];
const OPERATIONS: [&str; 4] = ["up", "up", "verify", "down"];
const MINUTE: i64 = 60;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// `i` in base 36, at least 4 digits.
fn base36(mut i: usize) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while i > 0 || out.len() < 4 {
        out.push(DIGITS[i % 36]);
        i /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tombstoned,
    Locked,
    BackingOff,
    Plain,
}

fn definition(name: &str, project: &str) -> String {
    format!(
        "[stack]\nname = \"{project}\"\n\n[services.web]\nsource = {{ repo = \"file:///home/operator/stacks/{project}-repo\", ref = \"main\" }}\nroot_origin = true\nhealth = {{ path = \"/\", contains = \"{name}\" }}\n\n  [services.web.local]\n  run = \"/usr/bin/python3 -m http.server $PORT --bind 127.0.0.1\"\n"
    )
}

fn envelope(name: &str, attempts: i64) -> String {
    format!(
        r#"{{"ok":false,"error":{{"schema_version":1,"code":"engine.teardown.survivors","message":"teardown of \"{name}\" left survivors: [\"render:srv-{attempts:02}{name}\"]","instance":"{name}","remediation":"these resources still exist and may bill or hold state; re-run `stackless down` to retry, or remove them on the substrate and re-run to verify"}}}}"#
    )
}

/// Write a fresh v4 store at `path` (which must not exist) following `spec`.
/// One transaction; the WAL is checkpointed into the file at the end.
///
/// # Errors
/// The path exists, or any `SQLite` error.
pub fn generate(
    path: &Path,
    spec: &GenSpec,
) -> Result<GenSummary, Box<dyn std::error::Error + Send + Sync>> {
    if path.exists() {
        return Err(format!("{} exists; remove it first", path.display()).into());
    }
    let store = Store::open_or_create(path)?;
    let n = spec.instances;
    let mut rng = Rng::new(spec.seed);
    let kinds = shuffled_kinds(n, &mut rng);
    let mut summary = GenSummary {
        instances: n,
        ..GenSummary::default()
    };
    // Generated one at a time as they are written: a million instances are
    // never all in memory.
    let rows = kinds
        .iter()
        .copied()
        .enumerate()
        .map(|(i, kind)| instance(i, kind, spec, &mut rng, &mut summary));
    store.seed(rows)?;
    store.checkpoint_seeded()?;
    Ok(summary)
}

/// Each instance's kind: exact counts, positions shuffled (Fisher-Yates).
fn shuffled_kinds(n: usize, rng: &mut Rng) -> Vec<Kind> {
    let tombstoned = n * 30 / 100;
    let locked = n * 5 / 100;
    let backing_off = n * 2 / 100;
    let mut kinds: Vec<Kind> = (0..n)
        .map(|j| {
            if j < tombstoned {
                Kind::Tombstoned
            } else if j < tombstoned + locked {
                Kind::Locked
            } else if j < tombstoned + locked + backing_off {
                Kind::BackingOff
            } else {
                Kind::Plain
            }
        })
        .collect();
    for i in (1..n).rev() {
        let j = usize::try_from(rng.below(u64::try_from(i + 1).unwrap_or(1))).unwrap_or(0);
        kinds.swap(i, j);
    }
    kinds
}

/// The `i`th instance, of `kind`, and its rows (counted in `summary`).
/// The draws from `rng` are in a fixed order: a seed always gives the same
/// store.
fn instance(
    i: usize,
    kind: Kind,
    spec: &GenSpec,
    rng: &mut Rng,
    summary: &mut GenSummary,
) -> SeedInstance {
    let now = spec.now;
    let project = *rng.pick(&PROJECTS);
    let role = *rng.pick(&ROLES);
    let name = format!("{project}-{role}-{}", base36(i));
    let substrate = match rng.below(10) {
        0..=4 => "local",
        5..=7 => "render",
        _ => "vercel",
    };
    let duration = match (substrate, rng.below(10)) {
        (_, 0) => HOUR,
        (_, 1) => 2 * HOUR,
        ("local", _) => DAY,
        _ => 8 * HOUR,
    };
    let overrides = if rng.chance(10) {
        format!(r#"{{"web":"/home/operator/stacks/pin-{name}"}}"#)
    } else {
        "{}".to_owned()
    };
    let (status, tombstoned_at, expires_at) = if kind == Kind::Tombstoned {
        let at = now - rng.range(MINUTE, 10 * DAY);
        if at <= now - 7 * DAY {
            summary.gc_due += 1;
        }
        summary.tombstoned += 1;
        (Status::Tombstoned, Some(at), None)
    } else {
        let expired = kind == Kind::BackingOff || rng.chance(25);
        let expires = if expired {
            now - rng.range(1, 2 * DAY)
        } else {
            now + rng.range(1, duration)
        };
        summary.active += 1;
        if expired {
            summary.expired += 1;
        }
        (Status::Active, None, Some(expires))
    };
    let created_at = match expires_at {
        Some(e) => e - duration - rng.range(0, 3 * DAY),
        None => tombstoned_at.unwrap_or(now) - rng.range(HOUR, 3 * DAY),
    };
    let lock = (kind == Kind::Locked).then(|| op_lock(i, spec, rng, summary));
    let attempt = (kind == Kind::BackingOff).then(|| attempt(&name, now, rng, summary));
    let checkpoints = checkpoints(&name, created_at, rng, summary);
    SeedInstance {
        definition: definition(&name, project),
        name,
        substrate: substrate.to_owned(),
        status,
        source_overrides: overrides,
        created_at,
        tombstoned_at,
        definition_dir: format!("/home/operator/stacks/{project}"),
        lease: expires_at.map(|expires_at| Lease {
            duration_secs: duration,
            expires_at,
        }),
        lock,
        attempt,
        checkpoints,
    }
}

/// A locked instance's lock: half on this host with an impossible pid,
/// half on a foreign host.
fn op_lock(i: usize, spec: &GenSpec, rng: &mut Rng, summary: &mut GenSummary) -> OpLock {
    let local = rng.chance(50);
    let host = if local {
        spec.host.clone()
    } else {
        (*rng.pick(&FOREIGN_HOSTS)).to_owned()
    };
    let pid = if local {
        IMPOSSIBLE_PID_BASE + i64::try_from(i).unwrap_or(0)
    } else {
        rng.range(300, 32_000)
    };
    let acquired = spec.now - rng.range(1, 2 * HOUR);
    let operation = *rng.pick(&OPERATIONS);
    let started = acquired - rng.range(0, 5);
    summary.locked += 1;
    if local {
        summary.locked_local += 1;
    }
    OpLock {
        operation: operation.to_owned(),
        holder_pid: pid,
        holder_start_time: started,
        acquired_at: acquired,
        holder_host: Some(host),
        claim_id: None,
    }
}

/// A backing-off instance's `reap_attempts` row.
fn attempt(name: &str, now: i64, rng: &mut Rng, summary: &mut GenSummary) -> SeedAttempt {
    let attempts = rng.range(1, 8);
    let backoff = crate::reaper::decision::backoff_secs(attempts);
    let last_error = if rng.chance(60) {
        envelope(name, attempts)
    } else {
        "}".to_owned()
    };
    let next_retry_at = now + rng.range(-MINUTE, backoff);
    summary.backoffs += 1;
    SeedAttempt {
        attempts,
        last_error,
        next_retry_at,
    }
}

/// 2 to 5 checkpoints: source, process, health action, more processes.
fn checkpoints(
    name: &str,
    created_at: i64,
    rng: &mut Rng,
    summary: &mut GenSummary,
) -> Vec<SeedCheckpoint> {
    let steps = rng.range(2, 5);
    let pid = rng.range(300, 32_000);
    let mut rows = Vec::new();
    for step in 0..steps {
        let recorded = created_at + step;
        let (step_id, kind, id, payload) = match step {
            0 => (
                "materialize:web".to_owned(),
                "source",
                format!("/home/operator/.local/state/stackless/sources/{name}/web"),
                format!(
                    r#"{{"path":"/home/operator/.local/state/stackless/sources/{name}/web","overridden":false,"commit":"{:016x}{:016x}"}}"#,
                    rng.next_u64(),
                    rng.next_u64()
                ),
            ),
            1 => (
                "start:web".to_owned(),
                "process",
                pid.to_string(),
                format!(
                    r#"{{"pid":{pid},"start_time":{created_at},"port":{},"hosts":["web.{name}.localhost","{name}.localhost"],"log":"/home/operator/.local/state/stackless/logs/{name}/web.log"}}"#,
                    rng.range(20_000, 60_000)
                ),
            ),
            2 => (
                "health:web".to_owned(),
                "action",
                "health:web".to_owned(),
                "{}".to_owned(),
            ),
            s => (
                format!("start:worker-{s}"),
                "process",
                (pid + s).to_string(),
                format!(r#"{{"pid":{},"start_time":{created_at}}}"#, pid + s),
            ),
        };
        rows.push(SeedCheckpoint {
            step_id,
            resource_kind: kind.to_owned(),
            resource_id: id,
            payload,
            recorded_at: recorded,
        });
        summary.checkpoints += 1;
    }
    rows
}

/// The `AppConfig` the benches draw with.
#[must_use]
pub fn app_config(store_label: &str) -> crate::ui::AppConfig {
    crate::ui::AppConfig {
        store_label: store_label.to_owned(),
        reaper: crate::ui::ReaperMode::Off("--no-reaper".to_owned()),
        helper: crate::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Instance, Lease, OpLock, Status};
    use crate::store::Access;
    use crate::store::probe::FixedProbe;

    /// `snapshot --json` and `snapshot` stream their output: byte for byte
    /// what the whole report gives, on a generated store (locks, backoffs,
    /// expired leases, tombstones).
    #[test]
    fn streamed_report_is_the_whole_report() {
        use crate::headless::report;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let spec = GenSpec {
            instances: 300,
            seed: 3,
            now: BENCH_NOW,
            host: "vm".into(),
        };
        generate(&path, &spec).unwrap();
        let mut store = Store::open(&path, Access::ReadOnly).unwrap();
        let mut probe = FixedProbe {
            host: Some("vm".into()),
            processes: Vec::new(),
        };
        let snapshot = store.snapshot(&mut probe).unwrap();
        let services = report::Services::new();
        let whole = report::build_with(&snapshot, BENCH_NOW, "s.db", &services, None);
        let mut json = Vec::new();
        report::write_json(
            &mut json,
            &snapshot,
            BENCH_NOW,
            "s.db",
            &mut |i| Ok(services.get(&i.name).cloned().unwrap_or_default()),
            None,
        )
        .unwrap();
        let expected = serde_json::to_string_pretty(&whole).unwrap() + "\n";
        assert_eq!(String::from_utf8(json).unwrap(), expected);
        let mut table = Vec::new();
        let utc = jiff::tz::TimeZone::UTC;
        report::write_table(
            &mut table, &snapshot, BENCH_NOW, "s.db", &services, &utc, None,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(table).unwrap(),
            report::table(&whole, &utc)
        );
        assert!(whole.instances.iter().any(|i| i.reaper.is_some()));
    }

    /// The snapshot's table scans and hash join give exactly the rows the
    /// SQL `LEFT JOIN ... ORDER BY name` gives, on a generated store.
    #[test]
    fn snapshot_matches_the_sql_join() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let spec = GenSpec {
            instances: 400,
            seed: 9,
            now: BENCH_NOW,
            host: "vm".into(),
        };
        let summary = generate(&path, &spec).unwrap();
        let mut store = Store::open(&path, Access::ReadOnly).unwrap();
        let mut probe = FixedProbe {
            host: Some("vm".into()),
            processes: Vec::new(),
        };
        let snapshot = store.snapshot(&mut probe).unwrap();
        let mut stmt = store
            .connection()
            .prepare(
                "SELECT i.name, i.substrate, i.status, i.created_at, i.tombstoned_at,
                        l.duration_secs, l.expires_at,
                        k.operation, k.holder_pid, k.holder_start_time, k.acquired_at,
                        k.holder_host
                 FROM instances i
                 LEFT JOIN leases l ON l.instance = i.name
                 LEFT JOIN op_locks k ON k.instance = i.name
                 ORDER BY i.name",
            )
            .unwrap();
        let expected: Vec<Instance> = stmt
            .query_map([], |r| {
                let lease = match (r.get(5)?, r.get(6)?) {
                    (Some(duration_secs), Some(expires_at)) => Some(Lease {
                        duration_secs,
                        expires_at,
                    }),
                    _ => None,
                };
                let lock = match r.get::<_, Option<String>>(7)? {
                    Some(operation) => Some(OpLock {
                        operation,
                        holder_pid: r.get(8)?,
                        holder_start_time: r.get(9)?,
                        acquired_at: r.get(10)?,
                        holder_host: r.get(11)?,
                        claim_id: None,
                    }),
                    None => None,
                };
                Ok(Instance {
                    name: r.get(0)?,
                    substrate: r.get::<_, String>(1)?.into(),
                    status: Status::parse(&r.get::<_, String>(2)?),
                    created_at: r.get(3)?,
                    tombstoned_at: r.get(4)?,
                    lease,
                    lock: lock.map(Box::new),
                    anomalies: Default::default(),
                    dirty: None,
                    birth: None,
                })
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(snapshot.instances.len(), summary.instances);
        assert_eq!(snapshot.instances, crate::model::Instances::from(expected));
        assert_eq!(snapshot.liveness.len(), summary.locked);
        assert_eq!(snapshot.reap_attempts.len(), summary.backoffs);
        assert!(
            snapshot
                .reap_attempts
                .windows(2)
                .all(|w| w[0].instance < w[1].instance)
        );
    }

    #[test]
    fn base36_pads_and_counts() {
        assert_eq!(base36(0), "0000");
        assert_eq!(base36(35), "000z");
        assert_eq!(base36(36 * 36 * 36 * 36), "10000");
    }

    #[test]
    fn rng_is_seeded() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        let mut r = Rng::new(1);
        for _ in 0..1000 {
            let v = r.range(-5, 5);
            assert!((-5..=5).contains(&v));
        }
    }
}
