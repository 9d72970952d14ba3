//! Enter (or `e`) on a `↪` piece of a long line opens the whole line,
//! read again from its file by where it starts, up to the full-text
//! view's 10 MiB (then it says where it was cut).

use crate::common::ui::Answers as _;
use crossterm::event::KeyCode;
use stackless_tui::event::Request;
use stackless_tui::logs;
use stackless_tui::ui::{App, Effect};

use super::logs::{app_with, instance, press_l};
use crate::common::ui::{press, render_app};

/// `web.log` holding `before`, `long`, `after`; the web tab opened and
/// drawn, the cursor moved up `up` rows from `after`.
fn open_on(long: &str, up: usize) -> (tempfile::TempDir, std::path::PathBuf, App) {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("web.log");
    std::fs::write(&base, format!("before\n{long}\nafter\n")).unwrap();
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    render_app(&app, 120, 30);
    for _ in 0..up {
        press(&mut app, KeyCode::Char('k'));
    }
    (state, base, app)
}

/// Enter, answered as the console does.
fn enter(app: &mut App, base: &std::path::Path, key: KeyCode) {
    match press(app, key) {
        Some(Effect::Io(Request::LogsLineWhole {
            session,
            piece,
            title,
            ..
        })) => {
            let text = logs::history::whole_line_text(base, piece, &title);
            app.answer(stackless_tui::event::Answer::LogsLineWhole { session, text });
        }
        other => panic!("Enter on a piece reads the line again: {other:?}"),
    }
}

#[test]
fn enter_on_a_piece_opens_the_whole_line() {
    let long = format!("HEAD {} TAIL", "0123456789".repeat(2000));
    // `after`, then the last of the line's five pieces, then the third.
    for up in [1, 3] {
        let (_state, base, mut app) = open_on(&long, up);
        let key = if up == 1 {
            KeyCode::Enter
        } else {
            KeyCode::Char('e')
        };
        enter(&mut app, &base, key);
        let full = app.full_text().expect("the whole line shown");
        assert_eq!(
            full.text.title,
            "Log: web (the whole line, read again from its file)"
        );
        assert_eq!(full.text.lines, vec![long.clone()]);
        press(&mut app, KeyCode::Esc);
        assert!(app.full_text().is_none() && app.logs().is_some());
    }
    // A line held whole opens as before, with no read.
    let (_state, _base, mut app) = open_on(&long, 0);
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert_eq!(
        app.full_text().map(|f| f.text.lines.clone()),
        Some(vec!["after".to_owned()])
    );
}

#[test]
fn a_line_past_ten_mib_is_opened_cut_and_says_so() {
    use stackless_tui::model::fulltext::MAX_BYTES;
    let long = format!("HEAD{}", "x".repeat(MAX_BYTES + 100));
    let (_state, base, mut app) = open_on(&long, 1);
    enter(&mut app, &base, KeyCode::Enter);
    let full = app.full_text().expect("the line shown");
    assert_eq!(
        full.text.title,
        "Log: web (the whole line, read again from its file) · cut at 10 MiB: the line goes on"
    );
    assert_eq!(full.text.lines.len(), 1);
    assert_eq!(full.text.lines[0].len(), MAX_BYTES);
    assert!(full.text.lines[0].starts_with("HEADxxx"));
}
