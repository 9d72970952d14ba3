//! The console over a fleet (`--controller` given three times, no
//! subcommand) in a PTY, on the real sshd the tests start
//! ([`crate::sshd`]), each alias reaching its own store through `SetEnv
//! STACKLESS_TUI_STATE` ([`Sshd::fleet_config`]): one `ssh -T` per host
//! running its agent (`serve --stdio`, the local safety flags passed on),
//! watched from `/proc` and from each host's audit trail; `q` and SIGTERM
//! give the terminal back and stop every agent as at the end of its stdin;
//! a killed agent is connected again; a stopped (SIGSTOP) one goes stale
//! and is connected again while the others' links stay up.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::fake_down;
use crate::fleet_follow::{KillOnDrop, agents_of, stores};
use crate::harness::{BIN, Tui, UI, cmdline, pane, poll, processes_with, processes_with_env, utf8};
use crate::remote::assert_restored;
use crate::sshd::Sshd;

/// The aliases, one per fixture store ([`stores`]).
const ALIASES: [&str; 3] = ["fleet-1", "fleet-2", "fleet-3"];

/// The launcher's arguments for `aliases` through `config`, the local
/// config file `empty`, and `extra` after them.
fn args(config: &Path, empty: &Path, aliases: &[&str], extra: &[&str]) -> Vec<String> {
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
    ]
    .into_iter()
    .chain(extra.iter().copied())
    {
        args.push(arg.to_owned());
    }
    args
}

/// The audit trail of the host whose store is `store`: its lines.
fn audit(store: &Path) -> Vec<Value> {
    let path = store.with_file_name("stackless-tui").join("audit.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("an audit line"))
        .collect()
}

/// The console lines (`start`, `stop`) of `store`'s audit trail, as
/// `(action, reason)`.
fn console_lines(store: &Path) -> Vec<(String, String)> {
    audit(store)
        .iter()
        .filter(|line| line["actor"] == "console")
        .map(|line| {
            (
                line["action"].as_str().unwrap_or_default().to_owned(),
                line["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The ssh processes of `config` (their command line names it; the
/// launcher's own does too and is left out): pid and argv.
fn ssh_of(config: &Path) -> Vec<(u32, Vec<String>)> {
    processes_with(&[utf8(config)])
        .into_iter()
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let argv: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|word| !word.is_empty())
                .map(|word| String::from_utf8_lossy(word).into_owned())
                .collect();
            (argv.first().map(String::as_str) == Some("ssh")).then_some((pid, argv))
        })
        .collect()
}

/// The actions of `store`'s console lines (`start`, `stop`) and the last
/// one's reason.
fn console_story(store: &Path) -> (Vec<String>, String) {
    let lines = console_lines(store);
    let last = lines
        .last()
        .map(|(_, reason)| reason.clone())
        .unwrap_or_default();
    (lines.into_iter().map(|(action, _)| action).collect(), last)
}

/// Wait until every store of `stores` has exactly one agent whose audit
/// says it started `starts` times; return the agents' pids, in order.
fn agents_started(stores: &[PathBuf], starts: usize) -> Vec<u32> {
    stores
        .iter()
        .map(|store| {
            poll(
                "agent started",
                UI,
                || {
                    let agents = agents_of(store);
                    let started = console_lines(store)
                        .iter()
                        .filter(|(action, _)| action == "start")
                        .count();
                    (agents.len() == 1 && started == starts).then(|| agents[0])
                },
                || format!("{}: {:?}", store.display(), console_lines(store)),
            )
        })
        .collect()
}

/// `tui`'s terminal is the console's: raw mode and the alternate screen.
fn wait_for_the_view(tui: &mut Tui) {
    tui.wait_until("the alternate screen", UI, |screen| {
        screen.alternate_screen()
    });
    assert_eq!(tui.raw_mode(), Some(true));
}

/// The Hosts pane's line of `host` (words), if shown.
fn host_line(screen: &vt100::Screen, host: &str) -> Option<Vec<String>> {
    pane(screen, "Hosts")?.into_iter().find_map(|line| {
        let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        (words.first().map(String::as_str) == Some(host)).then_some(words)
    })
}

/// Wait until the Hosts pane says `host` is in `state` (its first word:
/// `connected 2ms` is `connected`); return its line's words.
fn wait_host(tui: &mut Tui, host: &str, state: &str, wait: Duration) -> Vec<String> {
    let screen = tui.wait_until(&format!("{host} {state}"), wait, |screen| {
        host_line(screen, host).is_some_and(|words| words.get(1).map(String::as_str) == Some(state))
    });
    host_line(&screen, host).expect("the host's line")
}

/// Every frame `tui` drew so far, replayed on a fresh emulator of its
/// size (a frame ends where ratatui hides the cursor after drawing): the
/// first screen for which `shown` holds, if any. A state the screen held
/// for less than the harness's poll is found this way too.
fn ever_shown(
    tui: &Tui,
    (cols, rows): (u16, u16),
    shown: impl Fn(&vt100::Screen) -> bool,
) -> Option<vt100::Screen> {
    const END_OF_FRAME: &[u8] = b"\x1b[?25l";
    let raw = tui.raw();
    let mut parser = vt100::Parser::new(rows, cols, 0);
    let mut rest = raw.as_slice();
    while !rest.is_empty() {
        let end = rest
            .windows(END_OF_FRAME.len())
            .position(|w| w == END_OF_FRAME)
            .map_or(rest.len(), |at| at + END_OF_FRAME.len());
        parser.process(&rest[..end]);
        rest = &rest[end..];
        if shown(parser.screen()) {
            return Some(parser.screen().clone());
        }
    }
    None
}

/// A Hosts pane line's state word, schema and instance count (the round
/// trip after `connected`, `12ms`, skipped).
fn host_columns(words: &[String]) -> (String, String, String) {
    let rest: Vec<&String> = words
        .iter()
        .skip(2)
        .filter(|w| !(w.ends_with("ms") && w[..w.len() - 2].chars().all(|c| c.is_ascii_digit())))
        .collect();
    (
        words[1].clone(),
        rest.first().map(|w| (*w).clone()).unwrap_or_default(),
        rest.get(1).map(|w| (*w).clone()).unwrap_or_default(),
    )
}

/// The Instances pane's rows as `(host, name)`, in screen order.
fn instance_rows(screen: &vt100::Screen) -> Vec<(String, String)> {
    pane(screen, "Instances")
        .unwrap_or_default()
        .iter()
        .filter_map(|line| {
            let mut words = line.trim_start_matches('▶').split_whitespace();
            let (host, name) = (words.next()?, words.next()?);
            (host != "HOST").then(|| (host.to_owned(), name.to_owned()))
        })
        .collect()
}

/// Three hosts: one ssh each, exactly the argv one `--controller ...
/// serve --stdio` runs (`-T`, batch mode, host key checking, the local
/// safety flags in front: `--dry-run` from the environment, `--no-reaper`
/// from the command line), one agent each on its own store; `q` gives the
/// terminal back, exit 0, every agent stops at the end of its stdin
/// (audited `stop`, `stdin closed`) and no ssh is left.
#[test]
fn q_stops_every_host_agent_at_the_end_of_its_stdin() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    let config = sshd.fleet_config(
        &ALIASES
            .iter()
            .zip(&paths)
            .map(|(alias, store)| (*alias, store.as_path(), false))
            .collect::<Vec<_>>(),
    );
    let args = args(&config, &empty, &ALIASES, &["--no-reaper"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn_env(&args, &[("STACKLESS_TUI_DRY_RUN", "1")], 120, 50);
    wait_for_the_view(&mut tui);
    let agents = agents_started(&paths, 1);
    assert_eq!(agents.len(), 3);
    // The three hosts in one view: the header's totals, each host's line
    // (its own store's schema and count), every row with its HOST first.
    let screen = tui.wait_until("three hosts synced", UI, |screen| {
        screen.contents().contains(
            "stackless-tui fleet: 3 hosts · 3 connected · 21 instances (14 expired) · sort: host ▲",
        )
    });
    let lines: Vec<(String, String, String)> = ALIASES
        .iter()
        .map(|host| host_columns(&host_line(&screen, host).expect("a host line")))
        .collect();
    let line = |state: &str, schema: &str, count: &str| {
        (state.to_owned(), schema.to_owned(), count.to_owned())
    };
    assert_eq!(
        lines,
        [
            line("connected", "14", "8"),
            line("connected", "5", "5"),
            line("connected", "4", "8")
        ],
        "{}",
        screen.contents()
    );
    let rows = instance_rows(&screen);
    let per_host: Vec<usize> = ALIASES
        .iter()
        .map(|host| rows.iter().filter(|(h, _)| h == host).count())
        .collect();
    assert_eq!(per_host, [8, 5, 8], "{}", screen.contents());
    assert_eq!(rows.len(), 21);
    let mut ssh: Vec<Vec<String>> = ssh_of(&config).into_iter().map(|(_, argv)| argv).collect();
    ssh.sort();
    let expected: Vec<Vec<String>> = ALIASES
        .iter()
        .map(|alias| {
            [
                "ssh",
                "-F",
                utf8(&config),
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "ConnectTimeout=10",
                "--",
                alias,
                BIN,
                "--reached-as",
                alias,
                "--dry-run",
                "--config",
                utf8(&empty),
                "--no-reaper",
                "serve",
                "--stdio",
                "--first-pass-after",
                "10",
            ]
            .map(str::to_owned)
            .to_vec()
        })
        .collect();
    assert_eq!(ssh, expected);
    // Each agent is its own host's: `serve --stdio` with the flags.
    for pid in &agents {
        let line = cmdline(*pid).expect("the agent's command line");
        let tail = format!(
            "--reached-as fleet-{} --dry-run --config {} --no-reaper serve --stdio --first-pass-after 10",
            agents.iter().position(|p| p == pid).unwrap() + 1,
            utf8(&empty)
        );
        assert!(line.trim_end().ends_with(&tail), "{line}");
    }
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    for store in &paths {
        assert_eq!(
            console_story(store),
            (
                vec!["start".to_owned(), "stop".to_owned()],
                "stdin closed".to_owned()
            ),
            "{}",
            store.display()
        );
        assert_eq!(agents_of(store), Vec::<u32>::new());
    }
    assert_eq!(ssh_of(&config), [], "orphan ssh");
    drop(sshd);
}

/// SIGTERM to the fleet console: the terminal given back, exit 0, every
/// agent stopped at the end of its stdin, no ssh left.
#[test]
fn sigterm_gives_the_terminal_back_and_stops_every_agent() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    let config = sshd.fleet_config(&[("fleet-1", &paths[0], false), ("fleet-2", &paths[1], false)]);
    let args = args(&config, &empty, &ALIASES[..2], &["--no-reaper"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn(&args, 100, 30);
    wait_for_the_view(&mut tui);
    agents_started(&paths[..2], 1);
    tui.signal(nix::sys::signal::Signal::SIGTERM)
        .expect("SIGTERM");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    for store in &paths[..2] {
        assert_eq!(
            console_lines(store).last(),
            Some(&("stop".to_owned(), "stdin closed".to_owned())),
            "{}",
            store.display()
        );
        assert_eq!(agents_of(store), Vec::<u32>::new());
    }
    assert_eq!(ssh_of(&config), [], "orphan ssh");
    drop(sshd);
}

/// A host whose agent is killed (SIGKILL): its ssh ends, the host goes
/// stale and is connected again after its 1 s backoff (a new agent, its
/// audit's second `start`); the other hosts keep their agents.
#[test]
fn a_killed_agent_is_connected_again() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    let config = sshd.fleet_config(
        &ALIASES
            .iter()
            .zip(&paths)
            .map(|(alias, store)| (*alias, store.as_path(), false))
            .collect::<Vec<_>>(),
    );
    let args = args(&config, &empty, &ALIASES, &["--no-reaper"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn(&args, 120, 50);
    wait_for_the_view(&mut tui);
    let before = agents_started(&paths, 1);
    tui.wait_for(
        "stackless-tui fleet: 3 hosts · 3 connected · 21 instances (14 expired)",
        UI,
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(before[1]).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill the agent");
    let again = agents_started(&paths[1..2], 2);
    assert_ne!(again[0], before[1]);
    // On screen: connected again, its rows from its new agent's snapshot.
    tui.wait_for(
        "stackless-tui fleet: 3 hosts · 3 connected · 21 instances (14 expired)",
        UI,
    );
    wait_host(&mut tui, "fleet-2", "connected", UI);
    // In between it was drawn stale, its rows kept (dimmed, aged), saying
    // how its ssh ended.
    let stale = ever_shown(&tui, (120, 50), |screen| {
        host_line(screen, "fleet-2").is_some_and(|w| w[1] == "stale")
    })
    .expect("a frame with fleet-2 stale");
    let line = host_line(&stale, "fleet-2").unwrap().join(" ");
    // Its schema, counts and reaper as before; its error begins with the
    // program whose stream ended (`BIN on fleet-2 ended its stream ...`,
    // cut to the column).
    // Its age: 0s, or 1s when the frame fell just past a second.
    let begins = |age: &str| format!("fleet-2 stale {age} 5 5 3 1 nobody {}", &BIN[..20]);
    assert!(
        line.starts_with(&begins("0s")) || line.starts_with(&begins("1s")),
        "{line}"
    );
    let rows = instance_rows(&stale);
    assert_eq!(
        rows.iter().filter(|(host, _)| host == "fleet-2").count(),
        5,
        "{}",
        stale.contents()
    );
    let contents = stale.contents();
    assert!(
        contents.contains("fleet-2 (stale 0s)") || contents.contains("fleet-2 (stale 1s)"),
        "{contents}"
    );
    // Its first agent never said `stop` (killed); the new one runs.
    assert_eq!(console_story(&paths[1]).0, ["start", "start"]);
    assert_eq!(agents_of(&paths[0]), [before[0]]);
    assert_eq!(agents_of(&paths[2]), [before[2]]);
    assert_eq!(ssh_of(&config).len(), 3, "{:?}", ssh_of(&config));
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    for store in &paths {
        assert_eq!(
            console_lines(store).last(),
            Some(&("stop".to_owned(), "stdin closed".to_owned())),
            "{}",
            store.display()
        );
    }
    drop(sshd);
}

/// A host whose agent is stopped (SIGSTOP) sends nothing, heartbeats
/// included: after 3 x 5 s its ssh is killed (stale) and it is connected
/// again (a new agent), while the other host, whose heartbeats were read
/// all along, keeps its one agent and connection; `q` still quits at once
/// after (the stopped agent holds nothing).
#[test]
fn a_stopped_agent_goes_stale_alone_and_is_connected_again() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    let config = sshd.fleet_config(&[("fleet-1", &paths[0], false), ("fleet-2", &paths[1], false)]);
    let args = args(&config, &empty, &ALIASES[..2], &["--no-reaper"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn(&args, 120, 40);
    wait_for_the_view(&mut tui);
    let before = agents_started(&paths[..2], 1);
    tui.wait_for("stackless-tui fleet: 2 hosts · 2 connected ·", UI);
    let ssh_before: Vec<u32> = ssh_of(&config).into_iter().map(|(pid, _)| pid).collect();
    assert_eq!(ssh_before.len(), 2, "{ssh_before:?}");
    let pid = nix::unistd::Pid::from_raw(i32::try_from(before[1]).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).expect("stop the agent");
    // Killed at the end, also when an assertion fails (never left stopped).
    let _stopped = KillOnDrop(pid);
    // The screen is not held by the stopped host: a key is answered at
    // once, fleet-2 still connected (silent for less than 15 s).
    tui.send("s");
    let screen = tui.wait_for("· sort: lease expiry ▲", UI);
    assert!(screen.contains("2 hosts · 2 connected ·"), "{screen}");
    tui.send("s");
    tui.wait_for("· sort: name ▲", UI);
    // A second agent on fleet-2's store: the stopped one and the new one.
    let fresh = poll(
        "a new agent on fleet-2",
        Duration::from_secs(40),
        || {
            let agents = agents_of(&paths[1]);
            agents.iter().copied().find(|agent| *agent != before[1])
        },
        || format!("{:?}", console_lines(&paths[1])),
    );
    assert_ne!(fresh, before[1]);
    // fleet-1 was never stale: the same agent, the same ssh.
    assert_eq!(agents_of(&paths[0]), [before[0]]);
    let ssh_now: Vec<u32> = ssh_of(&config).into_iter().map(|(pid, _)| pid).collect();
    assert_eq!(ssh_now.len(), 2, "{ssh_now:?}");
    let kept: Vec<&u32> = ssh_now.iter().filter(|p| ssh_before.contains(p)).collect();
    assert_eq!(kept.len(), 1, "before {ssh_before:?}, now {ssh_now:?}");
    // Connected again on screen, and the keys still answered.
    tui.wait_for("stackless-tui fleet: 2 hosts · 2 connected ·", UI);
    // In between it was drawn stale, saying it was silent.
    let stale = ever_shown(&tui, (120, 40), |screen| {
        host_line(screen, "fleet-2").is_some_and(|w| w[1] == "stale")
    })
    .expect("a frame with fleet-2 stale");
    let line = host_line(&stale, "fleet-2").unwrap().join(" ");
    assert!(line.contains(" no line for 1"), "{line}");
    assert!(
        stale
            .contents()
            .contains("stackless-tui fleet: 2 hosts · 1 connected · 1 stale ·"),
        "{}",
        stale.contents()
    );
    tui.send("s");
    tui.wait_for("· sort: substrate ▲", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    assert_eq!(
        console_story(&paths[0]),
        (
            vec!["start".to_owned(), "stop".to_owned()],
            "stdin closed".to_owned()
        )
    );
    assert_eq!(ssh_of(&config), [], "orphan ssh");
    drop(sshd);
}

/// A host with a wrong host key is `failed` alone on screen (ssh's words
/// in its LAST ERROR, never retried: one ssh each for the others), while
/// the other two are connected with their rows.
#[test]
fn a_wrong_host_key_fails_one_host_alone() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    let config = sshd.fleet_config(&[
        ("fleet-1", &paths[0], false),
        ("fleet-2", &paths[1], true),
        ("fleet-3", &paths[2], false),
    ]);
    let args = args(&config, &empty, &ALIASES, &["--no-reaper"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn(&args, 160, 50);
    wait_for_the_view(&mut tui);
    // The header's counts and every row drawn (the rows of a host come
    // in the frame after its `synced`, as the Activity lines do).
    let screen = tui.wait_until("fleet-2 failed, the others synced", UI, |screen| {
        screen.contents().contains(
            "stackless-tui fleet: 3 hosts · 2 connected · 1 failed · 16 instances (11 expired)",
        ) && instance_rows(screen).len() == 16
    });
    let failed = host_line(&screen, "fleet-2").expect("fleet-2's line");
    assert_eq!(failed[1], "failed");
    let said = failed.join(" ");
    assert!(
        said.contains("ssh could not verify the host key of fleet-2 (exit 255)"),
        "{}",
        screen.contents()
    );
    let rows = instance_rows(&screen);
    assert!(rows.iter().all(|(host, _)| host != "fleet-2"), "{rows:?}");
    assert_eq!(rows.len(), 16);
    assert_eq!(agents_of(&paths[1]), Vec::<u32>::new());
    assert_eq!(ssh_of(&config).len(), 2, "{:?}", ssh_of(&config));
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    assert_eq!(console_lines(&paths[1]), []);
    drop(sshd);
}

/// `r` on fleet-2's `golf` (three hosts holding the same instances) asks
/// which host and what runs there; `y` sends the reap to fleet-2's agent
/// only: its teardown command (each host's logs its argv beside its own
/// store) runs there once, its row turns tombstoned, and the other hosts'
/// `golf` is untouched.
#[test]
fn a_reap_goes_to_the_owning_host_only() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let stores: Vec<_> = ALIASES
        .iter()
        .map(|_| crate::common::fixture("real-0.4.0-v14.db"))
        .collect();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    for (dir, _) in &stores {
        fake_down(dir.path(), "");
    }
    // One teardown command for all (it is passed on as is): it runs the
    // fake beside the store its host opens (`SetEnv STACKLESS_TUI_STATE`).
    let shared = tempfile::tempdir().expect("tempdir");
    let empty = shared.path().join("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let dispatch = shared.path().join("down.sh");
    std::fs::write(
        &dispatch,
        "#!/bin/sh\nexec \"$(dirname \"$STACKLESS_TUI_STATE\")/fake-down.sh\" \"$@\"\n",
    )
    .expect("write the dispatcher");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&dispatch, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let down_cmd = format!("'{}' down {{name}} --json", dispatch.display());
    let config = sshd.fleet_config(
        &ALIASES
            .iter()
            .zip(&paths)
            .map(|(alias, store)| (*alias, store.as_path(), false))
            .collect::<Vec<_>>(),
    );
    let args = args(
        &config,
        &empty,
        &ALIASES,
        &["--no-reaper", "--down-cmd", &down_cmd],
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn(&args, 120, 50);
    wait_for_the_view(&mut tui);
    tui.wait_for(
        "stackless-tui fleet: 3 hosts · 3 connected · 24 instances",
        UI,
    );
    tui.send("/host:fleet-2 golf\r");
    let screen = tui.wait_until("fleet-2's golf alone", UI, |screen| {
        instance_rows(screen) == [("fleet-2".to_owned(), "golf".to_owned())]
    });
    assert!(
        pane(&screen, "Instances")
            .unwrap()
            .iter()
            .any(|l| l.starts_with('▶')),
        "{}",
        screen.contents()
    );
    tui.send("r");
    // The question says what runs there: the teardown fleet-2's agent
    // named in its hello (this run's --down-cmd, passed on).
    tui.wait_for(
        &format!(
            "Reap golf on fleet-2 now? This runs there: {} down golf --json",
            dispatch.display()
        ),
        UI,
    );
    tui.send("y");
    let dirs: Vec<&Path> = stores.iter().map(|(dir, _)| dir.path()).collect();
    poll(
        "fleet-2's teardown",
        UI,
        || (crate::common::argv_log(dirs[1]) == ["[down][golf][--json]"]).then_some(()),
        || format!("{:?}", crate::common::argv_log(dirs[1])),
    );
    // Its row turns tombstoned (the host's store changed, its agent said so).
    tui.send("/\x1b");
    tui.wait_until("fleet-2's golf tombstoned", UI, |screen| {
        pane(screen, "Instances").is_some_and(|lines| {
            lines.iter().any(|l| {
                let words: Vec<&str> = l.trim_start_matches('▶').split_whitespace().collect();
                words.starts_with(&["fleet-2", "golf"]) && words.get(3) == Some(&"tombstoned")
            })
        })
    });
    // The result comes back as fleet-2's Activity line.
    tui.wait_in_pane(
        "Activity",
        " fleet-2 operator golf reaped: down succeeded in ",
        UI,
    );
    let screen = tui.screen();
    // The other hosts' golf: still active.
    let golf: Vec<String> = pane(&screen, "Instances")
        .expect("the Instances pane")
        .iter()
        .filter_map(|l| {
            let words: Vec<&str> = l.trim_start_matches('▶').split_whitespace().collect();
            (words.get(1) == Some(&"golf")).then(|| format!("{} {}", words[0], words[3]))
        })
        .collect();
    assert_eq!(
        golf,
        ["fleet-1 active", "fleet-2 tombstoned", "fleet-3 active"],
        "{}",
        screen.contents()
    );
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    assert_eq!(crate::common::argv_log(dirs[0]), Vec::<String>::new());
    assert_eq!(crate::common::argv_log(dirs[2]), Vec::<String>::new());
    assert_eq!(crate::common::argv_log(dirs[1]), ["[down][golf][--json]"]);
    drop(sshd);
}

/// A host whose "agent" floods its stream (a `hello`, then heartbeats as
/// fast as `yes` writes them) holds neither the other hosts nor the
/// screen: both others sync their rows, a key is answered, the launcher's
/// memory stays bounded (its queue holds at most 1024 lines), and `q`
/// still quits (the flood's ssh killed after the 3 s given at quit).
#[test]
fn a_flooding_host_holds_neither_the_others_nor_the_screen() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let (stores, empty) = stores();
    let paths: Vec<PathBuf> = stores.iter().map(|(_, store)| store.clone()).collect();
    // fleet-2's `STACKLESS_TUI_STATE` names no store: the wrapper floods.
    let flood = empty.with_file_name("FLOOD.db");
    let wrapper = empty.with_file_name("remote-bin.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$STACKLESS_TUI_STATE\" in\n*FLOOD.db)\n\
             printf '%s\\n' '{{\"type\":\"hello\",\"protocol\":1,\"heartbeat_secs\":5}}'\n\
             exec yes '{{\"type\":\"heartbeat\"}}' ;;\n*) exec '{BIN}' \"$@\" ;;\nesac\n"
        ),
    )
    .expect("write the wrapper");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = sshd.fleet_config(&[
        ("fleet-1", &paths[0], false),
        ("fleet-2", &flood, false),
        ("fleet-3", &paths[2], false),
    ]);
    let mut args = args(&config, &empty, &ALIASES, &["--no-reaper"]);
    let at = args.iter().position(|a| a == BIN).expect("--remote-bin");
    args[at] = utf8(&wrapper).to_owned();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tui = Tui::spawn(&args, 120, 50);
    wait_for_the_view(&mut tui);
    tui.wait_for(
        "stackless-tui fleet: 3 hosts · 3 connected · 16 instances (11 expired) · sort: host ▲",
        UI,
    );
    agents_started(&[paths[0].clone(), paths[2].clone()], 1);
    // The flood runs (its ssh up, `yes` there), and the keys are answered
    // meanwhile.
    assert_eq!(ssh_of(&config).len(), 3, "{:?}", ssh_of(&config));
    let marker = format!("STACKLESS_TUI_STATE={}", flood.display());
    let flooding: Vec<(u32, String)> = processes_with_env(marker.as_bytes())
        .into_iter()
        .filter(|(_, cmdline)| cmdline.starts_with("yes "))
        .collect();
    assert_eq!(flooding.len(), 1, "{flooding:?}");
    tui.send("s");
    tui.wait_for("· sort: lease expiry ▲", UI);
    tui.send("s");
    tui.wait_for("· sort: name ▲", UI);
    let status = std::fs::read_to_string(format!("/proc/{}/status", tui.pid())).expect("status");
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    assert!(rss_kib < 150 * 1024, "the launcher's RSS: {rss_kib} KiB");
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&tui);
    for store in [&paths[0], &paths[2]] {
        assert_eq!(
            console_story(store),
            (
                vec!["start".to_owned(), "stop".to_owned()],
                "stdin closed".to_owned()
            ),
            "{}",
            store.display()
        );
    }
    assert_eq!(ssh_of(&config), [], "orphan ssh");
    drop(sshd);
}

/// Three hosts over copies of the real 0.4.0 fixture, each with its fake
/// teardown logging its argv beside its store; `dispatch` (the
/// `--down-cmd` and `--stackless` passed on) runs the fake of whichever
/// host runs it. The console shows fleet-2's `name` alone (filtered).
struct Dispatching {
    tui: Tui,
    stores: Vec<(tempfile::TempDir, PathBuf)>,
    dispatch: PathBuf,
    _shared: tempfile::TempDir,
}

impl Dispatching {
    fn start(sshd: &Sshd, name: &str) -> Self {
        let stores: Vec<_> = ALIASES
            .iter()
            .map(|_| crate::common::fixture("real-0.4.0-v14.db"))
            .collect();
        for (dir, _) in &stores {
            fake_down(dir.path(), "");
        }
        let shared = tempfile::tempdir().expect("tempdir");
        let empty = shared.path().join("empty.toml");
        std::fs::write(&empty, "").expect("empty config");
        let dispatch = shared.path().join("down.sh");
        std::fs::write(
            &dispatch,
            "#!/bin/sh\nexec \"$(dirname \"$STACKLESS_TUI_STATE\")/fake-down.sh\" \"$@\"\n",
        )
        .expect("write the dispatcher");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&dispatch, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let down_cmd = format!("'{}' down {{name}} --json", dispatch.display());
        let config = sshd.fleet_config(
            &ALIASES
                .iter()
                .zip(&stores)
                .map(|(alias, (_, store))| (*alias, store.as_path(), false))
                .collect::<Vec<_>>(),
        );
        let args = args(
            &config,
            &empty,
            &ALIASES,
            &[
                "--no-reaper",
                "--down-cmd",
                &down_cmd,
                "--stackless",
                utf8(&dispatch),
            ],
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut tui = Tui::spawn(&args, 120, 50);
        wait_for_the_view(&mut tui);
        tui.wait_for(
            "stackless-tui fleet: 3 hosts · 3 connected · 24 instances",
            UI,
        );
        tui.send(format!("/host:fleet-2 {name}\r"));
        tui.wait_until("fleet-2's row alone", UI, |screen| {
            instance_rows(screen) == [("fleet-2".to_owned(), name.to_owned())]
        });
        Self {
            tui,
            stores,
            dispatch,
            _shared: shared,
        }
    }

    /// The argv lines host `index`'s fake logged.
    fn argv_log(&self, index: usize) -> Vec<String> {
        crate::common::argv_log(self.stores[index].0.path())
    }
}

/// `dy` written in one burst into the fleet view: `d` opens the question
/// and the `y` read with it answers nothing (it was read before the
/// question was drawn): the question stays, shown again after a resize
/// (which is read after the `y`, so the `y` was handled before it), and
/// no host tore anything down. A `y` read once the question is on screen
/// tears `golf` down on fleet-2 alone.
#[test]
fn dy_in_one_burst_tears_nothing_down_on_any_host() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let mut fleet = Dispatching::start(&sshd, "golf");
    let question = format!(
        "Tear down golf on fleet-2? This runs there: {} down golf --json",
        fleet.dispatch.display()
    );
    fleet.tui.send("dy");
    fleet.tui.wait_for(&question, UI);
    fleet.tui.resize(120, 52);
    let screen = fleet
        .tui
        .wait_until("the question redrawn at 52 rows", UI, |screen| {
            screen.size() == (52, 120)
                && screen.contents().contains(&question)
                && screen
                    .rows(0, 120)
                    .nth(51)
                    .is_some_and(|row| !row.trim().is_empty())
        });
    assert!(screen.contents().contains("[y/N]"), "{}", screen.contents());
    assert!(
        !screen.contents().contains("sent 1 command"),
        "{}",
        screen.contents()
    );
    for index in 0..3 {
        assert_eq!(fleet.argv_log(index), Vec::<String>::new(), "host {index}");
    }
    fleet.tui.send("y");
    poll(
        "fleet-2's teardown",
        UI,
        || (fleet.argv_log(1) == ["[down][golf][--json]"]).then_some(()),
        || format!("{:?}", fleet.argv_log(1)),
    );
    fleet.tui.send("q");
    assert_eq!(fleet.tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&fleet.tui);
    assert_eq!(fleet.argv_log(0), Vec::<String>::new());
    assert_eq!(fleet.argv_log(2), Vec::<String>::new());
    assert_eq!(fleet.argv_log(1), ["[down][golf][--json]"]);
    drop(sshd);
}

/// `L` and `v` on fleet-2's `alpha` (a 0.4.0 store, lease recorded as
/// 1 day): each question names the argv its agent runs there, and `y`
/// runs it on fleet-2 alone (its `--stackless`, the fake, logs the
/// argv): `up --name alpha --lease 1day --json`, then `verify alpha
/// --json`.
#[test]
fn l_and_v_renew_and_verify_on_the_rows_host() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let mut fleet = Dispatching::start(&sshd, "alpha");
    let program = fleet.dispatch.display().to_string();
    fleet.tui.send("L");
    fleet.tui.wait_for_all(
        &[
            "Renew the lease of alpha on fleet-2 to 1day (as recorded)? This runs there:",
            &format!("{program} up --name alpha --lease 1day --json"),
        ],
        UI,
    );
    fleet.tui.send("y");
    poll(
        "fleet-2's renew",
        UI,
        || (fleet.argv_log(1) == ["[up][--name][alpha][--lease][1day][--json]"]).then_some(()),
        || format!("{:?}", fleet.argv_log(1)),
    );
    fleet.tui.send("v");
    fleet.tui.wait_for_all(
        &[
            "Verify alpha on fleet-2? This runs there:",
            &format!("{program} verify alpha --json"),
        ],
        UI,
    );
    fleet.tui.send("y");
    poll(
        "fleet-2's verify",
        UI,
        || {
            (fleet.argv_log(1)
                == [
                    "[up][--name][alpha][--lease][1day][--json]",
                    "[verify][alpha][--json]",
                ])
            .then_some(())
        },
        || format!("{:?}", fleet.argv_log(1)),
    );
    fleet.tui.send("q");
    assert_eq!(fleet.tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&fleet.tui);
    assert_eq!(fleet.argv_log(0), Vec::<String>::new());
    assert_eq!(fleet.argv_log(2), Vec::<String>::new());
    drop(sshd);
}

/// Ctrl-F in the fleet view opens the jump prompt, as on one host: the
/// name typed after it (`dyn`, keys typed one by one) is the prompt's text,
/// never keys: no question opens, no host tears anything down; Enter
/// selects the row whose name matches (fleet-2's `golf`, the row the
/// filter shows, by its prefix `go`).
#[test]
fn ctrl_f_then_a_name_runs_no_keys_on_any_host() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let mut fleet = Dispatching::start(&sshd, "golf");
    fleet.tui.send("\x06");
    fleet.tui.wait_for("jump to: ▏", UI);
    for key in ["d", "y", "n"] {
        fleet.tui.send(key);
    }
    fleet.tui.wait_for("jump to: dyn▏", UI);
    let screen = fleet.tui.screen();
    assert!(
        !screen.contents().contains("Tear down"),
        "{}",
        screen.contents()
    );
    fleet.tui.send("\x15go\r");
    fleet.tui.wait_gone("jump to:", UI);
    fleet
        .tui
        .wait_until("fleet-2's golf selected", UI, |screen| {
            pane(screen, "Instances").is_some_and(|lines| {
                lines.iter().any(|l| {
                    l.starts_with('▶') && {
                        let words: Vec<&str> =
                            l.trim_start_matches('▶').split_whitespace().collect();
                        words.starts_with(&["fleet-2", "golf"])
                    }
                })
            })
        });
    for index in 0..3 {
        assert_eq!(fleet.argv_log(index), Vec::<String>::new(), "host {index}");
    }
    fleet.tui.send("q");
    assert_eq!(fleet.tui.wait_exit(UI), 0, "sshd: {}", sshd.log());
    assert_restored(&fleet.tui);
    for index in 0..3 {
        assert_eq!(fleet.argv_log(index), Vec::<String>::new(), "host {index}");
    }
    drop(sshd);
}
