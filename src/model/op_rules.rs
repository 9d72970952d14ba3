//! What the console reads out of a controller operation and what it may ask
//! of one (stackless 0.4.0; docs/stackless-releases.md, "Schema 14"): the
//! stored failure (`operations.error_json`, a Report v2), the operation id
//! check before an id goes on a command line, and the rule for `c`
//! (`stackless operation cancel ID`). Pure.
//!
//! A stored failure is read with [`super::envelope::parse_error`] (a bare
//! Report v2 object or a whole failure envelope).

use super::operation::{OpStatus, Operation};
use super::rows::{Instance, Status};

/// The longest operation id passed to `stackless` (uuids are 36).
pub(crate) const MAX_OPERATION_ID: usize = 64;

/// Whether `id` may be passed to `stackless operation cancel`: 1 to
/// [`MAX_OPERATION_ID`] characters of `[0-9A-Za-z-]`, not starting with `-`
/// (so it can never read as a flag). Ids come from the store, which another
/// process may have written.
#[must_use]
pub(crate) fn is_valid_operation_id(id: &str) -> bool {
    (1..=MAX_OPERATION_ID).contains(&id.len())
        && !id.starts_with('-')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// `3f2c…`: the first 4 characters of an id and an ellipsis (the whole id
/// when it is that short).
#[must_use]
pub(crate) fn short_id(id: &str) -> String {
    let mut chars = id.chars();
    let head: String = chars.by_ref().take(4).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// Why `c` refuses to cancel `op`, or `None` when it may ask stackless to.
/// The controller's own rule (core-0.4.0/src/state/operation.rs:265-272):
/// a queued operation of any verb is cancelled; a running `up` (or a
/// journaled `verify`) is asked to stop at its next step; a running `down`
/// or `gc` cannot be cancelled (it must reach a safe completion point). A
/// running `verify` is left to stackless to decide (only a journaled one can
/// be cancelled, which the store does not say).
#[must_use]
pub(crate) fn cancel_refusal(op: &Operation) -> Option<String> {
    if !is_valid_operation_id(&op.id) {
        return Some("operation id is not safe to pass to stackless".into());
    }
    match &op.status {
        OpStatus::Queued => None,
        OpStatus::Running if op.cancel_requested => {
            Some(format!("cancel already requested for {}", op.verb))
        }
        OpStatus::Running if matches!(op.verb.as_str(), "up" | "verify") => None,
        OpStatus::Running => Some(format!(
            "a running {} cannot be cancelled: it must reach a safe completion point",
            op.verb
        )),
        finished => Some(format!("operation already {finished}")),
    }
}

/// The arguments after the program that queue a teardown of `name`
/// (`down NAME --no-wait --json`, cli-0.4.0 src/cli.rs:78-83), the name one
/// element of its own; `None` when the name is not DNS-safe (it is never
/// put on a command line then).
#[must_use]
pub(crate) fn queue_down_args(name: &str) -> Option<[String; 4]> {
    super::name::is_dns_safe(name).then(|| {
        [
            "down".to_owned(),
            name.to_owned(),
            "--no-wait".to_owned(),
            "--json".to_owned(),
        ]
    })
}

/// Why `d` may not queue a teardown of `instance` behind `pending` (all its
/// queued or running operations on a schema-14 store, oldest first), or
/// `None` when it may run `stackless down NAME --no-wait --json`
/// (cli-0.4.0 src/cli.rs:306-310: the `down` goes into the controller's
/// durable queue and the command returns at once). The controller starts a
/// queued operation only while no other operation of the same name runs
/// (core-0.4.0 src/state/operation.rs:227-232), so the `down` runs after
/// the pending ones. Refused: a name that is not DNS-safe (it goes on a
/// command line), an instance that is not active, and any `down` already
/// pending, queued or running, first or not (a second one would only find
/// the instance torn down).
#[must_use]
pub(crate) fn queue_down_refusal(instance: &Instance, pending: &[&Operation]) -> Option<String> {
    if !super::name::is_dns_safe(&instance.name) {
        return Some(super::name::REFUSED_NOT_DNS_SAFE.into());
    }
    if instance.status != Status::Active {
        return Some("refused: not active".into());
    }
    if let Some(down) = pending.iter().find(|op| op.verb == "down") {
        return Some(format!(
            "refused: a down of {} is already {} (op {}); nothing queued",
            instance.name,
            down.status,
            short_id(&down.id)
        ));
    }
    None
}

/// The operation a `down` queued now really waits behind, among `pending`
/// (oldest first): the running one, else the newest queued; with the
/// others, all queued, in words (` and 1 queued verify`, ` and 2 queued
/// (up, verify)`, empty when there are none). `None` when nothing is
/// pending.
#[must_use]
pub(crate) fn queue_spot<'a>(pending: &[&'a Operation]) -> Option<(&'a Operation, String)> {
    let behind = pending
        .iter()
        .find(|op| op.status == OpStatus::Running)
        .or_else(|| pending.last())?;
    let others: Vec<&str> = pending
        .iter()
        .filter(|op| op.id != behind.id)
        .map(|op| op.verb.as_str())
        .collect();
    let mut verbs: Vec<&str> = Vec::new();
    for verb in &others {
        if !verbs.contains(verb) {
            verbs.push(verb);
        }
    }
    let words = match verbs.as_slice() {
        [] => String::new(),
        [verb] => format!(" and {} queued {verb}", others.len()),
        many => format!(" and {} queued ({})", others.len(), many.join(", ")),
    };
    Some((behind, words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(verb: &str, status: OpStatus) -> Operation {
        Operation {
            id: "3f2c9a1e-0000-4000-8000-000000000001".into(),
            instance: "alpha".into(),
            instance_id: None,
            verb: verb.into(),
            status,
            cancel_requested: false,
            created_at: 100,
            updated_at: 100,
            error_json: None,
            progress: None,
            ran: None,
        }
    }

    #[test]
    fn errors_bare_or_wrapped() {
        let bare = r#"{"schema_version":2,"code":"engine.source_override.shared","message":"service \"web\" is pinned","remediation":"run `stackless down a`","context":{"service":null}}"#;
        let e = crate::model::envelope::parse_error(bare).unwrap();
        assert_eq!(e.code, "engine.source_override.shared");
        assert_eq!(
            e.summary(),
            "engine.source_override.shared: service \"web\" is pinned"
        );
        assert_eq!(e.remediation.as_deref(), Some("run `stackless down a`"));
        let wrapped = r#"{"ok":false,"error":{"code":"state.lock.held","message":""}}"#;
        assert_eq!(
            crate::model::envelope::parse_error(wrapped)
                .unwrap()
                .summary(),
            "state.lock.held"
        );
        assert_eq!(crate::model::envelope::parse_error("}"), None);
        assert_eq!(crate::model::envelope::parse_error("{}"), None);
        assert_eq!(crate::model::envelope::parse_error(r#"{"code":5}"#), None);
    }

    #[test]
    fn operation_ids() {
        assert!(is_valid_operation_id(
            "3f2c9a1e-0000-4000-8000-000000000001"
        ));
        assert!(is_valid_operation_id("A"));
        assert!(!is_valid_operation_id(""));
        assert!(!is_valid_operation_id("-rf"));
        assert!(!is_valid_operation_id("a b"));
        assert!(!is_valid_operation_id("a;b"));
        assert!(!is_valid_operation_id(&"a".repeat(65)));
        assert!(is_valid_operation_id(&"a".repeat(64)));
        assert_eq!(short_id("3f2c9a1e"), "3f2c…");
        assert_eq!(short_id("3f2c"), "3f2c");
    }

    #[test]
    fn the_cancel_rule() {
        assert_eq!(cancel_refusal(&op("down", OpStatus::Queued)), None);
        assert_eq!(cancel_refusal(&op("up", OpStatus::Running)), None);
        assert_eq!(
            cancel_refusal(&op("down", OpStatus::Running)).as_deref(),
            Some("a running down cannot be cancelled: it must reach a safe completion point")
        );
        assert!(cancel_refusal(&op("gc", OpStatus::Running)).is_some());
        assert_eq!(
            cancel_refusal(&op("up", OpStatus::Failed)).as_deref(),
            Some("operation already failed")
        );
        let mut requested = op("up", OpStatus::Running);
        requested.cancel_requested = true;
        assert_eq!(
            cancel_refusal(&requested).as_deref(),
            Some("cancel already requested for up")
        );
        let mut hostile = op("down", OpStatus::Queued);
        hostile.id = "--help".into();
        assert!(cancel_refusal(&hostile).is_some());
    }

    #[test]
    fn the_queue_down_rule() {
        let mut alpha = crate::model::rows::Instance {
            name: "alpha".into(),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(1),
            tombstoned_at: None,
            lease: None,
            lock: None,
            anomalies: Default::default(),
            dirty: Some(false),
            birth: None,
        };
        let up = op("up", OpStatus::Running);
        let mut down = op("down", OpStatus::Queued);
        down.id = "7f5d0000-0000-4000-8000-000000000002".into();
        let mut verify = op("verify", OpStatus::Queued);
        verify.id = "9a9a0000-0000-4000-8000-000000000003".into();
        assert_eq!(queue_down_refusal(&alpha, &[&up]), None);
        assert_eq!(queue_down_refusal(&alpha, &[&verify]), None);
        assert_eq!(
            queue_down_refusal(&alpha, &[&down]).as_deref(),
            Some("refused: a down of alpha is already queued (op 7f5d…); nothing queued")
        );
        // The queued down behind a running up: not only the first pending.
        assert_eq!(
            queue_down_refusal(&alpha, &[&up, &verify, &down]).as_deref(),
            Some("refused: a down of alpha is already queued (op 7f5d…); nothing queued")
        );
        alpha.status = Status::Tombstoned;
        assert_eq!(
            queue_down_refusal(&alpha, &[&up]).as_deref(),
            Some("refused: not active")
        );
        alpha.status = Status::Active;
        alpha.name = "-rf".into();
        assert_eq!(
            queue_down_refusal(&alpha, &[&up]).as_deref(),
            Some("refused: not a DNS-safe name")
        );
        // What a down queued now waits behind: the running one, else the
        // newest queued; the others counted.
        let spot = |pending: &[&Operation]| {
            queue_spot(pending).map(|(op, others)| (op.verb.clone(), others))
        };
        assert_eq!(spot(&[]), None);
        assert_eq!(spot(&[&up]), Some(("up".into(), String::new())));
        assert_eq!(
            spot(&[&up, &verify]),
            Some(("up".into(), " and 1 queued verify".into()))
        );
        let mut up2 = op("up", OpStatus::Queued);
        up2.id = "4444".into();
        assert_eq!(
            spot(&[&verify, &up2]),
            Some(("up".into(), " and 1 queued verify".into()))
        );
        assert_eq!(
            spot(&[&up, &verify, &up2]),
            Some(("up".into(), " and 2 queued (verify, up)".into()))
        );
        assert_eq!(queue_down_args("-rf"), None);
        assert_eq!(queue_down_args("a b"), None);
        assert_eq!(
            queue_down_args("alpha").unwrap(),
            ["down", "alpha", "--no-wait", "--json"]
        );
    }
}
