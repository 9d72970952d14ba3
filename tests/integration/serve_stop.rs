//! `serve --stdio` stops at the end of its stdin, or on SIGTERM, as `q`
//! stops the console, its running teardowns as `reap --once` stops them
//! on a signal (docs/protocol.md, "Stopping"): TERM to the `down`'s
//! group, audited `interrupted`, nothing recorded in the store.

use std::io::Write as _;
use std::time::{Duration, Instant};

use super::agent_process::{lines_of, slow_down, spawn, wait_for};
use crate::common::fixture_as;

fn audit(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("stackless-tui").join("audit.jsonl"))
        .expect("the audit trail");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

fn stopped_by(signal: bool) {
    let (dir, path) = fixture_as("real-0.4.0-v14.db", "state.db");
    let down = slow_down(dir.path());
    let mut child = spawn(
        dir.path(),
        Some(&path),
        &["--no-reaper", "--down-cmd", &down, "serve", "--stdio"],
    );
    let rx = lines_of(&mut child);
    let hello = wait_for(&rx, |m| m["type"] == "hello");
    assert_eq!(hello["reaper"]["by"], "nobody", "{hello}");
    let row = wait_for(&rx, |m| m["type"] == "rows" && m["table"] == "instances");
    let alpha = row["upsert"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == "alpha"))
        .expect("alpha")
        .clone();
    wait_for(&rx, |m| m["type"] == "synced");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"id":"d1","cmd":"down","name":"alpha","birth":{}}}"#,
        alpha["birth"]["instance_id"]
    )
    .expect("write");
    let reply = wait_for(&rx, |m| m["type"] == "reply");
    assert_eq!(reply["ok"], true, "{reply}");
    wait_for(&rx, |m| {
        m["type"] == "activity" && m["kind"] == "tearing down"
    });
    let stopped_at = Instant::now();
    if signal {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid")),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("kill");
    } else {
        drop(stdin);
    }
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
    // The teardown's end went out on the stream too, before the stop.
    let last = wait_for(&rx, |m| m["type"] == "activity" && m["instance"] == "alpha");
    assert_eq!(last["kind"], "stopped", "{last}");
    assert!(
        stopped_at.elapsed() < Duration::from_secs(10),
        "{:?}",
        stopped_at.elapsed()
    );
    let lines = audit(dir.path());
    let teardown: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["instance"] == "alpha")
        .map(|l| {
            (
                l["action"].as_str().unwrap_or(""),
                l["outcome"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        teardown,
        [("teardown", "started"), ("teardown", "interrupted")]
    );
    let stop = lines.last().expect("a stop line");
    assert_eq!(
        (stop["action"].as_str(), stop["reason"].as_str()),
        (
            Some("stop"),
            Some(if signal { "SIGTERM" } else { "stdin closed" })
        )
    );
    // Nothing recorded: alpha is active, with no backoff.
    let db = rusqlite::Connection::open(&path).expect("open");
    let (status, attempts): (String, i64) = db
        .query_row(
            "SELECT status, (SELECT count(*) FROM reap_attempts) FROM instances WHERE name = 'alpha'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("alpha");
    assert_eq!((status.as_str(), attempts), ("active", 0));
}

#[test]
fn the_end_of_stdin_stops_the_agent_and_its_teardown() {
    stopped_by(false);
}

#[test]
fn sigterm_stops_the_agent_and_its_teardown() {
    stopped_by(true);
}

/// A second `down` (or `reap`) sent while the first one's teardown runs,
/// or before the job even started, is refused in its reply, never answered
/// `ok` and then refused in an Activity line.
#[test]
fn a_second_teardown_of_the_same_instance_is_refused_in_its_reply() {
    let (dir, path) = fixture_as("real-0.4.0-v14.db", "state.db");
    let down = slow_down(dir.path());
    let mut child = spawn(
        dir.path(),
        Some(&path),
        &["--no-reaper", "--down-cmd", &down, "serve", "--stdio"],
    );
    let rx = lines_of(&mut child);
    let row = wait_for(&rx, |m| m["type"] == "rows" && m["table"] == "instances");
    let birth = row["upsert"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == "alpha"))
        .map(|alpha| alpha["birth"]["instance_id"].clone())
        .expect("alpha");
    wait_for(&rx, |m| m["type"] == "synced");
    let mut stdin = child.stdin.take().expect("stdin");
    // Both in one write: the second arrives before the job started.
    writeln!(
        stdin,
        "{{\"id\":1,\"cmd\":\"down\",\"name\":\"alpha\",\"birth\":{birth}}}\n{{\"id\":2,\"cmd\":\"reap\",\"name\":\"alpha\",\"birth\":{birth}}}"
    )
    .expect("write");
    let first = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == 1);
    assert_eq!(first["ok"], true, "{first}");
    let second = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == 2);
    assert_eq!(
        second["error"],
        serde_json::json!({"kind": "refused", "message": "a teardown of this instance is already running"}),
        "{second}"
    );
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

/// Beside an agent that reaps, a `--dry-run` agent says that agent reaps (it
/// tears nothing down itself), and so does one started with `--no-reaper`
/// after the subcommand; a read-only one lists only the commands that read.
#[test]
fn beside_an_agent_that_reaps_the_others_name_it() {
    let (dir, path) = fixture_as("real-0.4.0-v14.db", "state.db");
    let spawn = |flags: &[&str]| {
        let mut args = vec!["--down-cmd", "/bin/false {name}", "serve", "--stdio"];
        args.extend_from_slice(flags);
        spawn(dir.path(), Some(&path), &args)
    };
    let mut reaper = spawn(&[]);
    let rx = lines_of(&mut reaper);
    let hello = wait_for(&rx, |m| m["type"] == "hello");
    assert_eq!(hello["reaper"]["by"], "agent", "{hello}");
    let pid = reaper.id();
    for flags in [&["--dry-run"][..], &["--no-reaper"], &["--read-only"]] {
        let mut other = spawn(flags);
        let rx = lines_of(&mut other);
        let hello = wait_for(&rx, |m| m["type"] == "hello");
        // Once its role thread has looked (within a second), its reaper
        // message names the agent that reaps.
        let by = if hello["reaper"]["by"] == "console" {
            hello["reaper"].clone()
        } else {
            wait_for(&rx, |m| m["type"] == "reaper" && m["by"] == "console")
        };
        assert_eq!(
            (by["by"].as_str(), by["pid"].as_u64()),
            (Some("console"), Some(u64::from(pid))),
            "{flags:?}: {by}"
        );
        if flags == ["--read-only"] {
            assert_eq!(
                hello["commands"],
                serde_json::json!(["detail", "logs", "logs_stop", "ping", "metrics"])
            );
        }
        drop(other.stdin.take());
        assert!(other.wait().expect("wait").success());
    }
    drop(reaper.stdin.take());
    assert!(reaper.wait().expect("wait").success());
}

/// Lines piped in with stdin closed at once (`printf ... | serve --stdio`)
/// are answered after `hello` and the first snapshot, then the agent
/// stops: the end of stdin read before `hello` waits for it.
#[test]
fn lines_piped_in_before_hello_are_answered_then_the_agent_stops() {
    let (dir, path) = fixture_as("real-0.4.0-v14.db", "state.db");
    let mut child = spawn(
        dir.path(),
        Some(&path),
        &["--no-reaper", "serve", "--stdio"],
    );
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, r#"{{"id":"p1","cmd":"ping"}}"#).expect("write");
    drop(stdin);
    let rx = lines_of(&mut child);
    let kinds: Vec<String> = std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(20)).ok())
        .map(|m| {
            let kind = m["type"].as_str().unwrap_or_default().to_owned();
            if kind == "reply" {
                format!("reply {} {}", m["id"], m["ok"])
            } else {
                kind
            }
        })
        .filter(|k| k != "rows" && k != "activity" && k != "reaper" && !k.starts_with("banner"))
        .collect();
    assert_eq!(kinds, ["hello", "reset", "synced", "reply \"p1\" true"]);
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let stop = audit(dir.path())
        .into_iter()
        .rfind(|e| e["action"] == "stop")
        .expect("a stop line");
    assert!(stop.to_string().contains("stdin closed"), "{stop}");
}

/// A thread of the agent panicking: its stdout (the protocol stream)
/// gets no terminal escape codes, exit 101.
#[test]
fn a_panicking_agent_writes_nothing_but_the_protocol_on_stdout() {
    use std::io::Read as _;
    let (dir, path) = fixture_as("real-0.4.0-v14.db", "state.db");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .arg("--state")
        .arg(&path)
        .args(["--no-reaper", "serve", "--stdio"])
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("STACKLESS_TUI_FAULT", "panic:watcher")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut out)
        .expect("read");
    assert_eq!(child.wait().expect("wait").code(), Some(101));
    assert!(!out.contains(&0x1b), "{:?}", String::from_utf8_lossy(&out));
    for line in String::from_utf8_lossy(&out).lines() {
        crate::common::protocol::validate(line).expect("a protocol line");
    }
}
