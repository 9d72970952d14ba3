use super::*;
use crate::model::{Lease, Status};

fn instance(duration_secs: Option<i64>) -> Instance {
    Instance {
        name: "alpha".into(),
        substrate: "local".into(),
        status: Status::Active,
        created_at: Some(100),
        tombstoned_at: None,
        lease: duration_secs.map(|duration_secs| Lease {
            duration_secs,
            expires_at: 200,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: None,
        birth: None,
    }
}

#[test]
fn leases_parse_within_bounds() {
    assert_eq!(parse_lease("2h"), Ok(7200));
    assert_eq!(parse_lease(" 1h 30m "), Ok(5400));
    assert_eq!(parse_lease("45s"), Ok(45));
    assert_eq!(
        parse_lease("0s"),
        Err("a lease must be longer than 0s".into())
    );
    assert_eq!(
        parse_lease("31days"),
        Err("a lease of 31d 00h is longer than the console allows (30days)".into())
    );
    assert_eq!(
        parse_lease("1500ms"),
        Err("\"1500ms\" is not a whole number of seconds".into())
    );
    assert!(
        parse_lease("soon")
            .unwrap_err()
            .starts_with("\"soon\" is not a duration (e.g. 2h, 45m): ")
    );
    assert!(parse_lease("-1h").is_err());
}

#[test]
fn the_prompt_starts_from_the_recorded_duration() {
    assert_eq!(recorded_lease(&instance(Some(7200))), 7200);
    assert_eq!(lease_text(recorded_lease(&instance(Some(7200)))), "2h");
    assert_eq!(recorded_lease(&instance(None)), FALLBACK_LEASE_SECS);
    assert_eq!(recorded_lease(&instance(Some(0))), FALLBACK_LEASE_SECS);
    assert_eq!(recorded_lease(&instance(Some(-5))), FALLBACK_LEASE_SECS);
    assert_eq!(recorded_lease(&instance(Some(i64::MAX))), MAX_LEASE_SECS);
}

#[test]
fn argv_is_one_element_per_word() {
    assert_eq!(
        argv("stackless", "alpha", Verb::Renew { lease_secs: 5400 }).unwrap(),
        [
            "stackless",
            "up",
            "--name",
            "alpha",
            "--lease",
            "1h30m",
            "--json"
        ]
    );
    assert_eq!(
        argv("/opt/sl", "alpha", Verb::Verify).unwrap(),
        ["/opt/sl", "verify", "alpha", "--json"]
    );
    assert_eq!(argv("stackless", "a;rm -rf /", Verb::Verify), None);
    assert_eq!(argv("stackless", "--all", Verb::Verify), None);
    assert_eq!(argv("stackless", "Alpha", Verb::Verify), None);
    // Every lease the prompt accepts goes back to stackless as the same
    // seconds (humantime both ways).
    for secs in [1, 59, 60, 3599, 3600, 5400, 86_399, 86_400, MAX_LEASE_SECS] {
        let arg = lease_word(secs);
        assert_eq!(
            humantime::parse_duration(&arg).unwrap().as_secs(),
            secs,
            "{arg}"
        );
    }
}

#[test]
fn only_schema_14_renews() {
    let v5 = Generation { user_version: 5 };
    let v14 = Generation { user_version: 14 };
    assert_eq!(
        unsupported(v5, Verb::Renew { lease_secs: 60 }),
        Some("renew needs a stackless 0.4.0 store (schema 14); this one is v5; nothing run".into())
    );
    assert_eq!(unsupported(v14, Verb::Verify), None);
}

/// The answers as stackless 0.4.0 writes them (`output.rs` `up_ok`,
/// `verify_ok`, `fault`).
#[test]
fn answers() {
    let up = r#"{
  "schema_version": 2,
  "ok": true,
  "instance": "alpha",
  "instance_id": "0123456789abcdef0123456789abcdef",
  "substrate": "local",
  "executed": [],
  "skipped": ["service:web"],
  "duration_ms": 41
}"#;
    let renew = Verb::Renew { lease_secs: 7200 };
    assert_eq!(
        interpret(renew, Some(0), up),
        Outcome::Renewed {
            instance_id: Some("0123456789abcdef0123456789abcdef".into())
        }
    );
    let passed = r#"{"schema_version":2,"ok":true,"instance":"alpha","duration_ms":12,"exit_status":0,"log_path":"/s/verify.log","lease_remaining_secs":7199}"#;
    let Outcome::Verified(report) = interpret(Verb::Verify, Some(0), passed) else {
        panic!("verified");
    };
    assert_eq!(
        verified_text(&report),
        "default check passed (exit 0, 12 ms); lease renewed: 1h 59m left"
    );
    let failed = r#"{
  "ok": false,
  "error": {
    "schema_version": 2,
    "code": "verify.failed",
    "message": "verify command exited with 3",
    "remediation": "inspect error.context.log_tail and error.context.log_path; fix the verify script and re-run `stackless verify`",
    "context": {"log_path": "/s/verify.log", "log_tail": "curl: (7) refused\n", "exit_status": "3"}
  }
}"#;
    let Outcome::Refused(error, context) = interpret(Verb::Verify, Some(1), failed) else {
        panic!("refused");
    };
    assert_eq!(
        refused_text(&error),
        "verify.failed: verify command exited with 3 (remediation: inspect error.context.log_tail and error.context.log_path; fix the verify script and re-run `stackless verify`)"
    );
    assert_eq!(context.log_tail.as_deref(), Some("curl: (7) refused\n"));
    assert_eq!(
        interpret(renew, Some(2), "error: unexpected argument\n"),
        Outcome::Broken("exited with status 2: error: unexpected argument".into())
    );
    assert_eq!(
        interpret(Verb::Verify, None, ""),
        Outcome::Broken("killed by a signal".into())
    );
    // `ok: true` with a failing exit is not a success.
    assert_eq!(
        interpret(renew, Some(1), up),
        Outcome::Broken("exited with status 1: }".into())
    );
}

#[test]
fn renewed_lines() {
    assert_eq!(
        renewed_text(7200, Some(1000 + 7200), 1000, false),
        "2h, expires in 2h 00m"
    );
    assert_eq!(
        renewed_text(60, None, 0, true),
        "1m (stackless answered for a new birth of the name)"
    );
}

#[test]
fn one_lease_bound_for_the_keys_and_the_commands() {
    assert_eq!(lease_bound(0), Err(LeaseOutOfBounds::TooShort));
    assert_eq!(lease_bound(1), Ok(1));
    assert_eq!(lease_bound(MAX_LEASE_SECS), Ok(2_592_000));
    assert_eq!(
        lease_bound(MAX_LEASE_SECS + 1),
        Err(LeaseOutOfBounds::TooLong)
    );
    assert_eq!(lease_bound(u64::MAX), Err(LeaseOutOfBounds::TooLong));
    // `:renew` goes through it: 30 days is taken, a second more is not.
    assert_eq!(parse_lease("30days"), Ok(MAX_LEASE_SECS));
    assert_eq!(
        parse_lease("2592001s"),
        Err("a lease of 30d 00h is longer than the console allows (30days)".into())
    );
    // So does a JSON number, of any shape.
    let number = json_lease;
    for (text, want) in [
        ("1", Ok(1)),
        ("2592000", Ok(2_592_000)),
        ("3600.0", Ok(3600)),
        ("3.6e3", Ok(3600)),
        ("0", Err(LeaseOutOfBounds::TooShort)),
        ("-1", Err(LeaseOutOfBounds::TooShort)),
        ("-9223372036854775808", Err(LeaseOutOfBounds::TooShort)),
        ("0.5", Err(LeaseOutOfBounds::TooShort)),
        ("-0.0", Err(LeaseOutOfBounds::TooShort)),
        ("1.5", Err(LeaseOutOfBounds::TooLong)),
        ("2592001", Err(LeaseOutOfBounds::TooLong)),
        ("9223372036854775807", Err(LeaseOutOfBounds::TooLong)),
        ("18446744073709551615", Err(LeaseOutOfBounds::TooLong)),
        ("18446744073709551616", Err(LeaseOutOfBounds::TooLong)),
        ("3.15e11", Err(LeaseOutOfBounds::TooLong)),
        ("1e300", Err(LeaseOutOfBounds::TooLong)),
        // Judged as written, not as an f64 rounds it.
        ("0.99999999999999999", Err(LeaseOutOfBounds::TooShort)),
        ("2592000.0000000001", Err(LeaseOutOfBounds::TooLong)),
        ("1.00000000000000001", Err(LeaseOutOfBounds::TooLong)),
        ("2592000.000", Ok(2_592_000)),
        ("0.0036e6", Ok(3600)),
        ("36000e-1", Ok(3600)),
        ("1E0", Ok(1)),
        ("1e-99999999999999999999", Err(LeaseOutOfBounds::TooShort)),
        ("1e99999999999999999999", Err(LeaseOutOfBounds::TooLong)),
        ("0e5", Err(LeaseOutOfBounds::TooShort)),
    ] {
        assert_eq!(number(text), want, "{text}");
    }
}
