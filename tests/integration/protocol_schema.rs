//! `docs/protocol.schema.json` and the tests' protocol client
//! (`tests/common/protocol.rs`) on their own: hand-written messages the
//! schema takes and refuses, every line the pure core builds
//! (`model::protocol::lines`) validated, and the client failing loudly on
//! what docs/protocol.md does not allow.

use serde_json::{Value, json};
use stackless_tui::event::{Activity, ActivityKind, Actor};
use stackless_tui::model::protocol::lines::{
    self, Banner, DetailReply, Hello, LastPass, ReaperLine, Reply,
};
use stackless_tui::model::protocol::rows::Tables as CoreTables;

use crate::common::protocol::{Reader, Seen, validate, validate_command};

fn instance_row() -> Value {
    json!({
        "name": "golf", "birth": {"instance_id": "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
        "resource_namespace": "sl-a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"},
        "dns_safe": true, "substrate": "local", "status": "active",
        "created_at": 1_764_655_000, "tombstoned_at": null,
        "lease": {"duration_secs": 60, "expires_at": 1_764_655_260},
        "lock": {"operation": "up", "holder_pid": 4242, "holder_start_time": 1_764_654_000,
                 "holder_host": null, "acquired_at": 1_764_655_100,
                 "liveness_state": "stale_pid_gone", "held": false},
        "dirty": null, "failed_up": false, "services_dead": 0, "gc": null
    })
}

fn operation_row() -> Value {
    json!({
        "id": "op-1", "instance": "golf", "verb": "up", "status": "failed",
        "created_at": 1_764_655_000, "updated_at": 1_764_655_010,
        "error": {"code": "engine.source_override.shared", "message": "pinned",
                  "remediation": null, "schema_version": 2, "step": null, "instance": "golf"}
    })
}

fn backoff_row() -> Value {
    json!({
        "instance": "golf", "attempts": 2, "last_error": "reaper.down.failed: exit 1",
        "code": "reaper.down.failed", "summary": "reaper.down.failed: exit 1",
        "remediation": null, "next_retry_at": 1_764_655_300
    })
}

fn hello() -> Value {
    json!({
        "type": "hello", "protocol": 1, "program": "stackless-tui", "version": "0.1.0",
        "host": "db1", "store": "/home/op/.local/state/stackless/state.db", "schema": 14,
        "generation": "controller", "read_only": false, "dry_run": false, "follow_only": false,
        "commands": ["reap", "down", "queue_down", "cancel", "pause", "resume", "pass", "renew",
                     "verify", "detail", "logs", "logs_stop", "ping"],
        "reaper": {"by": "agent", "pid": 4242, "paused": false, "next_pass_at": null,
                   "text": "reaper: every 60s", "last_pass": null},
        "max_message_bytes": 65_536, "heartbeat_secs": 5
    })
}

fn rows(table: &str, upsert: Vec<Value>, remove: Vec<Value>) -> Value {
    json!({"type": "rows", "seq": 1, "table": table, "upsert": upsert, "remove": remove})
}

/// One valid message of every type, as docs/protocol.md shows them.
fn valid_messages() -> Vec<Value> {
    vec![
        hello(),
        json!({"type": "reset", "seq": 1}),
        rows(
            "instances",
            vec![instance_row()],
            vec![
                json!({"name": "echo", "birth": null}),
                json!({"name": "golf", "birth": {"instance_id": "ab", "resource_namespace": "sl-ab"}}),
            ],
        ),
        rows(
            "operations",
            vec![operation_row()],
            vec![json!({"id": "op-0"})],
        ),
        rows(
            "backoffs",
            vec![backoff_row()],
            vec![json!({"instance": "hotel"})],
        ),
        json!({"type": "synced", "seq": 1, "at": 1_764_655_200,
               "counts": {"instances": 1, "operations": 1, "backoffs": 1}}),
        json!({"type": "reaper", "by": "controller", "pid": 77, "paused": false,
               "next_pass_at": null, "text": "reaper: the controller reaps (pid 77); standing by",
               "last_pass": {"at": 1_764_655_200, "reaped": 1, "failed": 0, "collected": 0,
                             "skipped": 2}}),
        json!({"type": "banner", "id": "clock", "level": "error", "text": "! the wall clock"}),
        json!({"type": "banner_cleared", "id": "clock"}),
        json!({"type": "activity", "at": 1_764_655_260, "actor": "reaper", "instance": "golf",
               "kind": "reaped", "detail": "down in 1.2s"}),
        json!({"type": "heartbeat", "at": 1_764_655_265, "seq": 7}),
        json!({"type": "reply", "id": "7", "ok": true, "message": "reap requested for golf"}),
        json!({"type": "reply", "id": 11, "ok": true}),
        json!({"type": "reply", "id": 9, "ok": true,
               "detail": {"name": "golf", "birth": null, "lines": ["a", "b"]}}),
        json!({"type": "reply", "id": 10, "ok": true, "services": ["web"]}),
        json!({"type": "reply", "id": 12, "ok": true,
               "metrics": ["# TYPE stackless_store_up gauge", "stackless_store_up 1", "# EOF"]}),
        json!({"type": "reply", "id": "8", "ok": false,
               "error": {"kind": "refused", "message": "refused: lock held by pid 4242 (up)"}}),
        json!({"type": "reply", "id": null, "ok": false,
               "error": {"kind": "too_long", "message": "a line over 65,536 bytes"}}),
        json!({"type": "log", "logs": 10, "service": "web", "text": "GET /", "at": null, "cont": false}),
        json!({"type": "logs_end", "logs": 10, "reason": "stopped"}),
        json!({"type": "services", "name": "alpha", "instance_id": null, "services": [
               {"name": "web", "pid": 4242, "alive": false, "origin": null, "port": 8080,
                "stage": "unhealthy", "log_path": "/s/logs/sl-a/web.log"}]}),
        json!({"type": "services", "name": "alpha", "instance_id": "a1", "services": []}),
    ]
}

#[test]
fn the_documented_messages_validate_and_a_new_field_is_allowed() {
    for message in valid_messages() {
        validate(&message.to_string()).unwrap();
        let mut more = message.clone();
        more["a_new_field"] = json!([1, 2]);
        validate(&more.to_string()).unwrap();
    }
}

/// `message` with `path`'s field set to `value` (`None`: removed).
fn with(mut message: Value, path: &[&str], value: Option<Value>) -> Value {
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut message;
    for key in parents {
        at = match at {
            Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
            other => &mut other[*key],
        };
    }
    let object = at.as_object_mut().unwrap();
    match value {
        Some(value) => object.insert((*last).to_owned(), value),
        None => object.remove(*last),
    };
    message
}

#[test]
fn messages_the_document_does_not_allow_are_refused() {
    let row = || rows("instances", vec![instance_row()], vec![]);
    let cases: Vec<(&str, Value)> = vec![
        ("an unknown type", json!({"type": "hullo"})),
        ("no type", json!({"seq": 1})),
        ("hello without reaper", with(hello(), &["reaper"], None)),
        (
            "hello of protocol 2",
            with(hello(), &["protocol"], Some(json!(2))),
        ),
        (
            "follow_only with commands",
            with(hello(), &["follow_only"], Some(json!(true))),
        ),
        (
            "an unknown command named",
            with(hello(), &["commands"], Some(json!(["ping", "rm"]))),
        ),
        ("reset seq 0", json!({"type": "reset", "seq": 0})),
        (
            "an unknown table",
            with(row(), &["table"], Some(json!("leases"))),
        ),
        (
            "an operation row in instances",
            rows("instances", vec![operation_row()], vec![]),
        ),
        (
            "an instance row without dirty",
            with(row(), &["upsert", "0", "dirty"], None),
        ),
        (
            "created_at a string",
            with(
                row(),
                &["upsert", "0", "created_at"],
                Some(json!("yesterday")),
            ),
        ),
        (
            "failed_up null",
            with(row(), &["upsert", "0", "failed_up"], Some(Value::Null)),
        ),
        (
            "a lease without expires_at",
            with(row(), &["upsert", "0", "lease", "expires_at"], None),
        ),
        (
            "an unknown liveness",
            with(
                row(),
                &["upsert", "0", "lock", "liveness_state"],
                Some(json!("dead")),
            ),
        ),
        (
            "a birth without its namespace",
            with(row(), &["upsert", "0", "birth", "resource_namespace"], None),
        ),
        (
            "negative services_dead",
            with(row(), &["upsert", "0", "services_dead"], Some(json!(-1))),
        ),
        (
            "an instance key without birth",
            rows("instances", vec![], vec![json!({"name": "echo"})]),
        ),
        (
            "an operation error without code",
            rows(
                "operations",
                vec![with(operation_row(), &["error", "code"], None)],
                vec![],
            ),
        ),
        (
            "a backoff without next_retry_at",
            rows(
                "backoffs",
                vec![with(backoff_row(), &["next_retry_at"], None)],
                vec![],
            ),
        ),
        (
            "synced without backoffs",
            json!({"type": "synced", "seq": 1, "at": 1, "counts": {"instances": 0, "operations": 0}}),
        ),
        (
            "reaper by someone",
            json!({"type": "reaper", "by": "someone", "pid": null, "paused": false,
                   "next_pass_at": null, "text": "", "last_pass": null}),
        ),
        (
            "an unknown banner",
            json!({"type": "banner", "id": "weather", "level": "error", "text": "rain"}),
        ),
        (
            "a banner of level info",
            json!({"type": "banner", "id": "clock", "level": "info", "text": "x"}),
        ),
        (
            "activity without detail",
            json!({"type": "activity", "at": 1, "actor": "reaper", "instance": "golf", "kind": "reaped"}),
        ),
        (
            "a last pass without collected",
            json!({"type": "reaper", "by": "agent", "pid": 1, "paused": false,
                   "next_pass_at": null, "text": "",
                   "last_pass": {"at": 1, "reaped": 0, "failed": 0, "skipped": 0}}),
        ),
        (
            "a detail that is not the detail view",
            json!({"type": "reply", "id": 1, "ok": true, "detail": "reap requested"}),
        ),
        (
            "a refusal without its error",
            json!({"type": "reply", "id": 1, "ok": false}),
        ),
        (
            "a metrics document is lines, not one text",
            json!({"type": "reply", "id": 1, "ok": true, "metrics": "stackless_store_up 1\n"}),
        ),
        (
            "an unknown error kind",
            json!({"type": "reply", "id": 1, "ok": false, "error": {"kind": "oops", "message": ""}}),
        ),
        (
            "an id of 65 characters",
            json!({"type": "reply", "id": "x".repeat(65), "ok": true}),
        ),
        (
            "a log without at",
            json!({"type": "log", "logs": 1, "service": "web", "text": "GET /"}),
        ),
    ];
    for (what, message) in cases {
        assert!(
            validate(&message.to_string()).is_err(),
            "{what}: validated: {message}"
        );
    }
    assert!(validate("not json").is_err());
}

#[test]
fn commands_validate_against_defs_command() {
    for line in [
        r#"{"id":7,"cmd":"reap","name":"golf","birth":"ab"}"#,
        r#"{"id":7,"cmd":"reap","name":"golf","birth":{"instance_id":"ab","resource_namespace":"sl-ab"}}"#,
        r#"{"id":7,"cmd":"verify","name":"golf","birth":{"instance_id":"ab"}}"#,
        r#"{"id":1,"cmd":"renew","name":"golf","lease_secs":2592000}"#,
        r#"{"id":"x","cmd":"down","name":"golf"}"#,
        r#"{"id":1,"cmd":"queue_down","name":"golf","birth":null}"#,
        r#"{"id":1,"cmd":"cancel","operation":"op-1"}"#,
        r#"{"id":1,"cmd":"pause"}"#,
        r#"{"id":1,"cmd":"resume","protocol":1}"#,
        r#"{"id":1,"cmd":"pass"}"#,
        r#"{"id":1,"cmd":"renew","name":"golf","birth":null,"lease_secs":3600}"#,
        r#"{"id":1,"cmd":"verify","name":"golf"}"#,
        r#"{"id":1,"cmd":"detail","name":"golf"}"#,
        r#"{"id":1,"cmd":"logs","name":"golf","service":"web"}"#,
        r#"{"id":2,"cmd":"logs_stop","logs":1}"#,
        r#"{"id":3,"cmd":"ping"}"#,
        r#"{"id":5,"cmd":"metrics"}"#,
        r#"{"id":4,"cmd":"down","name":"golf","birth":null,"created_at":1700000000}"#,
    ] {
        validate_command(line).unwrap();
    }
    for line in [
        r#"{"cmd":"ping"}"#,
        r#"{"id":1.5,"cmd":"ping"}"#,
        r#"{"id":1,"cmd":"rm"}"#,
        r#"{"id":1,"cmd":"reap"}"#,
        r#"{"id":1,"cmd":"reap","name":"golf","birth":5}"#,
        r#"{"id":1,"cmd":"cancel"}"#,
        r#"{"id":1,"cmd":"renew","name":"golf","lease_secs":0}"#,
        r#"{"id":1,"cmd":"renew","name":"golf","lease_secs":2592001}"#,
        r#"{"id":1,"cmd":"renew","name":"golf","lease_secs":1.5}"#,
        r#"{"id":1,"cmd":"down","name":"golf","birth":{"resource_namespace":"sl-ab"}}"#,
        r#"{"id":1,"cmd":"down","name":"golf","birth":{"instance_id":5}}"#,
        r#"{"id":1,"cmd":"down","name":"golf","birth":[]}"#,
        r#"{"id":1,"cmd":"logs_stop"}"#,
        r#"{"id":1,"cmd":"ping","protocol":"1"}"#,
        r#"{"id":1,"cmd":"down","name":"golf","birth":null,"created_at":"1700000000"}"#,
    ] {
        assert!(validate_command(line).is_err(), "validated: {line}");
    }
    // A command is not an out-message, nor the other way round.
    assert!(validate(r#"{"id":3,"cmd":"ping"}"#).is_err());
    assert!(validate_command(r#"{"type":"reset","seq":1}"#).is_err());
}

fn reaper_line() -> ReaperLine {
    ReaperLine {
        by: "agent".into(),
        pid: Some(4242),
        paused: false,
        next_pass_at: Some(1_764_655_260),
        text: "reaper: every 60s".into(),
        last_pass: Some(LastPass {
            at: 1_764_655_200,
            reaped: 1,
            failed: 0,
            collected: 0,
            skipped: 2,
        }),
    }
}

fn core_hello(follow_only: bool) -> String {
    lines::hello(&Hello {
        host: "db1".into(),
        store: "/srv/state.db".into(),
        schema: 14,
        generation: "controller",
        read_only: follow_only,
        dry_run: false,
        follow_only,
        reaper: reaper_line(),
        teardown: ["stackless", "down", "{name}", "--json"]
            .map(str::to_owned)
            .to_vec(),
        stackless: "stackless".into(),
        now: 1_764_655_200,
    })
}

#[test]
fn every_line_the_core_builds_validates() {
    let activity = Activity::new(
        1_764_655_260,
        Actor::Reaper,
        "golf",
        ActivityKind::Reaped,
        "x",
    );
    let out = [
        core_hello(false),
        core_hello(true),
        lines::reaper(&reaper_line()),
        lines::reaper(&ReaperLine {
            by: "nobody".into(),
            pid: None,
            paused: true,
            next_pass_at: None,
            text: "reaper: paused".into(),
            last_pass: None,
        }),
        lines::banner(&Banner {
            id: "store_busy".into(),
            level: "warning".into(),
            text: "store busy".into(),
        }),
        lines::banner_cleared("store_busy"),
        lines::activity(&activity, "down in 1.2s"),
        lines::heartbeat(1_764_655_265, 3),
        lines::reply(Reply {
            message: Some("reap requested for golf".into()),
            ..Reply::ok(&json!(7))
        }),
        lines::reply(Reply {
            detail: Some(DetailReply {
                name: "golf".into(),
                birth: None,
                lines: vec!["golf".into()],
            }),
            ..Reply::ok(&json!("d"))
        }),
        lines::reply(Reply::ok(&json!(1))),
        lines::reply_error(&Value::Null, "too_long", "a line over 65,536 bytes"),
        lines::reply_error(&json!("8"), "refused", "refused: the name is not DNS-safe"),
    ];
    let logs = [
        lines::log(&json!(10), "web", "GET / 200", false),
        lines::log(&json!(10), "web", &"x".repeat(3_000), false),
    ];
    let out: Vec<String> = out
        .into_iter()
        .chain(logs.into_iter().flatten())
        .chain([lines::logs_end(&json!(10), "gone")])
        .collect();
    for line in out {
        validate(&line).unwrap();
    }
}

/// A snapshot of the store at `path`, probed as host `vm` with no live
/// process.
fn snapshot_of(path: &std::path::Path) -> stackless_tui::model::Snapshot {
    use stackless_tui::store::{Access, Store, probe::FixedProbe};
    let mut store = Store::open(path, Access::ReadOnly).unwrap();
    store
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap()
}

/// The lines of one group of the core's, as the agent streams them
/// (`reset` when `seq` is 1).
fn group_lines(
    core: &mut CoreTables,
    snapshot: &stackless_tui::model::Snapshot,
    seq: u64,
) -> Vec<String> {
    let mut out = Vec::new();
    lines::stream_group(
        seq,
        seq == 1,
        core,
        snapshot,
        crate::common::CAPTURE,
        &mut |line| {
            out.push(line);
        },
    );
    out
}

/// A client that has read `hello` and the lines.
fn read(lines: &[String]) -> Reader {
    let mut reader = Reader::new();
    reader.apply(&core_hello(false)).unwrap();
    for line in lines {
        validate(line).unwrap();
        reader.apply(line).unwrap();
    }
    reader
}

#[test]
fn the_cores_snapshot_of_every_fixture_validates_and_counts_check() {
    for name in [
        "real-0.4.0-v14.db",
        "hostile.db",
        "older-v2.db",
        "newer-v6.db",
        "stackless-real-v4.db",
    ] {
        let snapshot = crate::common::ui::fixture_snapshot(name);
        let lines = group_lines(&mut CoreTables::new(), &snapshot, 1);
        let reader = read(&lines);
        assert_eq!(reader.synced, Some(1), "{name}");
        assert_eq!(
            reader.shown.instances.len(),
            snapshot.instances.len(),
            "{name}"
        );
        assert_eq!(reader.shown.operations.len(), snapshot.operations.len());
        assert_eq!(
            reader.shown.backoffs.len(),
            snapshot.reap_attempts.len(),
            "{name}"
        );
    }
}

#[test]
fn a_delta_leaves_the_client_where_a_fresh_reset_would() {
    use crate::common::stores::{self, exec};
    let (_dir, path) = stores::v14();
    let mut core = CoreTables::new();
    let mut lines = group_lines(&mut core, &snapshot_of(&path), 1);
    exec(
        &path,
        "UPDATE leases SET expires_at = expires_at + 60 WHERE instance = 'delta';
         DELETE FROM instances WHERE name = 'echo';
         UPDATE instances SET instance_id = 'f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6',
           resource_namespace = 'sl-f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6' WHERE name = 'bravo';
         UPDATE operations SET status = 'cancelled' WHERE id = 'op-delta-up';
         INSERT INTO reap_attempts VALUES ('alpha', 1, 'reaper.down.failed: exit 1', 1);",
    );
    let after = snapshot_of(&path);
    let delta = group_lines(&mut core, &after, 2);
    let delta_rows: Vec<Value> = delta
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["type"] == "rows")
        .collect();
    let changed = |table: &str, part: &str| -> usize {
        delta_rows
            .iter()
            .filter(|m| m["table"] == table)
            .map(|m| m[part].as_array().unwrap().len())
            .sum()
    };
    // delta's lease, bravo's new birth: two upserts; echo and bravo's old
    // birth: two removes; one operation; one backoff.
    assert_eq!(changed("instances", "upsert"), 2);
    assert_eq!(changed("instances", "remove"), 2);
    assert_eq!(changed("operations", "upsert"), 1);
    assert_eq!(changed("backoffs", "upsert"), 1);
    lines.extend(delta);
    let incremental = read(&lines);
    assert_eq!(incremental.synced, Some(2));
    let fresh = read(&group_lines(&mut CoreTables::new(), &after, 1));
    assert_eq!(incremental.shown, fresh.shown);
    assert!(incremental.shown.instances.contains_key(&(
        "bravo".into(),
        Some("f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6".into())
    )));
}

fn reader_error(lines: &[Value]) -> String {
    let mut reader = Reader::new();
    for line in lines {
        if let Err(e) = reader.apply(&line.to_string()) {
            return e;
        }
    }
    panic!("the client took every line: {lines:?}")
}

#[test]
fn the_client_stops_on_a_newer_protocol() {
    assert_eq!(
        reader_error(&[with(hello(), &["protocol"], Some(json!(2)))]),
        "protocol 2 is newer than this client (1)"
    );
}

#[test]
fn the_client_fails_loudly_on_a_broken_stream() {
    let reset = json!({"type": "reset", "seq": 1});
    let synced = |seq: u64, instances: u64| {
        json!({"type": "synced", "seq": seq, "at": 1,
               "counts": {"instances": instances, "operations": 0, "backoffs": 0}})
    };
    let one = rows("instances", vec![instance_row()], vec![]);
    assert_eq!(
        reader_error(std::slice::from_ref(&reset)),
        "`reset` before `hello`"
    );
    assert_eq!(
        reader_error(&[hello(), one.clone()]),
        "the first group does not start with `reset`"
    );
    assert_eq!(
        reader_error(&[hello(), reset.clone(), one.clone(), synced(1, 2)]),
        "synced 1: counts.instances is Some(2), this client holds 1"
    );
    assert_eq!(
        reader_error(&[hello(), reset.clone(), synced(1, 0), synced(3, 0)]),
        format!("seq 3 where 2 was due: {}", synced(3, 0))
    );
    let gone = with(
        rows(
            "instances",
            vec![],
            vec![json!({"name": "golf", "birth": null})],
        ),
        &["seq"],
        Some(json!(2)),
    );
    assert_eq!(
        reader_error(&[hello(), reset.clone(), one, synced(1, 1), gone]),
        "remove of instance (\"golf\", None), not held"
    );
    let small = with(hello(), &["max_message_bytes"], Some(json!(20)));
    assert_eq!(
        reader_error(&[small, reset]),
        "a reset line of 25 bytes with its newline, over max_message_bytes 20"
    );
    // And a stream that keeps the rules is read whole.
    let mut reader = Reader::new();
    for line in [hello(), json!({"type": "reset", "seq": 1}), synced(1, 0)] {
        reader.apply(&line.to_string()).unwrap();
    }
    assert_eq!(
        reader.apply(&json!({"type": "heartbeat", "at": 2, "seq": 1}).to_string()),
        Ok(Seen::Other("heartbeat".into()))
    );
}
