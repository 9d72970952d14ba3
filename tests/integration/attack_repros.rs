//! Reproductions of defects found by trying the agent and the child-answer
//! redaction as an attacker would. Each test states the rule it checks; one
//! whose rule does not hold yet is ignored (`repro: ...`); run those with
//! `cargo test --locked --test integration attack_repros:: -- --ignored`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::fixture;

/// Canaries a failing child printed that must not survive its redaction.
fn leaked<'a>(shown: &str, canaries: &[&'a str]) -> Vec<&'a str> {
    canaries
        .iter()
        .copied()
        .filter(|c| shown.contains(c))
        .collect()
}

/// A `serve --stdio` agent on a fixture copy, `--no-reaper`, with a slow
/// fake stackless and teardown that log their argv to `<dir>/ran.log`.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Agent {
    fn start(dir: &Path, store: &Path) -> Self {
        Self::start_with(dir, store, "")
    }

    /// [`Agent::start`] with `args` before `{name}` in its `--down-cmd`.
    fn start_with(dir: &Path, store: &Path, args: &str) -> Self {
        let script = dir.join("slow.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$@\" >> '{}'\nsleep 2\necho '{{\"ok\":true}}'\n",
                dir.join("ran.log").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
            .env("HOME", dir)
            .env("XDG_STATE_HOME", dir)
            .env("XDG_CONFIG_HOME", "/nonexistent-config")
            .arg("--no-reaper")
            .arg("--stackless")
            .arg(&script)
            .arg("--down-cmd")
            .arg(format!("{} down {args} {{name}}", script.display()))
            .arg("--state")
            .arg(store)
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut agent = Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        };
        agent.until("the first synced", |m| m["type"] == "synced");
        agent
    }

    /// Read until a message satisfies `done` (20 s at most): that message.
    fn until(&mut self, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        if let Some(m) = self.seen.iter().find(|m| done(m)) {
            return m.clone();
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("{what}: {e}; seen: {:#?}", self.seen));
            self.seen.push(m.clone());
            if done(&m) {
                return m;
            }
        }
    }

    /// The instance row's birth of `name` in the first snapshot.
    fn birth(&mut self, name: &str) -> Value {
        let row = self.until(&format!("the row of {name}"), |m| {
            m["type"] == "rows"
                && m["upsert"]
                    .as_array()
                    .is_some_and(|rows| rows.iter().any(|r| r["name"] == name))
        });
        row["upsert"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()["birth"]
            .clone()
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn reply(&mut self, id: &str) -> Value {
        self.until(&format!("the reply to {id}"), |m| {
            m["type"] == "reply" && m["id"] == id
        })
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A renew of an instance whose teardown this agent is running is
/// refused, as a renew behind a pending `down` operation is
/// (`model::verbs::refusal`): its `stackless up --name NAME` races the
/// `down` (0.4.0 answers `engine.substrate.required` on the tombstone when
/// no substrate is configured; with one it would create a new birth).
#[test]
fn a_renew_during_this_agents_teardown_of_it_is_refused() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store);
    let birth = agent.birth("hotel");
    agent.send(&format!(
        r#"{{"id":"down","cmd":"down","name":"hotel","birth":{birth}}}"#
    ));
    assert_eq!(agent.reply("down")["ok"], true);
    agent.send(&format!(
        r#"{{"id":"renew","cmd":"renew","name":"hotel","birth":{birth},"lease_secs":600}}"#
    ));
    let renew = agent.reply("renew");
    // The teardown's outcome comes 2 s after both children would start.
    agent.until("the teardown's outcome", |m| {
        m["type"] == "activity"
            && m["instance"] == "hotel"
            && (m["kind"] == "failed" || m["kind"] == "torn down")
    });
    let ran = std::fs::read_to_string(dir.path().join("ran.log")).unwrap_or_default();
    assert_eq!(
        (renew["ok"].clone(), renew["error"]["kind"].clone()),
        (Value::Bool(false), Value::from("refused")),
        "{renew}; ran:\n{ran}"
    );
    assert!(!ran.contains("up --name hotel"), "ran:\n{ran}");
}

/// A command line with a field given twice is `bad_request`: which of the
/// two the agent acts on is not what a reader (or another parser) of the
/// line sees; nothing runs.
#[test]
fn a_command_with_a_field_twice_is_a_bad_request_and_runs_nothing() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store);
    let birth = agent.birth("hotel");
    agent.send(&format!(
        r#"{{"id":"twice","cmd":"down","name":"hotel","birth":{{"instance_id":"00000000000000000000000000000000"}},"birth":{birth}}}"#
    ));
    let reply = agent.reply("twice");
    // A verify sent after it ends 2 s after it starts: a teardown the line
    // started has started by then.
    let golf = agent.birth("golf");
    agent.send(&format!(
        r#"{{"id":"after","cmd":"verify","name":"golf","birth":{golf}}}"#
    ));
    agent.until("the verify's outcome", |m| {
        m["type"] == "activity"
            && m["instance"] == "golf"
            && m["kind"].as_str().is_some_and(|k| k.starts_with("verif"))
    });
    let ran = std::fs::read_to_string(dir.path().join("ran.log")).unwrap_or_default();
    assert_eq!(
        reply["error"]["kind"], "bad_request",
        "{reply}; ran:\n{ran}"
    );
    // The verify ran; no down did.
    assert_eq!(ran, "verify golf --json\n");
}

/// A credential written in the teardown command (`--token=X`,
/// `https://u:X@h`: forms every log line is redacted of) is redacted in
/// what the agent says of it: `hello`'s `teardown`, the `tearing down`
/// activity.
#[test]
fn credentials_in_the_teardown_command_are_redacted_on_the_stream() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start_with(
        dir.path(),
        &store,
        "--token=CANARY_ARGV1 https://u:CANARY_ARGV2@h.example",
    );
    let birth = agent.birth("hotel");
    agent.send(&format!(
        r#"{{"id":"down","cmd":"down","name":"hotel","birth":{birth}}}"#
    ));
    agent.until("the teardown's start", |m| {
        m["type"] == "activity" && m["kind"] == "tearing down"
    });
    let stream = agent
        .seen
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        leaked(&stream, &["CANARY_ARGV1", "CANARY_ARGV2"]),
        Vec::<&str>::new()
    );
    let script = dir.path().join("slow.sh").display().to_string();
    let hello = agent.until("hello", |m| m["type"] == "hello");
    assert_eq!(
        hello["teardown"],
        serde_json::json!([
            script,
            "down",
            "--token=[redacted]",
            "https://[redacted]@h.example",
            "{name}"
        ])
    );
    let started = agent.until("tearing down", |m| {
        m["type"] == "activity" && m["kind"] == "tearing down"
    });
    assert_eq!(
        started["detail"],
        format!("{script} down '--token=[redacted]' 'https://[redacted]@h.example' hotel")
    );
    // The argv run is the one written.
    agent.until("the teardown's outcome", |m| {
        m["type"] == "activity" && m["instance"] == "hotel" && m["kind"] != "tearing down"
    });
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ran.log")).unwrap(),
        "down --token=CANARY_ARGV1 https://u:CANARY_ARGV2@h.example hotel\n"
    );
}

/// On a store before schema 7 (no `instance_id`: a birth is its
/// `created_at`, as the keys compare it), a `down` sent for the row a
/// client saw is refused once the name was born again: the `d` key is
/// (`the birth asked about (created at X) is not the instance's`), and a
/// command acts on exactly what was asked about.
#[test]
fn a_down_after_a_rebirth_on_a_pre_7_store_is_refused() {
    let (dir, store) = fixture("real-0.3.0-v5.db");
    let mut agent = Agent::start(dir.path(), &store);
    let seen = agent.until("golf's row", |m| {
        m["type"] == "rows"
            && m["upsert"]
                .as_array()
                .is_some_and(|rows| rows.iter().any(|r| r["name"] == "golf"))
    });
    let row = seen["upsert"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "golf")
        .unwrap()
        .clone();
    assert_eq!(row["birth"], Value::Null);
    let created = row["created_at"].as_i64().unwrap();
    // Born again: stackless 0.3 brought it down and up (a new created_at).
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute(
        "UPDATE instances SET created_at = created_at + 1000 WHERE name = 'golf'",
        [],
    )
    .unwrap();
    drop(conn);
    agent.until("the new birth on the stream", |m| {
        m["type"] == "rows"
            && m["upsert"].as_array().is_some_and(|rows| {
                rows.iter()
                    .any(|r| r["name"] == "golf" && r["created_at"] == created + 1000)
            })
    });
    agent.send(r#"{"id":"down","cmd":"down","name":"golf","birth":null}"#);
    let reply = agent.reply("down");
    // The birth the client saw, named by its created_at: refused too.
    agent.send(&format!(
        r#"{{"id":"old","cmd":"down","name":"golf","birth":null,"created_at":{created}}}"#
    ));
    let old = agent.reply("old");
    let ran = std::fs::read_to_string(dir.path().join("ran.log")).unwrap_or_default();
    assert_eq!(
        (reply["ok"].clone(), ran.as_str()),
        (Value::Bool(false), ""),
        "{reply}"
    );
    let refusal = |asked: &str| {
        Value::from(format!(
            "refused: the birth asked about ({asked}) is not the instance's (created at {}): it was born again, or another store was read",
            created + 1000
        ))
    };
    assert_eq!(
        (
            reply["error"]["message"].clone(),
            old["error"]["message"].clone()
        ),
        (refusal("none"), refusal(&format!("created at {created}")))
    );
}

/// A `lease_secs` written as a fraction is refused however close it is to
/// a whole number (docs/protocol.md: "a fraction ... is refused"): the
/// number is judged as written, not as an `f64` rounds it.
#[test]
fn a_fractional_lease_is_refused_as_written() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store);
    let mut kinds = Vec::new();
    // Two instances: one renew of each at a time.
    for (id, name, lease) in [
        ("low", "hotel", "0.99999999999999999"),
        ("high", "india", "2592000.0000000001"),
    ] {
        let birth = agent.birth(name);
        agent.send(&format!(
            r#"{{"id":"{id}","cmd":"renew","name":"{name}","birth":{birth},"lease_secs":{lease}}}"#
        ));
        let reply = agent.reply(id);
        kinds.push((id, reply["error"]["message"].clone()));
    }
    let refused = Value::from("refused: a lease is 1 s to 30 days");
    assert_eq!(
        kinds,
        [("low", refused.clone()), ("high", refused)],
        "{:#?}",
        agent.seen
    );
}

/// A backoff's `last_error` already in the store (written by an older
/// console, another reaper, or by hand) is shown through the same rules as
/// a child's answer, as the audit trail read back is: `snapshot --json`
/// (and the stream's backoff rows, the detail) carry no credential-named
/// field's value, no `token=x`, no bearer, no URL password.
#[test]
fn a_stored_last_error_is_shown_through_the_child_answer_rules() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute(
        "INSERT OR REPLACE INTO reap_attempts VALUES ('golf', 2, ?1, 4102444800)",
        [r#"down failed: {"password":"CANARY_S1"} token=CANARY_S2 Authorization: Bearer CANARY_S3 https://u:CANARY_S4@h.example"#],
    )
    .unwrap();
    drop(conn);
    let out = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .arg("--state")
        .arg(&store)
        .args(["--read-only", "snapshot", "--json"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("down failed"), "{shown}");
    assert_eq!(
        leaked(
            &shown,
            &["CANARY_S1", "CANARY_S2", "CANARY_S3", "CANARY_S4"]
        ),
        Vec::<&str>::new()
    );
    let snapshot: Value = serde_json::from_str(&shown).unwrap();
    let golf = snapshot["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "golf")
        .unwrap();
    assert_eq!(
        golf["reap_attempt"]["last_error"],
        r#"down failed: {"password":"[redacted]"} token=[redacted] Authorization: Bearer [redacted] https://[redacted]@h.example"#
    );
}

/// A teardown never starts on a store whose file was replaced while its
/// `-wal` belongs to the old file (the agent's own `store_error` banner:
/// `opening it would apply` the old log to the new file): the check right
/// before the command runs refuses it as the banner does once it is up,
/// also when the command comes before the watcher saw the swap.
#[test]
fn no_teardown_runs_on_a_replaced_store_file_with_the_old_wal() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store);
    // Born again in place (the new birth in the -wal), seen on the stream.
    let born = "0123456789abcdef0123456789abcdef";
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute(
        "UPDATE instances SET instance_id = ?1 WHERE name = 'golf'",
        [born],
    )
    .unwrap();
    drop(conn);
    agent.until("the new birth on the stream", |m| {
        m["type"] == "rows"
            && m["upsert"].as_array().is_some_and(|rows| {
                rows.iter()
                    .any(|r| r["name"] == "golf" && r["birth"]["instance_id"] == born)
            })
    });
    // Another store (a whole copy, golf born once more, rollback journal)
    // moved over the path; the old -wal and -shm stay beside it.
    let other = dir.path().join("other.db");
    for suffix in ["", "-wal", "-shm"] {
        std::fs::copy(
            format!("{}{suffix}", store.display()),
            format!("{}{suffix}", other.display()),
        )
        .unwrap();
    }
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute(
        "UPDATE instances SET instance_id = 'fedcba9876543210fedcba9876543210' WHERE name = 'golf'",
        [],
    )
    .unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    conn.query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    std::fs::rename(&other, &store).unwrap();
    agent.send(&format!(
        r#"{{"id":"down","cmd":"down","name":"golf","birth":{{"instance_id":"{born}"}}}}"#
    ));
    let down = agent.reply("down");
    let outcome = agent.until("the teardown's end, or its refusal", |m| {
        m["type"] == "activity"
            && m["instance"] == "golf"
            && m["actor"] == "operator"
            && m["kind"] != "tearing down"
    });
    let ran = std::fs::read_to_string(dir.path().join("ran.log")).unwrap_or_default();
    assert_eq!(ran, "", "{:#?}", agent.seen);
    // Admitted on the snapshot shown (the swap not seen yet), then the
    // re-check right before the command finds another file at the path.
    assert_eq!(
        (down["ok"].clone(), outcome["kind"].clone()),
        (Value::Bool(true), Value::from("error"))
    );
    let stale = format!(
        "the store file {path} was replaced, but {path}-wal (and its -shm) belong to the old file: opening it would apply the old file's commits to the new one. Stop stackless and this console, then remove {path}-wal and the -shm beside it (or put the old file back)",
        path = store.display()
    );
    assert_eq!(outcome["detail"], Value::from(stale.as_str()));
    // Once the banner is up, the same command is refused in its reply.
    agent.until("the store_error banner", |m| {
        m["type"] == "banner" && m["id"] == "store_error"
    });
    agent.send(&format!(
        r#"{{"id":"again","cmd":"down","name":"golf","birth":{{"instance_id":"{born}"}}}}"#
    ));
    let again = agent.reply("again");
    assert_eq!(
        (again["ok"].clone(), again["error"]["kind"].clone()),
        (Value::Bool(false), Value::from("refused")),
        "{again}"
    );
    assert_eq!(
        again["error"]["message"],
        Value::from(format!("refused: the store cannot be read now ({stale}): r, d, L and v are off until it reads again").as_str()),
    );
    let ran = std::fs::read_to_string(dir.path().join("ran.log")).unwrap_or_default();
    assert_eq!(ran, "");
}

/// `birth` has one shape on the wire: a `rows` message's `remove` key
/// carries the birth as an instance row and a command do
/// (`{"instance_id": ..., "resource_namespace": ...}`), so a client can
/// send back what it read.
#[test]
fn a_remove_key_carries_the_birth_object() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store);
    let old = agent.birth("golf");
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute(
        "UPDATE instances SET instance_id = '0123456789abcdef0123456789abcdef' WHERE name = 'golf'",
        [],
    )
    .unwrap();
    drop(conn);
    let rows = agent.until("golf's old birth removed", |m| {
        m["type"] == "rows"
            && m["remove"]
                .as_array()
                .is_some_and(|keys| keys.iter().any(|k| k["name"] == "golf"))
    });
    let key = rows["remove"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "golf")
        .unwrap()
        .clone();
    assert_eq!(key["birth"]["instance_id"], old["instance_id"], "{key}");
}
