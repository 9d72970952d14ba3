//! `serve --stdio`'s reads (docs/protocol.md, "Commands"): `detail` is
//! answered with the detail view's lines, `logs` with the services and
//! their tail, then each new line as it is written, until `logs_stop`;
//! on the demo's store, whose `demo-logs` thread writes a gateway line
//! every 2 s.

use std::io::Write as _;
use std::time::{Duration, Instant};

use super::agent_process::{lines_of, spawn, wait_for};

#[test]
fn detail_and_a_followed_service_log_of_the_demo() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut child = spawn(home.path(), None, &["--demo", "v4", "serve", "--stdio"]);
    let rx = lines_of(&mut child);
    let hello = wait_for(&rx, |m| m["type"] == "hello");
    assert_eq!(
        (hello["protocol"].as_u64(), hello["schema"].as_i64()),
        (Some(1), Some(4))
    );
    wait_for(&rx, |m| m["type"] == "synced");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"id":"d","cmd":"detail","name":"api-gateway-dev"}}"#
    )
    .expect("write");
    let detail = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "d");
    assert_eq!(detail["ok"], true, "{detail}");
    let text: Vec<&str> = detail["detail"]["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(text[0], " Instance");
    assert_eq!(text[1], "   name             api-gateway-dev");
    writeln!(
        stdin,
        r#"{{"id":"l","cmd":"logs","name":"api-gateway-dev","service":"gateway"}}"#
    )
    .expect("write");
    let opened = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "l");
    assert_eq!(opened["ok"], true, "{opened}");
    assert_eq!(
        opened["services"],
        serde_json::json!(["gateway", "redis", "stackless"])
    );
    let opened_at = Instant::now();
    let tail = wait_for(&rx, |m| m["type"] == "log" && m["logs"] == "l");
    assert_eq!(tail["service"], "gateway");
    // The tail comes with the reply, at once; a line arriving a second
    // later was written after the open (the demo writes one every 2 s)
    // and followed.
    let followed = wait_for(&rx, |m| {
        m["type"] == "log" && opened_at.elapsed() > Duration::from_secs(1)
    });
    assert_eq!(
        (followed["logs"].as_str(), followed["service"].as_str()),
        (Some("l"), Some("gateway"))
    );
    writeln!(stdin, r#"{{"id":"s","cmd":"logs_stop","logs":"l"}}"#).expect("write");
    wait_for(&rx, |m| {
        m["type"] == "logs_end" && m["logs"] == "l" && m["reason"] == "stopped"
    });
    wait_for(&rx, |m| {
        m["type"] == "reply" && m["id"] == "s" && m["ok"] == true
    });
    writeln!(
        stdin,
        r#"{{"id":"u","cmd":"logs","name":"api-gateway-dev","service":"nope"}}"#
    )
    .expect("write");
    let unknown = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "u");
    assert_eq!(
        unknown["error"],
        serde_json::json!({"kind": "refused", "message": "logs: no service nope in its logs"})
    );
    // A stream whose instance leaves the store ends `gone`.
    writeln!(
        stdin,
        r#"{{"id":"g","cmd":"logs","name":"api-gateway-dev"}}"#
    )
    .expect("write");
    wait_for(&rx, |m| {
        m["type"] == "reply" && m["id"] == "g" && m["ok"] == true
    });
    let store = hello["store"]
        .as_str()
        .expect("the store's path")
        .to_owned();
    let db = rusqlite::Connection::open(&store).expect("open the demo store");
    db.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    db.execute_batch(
        "PRAGMA foreign_keys = ON; DELETE FROM instances WHERE name = 'api-gateway-dev';",
    )
    .expect("delete");
    wait_for(&rx, |m| {
        m["type"] == "logs_end" && m["logs"] == "g" && m["reason"] == "gone"
    });
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

/// A 60,000-character reap error does not push the sections after it out of
/// `detail` (each line is cut, not the reply), and `detail` reads any row, a
/// name that is not DNS-safe too (as Enter opens it), while an action on
/// such a name is refused and audited.
#[test]
fn a_long_value_keeps_the_detail_whole_and_any_row_can_be_read() {
    let (dir, path) = crate::common::fixture_as("real-0.4.0-v14.db", "state.db");
    let db = rusqlite::Connection::open(&path).expect("open");
    db.execute(
        "INSERT INTO reap_attempts VALUES ('alpha', 2, ?1, 4000000000)",
        [format!("engine.teardown.survivors: {}", "E".repeat(60_000))],
    )
    .expect("attempt");
    drop(db);
    let mut child = spawn(
        dir.path(),
        Some(&path),
        &["--no-reaper", "serve", "--stdio"],
    );
    let rx = lines_of(&mut child);
    wait_for(&rx, |m| m["type"] == "synced");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, r#"{{"id":"d","cmd":"detail","name":"alpha"}}"#).expect("write");
    let detail = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "d");
    let lines: Vec<&str> = detail["detail"]["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    for section in [
        " Reap attempt",
        " Checkpoints (3) · p shows payloads",
        " Observations",
    ] {
        assert!(lines.contains(&section), "{section} missing: {lines:?}");
    }
    assert!(!lines.iter().any(|l| l.contains("more lines")), "{lines:?}");
    assert!(lines.iter().all(|l| l.chars().count() <= 1_024));
    // Not in the store, not DNS-safe: read, answered `no such instance`.
    writeln!(stdin, r#"{{"id":"h","cmd":"detail","name":"--help"}}"#).expect("write");
    let hostile = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "h");
    assert_eq!(
        hostile["error"]["message"], "refused: no such instance in the store",
        "{hostile}"
    );
    // An action on it: refused, and said as a key's refusal is.
    writeln!(stdin, r#"{{"id":"r","cmd":"reap","name":"--help"}}"#).expect("write");
    wait_for(&rx, |m| {
        m["type"] == "reply" && m["id"] == "r" && m["ok"] == false
    });
    let said = wait_for(&rx, |m| m["type"] == "activity" && m["kind"] == "refused");
    assert_eq!(said["instance"], "--help");
    drop(stdin);
    assert!(child.wait().expect("wait").success());
    let audit = std::fs::read_to_string(dir.path().join("stackless-tui").join("audit.jsonl"))
        .expect("audit");
    assert!(
        audit
            .lines()
            .any(|l| l.contains(r#""instance":"--help""#) && l.contains("not DNS-safe")),
        "{audit}"
    );
}
