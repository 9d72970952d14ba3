//! `record` over a fleet (2+ `--controller`), on the real sshd the tests
//! start ([`crate::sshd`]), each alias reaching its own store: each host
//! recorded into its own subdirectory of the history directory;
//! `snapshot --json --at --host NAME` reads one host's, `history` lists
//! every host's; a host that is not a DNS-safe name is refused before
//! anything runs.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::fleet_follow::stores;
use crate::harness::{BIN, poll, processes_with, spawn_plain, utf8};
use crate::sshd::Sshd;

/// The longest wait for a host's recording.
const WAIT: Duration = Duration::from_secs(30);

/// `snapshot --json --at NOW --host HOST --history HISTORY`: the names of
/// the instances recorded, or `None` (not recorded yet).
fn names_at(home: &Path, history: &Path, host: &str) -> Option<Vec<String>> {
    let out = std::process::Command::new(BIN)
        .args(["snapshot", "--json", "--at"])
        .arg(jiff::Timestamp::now().as_second().to_string())
        .args(["--host", host, "--history"])
        .arg(history)
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("snapshot --at");
    if !out.status.success() {
        return None;
    }
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    Some(
        document["instances"]
            .as_array()
            .expect("instances")
            .iter()
            .map(|i| i["name"].as_str().expect("name").to_owned())
            .collect(),
    )
}

/// Two hosts recorded at once: `<history>/fleet-1/` and
/// `<history>/fleet-2/`, each with its own lock and segments;
/// `snapshot --at --host` reads each host's own instances (8 and 5, the
/// fixtures'); `history` names both hosts; SIGTERM stops every ssh, exit
/// 0.
#[test]
fn two_hosts_are_recorded_each_into_its_own_directory() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let config = sshd.fleet_config(&[
        ("fleet-1", &stores[0].1, false),
        ("fleet-2", &stores[1].1, false),
    ]);
    let home = tempfile::tempdir().expect("tempdir");
    let history = home.path().join("history");
    let mut args: Vec<String> = Vec::new();
    for alias in ["fleet-1", "fleet-2"] {
        args.extend(["--controller".to_owned(), format!("ssh://{alias}")]);
    }
    for arg in [
        "--ssh-config",
        utf8(&config),
        "--remote-bin",
        BIN,
        "--config",
        utf8(&empty),
        "record",
        "--history",
        utf8(&history),
    ] {
        args.push(arg.to_owned());
    }
    let mut child = spawn_plain(&args, home.path(), Stdio::null());
    let mut seen = Vec::new();
    for (host, count) in [("fleet-1", 8), ("fleet-2", 5)] {
        let names = poll(
            &format!("{host} recorded"),
            WAIT,
            || names_at(home.path(), &history, host),
            || format!("{:?}", std::fs::read_dir(&history).map(Iterator::count)),
        );
        assert_eq!(names.len(), count, "{host}: {names:?}");
        assert!(history.join(host).join("recorder.lock").exists(), "{host}");
        seen.push(names);
    }
    assert_ne!(seen[0], seen[1]);
    let listed = std::process::Command::new(BIN)
        .args(["history", "--history"])
        .arg(&history)
        .env("HOME", home.path())
        .output()
        .expect("history");
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.starts_with("host fleet-1\nhistory: "), "{text}");
    assert!(text.contains("\nhost fleet-2\nhistory: "), "{text}");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("kill");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(
        processes_with(&[utf8(&config)]),
        Vec::<u32>::new(),
        "orphan ssh"
    );
    drop(sshd);
}

/// A host's name names its recording's directory: `--host ..` would
/// name one outside the history directory, and `record` over a fleet
/// whose label is `eu_1` (a label may hold `_`) is refused before any ssh
/// runs (no directory made), exit 2.
#[test]
fn a_host_that_is_not_dns_safe_is_refused() {
    let home = tempfile::tempdir().expect("tempdir");
    let fleet = home.path().join("fleet.toml");
    std::fs::write(
        &fleet,
        "[[host]]\ntarget = \"ssh://fleet-1\"\nlabel = \"eu_1\"\n\n[[host]]\ntarget = \"ssh://fleet-2\"\n",
    )
    .expect("fleet file");
    let history = home.path().join("history");
    let out = std::process::Command::new(BIN)
        .arg("--fleet")
        .arg(&fleet)
        .args(["--ssh-config", "/nonexistent", "record", "--history"])
        .arg(&history)
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .expect("record");
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(r#"the host "eu_1" is not a DNS-safe name"#),
        "{said}"
    );
    assert!(!history.exists());
    let out = std::process::Command::new(BIN)
        .args([
            "snapshot",
            "--json",
            "--at",
            "10",
            "--host",
            "..",
            "--history",
        ])
        .arg(home.path())
        .env("HOME", home.path())
        .output()
        .expect("snapshot --at");
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("is not a DNS-safe name"), "{said}");
    let out = std::process::Command::new(BIN)
        .args(["replay", "--host", "a/b", "--history"])
        .arg(home.path())
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .expect("replay");
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(r#"the host "a/b" is not a DNS-safe name"#),
        "{said}"
    );
}
