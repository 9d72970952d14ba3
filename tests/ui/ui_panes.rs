//! The UI, drawn into ratatui's `TestBackend` from the fixture stores at a
//! fixed clock, and its key handling. Snapshots live in `tests/snapshots/`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, press, render_app, render_pane, select};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use stackless_tui::event::{
    Activity, ActivityKind, Actor, Event, StoreHealth, SupervisorKind, SupervisorNote,
};
use stackless_tui::model::{Instance, Lease, Rows, Snapshot, Status};
use stackless_tui::ui::{self, App, AppConfig, Effect, Focus, panes};

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

fn app_with(config: AppConfig, snapshot: Snapshot) -> App {
    let mut app = App::new(config, CAPTURE);
    assert_eq!(
        app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE),
        None
    );
    app
}

fn real_app() -> App {
    app_with(config(), fixture_snapshot("stackless-real-v4.db"))
}

fn last_activity(app: &App) -> (Actor, String, ActivityKind, String, u32) {
    let logged = app.activity().last().expect("an activity entry");
    (
        logged.entry.actor,
        logged.entry.instance.clone(),
        logged.entry.kind,
        logged.entry.detail.clone(),
        logged.count,
    )
}

fn note(at: i64, kind: SupervisorKind, text: &str, until: Option<i64>) -> Event {
    Event::Supervisor(SupervisorNote {
        at,
        kind,
        text: text.into(),
        until,
    })
}

fn with_supervisor_notes(app: &mut App) {
    app.handle(
        note(
            CAPTURE - 40,
            SupervisorKind::Started,
            "demo-helper started (pid 4242)",
            None,
        ),
        CAPTURE,
    );
    app.handle(
        note(
            CAPTURE - 30,
            SupervisorKind::Exited,
            "demo-helper exited with status 1",
            None,
        ),
        CAPTURE,
    );
    for at in [CAPTURE - 20, CAPTURE - 10, CAPTURE - 5] {
        app.handle(
            note(
                at,
                SupervisorKind::Occupied,
                "role demo-helper is held by our helper",
                None,
            ),
            CAPTURE,
        );
    }
    app.handle(
        note(
            CAPTURE - 1,
            SupervisorKind::BackingOff,
            "demo-helper restarts after a back-off",
            Some(CAPTURE + 3),
        ),
        CAPTURE,
    );
}

fn activity(at: i64, actor: Actor, instance: &str, kind: ActivityKind, detail: &str) -> Event {
    Event::Activity(Activity::new(at, actor, instance, kind, detail))
}

fn with_activity(app: &mut App) {
    app.handle(
        activity(
            CAPTURE - 300,
            Actor::Reaper,
            "delta",
            ActivityKind::Reaped,
            "",
        ),
        CAPTURE,
    );
    app.handle(
        activity(
            CAPTURE - 200,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "}",
        ),
        CAPTURE,
    );
    for i in 0..12 {
        app.handle(
            activity(
                CAPTURE - 60 + i,
                Actor::Reaper,
                "golf",
                ActivityKind::WaitingBackoff,
                "until 14:00:59",
            ),
            CAPTURE,
        );
    }
    app.handle(
        activity(
            CAPTURE - 2,
            Actor::Reaper,
            "echo",
            ActivityKind::SkippedLocked,
            "stale lock ignored",
        ),
        CAPTURE,
    );
}

// ---------------------------------------------------------------- panes ---

#[test]
fn instances_pane_real_store() {
    let app = real_app();
    let text = render_pane(&app, 140, 12, panes::instances::render);
    assert_snapshot!("instances_real_140x12", text);
    let golf = text.lines().find(|l| l.contains("golf")).expect("golf row");
    assert!(golf.contains("expired 5m 32s ago"), "{golf}");
    assert!(golf.contains(" 3 "), "golf shows 3 reap attempts: {golf}");
    let echo = text.lines().find(|l| l.contains("echo")).expect("echo row");
    assert!(
        echo.contains("up by pid 15180 on vm, stale: pid gone"),
        "{echo}"
    );
    let charlie = text
        .lines()
        .find(|l| l.contains("charlie"))
        .expect("charlie row");
    assert!(charlie.contains("tombstoned 11m 55s ago"), "{charlie}");
    let alpha = text
        .lines()
        .find(|l| l.contains("alpha"))
        .expect("alpha row");
    assert!(alpha.contains("23h 47m left"), "{alpha}");
    assert!(text.contains("duo-79882653-fd55-4b17-bf19-d4afc89a2b5e"));
}

#[test]
fn backoffs_pane_real_store() {
    let app = real_app();
    let text = render_pane(&app, 70, 6, panes::backoffs::render);
    assert_snapshot!("backoffs_real_70x6", text);
    let golf = text
        .lines()
        .find(|l| l.contains("golf"))
        .expect("golf backoff");
    assert!(golf.contains("retry in 2m 53s"), "{golf}");
    assert!(golf.contains(" 3 "), "{golf}");
    assert!(
        golf.trim_end_matches(['"', ' ', '│']).ends_with('}'),
        "{golf}"
    );
}

#[test]
fn backoffs_pane_shows_envelope_summary_and_remediation() {
    let mut snapshot = fixture_snapshot("stackless-real-v4.db");
    snapshot.reap_attempts[0].last_error = r#"{"ok":false,"error":{"schema_version":1,"code":"engine.teardown.survivors","message":"2 resources survived","remediation":"run stackless down golf again"}}"#.into();
    snapshot.reap_attempts[0].next_retry_at = CAPTURE - 1;
    let app = app_with(config(), snapshot);
    let text = render_pane(&app, 100, 6, panes::backoffs::render);
    assert_snapshot!("backoffs_envelope_100x6", text);
    assert!(text.contains("engine.teardown.survivors: 2 resources survived"));
    assert!(text.contains("remediation: run stackless down golf again"));
    assert!(text.contains(" due "));
}

#[test]
fn supervisor_pane_coalesces_and_counts_down() {
    let mut app = real_app();
    let empty = render_pane(&app, 70, 5, panes::supervisor::render);
    assert!(empty.contains("waiting for the supervisor…"), "{empty}");
    with_supervisor_notes(&mut app);
    let text = render_pane(&app, 70, 8, panes::supervisor::render);
    assert_snapshot!("supervisor_70x8", text);
    assert!(text.contains("13:57:26 demo-helper started (pid 4242)"));
    assert!(text.contains("13:58:01 role demo-helper is held by our helper x3"));
    assert!(text.contains("13:58:05 demo-helper restarts after a back-off (restart in 3s)"));
    // The countdown moves with the clock every event is handled at, and
    // says so once the restart is due.
    app.handle(Event::Tick, CAPTURE + 1);
    let later = render_pane(&app, 70, 8, panes::supervisor::render);
    assert!(later.contains("back-off (restart in 2s)"), "{later}");
    app.handle(Event::Tick, CAPTURE + 3);
    let due = render_pane(&app, 70, 8, panes::supervisor::render);
    assert!(due.contains("back-off (restarting)"), "{due}");
}

#[test]
fn supervisor_pane_without_helper() {
    let mut cfg = config();
    cfg.helper = stackless_tui::ui::HelperMode::None;
    let app = app_with(cfg, fixture_snapshot("stackless-real-v4.db"));
    let text = render_pane(&app, 50, 4, panes::supervisor::render);
    assert_snapshot!("supervisor_no_helper_50x4", text);
    assert!(text.contains("no helper configured (--helper)"));
}

#[test]
fn activity_pane_coalesces() {
    let mut app = real_app();
    with_activity(&mut app);
    let text = render_pane(&app, 90, 7, panes::activity::render);
    assert_snapshot!("activity_90x7", text);
    assert!(text.contains("13:53:06 reaper delta reaped"));
    assert!(text.contains("13:54:46 reaper golf failed: }"));
    assert!(text.contains("13:57:17 x12 reaper golf waiting out backoff: until 14:00:59"));
    assert!(text.contains("13:58:04 reaper echo skipped: locked: stale lock ignored"));
}

#[test]
fn activity_pane_scrolls_and_stays_put() {
    let mut app = real_app();
    for i in 0..20 {
        app.handle(
            activity(
                CAPTURE + i,
                Actor::Reaper,
                &format!("i{i}"),
                ActivityKind::Reaped,
                "",
            ),
            CAPTURE,
        );
    }
    // 5 rows: the newest 3 lines show (following the bottom).
    let text = render_pane(&app, 60, 5, panes::activity::render);
    assert!(
        text.contains("reaper i19 reaped") && !text.contains("reaper i16 reaped"),
        "{text}"
    );
    for _ in 0..3 {
        press(&mut app, KeyCode::Tab);
    }
    assert_eq!(app.focus(), Focus::Activity);
    // The cursor moves within the view first, then the view follows it.
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    let text = render_pane(&app, 60, 5, panes::activity::render);
    assert!(text.contains("reaper i19 reaped"), "{text}");
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    let text = render_pane(&app, 60, 5, panes::activity::render);
    assert!(
        text.contains("reaper i15 reaped")
            && text.contains("reaper i17 reaped")
            && !text.contains("reaper i18 reaped"),
        "{text}"
    );
    assert!(text.contains("↓ 2 newer (End follows)"), "{text}");
    // A new entry does not move the scrolled view.
    app.handle(
        activity(CAPTURE + 30, Actor::Reaper, "new", ActivityKind::Reaped, ""),
        CAPTURE,
    );
    let text = render_pane(&app, 60, 5, panes::activity::render);
    assert!(
        text.contains("reaper i17 reaped") && !text.contains("new reaped"),
        "{text}"
    );
    press(&mut app, KeyCode::End);
    let text = render_pane(&app, 60, 5, panes::activity::render);
    assert!(text.contains("reaper new reaped"), "{text}");
}

// --------------------------------------------------------------- layout ---

fn busy_app() -> App {
    let mut app = real_app();
    with_supervisor_notes(&mut app);
    with_activity(&mut app);
    app
}

#[test]
fn full_layout_120x40() {
    let app = busy_app();
    let text = render_app(&app, 120, 40);
    assert_snapshot!("full_120x40", text);
    assert!(text.contains("stackless-tui"));
    assert!(text.contains("schema v4"));
    assert!(text.contains("reaper: every 5s"));
    assert!(text.contains("helper: demo-helper"));
    assert!(text.contains("expired 5m 32s ago"));
    assert!(text.contains("retry in 2m 53s"));
    // The 40-character auto name whole; LOCK gives way to its short form.
    assert!(text.contains("duo-79882653-fd55-4b17-bf19-d4afc89a2b5e "));
    assert!(text.contains("up pid 15180 gone"));
    assert!(text.contains("sort: lease expiry"));
    assert!(text.contains(
        "↑↓/jk select  Tab pane  r reap  d down  ? help  q quit  Enter detail  / filter  s sort"
    ));
}

#[test]
fn full_layout_80x24() {
    let app = busy_app();
    let text = render_app(&app, 80, 24);
    assert_snapshot!("full_80x24", text);
    // LEASE in its short form, so NAME keeps its room.
    assert!(text.contains("-5m32s"));
    assert!(text.contains("retry in 2m 53s"));
    assert!(text.contains("duo-7988"), "duo's name shows, maybe cut");
    assert!(text.contains("†11m55s"));
    // 80 columns: the newest keys give way first; the long-standing ones stay.
    assert!(text.contains(
        "↑↓/jk select  Tab pane  r reap  d down  ? help  q quit  Enter detail  / filter"
    ));
    assert!(!text.contains("s sort"));
}

#[test]
fn banners_for_busy_store_error_and_generation() {
    let mut app = real_app();
    let since = Instant::now()
        .checked_sub(Duration::from_secs(7))
        .expect("monotonic clock past 7s");
    app.handle(Event::StoreHealth(StoreHealth::Busy(since)), CAPTURE);
    let text = render_app(&app, 100, 30);
    assert!(
        text.contains("store busy for 7s: showing the last snapshot"),
        "{text}"
    );
    app.handle(
        Event::StoreHealth(StoreHealth::Error("disk I/O error\u{1b}[2J".into())),
        CAPTURE,
    );
    let text = render_app(&app, 100, 30);
    assert!(text.contains("store error: disk I/O error␛[2J"), "{text}");
    app.handle(Event::StoreHealth(StoreHealth::Ok), CAPTURE);
    let text = render_app(&app, 100, 30);
    assert!(
        !text.contains("store error") && !text.contains("store busy"),
        "{text}"
    );

    let older = app_with(config(), fixture_snapshot("older-v2.db"));
    let text = render_app(&older, 100, 30);
    assert!(text.contains("schema v2"), "{text}");
    assert!(text.contains("store schema v2 is older than v4"), "{text}");
    assert!(
        text.contains("no reap_attempts table (schema v2)"),
        "{text}"
    );
    let newer = app_with(config(), fixture_snapshot("newer-v6.db"));
    let text = render_app(&newer, 120, 30);
    assert!(
        text.contains("store schema v6 was never released"),
        "{text}"
    );
}

#[test]
fn too_small_terminals() {
    let app = busy_app();
    let text = render_app(&app, 40, 10);
    assert!(
        text.contains("terminal too small: 40x10, needs 60x15"),
        "{text}"
    );
    assert_snapshot!("too_small_40x10", text);
    for (w, h) in [
        (1, 1),
        (0, 0),
        (59, 40),
        (200, 14),
        (60, 15),
        (61, 16),
        (2, 200),
    ] {
        let _ = render_app(&app, w, h);
    }
    let text = render_app(&app, 60, 15);
    assert!(!text.contains("terminal too small"), "{text}");
}

#[test]
fn every_size_with_overlays_does_not_panic() {
    let mut app = busy_app();
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('d'));
    assert!(app.confirming().is_some());
    for w in [1, 10, 59, 60, 61, 80, 119, 250] {
        for h in [1, 5, 14, 15, 16, 24, 60] {
            let _ = render_app(&app, w, h);
        }
    }
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('?'));
    for w in [1, 10, 59, 60, 61, 80, 250] {
        for h in [1, 5, 14, 15, 16, 24, 60] {
            let _ = render_app(&app, w, h);
        }
    }
}

#[test]
fn panes_alone_at_tiny_sizes_do_not_panic() {
    let mut app = busy_app();
    app.handle(
        activity(
            CAPTURE,
            Actor::Reaper,
            "wide-測試-🏕️",
            ActivityKind::Failed,
            "測試",
        ),
        CAPTURE,
    );
    let panes: [fn(&mut ratatui::Frame, Rect, &App); 7] = [
        panes::header::render,
        panes::instances::render,
        panes::backoffs::render,
        panes::supervisor::render,
        panes::activity::render,
        panes::footer::render,
        |f, area, _| {
            let _ = panes::help::draw(f, area, &stackless_tui::ui::app::HelpView::default(), false);
        },
    ];
    for pane in panes {
        for w in 0..24 {
            for h in 0..6 {
                let _ = render_pane(&app, w, h, pane);
            }
        }
    }
}

/// The colours and modifiers mark states (and text marks them too, see the
/// snapshots): golf's expired lease is red, tombstones are dim, echo's stale
/// lock is magenta, the focused pane has a double border, the selection
/// (golf, the soonest expiry) is reversed.
#[test]
fn styles_mark_states() {
    use ratatui::style::{Color, Modifier};
    let app = real_app();
    let mut terminal = Terminal::new(TestBackend::new(140, 12)).expect("terminal");
    terminal
        .draw(|f| panes::instances::render(f, f.area(), &app))
        .expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let find = |needle: &str| -> (u16, u16) {
        for y in 0..buffer.area.height {
            let line: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect();
            if let Some(x) = line.find(needle) {
                let x = line[..x].chars().count();
                return (u16::try_from(x).unwrap(), y);
            }
        }
        panic!("{needle} not drawn");
    };
    let (x, y) = find("expired 5m 32s ago");
    assert_eq!(buffer[(x, y)].fg, Color::Red);
    let (x, y) = find("charlie");
    assert!(buffer[(x, y)].modifier.contains(Modifier::DIM));
    let (x, y) = find("stale: pid gone");
    assert_eq!(buffer[(x, y)].fg, Color::Magenta);
    let (x, y) = find("golf");
    assert!(
        buffer[(x, y)].modifier.contains(Modifier::REVERSED),
        "focused selection: soonest expiry first"
    );
    assert_eq!(buffer[(0, 0)].symbol(), "╔", "focused pane: double border");
}

// -------------------------------------------------------------- hostile ---

/// Whether `c` must never reach the terminal raw.
fn forbidden(c: char) -> bool {
    let u = u32::from(c);
    u < 0x20
        || u == 0x7f
        || (0x80..=0x9f).contains(&u)
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
}

fn assert_clean(app: &App, width: u16, height: u16) {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(|f| ui::draw(f, app)).expect("draw");
    let buffer = terminal.backend().buffer();
    for (i, cell) in buffer.content.iter().enumerate() {
        assert!(
            !cell.symbol().chars().any(forbidden),
            "cell {i} ({}, {}) holds {:?}",
            i % usize::from(width),
            i / usize::from(width),
            cell.symbol()
        );
    }
}

#[test]
fn hostile_store_never_reaches_the_terminal_raw() {
    let snapshot = fixture_snapshot("hostile.db");
    assert!(snapshot.instances.len() >= 7);
    let mut app = app_with(config(), snapshot);
    app.handle(
        note(
            CAPTURE,
            SupervisorKind::SpawnFailed,
            "spawn \u{1b}]0;pwned\u{7} failed\n\u{202e}x",
            None,
        ),
        CAPTURE,
    );
    app.handle(
        Event::StoreHealth(StoreHealth::Error("bad\u{9b}2J\u{2066}".into())),
        CAPTURE,
    );
    // `r` on every row: the hostile names are refused, and the refusals
    // (which carry the hostile names) are drawn too.
    let names: Vec<String> = app
        .snapshot()
        .instances
        .iter()
        .map(|i| i.name.clone())
        .collect();
    for name in &names {
        select(&mut app, name);
        let command = press(&mut app, KeyCode::Char('r'));
        assert_eq!(command, None, "{name:?} must not produce a command");
        if !stackless_tui::model::name::is_dns_safe(name) {
            assert_eq!(
                last_activity(&app).3,
                "refused: not a DNS-safe name",
                "{name:?}"
            );
        }
        assert_clean(&app, 120, 40);
    }
    press(&mut app, KeyCode::Tab);
    assert_clean(&app, 120, 40);
    assert_clean(&app, 80, 24);
    assert_clean(&app, 250, 60);
    assert_snapshot!("hostile_120x40", render_app(&app, 120, 40));

    // Wide characters keep the columns aligned: the STATUS column starts at
    // the same display column on every instance row.
    let text = render_pane(&app, 150, 12, panes::instances::render);
    let columns: Vec<usize> = text
        .lines()
        .filter(|l| l.contains(" active ") && !l.contains("Instances"))
        .map(|l| {
            let before = &l[..l.find("active").expect("status")];
            unicode_width::UnicodeWidthStr::width(before)
        })
        .collect();
    assert!(columns.len() >= 7, "{text}");
    assert!(
        columns.windows(2).all(|w| w[0] == w[1]),
        "{columns:?}\n{text}"
    );
}

#[test]
fn hostile_long_error_is_cut() {
    let snapshot = fixture_snapshot("hostile.db");
    let attempt = snapshot.reap_attempts[0].clone();
    assert!(attempt.last_error.chars().count() > 5000);
    let row = ui::view::backoff_row(&attempt, CAPTURE);
    assert_eq!(row.last_error.chars().count(), ui::text::CUT_LONG);
    assert!(row.last_error.ends_with('…'));
    let app = app_with(config(), snapshot);
    let text = render_pane(&app, 250, 6, panes::backoffs::render);
    let line = text
        .lines()
        .find(|l| l.contains("ok-neighbour"))
        .expect("backoff row");
    assert!(
        line.contains("line one␊line two␛[31mRED␛[0m␍␀tail AAAA"),
        "{line}"
    );
    assert!(
        line.contains("A…│"),
        "cut to the column with an ellipsis: {line}"
    );
}

// ----------------------------------------------------------------- keys ---

#[test]
fn r_on_a_live_lease_is_refused() {
    let mut app = real_app();
    select(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "alpha".into(),
            ActivityKind::Refused,
            "refused: lease has not expired (use d to tear down)".into(),
            1
        )
    );
    // Pressed again: coalesced.
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(last_activity(&app).4, 2);
    let text = render_pane(&app, 100, 4, panes::activity::render);
    assert!(
        text.contains(
            "13:58:06 x2 operator alpha refused: lease has not expired (use d to tear down)"
        ),
        "{text}"
    );
}

#[test]
fn r_on_expired_golf_reaps() {
    let mut app = real_app();
    select(&mut app, "golf");
    // It asks first; `y` reaps.
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(app.confirming_reap().map(|i| i.name.as_str()), Some("golf"));
    match press(&mut app, KeyCode::Char('y')) {
        Some(Effect::Reap { instance, .. }) => assert_eq!(instance.name, "golf"),
        other => panic!("expected Reap golf, got {other:?}"),
    }
    assert!(app.activity().entries().is_empty());
}

#[test]
fn r_in_backoffs_pane_acts_on_the_selected_backoff() {
    let mut app = real_app();
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Backoffs);
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(app.confirming_reap().map(|i| i.name.as_str()), Some("golf"));
    match press(&mut app, KeyCode::Char('y')) {
        Some(Effect::Reap { instance, .. }) => assert_eq!(instance.name, "golf"),
        other => panic!("expected Reap golf, got {other:?}"),
    }
}

#[test]
fn r_on_tombstone_and_stale_lock() {
    let mut app = real_app();
    select(&mut app, "charlie");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(last_activity(&app).3, "refused: not active");
    // echo's lock is stale (pid gone): the lock does not block, the lease does.
    select(&mut app, "echo");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("echo"));
}

#[test]
fn d_asks_and_n_cancels() {
    let mut app = real_app();
    select(&mut app, "alpha");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("alpha"));
    let text = render_app(&app, 120, 40);
    assert!(
        text.contains("Tear down alpha? This runs: stackless down alpha --json [y/N]"),
        "{text}"
    );
    // The dialog names the command as it will run (--down-cmd), quoted
    // for reading.
    app.set_teardown(stackless_tui::ui::TeardownInfo {
        argv: vec![
            "/opt/my tools/stackless".into(),
            "--state-dir".into(),
            "/srv/s".into(),
            "down".into(),
            "{name}".into(),
        ],
        missing: None,
        ..Default::default()
    });
    let text = render_app(&app, 120, 40);
    assert!(
        text.contains("Tear down alpha? This runs: '/opt/my tools/stackless' --state-dir /srv/s down alpha [y/N]"),
        "{text}"
    );
    // Under the question the footer lists its keys, not the panes'.
    let screen = render_app(&app, 80, 24);
    let footer = screen.lines().last().unwrap_or_default();
    assert!(
        footer.starts_with("\"y yes: run it  any other key no: nothing runs "),
        "{footer}"
    );
    assert_snapshot!("confirm_dialog_80x24", screen);
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    assert!(app.confirming().is_none());
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "alpha".into(),
            ActivityKind::Aborted,
            "cancelled".into(),
            1
        )
    );
    // Any other key cancels too, and does not act as itself.
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(press(&mut app, KeyCode::Char('q')), None);
    assert!(!app.quitting());
    assert!(app.confirming().is_none());
}

#[test]
fn the_question_shows_the_teardown_command_with_its_credentials_redacted() {
    let mut app = real_app();
    select(&mut app, "alpha");
    app.set_teardown(stackless_tui::ui::TeardownInfo {
        argv: vec![
            "/srv/down".into(),
            "--token=CANARY9".into(),
            "--password".into(),
            "CANARY10".into(),
            "https://u:CANARY11@h/x".into(),
            "{name}".into(),
        ],
        missing: None,
        ..Default::default()
    });
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    let text = render_app(&app, 160, 40);
    assert!(
        text.contains(
            "Tear down alpha? This runs: /srv/down '--token=[redacted]' --password '[redacted]' 'https://[redacted]@h/x' alpha [y/N]"
        ),
        "{text}"
    );
    assert!(!text.contains("CANARY"), "{text}");
}

#[test]
fn d_then_y_tears_down() {
    let mut app = real_app();
    select(&mut app, "bravo");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    match press(&mut app, KeyCode::Char('y')) {
        Some(Effect::TearDown { instance, .. }) => assert_eq!(instance.name, "bravo"),
        other => panic!("expected TearDown bravo, got {other:?}"),
    }
    assert!(app.confirming().is_none());
    press(&mut app, KeyCode::Char('d'));
    assert!(matches!(
        press(&mut app, KeyCode::Char('Y')),
        Some(Effect::TearDown { .. })
    ));
}

#[test]
fn d_rechecks_at_confirmation() {
    let mut app = real_app();
    select(&mut app, "bravo");
    press(&mut app, KeyCode::Char('d'));
    // bravo is tombstoned by someone else while the dialog is open.
    let mut snapshot = app.snapshot().clone();
    let bravo = snapshot
        .instances
        .iter_mut()
        .find(|i| i.name == "bravo")
        .expect("bravo");
    bravo.status = Status::Tombstoned;
    bravo.lease = None;
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(last_activity(&app).3, "refused: not active");
}

#[test]
fn q_ctrl_c_and_terminate_quit() {
    let mut app = real_app();
    assert!(!app.quitting());
    assert_eq!(press(&mut app, KeyCode::Char('q')), Some(Effect::Quit));
    assert!(app.quitting());

    let mut app = real_app();
    let ctrl_c = Event::Input(crossterm::event::Event::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    assert_eq!(app.handle(ctrl_c, CAPTURE), Some(Effect::Quit));
    assert!(app.quitting());

    let mut app = real_app();
    assert_eq!(
        app.handle(Event::Terminate("SIGTERM"), CAPTURE),
        Some(Effect::Quit)
    );
    assert!(app.quitting());
}

#[test]
fn read_only_refuses_with_the_reason() {
    let mut cfg = config();
    cfg.write_keys = Err("read-only".into());
    let mut app = app_with(cfg, fixture_snapshot("stackless-real-v4.db"));
    select(&mut app, "golf");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(
        last_activity(&app),
        (
            Actor::Operator,
            "golf".into(),
            ActivityKind::Refused,
            "read-only".into(),
            1
        )
    );
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert!(app.confirming().is_none());
    assert_eq!(last_activity(&app).4, 2);
    let text = render_app(&app, 120, 40);
    assert!(
        text.contains("x2 operator golf refused: read-only"),
        "{text}"
    );
    assert!(text.contains("[warn] refused: read-only"), "{text}");
    // The flash clears itself; the footer shows the keys and why r/d are off.
    app.handle(Event::Tick, CAPTURE + 4);
    let text = render_app(&app, 120, 40);
    assert!(!text.contains("[warn]"), "{text}");
    assert!(text.contains("(r/d off: read-only)"), "{text}");
}

#[test]
fn tab_cycles_focus() {
    let mut app = real_app();
    assert_eq!(app.focus(), Focus::Instances);
    let mut seen = vec![];
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
        seen.push(app.focus());
    }
    assert_eq!(
        seen,
        [
            Focus::Backoffs,
            Focus::Supervisor,
            Focus::Activity,
            Focus::Instances
        ]
    );
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Activity);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus(), Focus::Supervisor);
}

#[test]
fn help_overlay_toggles() {
    let mut app = real_app();
    press(&mut app, KeyCode::Char('?'));
    assert!(app.help_open());
    let first = render_app(&app, 100, 30);
    assert_snapshot!("help_100x30", first);
    press(&mut app, KeyCode::PageDown);
    let text = format!("{first}{}", render_app(&app, 100, 30));
    for keys in stackless_tui::ui::keys::ENTRIES.iter().map(|e| e.keys) {
        assert!(text.contains(keys), "help lists {keys}");
    }
    // Keys other than Esc/?/q do nothing while help is open.
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert!(app.activity().entries().is_empty());
    press(&mut app, KeyCode::Esc);
    assert!(!app.help_open());
    press(&mut app, KeyCode::Char('?'));
    press(&mut app, KeyCode::Char('?'));
    assert!(!app.help_open());
}

/// The `↑ N more` / `↓ N more` of the help's bottom border, as drawn.
fn help_more(text: &str) -> (usize, usize) {
    let border = text
        .lines()
        .find(|l| l.contains(" more ═╝"))
        .unwrap_or_default();
    let count = |arrow: &str| {
        border
            .split(&format!("{arrow} "))
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (count("↑"), count("↓"))
}

/// The help at 120x40 and 80x24 shows all of itself: what does not fit is
/// counted in its bottom border (`↓ 10 more`) and j scrolls to it, the
/// counts following, down to the last entry; the ST legend opens it.
#[test]
fn help_counts_what_it_scrolls_to_at_120x40_and_80x24() {
    let last = stackless_tui::ui::keys::ENTRIES
        .last()
        .expect("an entry")
        .keys;
    for (width, height) in [(120_u16, 40_u16), (80, 24)] {
        let mut app = real_app();
        press(&mut app, KeyCode::Char('?'));
        let first = render_app(&app, width, height);
        assert_snapshot!(format!("help_{width}x{height}"), first);
        assert!(first.contains(" State column (ST, after NAME)"), "{first}");
        let (above, below) = help_more(&first);
        assert_eq!(above, 0, "{first}");
        assert!(below > 0, "{first}");
        let len = stackless_tui::ui::panes::help::lines("", usize::from(width), false).len();
        assert!(below < len, "{first}");
        press(&mut app, KeyCode::Char('j'));
        let once = render_app(&app, width, height);
        assert_eq!(help_more(&once), (1, below - 1), "{once}");
        for _ in 0..below {
            press(&mut app, KeyCode::Char('j'));
        }
        let end = render_app(&app, width, height);
        assert_eq!(help_more(&end), (below, 0), "{end}");
        assert!(end.contains(last), "the last entry, {last}: {end}");
    }
}

/// Over a fleet the Instances rows have no ST column: the help leaves its
/// legend out, and opens on the keys.
#[test]
fn help_over_a_fleet_leaves_the_st_legend_out() {
    let lines: Vec<String> = panes::help::lines("", 100, true)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(lines[0].starts_with(" ↑ / k"), "{lines:#?}");
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("State column") || l.contains("lease expired")),
        "{lines:#?}"
    );
}

#[test]
fn selection_follows_the_name_across_snapshots() {
    let mut app = real_app();
    select(&mut app, "echo");
    let mut snapshot = app.snapshot().clone();
    // A new instance sorting before echo shifts its index.
    snapshot.instances.insert(
        0,
        Instance {
            name: "aardvark".into(),
            substrate: "render".into(),
            status: Status::Active,
            created_at: Some(CAPTURE),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 28_800,
                expires_at: CAPTURE + 28_800,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        },
    );
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    assert_eq!(
        app.selected_instance().map(|i| i.name.as_str()),
        Some("echo")
    );
    // echo disappears: the selection stays at the same position.
    let mut snapshot = app.snapshot().clone();
    let index = app.selected_index();
    snapshot.instances.retain(|i| i.name != "echo");
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    assert_eq!(app.selected_index(), index);
    // Everything gone: nothing selected, nothing panics.
    app.handle(Event::Snapshot(Arc::new(Snapshot::default())), CAPTURE);
    assert!(app.selected_instance().is_none());
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(last_activity(&app).3, "refused: no instance selected");
    let text = render_pane(&app, 60, 5, panes::instances::render);
    assert!(text.contains("no instances in this store"), "{text}");
}

#[test]
fn tick_moves_countdowns_without_rereading() {
    let mut app = real_app();
    let shared = Arc::clone(app.snapshot_arc());
    app.handle(Event::Tick, CAPTURE + 10);
    assert!(Arc::ptr_eq(&shared, app.snapshot_arc()));
    let text = render_pane(&app, 130, 12, panes::instances::render);
    assert!(text.contains("expired 5m 42s ago"), "{text}");
    let text = render_pane(&app, 70, 6, panes::backoffs::render);
    assert!(text.contains("retry in 2m 43s"), "{text}");
}

#[test]
fn a_hundred_thousand_instances_scroll() {
    let instances: Vec<Instance> = (0..100_000)
        .map(|i| Instance {
            name: format!("i{i:06}"),
            substrate: "local".into(),
            status: Status::Active,
            created_at: Some(CAPTURE),
            tombstoned_at: None,
            lease: Some(Lease {
                duration_secs: 3600,
                expires_at: CAPTURE + i,
            }),
            lock: None,
            anomalies: Default::default(),
            dirty: None,
            birth: None,
        })
        .collect();
    let snapshot = Snapshot::from(Rows {
        instances: instances.into(),
        ..Rows::default()
    });
    let mut app = app_with(config(), snapshot);
    let text = render_app(&app, 120, 40);
    assert!(
        text.contains("1/100000 ") && text.contains("i000000"),
        "{text}"
    );
    press(&mut app, KeyCode::End);
    let text = render_app(&app, 120, 40);
    assert!(
        text.contains("100000/100000 ") && text.contains("i099999"),
        "{text}"
    );
    assert!(!text.contains("i000000"));
    press(&mut app, KeyCode::PageUp);
    let index = app.selected_index();
    assert!(index < 99_999 && index > 99_900, "{index}");
    let text = render_app(&app, 120, 40);
    assert!(text.contains(&format!("i{index:06}")), "{text}");
}

/// The Activity title counts the last hour's reaps by who did them: this
/// console's reaper, the 0.4.0 controller's lease reaper, the operator,
/// another process seen tombstoning; five equal failures fold into one
/// line that says 5, its count before the text.
#[test]
fn activity_counts_reaps_by_actor_and_folds_exactly() {
    let mut app = real_app();
    let events = [
        (Actor::Reaper, "golf", ActivityKind::Reaped, "down in 1.2s"),
        (Actor::Reaper, "hotel", ActivityKind::Reaped, "down in 1.0s"),
        (
            Actor::Controller,
            "india",
            ActivityKind::Reaped,
            "by its lease reaper (lease expired): down in 0.4s",
        ),
        (
            Actor::Operator,
            "alpha",
            ActivityKind::TornDown,
            "down in 2s",
        ),
        (Actor::Observed, "bravo", ActivityKind::Tombstoned, ""),
        // The lease reaper's teardown seen in the store: counted once.
        (Actor::Observed, "india", ActivityKind::Tombstoned, ""),
        // A `down` the controller ran for someone else, and its
        // tombstone: once, elsewhere; an `up` is no reap.
        (
            Actor::Controller,
            "kilo",
            ActivityKind::Succeeded,
            "down in 1.0s",
        ),
        (Actor::Observed, "kilo", ActivityKind::Tombstoned, ""),
        (
            Actor::Controller,
            "lima",
            ActivityKind::Succeeded,
            "up in 9s",
        ),
    ];
    for (actor, name, kind, detail) in events {
        app.handle(
            Event::Activity(Activity::new(CAPTURE - 60, actor, name, kind, detail)),
            CAPTURE,
        );
    }
    for _ in 0..5 {
        app.handle(
            Event::Activity(Activity::new(
                CAPTURE - 30,
                Actor::Reaper,
                "juliet",
                ActivityKind::Failed,
                "down exited 1",
            )),
            CAPTURE,
        );
    }
    let text = render_pane(&app, 160, 12, panes::activity::render);
    let title = text.lines().next().expect("the title row");
    assert!(
        title.contains(
            " 6 · failed ▁▁▁▁▁▁▁▁▁▁▁█ 5 (this reaper 5) · by this reaper 2, controller 1, operator 1, elsewhere 2 "
        ),
        "{text}"
    );
    assert!(title.contains("1h reaped ▁▁▁▁▁▁▁▁▁▁▁█ 6"), "{text}");
    assert!(
        text.contains("x5 reaper juliet failed: down exited 1"),
        "{text}"
    );
}

/// The help opens on the legend of the ST column, the marks a new reader
/// meets first, then the keys; a search shows the keys only.
#[test]
fn help_starts_with_the_state_legend() {
    let lines: Vec<String> = panes::help::lines("", 100, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        lines[0],
        " State column (ST, after NAME): lease, lock, reap marks"
    );
    let keys = lines.iter().position(|l| l.starts_with(" ↑ / k")).unwrap();
    assert!(lines[keys - 1].is_empty(), "{lines:#?}");
    let found: Vec<String> = panes::help::lines("sort", 100, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        !found.iter().any(|l| l.contains("State column")),
        "{found:#?}"
    );
}
