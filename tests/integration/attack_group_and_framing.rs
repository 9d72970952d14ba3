//! Reproductions of defects found by trying the one child runner and the
//! agent's framing as an attacker would: a teardown's process group is
//! stopped whole once it has answered (its output bounded however long a
//! member lives), and every command line gets exactly one reply.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::fixture;

/// Write an executable `sh` script `body` at `dir/name`.
fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Whether process `pid` is still alive (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
}

/// A teardown that answers and exits while a member of its process group
/// (a background grandchild holding its stdout) keeps writing: once the
/// answer is in, the group is stopped (`process_group::run`: "the group
/// stopped through `process_group`", output bounded at 256 MiB): no
/// grandchild is left writing into the runner's unlinked temporary
/// stdout file, which nothing would bound once the answer is read.
#[test]
fn a_teardowns_group_is_stopped_once_it_has_answered() {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let pidfile = dir.path().join("grandchild.pid");
    let down = script(
        dir.path(),
        "down.sh",
        &format!(
            "sleep 60 &\necho $! >> '{}'\necho '{{\"ok\":false,\"error\":{{\"code\":\"E\",\"message\":\"x\"}}}}'\nexit 1\n",
            pidfile.display()
        ),
    );
    let status = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .args(["--reaper", "always", "--down-cmd"])
        .arg(format!("{} {{name}}", down.display()))
        .arg("--state")
        .arg(&store)
        .args(["reap", "--once"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "the teardowns failed as answered");
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .lines()
        .map(|pid| pid.trim().parse().unwrap())
        .collect();
    assert!(!pids.is_empty(), "no teardown ran");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    for &pid in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert_eq!(
        left,
        Vec::<i32>::new(),
        "teardown grandchildren still run after reap --once exited"
    );
}

/// What `serve --stdio` answers to `stdin` (written whole, then closed):
/// its replies.
fn replies_to(stdin: &[u8]) -> Vec<Value> {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .args(["--no-reaper", "--down-cmd", "/bin/false {name}", "--state"])
        .arg(&store)
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut input = child.stdin.take().unwrap();
    let mut line = String::new();
    while !line.contains("\"synced\"") {
        line.clear();
        assert_ne!(out.read_line(&mut line).unwrap(), 0, "no synced");
    }
    input.write_all(stdin).unwrap();
    drop(input);
    let replies = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap())
        .filter(|m| m["type"] == "reply")
        .collect();
    let _ = child.wait();
    replies
}

/// A last command line without its newline before the end of stdin is a
/// command line: it gets its one reply (run, or refused as framing), not
/// silence (docs/protocol.md: "every command line gets exactly one
/// `reply`"): one `bad_request` (the line ends with a newline), not run.
#[test]
fn a_last_line_without_its_newline_gets_one_bad_request() {
    let replies = replies_to(br#"{"id":"last","cmd":"ping"}"#);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["ok"], false, "{replies:?}");
    assert_eq!(replies[0]["id"], Value::Null, "{replies:?}");
    assert_eq!(replies[0]["error"]["kind"], "bad_request", "{replies:?}");
    assert_eq!(
        replies[0]["error"]["message"],
        "cut by the end of input: a command line ends with a newline (not run)",
        "{replies:?}"
    );
}

/// A command line that is not UTF-8 is not JSON (docs/protocol.md,
/// Framing: "one JSON object per line, UTF-8"): `bad_request`, never
/// `ok` (bytes 0xff 0xfe inside a string are not read as U+FFFD).
#[test]
fn a_line_that_is_not_utf8_is_a_bad_request() {
    let replies = replies_to(b"{\"id\":\"u\",\"cmd\":\"ping\",\"x\":\"\xff\xfe\"}\n");
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["ok"], false, "{replies:?}");
    assert_eq!(replies[0]["error"]["kind"], "bad_request", "{replies:?}");
    assert_eq!(
        replies[0]["error"]["message"], "not UTF-8: a command line is UTF-8 (not run)",
        "{replies:?}"
    );
}

/// Credentials with a well-known shape are redacted in a child's answer
/// as `ghp_…`, `xoxb-…` and `sk_live_…` already are: an npm token
/// (`npm_` and 36 characters) and an OAuth authorization code in a URL
/// query (`?code=`, as `?access_token=` is), in the stream's `log`
/// lines too.
#[test]
fn child_tail_redacts_npm_tokens_and_oauth_codes() {
    let redactor = stackless_tui::model::redact::Redactor::default();
    assert_eq!(
        redactor.child_tail(
            "npm_CANARY93abcdefghijklmnopqrstuvwxyz12\nGET /cb?code=CANARY86&state=xyz\n"
        ),
        "[redacted]\nGET /cb?code=[redacted]&state=xyz\n"
    );
}

/// The word `bearer` in prose is no credential scheme: what follows it is
/// left (`bearer of bad news`), as `a basic check` is: operator text is
/// not hidden.
#[test]
fn child_tail_leaves_bearer_in_prose() {
    let redactor = stackless_tui::model::redact::Redactor::default();
    let plain = "the bearer of bad news; token 3 of 5\n";
    assert_eq!(redactor.child_tail(plain), plain);
}

/// `reap --once` on a copy of the v14 fixture with a teardown that notes
/// each name it is given and fails, its stdout as `stdout`: the exit code,
/// the names torn down (sorted) and what it said on stderr.
fn reap_with_stdout(stdout: Stdio) -> (Option<i32>, Vec<String>, String) {
    let (dir, store) = fixture("real-0.4.0-v14.db");
    let names = dir.path().join("names");
    let down = script(
        dir.path(),
        "down.sh",
        &format!(
            "echo \"$1\" >> '{}'\necho '{{\"ok\":false,\"error\":{{\"code\":\"E\",\"message\":\"x\"}}}}'\nexit 1\n",
            names.display()
        ),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .args(["--reaper", "always", "--down-cmd"])
        .arg(format!("{} {{name}}", down.display()))
        .arg("--state")
        .arg(&store)
        .args(["reap", "--once"])
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let mut torn: Vec<String> = std::fs::read_to_string(&names)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    torn.sort();
    (
        out.status.code(),
        torn,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A pass whose stdout is closed (`| head -1`) or full goes on: every
/// expired instance is tried, as with stdout read to the end; a closed
/// pipe is not an error (the pass's own exit code), a full one is said
/// and exits 2. Nothing panics.
#[test]
fn a_pass_goes_on_when_its_stdout_is_closed_or_full() {
    let (code, everyone, said) = reap_with_stdout(Stdio::null());
    assert_eq!(code, Some(1), "{said}");
    assert!(everyone.len() > 1, "{everyone:?}");
    // A pipe whose reader is gone before the first line.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let (code, torn, said) = reap_with_stdout(Stdio::from(writer));
    assert_eq!((code, &torn), (Some(1), &everyone), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (code, torn, said) = reap_with_stdout(Stdio::from(full));
    assert_eq!((code, &torn), (Some(2), &everyone), "{said}");
    assert!(
        said.contains("reap --once: cannot write stdout (No space left on device (os error 28)): the pass went on"),
        "{said}"
    );
}
