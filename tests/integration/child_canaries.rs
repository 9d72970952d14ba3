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
use stackless_tui::model::redact::Redactor;
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

/// A key whose whole name or one of its segments is `pass`, `pwd`, `auth`,
/// `session`, `sig`, `signature` or `access_key_id` names a credential in
/// a child's answer, JSON or text, any case (`PASS=`, `MYSQL_PWD=`,
/// `{"pwd":…}`); a word that only holds one (`compass`, `passenger`), a
/// dotted error code (`provider.auth: …`) and prose are left.
#[test]
fn child_answer_redacts_pass_and_pwd_keys() {
    let redactor = Redactor::default();
    assert_eq!(
        redactor.child_output(
            r#"{"ok":false,"error":{"code":"engine.failed","message":"down failed: PASS=CANARY_A {\"pwd\":\"CANARY_B\"}","details":{"pass":"CANARY_C","Pwd":"CANARY_D"}}}"#
        ),
        r#"{"ok":false,"error":{"code":"engine.failed","message":"down failed: PASS=[redacted] {\"pwd\":\"[redacted]\"}","details":{"pass":"[redacted]","Pwd":"[redacted]"}}}"#
    );
    assert_eq!(
        redactor.child_tail("MYSQL_PWD=CANARY_E\nDB_PASS=CANARY_F\n"),
        "MYSQL_PWD=[redacted]\nDB_PASS=[redacted]\n"
    );
    assert_eq!(
        redactor.child_tail("auth=A1 session=S1 access_key_id=K1\n"),
        "auth=[redacted] session=[redacted] access_key_id=[redacted]\n"
    );
    let plain = "a basic check; password reset succeeded; session started; passenger compass=north; provider.auth: denied\n";
    assert_eq!(redactor.child_tail(plain), plain);
}

/// A private key block in a child's stderr has its body redacted (the
/// markers stay), and so does a body the tail's start cut into, up to its
/// end marker.
#[test]
fn child_tail_redacts_a_private_key_block() {
    let redactor = Redactor::default();
    assert_eq!(
        redactor.child_tail(
            "error: cannot reach host\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAACANARYPEM\n-----END OPENSSH PRIVATE KEY-----\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowCANARYRSA\n-----END RSA PRIVATE KEY-----\n"
        ),
        "error: cannot reach host\n-----BEGIN OPENSSH PRIVATE KEY-----\n[redacted]\n-----END OPENSSH PRIVATE KEY-----\n-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----\n"
    );
    assert_eq!(
        redactor.child_tail("TDAwCANARYCUT\n-----END RSA PRIVATE KEY-----\ndone\n"),
        "[redacted]\n-----END RSA PRIVATE KEY-----\ndone\n"
    );
    // A log read line by line: each body line goes, the markers stay.
    assert_eq!(
        redactor.log_line(
            "MIIEowIBAAKCAQEAvRnr3xq0l2bO4cXkz1pX9yQ8mJt7uVwLdE5fGhKsNzAa",
            false,
            false
        ),
        "[redacted]"
    );
    let digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    assert_eq!(redactor.log_line(digest, false, false), digest);
}

/// A password given as a long flag's next word or on a netrc line in a
/// child's stderr is redacted; `-p` is never guessed.
#[test]
fn child_tail_redacts_password_flags_and_netrc() {
    assert_eq!(
        Redactor::default().child_tail(
            "mysql --password CANARY_G -u root\nmachine h login u password CANARY_H\nmysql -pX -p 5432\n"
        ),
        "mysql --password [redacted] -u root\nmachine h login u password [redacted]\nmysql -pX -p 5432\n"
    );
}

/// Bearer material without a credential-named key is redacted: a JWT, a
/// URL's signature parameter, userinfo without a scheme, well-known token
/// prefixes, an AWS access key id.
#[test]
fn child_answer_redacts_jwts_signatures_and_bare_userinfo() {
    let redactor = Redactor::default();
    assert_eq!(
        redactor.child_output(
            r#"{"ok":false,"error":{"code":"x.y","message":"m","details":{"jwt":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.CANARYJWTSIG"}}}"#
        ),
        r#"{"ok":false,"error":{"code":"x.y","message":"m","details":{"jwt":"[redacted]"}}}"#
    );
    assert_eq!(
        redactor.child_tail(
            "https://s3/x?X-Amz-Credential=AK&X-Amz-Signature=CANARY_SIG\nsig=CANARY_SIG2\ndeploy:CANARY_UI@host.example\n"
        ),
        "https://s3/x?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]\nsig=[redacted]\ndeploy:[redacted]@host.example\n"
    );
    assert_eq!(
        redactor.child_tail(
            "ghp_abcdefghij1234 AKIAIOSFODNN7EXAMPLE xoxp-123456789 git@github.com:o/r\n"
        ),
        "[redacted] [redacted] [redacted] git@github.com:o/r\n"
    );
}

/// A JSON credential field whose string value comes on the next log line
/// (`{"password":` then ` "x"}`) has that value replaced whole, as
/// `token:` then `x` has.
#[test]
fn a_json_credential_value_on_the_next_log_line_is_redacted() {
    let redactor = Redactor::default();
    let (first, open) = redactor.log_piece(r#"{"password":"#, false, false, false);
    let (second, still) = redactor.log_piece(r#" "CANARY_NEXT"}"#, false, false, open);
    assert_eq!(
        (first.as_ref(), open, second.as_ref(), still),
        (r#"{"password":"#, true, r#" "[redacted]"}"#, false)
    );
}

/// A log line's credentials written as command-line arguments are
/// redacted: `--password X`, `curl -u user:X`.
#[test]
fn command_line_credentials_in_a_log_line_are_redacted() {
    let redactor = Redactor::default();
    assert_eq!(
        redactor.log_line("mysql --password CANARY_FLAG", false, false),
        "mysql --password [redacted]"
    );
    assert_eq!(
        redactor.log_line("curl -u admin:CANARY_CURL https://x", false, false),
        "curl -u admin:[redacted] https://x"
    );
}
