//! `stackless operation cancel ID --json` (stackless 0.4.0; spec §3.5,
//! cli-0.4.0/src/controller.rs:270-287): the operator's `c`, run as argv
//! (never through a shell) on a tokio task, so the render loop never waits
//! for it, with a deadline, its result reported as one [`Activity`] through
//! the [`Recorder`] (the Activity pane, the audit trail, the log).
//!
//! What stackless answers (stdout, pretty-printed JSON):
//! - exit 0, `{"ok":true,"command":"operation","operation":{...,"status":
//!   "cancelled","cancel_requested":true}}`: a queued operation is
//!   cancelled;
//! - exit 0, the same with `"status":"running"`: a running `up` stops at its
//!   next step;
//! - exit 0 with another status: the operation had already finished;
//! - exit 1, `{"ok":false,"error":{"code","message",...}}`: refused (a
//!   running `down`/`gc`, an unknown id).

use std::ffi::OsString;
use std::time::Duration;

use serde::Deserialize;

use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::envelope::EnvelopeError;
use crate::model::op_rules::{is_valid_operation_id, short_id};
use crate::recorder::Recorder;

/// The program run when neither `--stackless` nor `STACKLESS_BIN` names one.
pub const DEFAULT_PROGRAM: &str = "stackless";

/// How long `operation cancel` may take before it is killed (it is one RPC
/// to the controller).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// What to cancel, as the UI saw it (the confirm named it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelRequest {
    /// `operations.id`.
    pub id: String,
    /// `operations.instance` (the name).
    pub instance: String,
    /// `operations.verb`.
    pub verb: String,
}

/// How `operation cancel` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The operation is now cancelled (it was queued).
    Cancelled,
    /// A cancel was recorded on a running operation (`status` stays
    /// `running`): an `up` stops at its next step.
    Requested,
    /// The operation had already finished with this status; nothing changed.
    AlreadyFinished(String),
    /// stackless refused (`ok: false`).
    Refused(EnvelopeError),
    /// The command did not run or did not answer as stackless does (could
    /// not start, timed out, killed, unreadable output).
    Failed(String),
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    operation: Option<AnsweredOperation>,
    #[serde(default)]
    error: Option<EnvelopeError>,
}

#[derive(Deserialize)]
struct AnsweredOperation {
    #[serde(default)]
    status: String,
}

/// Read stackless's answer: its exit code (`None`: killed by a signal) and
/// stdout.
#[must_use]
pub fn interpret(code: Option<i32>, stdout: &str) -> Outcome {
    let answer = serde_json::from_str::<Answer>(stdout.trim()).ok();
    match (code, answer) {
        (
            Some(0),
            Some(Answer {
                ok: Some(true),
                operation: Some(op),
                ..
            }),
        ) => match op.status.as_str() {
            "cancelled" => Outcome::Cancelled,
            "running" | "queued" => Outcome::Requested,
            other => Outcome::AlreadyFinished(other.to_owned()),
        },
        (
            Some(_),
            Some(Answer {
                ok: Some(false) | None,
                error: Some(error),
                ..
            }),
        ) => Outcome::Refused(error),
        (code, _) => Outcome::Failed(super::answer::failure(code, stdout)),
    }
}

/// The argv for `request`: `program operation cancel ID --json`.
///
/// # Errors
/// The id is not 1-64 characters of `[0-9A-Za-z-]` (it came from the
/// store; never put on a command line unchecked).
pub fn argv(program: &OsString, id: &str) -> Result<Vec<OsString>, String> {
    if !is_valid_operation_id(id) {
        return Err("operation id is not safe to pass to stackless".into());
    }
    Ok(vec![
        program.clone(),
        "operation".into(),
        "cancel".into(),
        id.into(),
        "--json".into(),
    ])
}

/// Run `program operation cancel ID --json` and read its answer; killed
/// after `timeout`.
pub async fn run(program: &OsString, id: &str, timeout: Duration) -> Outcome {
    let argv = match argv(program, id) {
        Ok(argv) => argv,
        Err(why) => return Outcome::Failed(why),
    };
    match super::answer::answer(&argv, timeout).await {
        Ok((code, stdout)) => interpret(code, &stdout),
        Err(why) => Outcome::Failed(why),
    }
}

/// The operator's Activity for `outcome` at `at`: `cancelled` with `down
/// alpha (op 3f2c…)` (a queued one: the store shows it cancelled), `cancel
/// requested` with `up alpha stops at its next step (op 3f2c…)` (a running
/// one: `cancelled` is said when the store shows it), `refused` with `cancel refused: <code>:
/// <message>`, or an `error`.
#[must_use]
pub fn activity(request: &CancelRequest, outcome: &Outcome, at: i64) -> Activity {
    let what = format!(
        "{} {} (op {})",
        request.verb,
        request.instance,
        short_id(&request.id)
    );
    let (kind, detail) = match outcome {
        Outcome::Cancelled => (ActivityKind::Cancelled, what),
        Outcome::Requested => (
            ActivityKind::CancelRequested,
            format!(
                "{} {} stops at its next step (op {})",
                request.verb,
                request.instance,
                short_id(&request.id)
            ),
        ),
        Outcome::AlreadyFinished(status) => (
            ActivityKind::Refused,
            format!("cancel refused: {what} had already {status}"),
        ),
        Outcome::Refused(error) => (
            ActivityKind::Refused,
            format!("cancel refused: {}", error.summary()),
        ),
        Outcome::Failed(why) => (ActivityKind::Error, format!("cancel of {what}: {why}")),
    };
    Activity::new(at, Actor::Operator, &request.instance, kind, detail)
}

/// Cancel on a task of `runtime`, reporting through `recorder` (stamped with
/// `clock()`, unix seconds). Returns at once.
pub fn spawn(
    runtime: &tokio::runtime::Handle,
    program: OsString,
    request: CancelRequest,
    recorder: Recorder,
    clock: fn() -> i64,
) {
    runtime.spawn(async move {
        let outcome = run(&program, &request.id, TIMEOUT).await;
        recorder.record(activity(&request, &outcome, clock()));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let cancelled = r#"{
  "ok": true,
  "command": "operation",
  "operation": {"id": "x", "status": "cancelled", "cancel_requested": true}
}"#;
        assert_eq!(interpret(Some(0), cancelled), Outcome::Cancelled);
        let running = r#"{"ok":true,"command":"operation","operation":{"status":"running","cancel_requested":true}}"#;
        assert_eq!(interpret(Some(0), running), Outcome::Requested);
        let done = r#"{"ok":true,"operation":{"status":"succeeded"}}"#;
        assert_eq!(
            interpret(Some(0), done),
            Outcome::AlreadyFinished("succeeded".into())
        );
        let refused = r#"{"ok":false,"error":{"schema_version":2,"code":"cli.bad_argument","message":"bad argument operation: unknown operation \"x\""}}"#;
        let Outcome::Refused(error) = interpret(Some(1), refused) else {
            panic!("refused");
        };
        assert_eq!(error.code, "cli.bad_argument");
        assert_eq!(
            interpret(Some(2), "error: unexpected argument\n"),
            Outcome::Failed("exited with status 2: error: unexpected argument".into())
        );
        assert_eq!(
            interpret(None, ""),
            Outcome::Failed("killed by a signal".into())
        );
    }

    #[test]
    fn argv_is_checked() {
        let program = OsString::from("stackless");
        assert_eq!(
            argv(&program, "3f2c").unwrap(),
            ["stackless", "operation", "cancel", "3f2c", "--json"]
        );
        assert!(argv(&program, "--all").is_err());
        assert!(argv(&program, "a;rm -rf").is_err());
    }

    /// A fake `stackless` that checks its argv is exactly `operation cancel
    /// ID --json` and answers as stackless 0.4.0 does (spec §3.5) for a few
    /// ids.
    const FAKE: &str = r#"#!/bin/sh
if [ "$#" -ne 4 ] || [ "$1" != operation ] || [ "$2" != cancel ] || [ "$4" != --json ]; then
  echo "bad argv: $*"
  exit 2
fi
case "$3" in
  queued-1) cat <<'JSON'
{
  "ok": true,
  "command": "operation",
  "operation": {
    "instance_id": null,
    "output_version": 0,
    "id": "queued-1",
    "instance": "alpha",
    "verb": "down",
    "status": "cancelled",
    "result": null,
    "error": null,
    "cancel_requested": true,
    "created_at": 1760000000,
    "updated_at": 1760000003
  }
}
JSON
  exit 0 ;;
  running-up) cat <<'JSON'
{
  "ok": true,
  "command": "operation",
  "operation": {
    "instance_id": "0123456789abcdef0123456789abcdef",
    "output_version": 0,
    "id": "running-up",
    "instance": "bravo",
    "verb": "up",
    "status": "running",
    "result": null,
    "error": null,
    "cancel_requested": true,
    "created_at": 1760000000,
    "updated_at": 1760000003
  }
}
JSON
  exit 0 ;;
  running-down) cat <<'JSON'
{
  "ok": false,
  "error": {
    "schema_version": 2,
    "code": "cli.bad_argument",
    "message": "bad argument operation: this operation cannot be cancelled while running; it must reach a safe completion point",
    "remediation": "fix the operation value; see `stackless --help`",
    "context": {"service": null, "hook": null, "command": null, "source_dir": null, "log_path": null, "log_hint": null, "exit_status": null, "log_tail": null}
  }
}
JSON
  exit 1 ;;
  slow) exec sleep 30 ;;
  orphan) sleep 30 & echo $! > "$(dirname "$0")/orphan.pid"; wait ;;
  *) echo "unexpected id $3"; exit 3 ;;
esac
"#;

    fn fake() -> (tempfile::TempDir, OsString) {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stackless");
        std::fs::write(&path, FAKE).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, path.into_os_string())
    }

    /// Run, retrying the rare `ETXTBSY` of executing a just-written script
    /// while another test thread forks.
    fn cancel(program: &OsString, id: &str, timeout: Duration) -> Outcome {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for _ in 0..20 {
            let outcome = runtime.block_on(run(program, id, timeout));
            match &outcome {
                Outcome::Failed(why) if why.contains("Text file busy") => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                _ => return outcome,
            }
        }
        panic!("the fake stayed busy");
    }

    fn request(id: &str, instance: &str, verb: &str) -> CancelRequest {
        CancelRequest {
            id: id.into(),
            instance: instance.into(),
            verb: verb.into(),
        }
    }

    fn line(request: &CancelRequest, outcome: &Outcome) -> (ActivityKind, String) {
        let a = activity(request, outcome, 0);
        assert_eq!(
            (a.actor, a.instance.as_str()),
            (Actor::Operator, request.instance.as_str())
        );
        (a.kind, a.detail)
    }

    #[test]
    fn against_a_fake_stackless() {
        let (_dir, program) = fake();
        let queued = request("queued-1", "alpha", "down");
        let outcome = cancel(&program, &queued.id, TIMEOUT);
        assert_eq!(outcome, Outcome::Cancelled);
        assert_eq!(
            line(&queued, &outcome),
            (ActivityKind::Cancelled, "down alpha (op queu…)".into())
        );
        let up = request("running-up", "bravo", "up");
        let outcome = cancel(&program, &up.id, TIMEOUT);
        assert_eq!(outcome, Outcome::Requested);
        assert_eq!(
            line(&up, &outcome),
            (
                ActivityKind::CancelRequested,
                "up bravo stops at its next step (op runn…)".into()
            )
        );
        let down = request("running-down", "charlie", "down");
        let outcome = cancel(&program, &down.id, TIMEOUT);
        assert_eq!(
            line(&down, &outcome),
            (
                ActivityKind::Refused,
                "cancel refused: cli.bad_argument: bad argument operation: this operation cannot be cancelled while running; it must reach a safe completion point".into()
            )
        );
        let Outcome::Refused(error) = outcome else {
            panic!("refused");
        };
        assert_eq!(
            error.remediation.as_deref(),
            Some("fix the operation value; see `stackless --help`")
        );
        // An id the script does not expect proves the argv check passed.
        assert_eq!(
            cancel(&program, "other", TIMEOUT),
            Outcome::Failed("exited with status 3: unexpected id other".into())
        );
    }

    #[test]
    fn a_hung_stackless_is_killed_at_the_deadline() {
        let (_dir, program) = fake();
        let started = std::time::Instant::now();
        assert_eq!(
            cancel(&program, "slow", Duration::from_millis(300)),
            Outcome::Failed("timed out after 300ms".into())
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        // What it started goes with it (its own process group).
        let (dir, program) = fake();
        assert_eq!(
            cancel(&program, "orphan", Duration::from_millis(500)),
            Outcome::Failed("timed out after 500ms".into())
        );
        let pid: i32 = std::fs::read_to_string(dir.path().join("orphan.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            // Killed, then reaped by init (or a zombie of ours no longer).
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.contains(") Z "))
        });
        assert!(gone, "the grandchild {pid} outlived the deadline");
        let missing = OsString::from("/nonexistent/stackless");
        let Outcome::Failed(why) = cancel(&missing, "queued-1", TIMEOUT) else {
            panic!("cannot run");
        };
        assert!(
            why.starts_with("cannot run /nonexistent/stackless: "),
            "{why}"
        );
        // A hostile id never reaches a command line.
        assert_eq!(
            cancel(&missing, "--help", TIMEOUT),
            Outcome::Failed("operation id is not safe to pass to stackless".into())
        );
    }

    #[test]
    fn spawn_reports_through_the_recorder() {
        let (_dir, program) = fake();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let recorder = Recorder::new(None, crate::recorder::Forward::Console(tx));
        // Retried only for the rare `ETXTBSY` of a just-written script.
        let activity = (0..20)
            .find_map(|_| {
                spawn(
                    runtime.handle(),
                    program.clone(),
                    request("running-down", "charlie", "down"),
                    recorder.clone(),
                    || 42,
                );
                let event = runtime.block_on(async {
                    tokio::time::timeout(Duration::from_secs(20), rx.recv()).await
                });
                let Ok(Some(crate::event::Event::Activity(activity))) = event else {
                    panic!("no activity: {event:?}");
                };
                (!activity.detail.contains("Text file busy")).then_some(activity)
            })
            .expect("the fake stayed busy");
        assert_eq!(activity.at, 42);
        assert_eq!(activity.kind, ActivityKind::Refused);
    }
}
