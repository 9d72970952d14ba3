//! The logs view's search into older and newer history, against real
//! files: a jump far back fills the screen, `N` comes back through the
//! newer lines dropped, and `n` after the search bound goes on.

use crate::common::ui::Answers as _;
use crossterm::event::KeyCode;
use stackless_tui::event::Request;
use stackless_tui::logs;
use stackless_tui::ui::{App, Effect};

use super::logs::{app_with, held, instance, press_l};
use crate::common::ui::{press, render_app};

/// `web.log.2` starts with `needle far 0`, then `GET /1..` (8000 lines);
/// `web.log.1` holds `needle near` among 500 lines, `web.log` 1000 more
/// with `needle newest` among its last 400 (held at open).
fn three_generations() -> (tempfile::TempDir, std::path::PathBuf) {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = |from: usize, to: usize| -> String {
        (from..to).map(|i| format!("GET /{i} 200\n")).collect()
    };
    std::fs::write(
        dir.join("web.log.2"),
        format!("needle far 0\n{}", lines(1, 8000)),
    )
    .unwrap();
    std::fs::write(
        dir.join("web.log.1"),
        format!("{}needle near\n{}", lines(8000, 8100), lines(8100, 8500)),
    )
    .unwrap();
    std::fs::write(
        dir.join("web.log"),
        format!("{}needle newest\n{}", lines(8500, 9400), lines(9400, 9500)),
    )
    .unwrap();
    let base = dir.join("web.log");
    (state, base)
}

/// `l` on alpha, the web tab, drawn once (the view learns its height).
fn open_web(state: &std::path::Path) -> App {
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state, &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    render_app(&app, 120, 20);
    app
}

/// `/QUERY` Enter.
fn search(app: &mut App, query: &str) -> Option<Effect> {
    press(app, KeyCode::Char('/'));
    for c in query.chars() {
        press(app, KeyCode::Char(c));
    }
    // Drawn with the prompt row, as the console draws every frame.
    render_app(app, 120, 20);
    press(app, KeyCode::Enter)
}

/// What the console does with a search command: read the files, answer.
fn answer(app: &mut App, base: &std::path::Path, command: Option<Effect>, max: u64) {
    match command {
        Some(Effect::Io(Request::LogsSearchOlder {
            session,
            service,
            before,
            query,
            redactor,
            ..
        })) => {
            let result =
                logs::search::search_history(base, service, before, &query, max, &redactor);
            app.answer(stackless_tui::event::Answer::LogsSearchOlder {
                session,
                service,
                result,
            });
        }
        Some(Effect::Io(Request::LogsSearchNewer {
            session,
            service,
            after,
            query,
            redactor,
            ..
        })) => {
            let result = logs::search::search_newer(base, service, after, &query, max, &redactor);
            app.answer(stackless_tui::event::Answer::LogsSearchNewer {
                session,
                service,
                result,
            });
        }
        other => panic!("the search goes on into the files: {other:?}"),
    }
}

/// The screen's log rows (between the tab row and the mark row).
fn screen_rows(app: &App) -> Vec<String> {
    render_app(app, 120, 20)
        .lines()
        .map(|l| l.trim_end().to_owned())
        .collect()
}

fn current(app: &App) -> Option<String> {
    let view = app.logs().unwrap();
    view.buffer()
        .current
        .map(|i| view.buffer().lines()[i].text.clone())
}

/// A match found far back, at the first line held: the lines after it
/// fill the screen at once (not the match over blank rows until j/k).
/// `/needle` (the newest, held), then `n` twice into older history.
fn jump_far_back(app: &mut App, base: &std::path::Path) {
    assert_eq!(search(app, "needle"), None, "needle newest is held");
    assert_eq!(current(app).as_deref(), Some("needle newest"));
    for _ in 0..2 {
        let command = press(app, KeyCode::Char('n'));
        answer(app, base, command, logs::search::SEARCH_BYTES);
    }
}

#[test]
fn a_jump_far_back_fills_the_screen_with_the_lines_after() {
    let (state, base) = three_generations();
    let mut app = open_web(state.path());
    jump_far_back(&mut app, &base);
    assert_eq!(current(&app).as_deref(), Some("needle far 0"));
    assert_eq!(held(&app)[0], "needle far 0");
    let rows = screen_rows(&app);
    let at = rows
        .iter()
        .position(|r| r.contains("needle far 0"))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    assert!(rows[at + 1].contains("GET /1 200"), "{rows:#?}");
    assert!(rows[at + 5].contains("GET /5 200"), "{rows:#?}");
    let blank = rows[at..].iter().filter(|r| r.trim().is_empty()).count();
    assert_eq!(blank, 0, "{rows:#?}");
}

/// The search line (the last row of the logs view).
fn search_row(app: &App) -> String {
    let rows = screen_rows(app);
    rows[rows.len() - 3].clone()
}

/// After `n` went far back (newer lines dropped), `N` reads forward again
/// from the newest line held, through `.log.1` to `web.log`: the newer
/// matches are found (the bottom row, as `n` puts them); past the last it says it
/// searched on to the tail.
#[test]
fn n_upper_comes_back_through_the_newer_lines_dropped() {
    let (state, base) = three_generations();
    let mut app = open_web(state.path());
    jump_far_back(&mut app, &base);
    assert!(app.logs().unwrap().buffer().newer_dropped);
    let command = press(&mut app, KeyCode::Char('N'));
    assert!(
        matches!(command, Some(Effect::Io(Request::LogsSearchNewer { .. }))),
        "{command:?}"
    );
    answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
    assert_eq!(current(&app).as_deref(), Some("needle near"));
    let row = search_row(&app);
    assert!(
        row.contains("\"needle\": found in newer history (")
            && row.contains("searched; G reads the tail)"),
        "{row}"
    );
    let rows = screen_rows(&app);
    let at = rows.iter().position(|r| r.contains("needle near")).unwrap();
    assert!(rows[at - 1].contains("GET /8099 200"), "{rows:#?}");
    let command = press(&mut app, KeyCode::Char('N'));
    answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
    assert_eq!(current(&app).as_deref(), Some("needle newest"));
    // Nothing newer: said, after reading on to the tail.
    let command = press(&mut app, KeyCode::Char('N'));
    answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
    assert_eq!(current(&app).as_deref(), Some("needle newest"));
    let row = search_row(&app);
    assert!(row.contains("searched on to the tail ("), "{row}");
    assert!(row.contains("): no newer match"), "{row}");
    // And back older again, through what is now held.
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    assert_eq!(current(&app).as_deref(), Some("needle near"));
}

/// A search that stops at its bound says so, and `n` goes on from where
/// it stopped (not the same bytes again): 64 KiB, 128 KiB, then the match
/// 184.6 KiB back (the bound is 64 KiB here, 64 MiB in the console), the
/// lines about it in place of those held (not joined to them: the bytes
/// between were searched, not kept).
#[test]
fn n_after_the_bound_goes_on_from_where_it_stopped() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = |from: usize, to: usize| -> String {
        (from..to).map(|i| format!("GET /{i:05} 200\n")).collect()
    };
    std::fs::write(
        dir.join("web.log.1"),
        format!("needle old\n{}", lines(0, 12000)),
    )
    .unwrap();
    std::fs::write(dir.join("web.log"), lines(12000, 13000)).unwrap();
    let base = dir.join("web.log");
    let mut app = open_web(state.path());
    let bound = 64 << 10;
    let command = search(&mut app, "needle");
    answer(&mut app, &base, command, bound);
    let row = search_row(&app);
    assert!(
        row.contains("searched 64 KiB back: no more matches (n searches on)"),
        "{row}"
    );
    let command = press(&mut app, KeyCode::Char('n'));
    answer(&mut app, &base, command, bound);
    let row = search_row(&app);
    assert!(
        row.contains("searched 128 KiB back: no more matches (n searches on)"),
        "{row}"
    );
    let command = press(&mut app, KeyCode::Char('n'));
    answer(&mut app, &base, command, bound);
    assert_eq!(current(&app).as_deref(), Some("needle old"));
    let row = search_row(&app);
    assert!(
        row.contains("\"needle\": found 184.6")
            && row.contains(" KiB back in older history (newer lines dropped"),
        "{row}"
    );
    assert_eq!(held(&app)[..2], ["needle old", "GET /00000 200"]);
    let held = held(&app);
    let last = held.last().unwrap();
    assert!(
        last.as_str() < "GET /12000 200",
        "{last}: not joined to the lines held"
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('n')),
        None,
        "nothing older than the oldest log's first line"
    );
    // A search for what is not there: on to the start, every byte
    // searched counted (not `0 B`, the last round's).
    press(&mut app, KeyCode::Esc);
    let mut app = open_web(state.path());
    let command = search(&mut app, "absent");
    answer(&mut app, &base, command, bound);
    for _ in 0..2 {
        let command = press(&mut app, KeyCode::Char('n'));
        answer(&mut app, &base, command, bound);
    }
    let row = search_row(&app);
    assert!(
        row.contains(
            "searched back to the start of the oldest log (184.6 KiB searched in all): no more matches"
        ),
        "{row}"
    );
}

/// The search into the files is answered later, by the I/O worker: a
/// second `n` before the answer asks for nothing (it would read the same
/// lines and add them twice), and says so; the answer, when it comes,
/// adds the match once. A search changed while one was out drops its
/// answer.
#[test]
fn a_second_n_before_the_answer_asks_for_nothing_and_the_lines_come_once() {
    let (state, base) = three_generations();
    let mut app = open_web(state.path());
    assert_eq!(search(&mut app, "needle"), None, "needle newest is held");
    let first = press(&mut app, KeyCode::Char('n'));
    assert!(
        matches!(first, Some(Effect::Io(Request::LogsSearchOlder { .. }))),
        "{first:?}"
    );
    let held_before = held(&app).len();
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    // Scrolling to the top does not read older lines meanwhile either.
    assert_eq!(press(&mut app, KeyCode::Char('g')), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("\"needle\": still reading the files: n again when it answers")
    );
    answer(&mut app, &base, first, logs::search::SEARCH_BYTES);
    assert_eq!(current(&app).as_deref(), Some("needle near"));
    let lines = held(&app);
    assert_eq!(lines.iter().filter(|l| *l == "needle near").count(), 1);
    assert!(lines.len() > held_before);
    // The next `n` goes on into the files; the search changes before its
    // answer comes: the answer is dropped, nothing is added.
    let next = press(&mut app, KeyCode::Char('n'));
    assert!(
        matches!(next, Some(Effect::Io(Request::LogsSearchOlder { .. }))),
        "{next:?}"
    );
    let held_then = held(&app);
    assert_eq!(search(&mut app, "GET /1 200"), None, "held: found at once");
    answer(&mut app, &base, next, logs::search::SEARCH_BYTES);
    assert_eq!(held(&app), held_then);
}

/// With no `secret_history`, a search into older history never finds a line
/// by a credential-named JSON field's value, and the line found by what is
/// shown comes `[redacted]`.
#[test]
fn a_search_into_history_does_not_find_a_credential_fields_value() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let get: String = (0..1000).map(|i| format!("GET /{i} 200\n")).collect();
    // A line longer than MAX_LINE, cut inside its password's value: the
    // first piece ends with `SPLITPW`, the second begins with `ABCDEFGH`.
    let pad = "p".repeat(4067);
    let split = format!(r#"{{"pad":"{pad}","password":"SPLITPWABCDEFGH","n":1}}"#);
    assert_eq!(&split[4089..4096], "SPLITPW");
    std::fs::write(
        dir.join("web.log.1"),
        format!(
            "{}\n2026-12-02T07:00:00Z {}\n{split}\n{get}",
            r#"{"level":"info","password":"LOGPW2","api_key":"LOGAK","msg":"hi"}"#,
            r#"{"token":"LOGTOK"}"#
        ),
    )
    .unwrap();
    std::fs::write(dir.join("web.log"), &get).unwrap();
    let base = dir.join("web.log");
    for value in ["LOGPW2", "LOGAK", "LOGTOK", "SPLITPW", "ABCDEFGH"] {
        // A new view each time: the prompt keeps the last query.
        let mut app = open_web(state.path());
        let command = search(&mut app, value);
        answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
        assert_eq!(current(&app), None, "{value}");
        assert!(search_row(&app).contains("no more matches"), "{value}");
    }
    let mut app = open_web(state.path());
    let command = search(&mut app, r#""token":"[redacted]""#);
    answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
    assert_eq!(
        current(&app).as_deref(),
        Some(r#"2026-12-02T07:00:00Z {"token":"[redacted]"}"#)
    );
    assert!(
        held(&app).contains(
            &r#"{"level":"info","password":"[redacted]","api_key":"[redacted]","msg":"hi"}"#
                .to_owned()
        ),
        "{:?}",
        held(&app)
    );
    assert!(
        !held(&app)
            .iter()
            .any(|l| l.contains("LOG") || l.contains("SPLITPW") || l.contains("ABCDEFGH"))
    );
    assert!(held(&app).contains(&r#"[redacted]","n":1}"#.to_owned()));
}
