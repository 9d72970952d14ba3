//! No secret a child answers survives into an Activity (and so into any
//! sink the Activity goes to): a fake `stackless` whose every answer fails
//! with a canary in each place a credential hides, asked for the
//! operator's renew and verify (`reaper::verbs`), `operation cancel` and
//! a queued `down --no-wait` (`controller`). The teardown's own sinks are
//! read in `tests/e2e/canaries.rs`.

use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::CAPTURE;
use crate::common::stores;
use stackless_tui::controller::{cancel, queue_down};
use stackless_tui::event::Activity;
use stackless_tui::model::verbs::Verb;
use stackless_tui::reaper::verbs::{VerbRequest, VerbRunner};
use stackless_tui::recorder::{Forward, Recorder};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

const CANARIES: [&str; 7] = [
    "CANARY1", "CANARY2", "CANARY3", "CANARY4", "CANARY5", "CANARY6", "CANARY7",
];

/// A `stackless` that fails every command: the envelope on stdout, the
/// credentials on stderr (both in files beside it).
fn leaky_stackless(dir: &Path) -> String {
    std::fs::write(
        dir.join("envelope.json"),
        r#"{"schema_version":2,"ok":false,"error":{"code":"provider.auth","message":"rejected {\"client_secret\":\"CANARY2\"} token=CANARY3 at https://u:CANARY5@db.example/x","context":{"password":"CANARY1","log_tail":"Authorization: Bearer CANARY4"}}}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("stderr.txt"),
        "Authorization: Bearer CANARY4\nX-Api-Key: CANARY6\nretry with Basic CANARY7\n",
    )
    .unwrap();
    let script = dir.join("stackless");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat '{}'\ncat '{}' >&2\nexit 1\n",
            dir.join("envelope.json").display(),
            dir.join("stderr.txt").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// Every canary in any text of `activity`.
fn leaks(activity: &Activity) -> Vec<String> {
    let texts = [
        ("detail", &activity.detail),
        ("envelope", &activity.envelope),
        ("stderr", &activity.stderr_tail),
    ];
    let mut found = Vec::new();
    for (what, text) in texts {
        for canary in CANARIES {
            if text.contains(canary) {
                found.push(format!("{canary} in {what}: {text}"));
            }
        }
    }
    found
}

/// `run` again while it could not execute the just-written script
/// (`ETXTBSY`: another test thread forked while it was open for writing).
fn unbusy<T>(mut run: impl FnMut() -> T, text: impl Fn(&T) -> String) -> T {
    for _ in 0..20 {
        let done = run();
        if !text(&done).contains("Text file busy") {
            return done;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the fake stayed busy");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_failing_renew_and_verify_answer_no_canary() {
    let (dir, path) = stores::v14();
    stores::exec(
        &path,
        "UPDATE operations SET status = 'succeeded' WHERE instance = 'delta' AND status IN ('queued', 'running')",
    );
    let program = leaky_stackless(dir.path());
    let delta = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe::default())
        .unwrap()
        .instance("delta")
        .cloned()
        .unwrap();
    let list = Arc::new(Mutex::new(Vec::new()));
    let runner = VerbRunner {
        path: path.clone(),
        program,
        dry_run: false,
        recorder: Recorder::new(None, Forward::Collect(list)),
        clock: Arc::new(|| CAPTURE),
        deadline: Duration::from_secs(30),
        running: stackless_tui::reaper::InFlight::default(),
    };
    for verb in [Verb::Renew { lease_secs: 7200 }, Verb::Verify] {
        let request = VerbRequest {
            instance: delta.clone(),
            verb,
        };
        let activity = unbusy(|| runner.execute(&request), |a| a.detail.clone());
        assert!(
            activity.detail.contains("provider.auth"),
            "{verb:?}: {activity:?}"
        );
        assert_eq!(leaks(&activity), Vec::<String>::new(), "{verb:?}");
        // The envelope kept is the redacted answer, whole.
        let envelope: serde_json::Value = serde_json::from_str(&activity.envelope).unwrap();
        assert_eq!(
            envelope["error"]["message"],
            "rejected {\"client_secret\":\"[redacted]\"} token=[redacted] at https://[redacted]@db.example/x",
            "{verb:?}"
        );
        assert_eq!(envelope["error"]["context"]["password"], "[redacted]");
    }
}

#[test]
fn a_failing_cancel_and_queued_down_answer_no_canary() {
    let dir = tempfile::tempdir().unwrap();
    let program = OsString::from(leaky_stackless(dir.path()));
    let rt = runtime();
    let request = cancel::CancelRequest {
        id: "op-1".into(),
        instance: "alpha".into(),
        verb: "up".into(),
    };
    let outcome = unbusy(
        || rt.block_on(cancel::run(&program, &request.id, Duration::from_secs(30))),
        |o| format!("{o:?}"),
    );
    let activity = cancel::activity(&request, &outcome, CAPTURE);
    assert_eq!(
        activity.detail,
        "cancel refused: provider.auth: rejected {\"client_secret\":\"[redacted]\"} token=[redacted] at https://[redacted]@db.example/x"
    );
    assert_eq!(leaks(&activity), Vec::<String>::new());

    let argv = queue_down::argv(&program, "alpha").unwrap();
    let outcome = unbusy(
        || rt.block_on(queue_down::run(&argv, Duration::from_secs(30))),
        |o| format!("{o:?}"),
    );
    let activity = queue_down::activity("alpha", "up", &outcome, CAPTURE);
    assert!(activity.detail.contains("provider.auth"), "{activity:?}");
    assert_eq!(leaks(&activity), Vec::<String>::new());
}
