//! The protocol's streams through `--controller ssh://HOST`
//! (docs/protocol.md): `serve --stdio` gets the local stdin copied through
//! to the remote agent (its commands; its end stops the agent) and
//! `snapshot --follow` streams as ssh writes; a signal to the launcher stops
//! the remote side in order. First with a fake `ssh` first in `PATH` (the
//! launcher's own part), then through a real sshd on 127.0.0.1
//! ([`crate::sshd`]).

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::common::{argv_log, fake_down, fixture};
use crate::harness::{
    BIN, Lines, Spawned, UI, poll, processes_with, run_plain, signal_pid, spawn_plain, utf8,
    wait_for_file, wait_status,
};
use crate::remote::{fake_ssh_script, remote_args, text};
use crate::sshd::Sshd;

/// The launcher with `args` and `PATH` = `path`, its three streams piped.
fn launcher(args: &[&str], path: &str) -> Spawned {
    Spawned(
        Command::new(BIN)
            .args(args)
            .env("PATH", path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the launcher"),
    )
}

fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    stderr
}

/// `serve --stdio` through the launcher: each local line reaches ssh at
/// once (the fake answers it, the answer comes back before the next is
/// sent), the end of the local stdin closes ssh's (the remote agent's end
/// of stdin) and ssh's status is the launcher's; a SIGTERM to the launcher
/// closes ssh's stdin too (the agent stops as at its end, its last lines
/// still come back) and the launcher exits 143 saying so.
#[test]
fn a_serve_launcher_copies_stdin_through_and_closes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = dir.path().join("started");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "touch '{}'\nwhile IFS= read -r line; do printf 'got %s\\n' \"$line\"; done\n\
             echo 'remote: stdin ended' >&2\nexit 7",
            started.display()
        ),
    );
    let mut child = launcher(&["--controller", "ssh://h", "serve", "--stdio"], &path);
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    for command in [r#"{"id":1,"cmd":"ping"}"#, r#"{"id":"2","cmd":"pass"}"#] {
        writeln!(stdin, "{command}").expect("write a command");
        stdin.flush().expect("flush");
        assert_eq!(lines.next(command, UI), format!("got {command}"));
    }
    drop(stdin);
    let status = wait_status(&mut child);
    assert_eq!(status.code(), Some(7), "{status:?}");
    assert_eq!(stderr_of(&mut child), "remote: stdin ended\n");

    // A signal: ssh's stdin is closed while the local one stays open.
    std::fs::remove_file(&started).expect("rm started");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "touch '{}'\nwhile IFS= read -r line; do :; done\n\
             echo 'remote: agent stopped' >&2\nexit 0",
            started.display()
        ),
    );
    let mut child = launcher(&["--controller", "ssh://h", "serve", "--stdio"], &path);
    let stdin = child.stdin.take().expect("stdin");
    wait_for_file(&started);
    signal_pid(child.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut child);
    drop(stdin);
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(
        stderr_of(&mut child),
        "remote: agent stopped\nstackless-tui: interrupted by SIGTERM: the agent on h was told \
         to stop (its stdin was closed, as at the end of the local stdin: a teardown under way \
         there is stopped, audited `interrupted`, nothing recorded; its last lines are above). \
         Exit 143.\n"
    );
}

/// `snapshot --follow` through the launcher: ssh's lines come through as
/// written, the local stdin is not read (ssh's is a pipe the launcher
/// holds), and a SIGTERM goes to ssh (the remote stream takes no stdin, so
/// the connection is closed); the launcher exits 143 saying so.
#[test]
fn a_follow_launcher_streams_and_passes_a_signal_to_ssh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = dir.path().join("started");
    let seen = dir.path().join("stdin-seen");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "trap 'echo \"ssh: got TERM\" >&2; exit 255' TERM\necho '{{\"type\":\"hello\"}}'\n\
             timeout 0.5 cat > '{}'\ntouch '{}'\nwhile :; do sleep 0.05; done",
            seen.display(),
            started.display()
        ),
    );
    let mut child = launcher(&["--controller", "ssh://h", "snapshot", "--follow"], &path);
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "not for ssh").expect("write");
    assert_eq!(lines.next("hello", UI), r#"{"type":"hello"}"#);
    wait_for_file(&started);
    assert_eq!(std::fs::read_to_string(&seen).expect("seen"), "");
    signal_pid(child.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut child);
    drop(stdin);
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(
        stderr_of(&mut child),
        "ssh: got TERM\nstackless-tui: interrupted by SIGTERM: the stream from h was closed \
         (ssh closed the connection; `snapshot --follow` there stops at its next write). Exit \
         143.\n"
    );
}

/// A remote stackless-tui that knows `--reached-as` but not the streams:
/// its clap error passes through, then the launcher names the cause, exit 2.
#[test]
fn an_older_remote_without_the_streams_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, said) in [
        (
            ["serve", "--stdio"],
            "error: unrecognized subcommand 'serve'\n\nUsage: stackless-tui [OPTIONS] [COMMAND]",
        ),
        (
            ["snapshot", "--follow"],
            "error: unexpected argument '--follow' found\n\nUsage: stackless-tui snapshot [OPTIONS]",
        ),
    ] {
        let path = fake_ssh_script(
            dir.path(),
            &format!("printf '%s\\n' \"{said}\" >&2\nexit 2"),
        );
        let (code, stdout, stderr) = run_plain(
            &[&["--controller", "ssh://fleet-1"][..], &args[..]].concat(),
            &[("PATH", &path)],
        );
        assert_eq!(code, Some(2));
        assert!(stdout.is_empty());
        assert_eq!(
            text(&stderr),
            format!(
                "{said}\nstackless-tui: stackless-tui on fleet-1 is older than this \
                 stackless-tui: it does not speak the stream protocol (`serve --stdio`, \
                 `snapshot --follow`; exit 2). Install this version there (from a checkout of \
                 stackless-tui: `cargo install --locked --path .`, or copy this binary to the \
                 host).\n"
            )
        );
    }
}
/// The launcher run as the sshd tests run it (a clean environment, as
/// [`crate::harness::run_plain`]), its three streams piped.
fn launcher_plain(args: &[&str], home: &Path) -> Spawned {
    spawn_plain(args, home, Stdio::piped())
}

/// One out-line as JSON.
fn message(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// Messages until (and with) the first whose `type` is `kind`, and whose
/// fields match `extra` (each `(field, value)`).
#[track_caller]
fn until(lines: &Lines, kind: &str, extra: &[(&str, Value)]) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let got = message(&lines.next(kind, UI));
        let done = got["type"] == kind && extra.iter().all(|(field, value)| got[*field] == *value);
        seen.push(got);
        if done {
            return seen;
        }
    }
}

/// A local snapshot of `store`, at a fixed time (to compare before and
/// after).
fn local_snapshot(store: &Path, empty: &Path) -> String {
    crate::harness::local_snapshot(store, empty, "1796118148")
}

/// `serve --stdio` through a real sshd: a `hello` (protocol 1, the
/// host's store), the first snapshot to its `synced`; a `reap` and a
/// `down` (with the births read from the stream) act on that host's store
/// only (a local store with the same instances is untouched); a hostile
/// name is refused there and nothing runs; the end of the local stdin
/// stops the agent (exit 0, its audit's `stop` line).
#[test]
fn serve_stdio_through_a_real_sshd() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let config = sshd.config();
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let (local_dir, local) = fixture("real-0.4.0-v14.db");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let before = local_snapshot(&local, &empty);
    fake_down(dir.path(), "");
    let down_cmd = format!(
        "'{}' down {{name}} --json",
        dir.path().join("fake-down.sh").display()
    );
    let pwned = dir.path().join("pwned");
    let home = tempfile::tempdir().expect("home");
    let mut args = remote_args(&config, &empty, &store);
    args.extend(["--no-reaper", "--down-cmd", &down_cmd, "serve", "--stdio"]);
    let mut child = launcher_plain(&args, home.path());
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");

    let hello = message(&lines.next("hello", UI));
    assert_eq!(hello["type"], "hello", "{hello}\nsshd: {}", sshd.log());
    assert_eq!(hello["protocol"], 1);
    assert_eq!(hello["store"], utf8(&store));
    assert_eq!(hello["follow_only"], false);
    let first = until(&lines, "synced", &[]);
    assert_eq!(first[0]["type"], "reset", "{first:?}");
    let births: std::collections::BTreeMap<String, Value> = first
        .iter()
        .filter(|m| m["type"] == "rows" && m["table"] == "instances")
        .flat_map(|m| m["upsert"].as_array().cloned().unwrap_or_default())
        .map(|row| {
            let name = row["name"].as_str().unwrap_or_default().to_owned();
            (name, row["birth"]["instance_id"].clone())
        })
        .collect();
    assert_eq!(births.len(), 8, "{births:?}");

    let mut send = |line: &str| {
        writeln!(stdin, "{line}").expect("write a command");
        stdin.flush().expect("flush");
    };
    send(&format!(
        r#"{{"id":1,"cmd":"reap","name":"golf","birth":{}}}"#,
        births["golf"]
    ));
    let reply = until(&lines, "reply", &[]).pop().expect("a reply");
    assert_eq!(
        reply,
        serde_json::json!({"type": "reply", "id": 1, "ok": true, "message": "reap requested for golf"})
    );
    send(&format!(
        r#"{{"id":"2","cmd":"down","name":"alpha","birth":{}}}"#,
        births["alpha"]
    ));
    let mut seen = until(&lines, "reply", &[]);
    assert_eq!(
        seen.pop().expect("a reply"),
        serde_json::json!({"type": "reply", "id": "2", "ok": true, "message": "teardown requested for alpha"})
    );
    let hostile = format!("a;touch {}", pwned.display());
    send(&serde_json::json!({"id": 3, "cmd": "reap", "name": hostile}).to_string());
    seen.extend(until(&lines, "reply", &[]));
    assert_eq!(
        seen.pop().expect("a reply"),
        serde_json::json!({"type": "reply", "id": 3, "ok": false, "error": {"kind": "refused", "message": "refused: the name is not DNS-safe; nothing is done to it"}})
    );
    // Both teardowns end (the fake tombstones them in the host's store).
    let ended = |seen: &[Value]| {
        [("golf", "reaped"), ("alpha", "torn down")]
            .iter()
            .all(|(name, kind)| {
                seen.iter().any(|m| {
                    m["type"] == "activity"
                        && m["actor"] == "operator"
                        && m["instance"] == *name
                        && m["kind"] == *kind
                })
            })
    };
    while !ended(&seen) {
        seen.push(message(&lines.next("the teardowns' ends", UI)));
    }
    drop(stdin);
    let status = wait_status(&mut child);
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(0), "{stderr}\nsshd: {}", sshd.log());
    assert!(!pwned.exists(), "the hostile name ran");
    // The two teardowns run at once: in either order.
    let mut downs = argv_log(dir.path());
    downs.sort();
    assert_eq!(downs, ["[down][alpha][--json]", "[down][golf][--json]"]);
    let remote = local_snapshot(&store, &empty);
    let remote: Value = serde_json::from_str(&remote).expect("JSON");
    let statuses: Vec<(String, String)> = remote["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .filter(|i| i["name"] == "golf" || i["name"] == "alpha")
        .map(|i| (i["name"].to_string(), i["status"].to_string()))
        .collect();
    assert_eq!(statuses.len(), 2, "{remote}");
    assert!(
        statuses.iter().all(|(_, s)| s == "\"tombstoned\""),
        "{statuses:?}"
    );
    // The host's audit: the agent's stop, at the end of its stdin.
    let audit =
        std::fs::read_to_string(dir.path().join("stackless-tui/audit.jsonl")).expect("audit trail");
    let stops: Vec<Value> = audit
        .lines()
        .map(message)
        .filter(|line| line["actor"] == "console" && line["action"] == "stop")
        .collect();
    assert_eq!(stops.len(), 1, "{audit}");
    assert_eq!(stops[0]["reason"], "stdin closed", "{audit}");
    assert_eq!(stops[0]["outcome"], "ok", "{audit}");
    // The local store with the same names: untouched.
    assert_eq!(local_snapshot(&local, &empty), before);
    assert!(!local_dir.path().join("stackless-tui").exists());
    drop(sshd);
}

/// `snapshot --follow` through a real sshd: `hello` (follow-only, no
/// commands), the first snapshot to its `synced`; when the reader closes
/// its end, the launcher (exit 0) and the remote stream both end; a
/// SIGTERM to the launcher ends both too (exit 143, said).
#[test]
fn snapshot_follow_through_a_real_sshd() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let config = sshd.config();
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let home = tempfile::tempdir().expect("home");
    let mut args = remote_args(&config, &empty, &store);
    args.extend(["snapshot", "--follow"]);
    let mut child = launcher_plain(&args, home.path());
    let lines = Lines::closing_after(child.stdout.take().expect("stdout"), |line| {
        line.contains(r#""type":"synced""#)
    });
    let hello = message(&lines.next("hello", UI));
    assert_eq!(hello["type"], "hello", "{hello}\nsshd: {}", sshd.log());
    assert_eq!(hello["protocol"], 1);
    assert_eq!(hello["follow_only"], true);
    assert_eq!(hello["commands"], serde_json::json!([]));
    let first = until(&lines, "synced", &[]);
    assert_eq!(first[0]["type"], "reset", "{first:?}");
    // The reader has closed its end: everything stops.
    let status = wait_status(&mut child);
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(0), "{stderr}\nsshd: {}", sshd.log());
    poll(
        "the remote snapshot --follow gone with its reader",
        UI,
        || {
            processes_with(&["--reached-as", utf8(&store), "--follow"])
                .is_empty()
                .then_some(())
        },
        String::new,
    );

    // A SIGTERM to the launcher: ssh closes the connection, the remote
    // stream stops at its next write.
    let mut child = launcher_plain(&args, home.path());
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    until(&lines, "synced", &[]);
    signal_pid(child.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut child);
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(
        stderr.ends_with(
            "stackless-tui: interrupted by SIGTERM: the stream from testhost was closed (ssh \
             closed the connection; `snapshot --follow` there stops at its next write). Exit \
             143.\n"
        ),
        "{stderr}"
    );
    poll(
        "the remote snapshot --follow gone with its launcher",
        UI,
        || {
            processes_with(&["--reached-as", utf8(&store), "--follow"])
                .is_empty()
                .then_some(())
        },
        String::new,
    );
    drop(sshd);
}

/// A SIGTERM to `serve --stdio`'s launcher through a real sshd, a
/// teardown under way there: the agent's stdin is closed, so it stops as
/// at the end of its stdin (docs/protocol.md "Stopping"): the teardown is
/// stopped (audited `interrupted`, its `down` never finishes, nothing
/// recorded), the stop is audited, and the launcher exits 143 saying so.
#[test]
fn a_signal_to_a_remote_serve_stops_the_agent_in_order() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let config = sshd.config();
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let started = dir.path().join("started");
    let finished = dir.path().join("finished");
    fake_down(
        dir.path(),
        &format!(
            "touch '{}'; sleep 2; touch '{}'",
            started.display(),
            finished.display()
        ),
    );
    let down_cmd = format!(
        "'{}' down {{name}} --json",
        dir.path().join("fake-down.sh").display()
    );
    let home = tempfile::tempdir().expect("home");
    let mut args = remote_args(&config, &empty, &store);
    args.extend(["--no-reaper", "--down-cmd", &down_cmd, "serve", "--stdio"]);
    let mut child = launcher_plain(&args, home.path());
    let lines = Lines::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    let first = until(&lines, "synced", &[]);
    let birth = first
        .iter()
        .filter(|m| m["type"] == "rows" && m["table"] == "instances")
        .flat_map(|m| m["upsert"].as_array().cloned().unwrap_or_default())
        .find(|row| row["name"] == "golf")
        .map(|row| row["birth"]["instance_id"].clone())
        .expect("golf's row");
    writeln!(
        stdin,
        r#"{{"id":1,"cmd":"reap","name":"golf","birth":{birth}}}"#
    )
    .expect("write");
    stdin.flush().expect("flush");
    until(
        &lines,
        "activity",
        &[("instance", "golf".into()), ("kind", "tearing down".into())],
    );
    wait_for_file(&started);
    signal_pid(child.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut child);
    let stderr = stderr_of(&mut child);
    assert_eq!(status.code(), Some(143), "{stderr}\nsshd: {}", sshd.log());
    assert!(
        stderr.ends_with(
            "stackless-tui: interrupted by SIGTERM: the agent on testhost was told to stop (its \
             stdin was closed, as at the end of the local stdin: a teardown under way there is \
             stopped, audited `interrupted`, nothing recorded; its last lines are above). Exit \
             143.\n"
        ),
        "{stderr}"
    );
    drop(stdin);
    let audit =
        std::fs::read_to_string(dir.path().join("stackless-tui/audit.jsonl")).expect("audit trail");
    let lines: Vec<(String, String, String, String)> = audit
        .lines()
        .map(message)
        .filter(|line| line["action"] != "start")
        .map(|line| {
            let field = |f: &str| line[f].as_str().unwrap_or_default().to_owned();
            (
                field("actor"),
                field("instance"),
                field("action"),
                field("outcome"),
            )
        })
        .collect();
    let line = |a: &str, i: &str, act: &str, o: &str| {
        (a.to_owned(), i.to_owned(), act.to_owned(), o.to_owned())
    };
    assert_eq!(
        lines,
        [
            line("operator", "golf", "teardown", "started"),
            line("operator", "golf", "teardown", "interrupted"),
            line("console", "", "stop", "ok"),
        ],
        "{audit}"
    );
    assert!(audit.contains(r#""reason":"stdin closed""#), "{audit}");
    // Stopped, not finished; nothing recorded: golf is as it was. No
    // process names the teardown script any more (neither the agent, whose
    // `--down-cmd` it is, nor the teardown): `finished` can never come.
    let script = dir.path().join("fake-down.sh");
    poll(
        "the agent and its teardown gone",
        UI,
        || processes_with(&[utf8(&script)]).is_empty().then_some(()),
        || format!("{:?}", processes_with(&[utf8(&script)])),
    );
    assert!(!finished.exists(), "the teardown ran on");
    let host: Value = serde_json::from_str(&local_snapshot(&store, &empty)).expect("JSON");
    let golf = host["instances"]
        .as_array()
        .expect("instances")
        .iter()
        .find(|i| i["name"] == "golf")
        .cloned()
        .expect("golf");
    assert_eq!(golf["status"], "active", "{golf}");
    drop(sshd);
}
