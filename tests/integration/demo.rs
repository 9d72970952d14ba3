//! The demo: the seeded store, the demo teardown and the demo helper.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::OptionalExtension;
use stackless_tui::demo::down::{self, DownOutcome};
use stackless_tui::demo::helper;
use stackless_tui::demo::{LiveHolder, seed};
use stackless_tui::model::envelope::{self, Exit};
use stackless_tui::model::{Liveness, Snapshot, Status};
use stackless_tui::reaper::decision::{Decision, GcDecision, TOMBSTONE_GC_WINDOW_SECS, plan};
use stackless_tui::store::probe::{FixedProbe, HostProbe, SysinfoProbe};
use stackless_tui::store::{Access, Store};
use succession::{Occupancy, Run};

const NOW: i64 = 1_795_960_686;

fn holder() -> LiveHolder {
    LiveHolder {
        pid: 4242,
        start_time: 1_795_950_000,
        host: "demo-box".into(),
    }
}

fn probe(holder: &LiveHolder) -> FixedProbe {
    FixedProbe {
        host: Some(holder.host.clone()),
        processes: vec![(holder.pid, holder.start_time)],
    }
}

fn seeded(holder: &LiveHolder) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    seed(&path, NOW, holder).unwrap();
    (dir, path)
}

fn snapshot(path: &Path, probe: &mut dyn HostProbe) -> Snapshot {
    let mut store = Store::open(path, Access::ReadOnly).unwrap();
    store.snapshot(probe).unwrap()
}

/// `(status, tombstoned_at, has lease, has reap_attempts row, has lock)`.
fn rows(path: &Path, name: &str) -> Option<(String, Option<i64>, bool, bool, bool)> {
    let store = Store::open(path, Access::ReadOnly).unwrap();
    let conn = store.connection();
    let head: Option<(String, Option<i64>)> = conn
        .query_row(
            "SELECT status, tombstoned_at FROM instances WHERE name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .unwrap();
    let has = |table: &str| -> bool {
        conn.query_row(
            &format!("SELECT count(*) FROM {table} WHERE instance = ?1"),
            [name],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            > 0
    };
    head.map(|(status, at)| {
        (
            status,
            at,
            has("leases"),
            has("reap_attempts"),
            has("op_locks"),
        )
    })
}

const ALL: [&str; 12] = [
    "api-gateway-dev",
    "billing-sandbox",
    "checkout-preview",
    "docs-site-pr-412",
    "feature-flags-demo",
    "flaky-gpu-worker",
    "inventory-sync",
    "legacy-auth-spike",
    "marketing-preview",
    "ml-feature-store",
    "orders-e2e",
    "payments-staging",
];

#[test]
fn seed_creates_the_documented_mix() {
    let h = holder();
    let (dir, path) = seeded(&h);
    let snap = snapshot(&path, &mut probe(&h));

    assert_eq!(snap.generation.user_version, 4);
    let names: Vec<&str> = snap.instances.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ALL);
    assert!(snap.instances.iter().all(|i| i.anomalies.is_empty()));
    assert!(
        names
            .iter()
            .all(|n| stackless_tui::model::name::is_dns_safe(n))
    );

    // Lock liveness: exactly three locks, one of each kind.
    assert_eq!(snap.liveness.len(), 3);
    assert_eq!(
        snap.lock_liveness("payments-staging"),
        Some(&Liveness::Alive)
    );
    let locked = snap
        .instance("payments-staging")
        .unwrap()
        .lock
        .clone()
        .unwrap();
    assert_eq!(locked.operation, "up");
    assert_eq!(locked.holder_pid, 4242);
    assert_eq!(locked.holder_start_time, 1_795_950_000);
    assert_eq!(locked.holder_host.as_deref(), Some("demo-box"));
    assert_eq!(
        snap.lock_liveness("inventory-sync"),
        Some(&Liveness::StalePidGone)
    );
    assert_eq!(
        snap.lock_liveness("ml-feature-store"),
        Some(&Liveness::ForeignHost("ci-runner-7".into()))
    );

    // Leases, relative to NOW.
    let left = |name: &str| snap.instance(name).unwrap().lease.unwrap().expires_at - NOW;
    assert_eq!(left("api-gateway-dev"), 20 * 3600);
    assert_eq!(left("checkout-preview"), 6 * 3600);
    assert_eq!(left("docs-site-pr-412"), 3 * 3600);
    assert_eq!(left("billing-sandbox"), 20);
    assert_eq!(left("feature-flags-demo"), 40);
    assert_eq!(left("orders-e2e"), -180);
    assert_eq!(left("flaky-gpu-worker"), -40 * 60);
    assert_eq!(
        snap.instance("api-gateway-dev")
            .unwrap()
            .lease
            .unwrap()
            .duration_secs,
        24 * 3600
    );
    assert_eq!(
        snap.instance("checkout-preview")
            .unwrap()
            .lease
            .unwrap()
            .duration_secs,
        8 * 3600
    );

    // The flaky instance's backoff row.
    assert_eq!(snap.reap_attempts.len(), 1);
    let flaky = snap.reap_attempt("flaky-gpu-worker").unwrap();
    assert_eq!(flaky.attempts, 2);
    assert_eq!(flaky.next_retry_at, NOW + 12);
    assert!(!flaky.last_error.contains('\n'));
    let reason = envelope::parse_error(&flaky.last_error).unwrap();
    assert_eq!(reason.code, "engine.teardown.survivors");
    assert!(reason.remediation.is_some());

    // Tombstones: no lease, the old one with its logs dir.
    let old = snap.instance("legacy-auth-spike").unwrap();
    assert_eq!(old.status, Status::Tombstoned);
    assert_eq!(old.tombstoned_at, Some(NOW - 8 * 86400));
    assert_eq!(old.lease, None);
    let recent = snap.instance("marketing-preview").unwrap();
    assert_eq!(recent.status, Status::Tombstoned);
    assert_eq!(recent.tombstoned_at, Some(NOW - 2 * 86400));
    for name in ALL {
        let log = dir.path().join("logs").join(name).join("stackless.log");
        assert!(log.is_file(), "{} missing", log.display());
    }

    // What the reaper's first tick decides.
    let first = plan(&snap, NOW, true);
    assert_eq!(
        first.reaps,
        vec![
            (
                "flaky-gpu-worker".to_owned(),
                Decision::WaitBackoff { until: NOW + 12 }
            ),
            ("orders-e2e".to_owned(), Decision::Reap),
            (
                "payments-staging".to_owned(),
                Decision::SkipLocked(Liveness::Alive)
            ),
        ]
    );
    assert_eq!(
        first.gc,
        vec![("legacy-auth-spike".to_owned(), GcDecision::Collect)]
    );
}

#[test]
fn seed_stores_definitions_overrides_and_checkpoints() {
    let h = holder();
    let (_dir, path) = seeded(&h);
    let store = Store::open(&path, Access::ReadOnly).unwrap();
    let conn = store.connection();
    let (definition, overrides, definition_dir): (String, String, String) = conn
        .query_row(
            "SELECT definition, source_overrides, definition_dir FROM instances
             WHERE name = 'checkout-preview'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(definition.starts_with("[stack]\nname = \"checkout\"\n"));
    let pins: serde_json::Value = serde_json::from_str(&overrides).unwrap();
    assert_eq!(pins["web"], "/home/operator/src/checkout-web-hotfix");
    assert_eq!(definition_dir, "/home/operator/src/checkout");
    let unpinned: i64 = conn
        .query_row(
            "SELECT count(*) FROM instances WHERE source_overrides = '{}'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unpinned, 11);
    let payloads: Vec<String> = conn
        .prepare("SELECT payload FROM checkpoints ORDER BY instance, step_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(payloads.len(), 7);
    for payload in payloads {
        let value: serde_json::Value = serde_json::from_str(&payload).unwrap();
        assert!(value.is_object());
    }
}

#[test]
fn seed_refuses_an_existing_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, b"precious").unwrap();
    let error = seed(&path, NOW, &holder()).unwrap_err();
    assert!(error.to_string().contains("already exists"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
}

/// A minute of a reaper ticking every 5 s over the demo, with the demo
/// teardown: what a newcomer sees.
#[test]
fn first_minute_reaps_backs_off_and_collects() {
    let h = holder();
    let (dir, path) = seeded(&h);
    let mut events = Vec::new();
    for tick in (0..=60).step_by(5) {
        let now = NOW + tick;
        let mut store = Store::open(&path, Access::ReadWrite).unwrap();
        let snap = store.snapshot(&mut probe(&h)).unwrap();
        let pass = plan(&snap, now, true);
        for (name, decision) in pass.reaps {
            if decision != Decision::Reap {
                continue;
            }
            let outcome = down::tear_down_with(&path, &name, now, &mut probe(&h));
            if outcome.exit == 0 {
                store.clear_reap_failure(&name).unwrap();
                events.push(format!("+{tick} reaped {name}"));
            } else {
                let reason = envelope::failure_reason(&outcome.stdout, &Exit::Code(1));
                let row = store.record_reap_failure(&name, &reason, now).unwrap();
                events.push(format!(
                    "+{tick} failed {name} #{} retry +{}",
                    row.attempts,
                    row.next_retry_at - NOW
                ));
            }
        }
        for (name, decision) in pass.gc {
            assert_eq!(decision, GcDecision::Collect);
            std::fs::remove_dir_all(dir.path().join("logs").join(&name)).unwrap();
            assert!(
                store
                    .delete_tombstone(&name, now - TOMBSTONE_GC_WINDOW_SECS)
                    .unwrap()
            );
            events.push(format!("+{tick} collected {name}"));
        }
    }
    assert_eq!(
        events,
        [
            "+0 reaped orders-e2e",
            "+0 collected legacy-auth-spike",
            "+15 failed flaky-gpu-worker #3 retry +255",
            "+20 reaped billing-sandbox",
            "+40 reaped feature-flags-demo",
        ]
    );
    let end = snapshot(&path, &mut probe(&h));
    assert_eq!(end.instances.len(), 11);
    // What README's set-up paragraph promises, in the same numbers.
    let readme = include_str!("../../README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(ALL.len(), 12);
    assert!(
        readme.contains(
            "with 12 instances on local/render/vercel (one of them an 8-day-old tombstone that \
             the first reaper pass garbage-collects, so the Instances pane then lists 11)"
        ),
        "README's demo paragraph"
    );
    assert!(!dir.path().join("logs/legacy-auth-spike").exists());
    assert_eq!(
        end.instance("payments-staging").unwrap().status,
        Status::Active
    );
    let flaky = end.reap_attempt("flaky-gpu-worker").unwrap();
    assert_eq!(
        envelope::parse_error(&flaky.last_error).unwrap().code,
        "engine.teardown.survivors"
    );
}

#[test]
fn down_tombstones_and_deletes_the_lease() {
    let h = holder();
    let (dir, path) = seeded(&h);
    assert_eq!(
        rows(&path, "billing-sandbox"),
        Some(("active".into(), None, true, false, false))
    );
    let outcome = down::tear_down_with(&path, "billing-sandbox", NOW + 21, &mut probe(&h));
    assert_eq!(
        outcome,
        DownOutcome {
            exit: 0,
            stdout: String::new(),
            stderr: "tore down billing-sandbox\n".into(),
        }
    );
    assert_eq!(
        rows(&path, "billing-sandbox"),
        Some(("tombstoned".into(), Some(NOW + 21), false, false, false))
    );
    let log =
        std::fs::read_to_string(dir.path().join("logs/billing-sandbox/stackless.log")).unwrap();
    assert!(log.ends_with("down: torn down; verified nothing remains\n"));
}

#[test]
fn down_clears_reap_attempts_and_a_stale_lock() {
    let h = holder();
    let (_dir, path) = seeded(&h);
    {
        let store = Store::open(&path, Access::ReadWrite).unwrap();
        store
            .connection()
            .execute(
                "INSERT INTO reap_attempts (instance, attempts, last_error, next_retry_at)
                 VALUES ('inventory-sync', 1, 'down exited with status 1', ?1)",
                [NOW - 5],
            )
            .unwrap();
    }
    assert_eq!(
        rows(&path, "inventory-sync"),
        Some(("active".into(), None, true, true, true))
    );
    let outcome = down::tear_down_with(&path, "inventory-sync", NOW, &mut probe(&h));
    assert_eq!(outcome.exit, 0, "{outcome:?}");
    assert_eq!(outcome.stdout, "");
    assert_eq!(
        rows(&path, "inventory-sync"),
        Some(("tombstoned".into(), Some(NOW), false, false, false))
    );
}

#[test]
fn down_of_a_flaky_instance_fails_with_a_pretty_envelope() {
    let h = holder();
    let (_dir, path) = seeded(&h);
    let outcome = down::tear_down_with(&path, "flaky-gpu-worker", NOW, &mut probe(&h));
    assert_eq!(outcome.exit, 1);
    assert!(outcome.stdout.lines().count() >= 8, "{}", outcome.stdout);
    assert_eq!(outcome.stdout.lines().last(), Some("}"));
    let error = envelope::parse_error(&outcome.stdout).unwrap();
    assert_eq!(error.code, "engine.teardown.survivors");
    assert_eq!(
        error.message,
        "teardown of \"flaky-gpu-worker\" left survivors: [\"render:srv-d0gpu7flaky4w1\"]"
    );
    assert!(
        error
            .remediation
            .unwrap()
            .contains("re-run `stackless down`")
    );
    assert!(outcome.stderr.starts_with("error: teardown of"));
    // Nothing changed: the reaper records the failure, not `down`.
    assert_eq!(
        rows(&path, "flaky-gpu-worker"),
        Some(("active".into(), None, true, true, false))
    );
}

#[test]
fn down_of_a_tombstone_succeeds_and_changes_nothing() {
    let h = holder();
    let (_dir, path) = seeded(&h);
    let before = rows(&path, "marketing-preview");
    assert_eq!(
        before,
        Some((
            "tombstoned".into(),
            Some(NOW - 2 * 86400),
            false,
            false,
            false
        ))
    );
    let outcome = down::tear_down_with(&path, "marketing-preview", NOW, &mut probe(&h));
    assert_eq!(outcome.exit, 0);
    assert_eq!(outcome.stdout, "");
    assert_eq!(rows(&path, "marketing-preview"), before);
}

#[test]
fn down_refuses_a_lock_held_by_a_live_process() {
    // The real probe and this very process as the holder.
    let mut real = SysinfoProbe::new();
    let host = real.host_name().expect("hostname").to_owned();
    let pid = std::process::id();
    let start_time = real.start_time(pid).expect("own start time");
    let me = LiveHolder {
        pid,
        start_time,
        host,
    };
    let (_dir, path) = seeded(&me);
    let outcome = down::tear_down(&path, "payments-staging", NOW);
    assert_eq!(outcome.exit, 1);
    let error = envelope::parse_error(&outcome.stdout).unwrap();
    assert_eq!(error.code, envelope::LOCK_HELD_CODE);
    assert_eq!(
        rows(&path, "payments-staging"),
        Some(("active".into(), None, true, false, true))
    );

    // A foreign host is held too, whatever the local process table says.
    let outcome = down::tear_down(&path, "ml-feature-store", NOW);
    assert_eq!(outcome.exit, 1);
    let error = envelope::parse_error(&outcome.stdout).unwrap();
    assert_eq!(error.code, "state.lock.held");
    assert!(error.message.contains("ci-runner-7"), "{}", error.message);
}

#[test]
fn down_of_a_missing_instance_or_store() {
    let h = holder();
    let (dir, path) = seeded(&h);
    let outcome = down::tear_down_with(&path, "no-such-thing", NOW, &mut probe(&h));
    assert_eq!(outcome.exit, 1);
    assert_eq!(
        envelope::parse_error(&outcome.stdout).unwrap().code,
        "state.instance.not_found"
    );

    let nowhere = dir.path().join("missing.db");
    let outcome = down::tear_down_with(&nowhere, "orders-e2e", NOW, &mut probe(&h));
    assert_eq!(outcome.exit, 1);
    assert_eq!(
        envelope::parse_error(&outcome.stdout).unwrap().code,
        "state.store.unavailable"
    );
    assert!(!nowhere.exists());
}

#[test]
fn down_refuses_hostile_names() {
    let h = holder();
    let (_dir, path) = seeded(&h);
    for name in [
        "--help",
        "x; rm -rf /",
        "Orders-E2E",
        "../logs",
        "evil\u{1b}[2J",
    ] {
        let outcome = down::tear_down_with(&path, name, NOW, &mut probe(&h));
        assert_eq!(outcome.exit, 2, "{name:?}");
        let error = envelope::parse_error(&outcome.stdout).unwrap();
        assert_eq!(error.code, "state.instance.invalid_name");
        assert!(!outcome.stdout.contains('\u{1b}'));
        assert!(!outcome.stderr.contains('\u{1b}'));
    }
    assert_eq!(snapshot(&path, &mut probe(&h)).instances.len(), 12);
}

#[test]
fn helper_claims_the_role_for_the_given_run() {
    let dir = tempfile::tempdir().unwrap();
    let roles = dir.path().join("stackless-tui").join("roles");
    let role = succession::Role::new(&roles, stackless_tui::supervisor::ROLE);
    assert_eq!(role.occupancy().unwrap(), Occupancy::Free);

    let tenancy = helper::claim(&roles, 0xDEAD_BEEF_u64).unwrap();
    let Occupancy::HeldBy(record) = role.occupancy().unwrap() else {
        panic!("the role must be held by a record");
    };
    assert_eq!(record.identity.run, Run::from_raw(0xDEAD_BEEF));
    assert_eq!(record.identity.compat, stackless_tui::supervisor::COMPAT);
    assert_eq!(record.tenant.pid, std::process::id());
    assert!(record.tenant.started_at.is_some());

    assert!(matches!(
        helper::claim(&roles, 7),
        Err(succession::ClaimError::Occupied)
    ));

    // An orphaned helper leaves at once and gives the role back.
    let started = std::time::Instant::now();
    let ending = helper::serve(tenancy, Duration::from_secs(30), || false);
    assert_eq!(ending, helper::Ending::Orphaned);
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(role.occupancy().unwrap(), Occupancy::Free);

    // A helper whose parent stays checks it every 200 ms until its lifetime ends.
    let tenancy = helper::claim(&roles, 9).unwrap();
    let mut checks = 0;
    let ending = helper::serve(tenancy, Duration::from_millis(500), || {
        checks += 1;
        true
    });
    assert_eq!(ending, helper::Ending::Done);
    assert!((3..=4).contains(&checks), "{checks} checks");
    assert_eq!(role.occupancy().unwrap(), Occupancy::Free);
}

#[test]
fn helper_reads_its_environment() {
    use stackless_tui::supervisor::{ENV_ROLES_DIR, ENV_RUN};
    fn env(
        run: Option<&'static str>,
        dir: Option<&'static str>,
    ) -> impl Fn(&str) -> Option<String> {
        move |key: &str| match key {
            k if k == ENV_RUN => run.map(str::to_owned),
            k if k == ENV_ROLES_DIR => dir.map(str::to_owned),
            _ => None,
        }
    }
    assert_eq!(
        helper::read_env(env(Some("42"), Some("/tmp/roles"))),
        Ok((42, PathBuf::from("/tmp/roles")))
    );
    assert!(
        helper::read_env(env(None, Some("/tmp/roles")))
            .unwrap_err()
            .contains(ENV_RUN)
    );
    assert!(
        helper::read_env(env(Some("-1"), Some("/tmp/roles")))
            .unwrap_err()
            .contains("not a decimal u64")
    );
    assert!(
        helper::read_env(env(Some("42"), None))
            .unwrap_err()
            .contains(ENV_ROLES_DIR)
    );
}
