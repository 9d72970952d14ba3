use super::*;
use crate::model::{Lease, OpLock};

const NOW: i64 = 1_795_960_686;

fn instance(name: &str, substrate: &str, status: Status, expires_at: i64) -> Instance {
    Instance {
        name: name.into(),
        substrate: substrate.into(),
        status,
        created_at: Some(NOW - 1000),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 60,
            expires_at,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: None,
        birth: None,
    }
}

fn locked(mut i: Instance) -> Instance {
    i.lock = Some(Box::new(OpLock {
        operation: "up".into(),
        holder_pid: 4242,
        holder_start_time: NOW - 10,
        acquired_at: NOW - 10,
        holder_host: Some("here".into()),
        claim_id: None,
    }));
    i
}

fn haystack(i: &Instance) -> String {
    format!("{}\0{}\0{}", i.name, i.substrate, i.status.as_str()).to_lowercase()
}

fn check(
    text: &str,
    i: &Instance,
    liveness: Option<&Liveness>,
    attempt: Option<&ReapAttempt>,
    op: Option<&Operation>,
) -> bool {
    let hay = haystack(i);
    let facts = Facts {
        haystack: &hay,
        liveness,
        attempt,
        pending: op,
        now: NOW,
    };
    parse(text).unwrap().matches(i, &facts)
}

fn op(status: OpStatus) -> Operation {
    Operation {
        id: "3f2c".into(),
        instance: "alpha".into(),
        instance_id: None,
        verb: "up".into(),
        status,
        cancel_requested: false,
        created_at: NOW - 5,
        updated_at: NOW - 5,
        error_json: None,
        progress: None,
        ran: None,
    }
}

#[test]
fn parses_terms_with_negation() {
    let filter = parse("status:expired  !substrate:Local ren").unwrap();
    assert_eq!(
        filter.terms,
        vec![
            Term {
                negated: false,
                test: Test::Expired
            },
            Term {
                negated: true,
                test: Test::Substrate("local".into())
            },
            Term {
                negated: false,
                test: Test::Word("ren".into())
            },
        ]
    );
    assert!(!filter.words_only());
    assert!(parse("ren al").unwrap().words_only());
    assert!(parse("").unwrap().is_empty());
    assert!(parse("status: lock:").unwrap().is_empty());
}

#[test]
fn refuses_unknown_fields_and_values() {
    assert_eq!(
        parse("colour:red").unwrap_err(),
        "unknown field \"colour\" (fields: status, substrate, name, lock, backoff, op, host)"
    );
    assert_eq!(
        parse("lock:maybe").unwrap_err(),
        "lock:maybe: values are alive, foreign, held, stale, none, any"
    );
    assert_eq!(
        parse("backoff:soon").unwrap_err(),
        "backoff:soon: values are due, waiting, any"
    );
    assert_eq!(
        parse("op:done").unwrap_err(),
        "op:done: values are running, queued, pending"
    );
}

#[test]
fn status_substrate_and_words() {
    let expired = instance("alpha", "render", Status::Active, NOW);
    let live = instance("bravo", "local", Status::Active, NOW + 60);
    let gone = instance("charlie", "local", Status::Tombstoned, NOW - 60);
    assert!(check("status:expired", &expired, None, None, None));
    assert!(!check("status:expired", &live, None, None, None));
    assert!(!check("status:expired", &gone, None, None, None));
    assert!(check("status:tombstoned", &gone, None, None, None));
    assert!(check("substrate:render", &expired, None, None, None));
    assert!(!check("substrate:rend", &expired, None, None, None));
    assert!(check("!substrate:local", &expired, None, None, None));
    assert!(!check("!substrate:local", &live, None, None, None));
    assert!(check("rend", &expired, None, None, None));
    assert!(check("ALP active", &expired, None, None, None));
    assert!(!check("alp !active", &expired, None, None, None));
    assert!(check("name:rav", &live, None, None, None));
    assert!(!check("name:local", &live, None, None, None));
}

#[test]
fn locks_backoffs_and_operations() {
    let free = instance("alpha", "local", Status::Active, NOW);
    let held = locked(free.clone());
    let alive = Liveness::Alive;
    let gone = Liveness::StalePidGone;
    let foreign = Liveness::ForeignHost("there".into());
    assert!(check("lock:none", &free, None, None, None));
    assert!(!check("lock:any", &free, None, None, None));
    assert!(check("lock:alive", &held, Some(&alive), None, None));
    assert!(check("lock:held", &held, Some(&foreign), None, None));
    assert!(!check("lock:alive", &held, Some(&foreign), None, None));
    assert!(check("lock:foreign", &held, Some(&foreign), None, None));
    assert!(check("lock:stale", &held, Some(&gone), None, None));
    assert!(!check("lock:stale", &held, Some(&alive), None, None));
    assert!(!check("lock:stale", &held, None, None, None));
    let due = ReapAttempt {
        instance: "alpha".into(),
        attempts: 2,
        last_error: "boom".into(),
        next_retry_at: NOW,
    };
    let waiting = ReapAttempt {
        next_retry_at: NOW + 1,
        ..due.clone()
    };
    assert!(check("backoff:due", &free, None, Some(&due), None));
    assert!(!check("backoff:due", &free, None, Some(&waiting), None));
    assert!(check("backoff:waiting", &free, None, Some(&waiting), None));
    assert!(!check("backoff:any", &free, None, None, None));
    assert!(check("!backoff:any", &free, None, None, None));
    let running = op(OpStatus::Running);
    let queued = op(OpStatus::Queued);
    assert!(check("op:running", &free, None, None, Some(&running)));
    assert!(!check("op:running", &free, None, None, Some(&queued)));
    assert!(check("op:queued", &free, None, None, Some(&queued)));
    assert!(check("op:pending", &free, None, None, Some(&queued)));
    assert!(!check("op:pending", &free, None, None, None));
    // A failed `up`'s row: active, no lease, nothing
    // pending, its lock not held.
    let unleased = Instance {
        lease: None,
        ..free.clone()
    };
    assert!(check("status:failed-up", &unleased, None, None, None));
    assert!(
        !check("status:failed-up", &free, None, None, None),
        "leased"
    );
    assert!(!check(
        "status:failed-up",
        &unleased,
        None,
        None,
        Some(&running)
    ));
    let unleased_held = locked(unleased.clone());
    assert!(!check(
        "status:failed-up",
        &unleased_held,
        Some(&alive),
        None,
        None
    ));
    assert!(check(
        "status:failed-up",
        &unleased_held,
        Some(&gone),
        None,
        None
    ));
    let filter = parse("status:failed-up").unwrap();
    assert!(filter.uses_failed_up() && filter.uses_liveness() && !filter.uses_operations());
    assert!(check(
        "status:expired lock:alive !op:pending",
        &held,
        Some(&alive),
        None,
        None
    ));
}
