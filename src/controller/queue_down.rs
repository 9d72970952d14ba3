//! `stackless down NAME --no-wait --json` (stackless 0.4.0,
//! cli-0.4.0 src/cli.rs:306-310): the operator's `d` on an instance with a
//! queued or running controller operation puts a `down` in the
//! controller's durable queue, behind that operation (the controller starts
//! a queued operation only while no other of the same name runs:
//! core-0.4.0 src/state/operation.rs:227-232). Run as argv (never through a
//! shell), the name one element, with a deadline; its result is one
//! [`Activity`] for the [`crate::recorder::Recorder`].
//!
//! What stackless answers (stdout, pretty-printed JSON; cli-0.4.0
//! src/output.rs:617-628):
//! - exit 0, `{"ok":true,"command":"operation","operation":{"id":...,
//!   "verb":"down","status":"queued",...}}`: queued;
//! - exit 1, `{"ok":false,"error":{"code","message",...}}`: refused (no
//!   controller, a draining one).

use std::ffi::OsString;
use std::time::Duration;

use serde::Deserialize;

use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::envelope::EnvelopeError;
use crate::model::op_rules::{is_valid_operation_id, queue_down_args, short_id};

/// How long `down --no-wait` may take before it is killed: it submits one
/// request to the controller (starting its daemon when none runs) and does
/// not wait for the teardown.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// How `down --no-wait` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The controller accepted the `down`: its operation id (checked, or
    /// empty when stackless answered one that is not safe to show) and the
    /// status it answered (`queued`, or already `running`).
    Queued {
        /// `operation.id`.
        id: String,
        /// `operation.status`.
        status: String,
    },
    /// stackless refused (`ok: false`): its error, as the Activity keeps it.
    Refused(EnvelopeError, String),
    /// The command did not run or did not answer as stackless does.
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
    id: String,
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
        ) => Outcome::Queued {
            id: if is_valid_operation_id(&op.id) {
                op.id
            } else {
                String::new()
            },
            status: op.status,
        },
        (
            Some(_),
            Some(Answer {
                ok: Some(false) | None,
                error: Some(error),
                ..
            }),
        ) => Outcome::Refused(error, stdout.trim().to_owned()),
        (code, _) => Outcome::Failed(super::answer::failure(code, stdout)),
    }
}

/// The argv for `name`: `program down NAME --no-wait --json`.
///
/// # Errors
/// The name is not DNS-safe (never put on a command line then).
pub fn argv(program: &OsString, name: &str) -> Result<Vec<OsString>, String> {
    let args = queue_down_args(name).ok_or_else(|| "not a DNS-safe name".to_owned())?;
    let mut argv = vec![program.clone()];
    argv.extend(args.into_iter().map(OsString::from));
    Ok(argv)
}

/// The argv as the Activity shows it (lossy, unquoted words joined by
/// spaces: every element is a DNS-safe name or a fixed word, bar the
/// program).
#[must_use]
pub fn shown(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run `argv` (already checked) and read its answer; killed with its
/// process group after `timeout`.
pub async fn run(argv: &[OsString], timeout: Duration) -> Outcome {
    match super::answer::answer(argv, timeout).await {
        Ok((code, stdout)) => interpret(code, &stdout),
        Err(why) => Outcome::Failed(why),
    }
}

/// The operator's Activity for `outcome` on `name` (queued behind its
/// `behind`) at `at`: `queued` with `down queued behind its up (op
/// 3f2c…)`, `refused` with `queued teardown refused: <code>: <message>`
/// (the envelope kept), or an `error`.
#[must_use]
pub fn activity(name: &str, behind: &str, outcome: &Outcome, at: i64) -> Activity {
    match outcome {
        Outcome::Queued { id, status } => {
            let op = if id.is_empty() {
                String::new()
            } else {
                format!(" (op {})", short_id(id))
            };
            let detail = if status == "queued" {
                format!("down queued behind its {behind}{op}")
            } else {
                format!("down {status} (submitted behind its {behind}){op}")
            };
            let queued = Activity::new(at, Actor::Operator, name, ActivityKind::Queued, detail);
            if id.is_empty() {
                queued
            } else {
                queued.with_operation(crate::model::activity::OpRef {
                    id: id.clone(),
                    verb: "down".to_owned(),
                    error: String::new(),
                })
            }
        }
        Outcome::Refused(error, envelope) => Activity::new(
            at,
            Actor::Operator,
            name,
            ActivityKind::Refused,
            format!("queued teardown refused: {}", error.summary()),
        )
        .with_envelope(envelope),
        Outcome::Failed(why) => Activity::new(
            at,
            Actor::Operator,
            name,
            ActivityKind::Error,
            format!("queued teardown: {why}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let queued = r#"{
  "ok": true,
  "command": "operation",
  "operation": {"id": "3f2c9a1e-0000-4000-8000-000000000001", "instance": "alpha", "verb": "down", "status": "queued"}
}"#;
        let outcome = interpret(Some(0), queued);
        assert_eq!(
            outcome,
            Outcome::Queued {
                id: "3f2c9a1e-0000-4000-8000-000000000001".into(),
                status: "queued".into()
            }
        );
        let a = activity("alpha", "up", &outcome, 7);
        assert_eq!(
            (a.at, a.actor, a.kind, a.detail.as_str()),
            (
                7,
                Actor::Operator,
                ActivityKind::Queued,
                "down queued behind its up (op 3f2c…)"
            )
        );
        let hostile = r#"{"ok":true,"operation":{"id":"--x y","status":"running"}}"#;
        let outcome = interpret(Some(0), hostile);
        assert_eq!(
            activity("alpha", "up", &outcome, 7).detail,
            "down running (submitted behind its up)"
        );
        let refused = r#"{"ok":false,"error":{"schema_version":2,"code":"cli.bad_argument","message":"controller is draining; reconnect after restart"}}"#;
        let outcome = interpret(Some(1), refused);
        let a = activity("alpha", "up", &outcome, 7);
        assert_eq!(a.kind, ActivityKind::Refused);
        assert_eq!(
            a.detail,
            "queued teardown refused: cli.bad_argument: controller is draining; reconnect after restart"
        );
        assert_eq!(a.envelope, refused);
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
        let argv = argv(&program, "alpha").unwrap();
        assert_eq!(argv, ["stackless", "down", "alpha", "--no-wait", "--json"]);
        assert_eq!(shown(&argv), "stackless down alpha --no-wait --json");
        assert!(super::argv(&program, "--all").is_err());
        assert!(super::argv(&program, "a;rm -rf /").is_err());
    }

    #[test]
    fn a_fake_stackless_gets_one_argv_and_is_killed_at_the_deadline() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stackless");
        std::fs::write(
            &path,
            "#!/bin/sh\n[ \"$#\" -eq 4 ] && [ \"$1\" = down ] && [ \"$3\" = --no-wait ] || { echo \"bad argv: $*\"; exit 2; }\n\
             [ \"$2\" = slow ] && exec sleep 30\n\
             printf '{\"ok\":true,\"command\":\"operation\",\"operation\":{\"id\":\"q-1\",\"verb\":\"down\",\"instance\":\"%s\",\"status\":\"queued\"}}' \"$2\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let program = path.into_os_string();
        // Retried only for the rare `ETXTBSY` of a just-written script.
        let go = |name: &str, timeout| {
            (0..20)
                .map(|_| runtime.block_on(run(&argv(&program, name).unwrap(), timeout)))
                .find(|o| !matches!(o, Outcome::Failed(w) if w.contains("Text file busy")))
                .unwrap()
        };
        assert_eq!(
            go("alpha", TIMEOUT),
            Outcome::Queued {
                id: "q-1".into(),
                status: "queued".into()
            }
        );
        let started = std::time::Instant::now();
        assert_eq!(
            go("slow", Duration::from_millis(300)),
            Outcome::Failed("timed out after 300ms".into())
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
