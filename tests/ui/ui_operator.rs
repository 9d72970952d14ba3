//! Operator experience: find and order (filter, sort), the detail view,
//! help and flash feedback, the mouse, and terminals without colour.
//! Drawn into ratatui's `TestBackend` from the fixture stores at a fixed
//! clock; snapshots live in `tests/snapshots/`.

use crate::common::ui::Answers as _;
use stackless_tui::event::Request;
use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, fixture_store, press, render_app, render_pane, select};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use stackless_tui::event::{Activity, ActivityKind, Actor, Event, StoreHealth};
use stackless_tui::model::{Instance, Liveness, OpLock, ReapAttempt, Rows, Snapshot, Status};
use stackless_tui::store::detail::InstanceDetail;
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::ui::detail::Loaded;
use stackless_tui::ui::{self, App, AppConfig, Effect, FlashLevel, Focus, SortKey, panes};

/// The real stackless store fixture.
const REAL: &str = "stackless-real-v4.db";
const DUO: &str = "duo-79882653-fd55-4b17-bf19-d4afc89a2b5e";

/// `name`'s detail rows from a copy of the real store.
fn real_detail(name: &str) -> InstanceDetail {
    let (_dir, mut store) = fixture_store(REAL);
    store
        .instance_detail(name)
        .expect("read detail")
        .expect("instance exists")
}

fn config() -> AppConfig {
    AppConfig {
        store_label: "/home/operator/.local/state/stackless/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(5),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::Program("demo-helper".into()),
        write_keys: Ok(()),
        host: None,
        no_color: false,
    }
}

fn app_with(snapshot: Snapshot) -> App {
    app_in(config(), snapshot)
}

/// An app with `config` showing `snapshot`.
fn app_in(config: AppConfig, snapshot: Snapshot) -> App {
    let mut app = App::new(config, CAPTURE);
    assert_eq!(
        app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE),
        None
    );
    app
}

fn real_app() -> App {
    app_with(fixture_snapshot(REAL))
}

/// The console drawn into a test terminal, for looking at cell styles.
fn terminal(app: &App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|f| ui::draw(f, app)).expect("draw");
    terminal
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(press(app, KeyCode::Char(c)), None);
    }
}

fn selected_name(app: &App) -> Option<String> {
    app.selected_instance().map(|i| i.name.clone())
}

/// The names in table order.
fn visible_names(app: &App) -> Vec<String> {
    (0..app.visible().len())
        .map(|row| app.instance_at(row).expect("row").name.clone())
        .collect()
}

/// Open the detail view of `name` as the console would: Enter, then the
/// store read handed back.
fn open_detail(app: &mut App, name: &str) {
    select(app, name);
    assert_eq!(
        press(app, KeyCode::Enter),
        Some(Effect::Io(Request::OpenDetail { name: name.into() }))
    );
    assert_eq!(app.detail().map(|d| &d.loaded), Some(&Loaded::Loading));
    app.answer(stackless_tui::event::Answer::Detail {
        name: name.into(),
        result: Ok(Some(real_detail(name).into())),
    });
}

/// The screen row (0-based) whose text contains `needle`.
fn row_of(text: &str, needle: &str) -> u16 {
    let row = text
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not drawn:\n{text}"));
    u16::try_from(row).expect("row")
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> Event {
    Event::Input(crossterm::event::Event::Mouse(MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }))
}

fn click(app: &mut App, column: u16, row: u16) {
    let event = mouse(MouseEventKind::Down(MouseButton::Left), column, row);
    assert_eq!(app.handle(event, CAPTURE), None);
}

fn instance(name: &str, substrate: &str, expires_at: Option<i64>) -> Instance {
    let row = crate::common::builders::instance(name)
        .substrate(substrate)
        .created(Some(CAPTURE - 1000))
        .dirty(None);
    match expires_at {
        Some(expires_at) => row.lease(3600, expires_at),
        None => row.tombstoned(CAPTURE - 100).no_lease(),
    }
    .build()
}

fn attempt(name: &str, attempts: i64, next_retry_at: i64) -> ReapAttempt {
    ReapAttempt {
        instance: name.into(),
        attempts,
        last_error: "}".into(),
        next_retry_at,
    }
}

// -------------------------------------------------------- store read ---

#[test]
fn instance_detail_reads_the_real_store() {
    let golf = real_detail("golf");
    assert!(golf.definition.starts_with("[stack]\nname = \"hello\""));
    assert_eq!(golf.definition_dir, "/home/operator/stacks/def");
    assert_eq!(golf.source_overrides, "{}");
    assert_eq!(golf.checkpoints.len(), 1);
    assert_eq!(golf.checkpoints[0].step_id, "materialize:web");
    assert_eq!(golf.checkpoints[0].recorded_at, Some(1_795_960_294));

    // duo's six checkpoints in the order stackless wrote them.
    let duo = real_detail(DUO);
    let steps: Vec<&str> = duo.checkpoints.iter().map(|c| c.step_id.as_str()).collect();
    assert_eq!(
        steps,
        [
            "materialize:api",
            "start:api",
            "health:api",
            "materialize:web",
            "start:web",
            "health:web"
        ]
    );
    assert_eq!(duo.checkpoints[1].resource_kind, "process");
    assert_eq!(duo.checkpoints[1].resource_id, "15117");
    assert!(duo.checkpoints[1].payload.contains("\"port\":33601"));

    let bravo = real_detail("bravo");
    assert_eq!(
        bravo.source_overrides,
        r#"{"web":"/home/operator/stacks/pin-bravo"}"#
    );
    let (_dir, mut store) = fixture_store(REAL);
    assert_eq!(store.instance_detail("nope").expect("read"), None);
    // A newer store (unknown columns and tables) and an older one read too.
    let (_dir, mut newer) = fixture_store("newer-v6.db");
    let first = newer
        .snapshot(&mut FixedProbe::default())
        .expect("snapshot")
        .instances[0]
        .name
        .clone();
    assert!(newer.instance_detail(&first).expect("read").is_some());
    let (_dir, mut older) = fixture_store("older-v2.db");
    let detail = older
        .instance_detail("legacy-one")
        .expect("read")
        .expect("exists");
    assert!(detail.definition.starts_with("[stack]"));
}

// ------------------------------------------------------------- detail ---

/// What the console writes, stackless shows: the store keeps `code:
/// message`; the detail view still shows the whole envelope of the same
/// failure, read from the last teardown (its audit line, read back at
/// start), and the Last teardown section its remediation.
#[test]
fn detail_reads_a_short_last_error_whole_from_the_audited_teardown() {
    use stackless_tui::model::envelope::{Exit, failure_reason, stored_reason};
    let whole = failure_reason(
        include_str!("../fixtures/envelopes/down-survivors-error.json"),
        &Exit::Code(1),
    );
    let mut snapshot = fixture_snapshot(REAL);
    let row = Arc::make_mut(&mut snapshot.rows)
        .reap_attempts
        .iter_mut()
        .find(|a| a.instance == "golf")
        .expect("golf backs off");
    row.last_error = stored_reason(&whole);
    let mut app = app_with(snapshot);
    let mut failed = Activity::new(
        CAPTURE - 60,
        Actor::Reaper,
        "golf",
        ActivityKind::Failed,
        format!(
            "{} (attempt 3, retry at 2026-11-29T14:00:59Z)",
            stored_reason(&whole)
        ),
    )
    .with_envelope(&whole);
    failed.restored = true;
    app.restore_teardowns(vec![failed]);
    open_detail(&mut app, "golf");
    let text = render_app(&app, 120, 50);
    assert_snapshot!("detail_golf_short_last_error_120x50", text);
    for needle in [
        "code             engine.teardown.survivors",
        "the store keeps code: message; the whole envelope is the last teardown's (audit.jsonl)",
        "remediation      these resources still exist and may bill or hold state",
    ] {
        assert_eq!(
            text.matches(needle).count(),
            if needle.starts_with("remediation") {
                2
            } else {
                1
            },
            "{needle}\n{text}"
        );
    }
    assert!(!text.contains("not a JSON envelope"), "{text}");
}

#[test]
fn detail_of_golf() {
    let mut app = real_app();
    open_detail(&mut app, "golf");
    let text = render_app(&app, 120, 50);
    assert_snapshot!("detail_golf_120x50", text);
    for needle in [
        "╔ golf ",
        "created_at       2026-11-29T13:51:34Z (6m 32s ago)",
        "definition_dir   /home/operator/stacks/def",
        "expires_at       2026-11-29T13:52:34Z (expired 5m 32s ago)",
        "attempts         3",
        "next_retry_at    2026-11-29T14:00:59Z (retry in 2m 53s)",
        "last_error       }",
        "not an envelope: the stackless daemon keeps only the last line of `down --json`",
        "Checkpoints (1) · p shows payloads",
        "materialize:web  source  2026-11-29T13:51:34Z  /home/operator/.local/state/stackless/sources/golf/web",
        "Definition (10 lines)",
        "[services.web.local]",
        "Esc back",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    assert!(!text.contains("Backoffs"), "the detail replaces the panes");
    // The countdowns move with the clock (no new store read).
    app.handle(Event::Tick, CAPTURE + 10);
    let text = render_app(&app, 120, 50);
    assert!(text.contains("(retry in 2m 43s)"), "{text}");
    // Esc goes back.
    assert_eq!(press(&mut app, KeyCode::Esc), None);
    assert!(app.detail().is_none());
    assert!(render_app(&app, 120, 50).contains("Backoffs"));
}

#[test]
fn detail_of_duo_with_payloads() {
    let mut app = real_app();
    open_detail(&mut app, DUO);
    let hidden = render_app(&app, 120, 60);
    assert!(!hidden.contains("\"pid\""), "{hidden}");
    press(&mut app, KeyCode::Char('p'));
    assert!(app.detail().is_some_and(|d| d.payloads));
    let text = render_app(&app, 120, 60);
    assert_snapshot!("detail_duo_payloads_120x60", text);
    assert!(
        text.contains("Checkpoints (6) · p hides payloads"),
        "{text}"
    );
    assert!(text.contains(r#""pid": 15117,"#), "{text}");
    assert!(text.contains(r#""port": 33601,"#), "{text}");
    assert!(text.contains(r#""api.duo-79882653-fd55-4b17-bf19-d4afc89a2b5e.localhost""#));
    press(&mut app, KeyCode::Char('p'));
    assert!(!render_app(&app, 120, 60).contains("\"pid\""));
}

#[test]
fn detail_scrolls() {
    let mut app = real_app();
    open_detail(&mut app, DUO);
    press(&mut app, KeyCode::Char('p'));
    let top = render_app(&app, 100, 30);
    let name_line = format!("{:<16} duo-", "name");
    assert!(top.contains(&name_line), "{top}");
    let last_line = "run = \"/usr/bin/python3 -m http.server $PORT --bind 127.0.0.1\"";
    assert!(!top.contains("[services.api.local]"), "{top}");
    // j moves the field cursor; the view scrolls only to show it.
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.detail().map(|d| (d.cursor, d.scroll)), Some((1, 0)));
    press(&mut app, KeyCode::PageDown);
    // 30 rows: header 2 + footer 1 + borders 2 leave 25 document lines.
    assert_eq!(app.detail().map(|d| d.scroll), Some(25));
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::Char('k'));
    assert_eq!(app.detail().map(|d| d.scroll), Some(0));
    // End: the last field; End again: the document's end.
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::End);
    let bottom = render_app(&app, 100, 30);
    let lines: Vec<&str> = bottom.lines().collect();
    assert!(
        lines[lines.len() - 3].contains(last_line),
        "the definition's last line ends the view:\n{bottom}"
    );
    assert!(bottom.contains("[services.api.local]"), "{bottom}");
    assert!(!bottom.contains(&name_line), "{bottom}");
    let scroll = app.detail().map(|d| d.scroll).expect("open");
    // Past the end stays at the end.
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.detail().map(|d| d.scroll), Some(scroll));
    assert!(
        bottom.contains(&format!("lines {}-", scroll + 1)),
        "{bottom}"
    );
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(app.detail().map(|d| d.scroll), Some(0));
}

#[test]
fn backoffs_enter_shows_the_whole_error_then_detail_refreshes_on_snapshots() {
    let mut app = real_app();
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Backoffs);
    // Enter on a backoff opens its whole line, not the detail.
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert_eq!(
        app.full_text().map(|f| f.text.title.as_str()),
        Some("Backoff · golf")
    );
    press(&mut app, KeyCode::Esc);
    assert!(app.full_text().is_none());
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Instances);
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        Some(Effect::Io(Request::OpenDetail {
            name: "golf".into()
        }))
    );
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Ok(Some(real_detail("golf").into())),
    });
    let _ = render_app(&app, 100, 30);
    press(&mut app, KeyCode::Char('j'));
    // A new snapshot asks for a fresh read; the answer keeps the place.
    let snapshot = Arc::new(app.snapshot().clone());
    assert_eq!(
        app.handle(Event::Snapshot(snapshot), CAPTURE),
        Some(Effect::Io(Request::OpenDetail {
            name: "golf".into()
        }))
    );
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Ok(Some(real_detail("golf").into())),
    });
    assert_eq!(app.detail().map(|d| (d.cursor, d.scroll)), Some((1, 0)));
    // An answer for another instance (a detail closed meanwhile) is ignored.
    app.answer(stackless_tui::event::Answer::Detail {
        name: "alpha".into(),
        result: Ok(None),
    });
    assert_eq!(app.detail().map(|d| d.name.as_str()), Some("golf"));
    assert!(matches!(
        app.detail().map(|d| &d.loaded),
        Some(Loaded::Ready(_))
    ));
    // A failed refresh keeps what was read, quietly.
    app.answer(stackless_tui::event::Answer::Detail {
        name: "golf".into(),
        result: Err("busy".into()),
    });
    assert!(matches!(
        app.detail().map(|d| &d.loaded),
        Some(Loaded::Ready(_))
    ));
    assert!(app.flash().is_none());
    // Enter in the Supervisor pane opens nothing.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Tab);
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert!(app.detail().is_none());
}

#[test]
fn detail_cursor_moves_over_fields_and_y_copies_the_one_under_it() {
    let mut app = real_app();
    open_detail(&mut app, "golf");
    let text = render_app(&app, 120, 50);
    assert!(text.contains(" ▶ name             golf"), "{text}");
    let mut moves = 0;
    while !render_app(&app, 120, 50).contains(" ▶ expires_at ") {
        assert_eq!(press(&mut app, KeyCode::Char('j')), None);
        moves += 1;
        assert!(moves < 20, "no expires_at field");
    }
    let terminal = terminal(&app, 120, 50);
    let text = terminal.backend().to_string();
    assert_snapshot!("detail_golf_cursor_expires_at_120x50", text);
    // The row under the cursor is reversed; the others are not.
    let buffer = terminal.backend().buffer();
    let row = row_of(&text, "▶ expires_at");
    assert!(buffer[(30, row)].modifier.contains(Modifier::REVERSED));
    assert!(!buffer[(30, row + 1)].modifier.contains(Modifier::REVERSED));
    // y copies the field's value (the time, without its countdown).
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::Copy {
            text: "2026-11-29T13:52:34Z".into()
        })
    );
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some(
            "OSC 52 sent; not pasted? allow clipboard access (OSC 52) in the terminal · lease \
             expires_at: 2026-11-29T13:52:34Z"
        )
    );
    // k goes back up; y on the name copies the name.
    for _ in 0..moves {
        press(&mut app, KeyCode::Char('k'));
    }
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::Copy {
            text: "golf".into()
        })
    );
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        // "sent", not "copied"; how to allow it is said once.
        Some("sent to the terminal's clipboard (OSC 52): instance name: golf")
    );
    // The footer and the help say so (from the key table).
    assert!(render_app(&app, 120, 50).contains("y copy"));
    let text = render_app(&app, 80, 24);
    let title = text.lines().nth(2).expect("title row");
    assert!(
        title.starts_with(
            "\"╔ golf Esc back · p payloads · j/k field · y copy · lines 1-19 of 40 ═"
        ),
        "{title}"
    );
    // A longer name: the title drops hints whole, never the position.
    press(&mut app, KeyCode::Esc);
    open_detail(&mut app, DUO);
    let text = render_app(&app, 80, 24);
    let title = text.lines().nth(2).expect("title row");
    let expected = format!("\"╔ {DUO} Esc back · lines 1-19 of ");
    assert!(title.starts_with(&expected), "{title}");
    let rest = &title[expected.len()..];
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    assert!(digits > 0 && rest[digits..].starts_with(" ═"), "{title}");
}

#[test]
fn detail_and_full_text_times_are_in_the_zone_given() {
    let mut app = real_app();
    app.set_zone(jiff::tz::TimeZone::posix("IST-5:30").unwrap());
    open_detail(&mut app, "golf");
    let text = render_app(&app, 120, 50);
    assert_snapshot!("detail_golf_ist_120x50", text);
    for needle in [
        "created_at       2026-11-29 19:21:34 IST (6m 32s ago)",
        "expires_at       2026-11-29 19:22:34 IST (expired 5m 32s ago)",
        "next_retry_at    2026-11-29 19:30:59 IST (retry in 2m 53s)",
        "materialize:web  source  2026-11-29 19:21:34 IST  /home/operator/",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    // The full text of the detail view, and of a Backoffs row.
    press(&mut app, KeyCode::Char('e'));
    let text = render_app(&app, 120, 50);
    assert!(text.contains("2026-11-29 19:22:34 IST"), "{text}");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    while app.focus() != Focus::Backoffs {
        press(&mut app, KeyCode::Tab);
    }
    press(&mut app, KeyCode::Char('e'));
    let text = render_app(&app, 120, 50);
    assert!(
        text.contains("2026-11-29 19:30:59 IST (retry in 2m 53s)"),
        "{text}"
    );
    press(&mut app, KeyCode::Esc);
    // The reaper's UTC times inside an Activity detail follow the zone, as
    // clock times like the line's own.
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "golf",
            ActivityKind::WaitingBackoff,
            "until 2026-11-29T14:00:59Z",
        )),
        CAPTURE,
    );
    let text = render_app(&app, 120, 50);
    assert!(
        text.contains("19:28:06 reaper golf waiting out backoff: until 19:30:59 "),
        "{text}"
    );
}

#[test]
fn detail_read_failures_show() {
    let mut app = real_app();
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Enter);
    let loading = render_app(&app, 100, 30);
    assert!(loading.contains("reading the store…"), "{loading}");
    assert!(
        loading.contains("23h 47m"),
        "snapshot rows show at once: {loading}"
    );
    app.answer(stackless_tui::event::Answer::Detail {
        name: "alpha".into(),
        result: Err("database is locked\u{1b}[2J".into()),
    });
    let flash = app.flash().expect("flash");
    assert_eq!(flash.level, FlashLevel::Error);
    assert_eq!(flash.text, "cannot read alpha: database is locked\u{1b}[2J");
    let text = render_app(&app, 100, 30);
    assert!(
        text.contains("cannot read the store: database is locked␛[2J"),
        "{text}"
    );
    assert!(
        text.contains("[error] cannot read alpha: database is locked␛[2J"),
        "{text}"
    );
    app.answer(stackless_tui::event::Answer::Detail {
        name: "alpha".into(),
        result: Ok(None),
    });
    assert_eq!(app.detail().map(|d| &d.loaded), Some(&Loaded::Gone));
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((FlashLevel::Warning, "alpha is no longer in the store"))
    );
    assert!(render_app(&app, 100, 30).contains("the store has no such instance"));
}

#[test]
fn keys_act_on_the_detail_instance() {
    let mut app = real_app();
    open_detail(&mut app, "golf");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(app.confirming_reap().map(|i| i.name.as_str()), Some("golf"));
    match press(&mut app, KeyCode::Char('y')) {
        Some(Effect::Reap { instance, .. }) => assert_eq!(instance.name, "golf"),
        other => panic!("expected Reap golf, got {other:?}"),
    }
    press(&mut app, KeyCode::Esc);
    open_detail(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("alpha"));
    let text = render_app(&app, 100, 30);
    assert!(
        text.contains("Tear down alpha? This runs: stackless down alpha --json [y/N]"),
        "{text}"
    );
    // Default No.
    press(&mut app, KeyCode::Enter);
    assert!(app.confirming().is_none());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("teardown of alpha cancelled")
    );
    assert!(app.detail().is_some(), "still in the detail view");
}

/// Whether `c` must never reach the terminal raw.
fn forbidden(c: char) -> bool {
    let u = u32::from(c);
    u < 0x20
        || u == 0x7f
        || (0x80..=0x9f).contains(&u)
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
}

fn assert_clean(buffer: &Buffer) {
    for cell in &buffer.content {
        assert!(
            !cell.symbol().chars().any(forbidden),
            "{:?} reached the terminal",
            cell.symbol()
        );
    }
}

#[test]
fn hostile_detail_is_sanitized() {
    let snapshot = fixture_snapshot("hostile.db");
    let names: Vec<String> = snapshot.instances.iter().map(|i| i.name.clone()).collect();
    let mut app = app_with(snapshot);
    let (_dir, mut store) = fixture_store("hostile.db");
    let hostile = "line one\n\u{1b}[31mRED\u{1b}[0m\r\n\t\u{0}tail\u{202e}x\u{9b}2J";
    for name in &names {
        select(&mut app, name);
        assert_eq!(
            press(&mut app, KeyCode::Enter),
            Some(Effect::Io(Request::OpenDetail { name: name.clone() }))
        );
        let mut detail = store.instance_detail(name).expect("read").expect("exists");
        detail.definition.push_str(hostile);
        detail.source_overrides = hostile.into();
        detail.definition_dir = hostile.into();
        detail
            .checkpoints
            .push(stackless_tui::store::detail::Checkpoint {
                step_id: hostile.into(),
                resource_kind: hostile.into(),
                resource_id: hostile.into(),
                payload: format!("{{\"k\": \"{}\"}}", "\\u001b[2J\\n"),
                recorded_at: Some(i64::MIN),
            });
        app.answer(stackless_tui::event::Answer::Detail {
            name: name.into(),
            result: Ok(Some(detail.into())),
        });
        press(&mut app, KeyCode::Char('p'));
        for (w, h) in [(120, 40), (60, 15), (250, 80)] {
            let terminal = terminal(&app, w, h);
            assert_clean(terminal.backend().buffer());
        }
        let text = render_app(&app, 200, 80);
        assert!(text.contains("␛[31mRED␛[0m"), "{text}");
        assert!(text.contains("@-9223372036854775808"), "{text}");
        press(&mut app, KeyCode::Esc);
    }
}

// ------------------------------------------------------ filter and sort ---

/// Five instances that tell every order apart.
fn mixed_app() -> App {
    let mut instances = vec![
        instance("a-render", "render", Some(CAPTURE + 50)),
        instance("b-local", "local", Some(CAPTURE + 10)),
        instance("c-vercel", "vercel", Some(CAPTURE + 10)),
        instance("d-tomb", "local", None),
        instance("e-local", "local", Some(CAPTURE + 5)),
    ];
    instances[0].name = "a-Render".into();
    instances.sort_by(|a, b| a.name.cmp(&b.name));
    app_with(Snapshot::from(Rows {
        instances: instances.into(),
        reap_attempts: vec![
            attempt("b-local", 5, CAPTURE + 60),
            attempt("c-vercel", 2, CAPTURE - 1),
        ],
        ..Rows::default()
    }))
}

#[test]
fn sorts_cycle_and_order() {
    let mut app = mixed_app();
    assert_eq!(app.sort(), SortKey::LeaseExpiry);
    assert_eq!(
        visible_names(&app),
        ["e-local", "b-local", "c-vercel", "a-Render", "d-tomb"],
        "soonest expiry first, ties by name, no lease last"
    );
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.sort(), SortKey::Name);
    assert_eq!(
        visible_names(&app),
        ["a-Render", "b-local", "c-vercel", "d-tomb", "e-local"]
    );
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.sort(), SortKey::Substrate);
    assert_eq!(
        visible_names(&app),
        ["b-local", "d-tomb", "e-local", "a-Render", "c-vercel"]
    );
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.sort(), SortKey::ReapAttempts);
    assert_eq!(
        visible_names(&app),
        ["b-local", "c-vercel", "a-Render", "d-tomb", "e-local"],
        "most attempts first, then by name"
    );
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((FlashLevel::Info, "sort: reap attempts"))
    );
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.sort(), SortKey::Status);
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.sort(), SortKey::Lock);
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(app.sort(), SortKey::LeaseExpiry);
}

#[test]
fn selection_follows_the_name_through_sorts_and_filters() {
    let mut app = mixed_app();
    select(&mut app, "c-vercel");
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('s'));
        assert_eq!(
            selected_name(&app).as_deref(),
            Some("c-vercel"),
            "{:?}",
            app.sort()
        );
    }
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "c");
    assert_eq!(selected_name(&app).as_deref(), Some("c-vercel"));
    // No match: nothing selected, and the name comes back with the rows.
    type_text(&mut app, "zz");
    assert_eq!(app.visible().len(), 0);
    assert!(app.selected_instance().is_none());
    press(&mut app, KeyCode::Esc);
    assert_eq!(selected_name(&app).as_deref(), Some("c-vercel"));
}

#[test]
fn filter_matches_name_substrate_and_status() {
    let mut app = mixed_app();
    assert_eq!(press(&mut app, KeyCode::Char('/')), None);
    assert!(app.filter_editing());
    type_text(&mut app, "LOCAL");
    assert_eq!(app.filter(), "LOCAL");
    assert_eq!(visible_names(&app), ["e-local", "b-local", "d-tomb"]);
    for _ in 0..5 {
        press(&mut app, KeyCode::Backspace);
    }
    assert_eq!(app.visible().len(), 5, "an empty filter shows everything");
    type_text(&mut app, "tombst");
    assert_eq!(visible_names(&app), ["d-tomb"], "status matches");
    for _ in 0..6 {
        press(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "render");
    assert_eq!(visible_names(&app), ["a-Render"], "case-insensitive name");
    let pane = render_pane(&app, 100, 6, panes::instances::render);
    assert!(pane.contains("/render▏"), "{pane}");
    assert!(
        pane.contains("1/1 match \"render\" (filtered from 5)"),
        "{pane}"
    );
    // Enter keeps the filter and gives the keys back.
    press(&mut app, KeyCode::Enter);
    assert!(!app.filter_editing());
    assert_eq!(app.filter(), "render");
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("filter \"render\": 1 of 5 match")
    );
    let pane = render_pane(&app, 100, 6, panes::instances::render);
    assert!(!pane.contains("▏"), "{pane}");
    assert!(
        pane.contains("1/1 match \"render\" (filtered from 5)"),
        "{pane}"
    );
    // `/` again edits the same filter; Esc clears it.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "x");
    assert_eq!(app.filter(), "renderx");
    press(&mut app, KeyCode::Esc);
    assert!(!app.filter_editing());
    assert_eq!(app.filter(), "");
    assert_eq!(app.visible().len(), 5);
    assert_eq!(app.flash().map(|f| f.text.as_str()), Some("filter cleared"));
    // Esc outside the prompt clears a kept filter too.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "vercel");
    press(&mut app, KeyCode::Enter);
    assert_eq!(visible_names(&app), ["c-vercel"]);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.visible().len(), 5);
}

#[test]
fn filter_with_no_match() {
    let mut app = real_app();
    press(&mut app, KeyCode::Char('/'));
    // Keys are text while the prompt is open: `r` does not reap, `q` does
    // not quit.
    type_text(&mut app, "zzz");
    let text = render_pane(&app, 100, 6, panes::instances::render);
    assert_snapshot!("filter_no_match_100x6", text);
    assert!(text.contains("/zzz▏"), "{text}");
    assert!(
        text.contains("0/0 match \"zzz\" (filtered from 8)"),
        "{text}"
    );
    assert!(
        text.contains("no instance matches \"zzz\" (Esc clears the filter)"),
        "{text}"
    );
    let full = render_app(&app, 100, 30);
    assert!(
        full.contains("type filter  Backspace edit  Enter keep  Esc clear"),
        "{full}"
    );
    type_text(&mut app, "rq");
    assert!(!app.quitting());
    assert_eq!(app.filter(), "zzzrq");
    assert!(app.activity().entries().is_empty());
    press(&mut app, KeyCode::Enter);
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("refused: no instance selected")
    );
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        None,
        "no detail of nothing"
    );
}

#[test]
fn each_sort_on_the_real_store() {
    let mut app = real_app();
    let expected: [(&str, &str, [&str; 8]); 4] = [
        (
            "sort_lease_140x12",
            "sort: lease expiry",
            [
                "golf", DUO, "bravo", "echo", "hotel", "alpha", "charlie", "delta",
            ],
        ),
        (
            "sort_name_140x12",
            "sort: name",
            [
                "alpha", "bravo", "charlie", "delta", DUO, "echo", "golf", "hotel",
            ],
        ),
        (
            // Every instance is local: name order.
            "sort_substrate_140x12",
            "sort: substrate",
            [
                "alpha", "bravo", "charlie", "delta", DUO, "echo", "golf", "hotel",
            ],
        ),
        (
            "sort_reap_attempts_140x12",
            "sort: reap attempts",
            [
                "golf", "alpha", "bravo", "charlie", "delta", DUO, "echo", "hotel",
            ],
        ),
    ];
    for (i, (snapshot, label, names)) in expected.into_iter().enumerate() {
        if i > 0 {
            press(&mut app, KeyCode::Char('s'));
        }
        assert_eq!(visible_names(&app), names, "{label}");
        let text = render_pane(&app, 140, 12, panes::instances::render);
        assert_snapshot!(snapshot, text);
        let rows: Vec<&str> = text.lines().skip(2).take(8).collect();
        for (row, name) in rows.iter().zip(names) {
            assert!(row.contains(name), "{label}: {row} should be {name}");
        }
        let full = render_app(&app, 140, 30);
        assert!(full.contains(label), "{full}");
    }
}

#[test]
fn a_hundred_thousand_instances_filter_and_sort_fast() {
    let instances: Vec<Instance> = (0..100_000)
        .map(|i| {
            let mut instance = instance(
                &format!("i{i:06}"),
                ["local", "render", "vercel"][i % 3],
                Some(CAPTURE + 100_000 - i64::try_from(i).unwrap()),
            );
            if i % 10 == 0 {
                instance.status = Status::Tombstoned;
                instance.lease = None;
            }
            instance
        })
        .collect();
    let mut app = app_with(Snapshot::from(Rows {
        instances: instances.into(),
        reap_attempts: vec![attempt("i050000", 7, CAPTURE)],
        ..Rows::default()
    }));
    // Lease order: the newest names expire first; tombstones last.
    assert_eq!(app.instance_at(0).map(|i| i.name.as_str()), Some("i099999"));
    assert_eq!(
        app.instance_at(99_999).map(|i| i.name.as_str()),
        Some("i099990")
    );
    // Ticks and frames never rebuild the row index.
    let index = app.visible().as_ptr();
    for t in 1..=5 {
        app.handle(Event::Tick, CAPTURE + t);
        let _ = render_app(&app, 120, 40);
    }
    assert_eq!(app.visible().as_ptr(), index);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "I0999");
    assert_eq!(app.visible().len(), 100);
    assert_eq!(app.instance_at(0).map(|i| i.name.as_str()), Some("i099999"));
    type_text(&mut app, "9");
    assert_eq!(app.visible().len(), 10);
    for _ in 0..6 {
        press(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "vercel");
    assert_eq!(app.visible().len(), 33_333);
    press(&mut app, KeyCode::Esc);
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('s'));
        let _ = render_app(&app, 120, 40);
    }
    app.set_sort(SortKey::ReapAttempts, None);
    assert_eq!(app.sort(), SortKey::ReapAttempts);
    assert_eq!(app.instance_at(0).map(|i| i.name.as_str()), Some("i050000"));
}

// ------------------------------------------------------ help and flash ---

#[test]
fn help_lists_every_key_and_mark() {
    let mut app = real_app();
    press(&mut app, KeyCode::Char('?'));
    let first = render_app(&app, 100, 34);
    assert_snapshot!("help_100x34", first);
    // The rest is a page further down.
    press(&mut app, KeyCode::PageDown);
    let text = format!("{first}{}", render_app(&app, 100, 34));
    for needle in [
        " / ",
        " s ",
        " Enter ",
        " Esc ",
        " p ",
        "mouse click",
        "mouse wheel",
        " r ",
        " d ",
        "Tab / Shift-Tab",
        "q / Ctrl-C",
        "✗ lease expired",
        "† tombstoned",
        "L locked, holder alive",
        "F locked on a foreign host",
        "? stale lock",
        "… reap backing off",
        "! reap retry due",
    ] {
        assert!(text.contains(needle), "help lacks {needle:?}:\n{text}");
    }
    // Help opens over the detail view too, and Esc closes only the help.
    press(&mut app, KeyCode::Esc);
    open_detail(&mut app, "golf");
    press(&mut app, KeyCode::Char('?'));
    assert!(app.help_open());
    press(&mut app, KeyCode::Esc);
    assert!(!app.help_open());
    assert!(app.detail().is_some());
}

#[test]
fn flash_reports_actions_and_expires() {
    let mut app = real_app();
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('r'));
    let flash = app.flash().expect("flash").clone();
    assert_eq!(flash.level, FlashLevel::Warning);
    assert_eq!(
        flash.text,
        "refused: lease has not expired (use d to tear down)"
    );
    let footer = render_pane(&app, 100, 1, panes::footer::render);
    assert!(
        footer.contains("[warn] refused: lease has not expired (use d to tear down)"),
        "{footer}"
    );
    app.handle(Event::Tick, CAPTURE + 3);
    assert!(app.flash().is_some(), "3 s: still shown");
    app.handle(Event::Tick, CAPTURE + 4);
    assert!(app.flash().is_none(), "4 s: gone");
    let footer = render_pane(&app, 100, 1, panes::footer::render);
    assert!(
        footer.contains("r reap  d down  ? help  q quit"),
        "{footer}"
    );

    // Any event moves the clock: no tick needed for the flash to go.
    let mut app = real_app();
    select(&mut app, "golf");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert!(matches!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::Reap { .. })
    ));
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((FlashLevel::Info, "reap requested for golf"))
    );
    app.handle(Event::StoreHealth(StoreHealth::Ok), CAPTURE + 5);
    assert!(app.flash().is_none());
}

#[test]
fn flash_follows_operator_activity() {
    let mut app = real_app();
    let operator = |kind, detail: &str| {
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Operator,
            "golf",
            kind,
            detail,
        ))
    };
    app.handle(operator(ActivityKind::Started, ""), CAPTURE);
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((FlashLevel::Info, "tearing down golf"))
    );
    app.handle(
        operator(ActivityKind::Reaped, "down succeeded in 2s"),
        CAPTURE,
    );
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((FlashLevel::Info, "golf reaped: down succeeded in 2s"))
    );
    app.handle(operator(ActivityKind::TornDown, ""), CAPTURE);
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((FlashLevel::Info, "golf torn down"))
    );
    app.handle(
        operator(
            ActivityKind::Failed,
            r#"{"ok":false,"error":{"code":"engine.teardown.survivors","message":"2 resources survived"}}"#,
        ),
        CAPTURE,
    );
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((
            FlashLevel::Error,
            "golf failed: engine.teardown.survivors: 2 resources survived"
        ))
    );
    let footer = render_pane(&app, 100, 1, panes::footer::render);
    assert!(
        footer.contains("[error] golf failed: engine.teardown.survivors"),
        "{footer}"
    );
    app.handle(
        operator(ActivityKind::SkippedLocked, "held by pid 7"),
        CAPTURE,
    );
    assert_eq!(app.flash().map(|f| f.level), Some(FlashLevel::Warning));
    // The reaper's own work does not flash.
    let before = app.flash().cloned();
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "delta",
            ActivityKind::Reaped,
            "",
        )),
        CAPTURE,
    );
    assert_eq!(app.flash().cloned(), before);
    // Confirmed teardowns say so.
    select(&mut app, "bravo");
    press(&mut app, KeyCode::Char('d'));
    assert!(matches!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::TearDown { .. })
    ));
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("teardown requested for bravo")
    );
}

// -------------------------------------------------------------- mouse ---

#[test]
fn click_selects_the_row_under_the_pointer() {
    let mut app = real_app();
    // Before any frame there is no layout: clicks do nothing.
    click(&mut app, 10, 8);
    assert_eq!(selected_name(&app).as_deref(), Some("golf"));
    press(&mut app, KeyCode::Tab);
    let text = render_app(&app, 120, 40);
    // Header 2 rows, border, column headers: the first data row is row 4.
    assert_eq!(row_of(&text, "golf"), 4);
    let hotel = row_of(&text, "hotel");
    click(&mut app, 10, hotel);
    assert_eq!(app.focus(), Focus::Instances);
    assert_eq!(selected_name(&app).as_deref(), Some("hotel"));
    let text = render_app(&app, 120, 40);
    assert!(
        text.lines()
            .nth(usize::from(hotel))
            .is_some_and(|l| l.contains("▶ hotel")),
        "{text}"
    );
    // The column header row and the empty rows below the table only focus.
    click(&mut app, 10, 3);
    click(&mut app, 10, hotel + 5);
    assert_eq!(selected_name(&app).as_deref(), Some("hotel"));
    // A Backoffs row: focus and select it.
    let golf_backoff = row_of(&text, "retry in 2m 53s");
    click(&mut app, 5, golf_backoff);
    assert_eq!(app.focus(), Focus::Backoffs);
    assert_eq!(app.backoff_index(), 0);
    // Any pane takes focus.
    let activity = row_of(&text, "Activity");
    click(&mut app, 50, activity + 1);
    assert_eq!(app.focus(), Focus::Activity);
    let supervisor = row_of(&text, "Supervisor");
    click(&mut app, 100, supervisor + 1);
    assert_eq!(app.focus(), Focus::Supervisor);
    // The header and the footer do nothing.
    click(&mut app, 10, 0);
    click(&mut app, 10, 39);
    assert_eq!(app.focus(), Focus::Supervisor);
}

#[test]
fn click_in_a_scrolled_table() {
    let instances: Vec<Instance> = (0..100)
        .map(|i| instance(&format!("i{i:03}"), "local", Some(CAPTURE + i)))
        .collect();
    let mut app = app_with(Snapshot::from(Rows {
        instances: instances.into(),
        ..Rows::default()
    }));
    let _ = render_app(&app, 100, 30);
    press(&mut app, KeyCode::End);
    let text = render_app(&app, 100, 30);
    assert!(text.contains("▶ i099"), "{text}");
    let row = row_of(&text, "i095");
    click(&mut app, 20, row);
    assert_eq!(selected_name(&app).as_deref(), Some("i095"));
    assert_eq!(app.selected_index(), 95);
}

#[test]
fn wheel_scrolls_the_pane_under_the_pointer() {
    let instances: Vec<Instance> = (0..50)
        .map(|i| instance(&format!("i{i:03}"), "local", Some(CAPTURE + i)))
        .collect();
    let mut app = app_with(Snapshot::from(Rows {
        instances: instances.into(),
        ..Rows::default()
    }));
    for i in 0..40 {
        app.handle(
            Event::Activity(Activity::new(
                CAPTURE + i,
                Actor::Reaper,
                &format!("x{i}"),
                ActivityKind::Reaped,
                "",
            )),
            CAPTURE,
        );
    }
    let text = render_app(&app, 100, 30);
    let instances_row = row_of(&text, "i001");
    let activity_row = row_of(&text, "Activity") + 1;
    app.handle(
        mouse(MouseEventKind::ScrollDown, 10, instances_row),
        CAPTURE,
    );
    assert_eq!(app.selected_index(), 3);
    app.handle(mouse(MouseEventKind::ScrollUp, 10, instances_row), CAPTURE);
    app.handle(mouse(MouseEventKind::ScrollUp, 10, instances_row), CAPTURE);
    assert_eq!(app.selected_index(), 0);
    app.handle(mouse(MouseEventKind::ScrollUp, 10, activity_row), CAPTURE);
    assert_eq!(app.activity().scroll_up(), 3);
    assert_eq!(
        app.focus(),
        Focus::Instances,
        "the wheel does not take focus"
    );
    app.handle(mouse(MouseEventKind::ScrollDown, 10, activity_row), CAPTURE);
    assert_eq!(app.activity().scroll_up(), 0);

    // In the detail view the wheel scrolls the document.
    let mut app = real_app();
    open_detail(&mut app, DUO);
    press(&mut app, KeyCode::Char('p'));
    let _ = render_app(&app, 100, 30);
    app.handle(mouse(MouseEventKind::ScrollDown, 50, 10), CAPTURE);
    assert_eq!(app.detail().map(|d| d.scroll), Some(3));
    click(&mut app, 50, 10);
    assert!(app.detail().is_some());
}

#[test]
fn mouse_never_answers_the_confirmation() {
    let mut app = real_app();
    select(&mut app, "alpha");
    let text = render_app(&app, 120, 40);
    press(&mut app, KeyCode::Char('d'));
    assert!(app.confirming().is_some());
    let golf = row_of(&text, "golf");
    click(&mut app, 10, golf);
    app.handle(mouse(MouseEventKind::ScrollDown, 10, golf), CAPTURE);
    assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("alpha"));
    assert_eq!(selected_name(&app).as_deref(), Some("alpha"));
}

// ------------------------------------------------------ any terminal ---

/// Every cell's colours are `Reset`.
fn colourless(buffer: &Buffer) -> bool {
    buffer
        .content
        .iter()
        .all(|c| c.fg == Color::Reset && c.bg == Color::Reset)
}

/// The real store plus one live lock (echo) and one on a foreign host
/// (hotel), a store error banner, activity and a flash.
fn every_state_app() -> App {
    every_state_in(config())
}

/// [`every_state_app`] with `config`.
fn every_state_in(config: AppConfig) -> App {
    let mut snapshot = fixture_snapshot(REAL);
    snapshot
        .liveness_mut()
        .insert("echo".into(), Liveness::Alive);
    let hotel = snapshot
        .instances
        .iter_mut()
        .find(|i| i.name == "hotel")
        .expect("hotel");
    hotel.lock = Some(Box::new(OpLock {
        operation: "verify".into(),
        holder_pid: 7,
        holder_start_time: 1,
        acquired_at: CAPTURE - 60,
        holder_host: Some("build-box".into()),
        claim_id: None,
    }));
    snapshot
        .liveness_mut()
        .insert("hotel".into(), Liveness::ForeignHost("build-box".into()));
    let mut app = app_in(config, snapshot);
    app.handle(
        Event::StoreHealth(StoreHealth::Error("disk I/O".into())),
        CAPTURE,
    );
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "}",
        )),
        CAPTURE,
    );
    app
}

#[test]
fn no_color_draws_without_colours() {
    let mut app = every_state_app();
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('r'));
    assert!(app.flash().is_some());
    // With colours, the same screen has some.
    assert!(!colourless(terminal(&app, 120, 40).backend().buffer()));
    // The same, with NO_COLOR set at start.
    let mut app = every_state_in(AppConfig {
        no_color: true,
        ..config()
    });
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('r'));
    assert!(app.flash().is_some());
    assert!(app.no_color());
    let terminal = terminal(&app, 120, 40);
    let buffer = terminal.backend().buffer();
    assert!(colourless(buffer), "a cell kept a colour");
    let text = terminal.backend().to_string();
    assert_snapshot!("no_color_120x40", text);
    // Selection still shows (reversed), and every state has a mark.
    let alpha_row = row_of(&text, "▶ alpha");
    assert!(
        (0..120).any(|x| buffer[(x, alpha_row)].modifier.contains(Modifier::REVERSED)),
        "selection reversed"
    );
    let row = |name: &str| -> String {
        text.lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{name} row"))
            .to_owned()
    };
    let st = |name: &str| -> String {
        // The ST column follows NAME: the 3 characters after the name's
        // column (NAME is as wide as the widest name, duo's, cut to fit).
        let line = row(name);
        let header = text
            .lines()
            .find(|l| l.contains("NAME") && l.contains("ST"))
            .expect("header");
        let at = header.chars().position(|c| c == 'S').expect("ST");
        line.chars().skip(at).take(3).collect()
    };
    assert_eq!(st("golf"), "✗ …", "expired, backing off");
    assert_eq!(st("echo"), " L ", "locked, holder alive");
    assert_eq!(st("hotel"), " F ", "locked on a foreign host");
    assert_eq!(st("charlie"), "†  ", "tombstoned");
    assert_eq!(st("alpha"), "   ", "nothing to report");
    // Stale lock: the real fixture's echo.
    let mut app = app_in(
        AppConfig {
            no_color: true,
            ..config()
        },
        fixture_snapshot(REAL),
    );
    let text = render_app(&app, 120, 40);
    let echo = text.lines().find(|l| l.contains(" echo ")).expect("echo");
    assert!(echo.contains(" ?  local"), "{echo}");
    // The detail and help views are colourless too.
    open_detail(&mut app, "golf");
    assert!(colourless(self::terminal(&app, 120, 40).backend().buffer()));
    press(&mut app, KeyCode::Char('?'));
    assert!(colourless(self::terminal(&app, 120, 40).backend().buffer()));
}

#[test]
fn too_small_and_resize_storm() {
    let mut app = every_state_app();
    let text = render_app(&app, 59, 15);
    assert_snapshot!("too_small_59x15", text);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "\"terminal too small: 59x15, needs 60x15                     \""
    );
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.trim_matches(['"', ' ']).is_empty()),
        "{text}"
    );
    let _ = render_app(&app, 1, 1);
    let _ = render_app(&app, 0, 0);
    // A click while too small: no layout, nothing happens.
    click(&mut app, 0, 0);
    assert_eq!(app.focus(), Focus::Instances);
    for i in 0..200_u16 {
        let (w, h) = ((i * 37) % 260, (i * 23) % 90);
        app.handle(Event::Input(crossterm::event::Event::Resize(w, h)), CAPTURE);
        match i % 50 {
            10 => {
                press(&mut app, KeyCode::Enter);
            }
            11 => app.answer(stackless_tui::event::Answer::Detail {
                name: "golf".into(),
                result: Ok(Some(real_detail("golf").into())),
            }),
            20 => {
                press(&mut app, KeyCode::Char('?'));
            }
            30 => {
                press(&mut app, KeyCode::Esc);
                press(&mut app, KeyCode::Esc);
                press(&mut app, KeyCode::Char('/'));
                type_text(&mut app, "o");
            }
            40 => {
                press(&mut app, KeyCode::Enter);
                press(&mut app, KeyCode::Char('s'));
            }
            _ => {}
        }
        let text = render_app(&app, w, h);
        if w > 0 && h > 0 && (w < 60 || h < 15) {
            let first = text.lines().next().unwrap_or_default();
            assert!(
                first.starts_with("\"terminal too small")
                    || "terminal too small".starts_with(first.trim_matches('"').trim_end()),
                "{w}x{h}: {first}"
            );
        }
        app.handle(mouse(MouseEventKind::ScrollDown, w / 2, h / 2), CAPTURE);
        click(&mut app, w / 3, h / 3);
    }
}

/// `G` in the detail view puts the field cursor on the last field (in view),
/// `g` on the first, at the top.
#[test]
fn g_and_shift_g_move_the_detail_cursor_to_the_first_and_last_field() {
    let mut app = real_app();
    open_detail(&mut app, "golf");
    render_app(&app, 80, 24);
    // The last field: where j stops moving the cursor.
    for _ in 0..200 {
        press(&mut app, KeyCode::Char('j'));
        render_app(&app, 80, 24);
    }
    let last = app.detail().unwrap().cursor;
    assert!(last > 5, "{last}");
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(app.detail().map(|d| (d.cursor, d.scroll)), Some((0, 0)));
    render_app(&app, 80, 24);
    press(&mut app, KeyCode::Char('G'));
    assert_eq!(app.detail().map(|d| d.cursor), Some(last));
    let text = render_app(&app, 80, 24);
    assert_eq!(text.matches('▶').count(), 1, "{text}");
    let copied = press(&mut app, KeyCode::Char('y'));
    press(&mut app, KeyCode::Char('g'));
    for _ in 0..last {
        press(&mut app, KeyCode::Char('j'));
        render_app(&app, 80, 24);
    }
    assert_eq!(press(&mut app, KeyCode::Char('y')), copied);
}
