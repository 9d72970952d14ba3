//! The 0.4.0 demo: its schema-14 store read by this crate, the demo's
//! controller stand-in running the queue, and the CLI stand-in answering
//! `c`, `L`, `v` and `d` as stackless 0.4.0 does (each answer read by the
//! console's own interpreter of the real CLI's output).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use stackless_tui::controller::{cancel, queue_down};
use stackless_tui::demo::controller::tick;
use stackless_tui::demo::stackless::answer;
use stackless_tui::demo::{LiveHolder, v14};
use stackless_tui::model::verbs::{self, Verb};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

const NOW: i64 = 1_795_960_686;

fn holder() -> LiveHolder {
    LiveHolder {
        pid: 4242,
        start_time: 1_795_950_000,
        host: "demo-box".into(),
    }
}

fn probe() -> FixedProbe {
    FixedProbe {
        host: Some("demo-box".into()),
        processes: vec![(4242, 1_795_950_000)],
    }
}

fn seeded(now: i64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    v14::seed(&path, now, &holder()).unwrap();
    (dir, path)
}

/// Every operation's `(instance, verb, status)`, by id.
fn statuses(path: &Path) -> Vec<(String, String, String, String)> {
    let db = rusqlite::Connection::open(path).unwrap();
    let mut stmt = db
        .prepare("SELECT id, instance, verb, status FROM operations ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn op_id(path: &Path, instance: &str, verb: &str, status: &str) -> String {
    statuses(path)
        .into_iter()
        .find(|(_, i, v, s)| i == instance && v == verb && s == status)
        .map(|(id, ..)| id)
        .unwrap()
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The store this crate reads: schema 14, every instance, the queue.
#[test]
fn the_demo_store_reads_as_a_0_4_0_store_with_its_queue() {
    let (_dir, path) = seeded(NOW);
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snap = store.snapshot(&mut probe()).unwrap();
    assert_eq!(snap.generation.user_version, 14);
    assert_eq!(snap.instances.len(), 12);
    let pending: Vec<(&str, &str, &str)> = snap
        .operations
        .iter()
        .filter(|o| o.status.is_pending())
        .map(|o| (o.instance.as_str(), o.verb.as_str(), o.status.as_str()))
        .collect();
    assert_eq!(
        pending,
        [
            ("ml-training-run", "up", "running"),
            ("orders-e2e", "up", "running"),
            ("orders-e2e", "down", "queued"),
            ("ml-training-run", "verify", "queued"),
        ]
    );
    assert_eq!(snap.operations.len(), 18);
}

/// A minute of the stand-in: the running `up` finishes, the `down`
/// queued behind it starts only then and tombstones the instance; the
/// slow `up` still waits at its health gate with the `verify` behind it.
#[test]
fn the_stand_in_controller_runs_the_queue_one_name_at_a_time() {
    let (_dir, path) = seeded(NOW);
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    let mut seen = statuses(&path);
    let mut changes = Vec::new();
    for second in 0..=60 {
        tick(&mut store, (NOW + second) * 1000, &mut probe()).unwrap();
        let now = statuses(&path);
        for (before, after) in seen.iter().zip(&now) {
            if before.3 != after.3 {
                changes.push(format!("+{second} {} {} {}", after.1, after.2, after.3));
            }
        }
        seen = now;
    }
    assert_eq!(
        changes,
        [
            "+1 orders-e2e down running",
            "+1 orders-e2e up succeeded",
            "+7 orders-e2e down succeeded",
        ]
    );
    let status: String = db
        .query_row(
            "SELECT status FROM instances WHERE name = 'orders-e2e'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(status, "tombstoned");
    let leases: i64 = db
        .query_row(
            "SELECT count(*) FROM leases WHERE instance = 'orders-e2e'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leases, 0);
}

/// `c` on the queued `verify` cancels it at once; `c` on the running
/// slow `up` requests it, and the stand-in stops it at its next pass;
/// an unknown id is refused.
#[test]
fn cancel_answers_as_0_4_0_and_the_stand_in_stops_the_running_up() {
    let (_dir, path) = seeded(NOW);
    let queued = op_id(&path, "ml-training-run", "verify", "queued");
    let running = op_id(&path, "ml-training-run", "up", "running");
    let wait = Duration::from_secs(1);

    let got = answer(
        &path,
        &args(&["operation", "cancel", &queued, "--json"]),
        wait,
    );
    assert_eq!(
        cancel::interpret(Some(i32::from(got.exit)), &got.stdout),
        cancel::Outcome::Cancelled
    );
    let got = answer(
        &path,
        &args(&["operation", "cancel", &running, "--json"]),
        wait,
    );
    assert_eq!(
        cancel::interpret(Some(i32::from(got.exit)), &got.stdout),
        cancel::Outcome::Requested
    );
    let mut store = Store::open(&path, Access::ReadWrite).unwrap();
    tick(&mut store, NOW * 1000, &mut probe()).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    let (status, code): (String, String) = db
        .query_row(
            "SELECT status, json_extract(error_json, '$.code') FROM operations WHERE id = ?1",
            [&running],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (status.as_str(), code.as_str()),
        ("cancelled", "operation.cancelled")
    );

    let got = answer(
        &path,
        &args(&["operation", "cancel", "no-such-op", "--json"]),
        wait,
    );
    match cancel::interpret(Some(i32::from(got.exit)), &got.stdout) {
        cancel::Outcome::Refused(error) => assert_eq!(error.code, "operation.not_found"),
        other => panic!("{other:?}"),
    }
}

/// The stand-in controller on a fast clock: one second of store time
/// every 5 ms, until dropped.
struct FastController {
    stop: Arc<AtomicBool>,
    now_ms: Arc<AtomicI64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FastController {
    fn start(path: &Path) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let now_ms = Arc::new(AtomicI64::new(
            stackless_tui::model::time::unix_now() * 1000,
        ));
        let path = path.to_owned();
        let thread = {
            let (stop, now_ms) = (Arc::clone(&stop), Arc::clone(&now_ms));
            std::thread::spawn(move || {
                let mut store = Store::open(&path, Access::ReadWrite).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    tick(
                        &mut store,
                        now_ms.fetch_add(1000, Ordering::Relaxed),
                        &mut probe(),
                    )
                    .unwrap();
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        Self {
            stop,
            now_ms,
            thread: Some(thread),
        }
    }
}

impl Drop for FastController {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

/// `L` (`up --name NAME --lease 2h`) and `v` (`verify NAME`) wait for the
/// stand-in controller and answer as 0.4.0: the renew takes the asked
/// lease, the verify renews at the recorded one, a stack without
/// `[stack.verify]` is refused `verify.not_declared`.
#[test]
fn renew_and_verify_wait_for_the_stand_in_and_answer_as_0_4_0() {
    let (_dir, path) = seeded(stackless_tui::model::time::unix_now());
    let controller = FastController::start(&path);
    let wait = Duration::from_secs(30);
    let renew = Verb::Renew { lease_secs: 7200 };

    let got = answer(
        &path,
        &args(&[
            "up",
            "--name",
            "checkout-preview",
            "--lease",
            "2h",
            "--json",
        ]),
        wait,
    );
    // The stand-in's clock runs 200 s a second: the answer is read within
    // a poll (200 ms, 40 s of it) of the renew.
    let store_now = controller.now_ms.load(Ordering::Relaxed) / 1000;
    match verbs::interpret(renew, Some(i32::from(got.exit)), &got.stdout) {
        verbs::Outcome::Renewed { instance_id } => {
            assert_eq!(instance_id.map(|i| i.len()), Some(32));
        }
        other => panic!("{other:?} {}", got.stdout),
    }
    let db = rusqlite::Connection::open(&path).unwrap();
    let (duration, expires): (i64, i64) = db
        .query_row(
            "SELECT duration_secs, expires_at FROM leases WHERE instance = 'checkout-preview'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(duration, 7200);
    assert!(
        (7200 - 60..=7200).contains(&(expires - store_now)),
        "{expires} vs {store_now}"
    );

    let got = answer(
        &path,
        &args(&["verify", "docs-site-pr-412", "--json"]),
        wait,
    );
    match verbs::interpret(Verb::Verify, Some(i32::from(got.exit)), &got.stdout) {
        verbs::Outcome::Verified(passed) => {
            assert_eq!(
                (passed.exit_status, passed.lease_remaining_secs),
                (0, Some(8 * 3600))
            );
            // Its output is written where the answer says, beside the store.
            let log = std::path::Path::new(&passed.log_path);
            assert!(log.is_absolute(), "{}", passed.log_path);
            assert!(
                log.starts_with(path.parent().unwrap()),
                "{}",
                passed.log_path
            );
            assert_eq!(
                std::fs::read_to_string(log).unwrap(),
                stackless_tui::demo::stackless::VERIFY_OUTPUT
            );
        }
        other => panic!("{other:?} {}", got.stdout),
    }
    let got = answer(
        &path,
        &args(&["verify", "checkout-preview", "--json"]),
        wait,
    );
    match verbs::interpret(Verb::Verify, Some(i32::from(got.exit)), &got.stdout) {
        verbs::Outcome::Refused(error, _) => assert_eq!(error.code, "verify.not_declared"),
        other => panic!("{other:?} {}", got.stdout),
    }
    drop(controller);
}

/// `d` behind a pending operation (`down NAME --no-wait`) answers queued;
/// a teardown (`down NAME --json`) of an instance whose lock a live
/// process holds is refused `state.lock.held`, of an unlocked one
/// destroys it; anything else is refused with exit 2.
#[test]
fn down_queues_refuses_a_held_lock_and_destroys() {
    let (_dir, path) = seeded(stackless_tui::model::time::unix_now());
    let controller = FastController::start(&path);
    let wait = Duration::from_secs(30);
    let got = answer(
        &path,
        &args(&["down", "ml-training-run", "--no-wait", "--json"]),
        wait,
    );
    match queue_down::interpret(Some(i32::from(got.exit)), &got.stdout) {
        queue_down::Outcome::Queued { id, status } => {
            assert_eq!((id.len(), status.as_str()), (36, "queued"));
        }
        other => panic!("{other:?}"),
    }
    let got = answer(&path, &args(&["down", "payments-staging", "--json"]), wait);
    let doc: serde_json::Value = serde_json::from_str(&got.stdout).unwrap();
    assert_eq!(
        (got.exit, doc["error"]["code"].as_str()),
        (1, Some("state.lock.held"))
    );
    let got = answer(&path, &args(&["down", "billing-sandbox", "--json"]), wait);
    let doc: serde_json::Value = serde_json::from_str(&got.stdout).unwrap();
    assert_eq!((got.exit, doc["outcome"].as_str()), (0, Some("destroyed")));
    let got = answer(&path, &args(&["list", "--json"]), wait);
    assert_eq!(got.exit, 2);
    drop(controller);
}

/// The demo's temporary directory is gone after quit even while another
/// thread still writes into `<dir>/stackless-tui/` (the reaper's first
/// pass writing the audit trail, the role thread its claim, the log): the
/// directory is moved aside first, so the writer finds it gone and makes
/// nothing there again (`nofollow::real_dir`), then removed (a plain
/// removal failed half way, `ENOTEMPTY`). Twenty quits.
#[test]
fn the_demo_directory_is_gone_after_quit_while_a_thread_writes_into_it() {
    use stackless_tui::demo::DemoDir;
    for round in 0..20 {
        let dir = DemoDir::create().unwrap();
        let path = dir.path().to_owned();
        std::fs::write(path.join("state.db"), b"seeded").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicI64::new(0));
        let writer = {
            let (stop, written, path) = (Arc::clone(&stop), Arc::clone(&written), path.clone());
            std::thread::spawn(move || {
                let roles = path.join("stackless-tui").join("roles");
                while !stop.load(Ordering::Relaxed) {
                    if stackless_tui::nofollow::real_dir(&roles).is_ok() {
                        let n = written.fetch_add(1, Ordering::Relaxed);
                        let _ = std::fs::write(roles.join(format!("claim-{n}")), b"x");
                    }
                }
            })
        };
        // Quit while it writes.
        while written.load(Ordering::Relaxed) < 10 {
            std::thread::yield_now();
        }
        drop(dir);
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert!(
            !path.exists(),
            "round {round}: {} left behind",
            path.display()
        );
        let parent = path.parent().unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !parent.join(format!(".{name}.removing")).exists(),
            "round {round}: the tree moved aside is left behind"
        );
    }
}

/// No seeded operation was created or finished after the demo's `now`.
#[test]
fn no_seeded_operation_is_in_the_future() {
    let now = 1_795_960_686;
    let (_dir, path) = seeded(now);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let future: Vec<(String, String, i64, i64)> = conn
        .prepare(
            "SELECT instance, verb, created_at, updated_at FROM operations
             WHERE created_at > ?1 OR updated_at > ?1 ORDER BY instance",
        )
        .unwrap()
        .query_map([now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(future, [], "after {now}");
}
