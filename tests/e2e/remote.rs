//! `--controller ssh://HOST`: the console and `snapshot --json` on the
//! "remote" side of a real sshd on 127.0.0.1 ([`crate::sshd`]), ssh's
//! failures as the operator reads them, and hostile targets refused before
//! any ssh runs (a fake `ssh` first in `PATH` records whether it was
//! called, and with what argv).

use std::path::Path;

use crate::common::fixture;
use crate::harness::{BIN, Tui, UI, run_plain, utf8};
use crate::sshd::{Sshd, skipped};

/// The rule stackless 0.4.0 states for a refused target.
const RULE: &str =
    "use ssh://HOST_ALIAS or ssh://USER@HOST; configure ports and keys in OpenSSH config";

/// A fake `ssh` in `<dir>/bin`: appends each argument on its own line to
/// `<dir>/ssh.argv` (then `--end--`), prints `stderr` on stderr, exits
/// `code`. Returns the `PATH` to use.
fn fake_ssh(dir: &Path, stderr: &str, code: i32) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let log = dir.join("ssh.argv");
    let said = dir.join("ssh.stderr");
    std::fs::write(&said, stderr).expect("write the fake's stderr");
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{log}'; done\n\
         echo --end-- >> '{log}'\ncat '{said}' >&2\nexit {code}\n",
        log = log.display(),
        said = said.display()
    );
    let path = bin.join("ssh");
    std::fs::write(&path, script).expect("write fake ssh");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
}

fn ssh_calls(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join("ssh.argv")).ok()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Hostile or malformed targets: exit 2 with stackless's rule, and ssh is
/// never started.
#[test]
fn hostile_targets_are_refused_before_ssh_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    for target in [
        "ssh://-oProxyCommand=touch /tmp/pwned",
        "ssh://-oProxyCommand=x",
        "ssh://host;rm",
        "ssh://host/path",
        "ssh://",
        "ssh://user@",
        "ssh://@host",
        "ssh://host:22",
        "ssh://$(id)",
        "/srv/stackless/state.db",
        "ssh://host\nother",
    ] {
        for (args, env) in [
            (
                vec![format!("--controller={target}"), "snapshot".to_owned()],
                vec![],
            ),
            (vec![], vec![("STACKLESS_CONTROLLER", target)]),
        ] {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut env = env.clone();
            env.push(("PATH", &path));
            let (code, stdout, stderr) = run_plain(&args, &env);
            let source = if args.is_empty() {
                "STACKLESS_CONTROLLER"
            } else {
                "--controller"
            };
            let shown: String = target.replace('\n', "␊");
            assert_eq!(code, Some(2), "{target:?} {source}");
            assert_eq!(
                text(&stderr),
                format!("stackless-tui: {source} {shown:?}: {RULE}\n"),
                "{target:?}"
            );
            assert!(stdout.is_empty());
            assert_eq!(ssh_calls(dir.path()), None, "ssh ran for {target:?}");
        }
    }
    // `--controller -oProxyCommand=x`: clap itself reads it as an option.
    let (code, _, _) = run_plain(&["--controller", "-oProxyCommand=x"], &[("PATH", &path)]);
    assert_eq!(code, Some(2));
    // A hostile remote program.
    let (code, _, stderr) = run_plain(
        &[
            "--controller",
            "ssh://h",
            "--remote-bin=-oProxyCommand=x",
            "snapshot",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        text(&stderr),
        "stackless-tui: --remote-bin \"-oProxyCommand=x\" starts with '-': name the \
         stackless-tui program on h\n"
    );
    assert_eq!(ssh_calls(dir.path()), None);
}

/// A valid target: ssh gets exactly this argv (`--` before the host, every
/// remote word quoted for the remote shell), its stderr and status pass
/// through, and 127/255 are explained.
#[test]
fn ssh_gets_an_argv_and_its_status_passes_through() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "remote says hi\n", 3);
    let (code, stdout, stderr) = run_plain(
        &[
            "--state",
            "/srv/it's/state.db",
            "--controller",
            "ssh://deploy@fleet-1.example",
            "--down-cmd",
            "stackless down {name} --json; rm -rf /",
            "snapshot",
            "--json",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(code, Some(3));
    assert!(stdout.is_empty());
    assert_eq!(text(&stderr), "remote says hi\n");
    assert_eq!(
        ssh_calls(dir.path()).expect("ssh ran"),
        "-T\n-o\nBatchMode=yes\n-o\nStrictHostKeyChecking=yes\n-o\nConnectTimeout=10\n--\n\
         deploy@fleet-1.example\nstackless-tui\n--reached-as\nfleet-1.example\n--state\n\
         '/srv/it'\\''s/state.db'\n--down-cmd\n'stackless down {name} --json; rm -rf /'\n\
         snapshot\n--json\n--end--\n"
    );

    for (code, stderr, message) in [
        (
            127,
            "bash: line 1: stackless-tui: command not found\n",
            "stackless-tui is not installed on fleet-1 (the remote shell cannot find it: exit \
             127). Install it there (from a checkout of stackless-tui: `cargo install --locked \
             --path .`, or copy this binary to the host), or name where it is with --remote-bin \
             PATH (STACKLESS_TUI_REMOTE_BIN).",
        ),
        (
            255,
            "ssh: connect to host fleet-1 port 22: Connection refused\n",
            "ssh could not connect to fleet-1 (exit 255): ssh said \"ssh: connect to host \
             fleet-1 port 22: Connection refused\". Check the host name, its port and the \
             network (ports and proxies belong in the OpenSSH config: ~/.ssh/config, or \
             --ssh-config FILE).",
        ),
        (
            2,
            "error: unexpected argument '--reached-as' found\n",
            "stackless-tui on fleet-1 is older than this stackless-tui: it does not know \
             --reached-as (exit 2). Install this version there (from a checkout of \
             stackless-tui: `cargo install --locked --path .`, or copy this binary to the host).",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fake_ssh(dir.path(), stderr, code);
        let (got, _, err) = run_plain(
            &["snapshot"],
            &[("PATH", &path), ("STACKLESS_CONTROLLER", "ssh://fleet-1")],
        );
        assert_eq!(got, Some(code));
        assert_eq!(text(&err), format!("{stderr}stackless-tui: {message}\n"));
    }

    // A forwarded `--config` names a file on the host: not read here.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    let (code, _, stderr) = run_plain(
        &[
            "--controller",
            "h",
            "--config",
            "/on/the/host.toml",
            "snapshot",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(code, Some(0), "{}", text(&stderr));
    assert!(
        ssh_calls(dir.path())
            .expect("ssh ran")
            .contains("\n--config\n/on/the/host.toml\nsnapshot\n"),
    );

    // The console needs a terminal here too: refused before ssh runs.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    let (code, _, stderr) = run_plain(&["--controller", "fleet-1"], &[("PATH", &path)]);
    assert_eq!(code, Some(2));
    assert!(
        text(&stderr).starts_with("stackless-tui: the console needs a terminal"),
        "{}",
        text(&stderr)
    );
    assert_eq!(ssh_calls(dir.path()), None);
}

/// `STACKLESS_STATE_URL`: the exact message, exit 2.
#[test]
fn a_state_url_points_at_the_controller() {
    let (code, stdout, stderr) = run_plain(
        &["snapshot"],
        &[(
            "STACKLESS_STATE_URL",
            "libsql://fleet.example?authToken=SECRET",
        )],
    );
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(
        text(&stderr),
        "stackless-tui: STACKLESS_STATE_URL is set (libsql://fleet.example): stackless 0.4.0 \
         moved fleets from a shared libsql database to a controller reached over SSH \
         (STACKLESS_CONTROLLER=ssh://HOST), and a 0.3.0 libsql remote store cannot be read by \
         this console. Run the console where the controller is: `stackless-tui --controller \
         ssh://HOST` (or set STACKLESS_CONTROLLER), or unset STACKLESS_STATE_URL to open this \
         machine's local store.\n"
    );
}

/// The forwarded arguments every sshd test passes: the remote program (this
/// build), an empty config file, the store.
fn remote_args<'a>(sshd_config: &'a Path, empty: &'a Path, store: &'a Path) -> Vec<&'a str> {
    vec![
        "--controller",
        "ssh://testhost",
        "--ssh-config",
        utf8(sshd_config),
        "--remote-bin",
        BIN,
        "--config",
        utf8(empty),
        "--state",
        utf8(store),
    ]
}

/// `snapshot --json` through a real sshd: the same bytes as run here, exit
/// 0; a remote store error passes through with its exit 2; ssh's failures
/// (no such program, host key, login, connect) are named.
#[test]
fn snapshot_json_through_a_real_sshd() {
    if skipped() {
        return;
    }
    let sshd = Sshd::start();
    let config = sshd.config();
    let (_dir, store) = fixture("real-0.4.0-v14.db");
    let empty = store.with_file_name("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let now = ["snapshot", "--json", "--now", "1795960700"];

    let (code, local, _) = run_plain(&[&["--state", utf8(&store)][..], &now[..]].concat(), &[]);
    assert_eq!(code, Some(0));
    let mut args = remote_args(&config, &empty, &store);
    args.extend(now);
    let (code, stdout, stderr) = run_plain(&args, &[]);
    assert_eq!(
        code,
        Some(0),
        "stderr: {}\nsshd: {}",
        text(&stderr),
        sshd.log()
    );
    assert_eq!(text(&stdout), text(&local));
    let json: serde_json::Value = serde_json::from_slice(&stdout).expect("JSON");
    assert_eq!(json["schema_version"], 1);

    // The remote's own error and status.
    let mut args = remote_args(&config, &empty, Path::new("/nonexistent/x.db"));
    args.push("snapshot");
    let (code, stdout, stderr) = run_plain(&args, &[]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    let stderr = text(&stderr);
    assert!(
        stderr.starts_with("stackless-tui: ") && stderr.contains("/nonexistent/x.db"),
        "{stderr}"
    );

    // No such program on the host.
    let mut args = remote_args(&config, &empty, &store);
    args[5] = "/nonexistent/bin/stackless-tui";
    args.push("snapshot");
    let (code, _, stderr) = run_plain(&args, &[]);
    assert_eq!(code, Some(127), "{}", text(&stderr));
    assert!(
        text(&stderr).ends_with(
            "stackless-tui: /nonexistent/bin/stackless-tui is not installed on testhost (the \
             remote shell cannot find it: exit 127). Install it there (from a checkout of \
             stackless-tui: `cargo install --locked --path .`, or copy this binary to the \
             host), or name where it is with --remote-bin PATH (STACKLESS_TUI_REMOTE_BIN).\n"
        ),
        "{}",
        text(&stderr)
    );

    for (bad, start) in [
        (
            sshd.config_wrong_host_key(),
            "ssh could not verify the host key of testhost (exit 255): ssh said \"Host key verification failed.\"",
        ),
        (
            sshd.config_wrong_key(),
            "ssh could not log in to testhost (exit 255): ssh said \"",
        ),
        (
            sshd.config_closed_port(),
            "ssh could not connect to testhost (exit 255): ssh said \"ssh: connect to host 127.0.0.1 port ",
        ),
    ] {
        let mut args = remote_args(&bad, &empty, &store);
        args.push("snapshot");
        let (code, stdout, stderr) = run_plain(&args, &[]);
        let stderr = text(&stderr);
        assert_eq!(code, Some(255), "{stderr}");
        assert!(stdout.is_empty());
        let last = stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("stackless-tui: {start}")),
            "{stderr}"
        );
    }
    drop(sshd);
}

/// The console itself through a real sshd, in a PTY: the header says where
/// it runs (`on testhost`), `q` quits, and ssh's exit 0 is ours.
#[test]
fn the_console_through_a_real_sshd() {
    if skipped() {
        return;
    }
    let sshd = Sshd::start();
    let config = sshd.config();
    let (_dir, store) = fixture("real-0.4.0-v14.db");
    let empty = store.with_file_name("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let mut args = remote_args(&config, &empty, &store);
    args.push("--no-reaper");
    let mut tui = Tui::spawn(&args, 120, 40);
    let screen = tui.wait_for_all(&["stackless-tui  │  on testhost  │  ", "Instances"], UI);
    assert!(screen.contains(utf8(&store)), "{screen}");
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
}

/// SIGTERM to the launcher goes to ssh, and the launcher exits with ssh's
/// status (no ssh left behind).
#[test]
fn a_signal_to_the_launcher_goes_to_ssh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let started = dir.path().join("started");
    let script = format!(
        "#!/bin/sh\ntrap 'exit 7' TERM\ntouch '{}'\nwhile :; do sleep 0.05; done\n",
        started.display()
    );
    std::fs::write(bin.join("ssh"), script).expect("write fake ssh");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(bin.join("ssh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let mut launcher = std::process::Command::new(BIN)
        .args(["--controller", "ssh://h", "snapshot"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + UI;
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the fake ssh never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    crate::harness::signal_pid(launcher.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let deadline = std::time::Instant::now() + UI;
    let status = loop {
        if let Some(status) = launcher.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the launcher did not exit"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(7), "{status:?}");
}
