use super::super::rows::TableDelta;
use super::*;
use serde_json::json;

#[test]
fn a_big_table_is_split_into_rows_messages_under_the_limit() {
    let row = format!(r#"{{"name":"{}"}}"#, "n".repeat(1_000));
    let delta = Delta {
        tables: vec![(
            Table::Instances,
            TableDelta {
                upsert: vec![row; 200],
                remove: vec![r#"{"name":"gone","birth":null}"#.into()],
            },
        )],
        counts: [200, 0, 0],
    };
    let mut out = Vec::new();
    group(3, true, &delta, 1_000, &mut |line| out.push(line));
    assert_eq!(
        out.first().map(String::as_str),
        Some(r#"{"type":"reset","seq":3}"#)
    );
    assert_eq!(
        out.last().map(String::as_str),
        Some(
            r#"{"type":"synced","seq":3,"at":1000,"counts":{"instances":200,"operations":0,"backoffs":0}}"#
        )
    );
    let rows: Vec<RowsOf<InstanceRow, InstanceKeyRow>> = out[1..out.len() - 1]
        .iter()
        .map(|l| {
            assert!(l.len() < MAX_MESSAGE_BYTES, "{}", l.len());
            match read(l.as_bytes()) {
                Ok(Message::Rows(Rows::Instances(rows))) => rows,
                other => panic!("not instance rows: {other:?}"),
            }
        })
        .collect();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.seq == 3));
    let upserts: usize = rows.iter().map(|r| r.upsert.len()).sum();
    let removes: Vec<&InstanceKeyRow> = rows.iter().flat_map(|r| &r.remove).collect();
    assert_eq!(upserts, 200);
    assert_eq!(
        removes,
        [&InstanceKeyRow {
            name: "gone".into(),
            birth: None
        }]
    );
}

#[test]
fn an_unchanged_table_sends_no_rows_message() {
    let delta = Delta {
        tables: vec![(Table::Operations, TableDelta::default())],
        counts: [1, 2, 3],
    };
    let mut out = Vec::new();
    group(9, false, &delta, 5, &mut |line| out.push(line));
    assert_eq!(
        out,
        [
            r#"{"type":"synced","seq":9,"at":5,"counts":{"instances":1,"operations":2,"backoffs":3}}"#
        ]
    );
}

fn store(names: usize, expires_at: i64) -> Snapshot {
    use crate::model::rows::{Birth, Instance, Lease, Rows, Status};
    let instances: Vec<Instance> = (0..names)
        .map(|i| Instance {
            name: format!("{}-{i:04}", "n".repeat(400)),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(1),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 60,
                expires_at: if i % 7 == 0 { expires_at } else { 1 },
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: Some(Birth::new(&format!("{i:032x}"), "ns")),
        })
        .collect();
    Snapshot::from(Rows {
        generation: crate::model::generation::Generation::new(14),
        instances: instances.into(),
        ..Rows::default()
    })
}

#[test]
fn streamed_groups_are_the_groups_of_the_deltas() {
    let (mut streamed, mut collected) = (Tables::new(), Tables::new());
    for (seq, (snapshot, reset)) in [
        (store(300, 5), true),
        (store(300, 6), false),
        (store(250, 6), false),
        (store(250, 6), false),
    ]
    .into_iter()
    .enumerate()
    {
        let seq = seq as u64 + 1;
        let mut a = Vec::new();
        let wrote = stream_group(seq, reset, &mut streamed, &snapshot, 9, &mut |l| a.push(l));
        let delta = collected.update(&snapshot);
        let mut b = Vec::new();
        if reset || !delta.is_empty() {
            group(seq, reset, &delta, 9, &mut |l| b.push(l));
        }
        assert_eq!(a, b, "group {seq}");
        assert_eq!(wrote, !b.is_empty());
        assert!(a.iter().all(|l| l.len() < MAX_MESSAGE_BYTES));
    }
}

#[test]
fn a_long_log_line_goes_whole_in_pieces() {
    let text: String = (0..3_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let out = log(&json!("l"), "web", &text, false);
    let msgs: Vec<serde_json::Value> = out
        .iter()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let conts: Vec<bool> = msgs.iter().map(|m| m["cont"] == true).collect();
    assert_eq!(conts, [false, true, true]);
    let whole: String = msgs.iter().filter_map(|m| m["text"].as_str()).collect();
    assert_eq!(whole, text);
    assert_eq!(log(&json!("l"), "web", "", true).len(), 1);
}

/// One message of each type, rows of each table, every optional part
/// filled once.
fn examples() -> Vec<Message> {
    let reaper = ReaperLine {
        by: "agent".into(),
        pid: Some(42),
        paused: false,
        next_pass_at: Some(1_060),
        text: "reaper: every 60s".into(),
        last_pass: Some(LastPass {
            at: 1_000,
            reaped: 2,
            failed: 1,
            collected: 0,
            skipped: 3,
        }),
    };
    let mut all = vec![
        Message::Hello(Box::new(HelloMessage {
            protocol: Some(1),
            program: "stackless-tui".into(),
            version: "1.0.0".into(),
            host: "h".into(),
            store: "/s".into(),
            schema: 14,
            generation: "controller".into(),
            commands: COMMANDS.map(str::to_owned).to_vec(),
            reaper: Some(reaper.clone()),
            max_message_bytes: 65_536,
            heartbeat_secs: Some(5),
            teardown: vec!["stackless".into(), "down".into(), "{name}".into()],
            stackless: Some("stackless".into()),
            ..HelloMessage::default()
        })),
        Message::Reaper(reaper),
        Message::Reset(Reset {
            seq: 3,
            reason: None,
        }),
        Message::Synced(Synced {
            seq: 3,
            at: Some(1_000),
            counts: Counts {
                instances: 1,
                operations: 2,
                backoffs: 1,
            },
        }),
        Message::Banner(Banner {
            id: "clock".into(),
            level: "warning".into(),
            text: "clock skew".into(),
        }),
        Message::BannerCleared(BannerCleared { id: "clock".into() }),
        Message::Activity(ActivityMessage {
            at: 5,
            actor: "reaper".into(),
            instance: "bravo".into(),
            kind: "reaped".into(),
            detail: "ok".into(),
        }),
        Message::Heartbeat(Heartbeat { at: 6, seq: 3 }),
        Message::Log(LogMessage {
            logs: Value::from("l"),
            service: "web".into(),
            text: "GET /".into(),
            at: None,
            cont: true,
        }),
        Message::LogsEnd(LogsEnd {
            logs: Value::from("l"),
            reason: "stopped".into(),
        }),
        Message::Unknown,
    ];
    all.extend(rows_examples());
    all.extend(reply_examples());
    all
}

/// A `rows` message of each table (and of one a newer agent adds).
fn rows_examples() -> Vec<Message> {
    let instance: InstanceRow = serde_json::from_str(
        r#"{"name":"bravo","birth":{"instance_id":"b1","resource_namespace":"sl-b1"},"dns_safe":true,"substrate":"local","status":"active","created_at":1,"tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":9000},"lock":{"operation":"up","holder_pid":7,"holder_start_time":8,"holder_host":"h","acquired_at":9,"liveness_state":"alive","held":true},"dirty":false,"failed_up":false,"services_dead":0,"gc":{"due_at":5,"collected_by":"reaper"}}"#,
    )
    .expect("row");
    let operation = OperationRow {
        id: Value::from("op-1"),
        instance: "bravo".into(),
        verb: "down".into(),
        status: "failed".into(),
        created_at: 1,
        updated_at: 2,
        error: crate::model::envelope::parse_error(
            r#"{"ok":false,"error":{"code":"state.lock.held","message":"held"}}"#,
        ),
        error_unparsed: None,
    };
    let backoff = BackoffRow {
        instance: "bravo".into(),
        attempts: 2,
        last_error: "exit 1".into(),
        code: None,
        summary: "exit 1".into(),
        remediation: Some("look".into()),
        next_retry_at: 99,
    };
    vec![
        Message::Rows(Rows::Instances(RowsOf {
            seq: 3,
            upsert: vec![instance],
            remove: vec![InstanceKeyRow {
                name: "alpha".into(),
                birth: Some(BirthRow {
                    instance_id: "a1".into(),
                    resource_namespace: Some("sl-a1".into()),
                }),
            }],
        })),
        Message::Rows(Rows::Operations(RowsOf {
            seq: 3,
            upsert: vec![
                operation.clone(),
                OperationRow {
                    error: None,
                    error_unparsed: Some("boom".into()),
                    ..operation
                },
            ],
            remove: vec![OperationKeyRow {
                id: Value::from("op-0"),
            }],
        })),
        Message::Rows(Rows::Backoffs(RowsOf {
            seq: 3,
            upsert: vec![backoff],
            remove: vec![BackoffKeyRow {
                instance: "alpha".into(),
            }],
        })),
        Message::Rows(Rows::Unknown),
    ]
}

/// A reply of each kind.
fn reply_examples() -> Vec<Message> {
    vec![
        Message::Reply(Reply {
            message: Some("reaping bravo".into()),
            ..Reply::ok(&Value::from(7))
        }),
        Message::Reply(Reply {
            detail: Some(DetailReply {
                name: "bravo".into(),
                birth: Some(BirthRow {
                    instance_id: "b1".into(),
                    resource_namespace: Some("sl-b1".into()),
                }),
                lines: vec!["a".into(), "b".into()],
            }),
            ..Reply::ok(&Value::from("d"))
        }),
        Message::Reply(Reply {
            services: Some(vec!["web".into()]),
            ..Reply::ok(&Value::from("l"))
        }),
        Message::Reply(Reply {
            id: Value::Null,
            ok: false,
            error: Some(ReplyError {
                kind: "bad_request".into(),
                message: "not JSON".into(),
            }),
            ..Reply::default()
        }),
        Message::Services(ServicesLine {
            name: "alpha".into(),
            instance_id: Some("a1".into()),
            services: vec![json!({"name": "web", "pid": 7, "stage": "started"})],
        }),
    ]
}

#[test]
fn every_message_round_trips_through_its_line() {
    let mut seen = [false; 14];
    for message in examples() {
        seen[match &message {
            Message::Hello(_) => 0,
            Message::Reaper(_) => 1,
            Message::Reset(_) => 2,
            Message::Rows(_) => 3,
            Message::Synced(_) => 4,
            Message::Banner(_) => 5,
            Message::BannerCleared(_) => 6,
            Message::Activity(_) => 7,
            Message::Heartbeat(_) => 8,
            Message::Reply(_) => 9,
            Message::Log(_) => 10,
            Message::LogsEnd(_) => 11,
            Message::Unknown => 12,
            Message::Services(_) => 13,
        }] = true;
        let text = line(&message);
        assert!(text.len() < MAX_MESSAGE_BYTES);
        let read_back = read(text.as_bytes()).expect(&text);
        if message == Message::Unknown || message == Message::Rows(Rows::Unknown) {
            // Written as a bare tag: read back as itself.
            assert_eq!(read_back, message, "{text}");
            continue;
        }
        assert_eq!(read_back, message, "{text}");
        let derived: Message = serde_json::from_str(&text).expect(&text);
        assert_eq!(derived, message, "{text}");
    }
    assert_eq!(seen, [true; 14]);
}

#[test]
fn a_newer_agents_message_or_table_is_unknown_and_bad_fields_are_not_the_protocol() {
    assert_eq!(
        read(br#"{"type":"future","x":1}"#).ok(),
        Some(Message::Unknown)
    );
    assert_eq!(
        read(br#"{"type":"rows","seq":1,"table":"future","upsert":[1]}"#).ok(),
        Some(Message::Rows(Rows::Unknown))
    );
    assert!(matches!(read(b" [1]"), Err(ReadError::NotObject)));
    assert!(matches!(read(b"{"), Err(ReadError::NotObject)));
    assert!(matches!(
        read(br#"{"type":"synced","at":"soon"}"#),
        Err(ReadError::Fields(kind, _)) if kind == "synced"
    ));
}

#[test]
fn the_writers_lines_are_the_messages_documented_shapes() {
    assert_eq!(heartbeat(6, 3), r#"{"type":"heartbeat","at":6,"seq":3}"#);
    assert_eq!(
        reply_error(&Value::from(1), "refused", "no"),
        r#"{"type":"reply","id":1,"ok":false,"error":{"kind":"refused","message":"no"}}"#
    );
    assert_eq!(
        reply(Reply::ok(&Value::from("p"))),
        r#"{"type":"reply","id":"p","ok":true}"#
    );
    assert_eq!(
        logs_end(&Value::from("l"), "gone"),
        r#"{"type":"logs_end","logs":"l","reason":"gone"}"#
    );
    assert_eq!(
        banner_cleared("clock"),
        r#"{"type":"banner_cleared","id":"clock"}"#
    );
}

#[test]
fn hello_lists_the_command_enums_variants() {
    let commands = |read_only: bool, follow_only: bool| {
        let text = hello(&Hello {
            host: "h".into(),
            store: "/s".into(),
            schema: 14,
            generation: "controller",
            read_only,
            dry_run: false,
            follow_only,
            reaper: ReaperLine::default(),
            teardown: vec![],
            stackless: "stackless".into(),
            now: 1_700_000_000,
        });
        match read(text.as_bytes()) {
            Ok(Message::Hello(hello)) => hello.commands,
            other => panic!("not a hello: {other:?}"),
        }
    };
    let all: Vec<String> = Cmd::ALL.iter().map(|c| c.as_str().to_owned()).collect();
    assert_eq!(commands(false, false), all);
    let reads: Vec<String> = Cmd::ALL
        .iter()
        .filter(|c| c.reads())
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(commands(true, false), reads);
    assert_eq!(reads, ["detail", "logs", "logs_stop", "ping", "metrics"]);
    assert!(commands(true, true).is_empty());
}
