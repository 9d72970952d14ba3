//! A real service killed with `kill -9`: the console's detail model and
//! `snapshot --json` show it dead, with its pid and log, and no origin;
//! alive, its origin is the one `stackless status` reports.

use std::time::Duration;

use stackless_tui::model::services::{LogState, ProcessState};
use stackless_tui::store::probe::checked_sysinfo;
use stackless_tui::store::{Access, Store, services};

use crate::harness::{Role, Stack, WAIT, wait_until};

#[test]
fn a_service_killed_with_sigkill_shows_as_dead() {
    let stack = Stack::new(Role::Embedded);
    stack.up("demo", "10m").expect_code(0);
    let mut store = Store::open(&stack.db_path(), Access::ReadOnly).expect("open");
    let mut probe = checked_sysinfo();
    let read = |store: &mut Store, probe: &mut dyn stackless_tui::store::probe::HostProbe| {
        let detail = store
            .instance_detail("demo")
            .expect("read")
            .expect("demo exists");
        services::observe(detail, &stack.state_dir(), probe)
    };
    let detail = read(&mut store, probe.as_mut());
    let namespace = &detail.detail.logs_dir_name;
    assert!(namespace.starts_with("sl-"), "{namespace}");
    assert_eq!(detail.services.len(), 1, "{:#?}", detail.services);
    let web = &detail.services[0];
    assert_eq!(web.name, "web");
    assert_eq!(web.runs_on, "local");
    assert_eq!(web.process, Some(ProcessState::Alive), "{web:#?}");
    let start = web.start.clone().expect("a process checkpoint");
    // The origin as 0.4.0 computes it: `stackless status`'s, on the proxy
    // port of the controller's command line (`--proxy-port`).
    let status = stack.stackless(&["status", "demo", "--json"]);
    status.expect_code(0);
    let status = status.json();
    let origin = format!("http://web.demo.localhost:{}", stack.port);
    assert_eq!(
        status["services"][0]["origin"],
        origin.as_str(),
        "{status:#}"
    );
    let probed = stackless_tui::controller::probe::probe(&stack.state_dir());
    assert_eq!(probed.proxy_port, Some(stack.port), "{probed:?}");
    assert_eq!(web.origin(stack.port).as_deref(), Some(origin.as_str()));
    // `snapshot --json` without STACKLESS_PROXY_PORT in its environment:
    // the port is the controller's `--proxy-port`.
    let mut command = stack.command(std::path::Path::new(env!("CARGO_BIN_EXE_stackless-tui")));
    command
        .env_remove("STACKLESS_PROXY_PORT")
        .args(["snapshot", "--json", "--state"])
        .arg(stack.db_path());
    let out = command.output().expect("snapshot --json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        doc["instances"][0]["services"][0]["origin"],
        origin.as_str(),
        "{doc:#}"
    );
    let log = stack
        .state_dir()
        .join("logs")
        .join(namespace)
        .join("web.log");
    assert_eq!(web.log_path.as_deref(), log.to_str());
    assert!(matches!(web.log, LogState::Present { .. }), "{:?}", web.log);

    let pid = i32::try_from(start.pid).expect("a pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill -9 the service");
    let dead = wait_until("the killed service to read as dead", WAIT, || {
        let detail = read(&mut store, probe.as_mut());
        let web = detail.services.first().cloned()?;
        web.process.is_some_and(ProcessState::dead).then_some(web)
    });
    assert_eq!(dead.process, Some(ProcessState::Dead));
    assert_eq!(dead.start.as_ref().map(|s| s.pid), Some(start.pid));
    assert_eq!(stackless_tui::model::services::dead_count(&[dead]), 1);

    // The same through `snapshot --json`.
    let out = stack.tui(&[
        "snapshot",
        "--json",
        "--state",
        stack.db_path().to_str().expect("utf-8"),
    ]);
    out.expect_code(0);
    let doc = out.json();
    let demo = doc["instances"]
        .as_array()
        .and_then(|all| all.iter().find(|i| i["name"] == "demo"))
        .expect("demo in the snapshot");
    assert_eq!(
        demo["services"],
        serde_json::json!([{
            "name": "web",
            "pid": start.pid,
            "alive": false,
            "origin": null,
            "port": start.port,
            "stage": "absent",
            "log_path": log.display().to_string(),
        }]),
        "{demo:#}"
    );
    // The stack still tears down (its survivors are checked on shutdown).
    stack.down("demo").expect_code(0);
    std::thread::sleep(Duration::from_millis(100));
    stack.shutdown();
}
