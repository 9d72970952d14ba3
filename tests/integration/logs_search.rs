//! The logs view's search into older and newer history, against real
//! files: a jump far back fills the screen, `N` comes back through the
//! newer lines dropped, and `n` after the search bound goes on.

use crossterm::event::KeyCode;
use stackless_tui::logs;
use stackless_tui::ui::{App, Command};

use super::logs::{app_with, held, instance, press_l};
use crate::common::ui::{press, render_app};

/// `web.log.2` starts with `needle far 0`, then `GET /1..` (8000 lines);
/// `web.log.1` holds `needle near` among 500 lines, `web.log` 1000 more.
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
    std::fs::write(dir.join("web.log"), lines(8500, 9500)).unwrap();
    let base = dir.join("web.log");
    (state, base)
}

/// `l` on alpha, the web tab, drawn once (the view learns its height).
fn open_web(state: &std::path::Path) -> App {
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state, &request);
    app.show_logs(session, opened);
    press(&mut app, KeyCode::Tab);
    render_app(&app, 120, 20);
    app
}

/// `/QUERY` Enter.
fn search(app: &mut App, query: &str) -> Option<Command> {
    press(app, KeyCode::Char('/'));
    for c in query.chars() {
        press(app, KeyCode::Char(c));
    }
    // Drawn with the prompt row, as the console draws every frame.
    render_app(app, 120, 20);
    press(app, KeyCode::Enter)
}

/// What the console does with a search command: read the files, answer.
fn answer(app: &mut App, base: &std::path::Path, command: Option<Command>, max: u64) {
    match command {
        Some(Command::LogsSearchOlder {
            session,
            service,
            before,
            query,
        }) => {
            let result = logs::search::search_history(base, service, before, &query, max);
            app.show_search_older(session, service, result);
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
#[test]
fn a_jump_far_back_fills_the_screen_with_the_lines_after() {
    let (state, base) = three_generations();
    let mut app = open_web(state.path());
    let command = search(&mut app, "needle");
    answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
    let command = press(&mut app, KeyCode::Char('n'));
    answer(&mut app, &base, command, logs::search::SEARCH_BYTES);
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
