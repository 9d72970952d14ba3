//! The operator's renew and verify (`stackless_tui::reaper::verbs`) against
//! a fake `stackless` that logs its argv and answers as stackless 0.4.0
//! does (`output.rs` `up_ok`, `verify_ok`, `fault`), renewing the lease in
//! the store as `up --lease` does: the birth re-check right before, the
//! dry run, the argv, the Activity each outcome makes.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::stores::{self, DELTA_ID};
use crate::common::{CAPTURE, argv_log};
use stackless_tui::event::{Activity, ActivityKind, Actor};
use stackless_tui::model::Instance;
use stackless_tui::model::verbs::Verb;
use stackless_tui::reaper::verbs::{VerbRequest, VerbRunner};
use stackless_tui::recorder::{Forward, Recorder};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

/// The fake: logs its argv to `<dir>/argv.log`; `up --name N --lease D
/// --json` sets N's lease to CAPTURE + 7200 (as `renew_lease` does at
/// that time) and answers `ok`; `verify N --json` passes for `delta`,
/// fails with stackless's envelope otherwise.
fn fake(dir: &Path, store: &Path) -> String {
    let script = dir.join("stackless");
    let body = format!(
        r#"#!/bin/sh
line=''
for a in "$@"; do line="$line[$a]"; done
printf '%s\n' "$line" >> '{log}'
case "$1" in
  up)
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute("UPDATE leases SET duration_secs = 7200, expires_at = ? WHERE instance = ?", ({expires}, sys.argv[2])); c.commit()' '{store}' "$3"
    printf '{{\n  "schema_version": 2,\n  "ok": true,\n  "instance": "%s",\n  "instance_id": "{id}",\n  "duration_ms": 40\n}}\n' "$3"
    exit 0 ;;
  verify)
    if [ "$2" = delta ]; then
      printf '{{"schema_version":2,"ok":true,"instance":"delta","duration_ms":12,"exit_status":0,"log_path":"/s/verify.log","lease_remaining_secs":3600}}\n'
      exit 0
    fi
    printf '{{"ok":false,"error":{{"schema_version":2,"code":"verify.failed","message":"verify command exited with 3","remediation":"fix the verify script and re-run `stackless verify`","context":{{"log_path":"/s/verify.log","log_tail":"curl: (7) refused","exit_status":"3"}}}}}}\n'
    exit 1 ;;
esac
exit 9
"#,
        log = dir.join("argv.log").display(),
        store = store.display(),
        expires = CAPTURE + 7200,
        id = DELTA_ID,
    );
    std::fs::write(&script, body).expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// The v14 store with no operation pending on delta and alpha (marked
/// done): renew and verify refuse an instance with one pending.
fn idle_v14() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, path) = stores::v14();
    stores::exec(
        &path,
        "UPDATE operations SET status = 'succeeded' WHERE instance IN ('delta', 'alpha') AND status IN ('queued', 'running')",
    );
    (dir, path)
}

fn shown(path: &Path, name: &str) -> Instance {
    let mut store = Store::open(path, Access::ReadOnly).expect("open");
    let snapshot = store
        .snapshot(&mut FixedProbe::default())
        .expect("snapshot");
    snapshot.instance(name).cloned().expect("instance")
}

fn runner(path: &Path, program: String, dry_run: bool) -> (VerbRunner, Arc<Mutex<Vec<Activity>>>) {
    let list = Arc::new(Mutex::new(Vec::new()));
    let runner = VerbRunner {
        path: path.to_owned(),
        program,
        dry_run,
        recorder: Recorder::new(None, Forward::Collect(list.clone())),
        clock: Arc::new(|| CAPTURE),
        deadline: Duration::from_secs(30),
        running: stackless_tui::reaper::InFlight::default(),
    };
    (runner, list)
}

/// Run, retrying the rare `ETXTBSY` of executing a just-written script
/// while another test thread forks.
fn execute(runner: &VerbRunner, request: &VerbRequest) -> (ActivityKind, String, String) {
    for _ in 0..20 {
        let a = runner.execute(request);
        if a.detail.contains("Text file busy") {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        assert_eq!(
            (a.actor, a.instance.as_str()),
            (Actor::Operator, request.instance.name.as_str())
        );
        return (a.kind, a.detail, a.envelope);
    }
    panic!("the fake stayed busy");
}

fn lease(path: &Path, name: &str) -> (i64, i64) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.query_row(
        "SELECT duration_secs, expires_at FROM leases WHERE instance = ?1",
        [name],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("lease")
}

#[test]
fn a_renew_runs_up_with_the_lease_and_reports_the_new_expiry() {
    let (dir, path) = idle_v14();
    let program = fake(dir.path(), &path);
    let (runner, _) = runner(&path, program.clone(), false);
    let delta = shown(&path, "delta");
    assert_eq!(lease(&path, "delta"), (3600, CAPTURE + 3600));
    let request = VerbRequest {
        instance: delta,
        verb: Verb::Renew { lease_secs: 7200 },
    };
    assert_eq!(
        execute(&runner, &request),
        (
            ActivityKind::Renewed,
            "2h, expires in 2h 00m".into(),
            String::new()
        )
    );
    assert_eq!(
        argv_log(dir.path()),
        ["[up][--name][delta][--lease][2h][--json]"]
    );
    assert_eq!(lease(&path, "delta"), (7200, CAPTURE + 7200));
}

#[test]
fn verify_passes_or_shows_the_failing_check() {
    let (dir, path) = idle_v14();
    let program = fake(dir.path(), &path);
    let (runner, _) = runner(&path, program, false);
    let delta = VerbRequest {
        instance: shown(&path, "delta"),
        verb: Verb::Verify,
    };
    let (kind, detail, envelope) = execute(&runner, &delta);
    assert_eq!(
        (kind, detail.as_str()),
        (
            ActivityKind::Verified,
            "default check passed (exit 0, 12 ms); lease renewed: 1h 00m left"
        )
    );
    assert!(
        envelope.contains("\"lease_remaining_secs\":3600"),
        "{envelope}"
    );
    let alpha = VerbRequest {
        instance: shown(&path, "alpha"),
        verb: Verb::Verify,
    };
    let (kind, detail, envelope) = execute(&runner, &alpha);
    assert_eq!(
        (kind, detail.as_str()),
        (
            ActivityKind::VerifyFailed,
            "verify.failed: verify command exited with 3 (remediation: fix the verify script and re-run `stackless verify`)"
        )
    );
    assert!(envelope.contains("curl: (7) refused"), "{envelope}");
    assert_eq!(
        argv_log(dir.path()),
        ["[verify][delta][--json]", "[verify][alpha][--json]"]
    );
}

#[test]
fn a_name_born_again_or_gone_is_refused_and_nothing_runs() {
    let (dir, path) = idle_v14();
    let program = fake(dir.path(), &path);
    let (runner, _) = runner(&path, program, false);
    let delta = shown(&path, "delta");
    stores::exec(
        &path,
        "UPDATE instances SET instance_id = 'f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6', resource_namespace = 'sl-f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6' WHERE name = 'delta'",
    );
    let reborn = VerbRequest {
        instance: delta,
        verb: Verb::Renew { lease_secs: 60 },
    };
    assert_eq!(
        execute(&runner, &reborn),
        (
            ActivityKind::Aborted,
            "renew: the name was born again since it was shown (another instance_id); nothing run"
                .into(),
            String::new()
        )
    );
    let bravo = shown(&path, "bravo");
    stores::exec(
        &path,
        "DELETE FROM leases WHERE instance = 'bravo'; DELETE FROM instances WHERE name = 'bravo'",
    );
    let gone = VerbRequest {
        instance: bravo,
        verb: Verb::Verify,
    };
    assert_eq!(
        execute(&runner, &gone),
        (
            ActivityKind::Aborted,
            "verify: the instance is gone from the store; nothing run".into(),
            String::new()
        )
    );
    let mut hostile = shown(&path, "alpha");
    hostile.name = "alpha;rm".into();
    let hostile = VerbRequest {
        instance: hostile,
        verb: Verb::Verify,
    };
    assert_eq!(execute(&runner, &hostile).1, "refused: not a DNS-safe name");
    assert_eq!(argv_log(dir.path()), Vec::<String>::new());
}

#[test]
fn a_dry_run_says_what_would_run_and_runs_nothing() {
    let (dir, path) = idle_v14();
    let program = fake(dir.path(), &path);
    let (runner, list) = runner(&path, program.clone(), true);
    let request = VerbRequest {
        instance: shown(&path, "delta"),
        verb: Verb::Renew { lease_secs: 5400 },
    };
    assert_eq!(
        execute(&runner, &request),
        (
            ActivityKind::WouldRun,
            format!("{program} up --name delta --lease 1h30m --json (dry run: nothing run)"),
            String::new()
        )
    );
    // Through the recorder: one line, in the Activity list.
    runner.spawn(request).expect("spawn");
    let recorded = (0..200).find_map(|_| {
        std::thread::sleep(Duration::from_millis(10));
        list.lock().expect("list").first().cloned()
    });
    assert_eq!(recorded.expect("recorded").kind, ActivityKind::WouldRun);
    assert_eq!(argv_log(dir.path()), Vec::<String>::new());
    assert_eq!(lease(&path, "delta"), (3600, CAPTURE + 3600));
}

/// Right before it runs, an operation queued on the instance since it was
/// confirmed refuses the renew (it would queue behind it; behind a down it
/// would run as a new up) and nothing runs.
#[test]
fn an_operation_queued_since_it_was_confirmed_refuses_it() {
    let (dir, path) = idle_v14();
    let program = fake(dir.path(), &path);
    let (runner, _) = runner(&path, program, false);
    let request = VerbRequest {
        instance: shown(&path, "delta"),
        verb: Verb::Renew { lease_secs: 7200 },
    };
    stores::exec(
        &path,
        &format!(
            "INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
             VALUES ('late', 'delta', 'down', 'queued', 'null', {CAPTURE}, {CAPTURE});"
        ),
    );
    assert_eq!(
        execute(&runner, &request),
        (
            ActivityKind::Refused,
            "renew: refused: delta has a pending operation (down queued) now; nothing run".into(),
            String::new()
        )
    );
    assert_eq!(argv_log(dir.path()), Vec::<String>::new());
}

/// A fake whose `up` answers `body` with exit `code`, renewing delta's
/// lease in `store` to CAPTURE + 7200 first when `renews`.
fn fake_up(dir: &Path, store: &Path, renews: bool, code: i32, body: &str) -> String {
    let script = dir.join("stackless-up");
    let renew = if renews {
        format!(
            r#"python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute("UPDATE leases SET duration_secs = 7200, expires_at = ? WHERE instance = ?", ({}, sys.argv[2])); c.commit()' '{}' "$3""#,
            CAPTURE + 7200,
            store.display()
        )
    } else {
        String::new()
    };
    let text = format!("#!/bin/sh\n{renew}\ncat <<'JSON'\n{body}\nJSON\nexit {code}\n");
    std::fs::write(&script, text).expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// The lease is read back from this store after the `up`: an `ok` that left
/// it where it was acted on another store (not a success); a failed `up`
/// that renewed it says so.
#[test]
fn a_renew_reads_the_lease_back_from_this_store() {
    let (dir, path) = idle_v14();
    let ok = format!(
        r#"{{"schema_version":2,"ok":true,"instance":"delta","instance_id":"{DELTA_ID}"}}"#
    );
    let program = fake_up(dir.path(), &path, false, 0, &ok);
    let (verbs, _) = runner(&path, program, false);
    let request = VerbRequest {
        instance: shown(&path, "delta"),
        verb: Verb::Renew { lease_secs: 7200 },
    };
    assert_eq!(
        execute(&verbs, &request),
        (
            ActivityKind::RenewFailed,
            format!(
                "stackless answered, but the lease in {} did not move: is --stackless reaching another store? (pass a wrapper that points it at this store)",
                path.display()
            ),
            String::new()
        )
    );
    let failed = r#"{"ok":false,"error":{"schema_version":2,"code":"job.failed","message":"step prepare:web failed"}}"#;
    let program = fake_up(dir.path(), &path, true, 1, failed);
    let (verbs, _) = runner(&path, program, false);
    assert_eq!(
        execute(&verbs, &request).1,
        "the up failed (job.failed: step prepare:web failed) but the lease was renewed: expires in 2h 00m"
    );
}

/// A renew killed at its deadline says the command was killed but the
/// controller may still run its up.
#[test]
fn a_renew_killed_at_its_deadline_says_the_controller_may_still_run_it() {
    let (dir, path) = idle_v14();
    let script = dir.path().join("slow");
    std::fs::write(&script, "#!/bin/sh\nsleep 30\n").expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (mut verbs, _) = runner(&path, script.display().to_string(), false);
    verbs.deadline = Duration::from_secs(1);
    let request = VerbRequest {
        instance: shown(&path, "delta"),
        verb: Verb::Renew { lease_secs: 7200 },
    };
    assert_eq!(
        execute(&verbs, &request).1,
        "stackless up ran past its deadline (1s) and was killed, but the controller may still run its up: watch the Operations pane and the lease"
    );
}
