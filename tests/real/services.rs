//! A real service killed with `kill -9`: the console's detail model and
//! `snapshot --json` show it dead, with its pid, origin and log.

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
    assert_eq!(
        start.origin().as_deref(),
        Some("http://web.demo.localhost"),
        "{start:?}"
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
            "origin": "http://web.demo.localhost",
            "port": start.port,
            "log_path": log.display().to_string(),
        }]),
        "{demo:#}"
    );
    // The stack still tears down (its survivors are checked on shutdown).
    stack.down("demo").expect_code(0);
    std::thread::sleep(Duration::from_millis(100));
    stack.shutdown();
}
