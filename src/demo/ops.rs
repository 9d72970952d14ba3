//! The demo's operation rows as stackless 0.4.0 writes them (docs/
//! stackless-releases.md "Schema 14 (0.4.0)": `operations`,
//! `operation_events`, the Report v2 error object), shared by the demo's
//! seed ([`super::v14`]) and its stand-ins ([`super::controller`],
//! [`super::stackless`]).

use rusqlite::{Connection, OptionalExtension as _, params};
use serde_json::json;

/// How long each step of an operation takes, seconds.
pub(super) const STEP_SECS: i64 = 3;

/// The steps of `verb` on `service`: `(step_id, step_kind)`.
pub(super) fn steps(verb: &str, service: &str) -> Vec<(String, &'static str)> {
    match verb {
        "up" => vec![
            (format!("materialize:{service}"), "materialize"),
            (format!("start:{service}"), "start"),
            (format!("health:{service}"), "health_gate"),
        ],
        "down" => vec![
            (format!("stop:{service}"), "stop"),
            (format!("verify_gone:{service}"), "verify_gone"),
        ],
        _ => vec![("verify:stack".to_owned(), "verify")],
    }
}

/// The error object of a teardown that left a survivor (0.4.0 Report v2).
#[must_use]
pub(super) fn survivors(name: &str, instance_id: &str) -> String {
    let survivor = format!(
        "render:srv-{}",
        instance_id.get(..12).unwrap_or(instance_id)
    );
    error_object(
        "engine.teardown.survivors",
        name,
        &format!("teardown of \"{name}\" left survivors: [\"{survivor}\"]"),
        &format!(
            "these resources still exist and may bill or hold state: [\"{survivor}\"]; re-run `stackless down` to retry, or remove them on the substrate and re-run to verify"
        ),
    )
}

/// A Report v2 error object as 0.4.0 stores it in `error_json`.
#[must_use]
pub(super) fn error_object(code: &str, name: &str, message: &str, remediation: &str) -> String {
    json!({
        "code": code,
        "context": {"command": null, "exit_status": null, "hook": null, "log_hint": null,
                    "log_path": null, "log_tail": null, "service": null, "source_dir": null},
        "instance": name,
        "message": message,
        "remediation": remediation,
        "schema_version": 2,
    })
    .to_string()
}

/// Record step `index` (1-based) of `op_id` (a `verb` on `instance`'s
/// `service`) as `kind` (`Started`, `Completed`, `Failed`) at `at_ms`.
///
/// # Errors
/// `SQLite` errors.
pub(super) fn event(
    db: &Connection,
    op_id: &str,
    instance: &str,
    service: &str,
    index: usize,
    kind: &str,
    at_ms: i64,
) -> rusqlite::Result<()> {
    let verb: String = db
        .query_row("SELECT verb FROM operations WHERE id = ?1", [op_id], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or_else(|| "up".to_owned());
    let all = steps(&verb, service);
    let (step_id, step_kind) = all
        .get(index.saturating_sub(1))
        .cloned()
        .unwrap_or_else(|| (format!("step:{service}"), "step"));
    let event = json!({
        "at_epoch_ms": at_ms,
        "code": null,
        "duration_ms": (kind != "Started").then_some(STEP_SECS * 1000),
        "event": kind,
        "index": index,
        "instance": instance,
        "node": service,
        "step_id": step_id,
        "step_kind": step_kind,
        "total": all.len(),
    });
    db.execute(
        "INSERT INTO operation_events (operation_id, event_json, recorded_at) VALUES (?1, ?2, ?3)",
        params![op_id, event.to_string(), at_ms.div_euclid(1000)],
    )?;
    Ok(())
}

/// A demo operation id: uuid-shaped (8-4-4-4-12 lowercase hex), from
/// `seed` (a birth, or any text) and a sequence, the same every run.
pub(super) fn operation_id(seed: &str, sequence: u32) -> String {
    let fnv = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mix = |x: u64| {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let a = mix(fnv ^ u64::from(sequence));
    let b = mix(a);
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// One `operations` row.
pub(super) struct Operation<'a> {
    pub id: &'a str,
    pub instance: &'a str,
    pub instance_id: &'a str,
    pub verb: &'a str,
    pub status: &'a str,
    pub request: &'a str,
    pub result: Option<&'a str>,
    pub error: Option<&'a str>,
    pub created: i64,
    pub updated: i64,
}

/// Insert `op` as 0.4.0 writes one (`output_version` 1).
pub(super) fn insert_operation(tx: &Connection, op: &Operation<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO operations (id, instance, verb, status, request_json, result_json, \
         error_json, cancel_requested, created_at, updated_at, instance_id, output_version) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, ?9, ?10, 1)",
        params![
            op.id,
            op.instance,
            op.verb,
            op.status,
            op.request,
            op.result,
            op.error,
            op.created,
            op.updated,
            op.instance_id
        ],
    )?;
    Ok(())
}
