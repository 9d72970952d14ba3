//! The reaper as each release decides: v5 (the contract: reap and GC) and
//! v14 (the 0.4.0 controller's rules: skip names with a pending operation,
//! GC left to the controller, a reborn name aborts the teardown).

use crate::common::stores::{self, BRAVO_ID};
use crate::common::{CAPTURE, argv_log, fake_down, reaper, runtime};
use stackless_tui::event::{ActivityKind, Actor};
use stackless_tui::model::envelope::read_reason;
use stackless_tui::reaper::Intent;
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

fn vm_probe() -> Box<FixedProbe> {
    Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    })
}

fn snapshot(path: &std::path::Path) -> stackless_tui::model::Snapshot {
    Store::open(path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut *vm_probe())
        .unwrap()
}

const V2_SUCCESS: &str = include_str!("../fixtures/envelopes/v2-down-destroyed.json");
const V2_FAILURE: &str =
    include_str!("../fixtures/envelopes/v2-down-source-override-shared-error.json");

/// A fake `down` printing `envelope` and exiting with `code`.
fn down_printing(
    dir: &std::path::Path,
    envelope: &str,
    code: i32,
) -> stackless_tui::reaper::DownCommand {
    let file = dir.join("envelope.json");
    std::fs::write(&file, envelope).unwrap();
    fake_down(dir, &format!("cat '{}'; exit {code}", file.display()))
}

#[test]
fn v14_skips_pending_names_reaps_the_rest_and_leaves_gc_to_the_controller() {
    let rt = runtime();
    let (dir, path) = stores::v14();
    let down = down_printing(dir.path(), V2_SUCCESS, 0);
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let summary = reaper.pass();
    assert_eq!(
        (
            summary.reaped,
            summary.failed,
            summary.collected,
            summary.tombstones_due
        ),
        (1, 0, 0, 1)
    );
    assert_eq!(argv_log(dir.path()), ["[down][bravo][--json]"]);
    let lines: Vec<(String, ActivityKind, String)> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind != ActivityKind::Started)
        .map(|a| (a.instance.clone(), a.kind, a.detail.clone()))
        .collect();
    assert_eq!(
        lines[0],
        (
            "alpha".into(),
            ActivityKind::Skipped,
            "operation pending (down running)".into()
        )
    );
    assert_eq!(
        lines[1],
        (
            String::new(),
            ActivityKind::Skipped,
            "GC: 1 tombstone due: the controller collects them".into()
        )
    );
    assert_eq!(lines[2].0, "bravo");
    assert_eq!(lines[2].1, ActivityKind::Reaped);
    assert_eq!(lines.len(), 3);
    // No row is ever deleted on v14: charlie (8 days a tombstone) stays.
    assert!(snapshot(&path).instance("charlie").is_some());
    // A second pass says nothing new: skips are reported once per state.
    let before = log.lock().unwrap().len();
    let again = reaper.pass();
    assert_eq!(again.tombstones_due, 1);
    let after: Vec<_> = log.lock().unwrap()[before..]
        .iter()
        .map(|a| (a.instance.clone(), a.kind))
        .collect();
    // bravo is still expired in this fake (its `down` changed nothing).
    assert!(after.iter().all(|(name, _)| name == "bravo"), "{after:?}");
}

#[test]
fn v5_reaps_every_expired_name_and_collects_old_tombstones() {
    let rt = runtime();
    let (dir, path) = stores::v5();
    std::fs::create_dir_all(dir.path().join("logs/charlie")).unwrap();
    let down = down_printing(dir.path(), V2_SUCCESS, 0);
    let (mut reaper, _log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let summary = reaper.pass();
    assert_eq!(
        (
            summary.reaped,
            summary.failed,
            summary.collected,
            summary.tombstones_due
        ),
        (2, 0, 1, 0)
    );
    let mut argv = argv_log(dir.path());
    argv.sort();
    assert_eq!(argv, ["[down][alpha][--json]", "[down][bravo][--json]"]);
    let snap = snapshot(&path);
    assert!(snap.instance("charlie").is_none(), "GC on v5");
    assert!(snap.instance("echo").is_some(), "1 day old");
    assert!(!dir.path().join("logs/charlie").exists());
}

#[test]
fn v14_a_name_reborn_between_decision_and_teardown_aborts() {
    let rt = runtime();
    let (dir, path) = stores::v14();
    let down = down_printing(dir.path(), V2_SUCCESS, 0);
    let seen = snapshot(&path).instance("bravo").unwrap().clone();
    assert_eq!(seen.birth.as_ref().unwrap().instance_id(), BRAVO_ID);
    // bravo is torn down and brought up again: same row, new birth.
    stores::exec(
        &path,
        "UPDATE instances SET instance_id = 'f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6',
           resource_namespace = 'sl-f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6' WHERE name = 'bravo';",
    );
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let kind = reaper.reap(&seen, None, Actor::Operator, Intent::TearDown);
    assert_eq!(kind, Some(ActivityKind::Aborted));
    assert!(argv_log(dir.path()).is_empty());
    assert_eq!(
        log.lock().unwrap()[0].detail,
        "instance changed (birth) since the decision; not torn down"
    );
}

#[test]
fn v14_an_operation_queued_after_the_decision_aborts() {
    let rt = runtime();
    let (dir, path) = stores::v14();
    let down = down_printing(dir.path(), V2_SUCCESS, 0);
    let seen = snapshot(&path).instance("bravo").unwrap().clone();
    stores::exec(
        &path,
        &format!(
            "INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
             VALUES ('late', 'bravo', 'up', 'queued', 'null', {CAPTURE}, {CAPTURE});"
        ),
    );
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let kind = reaper.reap(&seen, None, Actor::Reaper, Intent::Reap);
    assert_eq!(kind, Some(ActivityKind::Aborted));
    assert!(argv_log(dir.path()).is_empty());
    assert_eq!(
        log.lock().unwrap()[0].detail,
        "operation pending (up queued) since the decision; not torn down"
    );
}

#[test]
fn v14_a_failed_reap_is_recorded_as_code_and_message_of_the_schema_2_envelope() {
    let rt = runtime();
    let (dir, path) = stores::v14();
    let down = down_printing(dir.path(), V2_FAILURE, 1);
    let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (0, 1));
    let snap = snapshot(&path);
    let attempt = snap.reap_attempt("bravo").unwrap();
    assert_eq!(attempt.attempts, 1);
    assert_eq!(attempt.next_retry_at, CAPTURE + 60);
    // The store: `code: message`, as stackless 0.4.0 shows a fault on one
    // line; the entry (and so the audit trail): the whole envelope.
    assert_eq!(
        attempt.last_error,
        "engine.source_override.shared: service \"web\" --source path \
         \"/home/operator/src/web\" is already pinned by active instance \"a\""
    );
    let entry = log
        .lock()
        .unwrap()
        .iter()
        .find(|a| a.kind == ActivityKind::Failed)
        .unwrap()
        .clone();
    assert_eq!(
        read_reason(&entry.envelope).code.as_deref(),
        Some("engine.source_override.shared")
    );
    let failed = entry.detail;
    assert!(
        failed.starts_with("engine.source_override.shared: service \"web\" --source path"),
        "{failed}"
    );
}

/// The operator's `d` answered `y` on the snapshot of `path` (bravo
/// selected): the instance and attempt the console hands the teardown job.
fn d_then_y_on_bravo(
    path: &std::path::Path,
) -> (
    stackless_tui::model::Instance,
    Option<stackless_tui::model::ReapAttempt>,
) {
    use crossterm::event::KeyCode;
    use stackless_tui::ui::{App, AppConfig, Effect};
    let mut app = App::new(
        AppConfig {
            store_label: path.display().to_string(),
            reaper: stackless_tui::ui::ReaperMode::Off("--no-reaper".into()),
            helper: stackless_tui::ui::HelperMode::None,
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        CAPTURE,
    );
    app.handle(
        stackless_tui::event::Event::Snapshot(std::sync::Arc::new(snapshot(path))),
        CAPTURE,
    );
    crate::common::ui::select(&mut app, "bravo");
    crate::common::ui::press(&mut app, KeyCode::Char('d'));
    match crate::common::ui::press(&mut app, KeyCode::Char('y')) {
        Some(Effect::TearDown { instance, attempt }) => (instance, attempt),
        other => panic!("{other:?}"),
    }
}

/// The second guard: a name born again after `y` but before its command
/// starts (schema 14: another `instance_id`; schema 5, which has none:
/// another `created_at`) is re-checked by the job against the birth the
/// question was asked about, and the teardown aborts: nothing runs.
#[test]
fn a_name_born_again_after_y_aborts_the_operators_teardown_on_v5_and_v14() {
    let rt = runtime();
    for (version, (dir, path)) in [(5, stores::v5()), (14, stores::v14())] {
        let (seen, attempt) = d_then_y_on_bravo(&path);
        let rebirth = if version == 5 {
            format!("UPDATE instances SET created_at = {CAPTURE} WHERE name = 'bravo';")
        } else {
            format!(
                "UPDATE instances SET created_at = {CAPTURE},
                   instance_id = 'f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6',
                   resource_namespace = 'sl-f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6' WHERE name = 'bravo';"
            )
        };
        stores::exec(&path, &rebirth);
        let down = down_printing(dir.path(), V2_SUCCESS, 0);
        let (mut reaper, log) = reaper(&path, down, vm_probe(), CAPTURE, &rt);
        let kind = reaper.reap(&seen, attempt.as_ref(), Actor::Operator, Intent::TearDown);
        assert_eq!(kind, Some(ActivityKind::Aborted), "v{version}");
        assert!(argv_log(dir.path()).is_empty(), "v{version}: down ran");
        assert_eq!(
            log.lock().unwrap()[0].detail,
            "instance changed (birth) since the decision; not torn down",
            "v{version}"
        );
        let snap = snapshot(&path);
        assert_eq!(
            snap.instance("bravo").map(|i| (&i.status, i.created_at)),
            Some((&stackless_tui::model::Status::Active, Some(CAPTURE))),
            "v{version}"
        );
    }
}
