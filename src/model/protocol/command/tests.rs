use super::*;

#[test]
fn commands_parse_with_their_ids() {
    assert_eq!(
        parse(r#"{"id":7,"cmd":"reap","name":"golf","birth":"ab"}"#),
        (
            Value::from(7),
            Ok(Command::Reap(Target {
                name: "golf".into(),
                birth: Some("ab".into()),
                resource_namespace: None,
                created_at: None,
            }))
        )
    );
    assert_eq!(
        parse(r#"{"id":"x","cmd":"renew","name":"golf","lease_secs":3600}"#).1,
        Ok(Command::Renew(
            Target {
                name: "golf".into(),
                birth: None,
                resource_namespace: None,
                created_at: None,
            },
            Some(3600)
        ))
    );
    assert_eq!(parse(r#"{"id":1,"cmd":"pause"}"#).1, Ok(Command::Pause));
}

#[test]
fn bad_lines_get_typed_errors() {
    let kind = |line: &str| parse(line).1.map_err(|r| r.kind);
    assert_eq!(kind("not json"), Err("bad_request"));
    assert_eq!(kind("[1]"), Err("bad_request"));
    assert_eq!(kind(r#"{"cmd":"ping"}"#), Err("bad_request"));
    assert_eq!(kind(r#"{"id":1,"cmd":"rm -rf"}"#), Err("unknown_command"));
    assert_eq!(
        kind(r#"{"id":1,"cmd":"reap","name":"a;rm -rf /"}"#),
        Err("refused")
    );
    assert_eq!(
        kind(r#"{"id":1,"cmd":"reap","name":"golf","birth":5}"#),
        Err("bad_request")
    );
    assert_eq!(
        kind(r#"{"id":1,"protocol":2,"cmd":"ping"}"#),
        Err("protocol")
    );
    assert_eq!(
        kind(r#"{"id":1,"cmd":"cancel","operation":"../x"}"#),
        Err("refused")
    );
    let long_id = format!(r#"{{"id":"{}","cmd":"ping"}}"#, "x".repeat(65));
    assert_eq!(parse(&long_id).0, Value::Null);
}
#[test]
fn a_key_given_twice_is_a_bad_request_at_any_depth() {
    let id = "70aa7461da17489bb88e709a64f291aa";
    assert_eq!(
        parse(&format!(
            r#"{{"id":"t","cmd":"down","name":"golf","birth":{{"instance_id":"0"}},"birth":{{"instance_id":"{id}"}}}}"#
        )),
        (
            Value::from("t"),
            Err(rejected("bad_request", "a field is given twice: \"birth\""))
        )
    );
    assert_eq!(
        parse(&format!(
            r#"{{"id":"t","cmd":"down","name":"golf","birth":{{"instance_id":"0","instance_id":"{id}"}}}}"#
        )),
        (
            Value::from("t"),
            Err(rejected(
                "bad_request",
                "a field is given twice: \"instance_id\" at line 1 column 77"
            ))
        )
    );
    assert_eq!(
        parse(r#"{"id":"a","cmd":"ping","id":"b"}"#),
        (
            Value::Null,
            Err(rejected("bad_request", "a field is given twice: \"id\""))
        )
    );
}

fn golf(birth: Option<&str>) -> Target {
    Target {
        name: "golf".into(),
        birth: birth.map(str::to_owned),
        resource_namespace: None,
        created_at: None,
    }
}

#[test]
fn leases_outside_the_keys_bounds_are_refused_naming_the_instance() {
    let renew = |lease: &str| {
        parse(&format!(
            r#"{{"id":1,"cmd":"renew","name":"golf","lease_secs":{lease}}}"#
        ))
        .1
    };
    for lease in [
        "0",
        "-1",
        "2592001",
        "9223372036854775807",
        "18446744073709551615",
        "18446744073709551616",
        "3.15e11",
        "1.5",
        "0.5",
        "-0.0",
        "1e300",
        "0.99999999999999999",
        "2592000.0000000001",
    ] {
        assert_eq!(
            renew(lease),
            Err(Rejected {
                kind: "refused",
                message: "refused: a lease is 1 s to 30 days".into(),
                instance: Some("golf".into()),
            }),
            "lease_secs {lease}"
        );
    }
    for (lease, secs) in [
        ("1", 1),
        ("2592000", 2_592_000),
        ("3600.0", 3600),
        ("3.6e3", 3600),
        ("2592000.000", 2_592_000),
    ] {
        assert_eq!(
            renew(lease),
            Ok(Command::Renew(golf(None), Some(secs))),
            "lease_secs {lease}"
        );
    }
    assert_eq!(renew("null"), Ok(Command::Renew(golf(None), None)));
    assert_eq!(renew(r#""3600""#).map_err(|r| r.kind), Err("bad_request"));
    // Not a number serde_json can hold: not JSON at all.
    assert_eq!(
        parse(r#"{"id":1,"cmd":"renew","name":"golf","lease_secs":1e400}"#),
        (
            Value::Null,
            Err(rejected(
                "bad_request",
                "not JSON: number out of range at line 1 column 54"
            ))
        )
    );
}

#[test]
fn birth_is_the_rows_object_or_the_deprecated_string() {
    let reap = |birth: &str| {
        parse(&format!(
            r#"{{"id":1,"cmd":"reap","name":"golf","birth":{birth}}}"#
        ))
        .1
    };
    let id = "70aa7461da17489bb88e709a64f291aa";
    assert_eq!(
        reap(&format!(
            r#"{{"instance_id":"{id}","resource_namespace":"sl-{id}"}}"#
        )),
        Ok(Command::Reap(Target {
            resource_namespace: Some(format!("sl-{id}")),
            ..golf(Some(id))
        }))
    );
    for birth in [
        format!(r#"{{"instance_id":"{id}"}}"#),
        format!(r#"{{"instance_id":"{id}","resource_namespace":null}}"#),
        format!(r#""{id}""#),
    ] {
        assert_eq!(
            reap(&birth),
            Ok(Command::Reap(golf(Some(id)))),
            "birth {birth}"
        );
    }
    assert_eq!(reap("null"), Ok(Command::Reap(golf(None))));
    // Before schema 7: the row's `created_at` beside `birth: null`.
    let pre7 = Command::Reap(Target {
        created_at: Some(1_700_000_000),
        ..golf(None)
    });
    let line = r#"{"id":1,"cmd":"reap","name":"golf","birth":null,"created_at":1700000000}"#;
    assert_eq!(parse(line).1, Ok(pre7.clone()));
    assert_eq!(
        Request {
            id: &Value::from(1),
            command: &pre7
        }
        .line(),
        line
    );
    assert_eq!(
        parse(r#"{"id":1,"cmd":"reap","name":"golf","created_at":"1"}"#)
            .1
            .map_err(|r| r.kind),
        Err("bad_request")
    );
    assert_eq!(
        parse(r#"{"id":1,"cmd":"verify","name":"golf"}"#).1,
        Ok(Command::Verify(golf(None)))
    );
    for birth in [
        "5",
        "true",
        "[]",
        "{}",
        r#"{"instance_id":5}"#,
        r#"{"resource_namespace":"sl-x"}"#,
        r#"{"instance_id":"ab","resource_namespace":5}"#,
    ] {
        assert_eq!(
            reap(birth).map_err(|r| r.kind),
            Err("bad_request"),
            "birth {birth}"
        );
    }
}

/// One command of each `cmd` (the match is exhaustive: a new [`Cmd`]
/// needs its example here).
fn example(cmd: Cmd) -> Command {
    let target = Target {
        name: "golf".into(),
        birth: Some("70aa7461da17489bb88e709a64f291aa".into()),
        resource_namespace: Some("sl-70aa7461da17489bb88e709a64f291aa".into()),
        created_at: None,
    };
    match cmd {
        Cmd::Reap => Command::Reap(target),
        Cmd::Down => Command::Down(golf(None)),
        Cmd::QueueDown => Command::QueueDown(Target {
            resource_namespace: None,
            ..target
        }),
        Cmd::Cancel => Command::Cancel("op-1".into()),
        Cmd::Pause => Command::Pause,
        Cmd::Resume => Command::Resume,
        Cmd::Pass => Command::Pass,
        Cmd::Renew => Command::Renew(target, Some(3600)),
        Cmd::Verify => Command::Verify(target),
        Cmd::Detail => Command::Detail("any name".into()),
        Cmd::Logs => Command::Logs("golf".into(), Some("web".into())),
        Cmd::LogsStop => Command::LogsStop(Value::from("f7")),
        Cmd::Ping => Command::Ping,
        Cmd::Metrics => Command::Metrics,
    }
}

#[test]
fn every_command_round_trips_through_its_line() {
    for (i, cmd) in Cmd::ALL.into_iter().enumerate() {
        let command = example(cmd);
        assert_eq!(command.cmd(), cmd);
        let id = Value::from(format!("c{i}"));
        let line = Request {
            id: &id,
            command: &command,
        }
        .line();
        assert_eq!(parse(&line), (id, Ok(command.clone())), "{line}");
        let alone: Value = serde_json::to_value(&command).expect("json");
        assert_eq!(alone["cmd"], Value::from(cmd.as_str()), "{line}");
        assert_eq!(
            serde_json::to_value(cmd).expect("json"),
            Value::from(cmd.as_str())
        );
    }
    assert_eq!(
        Request {
            id: &Value::from(3),
            command: &example(Cmd::Renew)
        }
        .line(),
        r#"{"id":3,"cmd":"renew","name":"golf","birth":{"instance_id":"70aa7461da17489bb88e709a64f291aa","resource_namespace":"sl-70aa7461da17489bb88e709a64f291aa"},"lease_secs":3600}"#
    );
    assert_eq!(
        Request {
            id: &Value::from("p"),
            command: &Command::Renew(golf(None), None)
        }
        .line(),
        r#"{"id":"p","cmd":"renew","name":"golf","birth":null,"lease_secs":null}"#
    );
}

#[test]
fn the_cmd_names_are_the_command_variants() {
    assert_eq!(
        super::super::lines::COMMANDS.to_vec(),
        Cmd::ALL.map(Cmd::as_str).to_vec()
    );
    assert_eq!(
        super::super::lines::READ_COMMANDS.to_vec(),
        ["detail", "logs", "logs_stop", "ping", "metrics"]
    );
    for cmd in Cmd::ALL {
        assert_eq!(Cmd::named(cmd.as_str()), Some(cmd));
    }
    assert_eq!(Cmd::named("rm"), None);
}
