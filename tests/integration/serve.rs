//! `stackless-tui serve --stdio` through the real binary, read by the
//! tests' protocol client (`tests/common/protocol.rs`, which knows only
//! docs/protocol.md): every line validated against
//! docs/protocol.schema.json, the tables rebuilt and compared with
//! `snapshot --json` after each change another process makes to the store;
//! the bytes a one-lease change costs at 1,200 instances; bad input on
//! stdin; stdin and stdout closed.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::protocol::{Reader, Tables, short, validate};
use crate::common::{counting_down, fixture, unix_now};

/// The binary with nothing of the developer's environment, its HOME and
/// state home `home`.
fn bin(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stackless-tui"));
    command
        .env_remove("STACKLESS_STATE_URL")
        .env_remove("STACKLESS_BIN")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .env("XDG_STATE_HOME", home)
        .env("TZ", "UTC0");
    for (key, _) in std::env::vars() {
        if key.starts_with("STACKLESS_TUI_") {
            command.env_remove(key);
        }
    }
    command
}

/// A stackless CLI that must not be run here: it logs its argv beside the
/// store and fails.
fn fake_stackless(dir: &Path) -> PathBuf {
    let script = dir.join("stackless");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n",
            dir.join("stackless.log").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// What the reading thread saw.
#[derive(Default)]
struct Stream {
    reader: Reader,
    /// Every line, in order.
    lines: Vec<String>,
    /// When each line was read.
    times: Vec<Instant>,
    /// Lines the schema or the client refused, with why.
    errors: Vec<String>,
    /// stdout ended.
    closed: bool,
}

/// One `serve --stdio` agent with its stdout read on a thread.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    stream: Arc<(Mutex<Stream>, Condvar)>,
    stderr: PathBuf,
}

impl Agent {
    /// Start `serve --stdio` on `store` with `flags` before the
    /// subcommand; stderr to `<dir>/stderr`.
    fn start(dir: &Path, store: &Path, flags: &[&str]) -> Self {
        Self::start_with(dir, store, flags, &["serve", "--stdio"])
    }

    /// Start the subcommand `sub` (`serve --stdio`, `snapshot --follow`).
    fn start_with(dir: &Path, store: &Path, flags: &[&str], sub: &[&str]) -> Self {
        let mut command = bin(dir);
        command
            .args(flags)
            .arg("--stackless")
            .arg(fake_stackless(dir))
            .arg("--state")
            .arg(store)
            .args(sub);
        Self::spawn(dir, command)
    }

    /// Spawn `command` with stdin and stdout piped, stderr to
    /// `<dir>/stderr`.
    fn spawn(dir: &Path, mut command: Command) -> Self {
        let stderr = dir.join("stderr");
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            stream: Arc::new((Mutex::new(Stream::default()), Condvar::new())),
            stderr,
        }
    }

    /// Read its stdout on a thread: validate every line against the
    /// schema, apply it to the client.
    fn follow(mut self) -> Self {
        let out = self.child.stdout.take().expect("stdout");
        let stream = Arc::clone(&self.stream);
        std::thread::spawn(move || {
            let mut out = BufReader::new(out);
            loop {
                let mut line = String::new();
                let read = out.read_line(&mut line);
                let (lock, wake) = &*stream;
                let mut seen = lock.lock().unwrap();
                if !matches!(read, Ok(n) if n > 0) {
                    seen.closed = true;
                    wake.notify_all();
                    return;
                }
                let Some(line) = line.strip_suffix('\n') else {
                    seen.errors
                        .push(format!("a line without its newline: {}", short(&line)));
                    continue;
                };
                if let Err(e) = validate(line) {
                    seen.errors.push(e);
                }
                if let Err(e) = seen.reader.apply(line) {
                    seen.errors.push(format!("{e}\n  in: {}", short(line)));
                }
                seen.lines.push(line.to_owned());
                seen.times.push(Instant::now());
                wake.notify_all();
            }
        });
        self
    }

    /// Wait up to `secs` for `done` to hold of the stream; panics (with
    /// the stream's tail and stderr) on a refused line or the timeout.
    fn wait<T>(&self, what: &str, secs: u64, mut done: impl FnMut(&Stream) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let (lock, wake) = &*self.stream;
        let mut seen = lock.lock().unwrap();
        loop {
            assert!(
                seen.errors.is_empty(),
                "{what}: the stream broke the protocol:\n{}",
                seen.errors.join("\n")
            );
            if let Some(value) = done(&seen) {
                return value;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || seen.closed {
                let tail: Vec<String> = seen
                    .lines
                    .iter()
                    .rev()
                    .take(8)
                    .rev()
                    .map(|l| short(l))
                    .collect();
                panic!(
                    "{what}: not seen in {secs} s (stdout closed: {});\nlast lines:\n{}\nstderr:\n{}",
                    seen.closed,
                    tail.join("\n"),
                    self.stderr()
                );
            }
            seen = wake.wait_timeout(seen, left).unwrap().0;
        }
    }

    /// The last `synced` whose tables satisfy `done` (waiting up to 20 s
    /// for one): its seq.
    fn synced_where(&self, what: &str, done: impl Fn(&Tables) -> bool) -> u64 {
        self.wait(what, 20, |s| {
            s.reader.synced.filter(|_| done(&s.reader.shown))
        })
    }

    /// The last `synced`'s seq and tables.
    fn shown(&self) -> (u64, Tables) {
        let seen = self.stream.0.lock().unwrap();
        (
            seen.reader.synced.expect("a synced"),
            seen.reader.shown.clone(),
        )
    }

    /// Whether a `synced` after `seq` comes within `secs`.
    fn next_synced(&self, seq: u64, secs: u64) -> bool {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let (lock, wake) = &*self.stream;
        let mut seen = lock.lock().unwrap();
        while seen.reader.synced <= Some(seq) && !seen.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            seen = wake.wait_timeout(seen, left).unwrap().0;
        }
        seen.reader.synced > Some(seq)
    }

    /// Whether an `activity` of `actor` on `instance` with `kind` came.
    fn activity(&self, actor: &str, instance: &str, kind: &str) {
        self.wait(&format!("activity {actor} {instance} {kind}"), 20, |s| {
            s.reader
                .activity
                .iter()
                .any(|a| a["actor"] == actor && a["instance"] == instance && a["kind"] == kind)
                .then_some(())
        });
    }

    /// Send a command that must be valid under the schema's
    /// `$defs/command`.
    fn command(&mut self, line: &str) {
        crate::common::protocol::validate_command(line).unwrap();
        self.send(line);
    }

    /// The reply to the command `id` (waiting up to 20 s).
    fn reply(&self, id: &str) -> Value {
        self.wait(&format!("the reply to {id}"), 20, |s| {
            s.reader.replies.iter().find(|r| r["id"] == id).cloned()
        })
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Wait up to `secs` for the process to exit: its code.
    fn exit(&mut self, secs: u64) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "the agent did not exit in {secs} s; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `snapshot --json --state STORE`, parsed.
fn snapshot_json(dir: &Path, store: &Path) -> Value {
    let out = bin(dir)
        .args(["snapshot", "--json", "--state"])
        .arg(store)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `value`'s `fields` as an object (a missing one as null).
fn pick(value: &Value, fields: &[&str]) -> Value {
    if value.is_null() {
        return Value::Null;
    }
    Value::Object(
        fields
            .iter()
            .map(|f| {
                (
                    (*f).to_owned(),
                    value.get(*f).cloned().unwrap_or(Value::Null),
                )
            })
            .collect(),
    )
}

/// The fields an instance row carries (docs/protocol.md, "Instance
/// rows"), of a stream row or of a `snapshot --json` instance.
fn instance_fields(row: &Value) -> Value {
    let mut picked = pick(
        row,
        &[
            "name",
            "birth",
            "dns_safe",
            "substrate",
            "status",
            "created_at",
            "tombstoned_at",
            "dirty",
            "failed_up",
            "services_dead",
        ],
    );
    picked["lease"] = pick(&row["lease"], &["duration_secs", "expires_at"]);
    picked["lock"] = pick(
        &row["lock"],
        &[
            "operation",
            "holder_pid",
            "holder_start_time",
            "holder_host",
            "acquired_at",
            "liveness_state",
            "held",
        ],
    );
    picked["gc"] = pick(&row["gc"], &["due_at", "collected_by"]);
    picked
}

/// What `snapshot --json` says, as the three tables (each row its
/// fields): instances by name and birth, operations by id, backoffs
/// (`instances[].reap_attempt`) by instance.
fn expected(doc: &Value) -> Tables {
    let mut tables = Tables::default();
    for instance in doc["instances"].as_array().unwrap() {
        let mut row = instance.clone();
        // The `N svc dead` mark: the recorded services found dead.
        let dead = instance["services"]
            .as_array()
            .map_or(0, |s| s.iter().filter(|s| s["alive"] == false).count());
        row["services_dead"] = json!(dead);
        let name = instance["name"].as_str().unwrap().to_owned();
        let birth = instance["birth"]["instance_id"].as_str().map(str::to_owned);
        tables
            .instances
            .insert((name.clone(), birth), instance_fields(&row));
        if !instance["reap_attempt"].is_null() {
            let mut backoff = instance["reap_attempt"].clone();
            backoff["instance"] = json!(name.clone());
            tables.backoffs.insert(name, backoff_fields(&backoff));
        }
    }
    for op in doc["operations"].as_array().unwrap() {
        let id = op["id"].as_str().unwrap().to_owned();
        tables.operations.insert(id, operation_fields(op));
    }
    tables
}

fn operation_fields(row: &Value) -> Value {
    pick(
        row,
        &[
            "id",
            "instance",
            "verb",
            "status",
            "created_at",
            "updated_at",
            "error",
            "error_unparsed",
        ],
    )
}

fn backoff_fields(row: &Value) -> Value {
    pick(
        row,
        &[
            "instance",
            "attempts",
            "last_error",
            "code",
            "summary",
            "remediation",
            "next_retry_at",
        ],
    )
}

/// The client's tables, each row cut to the fields compared.
fn fields(shown: &Tables) -> Tables {
    Tables {
        instances: shown
            .instances
            .iter()
            .map(|(k, v)| (k.clone(), instance_fields(v)))
            .collect(),
        operations: shown
            .operations
            .iter()
            .map(|(k, v)| (k.clone(), operation_fields(v)))
            .collect(),
        backoffs: shown
            .backoffs
            .iter()
            .map(|(k, v)| (k.clone(), backoff_fields(v)))
            .collect(),
    }
}

/// Where two maps differ, one line per key.
fn differ<K: Ord + std::fmt::Debug>(
    table: &str,
    ours: &BTreeMap<K, Value>,
    theirs: &BTreeMap<K, Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (key, row) in ours {
        match theirs.get(key) {
            None => out.push(format!("{table} {key:?}: only in the stream")),
            Some(other) if other != row => {
                out.push(format!(
                    "{table} {key:?}:\n  stream   {row}\n  snapshot {other}"
                ));
            }
            Some(_) => {}
        }
    }
    for key in theirs.keys().filter(|k| !ours.contains_key(k)) {
        out.push(format!("{table} {key:?}: only in snapshot --json"));
    }
    out
}

/// The client's tables at the last `synced` equal `snapshot --json`'s,
/// field by field. A snapshot taken after a change the stream has not
/// sent yet differs: then the next `synced` is compared again; a
/// difference with no `synced` after it within 7 s fails (the agent
/// reads the services' dead counts at most every 5 s). Returns the seq.
fn matches_snapshot(agent: &Agent, dir: &Path, store: &Path, what: &str) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (seq, shown) = agent.shown();
        let want = expected(&snapshot_json(dir, store));
        let ours = fields(&shown);
        let mut diff = differ("instance", &ours.instances, &want.instances);
        diff.extend(differ("operation", &ours.operations, &want.operations));
        diff.extend(differ("backoff", &ours.backoffs, &want.backoffs));
        if diff.is_empty() {
            return seq;
        }
        assert!(
            Instant::now() < deadline && agent.next_synced(seq, 7),
            "{what}: the client's tables at synced {seq} differ from snapshot --json:\n{}",
            diff.join("\n")
        );
    }
}

const KILO_ID: &str = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";
const LIMA_ID: &str = "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b";

/// An active instance row of `name` and birth `id` on a 0.4.0 store, its
/// lease expiring at `expires_at`.
fn instance_sql(name: &str, id: &str, now: i64, expires_at: i64) -> String {
    format!(
        "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at,
           dirty, instance_id, resource_namespace)
         VALUES ('{name}', 'local', 'active', '[stack]', {now}, NULL, 0, '{id}', 'sl-{id}');
         INSERT INTO leases VALUES ('{name}', 600, {expires_at});"
    )
}

fn operation_sql(id: &str, instance: &str, verb: &str, status: &str, now: i64) -> String {
    format!(
        "INSERT INTO operations (id, instance, verb, status, request_json, error_json,
           created_at, updated_at, instance_id, output_version)
         VALUES ('{id}', '{instance}', '{verb}', '{status}', '{{}}', NULL, {c}, {now}, NULL, 1);",
        c = now - 1
    )
}

fn has(tables: &Tables, name: &str, field: &str, value: &Value) -> bool {
    tables
        .instances
        .iter()
        .any(|((n, _), row)| n == name && &row[field] == value)
}

/// The issue's "done when": a client that knows only docs/protocol.md
/// rebuilds Instances, Operations, Backoffs and Activity from `serve
/// --stdio` on a real 0.4.0 store while another process changes the
/// store (an `up`, an expiry the agent's reaper reaps, a failed reap, a
/// cancel, a GC), every line valid under the schema, and after each
/// change its tables equal `snapshot --json`'s, field by field.
#[test]
fn a_protocol_client_rebuilds_the_panes_as_the_store_changes() {
    use crate::common::stores::exec;
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let now = unix_now();
    // Nothing expired at the start (the fixture's leases ran out after its
    // capture): the steps below expire what they mean to.
    exec(
        &store,
        &format!("UPDATE leases SET expires_at = {};", now + 86_400),
    );
    let down = counting_down(
        dir.path(),
        r#"if [ "$NAME" = lima ]; then echo '{"schema_version":2,"ok":false,"error":{"code":"engine.teardown.survivors","message":"survivors left"}}'; exit 1; fi
echo '{"schema_version":2,"ok":true,"command":"down","outcome":"destroyed"}'"#,
    );
    let agent = Agent::start(
        dir.path(),
        &store,
        &["--tick", "1s", "--reaper", "always", "--down-cmd", &down],
    )
    .follow();
    let hello = agent.wait("hello", 10, |s| s.reader.hello.clone());
    assert_eq!(
        (
            &hello["schema"],
            &hello["generation"],
            &hello["read_only"],
            &hello["follow_only"]
        ),
        (
            &json!(14),
            &json!("controller"),
            &json!(false),
            &json!(false)
        )
    );
    agent.synced_where("the first snapshot", |t| t.instances.len() == 8);
    matches_snapshot(&agent, dir.path(), &store, "the first snapshot");

    // An `up`: an instance and its operation.
    exec(
        &store,
        &format!(
            "{}{}",
            instance_sql("kilo", KILO_ID, now, now + 3600),
            operation_sql("op-kilo-up", "kilo", "up", "succeeded", now)
        ),
    );
    agent.synced_where("kilo's up", |t| {
        has(t, "kilo", "status", &json!("active")) && t.operations.contains_key("op-kilo-up")
    });
    matches_snapshot(&agent, dir.path(), &store, "kilo's up");

    // Its lease expires: the agent's reaper tears it down.
    exec(
        &store,
        &format!(
            "UPDATE leases SET expires_at = {} WHERE instance = 'kilo';",
            now - 5
        ),
    );
    agent.activity("reaper", "kilo", "reaped");
    agent.synced_where("kilo reaped", |t| {
        has(t, "kilo", "status", &json!("tombstoned"))
    });
    matches_snapshot(&agent, dir.path(), &store, "kilo reaped");

    // A reap that fails: a backoff row.
    exec(&store, &instance_sql("lima", LIMA_ID, now, now - 5));
    agent.activity("reaper", "lima", "failed");
    agent.synced_where("lima's backoff", |t| t.backoffs.contains_key("lima"));
    matches_snapshot(&agent, dir.path(), &store, "lima's backoff");

    // An operation queued, then cancelled.
    exec(
        &store,
        &operation_sql("op-alpha-verify", "alpha", "verify", "queued", now),
    );
    agent.synced_where("a queued verify", |t| {
        t.operations
            .get("op-alpha-verify")
            .is_some_and(|o| o["status"] == "queued")
    });
    matches_snapshot(&agent, dir.path(), &store, "a queued verify");
    exec(
        &store,
        &format!(
            "UPDATE operations SET status = 'cancelled', cancel_requested = 1, updated_at = {},
               error_json = '{{\"schema_version\":2,\"code\":\"operation.cancelled\",\"message\":\"operation was cancelled\"}}'
             WHERE id = 'op-alpha-verify';",
            now + 1
        ),
    );
    agent.synced_where("the verify cancelled", |t| {
        t.operations
            .get("op-alpha-verify")
            .is_some_and(|o| o["status"] == "cancelled")
    });
    matches_snapshot(&agent, dir.path(), &store, "the verify cancelled");

    // A GC: a tombstone removed.
    exec(&store, "DELETE FROM instances WHERE name = 'charlie';");
    agent.synced_where("charlie collected", |t| {
        !t.instances.keys().any(|(name, _)| name == "charlie")
    });
    let last = matches_snapshot(&agent, dir.path(), &store, "charlie collected");
    assert!(last >= 7, "one group per change at least: {last}");
    assert!(!agent.stderr().contains("panicked"), "{}", agent.stderr());
}

/// A 0.4.0 store of `count` active instances, `inst-0000`..., each with a
/// lease an hour long.
fn big_store(dir: &Path, count: usize) -> PathBuf {
    let store = crate::common::stores::migrated(dir, 14);
    let now = unix_now();
    let mut conn = rusqlite::Connection::open(&store).unwrap();
    let tx = conn.transaction().unwrap();
    for i in 0..count {
        let name = format!("inst-{i:04}");
        let id = format!("{i:032x}");
        tx.execute(
            "INSERT INTO instances (name, substrate, status, definition, created_at, dirty,
               instance_id, resource_namespace)
             VALUES (?1, 'local', 'active', '[stack]', ?2, 0, ?3, 'sl-' || ?3)",
            rusqlite::params![name, now - 100, id],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO leases VALUES (?1, 3600, ?2)",
            rusqlite::params![name, now + 3600],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    store
}

/// A lease renewed at a store of 1,200 instances costs its one row on the
/// wire: the group's `rows` messages are under 1 KB.
#[test]
fn one_renewed_lease_at_1200_instances_is_under_a_kilobyte_on_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let store = big_store(dir.path(), 1_200);
    let agent = Agent::start(dir.path(), &store, &["--no-reaper"]).follow();
    agent.synced_where("the first snapshot", |t| t.instances.len() == 1_200);
    let first: usize = agent.wait("bytes", 1, |s| {
        Some(
            s.lines
                .iter()
                .filter(|l| l.contains("\"type\":\"rows\""))
                .map(|l| l.len() + 1)
                .sum(),
        )
    });
    assert!(first > 100_000, "the first snapshot: {first} bytes");
    let (seq, shown) = agent.shown();
    let key = ("inst-0500".to_owned(), Some(format!("{:032x}", 500)));
    let before = shown.instances[&key]["lease"]["expires_at"]
        .as_i64()
        .unwrap();
    crate::common::stores::exec(
        &store,
        "UPDATE leases SET expires_at = expires_at + 600 WHERE instance = 'inst-0500';",
    );
    agent.synced_where("the renewed lease", |t| {
        t.instances[&key]["lease"]["expires_at"] == before + 600
    });
    // The raw lines of the group's `rows` messages (after `seq`).
    let group: Vec<String> = agent.wait("the group", 1, |s| {
        Some(
            s.lines
                .iter()
                .filter(|l| {
                    let m: Value = serde_json::from_str(l).unwrap();
                    m["type"] == "rows" && m["seq"].as_u64() > Some(seq)
                })
                .cloned()
                .collect(),
        )
    });
    let bytes: usize = group.iter().map(|l| l.len() + 1).sum();
    let messages: Vec<Value> = group
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let upserts: Vec<&Value> = messages
        .iter()
        .flat_map(|m| m["upsert"].as_array().unwrap())
        .collect();
    assert_eq!(upserts.len(), 1, "{group:?}");
    assert_eq!(upserts[0]["name"], "inst-0500");
    assert!(
        messages
            .iter()
            .all(|m| m["remove"].as_array().unwrap().is_empty())
    );
    assert!(bytes < 1_024, "{bytes} bytes for one lease: {group:?}");
}

/// `(id, ok, error.kind)` of a reply.
fn outcome(reply: &Value) -> (Value, bool, Option<String>) {
    (
        reply["id"].clone(),
        reply["ok"].as_bool().unwrap(),
        reply["error"]["kind"].as_str().map(str::to_owned),
    )
}

/// Bad lines on stdin each get one typed reply, in order, and the agent
/// goes on: not JSON, an unknown command, a name that is not DNS-safe
/// (refused: nothing runs), a 100 MB line (`too_long`, then a ping is
/// still answered), and a flood of 10,000 pings answered once each, in
/// order. Every reply validates against the schema.
#[test]
fn bad_input_on_stdin_gets_one_typed_reply_each_in_order() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let down = counting_down(dir.path(), "");
    let mut agent =
        Agent::start(dir.path(), &store, &["--no-reaper", "--down-cmd", &down]).follow();
    agent.synced_where("the first snapshot", |_| true);
    agent.send("not json");
    agent.send(r#"{"id":"u1","cmd":"launch"}"#);
    agent.send(r#"{"id":"n1","cmd":"reap","name":"a;rm -rf /","birth":null}"#);
    let stdin = agent.stdin.take().unwrap();
    let writer = std::thread::spawn(move || -> std::io::Result<ChildStdin> {
        let mut out = std::io::BufWriter::new(stdin);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            out.write_all(&chunk)?;
        }
        out.write_all(b"\n{\"id\":\"after\",\"cmd\":\"ping\"}\n")?;
        for i in 0..10_000 {
            writeln!(out, r#"{{"id":{i},"cmd":"ping"}}"#)?;
        }
        out.into_inner()
            .map_err(std::io::IntoInnerError::into_error)
    });
    let replies = agent.wait("10,005 replies", 20, |s| {
        (s.reader.replies.len() >= 10_005).then(|| s.reader.replies.clone())
    });
    let _stdin = writer.join().unwrap().unwrap();
    let got: Vec<_> = replies.iter().map(outcome).collect();
    let mut want = vec![
        (Value::Null, false, Some("bad_request".to_owned())),
        (json!("u1"), false, Some("unknown_command".to_owned())),
        (json!("n1"), false, Some("refused".to_owned())),
        (Value::Null, false, Some("too_long".to_owned())),
        (json!("after"), true, None),
    ];
    want.extend((0..10_000).map(|i| (json!(i), true, None)));
    assert_eq!(got.len(), want.len());
    for (at, (got, want)) in got.iter().zip(&want).enumerate() {
        assert_eq!(got, want, "reply {at}");
    }
    // Each answered once: nothing more comes.
    std::thread::sleep(Duration::from_millis(500));
    agent.wait("no more replies", 1, |s| {
        assert_eq!(s.reader.replies.len(), 10_005);
        Some(())
    });
    assert_eq!(crate::common::calls(dir.path()), Vec::<String>::new());
    assert!(!agent.stderr().contains("panicked"), "{}", agent.stderr());
}

/// stdin closed in the middle of a line: the agent stops cleanly (exit
/// 0), as `q` stops the console.
#[test]
fn stdin_closed_mid_line_stops_the_agent_cleanly() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store, &["--no-reaper"]).follow();
    agent.synced_where("the first snapshot", |_| true);
    let mut stdin = agent.stdin.take().unwrap();
    stdin.write_all(br#"{"id":1,"cmd":"pi"#).unwrap();
    stdin.flush().unwrap();
    drop(stdin);
    assert_eq!(agent.exit(10), Some(0), "{}", agent.stderr());
    agent.wait("stdout closed", 5, |s| s.closed.then_some(()));
    assert!(!agent.stderr().contains("panicked"), "{}", agent.stderr());
}

/// A reader that closes stdout (`| head -1`) stops the agent at its next
/// write, without a panic.
#[test]
fn stdout_closed_by_the_reader_stops_the_agent() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start(dir.path(), &store, &["--no-reaper"]);
    let mut out = BufReader::new(agent.child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    validate(first.trim_end()).unwrap();
    assert!(first.starts_with(r#"{"type":"hello""#), "{first}");
    drop(out);
    // Something to write: a reply (the write fails, the agent stops).
    if let Some(stdin) = agent.stdin.as_mut() {
        let _ = stdin.write_all(b"{\"id\":1,\"cmd\":\"ping\"}\n");
        let _ = stdin.flush();
    }
    assert_eq!(agent.exit(10), Some(0), "{}", agent.stderr());
    assert!(!agent.stderr().contains("panicked"), "{}", agent.stderr());
}

/// `snapshot --follow` writes the same out-stream, read-only and taking
/// no commands: its first group equals `snapshot --json`, a GC comes as a
/// remove, and nothing is reaped (the fixture's leases ran out).
#[test]
fn snapshot_follow_streams_the_same_protocol_read_only() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut agent = Agent::start_with(
        dir.path(),
        &store,
        &["--tick", "1s"],
        &["snapshot", "--follow"],
    )
    .follow();
    let hello = agent.wait("hello", 10, |s| s.reader.hello.clone());
    assert_eq!(
        (
            &hello["read_only"],
            &hello["follow_only"],
            &hello["commands"]
        ),
        (&json!(true), &json!(true), &json!([]))
    );
    agent.synced_where("the first snapshot", |t| t.instances.len() == 8);
    matches_snapshot(&agent, dir.path(), &store, "the first snapshot");
    crate::common::stores::exec(&store, "DELETE FROM instances WHERE name = 'charlie';");
    agent.synced_where("charlie collected", |t| {
        !t.instances.keys().any(|(name, _)| name == "charlie")
    });
    matches_snapshot(&agent, dir.path(), &store, "charlie collected");
    std::thread::sleep(Duration::from_secs(2));
    agent.wait("no reaper", 1, |s| {
        let reaped: Vec<&Value> = s
            .reader
            .activity
            .iter()
            .filter(|a| a["actor"] == "reaper")
            .collect();
        assert!(reaped.is_empty(), "{reaped:?}");
        Some(())
    });
    // A signal stops it.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(agent.child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(agent.exit(10), Some(0), "{}", agent.stderr());
    assert!(!agent.stderr().contains("panicked"), "{}", agent.stderr());
}

/// A stream with nothing to say sends a `heartbeat` once nothing else was
/// sent for `heartbeat_secs`, carrying the last `synced`'s seq (the
/// client checks it).
#[test]
fn an_idle_stream_sends_a_heartbeat_after_heartbeat_secs() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let agent = Agent::start(dir.path(), &store, &["--no-reaper"]).follow();
    let hello = agent.wait("hello", 10, |s| s.reader.hello.clone());
    let secs = hello["heartbeat_secs"].as_u64().unwrap();
    assert_eq!(secs, 5);
    agent.synced_where("the first snapshot", |_| true);
    let (gap, line) = agent.wait("a heartbeat", secs + 5, |s| {
        let at = s
            .lines
            .iter()
            .position(|l| l.starts_with(r#"{"type":"heartbeat""#))?;
        Some((s.times[at] - s.times[at - 1], s.lines[at].clone()))
    });
    let quiet = Duration::from_secs(secs);
    assert!(
        gap >= quiet - Duration::from_millis(300) && gap < quiet + Duration::from_secs(2),
        "{gap:?} of quiet before {line}"
    );
}

/// The reads over the stream on the demo's store (schema 4: births null,
/// no operations): `detail`'s reply, `logs`' reply, tail and followed
/// lines, `logs_stop`'s `logs_end`; every line valid under the schema and
/// taken by the client, every command valid under `$defs/command`.
#[test]
fn the_demos_detail_and_logs_are_valid_messages() {
    let home = tempfile::tempdir().unwrap();
    let mut command = bin(home.path());
    command.args(["--demo", "v4", "serve", "--stdio"]);
    let mut agent = Agent::spawn(home.path(), command).follow();
    let hello = agent.wait("hello", 10, |s| s.reader.hello.clone());
    assert_eq!(
        (&hello["schema"], &hello["generation"]),
        (&json!(4), &json!("contract"))
    );
    agent.synced_where("the first snapshot", |t| !t.instances.is_empty());
    let (_, shown) = agent.shown();
    assert!(shown.instances.keys().all(|(_, birth)| birth.is_none()));
    assert!(shown.operations.is_empty());
    agent.command(r#"{"id":"d","cmd":"detail","name":"api-gateway-dev"}"#);
    let detail = agent.reply("d");
    assert_eq!(
        (
            &detail["ok"],
            &detail["detail"]["name"],
            &detail["detail"]["birth"]
        ),
        (&json!(true), &json!("api-gateway-dev"), &Value::Null)
    );
    agent.command(r#"{"id":"l","cmd":"logs","name":"api-gateway-dev","service":"gateway"}"#);
    assert_eq!(
        agent.reply("l")["services"],
        json!(["gateway", "redis", "stackless"])
    );
    // The tail, then a line the demo writes every 2 s.
    let count = |s: &Stream| s.reader.logs.iter().filter(|m| m["type"] == "log").count();
    let tail = agent.wait("the tail", 10, |s| (count(s) > 0).then(|| count(s)));
    agent.wait("a followed line", 10, |s| (count(s) > tail).then_some(()));
    agent.command(r#"{"id":"s","cmd":"logs_stop","logs":"l"}"#);
    assert_eq!(agent.reply("s")["ok"], true);
    let end = agent.wait("logs_end", 10, |s| {
        s.reader
            .logs
            .iter()
            .find(|m| m["type"] == "logs_end")
            .cloned()
    });
    assert_eq!(
        (&end["logs"], &end["reason"]),
        (&json!("l"), &json!("stopped"))
    );
    assert!(
        agent
            .wait("logs", 1, |s| Some(s.reader.logs.clone()))
            .iter()
            .all(|m| m["logs"] == "l" && (m["type"] == "logs_end" || m["service"] == "gateway"))
    );
    drop(agent.stdin.take());
    assert_eq!(agent.exit(10), Some(0), "{}", agent.stderr());
}

/// `pause`, `resume` and `pass` over the stream: each answered `ok`, the
/// `reaper` message says the pause as it changes, a command of protocol 2
/// is refused `protocol`; a missing teardown command comes as the
/// `teardown_missing` banner. Every line valid.
#[test]
fn pause_and_resume_over_the_stream_show_in_the_reaper_message() {
    use crate::common::stores::exec;
    let (dir, store) = fixture("real-0.4.0-v14.db");
    exec(
        &store,
        &format!("UPDATE leases SET expires_at = {};", unix_now() + 86_400),
    );
    let mut agent = Agent::start(
        dir.path(),
        &store,
        &[
            "--reaper",
            "always",
            "--down-cmd",
            "/nonexistent/stackless down {name} --json",
        ],
    )
    .follow();
    agent.synced_where("the first snapshot", |_| true);
    // A teardown command that is not there: the header's banner.
    let banner = agent.wait("the teardown_missing banner", 10, |s| {
        s.reader.banners.get("teardown_missing").cloned()
    });
    assert_eq!(banner["level"], "error");
    let paused = |agent: &Agent, want: bool| {
        agent.wait(&format!("reaper paused {want}"), 10, |s| {
            let reaper = s.reader.reaper.as_ref()?;
            (reaper["by"] == "agent" && reaper["paused"] == want).then_some(())
        });
    };
    paused(&agent, false);
    agent.command(r#"{"id":"p","cmd":"pause"}"#);
    assert_eq!(outcome(&agent.reply("p")), (json!("p"), true, None));
    paused(&agent, true);
    agent.command(r#"{"id":"r","cmd":"resume"}"#);
    assert_eq!(outcome(&agent.reply("r")), (json!("r"), true, None));
    paused(&agent, false);
    agent.command(r#"{"id":"x","cmd":"pass","protocol":1}"#);
    assert_eq!(outcome(&agent.reply("x")), (json!("x"), true, None));
    agent.command(r#"{"id":"v","cmd":"pass","protocol":2}"#);
    assert_eq!(
        outcome(&agent.reply("v")),
        (json!("v"), false, Some("protocol".to_owned()))
    );
}

/// A reader that stops reading without closing stdout (a stalled ssh
/// connection, a paused pager) never holds the agent in a write: SIGTERM
/// and the end of stdin are still seen, the reaper role is released (the
/// next agent reaps), and unsent lines stay bounded. The agent's stdout is
/// written by a thread of its own.
#[test]
fn a_reader_that_stops_reading_holds_neither_the_agent_nor_its_role() {
    let dir = tempfile::tempdir().unwrap();
    let store = big_store(dir.path(), 3_000);
    // Never read: 3,000 rows are far more than a pipe holds.
    let mut stalled = Agent::start(dir.path(), &store, &[]);
    std::thread::sleep(Duration::from_secs(3));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(stalled.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(stalled.exit(10), Some(0), "{}", stalled.stderr());
    // Its role was released: the next agent reaps.
    let second = Agent::start(dir.path(), &store, &[]).follow();
    let by = second.wait("the second agent's hello", 20, |s| {
        s.lines
            .iter()
            .find(|l| l.contains(r#""type":"hello""#))
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .map(|hello| hello["reaper"]["by"].clone())
    });
    assert_eq!(by, "agent");
}

/// With no `secret_history` (the fixture has none), a log line holding JSON
/// with credential-named fields is sent in `log` messages with those fields
/// `[redacted]`: the tail and a line followed.
#[test]
fn log_messages_redact_credential_fields_with_no_secret_history() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    // alpha's logs directory: its namespace in the fixture.
    let logs = dir.path().join("logs/sl-70aa7461da17489bb88e709a64f291aa");
    std::fs::create_dir_all(&logs).unwrap();
    let web = logs.join("web.log");
    std::fs::write(
        &web,
        concat!(
            r#"{"level":"info","password":"LOGPW2","api_key":"LOGAK","msg":"hi"}"#,
            "\n",
            r#"2026-12-02T07:00:00Z {"token":"LOGTOK"}"#,
            "\n"
        ),
    )
    .unwrap();
    let mut agent = Agent::start(dir.path(), &store, &["--no-reaper"]).follow();
    agent.synced_where("the first snapshot", |_| true);
    agent.command(r#"{"id":"l","cmd":"logs","name":"alpha","service":"web"}"#);
    let reply = agent.reply("l");
    assert_eq!(reply["ok"], true, "{reply}");
    let texts = |s: &Stream| -> Vec<String> {
        s.reader
            .logs
            .iter()
            .filter(|m| m["type"] == "log")
            .filter_map(|m| m["text"].as_str().map(str::to_owned))
            .collect()
    };
    agent.wait("the tail", 10, |s| (texts(s).len() == 2).then_some(()));
    let mut file = std::fs::OpenOptions::new().append(true).open(&web).unwrap();
    file.write_all(b"{\"password\":\"FOLLOWPW\"}\n").unwrap();
    let sent = agent.wait("the followed line", 10, |s| {
        (texts(s).len() == 3).then(|| texts(s))
    });
    assert_eq!(
        sent,
        [
            r#"{"level":"info","password":"[redacted]","api_key":"[redacted]","msg":"hi"}"#,
            r#"2026-12-02T07:00:00Z {"token":"[redacted]"}"#,
            r#"{"password":"[redacted]"}"#,
        ]
    );
    let stream = agent.wait("every line", 1, |s| Some(s.lines.join("\n")));
    for value in ["LOGPW2", "LOGAK", "LOGTOK", "FOLLOWPW"] {
        assert!(!stream.contains(value), "{value}: {stream}");
    }
    drop(agent.stdin.take());
    assert_eq!(agent.exit(10), Some(0), "{}", agent.stderr());
}

/// The first group holds the services' dead counts (a process probe):
/// with the services read held, nothing is sent (not a first group of
/// every `services_dead` 0 followed by a second of every counted row);
/// once the read comes, the first group carries them (the real 0.4.0
/// store's alpha, golf, hotel and india: a recorded service that runs
/// nowhere here), and no group follows it for them.
#[test]
fn the_first_group_waits_for_the_services_read_and_carries_its_counts() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let gate = dir.path().join("hold-services");
    std::fs::write(&gate, b"").unwrap();
    let mut command = bin(dir.path());
    command
        .env(
            "STACKLESS_TUI_FAULT",
            format!("hold:services:{}", gate.display()),
        )
        .arg("--stackless")
        .arg(fake_stackless(dir.path()))
        .arg("--state")
        .arg(&store)
        .args(["snapshot", "--follow"]);
    let agent = Agent::spawn(dir.path(), command).follow();
    let group = |s: &Stream, seq: u64| -> Option<Vec<Value>> {
        let lines: Vec<Value> = s
            .lines
            .iter()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|m| m["seq"] == json!(seq) && m["type"] != "heartbeat")
            .collect();
        lines
            .last()
            .is_some_and(|m| m["type"] == "synced")
            .then_some(lines)
    };
    // Held: the store is read (the watcher's first snapshot comes at
    // once), and still no line is sent.
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(
        agent.wait("the stream so far", 1, |s| Some(s.lines.len())),
        0
    );
    std::fs::remove_file(&gate).unwrap();
    let first = agent.wait("the first group", 10, |s| group(s, 1));
    let mut dead: Vec<(String, i64)> = first
        .iter()
        .filter(|m| m["type"] == "rows" && m["table"] == "instances")
        .flat_map(|m| m["upsert"].as_array().unwrap().clone())
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["services_dead"].as_i64().unwrap(),
            )
        })
        .filter(|(_, dead)| *dead > 0)
        .collect();
    dead.sort();
    assert_eq!(
        dead,
        ["alpha", "golf", "hotel", "india"].map(|n| (n.to_owned(), 1))
    );
    // A heartbeat comes after the first group: no group 2 before it.
    agent.wait("a heartbeat", 10, |s| {
        s.lines
            .iter()
            .any(|l| l.contains(r#""type":"heartbeat""#))
            .then_some(())
    });
    assert!(agent.wait("the stream", 1, |s| Some(group(s, 2).is_none())));
}
