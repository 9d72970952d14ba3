//! `snapshot --follow` over a fleet, on the real sshd the tests start
//! ([`crate::sshd`]), each alias reaching its own store through `SetEnv
//! STACKLESS_TUI_STATE`: every host's lines arrive tagged with its
//! `host`, a `host` message at each change of a host's state; a wrong
//! host key fails that host alone; a host whose agent is killed goes
//! stale and is connected again; a signal stops every ssh.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::fixture;
use crate::harness::{BIN, Lines, Spawned, poll, processes_with, spawn_plain, utf8};
use crate::sshd::Sshd;

/// The fixtures the hosts hold, one store each.
const STORES: [&str; 3] = [
    "real-0.4.0-v14.db",
    "real-0.3.0-v5.db",
    "stackless-real-v4.db",
];

/// The longest wait for one expected line.
const WAIT: Duration = Duration::from_secs(20);

/// A running `--fleet ... snapshot --follow` and its stdout's lines.
struct Follow {
    child: Spawned,
    lines: Lines,
    seen: Vec<Value>,
    _home: tempfile::TempDir,
}

impl Follow {
    fn start(config: &Path, aliases: &[&str], empty: &Path) -> Self {
        let home = tempfile::tempdir().expect("tempdir");
        let mut args = Vec::new();
        for alias in aliases {
            args.extend(["--controller".to_owned(), format!("ssh://{alias}")]);
        }
        for arg in [
            "--ssh-config",
            utf8(config),
            "--remote-bin",
            BIN,
            "--config",
            utf8(empty),
        ] {
            args.push(arg.to_owned());
        }
        args.extend(["snapshot".to_owned(), "--follow".to_owned()]);
        let mut child = spawn_plain(&args, home.path(), Stdio::null());
        let lines = Lines::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            lines,
            seen: Vec::new(),
            _home: home,
        }
    }

    /// The first line from the `from`th on that matches `wanted`, read
    /// (within [`WAIT`]) if not seen yet. Every line must be a JSON object
    /// with a `host`.
    fn find(&mut self, from: usize, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(found) = self.seen.iter().skip(from).find(|v| wanted(v)) {
            return found.clone();
        }
        self.until(what, wanted)
    }

    /// Read lines until one matches `wanted` (within [`WAIT`]); it is
    /// returned. Every line must be a JSON object with a `host`.
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        self.until_within(WAIT, what, wanted)
    }

    /// [`Follow::until`] within `wait`.
    fn until_within(
        &mut self,
        wait: Duration,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(line) = self.lines.next_within(left) else {
                let _ = self.child.kill();
                let mut stderr = String::new();
                let _ = std::io::Read::read_to_string(
                    &mut self.child.stderr.take().expect("stderr"),
                    &mut stderr,
                );
                let seen: Vec<String> = self
                    .seen
                    .iter()
                    .map(|v| crate::common::protocol::short(&v.to_string()))
                    .collect();
                panic!("no {what} within {wait:?}; stderr: {stderr}\nseen: {seen:#?}");
            };
            let value: Value = serde_json::from_str(&line).expect("a JSON line");
            assert!(value["host"].is_string(), "{line}");
            self.seen.push(value.clone());
            if wanted(&value) {
                return value;
            }
        }
    }

    /// SIGTERM: exit 0, and no ssh of `config` left running.
    fn stop(mut self, config: &Path) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("kill");
        let status = self.child.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "{status:?}");
        assert_eq!(
            processes_with(&[utf8(config)]),
            Vec::<u32>::new(),
            "orphan ssh"
        );
    }
}

/// A host whose remote agent is stopped (SIGSTOP) goes `stale` after
/// 3 x `heartbeat_secs` (15 s) without a line while the other host's
/// heartbeats keep coming, then is connected again (a new agent); the
/// stopped one is killed at the end.
#[test]
fn a_stopped_agent_goes_stale_after_15_s_and_comes_back() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let config = sshd.fleet_config(&[
        ("fleet-1", &stores[0].1, false),
        ("fleet-2", &stores[1].1, false),
    ]);
    let mut follow = Follow::start(&config, &["fleet-1", "fleet-2"], &empty);
    follow.find(0, "fleet-1 synced", is("synced", "fleet-1"));
    follow.find(0, "fleet-2 synced", is("synced", "fleet-2"));
    let agents = agents_of(&stores[1].1);
    assert_eq!(agents.len(), 1, "fleet-2's agent: {agents:?}");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(agents[0]).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).expect("stop the agent");
    // Killed at the end, also when an assertion fails (never left stopped).
    let _stopped = KillOnDrop(pid);
    let from = follow.seen.len();
    let stale = follow.until_within(
        Duration::from_secs(25),
        "fleet-2 stale",
        state("fleet-2", "stale"),
    );
    let error = stale["error"].as_str().unwrap();
    // 15 s after its last line (whole seconds, a 200 ms tick: 15 or a
    // little more on a loaded machine).
    let quiet: i64 = error
        .strip_prefix("no line for ")
        .and_then(|rest| rest.strip_suffix(" s (3 x heartbeat_secs 5)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{error}"));
    assert!((15..=18).contains(&quiet), "{error}");
    // Meanwhile fleet-1 went on: its heartbeats came.
    assert!(
        follow.seen[from..].iter().any(is("heartbeat", "fleet-1")),
        "{:#?}",
        &follow.seen[from..]
    );
    let before = follow.seen.len();
    follow.find(before, "fleet-2 connected", state("fleet-2", "connected"));
    follow.find(before, "fleet-2 synced again", is("synced", "fleet-2"));
    follow.stop(&config);
    drop(sshd);
}

/// A process killed (SIGKILL) when this is dropped.
pub(crate) struct KillOnDrop(pub(crate) nix::unistd::Pid);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGKILL);
    }
}

/// Every host streaming, then the reader closes stdout: at the next write
/// (a heartbeat, within 2 x `heartbeat_secs`) the launcher kills every ssh
/// and exits 0.
#[test]
fn a_closed_stdout_stops_the_fleet_stream() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let config = sshd.fleet_config(&[
        ("fleet-1", &stores[0].1, false),
        ("fleet-2", &stores[1].1, false),
    ]);
    let mut follow = Follow::start(&config, &["fleet-1", "fleet-2"], &empty);
    follow.find(0, "fleet-1 synced", is("synced", "fleet-1"));
    follow.find(0, "fleet-2 synced", is("synced", "fleet-2"));
    let Follow {
        mut child, lines, ..
    } = follow;
    // The reading thread drops stdout at its next line.
    drop(lines);
    let status = poll(
        "the launcher's exit",
        WAIT,
        || child.try_wait().expect("try_wait"),
        String::new,
    );
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(
        processes_with(&[utf8(&config)]),
        Vec::<u32>::new(),
        "orphan ssh"
    );
    drop(sshd);
}

/// The `stackless-tui` processes (this binary, not a shell running it)
/// whose environment holds `STACKLESS_TUI_STATE=store`: that host's remote
/// agent.
pub(crate) fn agents_of(store: &Path) -> Vec<u32> {
    let wanted = format!("STACKLESS_TUI_STATE={}", store.display());
    let bin = std::fs::canonicalize(BIN).expect("the binary");
    processes_with(&["--reached-as"])
        .into_iter()
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == bin))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_bytes()))
        })
        .collect()
}

fn is(kind: &'static str, host: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == kind && v["host"] == host
}

fn state(host: &'static str, state: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == "host" && v["host"] == host && v["state"] == state
}

/// Three stores, and an empty config file beside the first.
pub(crate) fn stores() -> (Vec<(tempfile::TempDir, PathBuf)>, PathBuf) {
    let stores: Vec<_> = STORES.iter().map(|name| fixture(name)).collect();
    let empty = stores[0].1.with_file_name("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    (stores, empty)
}

/// Three aliases streaming: each host's `host` messages (`connecting`,
/// then `connected`), its `hello` and first `synced` arrive tagged with
/// its host, its `synced` counts its own store's instances; SIGTERM stops
/// every ssh, exit 0.
#[test]
fn three_hosts_follow_in_one_stream() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let aliases = ["fleet-1", "fleet-2", "fleet-3"];
    let config = sshd.fleet_config(
        &aliases
            .iter()
            .zip(&stores)
            .map(|(alias, (_, store))| (*alias, store.as_path(), false))
            .collect::<Vec<_>>(),
    );
    let mut follow = Follow::start(&config, &aliases, &empty);
    let counts = [8, 5, 8];
    for (host, count) in aliases.into_iter().zip(counts) {
        let synced = follow.find(0, "synced", is("synced", host));
        assert_eq!(synced["counts"]["instances"], count, "{host}");
    }
    for host in aliases {
        let mine: Vec<&Value> = follow.seen.iter().filter(|v| v["host"] == host).collect();
        let kinds: Vec<&str> = mine.iter().map(|v| v["type"].as_str().unwrap()).collect();
        assert_eq!(kinds[..3], ["host", "hello", "host"], "{host}: {kinds:?}");
        assert_eq!(kinds.last(), Some(&"synced"), "{host}");
        assert_eq!(
            (
                &mine[0]["state"],
                &mine[2]["state"],
                &mine[2]["error"],
                &mine[2]["retry_at"]
            ),
            (
                &"connecting".into(),
                &"connected".into(),
                &Value::Null,
                &Value::Null
            ),
            "{host}"
        );
        assert_eq!(mine[1]["protocol"], 1, "{host}");
        let since = mine[2]["since"].as_i64().unwrap();
        assert!(
            (since - jiff::Timestamp::now().as_second()).abs() < 30,
            "{since}"
        );
    }
    follow.stop(&config);
    drop(sshd);
}

/// A host with a wrong host key is `failed` alone (not retried, ssh's
/// words in its error) while the other two stream.
#[test]
fn a_wrong_host_key_fails_one_host_of_the_stream() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let config = sshd.fleet_config(&[
        ("fleet-1", &stores[0].1, false),
        ("fleet-2", &stores[1].1, true),
        ("fleet-3", &stores[2].1, false),
    ]);
    let mut follow = Follow::start(&config, &["fleet-1", "fleet-2", "fleet-3"], &empty);
    let failed = follow.until("fleet-2 failed", state("fleet-2", "failed"));
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.starts_with("ssh could not verify the host key of fleet-2 (exit 255): ssh said "),
        "{error}"
    );
    assert_eq!(failed["retry_at"], Value::Null);
    follow.find(0, "fleet-1 synced", is("synced", "fleet-1"));
    follow.find(0, "fleet-3 synced", is("synced", "fleet-3"));
    let fleet_2: Vec<&str> = follow
        .seen
        .iter()
        .filter(|v| v["host"] == "fleet-2")
        .map(|v| v["state"].as_str().unwrap_or("(not a host message)"))
        .collect();
    assert_eq!(fleet_2, ["connecting", "failed"]);
    follow.stop(&config);
    drop(sshd);
}

/// A host whose remote agent is killed goes `stale` (its error says how
/// its ssh ended, a retry after 1 s), then `connecting` and `connected`
/// again with a new `hello` and `synced`; the others never change.
#[test]
fn a_killed_agent_goes_stale_and_comes_back() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let aliases = ["fleet-1", "fleet-2", "fleet-3"];
    let config = sshd.fleet_config(
        &aliases
            .iter()
            .zip(&stores)
            .map(|(alias, (_, store))| (*alias, store.as_path(), false))
            .collect::<Vec<_>>(),
    );
    let mut follow = Follow::start(&config, &aliases, &empty);
    for host in aliases {
        follow.find(0, "synced", is("synced", host));
    }
    let agents = agents_of(&stores[1].1);
    assert_eq!(agents.len(), 1, "fleet-2's agent: {agents:?}");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(agents[0]).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill the agent");
    let stale = follow.until("fleet-2 stale", state("fleet-2", "stale"));
    let since = stale["since"].as_i64().unwrap();
    assert_eq!(stale["retry_at"].as_i64(), Some(since + 1), "{stale}");
    assert!(
        stale["error"].as_str().unwrap().contains("fleet-2"),
        "{stale}"
    );
    let before = follow.seen.len();
    follow.find(before, "fleet-2 connected", state("fleet-2", "connected"));
    follow.find(before, "fleet-2 synced again", is("synced", "fleet-2"));
    let again: Vec<&str> = follow.seen[before..]
        .iter()
        .filter(|v| v["host"] == "fleet-2")
        .map(|v| v["type"].as_str().unwrap())
        .collect();
    assert_eq!(again[..3], ["host", "hello", "host"], "{again:?}");
    let others: Vec<&Value> = follow
        .seen
        .iter()
        .filter(|v| v["type"] == "host" && v["host"] != "fleet-2")
        .collect();
    assert_eq!(others.len(), 4, "{others:#?}");
    follow.stop(&config);
    drop(sshd);
}
