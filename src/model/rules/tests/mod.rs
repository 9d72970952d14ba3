//! Tests of `super`: the instance's actions (reap, down, queue down,
//! cancel, renew, verify) admitted or refused in the keys' words, and a
//! store's first rows; who runs the reaper and the controller's start in
//! `tests/controller.rs`.

use super::*;
use crate::model::{Birth, Generation, Lease, OpLock, ReapAttempt, Rows};

mod controller;

const NOW: i64 = 1_795_960_686;
const ID: &str = "0123456789abcdef0123456789abcdef";

fn instance(name: &str, status: Status, expires_at: Option<i64>) -> Instance {
    Instance {
        name: name.into(),
        substrate: "local".into(),
        status,
        created_at: Some(NOW - 1000),
        tombstoned_at: None,
        lease: expires_at.map(|e| Lease {
            duration_secs: 7200,
            expires_at: e,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: None,
        birth: Some(Birth::new(ID, &format!("sl-{ID}"))),
    }
}

fn op(id: &str, instance: &str, verb: &str, status: OpStatus) -> Operation {
    Operation {
        id: id.into(),
        instance: instance.into(),
        instance_id: None,
        verb: verb.into(),
        status,
        cancel_requested: false,
        created_at: NOW - 5,
        updated_at: NOW - 5,
        error_json: None,
        progress: None,
        ran: None,
    }
}

fn attempt(name: &str) -> ReapAttempt {
    ReapAttempt {
        instance: name.into(),
        attempts: 2,
        last_error: "boom".into(),
        next_retry_at: NOW + 60,
    }
}

/// A schema-14 store: `expired` (lease ran out, a backoff), `fresh`
/// (lease left), `tomb` (tombstoned), `locked` (a live lock),
/// `busy` (a queued up), `downing` (a running down), `nolease` (a
/// failed up), `x;y` (not DNS-safe).
fn snapshot() -> Snapshot {
    let mut locked = instance("locked", Status::Active, Some(NOW - 1));
    locked.lock = Some(Box::new(OpLock {
        operation: "up".into(),
        holder_pid: 1,
        holder_start_time: 1,
        acquired_at: 1,
        holder_host: None,
        claim_id: None,
    }));
    let mut snapshot = Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: vec![
            instance("busy", Status::Active, Some(NOW - 1)),
            instance("downing", Status::Active, Some(NOW - 1)),
            instance("expired", Status::Active, Some(NOW - 1)),
            instance("fresh", Status::Active, Some(NOW + 100)),
            locked,
            instance("nolease", Status::Active, None),
            instance("tomb", Status::Tombstoned, None),
            instance("x;y", Status::Active, Some(NOW - 1)),
        ]
        .into(),
        operations: vec![
            op("op-busy", "busy", "up", OpStatus::Queued),
            op("op-downing", "downing", "down", OpStatus::Running),
            op("op-done", "fresh", "up", OpStatus::Succeeded),
        ],
        reap_attempts: vec![attempt("expired")],
        ..Rows::default()
    });
    snapshot
        .liveness_mut()
        .insert("locked".into(), Liveness::Alive);
    snapshot
}

fn settings() -> Settings {
    Settings {
        stackless: "stackless".into(),
        ..Settings::default()
    }
}

fn admit_at(
    action: &Action,
    snapshot: &Snapshot,
    settings: &Settings,
    now: i64,
) -> Result<Admitted, Refusal> {
    admit(
        action,
        &Context {
            snapshot,
            settings,
            in_flight: &InFlight::default(),
            now,
        },
    )
}

fn asked(name: &str) -> Asked {
    Asked::by_id(name.into(), Some(ID.into()))
}

fn refused(instance: &str, words: &str) -> Result<Admitted, Refusal> {
    Err(Refusal {
        instance: instance.into(),
        words: words.into(),
        audited: true,
    })
}

fn said(words: &str) -> Result<Admitted, Refusal> {
    Err(Refusal {
        instance: String::new(),
        words: words.into(),
        audited: false,
    })
}

fn with_id(name: &str, s: &Snapshot) -> Instance {
    s.instance(name).cloned().expect("in the fixture")
}

#[test]
fn reap_is_admitted_once_the_lease_ran_out_at_now() {
    let s = snapshot();
    let mut fresh = instance("fresh", Status::Active, Some(NOW + 100));
    fresh.created_at = Some(NOW - 1000);
    let action = Action::Reap(asked("fresh"));
    assert_eq!(
        admit_at(&action, &s, &settings(), NOW + 99),
        refused(
            "fresh",
            "refused: lease has not expired (use d to tear down)"
        )
    );
    assert_eq!(
        admit_at(&action, &s, &settings(), NOW + 100),
        Ok(Admitted {
            effect: Effect::Reap {
                instance: fresh,
                attempt: None
            },
            words: "reap requested for fresh".into()
        })
    );
    assert_eq!(
        admit_at(&Action::Reap(asked("expired")), &s, &settings(), NOW),
        Ok(Admitted {
            effect: Effect::Reap {
                instance: with_id("expired", &s),
                attempt: Some(attempt("expired"))
            },
            words: "reap requested for expired".into()
        })
    );
}

#[test]
fn reap_refusals_in_the_keys_words() {
    let s = snapshot();
    let reap = |name: &str| Action::Reap(asked(name));
    let ok = settings();
    for (name, words) in [
        ("nobody", NO_SUCH_INSTANCE),
        ("tomb", "refused: not active"),
        ("x;y", crate::model::name::REFUSED_NOT_DNS_SAFE),
        ("locked", "refused: locked (alive)"),
        (
            "busy",
            "refused: operation pending (up queued); the controller runs it first",
        ),
    ] {
        assert_eq!(
            admit_at(&reap(name), &s, &ok, NOW),
            refused(name, words),
            "{name}"
        );
    }
    let doubt = Settings {
        clock_doubt: true,
        ..settings()
    };
    assert_eq!(
        admit_at(&reap("expired"), &s, &doubt, NOW),
        refused("expired", CLOCK_REFUSAL)
    );
    let off = Settings {
        write_keys_off: Some("read-only".into()),
        ..settings()
    };
    assert_eq!(
        admit_at(&reap("expired"), &s, &off, NOW),
        refused("expired", "read-only")
    );
    let born_again = Action::Reap(Asked::by_id("expired".into(), Some("f".repeat(32))));
    assert_eq!(
        admit_at(&born_again, &s, &ok, NOW),
        refused(
            "expired",
            &format!(
                "refused: the birth asked about ({}) is not the instance's ({ID}): it was born again, or another store was read",
                "f".repeat(32)
            )
        )
    );
}

#[test]
fn a_teardown_in_flight_refuses_reap_and_down_first() {
    let s = snapshot();
    let ok = settings();
    let mut in_flight = InFlight::default();
    in_flight.teardowns.insert("expired".into());
    in_flight.settling.insert("fresh".into());
    let cx = Context {
        snapshot: &s,
        settings: &ok,
        in_flight: &in_flight,
        now: NOW,
    };
    assert_eq!(
        admit(&Action::Reap(asked("expired")), &cx),
        refused("expired", TEARDOWN_RUNNING)
    );
    assert_eq!(
        admit(&Action::Down(asked("fresh")), &cx),
        refused("fresh", TEARDOWN_SETTLING)
    );
    let verbs_running = InFlight {
        verbs: ["verify fresh".to_owned()].into(),
        ..InFlight::default()
    };
    let cx = Context {
        in_flight: &verbs_running,
        ..cx
    };
    assert_eq!(
        admit(&Action::Verify(asked("fresh")), &cx),
        refused(
            "fresh",
            "refused: a verify of it is already running; nothing run"
        )
    );
}

#[test]
fn a_teardown_in_flight_refuses_renew_and_verify_of_it() {
    let s = snapshot();
    let ok = settings();
    let mut in_flight = InFlight::default();
    in_flight.teardowns.insert("fresh".into());
    in_flight.settling.insert("expired".into());
    let cx = Context {
        snapshot: &s,
        settings: &ok,
        in_flight: &in_flight,
        now: NOW,
    };
    assert_eq!(
        admit(&Action::Renew(asked("fresh"), Some(600)), &cx),
        refused(
            "fresh",
            "refused: a teardown of it is running: a renew now would race it; nothing run"
        )
    );
    assert_eq!(
        admit(&Action::Verify(asked("expired")), &cx),
        refused(
            "expired",
            "refused: a teardown of it is running: a verify now would race it; nothing run"
        )
    );
}

#[test]
fn down_admits_any_active_instance_and_sends_a_pending_one_to_queue_down() {
    let s = snapshot();
    let ok = settings();
    assert_eq!(
        admit_at(&Action::Down(asked("fresh")), &s, &ok, NOW),
        Ok(Admitted {
            effect: Effect::TearDown {
                instance: with_id("fresh", &s),
                attempt: None
            },
            words: "teardown requested for fresh".into()
        })
    );
    assert_eq!(
        admit_at(&Action::Down(asked("busy")), &s, &ok, NOW),
        refused(
            "busy",
            "refused: busy has a queued up now: ask again to queue a teardown behind it (`d`, or the command `queue_down`)"
        )
    );
    assert_eq!(
        admit_at(&Action::Down(asked("downing")), &s, &ok, NOW),
        refused(
            "downing",
            "refused: a down of downing is already running (op op-d…); nothing queued"
        )
    );
    assert_eq!(
        admit_at(&Action::Down(asked("tomb")), &s, &ok, NOW),
        refused("tomb", "refused: not active")
    );
}

#[test]
fn queue_down_waits_behind_the_pending_operation() {
    let s = snapshot();
    let ok = settings();
    let queue = |name: &str, behind: Option<&str>| Action::QueueDown {
        target: asked(name),
        behind: behind.map(str::to_owned),
    };
    assert_eq!(
        admit_at(&queue("busy", None), &s, &ok, NOW),
        Ok(Admitted {
            effect: Effect::QueueDown {
                instance: with_id("busy", &s),
                behind: "up".into()
            },
            words: "queueing a teardown of busy behind its up".into()
        })
    );
    assert_eq!(
        admit_at(&queue("fresh", None), &s, &ok, NOW),
        refused(
            "fresh",
            "refused: nothing is queued or running on fresh: send down"
        )
    );
    assert_eq!(
        admit_at(&queue("fresh", Some("up")), &s, &ok, NOW),
        refused(
            "fresh",
            "refused: the up it would wait behind has ended; press d again"
        )
    );
    assert_eq!(
        admit_at(&queue("downing", None), &s, &ok, NOW),
        refused(
            "downing",
            "refused: a down of downing is already running (op op-d…); nothing queued"
        )
    );
}

#[test]
fn cancel_follows_the_controllers_rule() {
    let s = snapshot();
    let ok = settings();
    let cancel = |id: &str| Action::Cancel(id.into());
    assert_eq!(
        admit_at(&cancel("op-busy"), &s, &ok, NOW),
        Ok(Admitted {
            effect: Effect::Cancel {
                id: "op-busy".into(),
                instance: "busy".into(),
                verb: "up".into()
            },
            words: "cancel requested for up busy (op op-b…)".into()
        })
    );
    assert_eq!(
        admit_at(&cancel("op-downing"), &s, &ok, NOW),
        refused(
            "downing",
            "a running down cannot be cancelled: it must reach a safe completion point"
        )
    );
    assert_eq!(
        admit_at(&cancel("op-done"), &s, &ok, NOW),
        refused("fresh", "operation already succeeded")
    );
    assert_eq!(
        admit_at(&cancel("op-gone"), &s, &ok, NOW),
        refused("", "refused: no operation op-gone is shown")
    );
    let off = Settings {
        cancel_off: Some("read-only".into()),
        ..settings()
    };
    assert_eq!(
        admit_at(&cancel("op-busy"), &s, &off, NOW),
        refused("", "read-only")
    );
    let old = Snapshot::from(Rows {
        generation: Generation::new(5),
        ..Rows::default()
    });
    assert_eq!(
        admit_at(&cancel("op-busy"), &old, &ok, NOW),
        refused("", "store schema v5 has no controller operations")
    );
}

#[test]
fn renew_and_verify_admit_the_command_as_it_will_run() {
    let s = snapshot();
    let ok = settings();
    let fresh = with_id("fresh", &s);
    let argv = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        admit_at(&Action::Renew(asked("fresh"), None), &s, &ok, NOW),
        Ok(Admitted {
            effect: Effect::Verb {
                request: VerbRequest {
                    instance: fresh.clone(),
                    verb: Verb::Renew { lease_secs: 7200 }
                },
                argv: argv(&[
                    "stackless",
                    "up",
                    "--name",
                    "fresh",
                    "--lease",
                    "2h",
                    "--json"
                ])
            },
            words: "renew requested for fresh".into()
        })
    );
    assert_eq!(
        admit_at(&Action::Renew(asked("fresh"), Some(60)), &s, &ok, NOW),
        Ok(Admitted {
            effect: Effect::Verb {
                request: VerbRequest {
                    instance: fresh.clone(),
                    verb: Verb::Renew { lease_secs: 60 }
                },
                argv: argv(&[
                    "stackless",
                    "up",
                    "--name",
                    "fresh",
                    "--lease",
                    "1m",
                    "--json"
                ])
            },
            words: "renew requested for fresh".into()
        })
    );
    assert_eq!(
        admit_at(&Action::Verify(asked("fresh")), &s, &ok, NOW),
        Ok(Admitted {
            effect: Effect::Verb {
                request: VerbRequest {
                    instance: fresh,
                    verb: Verb::Verify
                },
                argv: argv(&["stackless", "verify", "fresh", "--json"])
            },
            words: "verify requested for fresh".into()
        })
    );
}

#[test]
fn renew_and_verify_refusals_in_the_keys_words() {
    let s = snapshot();
    let ok = settings();
    let renew = |name: &str, lease| Action::Renew(asked(name), lease);
    for (action, name, words) in [
        (renew("nobody", None), "nobody", NO_SUCH_INSTANCE.to_owned()),
        (
            renew("fresh", Some(0)),
            "fresh",
            verbs::LEASE_REFUSAL.to_owned(),
        ),
        (
            renew("fresh", Some(verbs::MAX_LEASE_SECS + 1)),
            "fresh",
            verbs::LEASE_REFUSAL.to_owned(),
        ),
        (
            renew("tomb", None),
            "tomb",
            "refused: tomb is tombstoned: renew acts on active instances only".to_owned(),
        ),
        (
            renew("x;y", None),
            "x;y",
            "refused: not a DNS-safe name".to_owned(),
        ),
        (
            renew("nolease", None),
            "nolease",
            "refused: nolease has no lease (a failed up): a renew would run a new up; nothing run"
                .to_owned(),
        ),
        (
            Action::Verify(asked("busy")),
            "busy",
            "refused: busy has a pending operation (up queued): verify after it; nothing run"
                .to_owned(),
        ),
    ] {
        assert_eq!(
            admit_at(&action, &s, &ok, NOW),
            refused(name, &words),
            "{action:?}"
        );
    }
    let off = Settings {
        write_keys_off: Some("read-only".into()),
        ..settings()
    };
    assert_eq!(
        admit_at(&renew("fresh", None), &s, &off, NOW),
        refused("fresh", "read-only")
    );
    let mut old = snapshot();
    old.generation = Generation::new(7);
    assert_eq!(
        admit_at(&Action::Verify(asked("fresh")), &old, &ok, NOW),
        refused(
            "fresh",
            "verify needs a stackless 0.4.0 store (schema 14); this one is v7; nothing run"
        )
    );
}

#[test]
fn the_first_rows_of_a_store_refuse_every_action_but_the_reapers_own() {
    let mut s = snapshot();
    s.partial = Some(crate::model::Partial {
        read: 2000,
        total: 1_000_000,
    });
    let words = "refused: reading the store: 2,000 of 1,000,000; ask again when it is read";
    for action in [
        Action::Reap(asked("expired")),
        Action::Down(asked("fresh")),
        Action::Renew(asked("fresh"), None),
        Action::Verify(asked("fresh")),
        Action::QueueDown {
            target: asked("busy"),
            behind: None,
        },
        // A name the first rows lack may yet be in the store.
        Action::Down(asked("zulu")),
    ] {
        let name = match &action {
            Action::QueueDown { target, .. } => target.name.clone(),
            Action::Reap(a) | Action::Down(a) | Action::Renew(a, _) | Action::Verify(a) => {
                a.name.clone()
            }
            _ => String::new(),
        };
        assert_eq!(
            admit_at(&action, &s, &settings(), NOW),
            refused(&name, words),
            "{action:?}"
        );
    }
    assert_eq!(
        admit_at(&Action::Cancel("op-1".into()), &s, &settings(), NOW),
        refused("", words)
    );
    // The reaper reads the store itself: a pass or a pause asks nothing
    // of these rows.
    assert_eq!(
        admit_at(&Action::Pass, &s, &settings(), NOW).map(|a| a.effect),
        Ok(Effect::Pass)
    );
    assert!(admit_at(&Action::Pause, &s, &settings(), NOW).is_ok());
    // The whole read: admitted as before.
    s.partial = None;
    assert_eq!(
        admit_at(&Action::Reap(asked("expired")), &s, &settings(), NOW).map(|a| a.words),
        Ok("reap requested for expired".to_owned())
    );
}
