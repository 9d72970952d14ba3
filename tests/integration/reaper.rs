//! The reaper against real fixture stores and fake teardown scripts: every
//! §6 branch, with exact values.

use crate::common::{self, CAPTURE, argv_log, fake_down, fixture, reaper, runtime};
use stackless_tui::event::{ActivityKind, Actor};
use stackless_tui::model::Liveness;
use stackless_tui::reaper::Intent;
use stackless_tui::store::probe::{FixedProbe, SysinfoProbe};
use stackless_tui::store::{Access, Store};

fn vm_probe() -> Box<FixedProbe> {
    Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    })
}

fn snapshot(path: &std::path::Path) -> stackless_tui::model::Snapshot {
    Store::open(path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap()
}

const PRETTY_ENVELOPE: &str = include_str!("../fixtures/envelopes/down-survivors-error.json");

#[test]
fn backoff_not_elapsed_is_waited_out_and_nothing_runs() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "exit 0");
    // At CAPTURE golf's next retry is 173 s away; nothing else is expired.
    let (mut reaper, activities) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let summary = reaper.pass();
    assert_eq!(summary.reaped + summary.failed, 0);
    assert!(argv_log(dir.path()).is_empty());
    let log = activities.lock().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].instance, "golf");
    assert_eq!(log[0].kind, ActivityKind::WaitingBackoff);
    assert_eq!(log[0].detail, "until 2026-11-29T14:00:59Z");
    drop(log);
    // A second pass reports nothing new (skips are reported on change).
    reaper.pass();
    assert_eq!(activities.lock().unwrap().len(), 1);
}

#[test]
fn failure_records_attempt_backoff_and_whole_envelope() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let envelope_file = dir.path().join("envelope.json");
    std::fs::write(&envelope_file, PRETTY_ENVELOPE).unwrap();
    let down = fake_down(
        dir.path(),
        &format!(
            "cat '{}'; echo 'teardown failed' >&2; exit 1",
            envelope_file.display()
        ),
    );
    let now = CAPTURE + 400; // golf due (retry was at +173)
    let (mut reaper, log) = reaper(&path, down, vm_probe(), now, &rt);
    let summary = reaper.pass();
    assert_eq!(summary.failed, 1);
    assert_eq!(argv_log(dir.path()), vec!["[down][golf][--json]"]);
    let snap = snapshot(&path);
    let row = snap.reap_attempt("golf").expect("row kept");
    assert_eq!(row.attempts, 4);
    assert_eq!(row.next_retry_at, now + 480);
    let expected: serde_json::Value = serde_json::from_str(PRETTY_ENVELOPE).unwrap();
    // The store gets `code: message`; the entry keeps the whole envelope.
    assert_eq!(
        row.last_error,
        "engine.teardown.survivors: teardown of \"golf\" left survivors: \
         [\"/home/operator/.local/state/stackless/sources/golf/web\"]"
    );
    let log = log.lock().unwrap();
    let failed = log.iter().find(|a| a.kind == ActivityKind::Failed).unwrap();
    assert!(
        failed
            .detail
            .starts_with("engine.teardown.survivors: teardown of \"golf\" left survivors")
    );
    assert!(
        failed
            .detail
            .ends_with("(attempt 4, retry at 2026-11-29T14:12:46Z)"),
        "{}",
        failed.detail
    );
    assert_eq!(failed.stderr_tail, "teardown failed\n");
    // The whole envelope is kept on the entry for its full text.
    assert_eq!(failed.envelope, expected.to_string());
    assert_eq!(failed.actor, Actor::Reaper);
}

/// What the console writes, stackless shows: the store's `last_error` is
/// `code: message` on one line, the form stackless 0.4.0 gives a fault on
/// one line (stackless-core-0.4.0 src/engine/run.rs:708) and that its
/// `status` prints after `reap failed N time(s): ` (stackless-0.4.0
/// src/client/report.rs:524-528); the audit line keeps the whole envelope.
#[test]
fn a_failed_reap_writes_code_and_message_to_the_store_and_the_envelope_to_the_audit() {
    let _rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let envelope_file = dir.path().join("envelope.json");
    std::fs::write(&envelope_file, PRETTY_ENVELOPE).unwrap();
    let down = fake_down(
        dir.path(),
        &format!("cat '{}'; exit 1", envelope_file.display()),
    );
    let audit_path = dir.path().join("audit.jsonl");
    let audit = stackless_tui::audit::AuditLog::open(&audit_path, 1 << 20).unwrap();
    let now = CAPTURE + 400;
    let recorder = stackless_tui::recorder::Recorder::new(
        Some(std::sync::Arc::new(std::sync::Mutex::new(audit))),
        stackless_tui::recorder::Forward::Collect(std::sync::Arc::default()),
    );
    let jobs = stackless_tui::reaper::jobs::JobRunner::new(
        path.clone(),
        stackless_tui::reaper::jobs::ReaperConfig {
            down,
            tick: std::time::Duration::from_secs(60),
            down_timeout: std::time::Duration::from_secs(20),
            dry_run: false,
            concurrency: 2,
        },
        recorder,
    )
    .with_test_clock(std::sync::Arc::new(move || now));
    let mut reaper = stackless_tui::reaper::Reaper::new(
        Store::open(&path, Access::ReadWrite).unwrap(),
        vm_probe(),
        jobs,
    );
    assert_eq!(reaper.pass().failed, 1);
    let snap = snapshot(&path);
    let row = snap.reap_attempt("golf").expect("row kept");
    assert_eq!(
        row.last_error,
        "engine.teardown.survivors: teardown of \"golf\" left survivors: \
         [\"/home/operator/.local/state/stackless/sources/golf/web\"]"
    );
    let trail = std::fs::read_to_string(&audit_path).unwrap();
    let failed: Vec<serde_json::Value> = trail
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &serde_json::Value| l["outcome"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{trail}");
    let mut line = failed[0].clone();
    assert!(line["duration_ms"].is_u64(), "{line}");
    line.as_object_mut().unwrap().remove("duration_ms");
    let envelope: serde_json::Value = serde_json::from_str(PRETTY_ENVELOPE).unwrap();
    assert_eq!(
        line,
        serde_json::json!({
            "time": "2026-11-29T14:04:46Z",
            "unix": now,
            "actor": "reaper",
            "instance": "golf",
            "action": "teardown",
            "outcome": "failed",
            "reason": "engine.teardown.survivors: teardown of \"golf\" left survivors: \
                [\"/home/operator/.local/state/stackless/sources/golf/web\"] \
                (attempt 4, retry at 2026-11-29T14:12:46Z)",
            "envelope": envelope.to_string(),
        })
    );
}

#[test]
fn success_clears_the_reap_attempt() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "echo 'tore down' >&2; exit 0");
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE + 400, &rt);
    let summary = reaper.pass();
    assert_eq!(summary.reaped, 1);
    assert!(snapshot(&path).reap_attempt("golf").is_none());
    let kinds: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .map(|a| (a.instance.clone(), a.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("golf".to_owned(), ActivityKind::Started),
            ("golf".to_owned(), ActivityKind::Reaped)
        ]
    );
}

#[test]
fn lock_held_envelope_is_a_skip_not_a_failure() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(
        dir.path(),
        r#"echo '{"ok": false, "error": {"schema_version": 1, "code": "state.lock.held", "message": "locked"}}'; exit 1"#,
    );
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE + 400, &rt);
    let summary = reaper.pass();
    assert_eq!(summary.failed, 0);
    let row = snapshot(&path).reap_attempt("golf").cloned().unwrap();
    assert_eq!(row.attempts, 3, "the backoff must not grow");
    assert_eq!(row.last_error, "}");
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|a| a.kind == ActivityKind::SkippedLocked)
    );
}

#[test]
fn locked_instance_is_skipped_stale_lock_is_reaped() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "exit 0");
    // Late enough that echo (and everything else active) has expired.
    let now = CAPTURE + 90_000;
    // echo's holder (pid 15180, started 1795959972 on vm) is alive here.
    let probe = Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![(15180, 1_795_959_972)],
    });
    let (mut reaper, log) = common::reaper_with(
        &path,
        down.clone(),
        probe,
        std::sync::Arc::new(move || now),
        &rt,
        |c| c.concurrency = 8,
    );
    reaper.pass();
    // Teardowns run concurrently: compare as a set, in name order.
    let mut calls = argv_log(dir.path());
    calls.sort();
    assert!(!calls.iter().any(|c| c.contains("[echo]")), "{calls:?}");
    assert_eq!(
        calls,
        vec![
            "[down][alpha][--json]",
            "[down][bravo][--json]",
            "[down][duo-79882653-fd55-4b17-bf19-d4afc89a2b5e][--json]",
            "[down][golf][--json]",
            "[down][hotel][--json]",
        ]
    );
    let skipped = log
        .lock()
        .unwrap()
        .iter()
        .find(|a| a.instance == "echo")
        .cloned()
        .unwrap();
    assert_eq!(skipped.kind, ActivityKind::SkippedLocked);
    assert_eq!(skipped.detail, Liveness::Alive.to_string());

    // The same store with the holder dead: the stale lock does not protect it.
    let (dir2, path2) = fixture("stackless-real-v4.db");
    let down2 = fake_down(dir2.path(), "exit 0");
    let (mut reaper2, _) = common::reaper_with(
        &path2,
        down2,
        vm_probe(),
        std::sync::Arc::new(move || now),
        &rt,
        |c| c.concurrency = 8,
    );
    reaper2.pass();
    assert!(
        argv_log(dir2.path())
            .iter()
            .any(|c| c == "[down][echo][--json]")
    );
}

#[test]
fn changed_since_decision_aborts_without_running() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = fake_down(dir.path(), "exit 0");
    let before = snapshot(&path);
    let golf = before.instance("golf").unwrap().clone();
    let attempt = before.reap_attempt("golf").cloned();
    // Another process renews golf's lease between the decision and the act.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "UPDATE leases SET expires_at = expires_at + 3600 WHERE instance = 'golf'",
            [],
        )
        .unwrap();
    }
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE + 400, &rt);
    let kind = reaper.reap(&golf, attempt.as_ref(), Actor::Operator, Intent::Reap);
    assert_eq!(kind, Some(ActivityKind::Aborted));
    assert!(argv_log(dir.path()).is_empty());
    assert_eq!(
        log.lock().unwrap()[0].detail,
        "lease changed since the decision; not torn down"
    );
}

#[test]
fn tombstones_past_seven_days_are_collected_with_their_logs() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let logs = dir.path().join("logs/charlie");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("up.log"), "x").unwrap();
    let down = fake_down(dir.path(), "exit 0");
    // charlie was tombstoned at 1795959971, delta at 1795960380.
    let now = 1_795_959_971 + 7 * 86_400;
    let (mut reaper, log) = reaper(&path, down, vm_probe(), now, &rt);
    let summary = reaper.pass();
    assert_eq!(summary.collected, 1);
    assert!(!logs.exists());
    let snap = snapshot(&path);
    assert!(snap.instance("charlie").is_none());
    assert!(
        snap.instance("delta").is_some(),
        "delta is 409 s short of 7 days"
    );
    let collected: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::Collected)
        .map(|a| a.instance.clone())
        .collect();
    assert_eq!(collected, vec!["charlie"]);
}

#[test]
fn hostile_names_never_reach_a_command_line() {
    let rt = runtime();
    let (dir, path) = fixture("hostile.db");
    let down = fake_down(dir.path(), "exit 1");
    // Everything in hostile.db has expired by now.
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE + 8000, &rt);
    reaper.pass();
    assert_eq!(argv_log(dir.path()), vec!["[down][ok-neighbour][--json]"]);
    assert!(!std::path::Path::new("/tmp/stackless-tui-pwned-a").exists());
    let refused = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::Refused)
        .count();
    assert_eq!(refused, 6);
}

#[test]
fn a_lock_held_by_a_live_process_of_this_test_is_never_torn_down() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = Store::open_or_create(&path).unwrap();
    let me = std::process::id();
    let mut system = sysinfo::System::new();
    let spid = sysinfo::Pid::from_u32(me);
    system.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[spid]), true);
    let start = system.process(spid).unwrap().start_time();
    let host = sysinfo::System::host_name().unwrap();
    // A dead holder: a child that has exited and been waited for.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let conn = store.connection();
    for (name, pid) in [("held", me), ("orphaned", dead)] {
        conn.execute(
            "INSERT INTO instances (name, substrate, definition, created_at) VALUES (?1, 'local', '', 1)",
            [name],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO leases (instance, duration_secs, expires_at) VALUES (?1, 60, 100)",
            [name],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO op_locks (instance, operation, holder_pid, holder_start_time, acquired_at, holder_host)
             VALUES (?1, 'up', ?2, ?3, 50, ?4)",
            rusqlite::params![name, pid, start as i64, host],
        )
        .unwrap();
    }
    drop(store);
    let down = fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = reaper(&path, down, Box::new(SysinfoProbe::new()), CAPTURE, &rt);
    reaper.pass();
    assert_eq!(argv_log(dir.path()), vec!["[down][orphaned][--json]"]);
    let held = log
        .lock()
        .unwrap()
        .iter()
        .find(|a| a.instance == "held")
        .cloned()
        .unwrap();
    assert_eq!(held.kind, ActivityKind::SkippedLocked);
    assert_eq!(held.detail, "alive");
}

/// The Activity line's argv is quoted as the `d` dialog and `Y` quote it
/// (one function), so it reads as the argv that ran.
#[test]
fn tearing_down_line_quotes_the_argv_as_the_dialog_does() {
    let rt = runtime();
    let (_dir, path) = fixture("stackless-real-v4.db");
    let down =
        stackless_tui::reaper::DownCommand::parse("sh -c 'exit 3' {name}").expect("template");
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE + 400, &rt);
    reaper.pass();
    let started = log
        .lock()
        .unwrap()
        .iter()
        .find(|a| a.kind == ActivityKind::Started)
        .map(|a| a.detail.clone());
    assert_eq!(started.as_deref(), Some("sh -c 'exit 3' golf"));
    let info = stackless_tui::ui::TeardownInfo {
        argv: ["sh", "-c", "exit 3", "{name}"].map(str::to_owned).to_vec(),
        missing: None,
        ..Default::default()
    };
    assert_eq!(info.line_for("golf"), "sh -c 'exit 3' golf");
}

/// A reap attempt whose `last_error` holds a value of `secret_history`:
/// the decision reads it redacted, the re-check raw, and that is no change
/// (were it read as a change, every pass would abort `reap attempt changed
/// since the decision` and the instance would never be reaped).
#[test]
fn a_redacted_reap_attempt_is_no_change_to_the_recheck() {
    let rt = runtime();
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let expires: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT expires_at FROM leases WHERE instance = 'golf'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let now = expires + 3_600;
    common::stores::exec(
        &path,
        &format!(
            "INSERT INTO secret_history (owner_id, value) VALUES ('x', 'sk_canary_91');
             INSERT INTO reap_attempts (instance, attempts, last_error, next_retry_at)
               VALUES ('golf', 1, 'provider.auth: token sk_canary_91 rejected', {});",
            now - 1
        ),
    );
    let down = fake_down(dir.path(), "exit 0");
    let (mut reaper, log) = reaper(&path, down, vm_probe(), now, &rt);
    let summary = reaper.pass();
    let kinds: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.instance == "golf")
        .map(|a| a.kind)
        .collect();
    assert_eq!(kinds, [ActivityKind::Started, ActivityKind::Reaped]);
    assert_eq!(summary.failed + summary.skipped, 0, "{summary:?}");
}

/// A teardown leaves the in-flight set before its outcome's line is
/// recorded: whoever reads that line and then stops (a console quitting,
/// `serve --stdio` at the end of its stdin) never counts the finished
/// teardown as still running, nor audits it `left-running`. The test
/// holds the collected lines' lock while the `down` ends, so the outcome's
/// line waits to be recorded; the in-flight set must empty meanwhile.
#[test]
fn a_teardown_is_out_of_flight_before_its_outcome_is_recorded() {
    let rt = runtime();
    let (dir, path) = fixture("stackless-real-v4.db");
    let started = dir.path().join("started");
    let gate = dir.path().join("gate");
    let down = fake_down(
        dir.path(),
        &format!(
            "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; exit 0",
            started.display(),
            gate.display()
        ),
    );
    let (reaper, log) = reaper(&path, down, vm_probe(), CAPTURE + 400, &rt);
    let seen = snapshot(&path);
    let job = reaper
        .jobs()
        .spawn(stackless_tui::reaper::jobs::Job {
            instance: seen.instance("golf").unwrap().clone(),
            attempt: seen.reap_attempt("golf").cloned(),
            actor: Actor::Operator,
            intent: Intent::Reap,
        })
        .expect("started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "down never started: {:?}",
            log.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let held = log.lock().unwrap();
    std::fs::write(&gate, "").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !reaper.jobs().inflight().names().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "golf is still in flight while its outcome waits to be recorded"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(held);
    assert_eq!(job.join().unwrap(), Some(ActivityKind::Reaped));
}
