//! No secret a child answers survives into any sink: a failing teardown
//! whose `down --json` answer and stderr plant a distinct canary in each
//! place a credential hides (a credential-named envelope field, JSON inside
//! a message, `token=`, `Authorization: Bearer`, URL userinfo,
//! `X-Api-Key:`, `Basic`), then every sink read for every canary: the
//! store file and `reap_attempts.last_error`, `audit.jsonl`,
//! `console.log`, every other file written, the screen (the Activity and
//! Backoffs panes, the detail and its full text), `snapshot`, `snapshot
//! --json`, the stream (`serve --stdio` running the reaper, `snapshot
//! --follow`) and `reap --once`'s output.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::fixture;
use crate::harness::{BIN, Tui, UI, run_plain, utf8};

const QUIT: Duration = Duration::from_secs(10);

/// One canary in each place.
const CANARIES: [&str; 7] = [
    "CANARY1", "CANARY2", "CANARY3", "CANARY4", "CANARY5", "CANARY6", "CANARY7",
];

/// The `--json` answer: `CANARY1` in a credential-named field, `CANARY2`
/// in JSON inside the message, `CANARY3` as `token=`, `CANARY5` in a URL.
const ENVELOPE: &str = r#"{"schema_version":2,"ok":false,"command":"down","error":{"code":"provider.auth","message":"rejected {\"client_secret\":\"CANARY2\"} token=CANARY3 at https://u:CANARY5@db.example/x","context":{"password":"CANARY1"}}}"#;

/// The stderr: `CANARY4` after `Authorization: Bearer`, `CANARY6` as an
/// `X-Api-Key`, `CANARY7` after `Basic`.
const STDERR: &str =
    "Authorization: Bearer CANARY4\nX-Api-Key: CANARY6\nretry with Basic CANARY7\n";

/// What the store keeps of it: `code: message`, redacted.
const STORED: &str = "provider.auth: rejected {\"client_secret\":\"[redacted]\"} token=[redacted] at https://[redacted]@db.example/x";

/// The failing `down` (its answer in files beside it, so the script holds
/// no canary the walk of the files would find twice): the `--down-cmd`.
fn canary_down(dir: &Path) -> String {
    let plant = dir.join("plant");
    std::fs::create_dir_all(&plant).unwrap();
    std::fs::write(plant.join("envelope.json"), format!("{ENVELOPE}\n")).unwrap();
    std::fs::write(plant.join("stderr.txt"), STDERR).unwrap();
    let script = plant.join("down.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat '{}'\ncat '{}' >&2\nexit 1\n",
            plant.join("envelope.json").display(),
            plant.join("stderr.txt").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("'{}' down {{name}} --json", script.display())
}

/// Every canary found in `text`, with `what` it was.
fn found(what: &str, text: &[u8]) -> Vec<String> {
    CANARIES
        .iter()
        .filter(|c| crate::harness::contains(text, c.as_bytes()))
        .map(|c| format!("{c} in {what}"))
        .collect()
}

/// Every file under `dir` (the planted answer aside), each read whole.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == "plant") {
            continue;
        }
        if path.is_dir() {
            files(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

/// `golf`'s `reap_attempts.last_error`, read with `SQLite`.
fn last_error(store: &Path) -> Option<String> {
    let conn =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(
        "SELECT last_error FROM reap_attempts WHERE instance = 'golf'",
        [],
        |r| r.get(0),
    )
    .ok()
}

/// Every backoff due now: the next pass runs the teardowns again.
fn due_now(store: &Path) {
    rusqlite::Connection::open(store)
        .unwrap()
        .execute("UPDATE reap_attempts SET next_retry_at = 0", [])
        .unwrap();
}

/// The lines `command` writes to stdout until one holds `until` (or 30 s
/// pass); then it is killed.
fn stream_until(mut command: Command, until: &str) -> String {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut seen = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while let Ok(line) =
        rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
    {
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(until) {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.contains(until), "{until:?} not streamed:\n{seen}");
    seen
}

fn plain(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir)
        .env("XDG_STATE_HOME", dir.join("xdg"))
        .env("TZ", "UTC0");
    command
}

#[test]
fn no_canary_of_a_failing_teardown_reaches_any_sink() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = canary_down(dir.path());
    let mut leaks = Vec::new();

    // The console's reaper runs the failing `down` (golf is due).
    let mut tui = Tui::spawn(
        &["--state", utf8(&path), "--tick", "1s", "--down-cmd", &down],
        200,
        60,
    );
    let screen = tui.wait_for_all(&["golf failed", "provider.auth", "Backoffs"], UI);
    leaks.extend(found("the main screen", screen.as_bytes()));
    tui.select("golf");
    tui.send("\r");
    let detail = tui.wait_for("provider.auth", UI);
    leaks.extend(found("the detail", detail.as_bytes()));
    tui.send("e");
    let full = tui.wait_for_all(&["j/k scroll", "X-Api-Key: [redacted]"], UI);
    leaks.extend(found("the detail's full text", full.as_bytes()));
    // Each key once the view it closes is gone: two Escs in one read are
    // one Alt-Esc to the terminal's parser.
    tui.send("\x1b");
    tui.wait_gone("j/k scroll", UI);
    tui.send("\x1b");
    tui.wait_gone("p payloads", UI);
    tui.send("q");
    assert_eq!(tui.wait_exit(QUIT), 0);

    // The store: the row, and every byte of the file.
    assert_eq!(last_error(&path).as_deref(), Some(STORED));
    let mut written = Vec::new();
    files(dir.path(), &mut written);
    files(tui.home(), &mut written);
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for name in ["audit.jsonl", "console.log", "state.db"] {
        assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
    }
    for file in &written {
        leaks.extend(found(
            &file.display().to_string(),
            &std::fs::read(file).unwrap(),
        ));
    }

    // The headless readers.
    for args in [&["snapshot"][..], &["snapshot", "--json"][..]] {
        let mut all = args.to_vec();
        all.extend(["--state", utf8(&path)]);
        let (code, stdout, stderr) = run_plain(&all, &[("TZ", "UTC0")]);
        assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&stderr));
        // The table shows the backoff; the document its last error.
        let shown: &[u8] = if args.len() == 1 {
            b"4 (retry in "
        } else {
            b"token=[redacted]"
        };
        assert!(
            crate::harness::contains(&stdout, shown),
            "{args:?}: {}",
            String::from_utf8_lossy(&stdout)
        );
        leaks.extend(found(&format!("{args:?}"), &stdout));
        leaks.extend(found(&format!("{args:?} stderr"), &stderr));
    }
    let follow = stream_until(
        plain(
            dir.path(),
            &["--state", utf8(&path), "snapshot", "--follow"],
        ),
        "token=[redacted]",
    );
    leaks.extend(found("snapshot --follow", follow.as_bytes()));

    // `reap --once` runs it again (every backoff made due first):
    // everything it printed.
    due_now(&path);
    let (code, stdout, stderr) = run_plain(
        &[
            "reap",
            "--once",
            "--down-cmd",
            &down,
            "--state",
            utf8(&path),
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&stdout));
    assert!(
        crate::harness::contains(&stdout, b"failed: provider.auth: rejected"),
        "{}",
        String::from_utf8_lossy(&stdout)
    );
    leaks.extend(found("reap --once stdout", &stdout));
    leaks.extend(found("reap --once stderr", &stderr));

    // The stream of an agent whose reaper runs it.
    due_now(&path);
    let serve = stream_until(
        plain(
            dir.path(),
            &[
                "--state",
                utf8(&path),
                "--tick",
                "1s",
                "--reaper",
                "always",
                "--down-cmd",
                &down,
                "serve",
                "--stdio",
            ],
        ),
        "provider.auth",
    );
    leaks.extend(found("serve --stdio", serve.as_bytes()));
    assert_eq!(leaks, Vec::<String>::new());
}
