//! The logs view on a real `up` (stackless 0.4.0): the service log is where
//! the view looks (`<state_dir>/logs/<resource_namespace>/web.log`), opens
//! with the service's own lines, is followed, and stays readable after
//! `down` (stackless keeps logs until GC).

use std::time::Duration;

use stackless_tui::event::Event;
use stackless_tui::logs::{self, follower};
use stackless_tui::model::Status;
use stackless_tui::model::logview::{LogUpdate, LogsRequest, LogsState};
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::harness::{Role, Stack, wait_until};

fn instance(stack: &Stack, name: &str) -> stackless_tui::model::Instance {
    let mut store = Store::open(&stack.db_path(), Access::ReadOnly).expect("open");
    let snapshot = store.snapshot(&mut SysinfoProbe::new()).expect("snapshot");
    snapshot.rows.instance(name).expect("the instance").clone()
}

/// The texts of the tail of `request`'s `web` log.
fn web_tail(stack: &Stack, request: &LogsRequest) -> Vec<String> {
    let (opened, _) = logs::open(&stack.state_dir(), request);
    assert_eq!(opened.state, LogsState::Ready, "{opened:?}");
    let names: Vec<&str> = opened.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["web"]);
    opened.services[0]
        .lines
        .iter()
        .map(|l| l.text.clone())
        .collect()
}

#[test]
fn a_real_up_writes_the_log_the_view_opens_and_follows() {
    let stack = Stack::new(Role::Embedded);
    stack.up("demo", "10m").expect_code(0);
    let demo = instance(&stack, "demo");
    let request = LogsRequest::for_instance(&demo).expect("DNS-safe");
    let birth = demo.birth.expect("a birth on schema 14");
    assert_eq!(request.dir, birth.resource_namespace());
    assert!(request.dir.starts_with("sl-"), "{}", request.dir);
    // The health check's request, as python's http.server logs it.
    let lines = wait_until(
        "the health check in web.log",
        Duration::from_secs(20),
        || {
            let lines = web_tail(&stack, &request);
            lines
                .iter()
                .any(|l| l.contains("\"GET / HTTP/1.1\" 200"))
                .then_some(lines)
        },
    );
    assert!(lines.iter().all(|l| !l.contains('\u{1b}')));

    // Followed: lines the service writes next arrive (`down` stops it,
    // which it logs, or the follower sees nothing more: either way no line
    // arrives twice and the log stays).
    let (opened, follows) = logs::open(&stack.state_dir(), &request);
    let before = opened.services[0].lines.len();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let dir = stack.state_dir().join("logs").join(&request.dir);
    let _handle = follower::spawn(1, dir, vec!["web".into()], follows, tx, true).expect("follower");
    stack.down("demo").expect_code(0);
    assert_eq!(instance(&stack, "demo").status, Status::Tombstoned);
    std::thread::sleep(Duration::from_millis(500));
    let mut arrived = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let Event::Logs(LogUpdate::Lines { lines, .. }) = event {
            arrived.extend(lines.into_iter().map(|l| l.text));
        }
    }
    // Tombstoned, the logs are still there: what was followed is what a
    // fresh open reads at the end.
    let after = web_tail(&stack, &request);
    assert!(after.len() >= before, "{after:?}");
    let tail = &after[after.len() - arrived.len()..];
    assert_eq!(tail, arrived.as_slice());
    stack.shutdown();
}
