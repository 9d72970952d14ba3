//! A fleet console over 500 hosts whose ssh never answers (a fake `ssh`
//! on `PATH` that records its start and sleeps): the first frame comes at
//! once, keys are answered within a bound while the connections are
//! pending, and connections start in waves of at most 32
//! (`MAX_CONNECTING`), off the thread that reads keys and draws.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{Tui, UI, utf8};

/// The hosts of the fleet.
const HOSTS: usize = 500;

/// The most connections the console may start at once.
const WAVE: usize = 32;

/// How long the first frame and a key's answer may take (CI is a 2-core
/// machine running other tests at once; without waves the console spent
/// 12 s before its first frame on this load).
const BOUND: Duration = Duration::from_secs(3);

/// A fake `ssh` in `<dir>/bin` that appends a line to `<dir>/starts` and
/// then never answers (sleeps a minute); the `PATH` to use.
fn silent_ssh(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let starts = dir.join("starts");
    let path = bin.join("ssh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho $$ >> '{}'\nexec sleep 60\n",
            starts.display()
        ),
    )
    .expect("write the fake ssh");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display())
}

/// How many fake sshes were started so far.
fn started(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("starts")).map_or(0, |text| text.lines().count())
}

#[test]
fn five_hundred_silent_hosts_draw_at_once_answer_keys_and_connect_in_waves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = silent_ssh(dir.path());
    let file = dir.path().join("fleet.toml");
    let hosts: String = (1..=HOSTS)
        .map(|i| format!("[[host]]\ntarget = \"ssh://h{i}\"\n\n"))
        .collect();
    std::fs::write(&file, hosts).expect("fleet file");
    let empty = dir.path().join("config.toml");
    std::fs::write(&empty, "").expect("config");
    let spawned = Instant::now();
    let mut tui = Tui::spawn_env(
        &["--fleet", utf8(&file), "--config", utf8(&empty)],
        &[("PATH", &path)],
        120,
        40,
    );
    // The first frame: the Hosts pane, its first host connecting.
    tui.wait_until("the first frame", UI, |screen| {
        screen.contents().contains("Hosts") && screen.contents().contains("h1 ")
    });
    let first_frame = spawned.elapsed();
    assert!(first_frame < BOUND, "first frame after {first_frame:?}");

    // A key while the connections are pending: the help, then back.
    let asked = Instant::now();
    tui.send("?");
    tui.wait_for("Help (Esc or ? closes)", UI);
    let answered = asked.elapsed();
    assert!(answered < BOUND, "? answered after {answered:?}");
    tui.send("\x1b");

    // A wave: 32 started, and no more while none of them answers (each
    // holds its place until its 15 s of silence).
    let wave = tui.poll_until(UI, |_| started(dir.path()) >= WAVE);
    assert!(wave.is_some(), "only {} started", started(dir.path()));
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(2) {
        assert_eq!(started(dir.path()), WAVE);
        std::thread::sleep(Duration::from_millis(100));
    }
    // Keys still answered at once with the wave pending.
    let asked = Instant::now();
    tui.send("?");
    tui.wait_for("Help (Esc or ? closes)", UI);
    assert!(
        asked.elapsed() < BOUND,
        "? answered after {:?}",
        asked.elapsed()
    );
    eprintln!(
        "500 silent hosts: first frame {first_frame:?}, first key {answered:?}, second key {:?}",
        asked.elapsed()
    );
}
