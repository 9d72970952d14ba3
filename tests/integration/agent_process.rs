//! The real binary's `serve --stdio` as a child process, for the tests
//! that drive it line by line (`serve_stop`, `serve_reads`): started on a
//! store with a home of its own, its stdout read on a thread, every line
//! validated against `docs/protocol.schema.json`.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::Value;

/// `stackless-tui [--state STORE] FLAGS...` with `home` as HOME and
/// config home, stdin and stdout piped, stderr dropped.
pub fn spawn(home: &Path, store: Option<&Path>, args: &[&str]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stackless-tui"));
    if let Some(store) = store {
        command.arg("--state").arg(store);
    }
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn")
}

/// The lines of `child`'s stdout, each validated against the schema
/// (a line that is not valid fails the reading thread, and so the wait).
pub fn lines_of(child: &mut Child) -> Receiver<Value> {
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Err(why) = crate::common::protocol::validate(&line) {
                panic!("not a valid message: {why}: {line}");
            }
            let value: Value = serde_json::from_str(&line).expect("json");
            if tx.send(value).is_err() {
                return;
            }
        }
    });
    rx
}

/// The next line `what` accepts (others skipped), within 20 s.
///
/// # Panics
/// None came: stdout closed or the time ran out.
pub fn wait_for(rx: &Receiver<Value>, what: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(value) if what(&value) => return value,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("the line waited for never came");
}

/// A teardown command that sleeps a minute (a `down` still running when
/// the test acts), written into `dir`: `PATH {name}`.
pub fn slow_down(dir: &Path) -> String {
    let down = dir.join("slow-down");
    std::fs::write(&down, "#!/bin/sh\nexec sleep 60\n").expect("write");
    std::fs::set_permissions(&down, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    format!("{} {{name}}", down.display())
}
