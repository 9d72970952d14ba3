//! Renew (`L`, `:renew`) and verify (`v`, `:verify`) in the UI
//! (stackless 0.4.0, schema 14), on hand-made snapshots at a fixed clock:
//! the prefilled prompt, the confirmation naming the command, the birth
//! re-checked at `y`, the refusals (`--read-only`, an older store, a
//! tombstone), the bulk over marks, and the verify overlay.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app, select};
use crossterm::event::KeyCode;

use stackless_tui::event::{Activity, ActivityKind, Actor, Event};
use stackless_tui::model::verbs::{Verb, VerbRequest};
use stackless_tui::model::{Generation, Instance, Rows, Snapshot, Status};
use stackless_tui::ui::{App, AppConfig, Effect};

fn config(write_keys: Result<(), String>) -> AppConfig {
    AppConfig {
        store_label: "/home/operator/.local/state/stackless/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(60),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::None,
        write_keys,
        host: None,
        no_color: false,
    }
}

fn instance(name: &str, status: Status, birth: &str, duration_secs: i64) -> Instance {
    let row = crate::common::builders::instance(name)
        .lease(duration_secs, CAPTURE + 90)
        .birth(birth);
    match status {
        Status::Tombstoned => row.tombstoned(CAPTURE - 86_400),
        other => row.status(other),
    }
    .build()
}

fn snapshot(version: i64, alpha_birth: &str) -> Arc<Snapshot> {
    Arc::new(Snapshot::from(Rows {
        generation: Generation::new(version),
        instances: vec![
            instance("alpha", Status::Active, alpha_birth, 7_200),
            instance(
                "bravo",
                Status::Active,
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
                1_800,
            ),
            instance(
                "gone",
                Status::Tombstoned,
                "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
                60,
            ),
        ]
        .into(),
        ..Rows::default()
    }))
}

const ALPHA: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";

fn new_app(version: i64, write_keys: Result<(), String>) -> App {
    let mut app = App::new(config(write_keys), CAPTURE);
    app.set_stackless("/opt/bin/stackless".into());
    app.handle(Event::Snapshot(snapshot(version, ALPHA)), CAPTURE);
    app
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(press(app, KeyCode::Char(c)), None);
    }
}

fn erase(app: &mut App, count: usize) {
    for _ in 0..count {
        press(app, KeyCode::Backspace);
    }
}

fn last(app: &App) -> (ActivityKind, String, String) {
    let a = &app.activity().last().expect("an activity").entry;
    (a.kind, a.instance.clone(), a.detail.clone())
}

#[test]
fn renew_prompts_with_the_recorded_lease_then_names_the_command() {
    let mut app = new_app(14, Ok(()));
    select(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('L')), None);
    assert_eq!(
        app.command_line().map(|l| l.text().to_owned()),
        Some("renew alpha 2h".into())
    );
    let text = render_app(&app, 100, 24);
    assert!(text.contains(":renew alpha 2h"), "{text}");
    // The operator makes it 3h.
    erase(&mut app, 2);
    type_text(&mut app, "3h");
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    let question = app.confirming_verbs().expect("asked").question();
    assert_eq!(
        question,
        "Renew alpha's lease for 3h? stackless resumes the instance (its prepare hooks run again). It expires in 1m 30s now, then in 3h. This runs: /opt/bin/stackless up --name alpha --lease 3h --json [y/N]"
    );
    let text = render_app(&app, 100, 24);
    assert!(text.contains("Confirm renew"), "{text}");
    assert_snapshot!("confirm_renew_100x24", text);
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no renew");
    };
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].verb, Verb::Renew { lease_secs: 10_800 });
    assert_eq!(requests[0].instance.name, "alpha");
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("renew requested for alpha")
    );
}

#[test]
fn a_bad_duration_is_refused_at_the_prompt() {
    let mut app = new_app(14, Ok(()));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('L'));
    erase(&mut app, 2);
    type_text(&mut app, "0s");
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert!(app.confirming_verbs().is_none());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some(":renew alpha 0s: a lease must be longer than 0s")
    );
}

#[test]
fn a_name_born_again_before_y_is_refused() {
    let mut app = new_app(14, Ok(()));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('v'));
    assert_eq!(
        app.confirming_verbs().expect("asked").question(),
        "Verify alpha? This runs: /opt/bin/stackless verify alpha --json (it renews the lease when the check starts, pass or fail) [y/N]"
    );
    render_app(&app, 100, 24);
    app.handle(
        Event::Snapshot(snapshot(14, "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6")),
        CAPTURE,
    );
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(
        last(&app),
        (
            ActivityKind::Refused,
            "alpha".into(),
            "refused: the birth asked about (a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1) is not the instance's (f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6): it was born again, or another store was read".into()
        )
    );
}

#[test]
fn read_only_an_older_store_and_a_tombstone_refuse() {
    let mut app = new_app(14, Err("read-only: r and d are off".into()));
    select(&mut app, "alpha");
    for key in ['L', 'v'] {
        assert_eq!(press(&mut app, KeyCode::Char(key)), None);
        assert!(app.command_line().is_none() && app.confirming_verbs().is_none());
        assert_eq!(
            last(&app),
            (
                ActivityKind::Refused,
                "alpha".into(),
                "read-only: r and d are off".into()
            )
        );
    }
    let mut app = app_v5();
    select(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('L')), None);
    assert!(app.command_line().is_none());
    assert_eq!(
        last(&app).2,
        "renew needs a stackless 0.4.0 store (schema 14); this one is v5; nothing run"
    );
    let mut app = new_app(14, Ok(()));
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "renew gone 1h");
    press(&mut app, KeyCode::Enter);
    assert!(app.confirming_verbs().is_none());
    assert_eq!(
        last(&app).2,
        "refused: gone is tombstoned: renew acts on active instances only"
    );
}

fn app_v5() -> App {
    new_app(5, Ok(()))
}

#[test]
fn marks_renew_each_at_the_typed_lease_or_each_its_own() {
    let mut app = new_app(14, Ok(()));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char(' '));
    select(&mut app, "bravo");
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('L'));
    assert_eq!(
        app.command_line().map(|l| l.text().to_owned()),
        Some("renew alpha bravo".into())
    );
    // Without the duration: each its own recorded lease.
    press(&mut app, KeyCode::Enter);
    let question = app.confirming_verbs().expect("asked");
    assert_eq!(
        question.question(),
        "Renew the leases of 2 instances (alpha, bravo)? stackless resumes each (its prepare hooks run again). Each lease now -> after: alpha 1m 30s -> 2h, bravo 1m 30s -> 30m. This runs: /opt/bin/stackless up --name alpha --lease 2h --json, then the same for each other name at its lease [y/N]"
    );
    let verbs: Vec<(String, Verb)> = question
        .requests
        .iter()
        .map(|r: &VerbRequest| (r.instance.name.clone(), r.verb))
        .collect();
    assert_eq!(
        verbs,
        [
            ("alpha".into(), Verb::Renew { lease_secs: 7_200 }),
            ("bravo".into(), Verb::Renew { lease_secs: 1_800 })
        ]
    );
    render_app(&app, 100, 24);
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no renew");
    };
    assert_eq!(requests.len(), 2);
    assert!(app.marks().is_empty());
}

#[test]
fn a_verify_outcome_opens_its_overlay() {
    let mut app = new_app(14, Ok(()));
    let passed = Activity::new(
        CAPTURE,
        Actor::Operator,
        "alpha",
        ActivityKind::Verified,
        "default check passed (exit 0, 12 ms); lease renewed: 2h 00m left",
    )
    .with_envelope(r#"{"schema_version":2,"ok":true,"instance":"alpha","duration_ms":12,"exit_status":0,"log_path":"/s/logs/verify.log","lease_remaining_secs":7200}"#);
    app.handle(Event::Activity(passed), CAPTURE);
    let text = render_app(&app, 100, 24);
    assert!(text.contains("renewed: 2h 00m left"), "{text}");
    assert_snapshot!("verify_passed_100x24", text);
    press(&mut app, KeyCode::Esc);
    let failed = Activity::new(
        CAPTURE,
        Actor::Operator,
        "alpha",
        ActivityKind::VerifyFailed,
        "verify.failed: verify command exited with 3",
    )
    .with_envelope(r#"{"ok":false,"error":{"schema_version":2,"code":"verify.failed","message":"verify command exited with 3","remediation":"inspect error.context.log_tail and error.context.log_path; fix the verify script and re-run `stackless verify`","context":{"log_path":"/s/logs/verify.log","log_tail":"curl: (7) Failed to connect to localhost port 8080\n","exit_status":"3"}}}"#);
    app.handle(Event::Activity(failed), CAPTURE);
    let text = render_app(&app, 100, 24);
    assert!(text.contains("verify.failed"), "{text}");
    assert!(text.contains("remediation"), "{text}");
    assert_snapshot!("verify_failed_100x24", text);
    // Another's verify observed, or the reaper's lines: no overlay.
    press(&mut app, KeyCode::Esc);
    assert!(app.full_text().is_none());
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "bravo",
            ActivityKind::Reaped,
            "",
        )),
        CAPTURE,
    );
    assert!(app.full_text().is_none());
}

/// `L`'s prefilled line runs as it is for a lease of several units (90m,
/// 2h30m, 36h): written without spaces, and the confirmation asks for the
/// recorded lease, to the second.
#[test]
fn a_prefilled_lease_of_several_units_runs_as_is() {
    for (secs, word) in [(5_400, "1h30m"), (9_000, "2h30m"), (129_600, "1day12h")] {
        let mut app = App::new(config(Ok(())), CAPTURE);
        app.set_stackless("/opt/bin/stackless".into());
        let rows = Rows {
            generation: Generation::new(14),
            instances: vec![instance("alpha", Status::Active, ALPHA, secs)].into(),
            ..Rows::default()
        };
        app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
        select(&mut app, "alpha");
        press(&mut app, KeyCode::Char('L'));
        assert_eq!(
            app.command_line().map(|l| l.text().to_owned()),
            Some(format!("renew alpha {word}"))
        );
        assert_eq!(press(&mut app, KeyCode::Enter), None);
        let question = app.confirming_verbs().expect("asked");
        assert_eq!(
            question.requests[0].verb,
            Verb::Renew {
                lease_secs: u64::try_from(secs).unwrap()
            },
            "{word}"
        );
    }
}

fn op(
    id: &str,
    verb: &str,
    status: stackless_tui::model::OpStatus,
) -> stackless_tui::model::Operation {
    stackless_tui::model::Operation {
        id: id.into(),
        instance: "alpha".into(),
        instance_id: None,
        verb: verb.into(),
        status,
        cancel_requested: false,
        created_at: CAPTURE - 10,
        updated_at: CAPTURE - 10,
        error_json: None,
        progress: None,
        ran: None,
    }
}

/// alpha with an up running and a down queued behind it; bravo a failed
/// up (no lease).
fn pending_and_leaseless() -> Arc<Snapshot> {
    use stackless_tui::model::OpStatus;
    let mut bravo = instance(
        "bravo",
        Status::Active,
        "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
        1_800,
    );
    bravo.lease = None;
    Arc::new(Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: vec![instance("alpha", Status::Active, ALPHA, 7_200), bravo].into(),
        operations: vec![
            op("1", "up", OpStatus::Running),
            op("2", "down", OpStatus::Queued),
        ],
        ..Rows::default()
    }))
}

/// `L`, `v`, `:renew` refuse an instance with an operation pending (naming a
/// queued down) and `L` one without a lease (a failed up); a bulk `L` skips
/// such rows and says how many.
#[test]
fn a_pending_operation_or_no_lease_refuses_renew_and_verify() {
    let mut app = new_app(14, Ok(()));
    app.handle(Event::Snapshot(pending_and_leaseless()), CAPTURE);
    select(&mut app, "alpha");
    for key in ['L', 'v'] {
        assert_eq!(press(&mut app, KeyCode::Char(key)), None);
        assert!(app.command_line().is_none() && app.confirming_verbs().is_none());
        let word = if key == 'L' { "renew" } else { "verify" };
        assert_eq!(
            last(&app).2,
            format!(
                "refused: alpha has a pending operation (down queued): {word} after it; nothing run"
            )
        );
    }
    select(&mut app, "bravo");
    assert_eq!(press(&mut app, KeyCode::Char('L')), None);
    assert!(app.command_line().is_none());
    assert_eq!(
        last(&app),
        (
            ActivityKind::Refused,
            "bravo".into(),
            "refused: bravo has no lease (a failed up): a renew would run a new up; nothing run"
                .into()
        )
    );
    // Bulk: bravo skipped, counted; the verify of bravo still asked.
    let mut app = new_app(14, Ok(()));
    let mut rows = (*pending_and_leaseless().rows).clone();
    rows.operations.clear();
    rows.instances = vec![
        instance("alpha", Status::Active, ALPHA, 7_200),
        rows.instances[1].clone(),
    ]
    .into();
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "renew alpha bravo 2h");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.confirming_verbs().expect("asked").question(),
        "Renew alpha's lease for 2h? stackless resumes the instance (its prepare hooks run again). It expires in 1m 30s now, then in 2h. This runs: /opt/bin/stackless up --name alpha --lease 2h --json. Refused, not run: bravo has no lease (a failed up): a renew would run a new up. [y/N]"
    );
}

/// The same refusal at `y`: an operation queued between the question and
/// `y` refuses the renew.
#[test]
fn an_operation_queued_before_y_refuses_it() {
    let mut app = new_app(14, Ok(()));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('v'));
    assert!(app.confirming_verbs().is_some());
    app.handle(Event::Snapshot(pending_and_leaseless()), CAPTURE);
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(
        last(&app).2,
        "refused: alpha has a pending operation (down queued): verify after it; nothing run"
    );
}

/// A lease shorter than what is left says so; under `--dry-run` the question
/// says what would run; a cancelled renew is a cancel, not a teardown's
/// abort.
#[test]
fn a_shorter_lease_a_dry_run_and_a_cancel_say_what_they_are() {
    let mut app = new_app(14, Ok(()));
    app.set_dry_run(true);
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "renew alpha 1m");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.confirming_verbs().expect("asked").question(),
        "Renew alpha's lease for 1m? stackless resumes the instance (its prepare hooks run again). It expires in 1m 30s now, then in 1m: shorter than what is left. This would run: /opt/bin/stackless up --name alpha --lease 1m --json (dry run: nothing runs) [y/N]"
    );
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    assert_eq!(
        last(&app),
        (
            ActivityKind::Cancelled,
            "alpha".into(),
            "renew cancelled".into()
        )
    );
}

/// A recorded lease over 30 days is prefilled at the console's bound
/// (30days), and the question says it is shorter than what is left.
#[test]
fn a_recorded_lease_over_the_bound_is_shown_shorter() {
    let mut app = App::new(config(Ok(())), CAPTURE);
    app.set_stackless("/opt/bin/stackless".into());
    let mut alpha = instance("alpha", Status::Active, ALPHA, 60 * 86_400);
    if let Some(lease) = alpha.lease.as_mut() {
        lease.expires_at = CAPTURE + 59 * 86_400;
    }
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![alpha].into(),
        ..Rows::default()
    };
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('L'));
    assert_eq!(
        app.command_line().map(|l| l.text().to_owned()),
        Some("renew alpha 30days".into())
    );
    press(&mut app, KeyCode::Enter);
    let question = app.confirming_verbs().expect("asked").question();
    assert!(
        question.contains("It expires in 59d 00h now, then in 30days: shorter than what is left."),
        "{question}"
    );
}

/// `v` and `L` on an instance whose teardown this console runs are refused
/// at `y`, in the words the agent's `renew`/`verify` use: the `up --name`
/// or `verify` would race the `down`. Once the teardown's outcome came,
/// they are asked again as usual.
#[test]
fn renew_and_verify_of_an_instance_this_console_tears_down_are_refused() {
    let mut app = new_app(14, Ok(()));
    let started = Activity::new(
        CAPTURE,
        Actor::Operator,
        "alpha",
        ActivityKind::Started,
        "/opt/bin/stackless down alpha --json",
    );
    app.handle(Event::Activity(started), CAPTURE);
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('v'));
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(
        last(&app),
        (
            ActivityKind::Refused,
            "alpha".into(),
            "refused: a teardown of it is running: a verify now would race it; nothing run".into()
        )
    );
    press(&mut app, KeyCode::Char('L'));
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(
        last(&app),
        (
            ActivityKind::Refused,
            "alpha".into(),
            "refused: a teardown of it is running: a renew now would race it; nothing run".into()
        )
    );
    let failed = Activity::new(
        CAPTURE,
        Actor::Operator,
        "alpha",
        ActivityKind::Failed,
        "down exited 1",
    );
    app.handle(Event::Activity(failed), CAPTURE);
    press(&mut app, KeyCode::Char('v'));
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no verify after the teardown's outcome");
    };
    assert_eq!(requests[0].verb, Verb::Verify);
}

/// Two marked instances, recorded 10m and 2h: a bulk `L` renews each at its
/// own lease; a typed 10m for both would cut bravo's 2h short, so bravo is
/// named as shorter and asked apart, after alpha's `y`, with its own `y`.
#[test]
fn a_bulk_renew_that_shortens_a_lease_names_it_and_asks_it_apart() {
    let mut app = new_app(14, Ok(()));
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![
            crate::common::builders::instance("alpha")
                .lease(600, CAPTURE + 590)
                .birth(ALPHA)
                .build(),
            crate::common::builders::instance("bravo")
                .lease(7_200, CAPTURE + 7_190)
                .birth("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2")
                .build(),
        ]
        .into(),
        ..Rows::default()
    };
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char(' '));
    select(&mut app, "bravo");
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('L'));
    assert_eq!(
        app.command_line().map(|l| l.text().to_owned()),
        Some("renew alpha bravo".into())
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.confirming_verbs().expect("asked").question(),
        "Renew the leases of 2 instances (alpha, bravo)? stackless resumes each (its prepare hooks run again). Each lease now -> after: alpha 9m 50s -> 10m, bravo 1h 59m -> 2h. This runs: /opt/bin/stackless up --name alpha --lease 10m --json, then the same for each other name at its lease [y/N]"
    );
    press(&mut app, KeyCode::Esc);
    // One duration typed for both: bravo's lease would get shorter.
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "renew alpha bravo 10m");
    press(&mut app, KeyCode::Enter);
    let question = app.confirming_verbs().expect("asked").question();
    assert_eq!(
        question,
        "Renew alpha's lease for 10m? stackless resumes the instance (its prepare hooks run again). It expires in 9m 50s now, then in 10m. Shorter, asked apart after this y: bravo 1h 59m -> 10m (shorter). This runs: /opt/bin/stackless up --name alpha --lease 10m --json [y/N]"
    );
    let shown: Vec<&str> = app
        .confirming_verbs()
        .expect("asked")
        .shorter
        .iter()
        .map(|r| r.instance.name.as_str())
        .collect();
    assert_eq!(shown, ["bravo"]);
    let text = render_app(&app, 120, 40);
    assert_snapshot!("confirm_renew_shorter_apart_120x40", text);
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no renew");
    };
    let ran: Vec<(String, Verb)> = requests
        .iter()
        .map(|r| (r.instance.name.clone(), r.verb))
        .collect();
    assert_eq!(ran, [("alpha".into(), Verb::Renew { lease_secs: 600 })]);
    // Then bravo's own question: not answered by a key read before it is
    // drawn.
    assert_eq!(
        app.confirming_verbs().expect("asked apart").question(),
        "Renew bravo's lease for 10m? stackless resumes the instance (its prepare hooks run again). It expires in 1h 59m now, then in 10m: shorter than what is left. This runs: /opt/bin/stackless up --name bravo --lease 10m --json [y/N]"
    );
    render_app(&app, 120, 40);
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no renew of bravo");
    };
    let ran: Vec<(String, Verb)> = requests
        .iter()
        .map(|r| (r.instance.name.clone(), r.verb))
        .collect();
    assert_eq!(ran, [("bravo".into(), Verb::Renew { lease_secs: 600 })]);
    assert!(app.confirming_verbs().is_none());
}

/// The shorter renew asked apart is refused by its own `N`: alpha's renew
/// ran, bravo's is cancelled and says so.
#[test]
fn the_shorter_renew_asked_apart_is_cancelled_by_its_own_n() {
    let mut app = new_app(14, Ok(()));
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![
            crate::common::builders::instance("alpha")
                .lease(600, CAPTURE + 590)
                .birth(ALPHA)
                .build(),
            crate::common::builders::instance("bravo")
                .lease(7_200, CAPTURE + 7_190)
                .birth("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2")
                .build(),
            crate::common::builders::instance("charlie")
                .lease(7_200, CAPTURE + 7_190)
                .birth("c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3")
                .build(),
        ]
        .into(),
        ..Rows::default()
    };
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "renew alpha bravo charlie 10m");
    press(&mut app, KeyCode::Enter);
    render_app(&app, 120, 40);
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no renew");
    };
    assert_eq!(requests.len(), 1);
    assert_eq!(
        app.confirming_verbs().expect("asked apart").question(),
        "Renew the leases of 2 instances (bravo, charlie)? stackless resumes each (its prepare hooks run again). Each lease now -> after: bravo 1h 59m -> 10m (shorter), charlie 1h 59m -> 10m (shorter). This runs: /opt/bin/stackless up --name bravo --lease 10m --json, then the same for each other name at its lease [y/N]"
    );
    render_app(&app, 120, 40);
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    assert!(app.confirming_verbs().is_none());
    assert_eq!(
        last(&app),
        (
            ActivityKind::Cancelled,
            "charlie".into(),
            "renew cancelled".into()
        )
    );
}

/// A passed verify's overlay asks for its output file and shows what the
/// I/O worker read, redacted as it enters (a `token=` value); an answer
/// for another instance's verify, or one after the overlay closed, is
/// dropped.
#[test]
fn a_passed_verify_shows_its_output_redacted() {
    use stackless_tui::event::{Answer, Request, TailText};
    let mut app = new_app(14, Ok(()));
    let passed = Activity::new(
        CAPTURE,
        Actor::Operator,
        "alpha",
        ActivityKind::Verified,
        "default check passed (exit 0, 12 ms); lease renewed: 2h 00m left",
    )
    .with_envelope(r#"{"schema_version":2,"ok":true,"instance":"alpha","duration_ms":12,"exit_status":0,"log_path":"/s/logs/verify.log","lease_remaining_secs":7200}"#);
    let effect = app.handle(Event::Activity(passed), CAPTURE);
    let Some(Effect::Io(Request::VerifyOutput { instance, path })) = effect else {
        panic!("the output is asked for: {effect:?}");
    };
    assert_eq!(instance, "alpha");
    assert_eq!(path, std::path::PathBuf::from("/s/logs/verify.log"));
    let answer = |instance: &str, text: &str, cut: bool| {
        Event::Answer(Answer::VerifyOutput {
            instance: instance.into(),
            path: path.clone(),
            result: Ok(TailText {
                text: text.into(),
                cut,
            }),
        })
    };
    app.handle(answer("bravo", "not alpha's\n", false), CAPTURE);
    let text = render_app(&app, 100, 24);
    assert!(!text.contains("not alpha's"), "{text}");
    app.handle(
        answer(
            "alpha",
            "GET /health 200\nusing token=s3cr3t-value\nall checks passed\n",
            true,
        ),
        CAPTURE,
    );
    let text = render_app(&app, 100, 24);
    assert!(
        text.contains("the check's output (its last 64 KiB):"),
        "{text}"
    );
    assert!(text.contains("GET /health 200"), "{text}");
    assert!(text.contains("all checks passed"), "{text}");
    assert!(!text.contains("s3cr3t"), "{text}");
    assert_snapshot!("verify_passed_output_100x24", text);
    press(&mut app, KeyCode::Esc);
    app.handle(answer("alpha", "late\n", false), CAPTURE);
    assert!(app.full_text().is_none());
}

/// [`snapshot`] (schema 14, alpha of birth [`ALPHA`]) holding `operations`.
fn with_operations(operations: Vec<stackless_tui::model::Operation>) -> Arc<Snapshot> {
    let mut rows = Rows::clone(&snapshot(14, ALPHA).rows);
    rows.operations = operations;
    Arc::new(Snapshot::from(rows))
}

/// The verify the operator asked for (`v`, `y`) is one line, the
/// operator's: the `verify` operation it submits (stackless 0.4.0 runs
/// `verify NAME` as an operation of the controller's queue) is claimed,
/// whether the store shows it finished before the operator's line or
/// after; a verify created after the operator's ended is the
/// controller's line.
#[test]
fn the_operators_verify_is_one_line() {
    use stackless_tui::model::OpStatus;
    let mut app = new_app(14, Ok(()));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('v'));
    let Some(Effect::Verbs(requests)) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no verify");
    };
    assert_eq!(requests[0].verb, Verb::Verify);
    let finished = |id: &str, created: i64| {
        let mut verify = op(id, "verify", OpStatus::Succeeded);
        verify.created_at = created;
        verify.updated_at = created + 2;
        verify
    };
    let lines = |app: &App| -> Vec<String> {
        app.activity()
            .entries()
            .iter()
            .map(|l| format!("{} {} {}", l.entry.actor, l.entry.kind, l.entry.detail))
            .collect()
    };
    // The store shows the verify finished before its answer arrives.
    app.handle(
        Event::Snapshot(with_operations(vec![finished("v-1", CAPTURE)])),
        CAPTURE + 2,
    );
    drop(app.settle());
    assert!(lines(&app).is_empty(), "{:?}", lines(&app));
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE + 3,
            Actor::Operator,
            "alpha",
            ActivityKind::Verified,
            "default check passed (exit 0, 12 ms); lease renewed: 2h 00m left",
        )),
        CAPTURE + 3,
    );
    // A second `v` (the first's outcome overlay closed), whose operation
    // the store shows after its line.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('v'));
    assert!(matches!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::Verbs(_))
    ));
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE + 5,
            Actor::Operator,
            "alpha",
            ActivityKind::VerifyFailed,
            "verify.failed: verify command exited with 3",
        )),
        CAPTURE + 5,
    );
    let mut second = finished("v-2", CAPTURE + 1);
    second.status = OpStatus::Failed;
    // And a verify someone else asked for later: the controller's.
    let other = finished("v-3", CAPTURE + 60);
    app.handle(
        Event::Snapshot(with_operations(vec![
            other,
            second,
            finished("v-1", CAPTURE),
        ])),
        CAPTURE + 70,
    );
    drop(app.settle());
    assert_eq!(
        lines(&app),
        [
            "operator verified default check passed (exit 0, 12 ms); lease renewed: 2h 00m left",
            "operator verify failed verify.failed: verify command exited with 3",
            "controller succeeded verify in ≤2s (queue wait included)",
        ]
    );
}

/// alpha, hotel and india have expired (india 5 s ago), golf has 10m left;
/// the controller was probed and none runs.
fn expired_with_no_controller() -> App {
    let mut app = new_app(14, Ok(()));
    let row = |name: &str, duration: i64, expires: i64, birth: &str| {
        crate::common::builders::instance(name)
            .lease(duration, expires)
            .birth(birth)
            .build()
    };
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![
            row("alpha", 600, CAPTURE - 300, ALPHA),
            row(
                "golf",
                600,
                CAPTURE + 600,
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
            ),
            row(
                "hotel",
                600,
                CAPTURE - 60,
                "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
            ),
            row(
                "india",
                600,
                CAPTURE - 5,
                "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4",
            ),
        ]
        .into(),
        ..Rows::default()
    };
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    app.handle(
        Event::Controller(stackless_tui::model::controller::ControllerState {
            proxy_port: Some(4444),
            ..Default::default()
        }),
        CAPTURE,
    );
    app
}

/// With no controller running, a bulk `L` of golf and india says its `up`
/// starts stackless's controller, names what its lease reaper then reaps
/// (alpha, hotel, india), and that india's renew races it; with a
/// controller running the question says nothing of it.
#[test]
fn a_renew_that_starts_the_controller_names_what_its_lease_reaper_reaps() {
    let mut app = expired_with_no_controller();
    select(&mut app, "golf");
    press(&mut app, KeyCode::Char(' '));
    select(&mut app, "india");
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('L'));
    press(&mut app, KeyCode::Enter);
    assert!(app.confirming_verbs().is_some());
    insta::assert_snapshot!(render_app(&app, 160, 30));
    app.handle(
        Event::Controller(stackless_tui::model::controller::ControllerState {
            pid: Some(77),
            lease_reaper: Some(true),
            proxy_port: Some(4444),
            ..Default::default()
        }),
        CAPTURE,
    );
    let text = render_app(&app, 160, 30);
    assert!(text.contains("Confirm renew"), "{text}");
    assert!(!text.contains("starts stackless"), "{text}");
}

/// The agent's renew (no question) says the same in its reply.
#[test]
fn an_agents_renew_that_starts_the_controller_says_so_in_its_reply() {
    use stackless_tui::model::rules::{Action, Asked, InFlight};
    let mut app = expired_with_no_controller();
    let asked = Asked::by_id(
        "india".into(),
        Some("d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4".into()),
    );
    let (words, effect) = app
        .remote(
            &Action::Renew(asked, Some(600)),
            &InFlight::default(),
            CAPTURE,
        )
        .expect("admitted");
    assert_eq!(
        words,
        "renew requested for india; This starts stackless's controller; its lease reaper then reaps the expired: alpha, hotel, india (india's renew races the reaper)."
    );
    assert!(matches!(effect, Some(Effect::Verbs(_))));
}

/// The renew question on an instance whose lease ran out says when it
/// expired and when it then expires, in two sentences' worth.
#[test]
fn renew_of_an_expired_instance_says_when_it_expired() {
    let mut app = new_app(14, Ok(()));
    let alpha = crate::common::builders::instance("alpha")
        .lease(7_200, CAPTURE - 4 * 86_400)
        .birth(ALPHA)
        .build();
    app.handle(
        Event::Snapshot(Arc::new(Snapshot::from(Rows {
            generation: Generation::new(14),
            instances: vec![alpha].into(),
            ..Rows::default()
        }))),
        CAPTURE,
    );
    select(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('L')), None);
    erase(&mut app, 2);
    type_text(&mut app, "15s");
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    let question = app.confirming_verbs().expect("asked").question();
    assert!(
        question.contains(
            "stackless resumes the instance (its prepare hooks run again). It expired 4d 00h ago; then it expires in 15s. This runs: /opt/bin/stackless up --name alpha --lease 15s --json"
        ),
        "{question}"
    );
}
