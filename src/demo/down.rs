//! `stackless-tui demo-down --state PATH NAME [--json]`: a stand-in for
//! `stackless down NAME --json` on the demo store, with the contract's
//! observable behaviour ("`down --json` output", §6 step 4):
//!
//! - success: `status = 'tombstoned'`, `tombstoned_at = now`, the lease, the
//!   `reap_attempts` row and the (stale) lock row deleted, in one immediate
//!   transaction; stdout empty, prose on stderr, exit 0;
//! - already tombstoned: success, nothing changed;
//! - a lock held by a live process or a foreign host: `state.lock.held`;
//! - an instance whose name starts with `flaky-`: teardown "leaves a
//!   survivor" (`engine.teardown.survivors`), pretty-printed over several
//!   lines as stackless prints it;
//! - no such instance: `state.instance.not_found`;
//! - a name that is not DNS-safe: refused with exit 2 (defence in depth).
//!
//! Failures print one JSON envelope on stdout and prose on stderr.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::model::liveness::liveness;
use crate::model::name::is_dns_safe;
use crate::model::{OpLock, Status};
use crate::store::probe::{HostProbe, SysinfoProbe};
use crate::store::{Access, Store};

/// How long `run` pretends the teardown takes, so the console's `tearing
/// down` state is visible.
pub const TEARDOWN_DELAY: Duration = Duration::from_millis(1500);

/// Instances whose name starts with this always fail their teardown.
pub const FLAKY_PREFIX: &str = "flaky-";

/// Envelope code: the teardown left resources behind.
pub const SURVIVORS_CODE: &str = "engine.teardown.survivors";
/// Envelope code: no instance with that name.
pub const NOT_FOUND_CODE: &str = "state.instance.not_found";
/// Envelope code: the name is not DNS-safe.
pub const INVALID_NAME_CODE: &str = "state.instance.invalid_name";
/// Envelope code: the store could not be opened or written.
pub const STORE_CODE: &str = "state.store.unavailable";

/// What a `down` run produced, as a process would: exit status, stdout and
/// stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownOutcome {
    /// The exit status: 0 success, 1 failure, 2 refused usage.
    pub exit: u8,
    /// stdout: empty on success, one JSON envelope on failure.
    pub stdout: String,
    /// stderr: human prose.
    pub stderr: String,
}

impl DownOutcome {
    fn success(stderr: String) -> Self {
        Self {
            exit: 0,
            stdout: String::new(),
            stderr,
        }
    }

    fn failure(
        exit: u8,
        instance: Option<&str>,
        code: &str,
        message: &str,
        remediation: &str,
    ) -> Self {
        let mut error = json!({
            "schema_version": 1,
            "code": code,
            "message": message,
        });
        if let Some(instance) = instance {
            error["instance"] = json!(instance);
        }
        error["remediation"] = json!(remediation);
        let envelope = json!({ "ok": false, "error": error });
        let stdout = serde_json::to_string_pretty(&envelope).unwrap_or_default() + "\n";
        Self {
            exit,
            stdout,
            stderr: format!("error: {message}\n  hint: {remediation}\n"),
        }
    }
}

/// `stackless-tui demo-down`: wait [`TEARDOWN_DELAY`], run [`tear_down`] at
/// the current time, print its stdout and stderr, and return its exit status.
#[must_use]
pub fn run(state: &Path, name: &str) -> ExitCode {
    std::thread::sleep(TEARDOWN_DELAY);
    let outcome = tear_down(state, name, crate::model::time::unix_now());
    // A closed pipe is the caller's business; the exit status still tells.
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.exit)
}

/// The teardown itself, at `now` (unix seconds), with lock liveness probed
/// through `sysinfo` as stackless does. No delay.
#[must_use]
pub fn tear_down(state: &Path, name: &str, now: i64) -> DownOutcome {
    tear_down_with(state, name, now, &mut SysinfoProbe::new())
}

/// [`tear_down`] with an explicit liveness probe.
#[must_use]
pub fn tear_down_with(
    state: &Path,
    name: &str,
    now: i64,
    probe: &mut dyn HostProbe,
) -> DownOutcome {
    if !is_dns_safe(name) {
        return DownOutcome::failure(
            2,
            None,
            INVALID_NAME_CODE,
            &format!("{name:?} is not a DNS-safe instance name"),
            "instance names are 1-63 characters of a-z, 0-9 and '-', starting with a letter \
             and not ending with '-'",
        );
    }
    match try_tear_down(state, name, now, probe) {
        Ok(outcome) => outcome,
        Err(message) => DownOutcome::failure(
            1,
            Some(name),
            STORE_CODE,
            &message,
            "check the --state path and retry",
        ),
    }
}

fn try_tear_down(
    state: &Path,
    name: &str,
    now: i64,
    probe: &mut dyn HostProbe,
) -> Result<DownOutcome, String> {
    let store = Store::open(state, Access::ReadWrite).map_err(|e| e.to_string())?;
    let sql_err = |e: rusqlite::Error| format!("state store {}: {e}", state.display());
    let down = store.begin_demo_down().map_err(sql_err)?;
    let status = down.status(name).map_err(sql_err)?;
    let Some(status) = status else {
        return Ok(DownOutcome::failure(
            1,
            Some(name),
            NOT_FOUND_CODE,
            &format!("no instance named {name:?} in this state store"),
            "run `stackless list` to see the instances this store knows",
        ));
    };
    if Status::parse(&status) == Status::Tombstoned {
        return Ok(DownOutcome::success(format!(
            "{name} is already torn down; nothing to do\n"
        )));
    }
    let lock = down.op_lock(name).map_err(sql_err)?;
    if let Some(refusal) = lock.and_then(|lock| held_lock(name, &lock, probe)) {
        return Ok(refusal);
    }
    if name.starts_with(FLAKY_PREFIX) {
        let survivor = down.first_checkpoint(name).map_err(sql_err)?;
        return Ok(survivors(name, survivor));
    }
    down.mark_tombstoned(name, now).map_err(sql_err)?;
    append_log(&store.state_dir(), name);
    Ok(DownOutcome::success(format!("tore down {name}\n")))
}

/// The refusal when `lock` on `name` is held by a live process (liveness
/// as stackless probes it, contract §2); `None` when it is stale.
fn held_lock(name: &str, lock: &OpLock, probe: &mut dyn HostProbe) -> Option<DownOutcome> {
    let host = probe.host_name().map(str::to_owned);
    let held = liveness(lock, host.as_deref(), |pid| probe.live_start_time(pid));
    if !held.held() {
        return None;
    }
    let where_ = lock
        .holder_host
        .as_deref()
        .filter(|h| !h.is_empty())
        .unwrap_or("this host");
    Some(DownOutcome::failure(
        1,
        Some(name),
        crate::model::envelope::LOCK_HELD_CODE,
        &format!(
            "instance {name:?} is locked by `{}` (pid {} on {where_})",
            lock.operation, lock.holder_pid
        ),
        "another operation is in progress on this instance; wait for it to finish and \
         try again",
    ))
}

/// A flaky instance's failure: its first checkpoint, `(resource_kind,
/// resource_id)`, survives, as stackless names a survivor.
fn survivors(name: &str, survivor: Option<(String, String)>) -> DownOutcome {
    let survivor = survivor.map_or_else(
        || format!("service {name}"),
        |(kind, id)| {
            let substrate = kind.split('.').next().unwrap_or(&kind).to_owned();
            format!("{substrate}:{id}")
        },
    );
    DownOutcome::failure(
        1,
        Some(name),
        SURVIVORS_CODE,
        &format!("teardown of {name:?} left survivors: [{survivor:?}]"),
        &format!(
            "these resources still exist and may bill or hold state: [{survivor:?}]; re-run \
             `stackless down` to retry, or remove them on the substrate and re-run to verify"
        ),
    )
}

/// Best effort: note the teardown in `<state_dir>/logs/<name>/stackless.log`
/// when that directory exists (`name` is DNS-safe, so it is a safe path).
fn append_log(state_dir: &Path, name: &str) {
    let dir = state_dir.join("logs").join(name);
    if !dir.is_dir() {
        return;
    }
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("stackless.log"))
    {
        let _ = writeln!(file, "down: torn down; verified nothing remains");
    }
}
