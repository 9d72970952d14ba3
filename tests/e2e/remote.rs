//! `--controller ssh://HOST`: the console and `snapshot --json` on the
//! "remote" side of a real sshd on 127.0.0.1 ([`crate::sshd`]), ssh's
//! failures as the operator reads them, and hostile targets refused before
//! any ssh runs (a fake `ssh` first in `PATH` records whether it was
//! called, and with what argv).

use std::path::Path;

use crate::common::fixture;
use crate::harness::{BIN, Tui, UI, run_plain, utf8, wait_for_file, wait_status};
use crate::sshd::Sshd;

/// The rule stackless 0.4.0 states for a refused target.
const RULE: &str =
    "use ssh://HOST_ALIAS or ssh://USER@HOST; configure ports and keys in OpenSSH config";

/// A fake `ssh` in `<dir>/bin`: appends each argument on its own line to
/// `<dir>/ssh.argv` (then `--end--`), prints `stderr` on stderr, exits
/// `code`. Returns the `PATH` to use.
pub(crate) fn fake_ssh(dir: &Path, stderr: &str, code: i32) -> String {
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

pub(crate) fn ssh_calls(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join("ssh.argv")).ok()
}

pub(crate) fn text(bytes: &[u8]) -> String {
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
            127,
            "bash: line 1: /x/stackless-tui: cannot execute: required file not found\n",
            "stackless-tui on fleet-1 was found but cannot be started (exit 127): the remote \
             shell said \"bash: line 1: /x/stackless-tui: cannot execute: required file not \
             found\": its interpreter or dynamic loader is missing there (a binary built for \
             another system or libc?). Check the file on the host, or name another with \
             --remote-bin PATH.",
        ),
        (
            137,
            "",
            "stackless-tui on fleet-1 was stopped by SIGKILL there (exit 137 = 128 + the \
             signal): someone or something on the host signalled it (an operator's kill, the OOM \
             killer, a shutdown).",
        ),
        (
            255,
            "",
            "stackless-tui on fleet-1 was killed by a signal (ssh exits 255 and says nothing \
             when the remote program ends by a signal): by an operator's kill, or the OOM killer \
             (`journalctl -k` on the host).",
        ),
        (
            255,
            "Connection to 10.0.0.1 closed by remote host.\n",
            "the connection to fleet-1 was closed (exit 255): ssh said \"Connection to 10.0.0.1 \
             closed by remote host.\": the session ended before the remote program did (the \
             host rebooted, sshd restarted, or the network dropped). Run it again; \
             ServerAliveInterval in the OpenSSH config keeps an idle session open.",
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
    let (code, _, stderr) = run_plain(
        &[
            "--controller",
            "deploy@fleet-1",
            "--ssh-config",
            "/my ssh/config",
            "--remote-bin=/opt/st/stackless-tui",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(code, Some(2));
    let command = "stackless-tui --controller ssh://deploy@fleet-1 --ssh-config '/my ssh/config' \
                   --remote-bin /opt/st/stackless-tui";
    assert_eq!(
        text(&stderr),
        format!(
            "stackless-tui: the console needs a terminal (stdin and stdout are not both a TTY), \
             also when it runs on fleet-1. For scripts and cron use `{command} snapshot` or \
             `{command} reap --once`.\n"
        )
    );
    assert_eq!(ssh_calls(dir.path()), None);
}

/// Local safety switches from the environment travel as their flags (a
/// local `STACKLESS_TUI_DRY_RUN=1` never tears down on the host); other
/// local settings are named as not applied there.
#[test]
fn local_safety_settings_travel_as_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    let (code, _, stderr) = run_plain(
        &["--controller", "ssh://fleet-1", "reap", "--once"],
        &[
            ("PATH", &path),
            ("STACKLESS_TUI_DRY_RUN", "1"),
            ("STACKLESS_TUI_READ_ONLY", "true"),
            ("STACKLESS_TUI_NO_REAPER", "0"),
            ("STACKLESS_TUI_REAPER", "off"),
            ("STACKLESS_TUI_TICK", "5s"),
            ("STACKLESS_TUI_DOWN_CMD", "my-down {name}"),
            ("STACKLESS_TUI_REMOTE_BIN", "/opt/st/stackless-tui"),
        ],
    );
    assert_eq!(code, Some(0), "{}", text(&stderr));
    assert_eq!(
        ssh_calls(dir.path()).expect("ssh ran"),
        "-T\n-o\nBatchMode=yes\n-o\nStrictHostKeyChecking=yes\n-o\nConnectTimeout=10\n--\n\
         fleet-1\n/opt/st/stackless-tui\n--reached-as\nfleet-1\n--reaper\noff\n--read-only\n\
         --dry-run\nreap\n--once\n--end--\n"
    );
    assert_eq!(
        text(&stderr),
        "stackless-tui: warning: these local settings are not applied on fleet-1: \
         STACKLESS_TUI_TICK, STACKLESS_TUI_DOWN_CMD. Only the command line travels, and the \
         local safety switches (dry-run, read-only, no-reaper, reaper = off) as their flags; the host's own \
         environment and config file apply there. Pass them as flags to apply them there.\n"
    );
}

/// The local config file: its `state` keeps the console local beside
/// `STACKLESS_CONTROLLER` (as `--state` and `STACKLESS_TUI_STATE` do), and
/// its safety switches travel as flags.
#[test]
fn the_local_config_state_keeps_the_console_local() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    let (_fx, store) = fixture("real-0.4.0-v14.db");
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("stackless-tui")).expect("mkdir");
    std::fs::write(
        xdg.join("stackless-tui/config.toml"),
        format!("state = \"{}\"\ndry-run = true\n", store.display()),
    )
    .expect("config");
    let env = [
        ("PATH", path.as_str()),
        ("XDG_CONFIG_HOME", utf8(&xdg)),
        ("STACKLESS_CONTROLLER", "ssh://fleet-1"),
    ];
    let (code, stdout, stderr) = run_plain(&["snapshot", "--json", "--now", "1795960700"], &env);
    assert_eq!(code, Some(0), "{}", text(&stderr));
    assert!(text(&stdout).contains(utf8(&store)), "{}", text(&stdout));
    assert_eq!(ssh_calls(dir.path()), None, "ssh ran");
    // --controller names the host anyway; the safety switch travels, the
    // local path is said not to apply there.
    let (code, _, stderr) = run_plain(&["--controller", "ssh://fleet-1", "snapshot"], &env);
    assert_eq!(code, Some(0), "{}", text(&stderr));
    assert!(
        ssh_calls(dir.path())
            .expect("ssh ran")
            .contains("\n--reached-as\nfleet-1\n--dry-run\nsnapshot\n--end--\n"),
    );
    assert_eq!(
        text(&stderr),
        format!(
            "stackless-tui: warning: this local setting is not applied on fleet-1: state ({}). \
             Only the command line travels, and the local safety switches (dry-run, read-only, \
             no-reaper, reaper = off) as their flags; the host's own environment and config file apply there. \
             Pass it as a flag to apply it there.\n",
            xdg.join("stackless-tui/config.toml").display()
        )
    );
}

/// The launcher's flags and variables at the edges: `--reached-as` (and
/// the demo's hidden helpers) are not offered by completions; an empty
/// `STACKLESS_TUI_SSH_CONFIG=` or `STACKLESS_TUI_REMOTE_BIN=` is unset; a
/// bad variable is named as the variable; `--ssh-config` on a local run is
/// said to be ignored.
#[test]
fn launcher_flags_at_the_edges() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, stdout, _) = run_plain(&["completions", shell], &[]);
        assert_eq!(code, Some(0));
        let script = text(&stdout);
        assert!(script.contains("controller"), "{shell}");
        assert!(!script.contains("reached-as"), "{shell}: {script}");
        assert!(!script.contains("demo-helper"), "{shell}");
    }
    let (_fx, store) = fixture("real-0.4.0-v14.db");
    let (code, stdout, stderr) = run_plain(
        &["--state", utf8(&store), "snapshot", "--json"],
        &[
            ("STACKLESS_TUI_SSH_CONFIG", ""),
            ("STACKLESS_TUI_REMOTE_BIN", ""),
        ],
    );
    assert_eq!(code, Some(0), "{}", text(&stderr));
    assert!(text(&stdout).contains("schema_version"));
    assert!(stderr.is_empty(), "{}", text(&stderr));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    let (code, _, stderr) = run_plain(
        &["--controller", "h", "snapshot"],
        &[
            ("PATH", &path),
            ("STACKLESS_TUI_SSH_CONFIG", ""),
            ("STACKLESS_TUI_REMOTE_BIN", ""),
        ],
    );
    assert_eq!(code, Some(0), "{}", text(&stderr));
    assert!(
        ssh_calls(dir.path())
            .expect("ssh ran")
            .starts_with("-T\n-o\nBatchMode=yes\n-o\nStrictHostKeyChecking=yes\n-o\nConnectTimeout=10\n--\nh\nstackless-tui\n"),
    );
    let (code, _, stderr) = run_plain(
        &["--controller", "h", "snapshot"],
        &[("PATH", &path), ("STACKLESS_TUI_REMOTE_BIN", "-x")],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        text(&stderr),
        "stackless-tui: STACKLESS_TUI_REMOTE_BIN \"-x\" starts with '-': name the stackless-tui \
         program on h\n"
    );
    let (code, _, stderr) = run_plain(
        &[
            "--state",
            utf8(&store),
            "--ssh-config",
            "/c",
            "snapshot",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        text(&stderr),
        "stackless-tui: warning: --ssh-config ignored: it is only used with --controller \
         ssh://HOST (or STACKLESS_CONTROLLER), and this run is local\n"
    );
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
    // Malformed: nothing of it is echoed.
    for url in [
        "u:secretpw@db.example.com",
        "libsql:u:pw@h",
        "libsql://h/SECRET",
    ] {
        let (code, _, stderr) = run_plain(&["snapshot"], &[("STACKLESS_STATE_URL", url)]);
        assert_eq!(code, Some(2));
        let stderr = text(&stderr);
        assert!(
            !stderr.contains("SECRET") && !stderr.contains("pw"),
            "{stderr}"
        );
        assert!(
            stderr.starts_with("stackless-tui: STACKLESS_STATE_URL is set (value hidden): ")
                || stderr.starts_with("stackless-tui: STACKLESS_STATE_URL is set (libsql://h): "),
            "{stderr}"
        );
    }
}

/// The forwarded arguments every sshd test passes: the remote program (this
/// build), an empty config file, the store.
pub(crate) fn remote_args<'a>(
    sshd_config: &'a Path,
    empty: &'a Path,
    store: &'a Path,
) -> Vec<&'a str> {
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
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
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
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
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

/// A fake `ssh` in `<dir>/bin` running `body` (a POSIX sh script); returns
/// the `PATH` to use.
pub(crate) fn fake_ssh_script(dir: &Path, body: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::write(bin.join("ssh"), format!("#!/bin/sh\n{body}\n")).expect("write fake ssh");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(bin.join("ssh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    format!("{}:/usr/bin:/bin", bin.display())
}

/// What the remote console leaves on the terminal when it cannot restore
/// it: the alternate screen, mouse tracking, bracketed paste, a hidden
/// cursor, raw mode.
const BREAK_THE_TERMINAL: &str = "printf '\\033[?1049h\\033[?1000h\\033[?1006h\\033[?2004h\\033[?1004h\\033[?25lbroken'\nstty raw -echo";

pub(crate) fn assert_restored(tui: &crate::harness::Tui) {
    let screen = tui.screen();
    assert!(!screen.alternate_screen(), "still in the alternate screen");
    assert!(!screen.hide_cursor(), "the cursor is still hidden");
    assert!(!screen.bracketed_paste(), "bracketed paste still on");
    assert_eq!(
        screen.mouse_protocol_mode(),
        vt100::MouseProtocolMode::None,
        "mouse tracking still on"
    );
    assert_eq!(tui.raw_mode(), Some(false), "the terminal is still raw");
}

/// The console's ssh ends abnormally (the connection dropped, exit 255)
/// after the remote console broke the local terminal: the launcher puts
/// it back before its message.
#[test]
fn a_dropped_console_session_leaves_the_terminal_restored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "{BREAK_THE_TERMINAL}\nsleep 0.3\n\
             echo 'Connection to 127.0.0.1 closed by remote host.' >&2\nexit 255"
        ),
    );
    let mut tui = Tui::spawn_env(
        &["--controller", "ssh://fleet-1"],
        &[("PATH", &path)],
        100,
        30,
    );
    assert_eq!(tui.wait_exit(UI), 255);
    assert_restored(&tui);
    assert!(
        tui.contents()
            .contains("stackless-tui: the connection to fleet-1 was closed (exit 255)"),
        "{}",
        tui.contents()
    );
}

/// SIGTERM to the console's launcher: ssh gets it (and closes the
/// connection), the launcher restores the terminal and says it was
/// interrupted, exit 143 (not "ssh failed").
#[test]
fn a_signal_to_the_console_launcher_restores_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = dir.path().join("started");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "trap 'exit 255' TERM\n{BREAK_THE_TERMINAL}\ntouch '{}'\n\
             while :; do sleep 0.05; done",
            started.display()
        ),
    );
    let mut tui = Tui::spawn_env(
        &["--controller", "ssh://fleet-1"],
        &[("PATH", &path)],
        100,
        30,
    );
    wait_for_file(&started);
    tui.signal(nix::sys::signal::Signal::SIGTERM)
        .expect("SIGTERM");
    assert_eq!(tui.wait_exit(UI), 143);
    assert_restored(&tui);
    let contents = tui.contents();
    assert!(
        contents.contains("stackless-tui: interrupted by SIGTERM: the console on fleet-1 was"),
        "{contents}"
    );
}

/// A headless command: ssh's stdin is a pipe the launcher holds (so a
/// `while read` loop over the launcher's stdin keeps its lines); SIGTERM
/// closes that pipe (the remote side stops on its end) instead of killing
/// ssh, the launcher waits for ssh and exits 143 saying so; and a
/// launcher killed with SIGKILL leaves no ssh behind.
#[test]
fn a_headless_launcher_holds_ssh_stdin_and_stops_it_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = dir.path().join("started");
    let eof = dir.path().join("eof");
    // The fake reads its stdin to the end, as the remote side does.
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "touch '{}'\ncat > /dev/null\ntouch '{}'\necho 'remote: pass stopped' >&2\nexit 129",
            started.display(),
            eof.display()
        ),
    );
    let mut launcher = std::process::Command::new(BIN)
        .args(["--controller", "ssh://h", "reap", "--once"])
        .env("PATH", &path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_for_file(&started);
    // The launcher's own stdin is not ssh's: closing it changes nothing.
    drop(launcher.stdin.take());
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!eof.exists(), "ssh read the launcher's stdin");
    crate::harness::signal_pid(launcher.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut launcher);
    assert!(eof.exists(), "ssh's stdin was not closed");
    assert_eq!(status.code(), Some(143), "{status:?}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut launcher.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    assert_eq!(
        stderr,
        "remote: pass stopped\nstackless-tui: interrupted by SIGTERM: the remote command on h \
         was told to stop (a `reap --once` pass stops its running teardowns and starts no \
         more; its last lines are above). Exit 143.\n"
    );

    // A while-read loop over hosts runs every line.
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "a\nb\nc\n").expect("hosts");
    // Like a real ssh, the fake reads stdin until its remote command ends.
    let path = fake_ssh_script(dir.path(), "timeout 0.3 cat > /dev/null\nexit 0");
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "while read h; do '{BIN}' --controller \"ssh://$h\" snapshot; echo \"did $h\"; done"
        ))
        .env("PATH", &path)
        .stdin(std::fs::File::open(&hosts).expect("hosts"))
        .output()
        .expect("loop");
    assert_eq!(
        text(&out.stdout),
        "did a\ndid b\ndid c\n",
        "{}",
        text(&out.stderr)
    );

    // SIGKILL: ssh gets SIGTERM from the kernel (PR_SET_PDEATHSIG).
    let pid_file = dir.path().join("ssh.pid");
    let path = fake_ssh_script(
        dir.path(),
        &format!(
            "echo $$ > '{}'\nwhile :; do sleep 0.05; done",
            pid_file.display()
        ),
    );
    let mut launcher = std::process::Command::new(BIN)
        .args(["--controller", "ssh://h", "snapshot"])
        .env("PATH", &path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    wait_for_file(&pid_file);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("a pid");
    launcher.kill().expect("SIGKILL");
    let _ = launcher.wait();
    let deadline = std::time::Instant::now() + UI;
    // Alive: listed and not a zombie (whoever adopted it may reap late).
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(") ")
                .next()
                .is_some_and(|r| !r.starts_with('Z'))
        })
    };
    while alive(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "ssh {pid} outlived its SIGKILLed launcher"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `reap --once` through a real sshd, interrupted here (SIGTERM to the
/// launcher): the remote side sees its stdin end and stops the pass as a
/// local SIGTERM does: the running teardown's group is stopped, the queued
/// ones never start, the audit says `interrupted`; the launcher exits 143.
/// And a `while read` loop over hosts runs every iteration.
#[test]
fn an_interrupted_remote_reap_stops_on_the_host() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let config = sshd.config();
    let (dir, store) = fixture("stackless-real-v4.db");
    let empty = store.with_file_name("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks).expect("mkdir");
    let down = dir.path().join("slow-down.sh");
    std::fs::write(
        &down,
        format!(
            "#!/bin/sh\necho $$ > '{m}/started-'\"$2\"\nsleep 60\ntouch '{m}/finished-'\"$2\"\n",
            m = marks.display()
        ),
    )
    .expect("down");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&down, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let down_cmd = format!("'{}' down {{name}} --json", down.display());
    let mut args = remote_args(&config, &empty, &store);
    args.extend([
        "--reap-concurrency",
        "1",
        "--down-cmd",
        &down_cmd,
        "reap",
        "--once",
    ]);
    let mut launcher = std::process::Command::new(BIN)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let started = |marks: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(marks)
            .expect("marks")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("started-"))
            .collect();
        names.sort();
        names
    };
    crate::harness::poll(
        "a teardown started",
        UI,
        || (!started(&marks).is_empty()).then_some(()),
        || format!("sshd: {}", sshd.log()),
    );
    let first = started(&marks).remove(0);
    let pid: i32 = std::fs::read_to_string(marks.join(&first))
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(0);
    crate::harness::signal_pid(launcher.id(), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = wait_status(&mut launcher);
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut launcher.stdout.take().expect("stdout"), &mut stdout)
        .expect("stdout");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut launcher.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    assert_eq!(status.code(), Some(143), "{stdout}\n{stderr}");
    let name = first.trim_start_matches("started-");
    assert!(
        stdout.contains(&format!(
            "reaper {name} stopped: the reap pass was interrupted: down stopped after"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("stopped: the reap pass was interrupted: 5 queued teardown(s) not started"),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "stackless-tui: reap --once interrupted: the --controller launcher closed the \
             connection"
        ) && stderr.ends_with(
            "stackless-tui: interrupted by SIGTERM: the remote command on testhost was told to \
             stop (a `reap --once` pass stops its running teardowns and starts no more; its last \
             lines are above). Exit 143.\n"
        ),
        "{stderr}"
    );
    // Nothing later starts, the stopped one never finishes: no process
    // names the teardown script any more (neither the remote `reap
    // --once`, whose `--down-cmd` it is, nor a teardown).
    crate::harness::poll(
        "the remote reap and its teardowns gone",
        UI,
        || {
            crate::harness::processes_with(&[utf8(&down)])
                .is_empty()
                .then_some(())
        },
        || format!("{:?}", crate::harness::processes_with(&[utf8(&down)])),
    );
    assert_eq!(started(&marks), std::slice::from_ref(&first));
    assert!(!marks.join(format!("finished-{name}")).exists());
    assert!(
        pid > 0 && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err(),
        "the teardown {pid} still runs"
    );
    let audit =
        std::fs::read_to_string(dir.path().join("stackless-tui/audit.jsonl")).expect("audit trail");
    let interrupted: Vec<serde_json::Value> = audit
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .filter(|line: &serde_json::Value| line["outcome"] == "interrupted")
        .collect();
    assert_eq!(interrupted.len(), 2, "{audit}");
    assert!(interrupted.iter().all(|line| line["action"] == "teardown"));
    let mut instances: Vec<&str> = interrupted
        .iter()
        .map(|line| line["instance"].as_str().unwrap_or("?"))
        .collect();
    instances.sort_unstable();
    assert_eq!(instances, ["", name], "{audit}");

    // A hosts loop: every line gets its snapshot.
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "testhost\ntesthost\ntesthost\n").expect("hosts");
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "while read h; do '{BIN}' --controller \"ssh://$h\" --ssh-config '{}' --remote-bin \
             '{BIN}' --config '{}' --state '{}' snapshot --json > /dev/null; echo \"did $?\"; \
             done",
            config.display(),
            empty.display(),
            store.display()
        ))
        .stdin(std::fs::File::open(&hosts).expect("hosts"))
        .output()
        .expect("loop");
    assert_eq!(
        text(&out.stdout),
        "did 0\ndid 0\ndid 0\n",
        "{}",
        text(&out.stderr)
    );
    drop(sshd);
}

/// A local `reap --once` stopped by SIGINT (an operator's Ctrl-C): the
/// running teardown's group is stopped, the queued ones never start, the
/// audit says `interrupted`, nothing is recorded in the store (no reap
/// attempt), exit 130.
#[test]
fn a_local_reap_once_stops_on_a_signal() {
    let (dir, store) = fixture("stackless-real-v4.db");
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks).expect("mkdir");
    let down = dir.path().join("slow-down.sh");
    std::fs::write(
        &down,
        format!(
            "#!/bin/sh\ntouch '{m}/started-'\"$2\"\nsleep 60\ntouch '{m}/finished-'\"$2\"\n",
            m = marks.display()
        ),
    )
    .expect("down");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&down, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    crate::common::young_tombstones(&store);
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let before = std::process::Command::new(BIN)
        .args(["--config", utf8(&empty), "--state", utf8(&store)])
        .args(["snapshot", "--json", "--now", "1795960700"])
        .output()
        .expect("snapshot");
    let mut reap = std::process::Command::new(BIN)
        .args(["--config", utf8(&empty), "--state", utf8(&store)])
        .args(["--reap-concurrency", "1", "--down-cmd"])
        .arg(format!("'{}' down {{name}} --json", down.display()))
        .args(["reap", "--once"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    crate::harness::poll(
        "a teardown started",
        UI,
        || std::fs::read_dir(&marks).expect("marks").next().map(|_| ()),
        String::new,
    );
    crate::harness::signal_pid(reap.id(), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = wait_status(&mut reap);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut reap.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.starts_with(
            "stackless-tui: reap --once interrupted by SIGINT: the pass was stopped (6 \
             teardown(s) stopped or not started, nothing recorded for them; 0 reaped, 0 failed)"
        ),
        "{stderr}"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(std::fs::read_dir(&marks).expect("marks").count(), 1);
    let audit =
        std::fs::read_to_string(dir.path().join("stackless-tui/audit.jsonl")).expect("audit trail");
    assert_eq!(
        audit.matches("\"outcome\":\"interrupted\"").count(),
        2,
        "{audit}"
    );
    // No reap attempt recorded: the backoffs are as before.
    let after = std::process::Command::new(BIN)
        .args(["--config", utf8(&empty), "--state", utf8(&store)])
        .args(["snapshot", "--json", "--now", "1795960700"])
        .output()
        .expect("snapshot");
    assert_eq!(text(&after.stdout), text(&before.stdout));
}
