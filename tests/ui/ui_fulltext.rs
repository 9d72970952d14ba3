//! Every cut line in the UI can be read whole: one test per pane
//! (Instances, Operations and the operation overlay, Backoffs, Supervisor,
//! Activity, the detail view). Each draws a line the pane cuts with `…`,
//! opens it (Enter or `e`) and finds the whole text on the screen, wrapped;
//! Esc goes back.

use crate::common::ui::Answers as _;
use stackless_tui::event::Request;
use std::sync::Arc;

use crossterm::event::KeyCode;

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app};
use stackless_tui::event::{Activity, ActivityKind, Actor, Event, SupervisorKind, SupervisorNote};
use stackless_tui::model::detail::InstanceDetail;
use stackless_tui::model::{
    Generation, Instance, OpStatus, Operation, ReapAttempt, Rows, Snapshot,
};
use stackless_tui::ui::{App, AppConfig, Effect, Focus};

const LONG_NAME: &str = "an-instance-name-far-too-long-for-its-column-even-at-100-cols-x";
const REMEDIATION: &str = "run `stackless down golf` once the lock holder has exited, then look at \
    the service log under logs/sl-golf/web.log for the reason the teardown left survivors behind \
    and remove them by hand if stackless cannot: kill the pid it names, then run down again";
const STDERR: &str =
    "warning: process:web did not exit after SIGTERM\nkilled pid 4242 with SIGKILL";

fn envelope() -> String {
    serde_json::json!({
        "ok": false,
        "error": {
            "schema_version": 2,
            "code": "engine.teardown.survivors",
            "message": "teardown of \"golf\" left survivors: [\"process:web\"]",
            "remediation": REMEDIATION,
            "context": {"service": "web", "log_path": "/state/logs/sl-golf/web.log"}
        }
    })
    .to_string()
}

fn instance(name: &str) -> Instance {
    crate::common::builders::instance(name)
        .lease(3_600, CAPTURE - 60)
        .birth("0123456789abcdef0123456789abcdef")
        .build()
}

fn failed_down() -> Operation {
    Operation {
        id: "7d41c0de-0000-4000-8000-000000000009".into(),
        instance: "golf".into(),
        instance_id: None,
        verb: "down".into(),
        status: OpStatus::Failed,
        cancel_requested: false,
        created_at: CAPTURE - 100,
        updated_at: CAPTURE - 90,
        error_json: Some(
            serde_json::json!({
                "schema_version": 2,
                "code": "engine.teardown.survivors",
                "message": "left survivors",
                "remediation": REMEDIATION,
            })
            .to_string(),
        ),
        progress: None,
        ran: None,
    }
}

/// A schema-14 app: golf (expired, a backoff with a long envelope) and an
/// instance whose name the Instances column cuts; a failed `down`; a long
/// supervisor note and a failed teardown with stderr in Activity.
fn app() -> App {
    let config = AppConfig {
        store_label: "/state/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(5),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::Program("demo-helper".into()),
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, CAPTURE);
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![instance(LONG_NAME), instance("golf")].into(),
        reap_attempts: vec![ReapAttempt {
            instance: "golf".into(),
            attempts: 3,
            last_error: envelope(),
            next_retry_at: CAPTURE + 60,
        }],
        operations: vec![failed_down()],
        ..Rows::default()
    };
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    app.handle(
        Event::Supervisor(SupervisorNote {
            at: CAPTURE - 5,
            kind: SupervisorKind::Exited,
            text: format!("helper exited with status 3: {REMEDIATION}"),
            until: None,
        }),
        CAPTURE,
    );
    let mut failed = Activity::new(
        CAPTURE - 2,
        Actor::Reaper,
        "golf",
        ActivityKind::Failed,
        envelope(),
    );
    failed.stderr_tail = STDERR.into();
    app.handle(Event::Activity(failed), CAPTURE);
    app
}

/// The screen's text with every border, quote and space removed, so a
/// wrapped text reads as one run.
fn flat(screen: &str) -> String {
    screen
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '"' | '║' | '│'))
        .collect()
}

/// `text` as [`flat`] sees it.
fn squeezed(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '"')
        .collect()
}

/// The pane shows `whole` cut; `key` opens it whole; Esc closes it.
fn opens_whole(app: &mut App, key: KeyCode, whole: &str) -> String {
    opens_whole_at(app, key, whole, 100)
}

/// [`opens_whole`], the pane drawn `width` columns wide first.
fn opens_whole_at(app: &mut App, key: KeyCode, whole: &str, width: u16) -> String {
    let before = render_app(app, width, 30);
    assert!(
        !flat(&before).contains(&squeezed(whole)),
        "not cut:\n{before}"
    );
    assert_eq!(press(app, key), None);
    assert!(app.full_text().is_some(), "{key:?} opened nothing");
    let mut screen = render_app(app, 100, 30);
    // Scroll until the text has been seen whole (a long view pages).
    let mut seen = flat(&screen);
    for _ in 0..5 {
        press(app, KeyCode::PageDown);
        screen = render_app(app, 100, 30);
        seen.push_str(&flat(&screen));
    }
    assert!(seen.contains(&squeezed(whole)), "not whole:\n{screen}");
    press(app, KeyCode::Esc);
    assert!(app.full_text().is_none());
    screen
}

#[test]
fn instances_row_opens_whole_with_e() {
    let mut app = app();
    assert_eq!(app.focus(), Focus::Instances);
    assert_eq!(
        app.selected_instance().map(|i| i.name.as_str()),
        Some(LONG_NAME)
    );
    // 90 columns: too narrow for the 63-character name (at 100 it is
    // whole once SUBSTRATE takes its short header).
    opens_whole_at(&mut app, KeyCode::Char('e'), LONG_NAME, 90);
    // Enter stays the detail view on Instances.
    assert!(matches!(
        press(&mut app, KeyCode::Enter),
        Some(Effect::Io(Request::OpenDetail { .. }))
    ));
}

#[test]
fn operations_row_and_overlay_open_whole() {
    let mut app = app();
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Operations);
    opens_whole(&mut app, KeyCode::Char('e'), REMEDIATION);
    // From the overlay too; Esc returns to the overlay.
    press(&mut app, KeyCode::Enter);
    assert!(app.operation_open().is_some());
    assert_eq!(press(&mut app, KeyCode::Char('e')), None);
    let screen = render_app(&app, 100, 30);
    assert!(flat(&screen).contains("remediation"), "{screen}");
    assert!(screen.contains("Operation · down golf"), "{screen}");
    press(&mut app, KeyCode::Esc);
    assert!(app.full_text().is_none() && app.operation_open().is_some());
}

#[test]
fn backoffs_row_opens_whole_with_enter_labelled() {
    let mut app = app();
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Backoffs);
    opens_whole(&mut app, KeyCode::Enter, REMEDIATION);
    press(&mut app, KeyCode::Enter);
    let screen = render_app(&app, 100, 30);
    for label in ["code", "message", "remediation", "context"] {
        assert!(
            screen.contains(&format!("║{label:<13}")),
            "{label}:\n{screen}"
        );
    }
    assert_snapshot!("fulltext_backoff_100x30", screen);
}

#[test]
fn supervisor_line_opens_whole_with_enter() {
    let mut app = app();
    for _ in 0..3 {
        press(&mut app, KeyCode::Tab);
    }
    assert_eq!(app.focus(), Focus::Supervisor);
    opens_whole(
        &mut app,
        KeyCode::Enter,
        &format!("helper exited with status 3: {REMEDIATION}"),
    );
}

#[test]
fn activity_line_opens_whole_with_its_stderr() {
    let mut app = app();
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Activity);
    opens_whole(&mut app, KeyCode::Enter, REMEDIATION);
    press(&mut app, KeyCode::Char('e'));
    let mut seen = String::new();
    for _ in 0..4 {
        seen.push_str(&flat(&render_app(&app, 100, 30)));
        press(&mut app, KeyCode::PageDown);
    }
    assert!(seen.contains(&squeezed(STDERR)), "{seen}");
}

#[test]
fn detail_wraps_long_values_and_opens_the_last_error_whole() {
    let mut app = app();
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        Some(Effect::Io(Request::OpenDetail {
            name: "golf".into()
        }))
    );
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Ok(Some(InstanceDetail::default().into())),
    });
    let mut seen = String::new();
    for _ in 0..4 {
        seen.push_str(&flat(&render_app(&app, 100, 30)));
        press(&mut app, KeyCode::PageDown);
    }
    // The remediation is wrapped under its label, never cut.
    assert!(seen.contains(&squeezed(REMEDIATION)), "{seen}");
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(press(&mut app, KeyCode::Char('e')), None);
    let screen = opens_whole_after_open(&mut app);
    assert!(screen.contains("Detail · golf"), "{screen}");
    // Esc goes back to the detail view.
    press(&mut app, KeyCode::Esc);
    assert!(app.full_text().is_none() && app.detail().is_some());
}

/// The screens of an open full-text view, paged through, as one flat text
/// (it must hold the last error and the last teardown's stderr).
fn opens_whole_after_open(app: &mut App) -> String {
    let first = render_app(app, 100, 30);
    let mut seen = flat(&first);
    for _ in 0..5 {
        press(app, KeyCode::PageDown);
        seen.push_str(&flat(&render_app(app, 100, 30)));
    }
    assert!(seen.contains(&squeezed(REMEDIATION)), "{seen}");
    assert!(seen.contains(&squeezed(STDERR)), "{seen}");
    first
}

/// The detail view's Services section (a dead process under an active
/// instance, its log, no origin) and its Last teardown section (the stderr
/// tail of the reaper's failed teardown).
#[test]
fn detail_shows_services_and_the_last_teardown_output() {
    let mut app = app();
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Enter);
    let state = tempfile::tempdir().expect("tempdir");
    let logs = state.path().join("logs/sl-golf");
    std::fs::create_dir_all(&logs).expect("mkdir");
    std::fs::write(logs.join("web.log"), "serving\n").expect("log");
    let detail = InstanceDetail {
        substrate: "local".into(),
        logs_dir_name: "sl-golf".into(),
        checkpoints: vec![stackless_tui::model::detail::Checkpoint {
            step_id: "start:web".into(),
            resource_kind: "process".into(),
            resource_id: "4242".into(),
            // The log this state dir gives: stackless observes the process.
            payload: format!(
                r#"{{"pid":4242,"start_time":1796117794,"port":41325,"hosts":["web.golf.localhost"],"log":"{}"}}"#,
                logs.join("web.log").display()
            ),
            recorded_at: Some(CAPTURE - 600),
        }],
        ..InstanceDetail::default()
    };
    let mut probe = stackless_tui::store::probe::FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    let detail = stackless_tui::store::services::observe(detail, state.path(), &mut probe);
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Ok(Some(detail)),
    });
    let mut seen = String::new();
    for _ in 0..5 {
        seen.push_str(&render_app(&app, 120, 40));
        press(&mut app, KeyCode::PageDown);
    }
    for expected in [
        "Services (1)",
        "web              on local · absent · pid 4242 dead · port 41325",
        "sl-golf/web.log · 8 B · last line",
        "Last teardown (by this console)",
        "result           reaper failed",
        "stderr           warning: process:web did not exit after SIGTERM",
        "killed pid 4242 with SIGKILL",
    ] {
        assert!(seen.contains(expected), "{expected}:\n{seen}");
    }
}

/// An active instance with no service process recorded (its `up` failed or
/// was cancelled before `start`) is marked on its row: `stackless list`
/// calls its services `unknown`. Nothing is marked before the watcher's
/// first services read.
#[test]
fn instances_row_marks_services_never_started() {
    let mut app = app();
    let before = render_app(&app, 120, 40);
    assert!(!before.contains("svc unknown"), "{before}");
    let counts = (*app.snapshot().services_dead)
        .clone()
        .with_recorded_names(["golf"]);
    let next = app.snapshot().with_services_dead(Arc::new(counts));
    app.handle(Event::Snapshot(Arc::new(next)), CAPTURE);
    let screen = render_app(&app, 120, 40);
    let other = screen
        .lines()
        .find(|l| l.contains("an-instance-name"))
        .expect("the other row");
    assert!(other.contains(" svc unknown"), "{screen}");
    let golf = screen
        .lines()
        .find(|l| l.contains(" golf "))
        .expect("golf's row");
    assert!(!golf.contains("unknown"), "{screen}");
}

/// A service that died under an active instance is marked on its
/// Instances row (`1 svc dead`, before any lock text), from the counts the
/// watcher probed into the snapshot.
#[test]
fn instances_row_marks_a_dead_service() {
    let mut app = app();
    let dead = [("golf".to_owned(), 1)].into_iter().collect();
    let next = app.snapshot().with_services_dead(Arc::new(dead));
    app.handle(Event::Snapshot(Arc::new(next)), CAPTURE);
    let screen = render_app(&app, 120, 40);
    let golf = screen
        .lines()
        .find(|l| l.contains(" golf "))
        .expect("golf's row");
    // The 63-character name keeps its room: LOCK in its short form.
    assert!(golf.contains(" 1 dead "), "{screen}");
    let other = screen
        .lines()
        .find(|l| l.contains("an-instance-name"))
        .expect("the other row");
    assert!(!other.contains(" dead"), "{screen}");
}

/// With the write keys off, the footer keeps the keys a reader needs (rank
/// 0 and 1: `Tab pane`) and cuts the long reason rather than dropping them;
/// the new `e full text` gives way first.
#[test]
fn read_only_footer_keeps_tab_and_cuts_the_reason() {
    let config = AppConfig {
        store_label: "/state/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Off("read-only".into()),
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Err("the store is open read-only (--read-only): r and d are off".into()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, CAPTURE);
    app.handle(
        Event::Snapshot(Arc::new(Snapshot::from(Rows {
            generation: Generation::new(14),
            instances: vec![instance("golf")].into(),
            reap_attempts: vec![],
            operations: vec![],
            ..Rows::default()
        }))),
        CAPTURE,
    );
    let screen = render_app(&app, 120, 40);
    let footer = screen.lines().last().expect("a footer");
    assert!(footer.contains("Tab pane"), "{footer}");
    assert!(
        footer.contains("(r/d/c/L/v off: the store is open read-only"),
        "{footer}"
    );
    assert!(!footer.contains("e full text"), "{footer}");
}

/// Rows of `pane` drawn alone at `width` x `height` whose first text
/// cell is drawn reversed (the selected log line).
fn reversed_rows(
    app: &App,
    width: u16,
    height: u16,
    pane: fn(&mut ratatui::Frame, ratatui::layout::Rect, &App),
) -> Vec<String> {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut terminal = ratatui::Terminal::new(backend).expect("terminal");
    terminal.draw(|f| pane(f, f.area(), app)).expect("draw");
    let buffer = terminal.backend().buffer();
    (1..height.saturating_sub(1))
        .filter(|&y| {
            buffer[(1, y)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        })
        .map(|y| {
            (1..width - 1)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

fn reaped(at: i64, name: &str) -> Event {
    Event::Activity(Activity::new(
        at,
        Actor::Reaper,
        name,
        ActivityKind::Reaped,
        "",
    ))
}

/// The full text open now: its `instance` line.
fn opened_instance(app: &App) -> String {
    let full = app.full_text().expect("a full-text view");
    full.text
        .lines
        .iter()
        .find(|l| l.starts_with("instance "))
        .cloned()
        .unwrap_or_default()
}

/// Activity has a selected line. In a log shorter than the pane, k selects
/// an older line and Enter opens it (not the newest); new lines keep the
/// selection; the oldest of a long log can be opened; G follows the newest
/// again; the selection is drawn reversed.
#[test]
fn activity_opens_the_selected_line_not_the_newest() {
    let mut app = app();
    app.handle(reaped(CAPTURE - 1, "alpha"), CAPTURE);
    app.handle(reaped(CAPTURE, "bravo"), CAPTURE);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Activity);
    render_app(&app, 100, 30);
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('k'));
    let pane = stackless_tui::ui::panes::activity::render;
    assert_eq!(
        reversed_rows(&app, 80, 8, pane)
            .iter()
            .map(|r| &r[..26])
            .collect::<Vec<_>>(),
        ["13:58:04 reaper golf faile"]
    );
    // A new line arrives: the selection stays on golf.
    app.handle(reaped(CAPTURE + 1, "charlie"), CAPTURE);
    press(&mut app, KeyCode::Enter);
    assert_eq!(opened_instance(&app), "instance     golf");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('e'));
    assert_eq!(opened_instance(&app), "instance     alpha");
    press(&mut app, KeyCode::Esc);
    // A long log: the oldest line can be selected and opened.
    for i in 0..60 {
        app.handle(reaped(CAPTURE + 2 + i, &format!("n{i}")), CAPTURE);
    }
    render_app(&app, 100, 30);
    press(&mut app, KeyCode::Char('g'));
    let screen = render_app(&app, 100, 30);
    assert!(screen.contains("reaper golf failed"), "{screen}");
    press(&mut app, KeyCode::Enter);
    assert_eq!(opened_instance(&app), "instance     golf");
    press(&mut app, KeyCode::Esc);
    // G: the newest, followed as lines arrive.
    press(&mut app, KeyCode::Char('G'));
    app.handle(reaped(CAPTURE + 100, "last"), CAPTURE);
    press(&mut app, KeyCode::Enter);
    assert_eq!(opened_instance(&app), "instance     last");
}

/// A click on an Activity line selects it; Enter opens it. Supervisor too:
/// k selects the older note.
#[test]
fn a_click_selects_the_log_line_under_it() {
    let mut app = app();
    app.handle(reaped(CAPTURE - 1, "alpha"), CAPTURE);
    app.handle(reaped(CAPTURE, "bravo"), CAPTURE);
    let screen = render_app(&app, 100, 30);
    let row = screen
        .lines()
        .position(|l| l.contains("reaper alpha reaped"))
        .expect("alpha drawn");
    let click = Event::Input(crossterm::event::Event::Mouse(
        crossterm::event::MouseEvent {
            kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
            column: 70,
            row: u16::try_from(row).expect("row"),
            modifiers: crossterm::event::KeyModifiers::NONE,
        },
    ));
    assert_eq!(app.handle(click, CAPTURE), None);
    assert_eq!(app.focus(), Focus::Activity);
    press(&mut app, KeyCode::Enter);
    assert_eq!(opened_instance(&app), "instance     alpha");
    press(&mut app, KeyCode::Esc);
    // Supervisor: two notes, k selects the older one.
    app.handle(
        Event::Supervisor(SupervisorNote {
            at: CAPTURE,
            kind: SupervisorKind::Started,
            text: "helper started (pid 7)".into(),
            until: None,
        }),
        CAPTURE,
    );
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Supervisor);
    render_app(&app, 100, 30);
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Enter);
    let full = app.full_text().expect("open");
    assert!(
        full.text
            .lines
            .iter()
            .any(|l| l.contains("helper exited with status 3")),
        "{:?}",
        full.text.lines
    );
}

/// No detail field is cut. A 1,500-character `definition_dir`, a
/// 600-character resource id, a 1,500-character definition line and a
/// 200-character readiness show whole in the detail view (wrapped), and `e`
/// there opens the whole document.
#[test]
fn detail_fields_are_whole_and_e_opens_the_whole_document() {
    use stackless_tui::model::detail::{Observation, Resource};
    let mut app = app();
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Enter);
    let dir = format!("/srv/{}", "d".repeat(1_500));
    let id = format!("res-{}", "i".repeat(600));
    let line = format!("x = \"{}\"", "v".repeat(1_500));
    let readiness = format!("ready-{}", "r".repeat(200));
    let detail = InstanceDetail {
        definition_dir: dir.clone(),
        definition: format!("[svc]\n{line}\n"),
        resources: vec![Resource {
            kind: "process".into(),
            id: id.clone(),
            phase: "live".into(),
            ownership: "owned".into(),
            provider: "local".into(),
            step_id: "start:web".into(),
            updated_at: None,
        }],
        observations: vec![Observation {
            node: "service:web".into(),
            readiness: Some(readiness.clone()),
            existence: Some("present".into()),
            configuration: Some("applied".into()),
            observed_at: None,
            error_code: None,
            drift: vec![],
        }],
        ..InstanceDetail::default()
    };
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Ok(Some(detail.into())),
    });
    let seen = flat(&render_app(&app, 200, 150));
    for whole in [&dir, &id, &line, &readiness] {
        assert!(seen.contains(&squeezed(whole)), "cut: {}", &whole[..20]);
    }
    press(&mut app, KeyCode::Char('e'));
    let full = app.full_text().expect("the detail document");
    assert_eq!(full.text.title, "Detail · golf");
    let text = full.text.lines.join("\n");
    for whole in [&dir, &id, &line, &readiness] {
        assert!(text.contains(whole.as_str()), "cut: {}", &whole[..20]);
    }
    assert!(text.contains("Last teardown (by this console)"), "{text}");
    let seen = flat(&render_app(&app, 200, 150));
    assert!(seen.contains(&squeezed(&dir)), "not drawn whole");
}

/// The full-text view wraps its text once per width; frames at the same
/// width (idle ticks, scrolling) wrap nothing again. A text past the 10 MiB
/// bound says in the title what it left out.
#[test]
fn full_text_wraps_once_per_width_and_names_its_cut() {
    let mut app = app();
    press(&mut app, KeyCode::BackTab);
    press(&mut app, KeyCode::Enter);
    for _ in 0..3 {
        render_app(&app, 100, 30);
    }
    press(&mut app, KeyCode::Char('j'));
    render_app(&app, 100, 30);
    assert_eq!(
        app.full_text().map(stackless_tui::ui::app::FullView::wraps),
        Some(1)
    );
    render_app(&app, 120, 30);
    render_app(&app, 120, 30);
    assert_eq!(
        app.full_text().map(stackless_tui::ui::app::FullView::wraps),
        Some(2)
    );
    press(&mut app, KeyCode::Esc);
    // 11 MiB of stderr on one entry: 10 MiB shown, the rest counted.
    let mut huge = Activity::new(CAPTURE, Actor::Operator, "golf", ActivityKind::Failed, "x");
    huge.stderr_tail = format!("{}\n", "s".repeat(1023)).repeat(11 * 1024);
    app.handle(Event::Activity(huge), CAPTURE);
    press(&mut app, KeyCode::Char('G'));
    press(&mut app, KeyCode::Enter);
    let screen = render_app(&app, 160, 30);
    let title = screen.lines().nth(2).unwrap_or_default();
    // 11,264 lines of 1,023 bytes after 131 bytes of header lines: 10,249
    // whole lines and part of one fit in 10 MiB; 1,014 lines and 1,037,443
    // bytes do not.
    assert!(
        title.contains("10 MiB shown: 1014 more lines (1037443 bytes) not kept"),
        "{title}"
    );
}

/// The last teardown's output survives a restart: recorded in the audit
/// trail by one console, read back from its end by the next, shown on the
/// Activity line (marked), whole with Enter, and in the detail view.
#[test]
fn the_last_teardown_output_survives_a_restart() {
    let state = tempfile::tempdir().expect("tempdir");
    let path = stackless_tui::audit::default_path(state.path());
    {
        let mut log = stackless_tui::audit::AuditLog::open(&path, 1 << 20).expect("audit");
        let mut failed = Activity::new(
            CAPTURE - 3600,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            envelope(),
        );
        failed.stderr_tail = STDERR.into();
        log.activity(&failed).expect("append");
    }
    // The next console: nothing in memory, the trail read back at start.
    let mut app = app_without_activity();
    app.restore_teardowns(stackless_tui::audit::last_teardowns(
        &path,
        stackless_tui::audit::READ_BACK,
    ));
    let screen = render_app(&app, 200, 30);
    assert!(
        screen.contains("reaper golf failed (from audit.jsonl, before this console started)"),
        "{screen}"
    );
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Activity);
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    let mut seen = String::new();
    for _ in 0..4 {
        seen.push_str(&flat(&render_app(&app, 100, 30)));
        press(&mut app, KeyCode::PageDown);
    }
    assert!(seen.contains(&squeezed(STDERR)), "{seen}");
    assert!(
        seen.contains(&squeezed(
            "by an earlier console: read back from the audit trail"
        )),
        "{seen}"
    );
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Enter);
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Ok(Some(InstanceDetail::default().into())),
    });
    let mut seen = String::new();
    for _ in 0..5 {
        seen.push_str(&render_app(&app, 120, 40));
        press(&mut app, KeyCode::PageDown);
    }
    for expected in [
        "Last teardown (by an earlier console, from audit.jsonl)",
        "result           reaper failed",
        "stderr           warning: process:web did not exit after SIGTERM",
        "killed pid 4242 with SIGKILL",
    ] {
        assert!(seen.contains(expected), "{expected}:\n{seen}");
    }
}

/// [`app`] before any Activity: a console just started.
fn app_without_activity() -> App {
    let config = AppConfig {
        store_label: "/state/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(5),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::Program("demo-helper".into()),
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, CAPTURE);
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![instance(LONG_NAME), instance("golf")].into(),
        ..Rows::default()
    };
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    app
}

/// Only a `local` instance records its service processes: an active
/// render (or vercel) instance without one is not marked `svc unknown`
/// (the demo's rows all were).
#[test]
fn a_remote_instance_without_a_recorded_process_is_not_marked_unknown() {
    let mut app = app();
    let mut golf = instance("golf");
    golf.substrate = "render".into();
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![instance(LONG_NAME), golf].into(),
        ..Rows::default()
    };
    let counts = (*app.snapshot().services_dead)
        .clone()
        .with_recorded_names(["nobody"]);
    let next = Snapshot::from(rows).with_services_dead(Arc::new(counts));
    app.handle(Event::Snapshot(Arc::new(next)), CAPTURE);
    let screen = render_app(&app, 120, 40);
    let golf = screen
        .lines()
        .find(|l| l.contains(" golf "))
        .expect("golf's row");
    assert!(golf.contains(" render "), "{screen}");
    assert!(!golf.contains("unknown"), "{screen}");
    let other = screen
        .lines()
        .find(|l| l.contains("an-instance-name"))
        .expect("the other row");
    assert!(other.contains(" svc unknown"), "{screen}");
}
