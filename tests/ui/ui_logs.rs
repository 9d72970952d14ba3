//! The logs view (`l`) drawn: tabs, the following / paused mark, search
//! highlights, wrap, and what it says when there is nothing on disk.

use crate::common::ui::Answers as _;
use stackless_tui::event::Request;
use std::sync::Arc;

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use stackless_tui::event::Event;
use stackless_tui::model::logtext::{FileKey, LinePos};
use stackless_tui::model::logview::{
    LogLine, LogUpdate, LogsState, Older, Opened, OpenedService, WatchMode,
};
use stackless_tui::model::{Instance, Rows, Snapshot, Status};
use stackless_tui::ui::{self, App, AppConfig, Effect};

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app};

fn instance(name: &str, substrate: &str, status: Status) -> Instance {
    let row = crate::common::builders::instance(name)
        .substrate(substrate)
        .created(Some(CAPTURE - 7200))
        .lease(86_400, CAPTURE + 3600);
    match status {
        Status::Tombstoned => row.tombstoned(CAPTURE - 3600),
        other => row.status(other),
    }
    .build()
}

fn app_with(instances: Vec<Instance>) -> App {
    let config = AppConfig {
        store_label: "/state/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Off("--no-reaper".into()),
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, CAPTURE);
    let snapshot = Snapshot::from(Rows {
        generation: stackless_tui::model::Generation::new(5),
        instances: instances.into(),
        ..Rows::default()
    });
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    app
}

fn line(service: u16, text: &str, offset: u64) -> LogLine {
    LogLine {
        text: text.into(),
        service,
        at: LinePos {
            file: FileKey {
                dev: 1,
                ino: u64::from(service) + 10,
            },
            offset,
        },
        cont: false,
        cut: false,
    }
}

fn web_lines() -> Vec<LogLine> {
    (0..30)
        .map(|i| {
            let what = if i % 7 == 3 {
                format!("ERROR upstream timeout after 30s (request {i})")
            } else {
                format!("GET /api/items/{i} 200 {}ms", 3 + i % 5)
            };
            line(
                0,
                &format!("2026-12-01T11:{:02}:00Z {what}", 10 + i),
                i * 64,
            )
        })
        .collect()
}

fn worker_lines() -> Vec<LogLine> {
    (0..4)
        .map(|i| {
            line(
                1,
                &format!("2026-12-01T11:{:02}:30Z job {i} done", 20 + i),
                i * 40,
            )
        })
        .collect()
}

/// `l` on alpha, answered with web and worker, watching by notify.
fn opened_app() -> App {
    let mut app = app_with(vec![instance("alpha", "local", Status::Active)]);
    let Some(Effect::Io(Request::OpenLogs { session, .. })) = press(&mut app, KeyCode::Char('l'))
    else {
        panic!("l opens the logs");
    };
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: Opened {
            state: LogsState::Ready,
            path: "/state/logs/alpha".into(),
            services: vec![
                OpenedService {
                    name: "web".into(),
                    lines: web_lines(),
                    older: Older::Start,
                    error: None,
                    partial: None,
                },
                OpenedService {
                    name: "worker".into(),
                    lines: worker_lines(),
                    older: Older::Start,
                    error: None,
                    partial: None,
                },
            ],
            notice: None,
        },
        bases: Vec::new(),
    });
    app.handle(
        Event::Logs(LogUpdate::Watching {
            session,
            mode: WatchMode::Notify,
        }),
        CAPTURE,
    );
    app
}

#[test]
fn all_services_following() {
    let app = opened_app();
    assert_snapshot!("all_following_100x20", render_app(&app, 100, 20));
}

#[test]
fn one_service_paused_with_a_search() {
    let mut app = opened_app();
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('/'));
    for c in "error".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    assert_snapshot!("search_prompt_100x20", render_app(&app, 100, 20));
    press(&mut app, KeyCode::Enter);
    let text = render_app(&app, 100, 20);
    assert_snapshot!("web_paused_search_100x20", text);
    // The matches are highlighted: the current one bold and underlined.
    let mut terminal = Terminal::new(TestBackend::new(100, 20)).unwrap();
    terminal.draw(|f| ui::draw(f, &app)).unwrap();
    let buffer = terminal.backend().buffer();
    let rows: Vec<String> = (0..20)
        .map(|y| (0..100).map(|x| buffer[(x, y)].symbol()).collect())
        .collect();
    let hits: Vec<(u16, u16)> = rows
        .iter()
        .enumerate()
        .filter_map(|(y, row)| {
            let at = row.find("ERROR")?;
            let x = row[..at].chars().count();
            Some((u16::try_from(x).unwrap(), u16::try_from(y).unwrap()))
        })
        .collect();
    assert!(hits.len() >= 2, "{text}");
    for &(x, y) in &hits {
        let cell = &buffer[(x, y)];
        assert_eq!(cell.bg, Color::Yellow, "ERROR at {x},{y} highlighted");
        assert!(cell.modifier.contains(Modifier::REVERSED));
    }
    let current = hits.last().unwrap();
    assert!(buffer[*current].modifier.contains(Modifier::UNDERLINED));
    // n: the next older match becomes current; N back.
    press(&mut app, KeyCode::Char('n'));
    assert_snapshot!("web_search_older_100x20", render_app(&app, 100, 20));
    // G follows again.
    press(&mut app, KeyCode::Char('G'));
    assert!(render_app(&app, 100, 20).contains("● following · notify"));
}

#[test]
fn long_lines_cut_or_wrapped() {
    let mut app = opened_app();
    let session = 1;
    let long = format!("2026-12-01T11:59:00Z panic: {}", "stack frame ".repeat(12));
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session,
            service: 1,
            lines: vec![line(1, &long, 500)],
        }),
        CAPTURE,
    );
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_snapshot!("worker_cut_80x16", render_app(&app, 80, 16));
    press(&mut app, KeyCode::Char('w'));
    assert_snapshot!("worker_wrapped_80x16", render_app(&app, 80, 16));
}

fn opened_state(app: &mut App, state: LogsState) {
    let Some(Effect::Io(Request::OpenLogs { session, .. })) = press(app, KeyCode::Char('l')) else {
        panic!("l opens the logs");
    };
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: Opened {
            state,
            path: "/state/logs/beta".into(),
            services: vec![],
            notice: None,
        },
        bases: Vec::new(),
    });
}

#[test]
fn logs_on_the_substrate_and_a_gone_dir_are_said() {
    let mut app = app_with(vec![instance("beta", "render", Status::Active)]);
    opened_state(&mut app, LogsState::Elsewhere);
    assert_snapshot!("render_elsewhere_100x16", render_app(&app, 100, 16));
    let mut app = app_with(vec![instance("beta", "local", Status::Tombstoned)]);
    opened_state(
        &mut app,
        LogsState::DirGone {
            path: "/state/logs/beta".into(),
        },
    );
    assert_snapshot!("dir_gone_100x16", render_app(&app, 100, 16));
    press(&mut app, KeyCode::Esc);
    assert!(app.logs().is_none());
}

#[test]
fn enter_opens_the_cursor_line_whole() {
    let mut app = opened_app();
    let mut long = format!("2026-12-01T11:59:00Z {}", "payload=ok ".repeat(30));
    long.truncate(300);
    assert_eq!(long.len(), 300);
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session: 1,
            service: 0,
            lines: vec![
                line(0, &long, 5000),
                line(0, "2026-12-01T12:00:00Z GET /health 200 1ms", 5400),
                line(0, "2026-12-01T12:00:01Z GET /health 200 1ms", 5500),
            ],
        }),
        CAPTURE,
    );
    // A frame first: the cursor moves within the rows it drew.
    render_app(&app, 80, 24);
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('k'));
    assert_snapshot!("cursor_two_up_80x24", render_app(&app, 80, 24));
    press(&mut app, KeyCode::Enter);
    let full = app.full_text().expect("Enter opens the line whole");
    assert_eq!(full.text.title, "Log: web");
    assert_eq!(full.text.lines, vec![long.clone()]);
    assert_snapshot!("line_whole_80x24", render_app(&app, 80, 24));
    press(&mut app, KeyCode::Esc);
    assert!(app.full_text().is_none());
    assert!(app.logs().is_some(), "Esc goes back to the logs view");
    press(&mut app, KeyCode::Char('e'));
    assert_eq!(
        app.full_text().map(|f| f.text.lines.clone()),
        Some(vec![long])
    );
}

#[test]
fn eight_services_scroll_the_tab_bar() {
    let mut app = app_with(vec![instance("alpha", "local", Status::Active)]);
    let Some(Effect::Io(Request::OpenLogs { session, .. })) = press(&mut app, KeyCode::Char('l'))
    else {
        panic!("l opens the logs");
    };
    let names = [
        "api",
        "billing-reconciliation-worker-eu",
        "cache",
        "db-migrations",
        "events",
        "frontend",
        "gateway-with-a-very-long-service-name",
        "jobs",
    ];
    let services = names
        .iter()
        .zip(0u16..)
        .map(|(name, i)| OpenedService {
            name: (*name).into(),
            lines: vec![line(i, &format!("2026-12-01T11:00:0{i}Z {name} up"), 0)],
            older: Older::Start,
            error: None,
            partial: None,
        })
        .collect();
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: Opened {
            state: LogsState::Ready,
            path: "/state/logs/alpha".into(),
            services,
            notice: None,
        },
        bases: Vec::new(),
    });
    app.handle(
        Event::Logs(LogUpdate::Watching {
            session,
            mode: WatchMode::Notify,
        }),
        CAPTURE,
    );
    assert_snapshot!("eight_services_80x24", render_app(&app, 80, 24));
    for _ in 0..7 {
        press(&mut app, KeyCode::Tab);
    }
    let text = render_app(&app, 80, 24);
    assert!(text.contains(" gateway-with-a-very-lon… │"), "{text}");
    assert!(text.contains("● following · notify"), "{text}");
    assert_snapshot!("eight_services_tab7_80x24", text);
}

/// The `cNNN` marks of a 2002-column line that are on the screen.
fn marks_shown(screen: &str) -> Vec<usize> {
    let mut seen = Vec::new();
    for (at, _) in screen.match_indices('c') {
        if let Some(n) = screen.get(at + 1..at + 4).and_then(|d| d.parse().ok()) {
            seen.push(n);
        }
    }
    seen
}

/// Wrapped (`w`), `k`/`j`, `PgUp`/`PgDn` and the wheel scroll by screen
/// rows: a 2002-column line is read row by row from its end to its start,
/// while it stays the cursor line.
#[test]
fn wrapped_lines_scroll_by_rows() {
    let mut app = opened_app();
    let long: String = (0..154).map(|i| format!("c{i:03}-xxxxxxxx")).collect();
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session: 1,
            service: 1,
            lines: vec![line(1, &long, 500)],
        }),
        CAPTURE,
    );
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('w'));
    let mut seen = marks_shown(&render_app(&app, 80, 16));
    assert!(seen.contains(&153) && !seen.contains(&0), "{seen:?}");
    let mut presses = 0;
    while !seen.contains(&0) {
        press(&mut app, KeyCode::Char('k'));
        presses += 1;
        assert!(presses <= 26, "the line's start is never shown");
        seen.extend(marks_shown(&render_app(&app, 80, 16)));
    }
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen,
        (0..154).collect::<Vec<_>>(),
        "every row of it was shown"
    );
    let view = app.logs().unwrap();
    let cursor = view.buffer().selected().unwrap();
    assert_eq!(
        view.buffer().lines()[cursor].text,
        long,
        "still the cursor line"
    );
    assert_snapshot!("worker_wrapped_line_start_80x16", render_app(&app, 80, 16));
    // One row further up: the line before it, the long one's first row
    // still at the bottom.
    press(&mut app, KeyCode::PageUp);
    let screen = render_app(&app, 80, 16);
    assert!(screen.contains("job 3 done"), "{screen}");
    // Down again row by row, then to the bottom: following.
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::PageDown);
    press(&mut app, KeyCode::PageDown);
    press(&mut app, KeyCode::PageDown);
    assert!(app.logs().unwrap().buffer().following());
}

/// The mark row's text (the tab row).
fn mark_row(app: &App) -> String {
    render_app(app, 80, 16)
        .lines()
        .nth(3)
        .unwrap_or_default()
        .to_owned()
}

/// While lines wrap, what is below is counted in screen rows, whatever
/// the keys (row by row, or a page): never rows and lines mixed; one is
/// `1 row` (and unwrapped `1 line`).
#[test]
fn wrapped_below_is_counted_in_rows() {
    let mut app = opened_app();
    let long: String = (0..154).map(|i| format!("c{i:03}-xxxxxxxx")).collect();
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session: 1,
            service: 1,
            lines: vec![line(1, &long, 500), line(1, "line-after", 2500)],
        }),
        CAPTURE,
    );
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('w'));
    render_app(&app, 80, 16);
    press(&mut app, KeyCode::Char('k'));
    assert!(
        mark_row(&app).contains("‖ paused · 1 row below · G follows"),
        "{}",
        mark_row(&app)
    );
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('k'));
    assert!(
        mark_row(&app).contains("‖ paused · 3 rows below · G follows"),
        "{}",
        mark_row(&app)
    );
    // A page up: 10 rows more, counted as rows too.
    press(&mut app, KeyCode::PageUp);
    let mark = mark_row(&app);
    assert!(
        mark.contains("‖ paused · 13 rows below · G follows"),
        "{mark}"
    );
    // Unwrapped: lines, singular too.
    press(&mut app, KeyCode::Char('G'));
    press(&mut app, KeyCode::Char('w'));
    press(&mut app, KeyCode::Char('k'));
    assert!(
        mark_row(&app).contains("‖ paused · 1 line below · G follows"),
        "{}",
        mark_row(&app)
    );
}

/// The full-text view over the logs view is the top layer: `j`/`k` scroll
/// it, and leave the logs view's cursor under it where it was (they moved
/// that hidden cursor before the views became one stack of layers).
#[test]
fn j_scrolls_the_full_text_over_the_logs_not_the_cursor_under_it() {
    let mut app = opened_app();
    let long = format!("2026-12-01T11:59:00Z {}", "payload=ok ".repeat(200));
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session: 1,
            service: 0,
            lines: vec![line(0, &long, 5000)],
        }),
        CAPTURE,
    );
    render_app(&app, 80, 24);
    let cursor = app.logs().and_then(|view| view.buffer().selected());
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.full_text().map(|f| f.scroll), Some(0));
    // A frame first: the view learns how many rows the text wraps to.
    render_app(&app, 80, 24);
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.full_text().map(|f| f.scroll), Some(2));
    press(&mut app, KeyCode::Char('k'));
    assert_eq!(app.full_text().map(|f| f.scroll), Some(1));
    assert_eq!(app.logs().and_then(|view| view.buffer().selected()), cursor);
}

/// The texts of the lines the current tab holds.
fn held(app: &App) -> Vec<String> {
    let view = app.logs().expect("the logs view");
    view.buffer()
        .lines()
        .iter()
        .map(|l| l.text.clone())
        .collect()
}

/// A snapshot of `alpha` whose `secret_history` holds `values`.
fn with_secrets(values: &[&str]) -> Arc<Snapshot> {
    let mut snapshot = Snapshot::from(Rows {
        generation: stackless_tui::model::Generation::new(14),
        instances: vec![instance("alpha", "local", Status::Active)].into(),
        ..Rows::default()
    });
    snapshot.redactor = Arc::new(stackless_tui::model::redact::Redactor::new(
        values.iter().map(|v| (*v).to_owned()),
    ));
    Arc::new(snapshot)
}

#[test]
fn secrets_are_redacted_in_every_line_held_searched_and_opened_whole() {
    let mut app = app_with(vec![instance("alpha", "local", Status::Active)]);
    app.handle(Event::Snapshot(with_secrets(&["sk_live_123"])), CAPTURE);
    let Some(Effect::Io(Request::OpenLogs { session, .. })) = press(&mut app, KeyCode::Char('l'))
    else {
        panic!("l opens the logs");
    };
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: Opened {
            state: LogsState::Ready,
            path: "/state/logs/alpha".into(),
            services: vec![OpenedService {
                name: "web".into(),
                lines: vec![line(0, "API_TOKEN=sk_live_123", 0)],
                older: Older::Before(LinePos {
                    file: FileKey { dev: 1, ino: 10 },
                    offset: 0,
                }),
                error: None,
                partial: Some(line(0, "partial sk_live_123", 40)),
            }],
            notice: None,
        },
        bases: vec!["/state/logs/alpha/web.log".into()],
    });
    // The follower's lines, one with a value stackless records only in the
    // next snapshot (the line came first).
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session,
            service: 0,
            lines: vec![
                line(0, r#"{"token":"sk_live_123"}"#, 22),
                line(0, "late: pw-late-9", 60),
            ],
        }),
        CAPTURE,
    );
    assert_eq!(
        held(&app),
        [
            "API_TOKEN=[redacted]",
            r#"{"token":"[redacted]"}"#,
            "late: pw-late-9"
        ]
    );
    app.handle(
        Event::Snapshot(with_secrets(&["sk_live_123", "pw-late-9"])),
        CAPTURE,
    );
    assert_eq!(
        held(&app),
        [
            "API_TOKEN=[redacted]",
            r#"{"token":"[redacted]"}"#,
            "late: [redacted]"
        ]
    );
    let screen = render_app(&app, 80, 24);
    assert!(
        !screen.contains("sk_live") && !screen.contains("pw-late"),
        "{screen}"
    );
    // A search for the value finds nothing held.
    press(&mut app, KeyCode::Char('/'));
    for c in "sk_live".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.logs().and_then(|v| v.buffer().current), None);
    // The whole line read again from its file.
    let mut whole = stackless_tui::model::fulltext::FullText::new("Log: web");
    whole.line("a long line with sk_live_123 in it");
    app.answer(stackless_tui::event::Answer::LogsLineWhole {
        session,
        text: whole,
    });
    let full = app.full_text().expect("the whole line");
    assert_eq!(full.text.lines, ["a long line with [redacted] in it"]);
}

/// With no `secret_history`, a line holding JSON with credential-named
/// fields (whole, after a timestamp, followed, still being written) is held,
/// drawn, searched and opened whole with those fields `[redacted]`.
#[test]
fn credential_fields_are_redacted_with_no_secret_history() {
    let mut app = app_with(vec![instance("alpha", "local", Status::Active)]);
    let Some(Effect::Io(Request::OpenLogs { session, .. })) = press(&mut app, KeyCode::Char('l'))
    else {
        panic!("l opens the logs");
    };
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: Opened {
            state: LogsState::Ready,
            path: "/state/logs/alpha".into(),
            services: vec![OpenedService {
                name: "web".into(),
                lines: vec![
                    line(
                        0,
                        r#"{"level":"info","password":"LOGPW2","api_key":"LOGAK","msg":"hi"}"#,
                        0,
                    ),
                    line(0, r#"2026-12-02T07:00:00Z {"token":"LOGTOK"}"#, 70),
                ],
                older: Older::Before(LinePos {
                    file: FileKey { dev: 1, ino: 10 },
                    offset: 0,
                }),
                error: None,
                partial: None,
            }],
            notice: None,
        },
        bases: vec!["/state/logs/alpha/web.log".into()],
    });
    app.handle(
        Event::Logs(LogUpdate::Lines {
            session,
            service: 0,
            lines: vec![line(0, r#"{"password":"FOLLOWPW"}"#, 110)],
        }),
        CAPTURE,
    );
    app.handle(
        Event::Logs(LogUpdate::Partial {
            session,
            service: 0,
            line: line(0, r#"{"cookie":"PARTCOOK"#, 134),
        }),
        CAPTURE,
    );
    assert_eq!(
        held(&app),
        [
            r#"{"level":"info","password":"[redacted]","api_key":"[redacted]","msg":"hi"}"#,
            r#"2026-12-02T07:00:00Z {"token":"[redacted]"}"#,
            r#"{"password":"[redacted]"}"#,
        ]
    );
    let screen = render_app(&app, 100, 24);
    for value in ["LOGPW2", "LOGAK", "LOGTOK", "FOLLOWPW", "PARTCOOK"] {
        assert!(!screen.contains(value), "{value}: {screen}");
    }
    assert!(screen.contains(r#"{"cookie":"[redacted]""#), "{screen}");
    // A search for a value finds nothing held.
    press(&mut app, KeyCode::Char('/'));
    for c in "LOGPW2".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.logs().and_then(|v| v.buffer().current), None);
    // The whole line read again from its file.
    let mut whole = stackless_tui::model::fulltext::FullText::new("Log: web");
    whole.line(r#"{"level":"info","password":"LOGPW2","msg":"hi"}"#);
    app.answer(stackless_tui::event::Answer::LogsLineWhole {
        session,
        text: whole,
    });
    let full = app.full_text().expect("the whole line");
    assert_eq!(
        full.text.lines,
        [r#"{"level":"info","password":"[redacted]","msg":"hi"}"#]
    );
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn ctrl(app: &mut App, c: char) {
    app.handle(
        Event::Input(crossterm::event::Event::Key(
            crossterm::event::KeyEvent::new(
                KeyCode::Char(c),
                crossterm::event::KeyModifiers::CONTROL,
            ),
        )),
        CAPTURE,
    );
}

/// A second `/` starts an empty query (`/500⏎` then `/ERROR⏎` searches
/// "ERROR", not "500ERROR"); the last query is shown as a hint and Enter on
/// the empty prompt searches it again.
#[test]
fn a_second_slash_starts_an_empty_query() {
    let mut app = opened_app();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "200");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.logs().unwrap().search, "200");
    press(&mut app, KeyCode::Char('/'));
    assert_eq!(app.logs().unwrap().editing.as_deref(), Some(""));
    let screen = render_app(&app, 100, 20);
    let prompt = screen.lines().find(|l| l.contains('█')).unwrap();
    assert_eq!(
        prompt.trim_matches('"').trim_matches('║').trim_end(),
        "/█  (Enter: \"200\" again)"
    );
    type_text(&mut app, "ERROR");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.logs().unwrap().search, "ERROR");
    // Enter on the empty prompt: the last query again.
    press(&mut app, KeyCode::Char('/'));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.logs().unwrap().search, "ERROR");
}

/// Ctrl-U clears the logs search prompt and Ctrl-W deletes its last word, as
/// in the other prompts (help: "in / and : prompts").
#[test]
fn ctrl_u_and_ctrl_w_edit_the_logs_search_prompt() {
    let mut app = opened_app();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "upstream timeout");
    ctrl(&mut app, 'w');
    assert_eq!(app.logs().unwrap().editing.as_deref(), Some("upstream "));
    ctrl(&mut app, 'u');
    assert_eq!(app.logs().unwrap().editing.as_deref(), Some(""));
    type_text(&mut app, "ERROR");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.logs().unwrap().search, "ERROR");
}

/// The logs view's title row of `screen`, inside its corners.
fn logs_title(screen: &str) -> String {
    let row = screen
        .lines()
        .find(|l| l.contains(" Logs: "))
        .expect("the title row")
        .trim_matches('"');
    let inner: String = row.chars().skip(1).collect();
    inner.trim_end_matches(['═', '╗']).to_owned()
}

/// The logs view's title is cut at whole words: the tombstone note shortened
/// or dropped, never mid-word ("stackless keeps its log"; the path cut at a
/// `/`: `panes::logs` unit tests).
#[test]
fn the_logs_title_is_cut_at_whole_words() {
    let mut app = app_with(vec![instance("beta", "local", Status::Tombstoned)]);
    opened_state(
        &mut app,
        LogsState::DirGone {
            path: "/state/logs/beta".into(),
        },
    );
    assert_eq!(
        logs_title(&render_app(&app, 100, 16)),
        " Logs: beta /state/logs/beta · tombstoned: stackless keeps its logs until GC "
    );
    assert_eq!(
        logs_title(&render_app(&app, 72, 16)),
        " Logs: beta /state/logs/beta · tombstoned: logs kept until GC "
    );
    assert_eq!(
        logs_title(&render_app(&app, 60, 16)),
        " Logs: beta /state/logs/beta · tombstoned "
    );
}
