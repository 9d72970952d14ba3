//! The controller's operations in the UI (stackless 0.4.0, schema 14), on
//! hand-made snapshots at a fixed clock: the Operations pane, the header's
//! controller, `c` and its rules, the operation overlay, the pending
//! operation on an Instances row, and the changes observed between
//! snapshots in Activity.

use crate::common::ui::Answers as _;
use stackless_tui::event::Request;
use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, press, render_app, render_pane, select};
use crossterm::event::KeyCode;

use stackless_tui::event::{Activity, ActivityKind, Actor, Event};
use stackless_tui::model::controller::ControllerState;
use stackless_tui::model::liveness::LockLiveness;
use stackless_tui::model::operation::StepProgress;
use stackless_tui::model::{
    Birth, Generation, Instance, Liveness, OpLock, OpStatus, Operation, Rows, Snapshot, Status,
};
use stackless_tui::ui::{self, App, AppConfig, Effect, Focus, panes};

fn config() -> AppConfig {
    AppConfig {
        store_label: "/home/operator/.local/state/stackless/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(60),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    }
}

fn instance(name: &str, status: Status, birth: &str) -> Instance {
    let row = crate::common::builders::instance(name).birth(birth);
    match status {
        Status::Tombstoned => row.tombstoned(CAPTURE - 8 * 86_400).no_lease(),
        other => row.status(other),
    }
    .build()
}

fn op(id: &str, name: &str, verb: &str, status: OpStatus, created: i64, updated: i64) -> Operation {
    Operation {
        id: id.into(),
        instance: name.into(),
        instance_id: None,
        verb: verb.into(),
        status,
        cancel_requested: false,
        created_at: CAPTURE - created,
        updated_at: CAPTURE - updated,
        error_json: None,
        progress: None,
        ran: None,
    }
}

const SHARED: &str = r#"{"schema_version":2,"code":"engine.source_override.shared","message":"service \"web\" --source path \"/src/web\" is already pinned by active instance \"alpha\"","remediation":"run `stackless down alpha` first, or pass --dirty","context":{"service":"web","hook":null,"command":null,"source_dir":null,"log_path":null,"log_hint":null,"exit_status":null,"log_tail":null}}"#;

/// The operations of [`rows`]: pending first (oldest first), then finished
/// (newest first), as the store adapter orders them.
fn operations() -> Vec<Operation> {
    let mut up = op(
        "7d41c0de-0000-4000-8000-000000000001",
        "charlie",
        "up",
        OpStatus::Running,
        125,
        1,
    );
    up.cancel_requested = true;
    up.instance_id = Some("cccccccccccccccccccccccccccccccc".into());
    up.progress = Some(StepProgress {
        event: "Started".into(),
        step_id: "start:web".into(),
        index: 2,
        total: 3,
    });
    let mut down = op(
        "3f2c9a1e-0000-4000-8000-000000000002",
        "alpha",
        "down",
        OpStatus::Running,
        3,
        3,
    );
    down.instance_id = Some("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into());
    let queued = op(
        "9b0e5a77-0000-4000-8000-000000000003",
        "alpha",
        "up",
        OpStatus::Queued,
        2,
        2,
    );
    let mut failed = op(
        "c0ffee00-0000-4000-8000-000000000004",
        "bravo",
        "up",
        OpStatus::Failed,
        600,
        595,
    );
    failed.error_json = Some(SHARED.into());
    let succeeded = op(
        "d00dfeed-0000-4000-8000-000000000005",
        "delta",
        "down",
        OpStatus::Succeeded,
        900,
        898,
    );
    let mut cancelled = op(
        "e1e10000-0000-4000-8000-000000000006",
        "echo",
        "gc",
        OpStatus::Cancelled,
        1_000,
        1_000,
    );
    cancelled.cancel_requested = true;
    vec![up, down, queued, failed, succeeded, cancelled]
}

fn rows() -> Rows {
    let mut alpha = instance("alpha", Status::Active, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    alpha.lock = Some(Box::new(OpLock {
        operation: "down".into(),
        holder_pid: 4242,
        holder_start_time: CAPTURE - 86_400,
        acquired_at: CAPTURE - 3,
        holder_host: Some("vm".into()),
        claim_id: Some("5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d".into()),
    }));
    let mut bravo = instance("bravo", Status::Active, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    bravo.lease = None;
    Rows {
        generation: Generation::new(14),
        instances: vec![
            alpha,
            bravo,
            instance(
                "charlie",
                Status::Active,
                "cccccccccccccccccccccccccccccccc",
            ),
            instance(
                "delta",
                Status::Tombstoned,
                "dddddddddddddddddddddddddddddddd",
            ),
            instance(
                "echo",
                Status::Tombstoned,
                "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
            ),
        ]
        .into(),
        reap_attempts: vec![],
        operations: operations(),
        ..Rows::default()
    }
}

fn snapshot(rows: Rows) -> Arc<Snapshot> {
    let mut liveness = LockLiveness::default();
    liveness.insert("alpha".into(), Liveness::Alive);
    Arc::new(Snapshot::new(rows, liveness))
}

fn app() -> App {
    let mut app = App::new(config(), CAPTURE);
    assert_eq!(app.handle(Event::Snapshot(snapshot(rows())), CAPTURE), None);
    app.handle(
        Event::Controller(ControllerState {
            pid: Some(4242),
            lease_reaper: Some(true),
            persistence_warning: Some(
                "leases enforced only while the daemon happens to be running: cannot run launchctl: No such file or directory (os error 2)".into(),
            ),
            proxy_port: Some(39171),
        }),
        CAPTURE,
    );
    app
}

fn focus_operations(app: &mut App) {
    press(app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Operations);
}

fn last_activity(app: &App) -> (Actor, String, ActivityKind, String) {
    let logged = app.activity().last().expect("an activity entry");
    (
        logged.entry.actor,
        logged.entry.instance.clone(),
        logged.entry.kind,
        logged.entry.detail.clone(),
    )
}

#[test]
fn operations_pane_at_120x40_and_80x24() {
    let app = app();
    let text = render_app(&app, 120, 40);
    assert_snapshot!("operations_120x40", text);
    assert!(text.contains("start:web 2/3 · cancel requested"), "{text}");
    assert!(
        text.contains("engine.source_override.shared: service"),
        "{text}"
    );
    assert!(text.contains("controller: pid 4242"), "{text}");
    assert!(text.contains("c cancel op"), "{text}");
    assert_snapshot!("operations_80x24", render_app(&app, 80, 24));
    // The pane alone: every state in one table.
    assert_snapshot!(
        "operations_pane_120x9",
        render_pane(&app, 120, 9, panes::operations::render)
    );
}

#[test]
fn operations_pane_is_absent_on_a_v4_store() {
    let mut app = App::new(config(), CAPTURE);
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    let text = render_app(&app, 120, 40);
    assert!(!text.contains("Operations"), "{text}");
    assert!(!text.contains("controller:"), "{text}");
    assert!(!text.contains("cancel op"), "{text}");
    let areas = ui::layout(&app, ratatui::layout::Rect::new(0, 0, 120, 40));
    assert!(areas.operations.is_empty());
    // Tab skips the absent pane.
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Backoffs);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Instances);
    // And `c` refuses without asking anything.
    assert_eq!(press(&mut app, KeyCode::Char('c')), None);
    assert!(app.confirming_cancel().is_none());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("refused: store schema v4 has no controller operations")
    );
}

#[test]
fn header_shows_the_controller_and_its_persistence_warning() {
    let mut app = app();
    assert_snapshot!(
        "header_controller_120x4",
        render_pane(&app, 120, 4, panes::header::render)
    );
    app.handle(Event::Controller(ControllerState::default()), CAPTURE);
    let text = render_pane(&app, 120, 3, panes::header::render);
    assert!(text.contains("controller: not running"), "{text}");
    assert!(!text.contains("stackless:"), "{text}");
}

/// Reached through `--controller`: the header says where the console runs
/// (`on HOST`), and a hostile host text is drawn sanitized.
#[test]
fn header_shows_the_host_it_was_reached_on() {
    let mut config = config();
    config.host = Some("fleet-1.example".into());
    let mut app = App::new(config, CAPTURE);
    app.handle(Event::Snapshot(snapshot(rows())), CAPTURE);
    assert_snapshot!(
        "header_on_host_120x2",
        render_pane(&app, 120, 2, panes::header::render)
    );
    let mut config = self::config();
    config.host = Some("evil\x1b[2J".into());
    let app = App::new(config, CAPTURE);
    let text = render_pane(&app, 120, 2, panes::header::render);
    assert!(text.contains("on evil␛[2J"), "{text}");
    // A long alias is cut, not the store path or the schema, at 80 columns.
    let mut config = self::config();
    config.store_label = "/srv/stackless/state.db".into();
    let store = config.store_label.clone();
    config.host = Some(format!("fleet-{}", "x".repeat(90)));
    let mut app = App::new(config, CAPTURE);
    app.handle(Event::Snapshot(snapshot(rows())), CAPTURE);
    let text = render_pane(&app, 80, 2, panes::header::render);
    let first = text.lines().next().unwrap_or_default();
    assert!(first.contains("on fleet-xx"), "{text}");
    assert!(first.contains('…'), "{text}");
    assert!(first.contains(&store), "{text}");
    assert!(
        first.contains("/srv/stackless/state.db  │  schema v14"),
        "{text}"
    );
}

#[test]
fn c_asks_naming_the_operation_and_y_asks_the_console() {
    let mut app = app();
    focus_operations(&mut app);
    // Row 3: the queued `up` on alpha.
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(press(&mut app, KeyCode::Char('c')), None);
    let asked = app.confirming_cancel().expect("a question").clone();
    assert_eq!(
        ui::opview::cancel_question(&asked, app.stackless()),
        "Cancel up alpha (op 9b0e…)? This runs: stackless operation cancel \
         9b0e5a77-0000-4000-8000-000000000003 --json [y/N]"
    );
    let text = render_app(&app, 80, 24);
    assert!(
        text.contains("Cancel up alpha (op 9b0e…)? This runs:"),
        "{text}"
    );
    assert_snapshot!("confirm_cancel_80x24", text);
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::CancelOperation {
            id: "9b0e5a77-0000-4000-8000-000000000003".into(),
            instance: "alpha".into(),
            verb: "up".into(),
        })
    );
    assert!(app.confirming_cancel().is_none());
    // Default No: any other key closes it, and nothing runs.
    press(&mut app, KeyCode::Char('c'));
    assert!(app.confirming_cancel().is_some());
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert!(app.confirming_cancel().is_none());
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "alpha".into(),
            ActivityKind::Aborted,
            "cancel of up not confirmed".into()
        )
    );
}

#[test]
fn c_on_an_instance_cancels_its_pending_operation() {
    let mut app = app();
    select(&mut app, "charlie");
    // charlie's running `up` already has a cancel requested.
    assert_eq!(press(&mut app, KeyCode::Char('c')), None);
    assert!(app.confirming_cancel().is_none());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("refused: cancel already requested for up")
    );
    select(&mut app, "delta");
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("refused: no queued or running operation on delta")
    );
}

#[test]
fn c_refuses_a_running_down_before_running_anything() {
    let mut app = app();
    focus_operations(&mut app);
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(
        app.selected_operation().map(|o| o.verb.as_str()),
        Some("down")
    );
    assert_eq!(press(&mut app, KeyCode::Char('c')), None);
    assert!(app.confirming_cancel().is_none());
    let flash =
        "refused: a running down cannot be cancelled: it must reach a safe completion point";
    assert_eq!(app.flash().map(|f| f.text.as_str()), Some(flash));
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "alpha".into(),
            ActivityKind::Refused,
            "a running down cannot be cancelled: it must reach a safe completion point".into()
        )
    );
    let drained = app.drain_outbox();
    assert_eq!(drained.len(), 1, "the refusal is audited");
}

#[test]
fn c_is_off_on_a_read_only_console() {
    let mut config = config();
    config.write_keys = Err("the store is open read-only (--read-only): r and d are off".into());
    let mut app = App::new(config, CAPTURE);
    app.handle(Event::Snapshot(snapshot(rows())), CAPTURE);
    focus_operations(&mut app);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(press(&mut app, KeyCode::Char('c')), None);
    assert!(app.confirming_cancel().is_none());
    // Once the refusal's flash is gone, the footer says why.
    app.handle(Event::Tick, CAPTURE + 5);
    let text = render_pane(&app, 250, 1, panes::footer::render);
    assert!(
        text.contains("(r/d/c/L/v off: the store is open read-only"),
        "{text}"
    );
}

#[test]
fn enter_opens_a_failed_operation_with_its_remediation() {
    let mut app = app();
    focus_operations(&mut app);
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        Some(Effect::Io(Request::OperationEvents {
            id: "c0ffee00-0000-4000-8000-000000000004".into()
        }))
    );
    let (id, op) = app.operation_open().expect("the overlay");
    assert_eq!(id, "c0ffee00-0000-4000-8000-000000000004");
    let lines = panes::operation_overlay::lines(
        id,
        op,
        app.operation_events(),
        CAPTURE,
        &jiff::tz::TimeZone::UTC,
    );
    assert_eq!(
        lines,
        [
            "id            c0ffee00-0000-4000-8000-000000000004",
            "verb          up",
            "instance      bravo",
            "birth         - (not bound)",
            "status        failed",
            "submitted     2026-11-29T13:48:06Z (10m 00s ago)",
            "finished      2026-11-29T13:48:11Z (9m 55s ago)",
            "took          ≤5s",
            "cancel        no",
            "code          engine.source_override.shared",
            "message       service \"web\" --source path \"/src/web\" is already pinned by active instance \"alpha\"",
            "remediation   run `stackless down alpha` first, or pass --dirty",
            "events        reading…",
        ]
    );
    // In another zone, the times say it.
    let ist = jiff::tz::TimeZone::posix("IST-5:30").unwrap();
    let lines = panes::operation_overlay::lines(id, op, None, CAPTURE, &ist);
    assert_eq!(
        lines[5],
        "submitted     2026-11-29 19:18:06 IST (10m 00s ago)"
    );
    assert_eq!(
        lines[6],
        "finished      2026-11-29 19:18:11 IST (9m 55s ago)"
    );
    assert_snapshot!("operation_failed_120x40", render_app(&app, 120, 40));
    // `c` in the overlay names this (finished) operation and refuses.
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("refused: operation already failed")
    );
    press(&mut app, KeyCode::Esc);
    assert!(app.operation_open().is_none());
}

#[test]
fn instances_rows_show_the_pending_operation() {
    let app = app();
    let text = render_pane(&app, 120, 9, panes::instances::render);
    assert_snapshot!("instances_pending_120x9", text);
    assert!(
        text.contains("down running 3s; down by pid 4242 on vm, alive"),
        "{text}"
    );
    assert!(
        text.contains("up running 2m 05s · cancel requested"),
        "{text}"
    );
}

#[test]
fn detail_shows_the_birth_dirty_and_claim_id() {
    let mut app = app();
    select(&mut app, "alpha");
    assert!(matches!(
        press(&mut app, KeyCode::Enter),
        Some(Effect::Io(Request::OpenDetail { .. }))
    ));
    let text = render_app(&app, 120, 60);
    for want in [
        "   instance_id      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ",
        "   namespace        sl-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ",
        "   dirty            no ",
        "   claim_id         5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d ",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
}

fn activity_lines(app: &App) -> Vec<String> {
    app.activity()
        .entries()
        .iter()
        .map(|l| ui::view::activity_line(&l.entry, l.count, &jiff::tz::TimeZone::UTC))
        .collect()
}

#[test]
fn observed_events_from_two_snapshots() {
    let mut app = app();
    // The first snapshot reports nothing.
    assert!(activity_lines(&app).is_empty());
    let mut next = rows();
    // alpha's down finished: alpha tombstoned; its queued up now runs.
    next.instances[0].status = Status::Tombstoned;
    next.instances[0].lease = None;
    next.instances[0].lock = None;
    next.instances[0].tombstoned_at = Some(CAPTURE + 5);
    next.instances.push(instance(
        "foxtrot",
        Status::Active,
        "ffffffffffffffffffffffffffffffff",
    ));
    let mut ops = operations();
    let mut down = ops.remove(1);
    down.status = OpStatus::Succeeded;
    down.updated_at = CAPTURE + 2;
    let mut up = ops.remove(1);
    up.status = OpStatus::Running;
    let mut failed_up = ops.remove(0);
    failed_up.status = OpStatus::Failed;
    failed_up.updated_at = CAPTURE + 4;
    failed_up.cancel_requested = false;
    failed_up.error_json =
        Some(SHARED.replace("engine.source_override.shared", "local.service_died"));
    next.operations = vec![up, failed_up, down];
    next.operations.extend(ops);
    let later = CAPTURE + 10;
    app.handle(Event::Snapshot(snapshot(next.clone())), later);
    // What changed is logged after the frame, as the render loop does.
    drop(app.settle());
    assert_eq!(
        activity_lines(&app),
        [
            "13:58:16 observed alpha tombstoned",
            "13:58:16 observed foxtrot appeared",
            "13:58:16 controller charlie failed: up in ≤2m 09s (queue wait included): local.service_died: service \"web\" --source path \"/src/web\" is already pinned by active instance \"alpha\"",
            "13:58:16 controller alpha succeeded: down in ≤5s (queue wait included)",
        ]
    );
    // The same rows again: nothing is repeated.
    app.handle(Event::Snapshot(snapshot(next)), later + 1);
    assert_eq!(activity_lines(&app).len(), 4);
}

#[test]
fn the_consoles_own_teardown_is_not_reported_as_observed() {
    let mut app = app();
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "alpha",
            ActivityKind::Started,
            "",
        )),
        CAPTURE,
    );
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE + 3,
            Actor::Reaper,
            "alpha",
            ActivityKind::Reaped,
            "",
        )),
        CAPTURE + 3,
    );
    let mut next = rows();
    next.instances[0].status = Status::Tombstoned;
    next.operations[1].status = OpStatus::Succeeded;
    // The `down` its teardown submitted, created while it ran.
    next.operations[1].created_at = CAPTURE + 1;
    app.handle(Event::Snapshot(snapshot(next)), CAPTURE + 4);
    let lines = activity_lines(&app);
    assert_eq!(
        lines,
        [
            "13:58:06 reaper alpha tearing down",
            "13:58:09 reaper alpha reaped"
        ],
        "{lines:?}"
    );
}

/// A teardown killed at this console's deadline that the controller then
/// finishes: a failure until the store shows the instance tombstoned, then
/// said and counted as torn down after all (an Activity line, audited; the
/// Activity title's reaped and failed counts).
#[test]
fn a_deadline_kill_the_controller_finishes_is_amended_to_torn_down() {
    let mut app = app();
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "alpha",
            ActivityKind::Started,
            "",
        )),
        CAPTURE,
    );
    let failed = Activity::new(
        CAPTURE + 1,
        Actor::Reaper,
        "alpha",
        ActivityKind::Failed,
        "timed out after 1s (attempt 1, retry at 2026-11-29T13:59:07Z)",
    )
    .with_envelope("timed out after 1s");
    app.handle(Event::Activity(failed), CAPTURE + 1);
    let title = |app: &App| render_pane(app, 120, 6, panes::activity::render);
    assert!(
        title(&app).contains("failed ▁▁▁▁▁▁▁▁▁▁▁█ 1"),
        "{}",
        title(&app)
    );
    assert!(app.drain_outbox().is_empty());
    // The controller finishes the down: alpha tombstoned.
    let mut next = rows();
    next.instances[0].status = Status::Tombstoned;
    next.instances[0].lease = None;
    next.instances[0].lock = None;
    next.instances[0].tombstoned_at = Some(CAPTURE + 20);
    app.handle(Event::Snapshot(snapshot(next)), CAPTURE + 30);
    drop(app.settle());
    assert_eq!(
        activity_lines(&app),
        [
            "13:58:06 reaper alpha tearing down",
            // The retry as a clock time, as the line's own.
            "13:58:07 reaper alpha failed: timed out after 1s (attempt 1, retry at 13:59:07)",
            "13:58:36 reaper alpha reaped: torn down after all: down was killed at this console's deadline (timed out after 1s), then the store showed the instance tombstoned: the controller finished the teardown",
        ]
    );
    // Audited (the render loop hands the outbox to the audit trail).
    let audited: Vec<_> = app
        .drain_outbox()
        .into_iter()
        .map(|a| (a.actor, a.kind, a.instance))
        .collect();
    assert_eq!(
        audited,
        [(Actor::Reaper, ActivityKind::Reaped, "alpha".to_owned())]
    );
    // Counted as reaped, not failed (beside delta's `down`, 898 s before
    // the first snapshot, which the store holds).
    let text = title(&app);
    assert!(
        text.contains(
            "1h reaped ▁▁▁▁▁▁▁▁█▁▁█ 2 · failed ▁▁▁▁▁▁▁▁▁▁▁▁ 0 · by this reaper 1, elsewhere 1 "
        ),
        "{text}"
    );
    assert!(text.contains("failed ▁▁▁▁▁▁▁▁▁▁▁▁ 0"), "{text}");
}

/// The store the released stackless 0.4.0 and its controller wrote
/// (tests/fixtures/README.md, `real-0.4.0-v14.db`), at its capture time:
/// no "newer" banner, its 18 operations (the controller's failed reaps of
/// foxtrot first), and Enter on bravo's failed `up` shows the real code and
/// remediation.
#[test]
fn a_real_0_4_0_store_at_120x40() {
    const CAPTURE_V14: i64 = 1_796_118_148;
    let mut app = App::new(config(), CAPTURE_V14);
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("real-0.4.0-v14.db"))),
        CAPTURE_V14,
    );
    let text = render_app(&app, 120, 40);
    assert!(!text.contains("newer"), "{text}");
    assert!(text.contains("schema v14"), "{text}");
    assert!(
        text.contains("Operations 0 pending · 18 finished"),
        "{text}"
    );
    assert!(text.contains("engine.teardown.survivors"), "{text}");
    // The store's `down`s of the last hour, finished before this first
    // snapshot, are counted (charlie twice, delta; foxtrot's six failed
    // reaps and nosuch's refusal), though no line is logged for them.
    assert!(
        text.contains(
            "Activity (UTC) 1h reaped ▁▁▁▁▁▁▁▁▁▁█▅ 3 · failed ▁▁▁▁▁▁▁▁▁▁▄█ 7 (controller 7) · by elsewhere 3 ─"
        ),
        "{text}"
    );
    assert!(text.contains("no activity yet"), "{text}");
    assert_snapshot!("real_v14_120x40", text);
    // Keys at the store's own clock (the shared `press` uses CAPTURE).
    let key = |app: &mut App, code: KeyCode| {
        app.handle(
            Event::Input(crossterm::event::Event::Key(code.into())),
            CAPTURE_V14,
        )
    };
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Operations);
    let rows = app.snapshot().finished_operations().to_vec();
    let bravo = rows
        .iter()
        .position(|op| op.instance == "bravo")
        .expect("bravo's up");
    for _ in 0..bravo {
        key(&mut app, KeyCode::Down);
    }
    // bravo's `up` was refused before its first step: no events.
    let Some(Effect::Io(Request::OperationEvents { id })) = key(&mut app, KeyCode::Enter) else {
        panic!("Enter asks for the events");
    };
    let (_dir, mut store) = crate::common::ui::fixture_store("real-0.4.0-v14.db");
    let result = store.operation_events(&id).map_err(|e| e.to_string());
    app.handle(
        Event::Answer(stackless_tui::event::Answer::OperationEvents { id, result }),
        CAPTURE_V14,
    );
    let text = render_app(&app, 120, 40);
    assert!(text.contains("events        none yet"), "{text}");
    assert!(text.contains("remediation"), "{text}");
    assert!(text.contains("`stackless down alpha`"), "{text}");
    assert_snapshot!("real_v14_bravo_failure_120x40", text);
}

/// A failed `up` that kept its lease, its process alive and its health
/// check failing (the real 0.4.0 store's hotel: observed present and
/// unready, stackless's stage `unhealthy`) is marked on its Instances row
/// from the services read's counts; the dead services keep their mark.
#[test]
fn a_real_0_4_0_unhealthy_service_on_its_row_at_120x40() {
    const CAPTURE_V14: i64 = 1_796_118_148;
    let mut app = App::new(config(), CAPTURE_V14);
    let snapshot = fixture_snapshot("real-0.4.0-v14.db");
    let mut dead = (*snapshot.services_dead).clone();
    for name in ["alpha", "golf", "india"] {
        dead.add(name, 1);
    }
    let counts = dead
        .with_recorded_names(["alpha", "golf", "hotel", "india"])
        .with_unhealthy_names([("hotel", 1)]);
    let snapshot = snapshot.with_services_dead(Arc::new(counts));
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE_V14);
    let text = render_app(&app, 120, 40);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{name}'s row:\n{text}"))
            .to_owned()
    };
    assert!(row("hotel").contains("1 svc unhealthy"), "{text}");
    assert!(!row("hotel").contains("dead"), "{text}");
    assert!(row("india").contains("1 svc dead"), "{text}");
    assert!(!row("alpha").contains("unhealthy"), "{text}");
    assert_snapshot!("real_v14_unhealthy_120x40", text);
}

/// The detail view of a birth on the real 0.4.0 store: what it owns, where
/// its service runs, its revision and what was last observed.
#[test]
fn detail_of_a_real_0_4_0_birth() {
    const CAPTURE_V14: i64 = 1_796_118_148;
    let (_dir, mut store) = crate::common::ui::fixture_store("real-0.4.0-v14.db");
    let mut app = App::new(config(), CAPTURE_V14);
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("real-0.4.0-v14.db"))),
        CAPTURE_V14,
    );
    let key = |app: &mut App, code: KeyCode| {
        app.handle(
            Event::Input(crossterm::event::Event::Key(code.into())),
            CAPTURE_V14,
        )
    };
    key(&mut app, KeyCode::Char('g'));
    while app.selected_instance().map(|i| i.name.as_str()) != Some("alpha") {
        key(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        Some(Effect::Io(Request::OpenDetail {
            name: "alpha".into()
        }))
    );
    app.answer(stackless_tui::event::Answer::Detail {
        name: "alpha".into(),
        result: Ok(store.instance_detail("alpha").unwrap().map(Into::into)),
    });
    let text = render_app(&app, 120, 70);
    for want in [
        "Resources (2)",
        "created  owned     process              local    start:web          19240",
        "ready    borrowed  source-override      local    materialize:web    /home/operator/src/alpha",
        "service:web on local",
        "desired  c77957b661eaf40b",
        "service:web: readiness ready · existence present · configuration applied · 51s ago",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// The header says how the watcher notices commits once it has said:
/// `watch: inotify`, or `watch: poll 100ms` where no watch could be set.
#[test]
fn header_says_how_commits_are_noticed() {
    use stackless_tui::event::WatchMode;
    let mut app = app();
    let first_line = |app: &App| {
        // The rendered text quotes each line.
        render_app(app, 160, 40).lines().next().unwrap().to_owned()
    };
    assert!(!first_line(&app).contains("watch:"));
    app.handle(Event::Watch(WatchMode::Notify), CAPTURE);
    assert!(
        first_line(&app).contains("│  schema v14  │  watch: inotify  "),
        "{}",
        first_line(&app)
    );
    app.handle(
        Event::Watch(WatchMode::Poll(std::time::Duration::from_millis(100))),
        CAPTURE,
    );
    assert!(
        first_line(&app).contains("│  schema v14  │  watch: poll 100ms  "),
        "{}",
        first_line(&app)
    );
}

/// The header's second line says who records the store once the console
/// said it (docs/history.md), after the sort; a line too narrow for both
/// drops who records first and keeps the sort.
#[test]
fn header_says_who_records_and_drops_it_before_the_sort() {
    let mut app = app();
    let second_line = |app: &App, width: u16| {
        render_app(app, width, 40)
            .lines()
            .nth(1)
            .unwrap()
            .to_owned()
    };
    assert!(!second_line(&app, 200).contains("record"));
    app.handle(
        Event::Recording("recording (7d, 256 MB)".to_owned()),
        CAPTURE,
    );
    let wide = second_line(&app, 200);
    assert!(
        wide.contains("  │  sort: lease expiry  │  recording (7d, 256 MB)"),
        "{wide}"
    );
    let narrow = second_line(&app, 100);
    assert!(
        !narrow.contains("recording") && narrow.contains("sort: lease expiry"),
        "{narrow}"
    );
}

/// The cancel confirmation, like every other: a `y` read before the dialog
/// was first drawn (queued behind the `c`) is dropped; one read after it
/// answers.
#[test]
fn a_y_queued_behind_c_does_not_answer_the_cancel_question() {
    use std::time::{Duration, Instant};
    let at = |read: Instant, c: char| {
        Event::InputAt(
            crossterm::event::Event::Key(crossterm::event::KeyEvent::from(KeyCode::Char(c))),
            read,
        )
    };
    let mut app = app();
    focus_operations(&mut app);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    let burst = Instant::now();
    assert_eq!(app.handle(at(burst, 'c'), CAPTURE), None);
    assert_eq!(app.handle(at(burst, 'y'), CAPTURE), None);
    assert!(app.confirming_cancel().is_some(), "still asked");
    app.drawn(burst + Duration::from_millis(5));
    assert_eq!(app.handle(at(burst, 'y'), CAPTURE), None, "typed ahead");
    assert!(app.confirming_cancel().is_some());
    assert!(matches!(
        app.handle(at(burst + Duration::from_millis(9), 'y'), CAPTURE),
        Some(Effect::CancelOperation { .. })
    ));
    assert!(app.confirming_cancel().is_none());
}

/// charlie reborn: the same name, another birth.
fn reborn(rows: &mut Rows, name: &str) {
    for instance in rows.instances.iter_mut() {
        if instance.name == name {
            instance.birth = Some(Birth::new(
                "ffffffffffffffffffffffffffffffff",
                "sl-ffffffffffffffffffffffffffffffff",
            ));
        }
    }
}

#[test]
fn d_behind_a_running_up_asks_to_queue_a_down_and_y_asks_the_console() {
    let mut app = app();
    select(&mut app, "charlie");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert!(
        app.confirming().is_none(),
        "not the plain teardown question"
    );
    let (instance, behind, _) = app.confirming_queue_down().expect("the queue question");
    assert_eq!(
        (instance.name.as_str(), behind.verb.as_str()),
        ("charlie", "up")
    );
    let text = render_app(&app, 250, 40);
    assert!(
        text.contains(
            "Queue a teardown of charlie behind its running up? It runs after the current \
             operation. This runs: stackless down charlie --no-wait --json [y/N]"
        ),
        "{text}"
    );
    assert!(text.contains(" Confirm queued teardown "), "{text}");
    let Some(Effect::QueueDown { instance, behind }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("y queues the teardown");
    };
    assert_eq!((instance.name.as_str(), behind.as_str()), ("charlie", "up"));
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("queueing a teardown of charlie behind its up")
    );
}

#[test]
fn the_queue_question_at_120x40_and_80x24() {
    let mut app = app();
    select(&mut app, "charlie");
    press(&mut app, KeyCode::Char('d'));
    assert_snapshot!("queue_down_question_120x40", render_app(&app, 120, 40));
    assert_snapshot!("queue_down_question_80x24", render_app(&app, 80, 24));
}

#[test]
fn d_behind_a_pending_down_is_refused_and_n_is_logged() {
    let mut app = app();
    // alpha's oldest pending operation is a running `down`.
    select(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert!(app.confirming_queue_down().is_none());
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "alpha".into(),
            ActivityKind::Refused,
            "refused: a down of alpha is already running (op 3f2c…); nothing queued".into()
        )
    );
    select(&mut app, "charlie");
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    assert!(app.confirming_queue_down().is_none());
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "charlie".into(),
            ActivityKind::Aborted,
            "queued teardown not confirmed".into()
        )
    );
}

#[test]
fn a_queue_question_answered_after_a_rebirth_or_the_end_is_refused() {
    let mut app = app();
    select(&mut app, "charlie");
    press(&mut app, KeyCode::Char('d'));
    let mut changed = rows();
    reborn(&mut changed, "charlie");
    app.handle(Event::Snapshot(snapshot(changed)), CAPTURE + 1);
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "charlie".into(),
            ActivityKind::Refused,
            "refused: the birth asked about (cccccccccccccccccccccccccccccccc) is not the instance's (ffffffffffffffffffffffffffffffff): it was born again, or another store was read".into()
        )
    );
    // The up it would wait behind ended meanwhile: nothing to queue behind.
    let mut app = self::app();
    select(&mut app, "charlie");
    press(&mut app, KeyCode::Char('d'));
    let mut ended = rows();
    ended.operations.retain(|op| op.instance != "charlie");
    app.handle(Event::Snapshot(snapshot(ended)), CAPTURE + 1);
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(
        last_activity(&app).3,
        "refused: the up it would wait behind has ended; press d again"
    );
}

#[test]
fn d_behind_a_pending_operation_is_off_on_a_read_only_console() {
    let mut config = config();
    config.write_keys = Err("the store is open read-only (--read-only): r and d are off".into());
    let mut app = App::new(config, CAPTURE);
    app.handle(Event::Snapshot(snapshot(rows())), CAPTURE);
    select(&mut app, "charlie");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert!(app.confirming_queue_down().is_none());
    assert_eq!(
        last_activity(&app).3,
        "the store is open read-only (--read-only): r and d are off"
    );
}

/// The overlay of alpha's real `up` (the released 0.4.0's events in
/// `real-0.4.0-v14.db`): every step event in the order written, each with
/// its time to the millisecond and its step's duration, the wait in the
/// queue apart from the run; at 120x40 and 80x24.
#[test]
fn the_overlay_lists_every_event_of_a_real_up() {
    const CAPTURE_V14: i64 = 1_796_118_148;
    let (_dir, mut store) = crate::common::ui::fixture_store("real-0.4.0-v14.db");
    let mut app = App::new(config(), CAPTURE_V14);
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("real-0.4.0-v14.db"))),
        CAPTURE_V14,
    );
    let key = |app: &mut App, code: KeyCode| {
        app.handle(
            Event::Input(crossterm::event::Event::Key(code.into())),
            CAPTURE_V14,
        )
    };
    key(&mut app, KeyCode::Tab);
    let alpha = app
        .snapshot()
        .operations
        .iter()
        .position(|op| op.instance == "alpha" && op.verb == "up")
        .expect("alpha's up");
    for _ in 0..alpha {
        key(&mut app, KeyCode::Down);
    }
    let Some(Effect::Io(Request::OperationEvents { id })) = key(&mut app, KeyCode::Enter) else {
        panic!("Enter asks for the events");
    };
    assert_eq!(id, "9b8fd650-07e8-4ff7-8cd7-0a952e02007b");
    let (_, op) = app.operation_open().expect("the overlay");
    let op = op.cloned();
    let result = store.operation_events(&id).map_err(|e| e.to_string());
    app.handle(
        Event::Answer(stackless_tui::event::Answer::OperationEvents {
            id: id.clone(),
            result,
        }),
        CAPTURE_V14,
    );
    let lines = panes::operation_overlay::lines(
        &id,
        op.as_ref(),
        app.operation_events(),
        CAPTURE_V14,
        &jiff::tz::TimeZone::UTC,
    );
    let events: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("events"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        events,
        [
            "events        6 in order (times UTC)",
            "              09:36:34.962  Started    materialize:web 1/3",
            "              09:36:34.993  Completed  materialize:web 1/3  28ms",
            "              09:36:35.009  Started    start:web 2/3",
            "              09:36:35.067  Completed  start:web 2/3  50ms",
            "              09:36:35.090  Started    health:web 3/3",
            "              09:36:35.743  Completed  health:web 3/3  645ms",
        ]
    );
    assert_snapshot!("real_v14_alpha_up_events_120x40", render_app(&app, 120, 40));
    assert_snapshot!("real_v14_alpha_up_events_80x24", render_app(&app, 80, 24));
}

/// A running operation's overlay follows it: a snapshot where it changed
/// asks for its events again, one where it did not asks nothing; an
/// answer for another operation is dropped; a failed refresh keeps the
/// events read.
#[test]
fn the_overlay_follows_a_running_operation() {
    use stackless_tui::event::Answer;
    use stackless_tui::model::operation::OpEvent;
    use stackless_tui::ui::OpEvents;
    let mut app = app();
    focus_operations(&mut app);
    // The first row: charlie's running up.
    let Some(Effect::Io(Request::OperationEvents { id })) = press(&mut app, KeyCode::Enter) else {
        panic!("Enter asks for the events");
    };
    assert_eq!(id, "7d41c0de-0000-4000-8000-000000000001");
    assert_eq!(app.operation_events(), Some(&OpEvents::Loading));
    let started = |seq: i64, step: &str, index: i64| {
        OpEvent::parse(
            seq,
            &format!(
                r#"{{"event":"Started","step_id":"{step}","index":{index},"total":3,"at_epoch_ms":{}}}"#,
                (CAPTURE - 10 + seq) * 1000
            ),
            Some(CAPTURE - 10 + seq),
        )
    };
    let answer = |id: &str, result| {
        Event::Answer(Answer::OperationEvents {
            id: id.into(),
            result,
        })
    };
    app.handle(answer("another", Ok(vec![started(9, "x", 1)])), CAPTURE);
    assert_eq!(app.operation_events(), Some(&OpEvents::Loading));
    app.handle(
        answer(&id, Ok(vec![started(1, "materialize:web", 1)])),
        CAPTURE,
    );
    // The same rows again: nothing to read.
    assert_eq!(
        app.handle(Event::Snapshot(snapshot(rows())), CAPTURE + 1),
        None
    );
    // Its newest step moved on: read again.
    let mut moved = rows();
    moved.operations[0].progress = Some(StepProgress {
        event: "Started".into(),
        step_id: "health:web".into(),
        index: 3,
        total: 3,
    });
    assert_eq!(
        app.handle(Event::Snapshot(snapshot(moved)), CAPTURE + 2),
        Some(Effect::Io(Request::OperationEvents { id: id.clone() }))
    );
    app.handle(answer(&id, Err("database is locked".into())), CAPTURE + 2);
    assert_eq!(
        app.operation_events(),
        Some(&OpEvents::Ready(vec![started(1, "materialize:web", 1)])),
        "a failed refresh keeps what was read"
    );
    app.handle(
        answer(
            &id,
            Ok(vec![
                started(1, "materialize:web", 1),
                started(2, "start:web", 2),
                started(3, "health:web", 3),
            ]),
        ),
        CAPTURE + 2,
    );
    let text = render_app(&app, 120, 40);
    for line in [
        "events        3 in order (times UTC)",
        "13:57:57.000  Started    materialize:web 1/3",
        "13:57:58.000  Started    start:web 2/3",
        "13:57:59.000  Started    health:web 3/3",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

/// More events than the screen has rows for: the newest stay in view,
/// the title saying which are shown.
#[test]
fn the_overlay_keeps_the_newest_events_in_view() {
    use stackless_tui::event::Answer;
    use stackless_tui::model::operation::OpEvent;
    let mut app = app();
    focus_operations(&mut app);
    let Some(Effect::Io(Request::OperationEvents { id })) = press(&mut app, KeyCode::Enter) else {
        panic!("Enter asks for the events");
    };
    let events = (1..=40)
        .map(|n| {
            OpEvent::parse(
                n,
                &format!(
                    r#"{{"event":"Started","step_id":"step-{n}","index":{n},"total":40,"at_epoch_ms":{}}}"#,
                    (CAPTURE - 100 + n) * 1000
                ),
                Some(CAPTURE - 100 + n),
            )
        })
        .collect();
    app.handle(
        Event::Answer(Answer::OperationEvents {
            id,
            result: Ok(events),
        }),
        CAPTURE,
    );
    let text = render_app(&app, 80, 24);
    assert!(
        text.contains("events        40 in order (times UTC)"),
        "{text}"
    );
    assert!(text.contains("· events 29-40 of 40"), "{text}");
    assert!(
        text.contains("13:57:06.000  Started    step-40 40/40"),
        "{text}"
    );
    assert!(text.contains("step-29 29/40"), "{text}");
    assert!(!text.contains("step-28 28/40"), "{text}");
}

/// A bulk `d` over marks on a 0.4.0 store: the marked instance whose `up`
/// runs is queued behind it, counted apart in the question; the others
/// go as the single `d` would (torn down now, or refused).
#[test]
fn bulk_d_queues_those_with_a_pending_operation_counted_apart() {
    let mut app = app();
    for name in ["alpha", "bravo", "charlie"] {
        select(&mut app, name);
        press(&mut app, KeyCode::Char(' '));
    }
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    let bulk = app.confirming_bulk().expect("the bulk question");
    assert_eq!(
        bulk.question(),
        "Tear down 2 of 3 marked instances (alpha, bravo, charlie)? This runs: stackless down bravo \
         --json. 1 has a pending operation: its teardown is queued behind it, to run after the \
         current operation: stackless down charlie --no-wait --json. Refused, not run: alpha: a \
         down of alpha is already running (op 3f2c…); nothing queued. [y/N]"
    );
    let Some(Effect::Bulk { jobs, queued, .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("y runs the bulk teardown");
    };
    let torn: Vec<&str> = jobs.iter().map(|(i, _)| i.name.as_str()).collect();
    let behind: Vec<(&str, &str)> = queued
        .iter()
        .map(|(i, verb)| (i.name.as_str(), verb.as_str()))
        .collect();
    assert_eq!((torn, behind), (vec!["bravo"], vec![("charlie", "up")]));
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some(
            "teardown requested for 1 instances, 1 queued behind pending operations, 1 refused \
             (see Activity)"
        )
    );
}

/// `:down NAME` is the single `d`: a named instance whose `up` runs gets
/// the queue question; `:down NAME NAME` goes the bulk way, the queued one
/// counted apart.
#[test]
fn colon_down_queues_behind_a_pending_operation() {
    let type_command = |app: &mut App, text: &str| {
        press(app, KeyCode::Char(':'));
        for c in text.chars() {
            press(app, KeyCode::Char(c));
        }
        press(app, KeyCode::Enter)
    };
    let mut app = app();
    assert_eq!(type_command(&mut app, "down charlie"), None);
    let (instance, op, _) = app.confirming_queue_down().expect("the queue question");
    assert_eq!(
        (instance.name.as_str(), op.verb.as_str()),
        ("charlie", "up")
    );
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(type_command(&mut app, "down bravo charlie"), None);
    let bulk = app.confirming_bulk().expect("the bulk question");
    assert_eq!(
        bulk.question(),
        "Tear down 2 instances (bravo, charlie)? This runs: stackless down bravo --json. 1 has a \
         pending operation: its teardown is queued behind it, to run after the current \
         operation: stackless down charlie --no-wait --json [y/N]"
    );
    let Some(Effect::Bulk { jobs, queued, .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("y runs it");
    };
    assert_eq!((jobs.len(), queued.len()), (1, 1));
}

/// With the selection on the oldest finished operation, the pending ones
/// stay on screen, pinned above the finished rows (at 80x24 the pane has 3
/// data rows); when more are pending than fit, the pane says `… N more
/// pending`.
#[test]
fn pending_operations_stay_on_screen_at_80x24() {
    let build = |pending: usize| {
        let mut ops = Vec::new();
        for i in 0..pending {
            let status = if i == 0 {
                OpStatus::Running
            } else {
                OpStatus::Queued
            };
            let verb = ["up", "down", "verify"][i % 3];
            ops.push(op(&format!("p{i}"), "charlie", verb, status, 100, 100));
        }
        for i in 0..10 {
            ops.push(op(
                &format!("f{i}"),
                "delta",
                "up",
                OpStatus::Succeeded,
                900,
                890,
            ));
        }
        let mut rows = rows();
        rows.operations = ops;
        let mut app = App::new(config(), CAPTURE);
        app.handle(Event::Snapshot(snapshot(rows)), CAPTURE);
        focus_operations(&mut app);
        press(&mut app, KeyCode::Char('G'));
        app
    };
    let app = build(2);
    let text = render_app(&app, 80, 24);
    assert_snapshot!("operations_pending_pinned_80x24", text);
    assert!(text.contains("2 pending · 10 finished"), "{text}");
    assert!(text.contains("up     charlie  running"), "{text}");
    assert!(text.contains("down   charlie  queued"), "{text}");
    let app = build(5);
    let text = render_app(&app, 80, 24);
    assert_snapshot!("operations_pending_more_80x24", text);
    assert!(text.contains("║  … 3 more pending"), "{text}");
}

/// The overlay of an up with 40 step events (a 5-service stack) shows every
/// one of them: it follows the newest, scrolls with j/k, PgUp/PgDn and g/G
/// (its title says which are shown), and `e` lists all 40.
#[test]
fn the_overlay_scrolls_through_40_events() {
    use stackless_tui::event::Answer;
    use stackless_tui::model::operation::OpEvent;
    let mut app = app();
    focus_operations(&mut app);
    let Some(Effect::Io(Request::OperationEvents { id })) = press(&mut app, KeyCode::Enter) else {
        panic!("Enter asks for the events");
    };
    let steps = ["materialize", "prepare", "start", "health"];
    let events: Vec<OpEvent> = (0..40_i64)
        .map(|seq| {
            let step = steps[usize::try_from(seq / 10).unwrap()];
            let service = ["a", "b", "c", "d", "e"][usize::try_from(seq % 10 / 2).unwrap()];
            let (event, took) = if seq % 2 == 0 {
                ("Started", String::new())
            } else {
                ("Completed", r#","duration_ms":412"#.to_owned())
            };
            OpEvent::parse(
                seq + 1,
                &format!(
                    r#"{{"event":"{event}","step_id":"{step}:{service}","index":{},"total":20,"at_epoch_ms":{}{took}}}"#,
                    seq / 2 + 1,
                    (CAPTURE - 60 + seq) * 1000
                ),
                Some(CAPTURE - 60 + seq),
            )
        })
        .collect();
    app.handle(
        Event::Answer(Answer::OperationEvents {
            id: id.clone(),
            result: Ok(events.clone()),
        }),
        CAPTURE,
    );
    let text = render_app(&app, 120, 40);
    assert_snapshot!("overlay_40_events_120x40", text);
    assert!(text.contains("events 13-40 of 40"), "{text}");
    assert!(text.contains("health:e 20/20"), "{text}");
    let text = render_app(&app, 80, 24);
    assert_snapshot!("overlay_40_events_80x24", text);
    assert!(text.contains("events 29-40 of 40"), "{text}");
    // At 80x24: g shows the oldest, j one more, PgDn a page, G the newest.
    press(&mut app, KeyCode::Char('g'));
    let text = render_app(&app, 80, 24);
    assert_snapshot!("overlay_40_events_top_80x24", text);
    assert!(text.contains("events 1-12 of 40"), "{text}");
    assert!(text.contains("materialize:a 1/20"), "{text}");
    press(&mut app, KeyCode::Char('j'));
    assert!(render_app(&app, 80, 24).contains("events 2-13 of 40"));
    press(&mut app, KeyCode::PageDown);
    assert!(render_app(&app, 80, 24).contains("events 13-24 of 40"));
    press(&mut app, KeyCode::Char('k'));
    assert!(render_app(&app, 80, 24).contains("events 12-23 of 40"));
    press(&mut app, KeyCode::Char('G'));
    assert!(render_app(&app, 80, 24).contains("events 29-40 of 40"));
    // Scrolled back to the bottom, it follows the newest again.
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::PageDown);
    assert_eq!(app.operation_scroll(), None);
    // Live: a new event shows while it follows; scrolled up, it stays put.
    let more = |app: &mut App, n: usize| {
        let mut grown = events.clone();
        grown.extend(grown[..n - 40].to_vec());
        app.handle(
            Event::Answer(Answer::OperationEvents {
                id: id.clone(),
                result: Ok(grown),
            }),
            CAPTURE,
        );
    };
    more(&mut app, 41);
    assert!(render_app(&app, 80, 24).contains("events 30-41 of 41"));
    press(&mut app, KeyCode::Char('g'));
    more(&mut app, 42);
    assert!(render_app(&app, 80, 24).contains("events 1-12 of 42"));
    // `e`: the whole operation, every event listed (42 now).
    press(&mut app, KeyCode::Char('e'));
    let full = app
        .full_text()
        .expect("the full text")
        .text
        .lines
        .join("\n");
    assert!(full.contains("42 in order"), "{full}");
    for step in ["materialize:a 1/20", "prepare:c 8/20", "health:e 20/20"] {
        assert!(full.contains(step), "{step}: {full}");
    }
}

/// At 80x24 with the controller's warning in the header and every pane busy,
/// the Operations pane has 2 data rows; with the selection on an old
/// finished operation the pending one stays on screen, first (its title says
/// `1 pending`).
#[test]
fn the_pending_operation_stays_first_under_a_banner_at_80x24() {
    let mut ops = vec![op("p0", "charlie", "up", OpStatus::Running, 100, 100)];
    for i in 0..10 {
        ops.push(op(
            &format!("f{i}"),
            "delta",
            "down",
            OpStatus::Succeeded,
            900 + i,
            890 + i,
        ));
    }
    let mut rows = rows();
    rows.operations = ops;
    rows.reap_attempts = vec![stackless_tui::model::ReapAttempt {
        instance: "charlie".into(),
        attempts: 2,
        last_error: "boom".into(),
        next_retry_at: CAPTURE + 60,
    }];
    let mut app = App::new(config(), CAPTURE);
    app.handle(Event::Snapshot(snapshot(rows)), CAPTURE);
    app.handle(
        Event::Controller(ControllerState {
            pid: Some(4242),
            lease_reaper: Some(true),
            persistence_warning: Some(
                "leases enforced only while the daemon happens to be running: cannot run launchctl: No such file or directory (os error 2)".into(),
            ),
            proxy_port: Some(39171),
        }),
        CAPTURE,
    );
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "alpha",
            ActivityKind::Started,
            "",
        )),
        CAPTURE,
    );
    focus_operations(&mut app);
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('j'));
    }
    press(&mut app, KeyCode::Tab);
    let text = render_app(&app, 80, 24);
    let pane: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains(" Operations "))
        .take_while(|l| !l.contains(" Backoffs "))
        .collect();
    // The banner takes one row (`b` puts it away): three data rows.
    assert_eq!(pane.len(), 6, "3 data rows: {text}");
    assert!(
        pane[0].contains("Operations 1 pending · 10 finished"),
        "{text}"
    );
    assert!(
        pane[2].starts_with("\"│  up     charlie  running"),
        "{text}"
    );
    assert!(
        pane[4].starts_with("\"│▶ down   delta    succeeded"),
        "{text}"
    );
}

/// At 80x24 each banner takes one row and says how to put it away; `b`
/// folds them into one line and gives the rows back, `b` again shows them.
#[test]
fn b_puts_the_banners_away_and_back_at_80x24() {
    let mut app = app();
    app.handle(
        Event::Controller(ControllerState {
            pid: Some(4242),
            lease_reaper: Some(true),
            persistence_warning: Some(
                "leases enforced only while the daemon happens to be running: cannot run launchctl: No such file or directory (os error 2)".into(),
            ),
            proxy_port: Some(39171),
        }),
        CAPTURE,
    );
    let rows = |text: &str| text.lines().filter(|l| l.starts_with("\"! ")).count();
    let text = render_app(&app, 80, 24);
    assert_eq!(rows(&text), 1, "{text}");
    assert!(
        text.contains(
            "\"! stackless: leases enforced only while the daemon happens to be runn… · b hides\""
        ),
        "{text}"
    );
    assert_eq!(press(&mut app, KeyCode::Char('b')), None);
    assert!(app.banners_away());
    let text = render_app(&app, 80, 24);
    assert_eq!(rows(&text), 1, "{text}");
    assert!(
        text.contains("\"! 1 banner put away (b shows them)"),
        "{text}"
    );
    press(&mut app, KeyCode::Char('b'));
    assert!(!app.banners_away());
    assert!(render_app(&app, 80, 24).contains("· b hides"));
}

const SURVIVORS: &str = r#"{"schema_version":2,"code":"engine.teardown.survivors","message":"teardown of \"foxtrot\" left survivors","remediation":"re-run `stackless down` to retry","context":{"service":null,"hook":null,"command":null,"source_dir":null,"log_path":null,"log_hint":null,"exit_status":null,"log_tail":null}}"#;

/// The Activity title's `failed` count, as drawn: the number after
/// `failed <bars> `.
fn failed_count(app: &App) -> String {
    let text = render_pane(app, 200, 12, panes::activity::render);
    let title = text.lines().next().unwrap_or_default().to_owned();
    let failed = title
        .split(" · ")
        .find_map(|part| part.trim().strip_prefix("failed "))
        .unwrap_or_else(|| panic!("no failed count in {title}"));
    failed
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

/// A failed `down` of foxtrot created `created` seconds after [`CAPTURE`],
/// that ran for `took` seconds.
fn failed_down(id: &str, created: i64, took: i64) -> Operation {
    let mut down = op(id, "foxtrot", "down", OpStatus::Failed, 0, 0);
    down.created_at = CAPTURE + created;
    down.updated_at = CAPTURE + created + took;
    down.error_json = Some(SURVIVORS.into());
    down
}

/// Every failed `down` the controller's lease reaper makes after one of
/// this console's own failed teardowns counts once, by the controller,
/// however soon after (its retries a minute apart): the console's own
/// `down` operation is the reaper's line already; the controller's
/// repeats fold as one line, `x4`, the count at its front.
#[test]
fn every_failed_down_of_the_controller_counts_once_and_folds_exactly() {
    let mut app = App::new(config(), CAPTURE);
    let mut rows = rows();
    rows.instances.push(instance(
        "foxtrot",
        Status::Active,
        "ffffffffffffffffffffffffffffffff",
    ));
    app.handle(Event::Snapshot(snapshot(rows.clone())), CAPTURE);
    let reaper = |at: i64, kind, detail: &str| {
        Event::Activity(Activity::new(at, Actor::Reaper, "foxtrot", kind, detail))
    };
    app.handle(reaper(CAPTURE, ActivityKind::Started, ""), CAPTURE);
    // The console's own `down` (its operation created while it ran).
    let mut ops = vec![failed_down("0000000a-0000-4000-8000-000000000000", 1, 1)];
    app.handle(
        reaper(
            CAPTURE + 2,
            ActivityKind::Failed,
            "engine.teardown.survivors (attempt 1, retry at 2026-11-29T14:08:08Z)",
        ),
        CAPTURE + 2,
    );
    // The controller's lease reaper retries at +30, +60, +90 and +150 s,
    // each taking another time.
    for (k, created) in [30, 60, 90, 150].into_iter().enumerate() {
        let took = i64::try_from(k).unwrap() + 1;
        ops.insert(
            0,
            failed_down(
                &format!("0000000{k}-0000-4000-8000-000000000000"),
                created,
                took,
            ),
        );
        let mut next = rows.clone();
        next.operations.splice(3..3, ops.clone());
        app.handle(Event::Snapshot(snapshot(next)), CAPTURE + created + 5);
        drop(app.settle());
    }
    let lines: Vec<String> = activity_lines(&app)
        .into_iter()
        .filter(|l| l.contains("foxtrot"))
        .collect();
    assert_eq!(
        lines,
        [
            "13:58:06 reaper foxtrot tearing down",
            "13:58:08 reaper foxtrot failed: engine.teardown.survivors (attempt 1, retry at 14:08:08)",
            "14:00:41 x4 controller foxtrot failed: down in ≤4s (queue wait included): engine.teardown.survivors: teardown of \"foxtrot\" left survivors",
        ]
    );
    assert_eq!(failed_count(&app), "5");
}

/// The operator's queued `d` is the operator's when its operation shows
/// up and when it finishes, its lease run out or not: `operator charlie
/// torn down: queued down ran: …`, counted as the operator's (not
/// elsewhere, not the lease reaper's), its tombstone not said again.
#[test]
fn the_operators_queued_down_is_counted_as_the_operators() {
    let mut app = app();
    select(&mut app, "charlie");
    press(&mut app, KeyCode::Char('d'));
    let Some(Effect::QueueDown { .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("y queues the teardown");
    };
    let id = "4a11ce00-0000-4000-8000-000000000007";
    let queued = stackless_tui::controller::queue_down::activity(
        "charlie",
        "up",
        &stackless_tui::controller::queue_down::Outcome::Queued {
            id: id.into(),
            status: "queued".into(),
        },
        CAPTURE + 1,
    );
    app.handle(Event::Activity(queued), CAPTURE + 1);
    // The row shows up queued behind the up, its lease run out meanwhile.
    let mut next = rows();
    next.instances[2].lease = Some(stackless_tui::model::Lease {
        duration_secs: 600,
        expires_at: CAPTURE,
    });
    let mut down = op(id, "charlie", "down", OpStatus::Queued, 0, 0);
    down.created_at = CAPTURE + 1;
    down.updated_at = CAPTURE + 1;
    next.operations.insert(1, down.clone());
    app.handle(Event::Snapshot(snapshot(next.clone())), CAPTURE + 2);
    drop(app.settle());
    // It ran: charlie tombstoned.
    next.operations.remove(1);
    down.status = OpStatus::Succeeded;
    down.updated_at = CAPTURE + 20;
    next.operations.insert(4, down);
    next.instances[2].status = Status::Tombstoned;
    next.instances[2].tombstoned_at = Some(CAPTURE + 20);
    app.handle(Event::Snapshot(snapshot(next)), CAPTURE + 21);
    drop(app.settle());
    let lines: Vec<String> = activity_lines(&app)
        .into_iter()
        .filter(|l| l.contains("charlie"))
        .collect();
    assert_eq!(
        lines,
        [
            "13:58:07 operator charlie queued: down queued behind its up (op 4a11…)",
            "13:58:27 operator charlie torn down: queued down ran: down in ≤19s (queue wait included)",
        ]
    );
    let text = render_pane(&app, 200, 12, panes::activity::render);
    // delta's `down`, finished before the first snapshot, is elsewhere's.
    assert!(text.contains(" · by operator 1, elsewhere 1 "), "{text}");
}

/// A verify the controller ran that failed reads `verify failed` and is
/// no failed teardown: the title counts none.
#[test]
fn a_failed_verify_is_not_counted_as_a_failed_teardown() {
    let mut app = app();
    let mut next = rows();
    let mut verify = op(
        "0e1f0000-0000-4000-8000-000000000008",
        "charlie",
        "verify",
        OpStatus::Failed,
        0,
        0,
    );
    verify.created_at = CAPTURE + 1;
    verify.updated_at = CAPTURE + 2;
    verify.error_json = Some(SHARED.replace("engine.source_override.shared", "verify.failed"));
    next.operations.insert(3, verify);
    app.handle(Event::Snapshot(snapshot(next)), CAPTURE + 3);
    drop(app.settle());
    let lines = activity_lines(&app);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("13:58:09 controller charlie verify failed: verify in ≤1s"),
        "{lines:?}"
    );
    let text = render_pane(&app, 200, 12, panes::activity::render);
    let title = text.lines().next().unwrap_or_default();
    // delta's `down` of the store is the hour's one reap.
    assert!(
        title.contains("1h reaped ▁▁▁▁▁▁▁▁█▁▁▁ 1 · failed ▁▁▁▁▁▁▁▁▁▁▁▁ 0 · by elsewhere 1 "),
        "no failed teardown counted: {text}"
    );
}

/// After new finished operations arrive (a pending one finished, two new
/// ones above the selection, which is off the newest row and so follows
/// its operation), the newest
/// finished ones are drawn: the pending ones pinned on top, no offset
/// kept from before hiding the newest above the window, zoomed or not,
/// without `g`; what is not drawn is counted (`↓ N more`).
#[test]
fn the_newest_finished_operations_are_drawn_after_new_ones_finish() {
    // Created and ended that many seconds before the capture.
    let finished = |name: &str, created: i64, ended: i64| {
        op(
            &format!("{name}-0000-4000-8000-000000000000"),
            name,
            "up",
            OpStatus::Succeeded,
            created,
            ended,
        )
    };
    let pending = |i: usize| {
        let status = if i == 0 {
            OpStatus::Running
        } else {
            OpStatus::Queued
        };
        op(
            &format!("p{i}"),
            &format!("pend{i}"),
            "up",
            status,
            100,
            100,
        )
    };
    let mut rows = rows();
    rows.operations = (0..3).map(pending).collect();
    rows.operations
        .extend((0..30_i64).map(|i| finished(&format!("old{i:02}"), 900 + i, 890 + i)));
    let mut app = App::new(config(), CAPTURE);
    app.handle(Event::Snapshot(snapshot(rows.clone())), CAPTURE);
    focus_operations(&mut app);
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('j'));
    }
    assert_eq!(
        app.selected_operation().map(|o| o.instance.as_str()),
        Some("old01")
    );
    press(&mut app, KeyCode::Char('z'));
    let before = render_app(&app, 80, 24);
    assert!(before.contains("old01"), "{before}");
    // pend2 finished; new-a and new-b finished after it.
    let mut next = rows.clone();
    let mut done = next.operations.remove(2);
    done.status = OpStatus::Succeeded;
    done.updated_at = CAPTURE + 2;
    next.operations.splice(
        2..2,
        [finished("new-b", -1, -4), finished("new-a", -1, -3), done],
    );
    app.handle(Event::Snapshot(snapshot(next)), CAPTURE + 5);
    assert_eq!(
        app.selected_operation().map(|o| o.instance.as_str()),
        Some("old01")
    );
    let zoomed = render_app(&app, 80, 24);
    assert_snapshot!("operations_newest_drawn_zoomed_80x24", zoomed);
    for name in [
        "pend0", "pend1", "new-b", "new-a", "pend2", "old00", "old01",
    ] {
        assert!(zoomed.contains(name), "{name} drawn: {zoomed}");
    }
    assert!(!zoomed.contains("↑ "), "nothing hidden above: {zoomed}");
    press(&mut app, KeyCode::Char('z'));
    let plain = render_app(&app, 120, 40);
    for name in [
        "pend0", "pend1", "new-b", "new-a", "pend2", "old00", "old01",
    ] {
        assert!(plain.contains(name), "{name} drawn: {plain}");
    }
    assert!(!plain.contains("↑ "), "nothing hidden above: {plain}");
}

/// Three `stackless verify`s run from outside, each seen queued and then
/// finished, on a console whose Operations selection was never moved (on
/// the newest finished row): the selection stays on the newest row, and
/// at 80x24 nothing is hidden above it; a selection moved off the newest
/// stays on its operation as rows arrive.
#[test]
fn a_selection_on_the_newest_operation_follows_new_rows() {
    let finished: Vec<Operation> = (0..10_i64)
        .map(|i| {
            op(
                &format!("f{i}"),
                "delta",
                "up",
                OpStatus::Succeeded,
                900 + i * 10,
                890 + i * 10,
            )
        })
        .collect();
    let feed = |app: &mut App, ops: &[Operation], at: i64| {
        let mut rows = rows();
        rows.operations = ops.to_vec();
        app.handle(Event::Snapshot(snapshot(rows)), at);
    };
    let mut app = App::new(config(), CAPTURE);
    feed(&mut app, &finished, CAPTURE);
    focus_operations(&mut app);
    let mut shown = finished.clone();
    for n in 1..=3_i64 {
        let id = format!("v{n}");
        let queued = op(&id, "bravo", "verify", OpStatus::Queued, 80 - n, 80 - n);
        let with_pending: Vec<Operation> = std::iter::once(queued).chain(shown.clone()).collect();
        feed(&mut app, &with_pending, CAPTURE + n);
        assert_eq!(
            app.selected_operation().map(|op| op.id.as_str()),
            shown.first().map(|op| op.id.as_str()),
            "while v{n} is queued, the newest finished row stays selected"
        );
        assert_eq!(app.operation_index(), 1);
        let done = op(&id, "bravo", "verify", OpStatus::Succeeded, 80 - n, 79 - n);
        shown.insert(0, done);
        feed(&mut app, &shown, CAPTURE + n);
        assert_eq!(
            app.selected_operation().map(|op| op.id.as_str()),
            Some(id.as_str())
        );
        assert_eq!(app.operation_index(), 0);
    }
    let text = render_app(&app, 80, 24);
    assert!(!text.contains("↑ "), "{text}");
    assert!(
        text.contains("║▶ verify bravo    succeeded   1m 19s ago"),
        "{text}"
    );
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(
        app.selected_operation().map(|op| op.id.as_str()),
        Some("v2")
    );
    let queued = op("v4", "bravo", "verify", OpStatus::Queued, 10, 10);
    let with_pending: Vec<Operation> = std::iter::once(queued).chain(shown.clone()).collect();
    feed(&mut app, &with_pending, CAPTURE + 5);
    assert_eq!(
        app.selected_operation().map(|op| op.id.as_str()),
        Some("v2")
    );
    assert_eq!(app.operation_index(), 2);
}

/// The controller's lease reaper failing every minute on four instances in
/// turn (golf, india, hotel, alpha, golf, …) for six minutes: Activity
/// shows one line per instance and error, counted exactly at the front,
/// at the latest time; another error on golf is a line of its own.
#[test]
fn failures_repeated_in_turn_fold_per_instance_and_error() {
    use stackless_tui::event::OpRef;
    let failed = |name: &str, at: i64, error: &str| {
        Activity::new(
            at,
            Actor::Controller,
            name,
            ActivityKind::Failed,
            format!(
                "down by its lease reaper: in ≤{}s (queue wait included): {error}",
                at % 3 + 1
            ),
        )
        .with_operation(OpRef {
            id: format!("{name}-{at}"),
            verb: "down".into(),
            error: error.into(),
        })
    };
    let mut app = app();
    let survivors = "engine.teardown.survivors: left survivors";
    for minute in 0..6_i64 {
        for (i, name) in ["golf", "india", "hotel", "alpha"].into_iter().enumerate() {
            let at = CAPTURE + minute * 60 + i64::try_from(i).unwrap();
            app.handle(Event::Activity(failed(name, at, survivors)), at);
        }
    }
    let at = CAPTURE + 400;
    app.handle(
        Event::Activity(failed("golf", at, "engine.lock.held: locked")),
        at,
    );
    let lines = activity_lines(&app);
    assert_eq!(
        lines[lines.len() - 5..],
        [
            "14:03:06 x6 controller golf failed: down by its lease reaper: in ≤1s (queue wait included): engine.teardown.survivors: left survivors",
            "14:03:07 x6 controller india failed: down by its lease reaper: in ≤2s (queue wait included): engine.teardown.survivors: left survivors",
            "14:03:08 x6 controller hotel failed: down by its lease reaper: in ≤3s (queue wait included): engine.teardown.survivors: left survivors",
            "14:03:09 x6 controller alpha failed: down by its lease reaper: in ≤1s (queue wait included): engine.teardown.survivors: left survivors",
            "14:04:46 controller golf failed: down by its lease reaper: in ≤2s (queue wait included): engine.lock.held: locked",
        ],
        "{lines:#?}"
    );
}

/// The Activity title says whose the failed teardowns were: the
/// controller's lease reaper's and this console's reaper's, counted apart
/// (folded lines by their count); at 80 columns the title keeps whole
/// items within the pane.
#[test]
fn the_activity_title_counts_failed_teardowns_by_actor() {
    use stackless_tui::event::OpRef;
    let mut app = app();
    for (i, name) in ["golf", "india", "golf", "hotel"].into_iter().enumerate() {
        let at = CAPTURE + i64::try_from(i).unwrap();
        let failed = Activity::new(
            at,
            Actor::Controller,
            name,
            ActivityKind::Failed,
            "down by its lease reaper: in ≤1s (queue wait included): engine.teardown.survivors: left survivors",
        )
        .with_operation(OpRef {
            id: format!("{name}-{at}"),
            verb: "down".into(),
            error: "engine.teardown.survivors: left survivors".into(),
        });
        app.handle(Event::Activity(failed), at);
    }
    for at in [CAPTURE + 10, CAPTURE + 11] {
        let failed = Activity::new(
            at,
            Actor::Reaper,
            "kilo",
            ActivityKind::Failed,
            "stackless down exited 1",
        );
        app.handle(Event::Activity(failed), at);
    }
    let wide = render_pane(&app, 200, 12, panes::activity::render);
    let title = wide.lines().next().unwrap_or_default();
    assert!(
        title.contains(" 6 (controller 4, this reaper 2) "),
        "{wide}"
    );
    let narrow = render_pane(&app, 80, 12, panes::activity::render);
    let title = narrow.lines().next().unwrap_or_default();
    assert_eq!(
        unicode_width::UnicodeWidthStr::width(title.trim_matches('"')),
        80,
        "{narrow}"
    );
    assert!(title.trim_matches('"').ends_with('┐'), "{narrow}");
}
