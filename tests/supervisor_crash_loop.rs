//! 50 crash loops of a helper leave no zombie behind (its own test binary, so
//! no other test's children are counted).

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use stackless_tui::event::{Event, SupervisorKind};
use stackless_tui::supervisor::{HelperConfig, HelperHandle};
use succession::supervision::Restart;

/// Children of this process that are zombies right now.
fn zombies() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some(after) = stat.rsplit_once(") ").map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() > 1 && fields[0] == "Z" && fields[1] == me {
            found.push(entry.file_name().to_string_lossy().parse().unwrap_or(0));
        }
    }
    found
}

#[test]
fn fifty_crash_loops_leave_no_zombie() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = Arc::new(HelperHandle::default());
    stackless_tui::supervisor::thread::spawn(
        HelperConfig {
            argv: vec!["/bin/sh".into(), "-c".into(), "exit 3".into()],
            roles_dir: dir.path().to_owned(),
            restart: Restart {
                base: Duration::from_millis(1),
                ceiling: Duration::from_millis(4),
                healthy_after: Duration::from_secs(30),
            },
            grace: Duration::from_secs(1),
        },
        tx,
        Arc::clone(&handle),
    )
    .unwrap();
    let mut exits = 0;
    let started = Instant::now();
    while exits < 50 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "only {exits} exits"
        );
        match rx.try_recv() {
            Ok(Event::Supervisor(note)) if note.kind == SupervisorKind::Exited => {
                assert_eq!(
                    note.text.split(" after ").next(),
                    Some("helper exited (status 3)")
                );
                exits += 1;
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    handle.stop(Duration::from_millis(200));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(zombies(), Vec::<u32>::new());
}
