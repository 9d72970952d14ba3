//! An instance row as the agent writes it: the fields of
//! [`super::InstanceRow`] (docs/protocol.md, "Instance rows"), in its
//! order and under its names, borrowed from the snapshot's row, so no
//! text is copied before it is serialized (100,000 rows in the first
//! group). [`super::InstanceRow`] stays the one a client reads.

use serde::Serialize;

use super::{Inputs, LeaseRow, MAX_TEXT_CHARS, fit};
use crate::model::name::is_dns_safe;
use crate::model::rows::BirthStr;
use crate::model::{Instance, Snapshot};

/// [`super::InstanceRow`], borrowed.
#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    birth: Option<Birth<'a>>,
    dns_safe: bool,
    substrate: &'a str,
    status: &'a str,
    created_at: Option<i64>,
    tombstoned_at: Option<i64>,
    lease: Option<LeaseRow>,
    lock: Option<Lock<'a>>,
    dirty: Option<bool>,
    failed_up: bool,
    services_dead: i64,
    gc: Option<Gc>,
}

/// [`super::BirthRow`], borrowed.
#[derive(Serialize)]
struct Birth<'a> {
    instance_id: BirthStr<'a>,
    resource_namespace: Option<BirthStr<'a>>,
}

/// [`super::LockRow`], borrowed.
#[derive(Serialize)]
struct Lock<'a> {
    operation: &'a str,
    holder_pid: i64,
    holder_start_time: i64,
    holder_host: Option<&'a str>,
    acquired_at: i64,
    liveness_state: &'static str,
    held: bool,
}

/// [`super::GcRow`].
#[derive(Serialize)]
struct Gc {
    due_at: i64,
    collected_by: &'static str,
}

/// One instance row (docs/protocol.md, "Instance rows"): the fields of
/// `snapshot --json`'s instance that do not move with the clock, as JSON
/// text (serialized from the borrowed row; only a row with a text over
/// [`MAX_TEXT_CHARS`] goes through [`fit`]).
pub(super) fn instance_row(snapshot: &Snapshot, row: &Instance, inputs: Inputs) -> String {
    let out = Row {
        name: &row.name,
        birth: row.birth.as_ref().map(|b| Birth {
            instance_id: b.instance_id(),
            resource_namespace: Some(b.resource_namespace()),
        }),
        dns_safe: is_dns_safe(&row.name),
        substrate: &row.substrate,
        status: row.status.as_str(),
        created_at: row.created_at,
        tombstoned_at: row.tombstoned_at,
        lease: row.lease.map(LeaseRow::of),
        lock: row.lock.as_ref().map(|l| Lock {
            operation: &l.operation,
            holder_pid: l.holder_pid,
            holder_start_time: l.holder_start_time,
            holder_host: l.holder_host.as_deref(),
            acquired_at: l.acquired_at,
            liveness_state: inputs.liveness.word(),
            held: inputs.held,
        }),
        dirty: row.dirty,
        failed_up: inputs.failed_up,
        services_dead: i64::from(inputs.services_dead),
        gc: crate::model::gc::GcPreview::of(row, snapshot.generation).map(|p| Gc {
            due_at: p.due_at,
            collected_by: p.collector.as_str(),
        }),
    };
    let texts = [
        Some(out.name),
        Some(out.substrate),
        Some(out.status),
        out.birth
            .as_ref()
            .and_then(|b| b.resource_namespace.as_deref()),
        out.birth.as_ref().map(|b| b.instance_id.as_str()),
        out.lock.as_ref().map(|l| l.operation),
        out.lock.as_ref().and_then(|l| l.holder_host),
    ];
    let long = texts
        .iter()
        .flatten()
        .any(|t| t.len() > MAX_TEXT_CHARS && t.chars().nth(MAX_TEXT_CHARS).is_some());
    if long {
        return fit(serde_json::to_value(&out).unwrap_or(serde_json::Value::Null));
    }
    serde_json::to_string(&out).unwrap_or_default()
}
