//! Tests of `super`: the lines two snapshots give, the downs before the
//! first one, whose each down and operation is (own, the lease reaper's,
//! someone else's), and an operation reported once.

use super::*;
use crate::model::rows::{Birth, Instance, Lease};

fn instance(name: &str, status: Status, birth: &str) -> Instance {
    Instance {
        name: name.into(),
        substrate: "local".into(),
        status,
        created_at: Some(1),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 60,
            expires_at: 2_000,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: Some(false),
        birth: Some(Birth::new(birth, &format!("sl-{birth}"))),
    }
}

fn op(id: &str, name: &str, verb: &str, status: OpStatus) -> Operation {
    Operation {
        id: id.into(),
        instance: name.into(),
        instance_id: None,
        verb: verb.into(),
        status,
        cancel_requested: false,
        created_at: 1_000,
        updated_at: 1_002,
        error_json: None,
        progress: None,
        ran: None,
    }
}

fn lines(prev: &Rows, next: &Rows) -> Vec<String> {
    changes(prev, next)
        .iter()
        .map(|c| {
            let a = c.activity(1_010);
            format!("{} {} {}: {}", a.actor, a.instance, a.kind, a.detail)
        })
        .collect()
}

#[test]
fn two_snapshots_give_exact_lines() {
    let prev = Rows {
        instances: vec![
            instance("alpha", Status::Active, "a1"),
            instance("bravo", Status::Active, "b1"),
            instance("delta", Status::Tombstoned, "d1"),
        ]
        .into(),
        operations: vec![
            op("op-1", "alpha", "down", OpStatus::Running),
            op("op-2", "bravo", "up", OpStatus::Queued),
            op("op-0", "delta", "down", OpStatus::Succeeded),
        ],
        ..Rows::default()
    };
    let mut failed = op("op-2", "bravo", "up", OpStatus::Failed);
    failed.error_json = Some(
        r#"{"schema_version":2,"code":"engine.source_override.shared","message":"service \"web\" --source path \"/src\" is already pinned by active instance \"alpha\""}"#
            .into(),
    );
    let next = Rows {
        instances: vec![
            instance("alpha", Status::Tombstoned, "a1"),
            instance("bravo", Status::Active, "b1"),
            instance("charlie", Status::Active, "c1"),
            instance("delta", Status::Active, "d2"),
        ]
        .into(),
        operations: vec![
            op("op-3", "charlie", "up", OpStatus::Running),
            failed,
            op("op-1", "alpha", "down", OpStatus::Succeeded),
            op("op-0", "delta", "down", OpStatus::Succeeded),
        ],
        ..Rows::default()
    };
    assert_eq!(
        lines(&prev, &next),
        [
            "observed alpha tombstoned: ",
            "observed charlie appeared: ",
            "observed delta appeared: born again",
            "controller bravo failed: up in ≤2s (queue wait included): engine.source_override.shared: service \"web\" --source path \"/src\" is already pinned by active instance \"alpha\"",
            "controller alpha succeeded: down in ≤2s (queue wait included)",
        ]
    );
    // The same snapshot again: nothing new.
    assert!(changes(&next, &next).is_empty());
}

/// The `down`s that finished in the hour before the first snapshot, as
/// the lines the counts hold: a lease reap (queued after its lease ran
/// out), a failure, a plain `down`; not an `up`, a pending `down`, one
/// an hour old, nor the one a restored teardown stands for.
#[test]
fn the_downs_of_the_last_hour_before_the_first_snapshot() {
    let at = |mut o: Operation, created: i64, ended: i64| {
        o.created_at = created;
        o.updated_at = ended;
        o
    };
    let mut failed = at(op("f", "bravo", "down", OpStatus::Failed), 4_000, 4_001);
    failed.error_json = Some(
        r#"{"schema_version":2,"code":"engine.teardown.survivors","message":"left survivors"}"#
            .into(),
    );
    let rows = Rows {
        instances: vec![
            instance("alpha", Status::Tombstoned, "a1"),
            instance("bravo", Status::Active, "b1"),
            instance("charlie", Status::Tombstoned, "c1"),
        ]
        .into(),
        operations: vec![
            at(op("q", "bravo", "down", OpStatus::Queued), 5_000, 5_000),
            at(op("u", "bravo", "up", OpStatus::Failed), 4_900, 4_901),
            failed,
            at(op("r", "alpha", "down", OpStatus::Succeeded), 3_000, 3_002),
            at(
                op("o", "charlie", "down", OpStatus::Succeeded),
                1_500,
                1_501,
            ),
            at(
                op("e", "charlie", "down", OpStatus::Succeeded),
                1_400,
                1_401,
            ),
            at(op("old", "alpha", "down", OpStatus::Failed), 1_000, 1_400),
        ],
        ..Rows::default()
    };
    let now = 1_400 + 3_600;
    let said = |restored: &[(&str, i64)]| -> Vec<String> {
        finished_downs_last_hour(&rows, restored, now)
            .iter()
            .map(|a| {
                format!(
                    "{} {} {} {}: {}",
                    a.at, a.actor, a.instance, a.kind, a.detail
                )
            })
            .collect()
    };
    assert_eq!(
        said(&[]),
        [
            "4001 controller bravo failed: down by its lease reaper: in ≤1s (queue wait included): engine.teardown.survivors: left survivors",
            "3002 controller alpha reaped: by its lease reaper (lease expired): down in ≤2s (queue wait included)",
            "1501 controller charlie succeeded: down in ≤1s (queue wait included)",
            "1401 controller charlie succeeded: down in ≤1s (queue wait included)",
        ]
    );
    // An earlier console's teardown of charlie ending at 1502: its own
    // `down` is left out, once.
    assert_eq!(
        said(&[("charlie", 1_502), ("alpha", 100)]),
        [
            "4001 controller bravo failed: down by its lease reaper: in ≤1s (queue wait included): engine.teardown.survivors: left survivors",
            "3002 controller alpha reaped: by its lease reaper (lease expired): down in ≤2s (queue wait included)",
            "1401 controller charlie succeeded: down in ≤1s (queue wait included)",
        ]
    );
}

/// A `down` the controller queued for a lease already run out is its
/// lease reaper's, and reads so (`reaped`, or `failed: down by its
/// lease reaper`); a `down` queued while the lease still ran reads as
/// the controller's operation.
#[test]
fn a_down_queued_after_the_lease_ran_out_is_the_lease_reapers() {
    let mut expired = instance("alpha", Status::Active, "a1");
    expired.lease = Some(Lease {
        duration_secs: 60,
        expires_at: 999,
    });
    let mut failing = instance("bravo", Status::Active, "b1");
    failing.lease = expired.lease;
    let prev = Rows {
        instances: vec![expired, failing, instance("charlie", Status::Active, "c1")].into(),
        operations: vec![
            op("op-1", "alpha", "down", OpStatus::Running),
            op("op-2", "bravo", "down", OpStatus::Running),
            op("op-3", "charlie", "down", OpStatus::Running),
        ],
        ..Rows::default()
    };
    let mut next = prev.clone();
    next.operations = vec![
        op("op-1", "alpha", "down", OpStatus::Succeeded),
        op("op-2", "bravo", "down", OpStatus::Failed),
        op("op-3", "charlie", "down", OpStatus::Succeeded),
    ];
    assert_eq!(
        lines(&prev, &next),
        [
            "controller alpha reaped: by its lease reaper (lease expired): down in ≤2s (queue wait included)",
            "controller bravo failed: down by its lease reaper: in ≤2s (queue wait included)",
            "controller charlie succeeded: down in ≤2s (queue wait included)",
        ]
    );
}

/// A finished operation's "took" is its run time, its wait in the
/// queue said apart.
#[test]
fn a_finished_operation_says_its_run_and_its_wait_apart() {
    let prev = Rows {
        operations: vec![op("op-1", "alpha", "down", OpStatus::Running)],
        ..Rows::default()
    };
    let mut done = op("op-1", "alpha", "down", OpStatus::Succeeded);
    done.updated_at = 1_199;
    done.ran = Some(crate::model::operation::Ran {
        started_ms: 1_199_300,
        last_ms: 1_199_712,
    });
    let next = Rows {
        operations: vec![done],
        ..Rows::default()
    };
    assert_eq!(
        lines(&prev, &next),
        ["controller alpha succeeded: down in 0.4s, after 3m 19s queued"]
    );
}

/// Each teardown of this console's claims one `down` of its instance,
/// created while it ran; the controller's lease reaper's `down`s
/// before and after it stay the controller's; a queued teardown's is
/// the one whose id the CLI answered.
#[test]
fn each_own_teardown_claims_one_down_created_while_it_ran() {
    let mut own = OwnDowns::default();
    let at = |id: &str, name: &str, verb: &str, created: i64| {
        let mut o = op(id, name, verb, OpStatus::Failed);
        o.created_at = created;
        o
    };
    own.started("foxtrot", OwnDown::Ran(Actor::Reaper), 1_000);
    // The lease reaper's, a minute before: not this console's.
    assert_eq!(own.claim(&at("op-0", "foxtrot", "down", 940)), None);
    // Two downs created while it ran (the CLI's and the lease reaper's
    // of the same second): one is its own, the other the controller's.
    assert_eq!(
        own.claim(&at("op-1", "foxtrot", "down", 1_001)),
        Some(OwnDown::Ran(Actor::Reaper))
    );
    assert_eq!(own.claim(&at("op-2", "foxtrot", "down", 1_001)), None);
    own.ended("foxtrot", 1_003);
    // Asked again, the same answers.
    assert_eq!(
        own.claim(&at("op-1", "foxtrot", "down", 1_001)),
        Some(OwnDown::Ran(Actor::Reaper))
    );
    // After it ended (within what the old grace of 120 s covered): the
    // controller's.
    assert_eq!(own.claim(&at("op-3", "foxtrot", "down", 1_060)), None);
    assert_eq!(own.claim(&at("op-4", "foxtrot", "down", 1_120)), None);
    // Another instance, another verb: never.
    assert_eq!(own.claim(&at("op-5", "golf", "down", 1_002)), None);
    assert_eq!(own.claim(&at("op-6", "foxtrot", "up", 1_002)), None);
    // The operator's queued teardown: the id answered wins over a
    // down claimed by time before the answer came.
    own.started("alpha", OwnDown::Queued, 2_000);
    assert_eq!(
        own.claim(&at("op-7", "alpha", "down", 2_001)),
        Some(OwnDown::Queued)
    );
    own.queued_as("alpha", "op-8");
    assert_eq!(
        own.claim(&at("op-8", "alpha", "down", 2_002)),
        Some(OwnDown::Queued)
    );
    assert_eq!(own.claim(&at("op-7", "alpha", "down", 2_001)), None);
}

/// The operator's renew and verify each claim the one operation of
/// their verb created while they ran (an `up`, a `verify`), not the
/// other's, nor a `down`; one created after they ended is the
/// controller's.
#[test]
fn the_operators_renew_and_verify_claim_their_own_operation() {
    let mut own = OwnDowns::default();
    let at = |id: &str, verb: &str, created: i64| {
        let mut o = op(id, "alpha", verb, OpStatus::Succeeded);
        o.created_at = created;
        o
    };
    own.started_verb("alpha", "verify", 1_000);
    own.started_verb("alpha", "up", 1_000);
    assert_eq!(own.claim(&at("d", "down", 1_001)), None);
    let mine = Some(OwnDown::Ran(Actor::Operator));
    assert_eq!(own.claim(&at("v", "verify", 1_001)), mine);
    assert_eq!(own.claim(&at("v2", "verify", 1_001)), None);
    own.ended_verb("alpha", "up", 1_004);
    assert_eq!(own.claim(&at("u", "up", 1_003)), mine);
    assert_eq!(own.claim(&at("u2", "up", 1_030)), None);
    assert_eq!(own.claim(&at("v", "verify", 1_001)), mine);
}

/// The outcome of the operator's queued teardown reads as the
/// operator's, a lease reaper's `down` or not; a failed verify is no
/// failed teardown.
#[test]
fn a_queued_down_is_the_operators_and_a_failed_verify_no_teardown() {
    let done = Observed::LeaseReaped(Box::new(op("op-1", "alpha", "down", OpStatus::Succeeded)));
    let a = done.as_operators(1_010).expect("an outcome");
    assert_eq!(
        (a.actor, a.kind, a.detail.as_str()),
        (
            Actor::Operator,
            ActivityKind::TornDown,
            "queued down ran: down in ≤2s (queue wait included)"
        )
    );
    let failed = Observed::Finished(Box::new(op("op-2", "alpha", "down", OpStatus::Failed)));
    let a = failed.as_operators(1_010).expect("an outcome");
    assert_eq!(
        (a.actor, a.kind, a.is_failed_teardown()),
        (Actor::Operator, ActivityKind::Failed, true)
    );
    let verify = Observed::Finished(Box::new(op("op-3", "alpha", "verify", OpStatus::Failed)));
    let a = verify.activity(1_010);
    assert_eq!(
        (a.kind, a.is_failed_teardown()),
        (ActivityKind::VerifyFailed, false)
    );
    let up = Observed::Finished(Box::new(op("op-4", "alpha", "up", OpStatus::Failed)));
    assert!(!up.activity(1_010).is_failed_teardown());
    assert!(failed.activity(1_010).is_failed_teardown());
    assert_eq!(
        Observed::Appeared {
            name: "alpha".into(),
            reborn: false
        }
        .as_operators(1_010),
        None
    );
}

#[test]
fn an_operation_that_ran_between_snapshots_is_reported_once() {
    let prev = Rows::default();
    let next = Rows {
        operations: vec![op("op-9", "echo", "gc", OpStatus::Cancelled)],
        ..Rows::default()
    };
    assert_eq!(
        lines(&prev, &next),
        ["controller echo cancelled: gc in ≤2s (queue wait included)"]
    );
    assert!(lines(&next, &next).is_empty());
}
