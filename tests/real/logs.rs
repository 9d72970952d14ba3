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

use crate::harness::{Role, Stack, WAIT, wait_until};

/// `GET path` through the stack's proxy (127.0.0.1 on its port), routed
/// by `host` (stackless-local-0.4.0 src/lib.rs:157: `SERVICE.INSTANCE.localhost`);
/// returns once the answer is read.
fn get_through_proxy(stack: &Stack, host: &str, path: &str) {
    use std::io::{Read as _, Write as _};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", stack.port)).expect("proxy");
    conn.set_read_timeout(Some(WAIT)).expect("timeout");
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {host}:{}\r\nConnection: close\r\n\r\n",
        stack.port
    )
    .expect("request");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("answer");
    assert!(answer.contains(" 404 "), "{answer}");
}

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

    // Followed: a line the service writes after the open arrives. A
    // request through the proxy to a path nothing asked for before makes
    // `http.server` log one (`"GET /followed-... HTTP/1.1" 404`).
    let (opened, follows) = logs::open(&stack.state_dir(), &request);
    let before = opened.services[0].lines.len();
    let probe = format!("/followed-{}", std::process::id());
    assert!(
        opened.services[0]
            .lines
            .iter()
            .all(|l| !l.text.contains(&probe)),
        "the probe's line is new"
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let dir = stack.state_dir().join("logs").join(&request.dir);
    let _handle = follower::spawn(1, dir, vec!["web".into()], follows, tx, true).expect("follower");
    get_through_proxy(&stack, "web.demo.localhost", &probe);
    let mut arrived = Vec::new();
    wait_until("the probe's line to be followed", WAIT, || {
        while let Ok(event) = rx.try_recv() {
            if let Event::Logs(LogUpdate::Lines { lines, .. }) = event {
                arrived.extend(lines.into_iter().map(|l| l.text));
            }
        }
        arrived.iter().any(|l| l.contains(&probe)).then_some(())
    });
    let line = arrived
        .iter()
        .find(|l| l.contains(&probe))
        .cloned()
        .expect("found");
    assert!(
        line.contains(&format!("\"GET {probe} HTTP/1.1\" 404")),
        "{line}"
    );
    stack.down("demo").expect_code(0);
    assert_eq!(instance(&stack, "demo").status, Status::Tombstoned);
    // Tombstoned, the logs are still there: the followed line is the one
    // a fresh open reads, once.
    let after = web_tail(&stack, &request);
    assert_eq!(arrived.iter().filter(|l| l.contains(&probe)).count(), 1);
    assert_eq!(after.iter().filter(|l| **l == line).count(), 1, "{after:?}");
    assert!(after.len() > before, "{after:?}");
    stack.shutdown();
}
