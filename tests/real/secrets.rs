//! A canary secret in a real `up` (stackless 0.4.0's secrets: `.stackless.env`
//! beside `stackless.toml`, the key in `[secrets].required` and the
//! service's `secrets`; `up` records its value in `secret_history` before
//! the service starts, stackless-0.4.0/src/client/mod.rs:724-731) appears
//! nowhere this console shows or writes: not on screen (the logs view, a
//! search, the full line, the Activity pane, every byte drawn), not in
//! `snapshot --json`, the audit trail or the console log. `stackless logs`
//! itself prints `[redacted]` for it, and so does the console.

use std::path::Path;
use std::time::Duration;

use crate::harness::{Role, Stack, wait_until};
use crate::pty::Tui;

/// The canary: the service prints it, a failed teardown prints it.
const CANARY: &str = "sk_canary_7f3a9c21e5d4";

/// The local stack of the harness with one secret, `API_TOKEN`, given to
/// `web`, which prints it (plainly and in JSON) before it serves.
const DEFINITION: &str = r#"[stack]
name = "tui-test"

[secrets]
required = ["API_TOKEN"]

[services.web]
source = { repo = "https://example.invalid/web", ref = "main" }
health = { path = "/" }
secrets = ["API_TOKEN"]

[services.web.local]
run = "echo API_TOKEN=$API_TOKEN; echo \"{\\\"token\\\":\\\"$API_TOKEN\\\"}\"; exec python3 -m http.server $PORT --bind 127.0.0.1"
"#;

/// A teardown command that fails, printing the canary on stderr and in its
/// error envelope (a `down` whose provider echoed a credential).
fn failing_down(stack: &Stack) -> String {
    let script = stack.root().join("leaky-down.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\
             echo 'provider refused: bearer {CANARY} rejected' >&2\n\
             printf '%s\\n' '{{\"ok\":false,\"error\":{{\"schema_version\":2,\"code\":\"provider.auth\",\"message\":\"token {CANARY} rejected\",\"remediation\":\"rotate it\",\"context\":{{}}}}}}'\n\
             exit 1\n"
        ),
    )
    .expect("script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{} {{name}}", script.display())
}

#[track_caller]
fn assert_no_canary(what: &str, text: &str) {
    assert!(
        !text.contains(CANARY),
        "the canary secret is in {what}:\n{text}"
    );
}

#[test]
fn a_canary_secret_appears_nowhere_the_console_shows_or_writes() {
    let stack = Stack::new(Role::Embedded);
    let app = stack.app("app");
    std::fs::write(app.join("stackless.toml"), DEFINITION).expect("definition");
    std::fs::write(app.join(".stackless.env"), format!("API_TOKEN={CANARY}\n")).expect("env");
    stack.up("demo", "20s").expect_code(0);
    // The canary is really there: in the service's log on disk, in
    // `secret_history`, and `stackless logs` redacts it.
    let history: Vec<String> = {
        let db = stack.db();
        let mut stmt = db.prepare("SELECT value FROM secret_history").expect("sql");
        stmt.query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    assert_eq!(history, [CANARY]);
    let log = wait_until("the canary in web.log", Duration::from_secs(20), || {
        let logs = stack.state_dir().join("logs");
        let dir = std::fs::read_dir(&logs).ok()?.flatten().next()?.path();
        let text = std::fs::read_to_string(dir.join("web.log")).ok()?;
        text.contains(&format!("API_TOKEN={CANARY}"))
            .then_some(text)
    });
    assert!(
        log.contains(&format!("{{\"token\":\"{CANARY}\"}}")),
        "{log}"
    );
    let logs = stack.stackless(&["logs", "demo"]);
    assert!(logs.stdout.contains("API_TOKEN=[redacted]"), "{logs:#?}");
    assert_no_canary("`stackless logs`", &logs.stdout);

    let db = stack.db_path().display().to_string();
    let down = failing_down(&stack);
    let mut tui = Tui::spawn(
        &[
            "--state",
            &db,
            "--tick",
            "2s",
            "--down-cmd",
            &down,
            "--log-level",
            "debug",
        ],
        120,
        40,
    );
    tui.wait_for("demo", crate::pty::UI);
    tui.select("demo");
    // The logs view of the service that printed it.
    tui.send("l");
    let screen = tui.wait_for_all(
        &[
            "Logs: demo",
            "API_TOKEN=[redacted]",
            "{\"token\":\"[redacted]\"}",
        ],
        crate::pty::UI,
    );
    assert_no_canary("the logs view", &screen);
    // A search for part of it finds nothing, in the lines held or in the
    // file: the text searched is the text shown (the whole canary is not
    // typed: the search line shows what is typed).
    tui.send("\t");
    tui.wait_for(" web ", crate::pty::UI);
    tui.send("/canary_7f3a\r");
    let screen = tui.wait_for(
        "\"canary_7f3a\": no match in the 3 lines held",
        crate::pty::UI,
    );
    assert_no_canary("the logs view after a search for the canary", &screen);
    // A search for what is shown finds it; its full line shows it redacted.
    tui.send(format!(
        "/{}API_TOKEN\r",
        "\x7f".repeat("canary_7f3a".len())
    ));
    std::thread::sleep(Duration::from_millis(500));
    tui.send("\r");
    let full = tui.wait_for("Log: web", crate::pty::UI);
    assert!(full.contains("API_TOKEN=[redacted]"), "{full}");
    assert_no_canary("the full line", &full);
    // Esc: the full line, the search, the logs view.
    tui.send("\x1b");
    tui.wait_gone("Log: web", crate::pty::UI);
    tui.send("\x1b\x1b");
    tui.wait_gone("Logs: demo", crate::pty::UI);
    // The lease runs out; the reaper's teardown fails, printing the canary.
    let screen = tui.wait_for("provider.auth", Duration::from_secs(60));
    assert_no_canary("the Activity pane", &screen);
    tui.send("q");
    assert_eq!(tui.wait_exit(Duration::from_secs(10)), 0);
    assert_no_canary(
        "the bytes drawn on the terminal",
        &String::from_utf8_lossy(&tui.raw()),
    );

    // `snapshot --json`: the failure recorded in `reap_attempts`.
    let snapshot = stack.tui(&["--state", &db, "snapshot", "--json"]);
    snapshot.expect_code(0);
    assert_no_canary("`snapshot --json`", &snapshot.stdout);
    assert_no_canary("`snapshot --json`'s stderr", &snapshot.stderr);
    let json = snapshot.json();
    let attempt = json["instances"]
        .as_array()
        .and_then(|list| list.iter().find(|i| i["name"] == "demo"))
        .map(|demo| demo["reap_attempt"].clone())
        .expect("demo in the snapshot");
    assert_eq!(attempt["code"], "provider.auth", "{attempt:#}");
    assert!(
        attempt["summary"]
            .as_str()
            .is_some_and(|s| s.contains("token [redacted] rejected")),
        "{attempt:#}"
    );
    let plain = stack.tui(&["--state", &db, "snapshot"]);
    assert_no_canary("`snapshot`", &plain.stdout);

    // The stream (docs/protocol.md): the backoff row, the detail and the
    // service's log as `serve --stdio` sends them.
    let stream = serve_reads(&stack, &db);
    assert_no_canary("`serve --stdio`", &stream);
    assert!(stream.contains("token [redacted] rejected"), "{stream}");
    assert!(stream.contains(r#""type":"log""#), "{stream}");

    // The audit trail and the console log.
    let own = stack.state_dir().join("stackless-tui");
    let audit = std::fs::read_to_string(own.join("audit.jsonl")).expect("audit trail");
    assert_no_canary("the audit trail", &audit);
    assert!(audit.contains("[redacted]"), "{audit}");
    let console_log = std::fs::read_to_string(own.join("console.log")).expect("console log");
    assert_no_canary("the console log", &console_log);
    assert!(console_log.contains("[redacted]"), "{console_log}");
    // The console's recording (docs/history.md): every segment,
    // decompressed, holds the failed teardown's line redacted.
    let mut recorded = String::new();
    for entry in std::fs::read_dir(own.join("history")).expect("the console's recording") {
        let path = entry.expect("entry").path();
        if path.to_string_lossy().ends_with(".ndjson.zst") {
            let bytes = std::fs::read(&path).expect("segment");
            let text = zstd::stream::decode_all(bytes.as_slice()).expect("whole frames");
            recorded.push_str(&String::from_utf8_lossy(&text));
        }
    }
    assert_no_canary("the console's recording", &recorded);
    assert!(recorded.contains("[redacted]"), "{recorded}");
    stack.shutdown();
}

/// What `serve --stdio` writes for `demo`'s detail and its `web` log (a
/// second of following), stdin then closed.
fn serve_reads(stack: &Stack, db: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut child = stack
        .command(Path::new(env!("CARGO_BIN_EXE_stackless-tui")))
        .args(["--state", db, "--no-reaper", "serve", "--stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve --stdio");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, r#"{{"id":1,"cmd":"detail","name":"demo"}}"#).expect("write");
    writeln!(
        stdin,
        r#"{{"id":2,"cmd":"logs","name":"demo","service":"web"}}"#
    )
    .expect("write");
    std::thread::sleep(Duration::from_secs(3));
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    assert!(child.wait().expect("wait").success());
    out
}
