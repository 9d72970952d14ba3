//! The reaper under faults: hung teardowns, concurrency, crashes, dry run,
//! wall-clock jumps, a store that disappears.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::common::{CAPTURE, argv_log, fake_down, fixture, reaper, reaper_with, runtime};
use stackless_tui::event::{Activity, ActivityKind, Actor};
use stackless_tui::reaper::{Intent, Job};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

fn vm() -> Box<FixedProbe> {
    Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    })
}

/// The real v4 fixture at a time when golf (due) and duo (expired) are both
/// on the worklist, and nothing else.
const BOTH_DUE: i64 = CAPTURE + 2000;

fn attempt(path: &std::path::Path, name: &str) -> Option<stackless_tui::model::ReapAttempt> {
    Store::open(path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe::default())
        .unwrap()
        .reap_attempt(name)
        .cloned()
}

/// The activities a reaper reports (`reaper_with`'s log).
type Log = Arc<Mutex<Vec<Activity>>>;

/// The controller's part in a test, played on the reaper's clock (always
/// [`BOTH_DUE`]): each call first tombstones in the store, at
/// [`BOTH_DUE`] with its lease gone, every instance of `names` whose
/// teardown the log (set once the reaper exists) shows started. A job
/// reads the clock after its `down` ends and before it reads the store,
/// so what the controller does while `down` runs is in the store by then,
/// whatever the machine's load: nothing but the `down` itself runs within
/// its deadline (the 0.4.0 controller finishes a submitted `down` whether
/// or not the CLI waits: stackless-core-0.4.0 src/engine/run.rs:643-647).
fn controller_clock(
    path: &std::path::Path,
    names: &[&str],
) -> (stackless_tui::reaper::jobs::Clock, Arc<OnceLock<Log>>) {
    let seen: Arc<OnceLock<Log>> = Arc::default();
    let log = Arc::clone(&seen);
    let path = path.to_owned();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let done = Mutex::new(Vec::<String>::new());
    let clock = Arc::new(move || {
        let started: Vec<String> = log.get().map_or_else(Vec::new, |log| {
            log.lock()
                .unwrap()
                .iter()
                .filter(|a| a.kind == ActivityKind::Started)
                .map(|a| a.instance.clone())
                .collect()
        });
        let mut done = done.lock().unwrap();
        for name in started {
            if names.contains(&name) && !done.contains(&name) {
                let conn = rusqlite::Connection::open(&path).unwrap();
                conn.busy_timeout(Duration::from_secs(30)).unwrap();
                conn.execute(
                    "UPDATE instances SET status = 'tombstoned', tombstoned_at = ?1 \
                     WHERE name = ?2 AND status = 'active'",
                    rusqlite::params![BOTH_DUE, name],
                )
                .unwrap();
                conn.execute("DELETE FROM leases WHERE instance = ?1", [&name])
                    .unwrap();
                done.push(name);
            }
        }
        BOTH_DUE
    });
    (clock, seen)
}

#[test]
fn hung_teardown_is_killed_at_its_deadline_and_recorded() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(
        dir.path(),
        r#"if [ "$NAME" = golf ]; then sleep 60; fi; trap - EXIT; exit 0"#,
    );
    let (clock, seen) = controller_clock(&path, &["duo-79882653-fd55-4b17-bf19-d4afc89a2b5e"]);
    let (mut reaper, log) = reaper_with(&path, down, vm(), clock, &rt, |c| {
        c.down_timeout = Duration::from_secs(1);
    });
    seen.set(Arc::clone(&log)).expect("set once");
    let started = Instant::now();
    let summary = reaper.pass();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((summary.reaped, summary.failed), (1, 1));
    let row = attempt(&path, "golf").unwrap();
    assert_eq!(row.attempts, 4);
    assert_eq!(row.last_error, "timed out after 1s");
    assert_eq!(row.next_retry_at, BOTH_DUE + 480);
    // The hung one did not delay the other: duo finished first.
    let order: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| matches!(a.kind, ActivityKind::Reaped | ActivityKind::Failed))
        .map(|a| a.instance.clone())
        .collect();
    assert_eq!(
        order,
        vec!["duo-79882653-fd55-4b17-bf19-d4afc89a2b5e", "golf"]
    );
}

/// A teardown killed at its deadline that the controller then finishes:
/// stackless 0.4.0's `down` submits an operation the
/// controller runs to its end whether or not the CLI waits, tombstoning
/// the instance (stackless-core-0.4.0 src/engine/run.rs:643-647). Here the
/// fake `down` hangs past the deadline while the controller (played by
/// [`controller_clock`]) tombstones golf (this birth) before the job reads
/// the store. The store shows golf torn down after all: reported and
/// counted as reaped, no failure and no backoff left.
#[test]
fn a_teardown_killed_at_its_deadline_that_the_controller_finishes_is_counted_reaped() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    // Only sh builtins and `sleep` run within the 1 s deadline: golf's
    // `down` hangs, duo's exits 0 at once; what the controller writes is
    // written by the clock below, before each job reads the store.
    let down = fake_down(
        dir.path(),
        r#"if [ "$NAME" = golf ]; then sleep 60; fi; trap - EXIT; exit 0"#,
    );
    let (clock, seen) =
        controller_clock(&path, &["golf", "duo-79882653-fd55-4b17-bf19-d4afc89a2b5e"]);
    let (mut reaper, log) = reaper_with(&path, down, vm(), clock, &rt, |c| {
        c.down_timeout = Duration::from_secs(1);
    });
    seen.set(Arc::clone(&log)).expect("set once");
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (2, 0));
    assert_eq!(attempt(&path, "golf"), None, "no backoff left");
    let golf: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.instance == "golf" && a.kind != ActivityKind::Started)
        .map(|a| (a.kind, a.detail.clone()))
        .collect();
    assert_eq!(
        golf,
        vec![(
            ActivityKind::Reaped,
            "down timed out after 1s and was killed, but the store shows the instance \
             tombstoned: the controller finished the teardown after this console's deadline"
                .to_owned()
        )]
    );
}

#[test]
fn a_pass_works_through_its_whole_worklist_within_the_concurrency_limit() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    // Each teardown notes an overlap if another one is running.
    let running = dir.path().join("running");
    let overlap = dir.path().join("overlap");
    let down = fake_down(
        dir.path(),
        &format!(
            "if [ -e '{r}' ]; then touch '{o}'; fi; touch '{r}'; sleep 0.3; rm -f '{r}'; exit 0",
            r = running.display(),
            o = overlap.display()
        ),
    );
    // Late enough that six instances are on the worklist.
    let now = CAPTURE + 90_000;
    let (mut reaper, _) = reaper_with(&path, down, vm(), Arc::new(move || now), &rt, |c| {
        c.concurrency = 1;
    });
    let summary = reaper.pass();
    assert_eq!(summary.reaped, 6, "the whole worklist in one pass");
    assert_eq!(argv_log(dir.path()).len(), 6);
    assert!(
        !overlap.exists(),
        "never two at once with --reap-concurrency 1"
    );
}

#[test]
fn an_instance_is_never_torn_down_twice_at_once() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "sleep 2; exit 0");
    let (reaper, log) = reaper(&path, down, vm(), BOTH_DUE, &rt);
    let snapshot = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe::default())
        .unwrap();
    let golf = snapshot.instance("golf").unwrap().clone();
    let attempt = snapshot.reap_attempt("golf").cloned();
    let jobs = reaper.jobs().clone();
    let job = Job {
        instance: golf,
        attempt,
        actor: Actor::Operator,
        intent: Intent::Reap,
    };
    let first = jobs.spawn(job.clone()).unwrap();
    let second = jobs.spawn(job);
    assert_eq!(second.err(), Some(Some(ActivityKind::Refused)));
    assert_eq!(first.join().unwrap(), Some(ActivityKind::Reaped));
    assert_eq!(argv_log(dir.path()).len(), 1);
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|a| a.kind == ActivityKind::Refused
                && a.detail == "a teardown of this instance is already running")
    );
}

#[test]
fn teardown_killed_by_a_signal_is_a_named_failure() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "kill -KILL $$");
    let (mut reaper, _) = reaper(&path, down, vm(), CAPTURE + 400, &rt);
    assert_eq!(reaper.pass().failed, 1);
    assert_eq!(
        attempt(&path, "golf").unwrap().last_error,
        "down was killed by SIGKILL"
    );
}

#[test]
fn teardown_that_cannot_be_spawned_is_an_error_not_a_recorded_failure() {
    let rt = runtime();
    let (_dir, path) = fixture("stackless-real-v4.db");
    let down =
        stackless_tui::reaper::DownCommand::parse("/nonexistent/stackless down {name} --json")
            .unwrap();
    let (mut reaper, log) = reaper(&path, down, vm(), CAPTURE + 400, &rt);
    let summary = reaper.pass();
    assert_eq!((summary.failed, summary.errors), (0, 1));
    // `down` never ran: nothing is recorded against golf.
    assert_eq!(attempt(&path, "golf").unwrap().attempts, 3);
    let error = log
        .lock()
        .unwrap()
        .iter()
        .find(|a| a.kind == ActivityKind::Error)
        .cloned()
        .unwrap();
    assert_eq!(
        error.detail,
        "cannot run /nonexistent/stackless: No such file or directory (os error 2); nothing recorded (check --down-cmd)"
    );
}

#[test]
fn dry_run_decides_and_writes_nothing() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let before = std::fs::read(&path).unwrap();
    let down = fake_down(dir.path(), "exit 0");
    // Late enough for GC of charlie too.
    let now = 1_795_959_971 + 7 * 86_400 + 10;
    let (mut reaper, log) = reaper_with(&path, down, vm(), Arc::new(move || now), &rt, |c| {
        c.dry_run = true;
    });
    reaper.pass();
    assert!(argv_log(dir.path()).is_empty());
    let would: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::WouldReap)
        .map(|a| a.instance.clone())
        .collect();
    assert_eq!(
        would,
        vec![
            "alpha",
            "bravo",
            "duo-79882653-fd55-4b17-bf19-d4afc89a2b5e",
            "echo",
            "golf",
            "hotel",
            "charlie",
        ]
    );
    drop(reaper);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_wall_clock_jump_forward_neither_reaps_nor_collects_early() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "exit 0");
    let wall = Arc::new(AtomicI64::new(CAPTURE));
    let clock = Arc::clone(&wall);
    let (mut reaper, log) = reaper_with(
        &path,
        down,
        vm(),
        Arc::new(move || clock.load(Ordering::SeqCst)),
        &rt,
        |_| {},
    );
    reaper.pass();
    // Thirty days forward: every lease would look expired, every tombstone
    // due for GC.
    wall.store(CAPTURE + 30 * 86_400, Ordering::SeqCst);
    reaper.pass();
    reaper.pass();
    assert!(argv_log(dir.path()).is_empty());
    let log = log.lock().unwrap();
    assert!(log.iter().all(|a| a.kind != ActivityKind::Collected));
    assert!(log.iter().any(|a| a.kind == ActivityKind::Error
        && a.detail
            == "the wall clock jumped 30d 00h ahead: leases and GC keep following the monotonic clock"));
    // And back: nothing panics, nothing runs.
    drop(log);
    wall.store(CAPTURE - 86_400, Ordering::SeqCst);
    reaper.pass();
    assert!(argv_log(dir.path()).is_empty());
}

#[test]
fn a_store_that_disappears_pauses_the_reaper_until_it_returns() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let saved = dir.path().join("saved.db");
    std::fs::copy(&path, &saved).unwrap();
    let down = fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = reaper(&path, down, vm(), CAPTURE + 400, &rt);
    std::fs::remove_file(&path).unwrap();
    let _ = std::fs::remove_file(dir.path().join("state.db-wal"));
    let _ = std::fs::remove_file(dir.path().join("state.db-shm"));
    let summary = reaper.pass();
    assert_eq!(summary.errors, 1);
    assert!(argv_log(dir.path()).is_empty());
    assert!(log.lock().unwrap().iter().any(|a| a.detail
        == format!(
            "the store file {} is gone: reaping paused until it returns",
            path.display()
        )));
    std::fs::copy(&saved, &path).unwrap();
    let summary = reaper.pass();
    assert_eq!(summary.reaped, 1);
    assert_eq!(argv_log(dir.path()), vec!["[down][golf][--json]"]);
}
