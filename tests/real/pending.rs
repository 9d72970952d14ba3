//! A real pending operation (spec §8.4) read back through this crate: our
//! snapshot shows the queue with the running step, our reaper leaves the
//! expired instance to the controller (0.4.0: a name with a pending
//! operation is skipped), the console's cancel adapter (what `c` runs)
//! cancels the queued `down` through the real CLI, and the change shows as
//! an observed event.

use std::sync::Arc;
use std::time::Duration;

use stackless_tui::controller::cancel::{self, Outcome};
use stackless_tui::event::ActivityKind;
use stackless_tui::model::observe::{Observed, changes};
use stackless_tui::model::{OpStatus, Snapshot};
use stackless_tui::reaper::decision::{Decision, plan};
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::common;
use crate::harness::{Role, Stack, WAIT, unix_now, wait_until};

fn snapshot(stack: &Stack) -> Snapshot {
    Store::open(&stack.db_path(), Access::ReadOnly)
        .expect("open")
        .snapshot(&mut SysinfoProbe::new())
        .expect("snapshot")
}

/// A script that runs the real stackless against this stack's embedded
/// controller: the console's `--stackless` program, as an operator would
/// point it at a store outside the default path.
fn stackless_program(stack: &Stack) -> std::ffi::OsString {
    let script = stack.root().join("stackless-here.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' --state-dir '{}' --proxy-port {} \"$@\"\n",
            crate::harness::real_stackless().display(),
            stack.state_dir().display(),
            stack.port
        ),
    )
    .expect("write script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.into_os_string()
}

#[test]
fn a_pending_operation_keeps_our_reaper_off_and_c_cancels_it() {
    let stack = Stack::new(Role::Embedded);
    stack.write_app("slow", Some("sleep 60"));
    // A 3 s lease that runs out while the `up` still sleeps in `prepare`.
    stack
        .up_app("demo", "3s", "slow", &["--no-wait"])
        .expect_code(0);
    let running = wait_until("the up to run its prepare step", WAIT, || {
        let snap = snapshot(&stack);
        let up = snap.pending_operations().first()?.clone();
        let progress = up.progress.clone()?;
        (progress.step_id == "prepare:web" && progress.event == "Started").then_some(snap)
    });
    let up = &running.pending_operations()[0];
    assert_eq!((up.verb.as_str(), &up.status), ("up", &OpStatus::Running));
    let progress = up.progress.as_ref().unwrap();
    assert!(
        progress.text().starts_with("prepare:web ") && progress.index <= progress.total,
        "{progress:?}"
    );

    let down = stack.stackless(&["down", "demo", "--no-wait", "--json"]);
    down.expect_code(0);
    let down_id = down.json()["operation"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let expired = wait_until("the lease to run out", WAIT, || {
        let snap = snapshot(&stack);
        let lease = snap.instance("demo")?.lease?;
        (lease.expires_at < unix_now()).then_some(snap)
    });
    let pending: Vec<(&str, &OpStatus)> = expired
        .pending_operations()
        .iter()
        .map(|op| (op.verb.as_str(), &op.status))
        .collect();
    assert_eq!(
        pending,
        [("up", &OpStatus::Running), ("down", &OpStatus::Queued)]
    );

    // Our reaper: the expired instance is the controller's while its
    // operations are pending.
    let decided = plan(&expired, unix_now(), expired.generation.allows_gc());
    assert_eq!(
        decided.reaps,
        vec![(
            "demo".to_owned(),
            Decision::SkipPending {
                verb: "up".into(),
                status: OpStatus::Running
            }
        )]
    );
    let runtime = common::runtime();
    let (mut reaper, log) = common::reaper_with(
        &stack.db_path(),
        stack.down_command(),
        Box::new(SysinfoProbe::new()),
        Arc::new(unix_now),
        &runtime,
        |_| {},
    );
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (0, 0));
    let kinds: Vec<ActivityKind> = log.lock().unwrap().iter().map(|a| a.kind).collect();
    assert_eq!(kinds, [ActivityKind::Skipped]);
    assert_eq!(
        log.lock().unwrap()[0].detail,
        "operation pending (up running)"
    );

    // `c`: the console's cancel adapter, through the real CLI.
    let program = stackless_program(&stack);
    let outcome = runtime.block_on(cancel::run(&program, &down_id, Duration::from_secs(120)));
    assert_eq!(outcome, Outcome::Cancelled);
    let after = snapshot(&stack);
    let cancelled = after
        .finished_operations()
        .iter()
        .find(|op| op.id == down_id)
        .expect("the cancelled down is listed");
    assert_eq!(cancelled.status, OpStatus::Cancelled);
    assert!(cancelled.cancel_requested);
    // The console's view of the change between the two reads.
    let seen = changes(&expired.rows, &after.rows);
    assert!(
        seen.iter()
            .any(|o| matches!(o, Observed::Finished(op) if op.id == down_id)),
        "{seen:?}"
    );
    // A running up: the cancel is recorded, the up stops at its next step.
    let up_id = after.pending_operations()[0].id.clone();
    let outcome = runtime.block_on(cancel::run(&program, &up_id, Duration::from_secs(120)));
    assert_eq!(outcome, Outcome::Requested);
    stack.shutdown();
}
