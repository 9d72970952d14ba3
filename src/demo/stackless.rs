//! `stackless-tui demo-stackless --state PATH ARGS...`: the demo's
//! stand-in for the stackless 0.4.0 CLI on the 0.4.0 demo store, for the
//! commands the console runs (docs/stackless-releases.md "The CLI
//! (0.4.0)"), each answering on stdout as 0.4.0 does:
//!
//! - `operation cancel ID --json`: a queued operation is `cancelled`; a
//!   running `up`/`verify` gets `cancel_requested` (the controller stops it
//!   before its next step); a running `down`/`gc` is refused
//!   (`operation.not_cancellable`); a finished one is answered as it is;
//! - `up --name NAME --lease D --json`, `verify NAME --json`, `down NAME
//!   --json`: submit the operation to the queue and wait for the demo's
//!   controller stand-in ([`super::controller`]) to finish it;
//! - `down NAME --no-wait --json`: submit a `down` and answer it queued.
//!
//! It runs nothing else; anything else is refused with exit 2. The demo
//! console reaches it through a `stackless` wrapper script in its
//! temporary directory ([`wrapper`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension as _, params};

use crate::store::{Access, Store, StoreError};
use serde_json::{Value, json};

use super::ops::error_object;
use crate::model::name::is_dns_safe;

/// What the 0.4.0 demo says at start (the Activity pane): who plays
/// stackless.
pub const HELLO: &str = "demo store (stackless 0.4.0, schema 14): its controller and the \
    stackless commands are the demo's stand-ins (stackless-tui demo-stackless); nothing is deployed";

/// How long a submitted `up`, `verify` or `down` is waited for.
pub const WAIT: Duration = Duration::from_secs(120);

/// What the stand-in answered: exit status and stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// 0 success, 1 failure, 2 usage.
    pub exit: u8,
    /// One JSON document.
    pub stdout: String,
}

impl Answer {
    fn ok(doc: &Value) -> Self {
        Self {
            exit: 0,
            stdout: serde_json::to_string_pretty(doc).unwrap_or_default() + "\n",
        }
    }

    fn failed(error: &str) -> Self {
        let error: Value = serde_json::from_str(error).unwrap_or(Value::Null);
        Self {
            exit: 1,
            stdout: serde_json::to_string_pretty(&json!({"ok": false, "error": error}))
                .unwrap_or_default()
                + "\n",
        }
    }

    fn usage(message: &str) -> Self {
        Self {
            exit: 2,
            stdout: serde_json::to_string_pretty(&json!({"ok": false, "error": {
                "code": "cli.usage", "message": message, "schema_version": 2,
                "remediation": "the demo's stand-in runs only `operation cancel ID`, `up --name NAME --lease D`, `verify NAME`, `down NAME [--no-wait]`, each with --json"}}))
            .unwrap_or_default()
                + "\n",
        }
    }
}

/// `stackless-tui demo-stackless`: print [`answer`]'s stdout, return its
/// exit status.
#[must_use]
pub fn run(state: &Path, args: &[String]) -> ExitCode {
    let answer = answer(state, args, WAIT);
    let _ = std::io::stdout().write_all(answer.stdout.as_bytes());
    ExitCode::from(answer.exit)
}

/// Carry out `args` on the store at `state`, waiting up to `wait` for a
/// submitted operation to finish.
#[must_use]
pub fn answer(state: &Path, args: &[String], wait: Duration) -> Answer {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut store = match Store::open(state, Access::ReadWrite) {
        Ok(store) => store,
        Err(e) => return Answer::usage(&format!("cannot open {}: {e}", state.display())),
    };
    let store = &mut store;
    let done = match words.as_slice() {
        ["operation", "cancel", id, "--json"] => store.demo_write(|tx| cancel(tx, id)),
        ["up", "--name", name, "--lease", lease, "--json"] if is_dns_safe(name) => {
            let request = json!({"args": {"name": name, "lease": lease}, "verb": "up"});
            submit_and_wait(store, state, (name, "up"), &request, wait)
        }
        ["verify", name, "--json"] if is_dns_safe(name) => {
            let request = json!({"name": name, "verb": "verify"});
            submit_and_wait(store, state, (name, "verify"), &request, wait)
        }
        ["down", name, "--json"] if is_dns_safe(name) => {
            let request = json!({"name": name, "verb": "down"});
            submit_and_wait(store, state, (name, "down"), &request, wait)
        }
        ["down", name, "--no-wait", "--json"] if is_dns_safe(name) => store.demo_write(|tx| {
            let id = submit(tx, name, "down", &json!({"name": name, "verb": "down"}))?;
            Ok(Answer::ok(
                &json!({"ok": true, "command": "operation", "operation": operation(tx, &id)?}),
            ))
        }),
        _ => {
            return Answer::usage(&format!(
                "not a command the demo's stand-in runs: {}",
                args.join(" ")
            ));
        }
    };
    done.unwrap_or_else(|e| {
        Answer::failed(&error_object(
            "state.store.unavailable",
            "",
            &format!("state store {}: {e}", state.display()),
            "retry",
        ))
    })
}

/// The operation `id` as `stackless operation get --json` shows it.
fn operation(db: &Connection, id: &str) -> rusqlite::Result<Value> {
    db.query_row(
        "SELECT id, instance, instance_id, verb, status, cancel_requested, created_at, \
         updated_at, result_json, error_json FROM operations WHERE id = ?1",
        [id],
        |r| {
            let parse = |text: Option<String>| {
                text.and_then(|t| serde_json::from_str::<Value>(&t).ok())
                    .unwrap_or(Value::Null)
            };
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "instance": r.get::<_, String>(1)?,
                "instance_id": r.get::<_, Option<String>>(2)?,
                "verb": r.get::<_, String>(3)?,
                "status": r.get::<_, String>(4)?,
                "cancel_requested": r.get::<_, i64>(5)? != 0,
                "created_at": r.get::<_, i64>(6)?,
                "updated_at": r.get::<_, i64>(7)?,
                "output_version": 1,
                "result": parse(r.get(8)?),
                "error": parse(r.get(9)?),
            }))
        },
    )
}

/// `operation cancel ID`, as the 0.4.0 controller decides it
/// (core-0.4.0 src/state/operation.rs:265-272).
fn cancel(db: &Connection, id: &str) -> rusqlite::Result<Answer> {
    let found: Option<(String, String, String)> = db
        .query_row(
            "SELECT status, verb, instance FROM operations WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((status, verb, instance)) = found else {
        return Ok(Answer::failed(&error_object(
            "operation.not_found",
            "",
            &format!("no operation {id}"),
            "`stackless operation list` shows the operations",
        )));
    };
    let now = crate::model::time::unix_now();
    match (status.as_str(), verb.as_str()) {
        ("queued", _) => {
            let error = error_object(
                "operation.cancelled",
                &instance,
                &format!("{verb} of \"{instance}\" was cancelled before it started"),
                "run it again when it is wanted",
            );
            db.execute(
                "UPDATE operations SET status = 'cancelled', cancel_requested = 1, \
                 error_json = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, error, now],
            )?;
        }
        ("running", "up" | "verify") => {
            db.execute(
                "UPDATE operations SET cancel_requested = 1, updated_at = ?2 WHERE id = ?1",
                params![id, now],
            )?;
        }
        ("running", _) => {
            return Ok(Answer::failed(&error_object(
                "operation.not_cancellable",
                &instance,
                &format!(
                    "a running {verb} cannot be cancelled: it must reach a safe completion point"
                ),
                "wait for it to finish",
            )));
        }
        _ => {}
    }
    Ok(Answer::ok(
        &json!({"ok": true, "command": "operation", "operation": operation(db, id)?}),
    ))
}

/// Put a queued `verb` on `name` in the queue; its id.
fn submit(db: &Connection, name: &str, verb: &str, request: &Value) -> rusqlite::Result<String> {
    let instance_id: Option<String> = db
        .query_row(
            "SELECT instance_id FROM instances WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let id = super::ops::operation_id(&format!("{name} {verb} {nanos}"), std::process::id());
    let now = crate::model::time::unix_now();
    super::ops::insert_operation(
        db,
        &super::ops::Operation {
            id: &id,
            instance: name,
            instance_id: instance_id.as_deref().unwrap_or(""),
            verb,
            status: "queued",
            request: &request.to_string(),
            result: None,
            error: None,
            created: now,
            updated: now,
        },
    )?;
    Ok(id)
}

/// Submit, wait for the controller stand-in to finish, answer as the
/// 0.4.0 CLI does for `verb`.
fn submit_and_wait(
    store: &mut Store,
    state: &Path,
    (name, verb): (&str, &str),
    request: &Value,
    wait: Duration,
) -> Result<Answer, StoreError> {
    let id = store.demo_write(|tx| submit(tx, name, verb, request))?;
    let deadline = Instant::now() + wait;
    loop {
        let op = store.demo_write(|tx| operation(tx, &id))?;
        let status = op["status"].as_str().unwrap_or("");
        if !matches!(status, "queued" | "running") {
            return Ok(finished(name, verb, &op, state));
        }
        // The demo deletes its directory when it quits: nothing to wait for.
        if Instant::now() >= deadline || !state.exists() {
            return Ok(Answer::failed(&error_object(
                "operation.timeout",
                name,
                &format!(
                    "{verb} of \"{name}\" is still {status}: the demo's controller stand-in did not finish it"
                ),
                "is the demo console still running?",
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What the stand-in's verify check prints, written to its output file.
pub const VERIFY_OUTPUT: &str = "demo check: GET / -> 200 OK\ndemo check: passed (this is the demo's stand-in, not stackless)\n";

/// Write a passed verify's output under the demo's state dir (beside the
/// store at `state`), as 0.4.0 keeps a verify's output in
/// `<state_dir>/logs/<namespace>/verify.log`: its absolute path, or the
/// relative one when it cannot be written.
fn verify_log(state: &Path, instance_id: &str) -> String {
    let relative = format!("logs/sl-{instance_id}/verify.log");
    let Some(dir) = state.parent() else {
        return relative;
    };
    let path = dir.join(&relative);
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, VERIFY_OUTPUT));
    match written {
        Ok(()) => path.display().to_string(),
        Err(_) => relative,
    }
}

/// The CLI's answer for a finished operation `op`; a verify's output is
/// written beside the store at `state`.
fn finished(name: &str, verb: &str, op: &Value, state: &Path) -> Answer {
    if op["status"] != "succeeded" {
        return Answer::failed(&op["error"].to_string());
    }
    let result = &op["result"];
    match verb {
        "down" => Answer::ok(&json!({"schema_version": 2, "ok": true, "instance": name,
            "outcome": if result["status"] == "AlreadyDown" { "already_down" } else { "destroyed" }})),
        "verify" => Answer::ok(&json!({"schema_version": 2, "ok": true, "instance": name,
            "tier": null, "duration_ms": result["duration_ms"], "exit_status": 0,
            "log_path": verify_log(state, result["instance_id"].as_str().unwrap_or("")),
            "lease_remaining_secs": result["lease_remaining_secs"]})),
        _ => Answer::ok(&json!({"schema_version": 2, "ok": true, "instance": name,
            "instance_id": result["instance_id"], "duration_ms": result["duration_ms"],
            "executed": [], "skipped": []})),
    }
}

/// Write `<dir>/stackless`, a shell wrapper that runs `exe demo-stackless
/// --state state ARGS...`: the program the demo console's `c`, `L`, `v`,
/// queued `d` and teardowns run (`--stackless` names one program).
///
/// # Errors
/// I/O errors writing it.
pub fn wrapper(dir: &Path, exe: &Path, state: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("stackless");
    let script = format!(
        "#!/bin/sh\n# The stackless-tui demo's stand-in for stackless 0.4.0 (not stackless).\nexec {} demo-stackless --state {} \"$@\"\n",
        shell_words::quote(&exe.to_string_lossy()),
        shell_words::quote(&state.to_string_lossy()),
    );
    std::fs::write(&path, script)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}
