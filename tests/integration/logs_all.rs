//! The logs view's all-services tab, its wrapped scrolling, search into
//! older history and a logs directory recreated, against real files.

use crate::common::ui::Answers as _;
use crossterm::event::KeyCode;
use stackless_tui::event::Request;
use stackless_tui::logs;
use stackless_tui::ui::{App, Effect};

use super::logs::{app_with, held, instance, press_l};
use crate::common::ui::press;

/// `g` (to the top) on the shown tab until no more older lines are asked
/// for, each all-services step read from the files as the console does.
fn scroll_all_to_start(app: &mut App, bases: &[std::path::PathBuf]) -> usize {
    let mut steps = 0;
    while let Some(command) = press(app, KeyCode::Char('g')) {
        let Effect::Io(Request::LogsOlderAll {
            session,
            reads,
            want,
            ..
        }) = command
        else {
            panic!("g on the all tab asked for {command:?}");
        };
        let read = logs::history::older_all(bases, &reads, want);
        app.answer(stackless_tui::event::Answer::LogsOlderAll { session, read });
        steps += 1;
        assert!(steps < 100, "scroll-back never ends");
    }
    steps
}

/// Two services writing timestamped lines alternately (web on even
/// seconds, api on odd ones), more than a tail of each, api's older half
/// in `api.log.1`: the all tab shows them in time order, and scrolling
/// back reaches the first lines of both.
#[test]
fn the_all_tab_interleaves_by_time_and_scrolls_back_to_both_starts() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let stamp = |i: usize| {
        format!(
            "2026-12-01T{:02}:{:02}:{:02}Z",
            10 + i / 3600,
            i / 60 % 60,
            i % 60
        )
    };
    let mut web = String::new();
    let mut api = (String::new(), String::new());
    let mut want = Vec::new();
    for i in 0..1200 {
        let (service, text) = if i % 2 == 0 {
            ("web", format!("{} GET /{i}", stamp(i)))
        } else {
            ("api", format!("{} POST /{i}", stamp(i)))
        };
        match (service, i < 600) {
            ("web", _) => web.push_str(&format!("{text}\n")),
            (_, true) => api.0.push_str(&format!("{text}\n")),
            _ => api.1.push_str(&format!("{text}\n")),
        }
        want.push(format!("{service} │ {text}"));
    }
    std::fs::write(dir.join("web.log"), web).unwrap();
    std::fs::write(dir.join("api.log.1"), &api.0).unwrap();
    std::fs::write(dir.join("api.log"), &api.1).unwrap();
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    let shown = |app: &App| {
        let view = app.logs().unwrap();
        held(app)
            .into_iter()
            .zip(view.buffer().lines())
            .map(|(text, line)| format!("{} │ {text}", view.service_name(line.service)))
            .collect::<Vec<_>>()
    };
    // At open: the newest lines of both, interleaved, nothing older than
    // a line of either not read yet.
    let first = shown(&app);
    assert!(first.len() >= 400, "{}", first.len());
    assert_eq!(first[..], want[want.len() - first.len()..]);
    let bases = vec![dir.join("api.log"), dir.join("web.log")];
    let steps = scroll_all_to_start(&mut app, &bases);
    assert!(steps >= 1);
    assert_eq!(shown(&app), want, "every line of both, in time order");
    assert_eq!(
        shown(&app)[..2],
        [
            "web │ 2026-12-01T10:00:00Z GET /0",
            "api │ 2026-12-01T10:00:01Z POST /1"
        ]
    );
}

/// `l`, the web tab, then `/QUERY` Enter: the search command it asks for.
fn search(app: &mut App, query: &str) -> Option<Effect> {
    press(app, KeyCode::Char('/'));
    for c in query.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter)
}

/// The search line (the last row of the logs view) and the current match.
fn search_line(app: &App) -> (String, Option<String>) {
    let screen = crate::common::ui::render_app(app, 120, 20);
    let row = screen.lines().rev().nth(2).unwrap_or_default().to_owned();
    let view = app.logs().unwrap();
    let current = view
        .buffer()
        .current
        .map(|i| view.buffer().lines()[i].text.clone());
    (row, current)
}

/// `n` past the lines held goes on into the current file's older part,
/// then `.log.1` and `.log.2`, read backwards in blocks: near matches are
/// put in front of the lines held, far ones (past half a tab) replace
/// them; a search that reaches its bound or the oldest start says so.
#[test]
fn search_goes_on_into_older_history() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = |from: usize, to: usize| -> String {
        (from..to).map(|i| format!("GET /{i} 200\n")).collect()
    };
    std::fs::write(
        dir.join("web.log.2"),
        format!("needle far {}\n{}", 0, lines(1, 8000)),
    )
    .unwrap();
    std::fs::write(
        dir.join("web.log.1"),
        format!("{}needle near\n{}", lines(8000, 8100), lines(8100, 8500)),
    )
    .unwrap();
    std::fs::write(dir.join("web.log"), lines(8500, 9500)).unwrap();
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    let base = dir.join("web.log");
    let answer = |app: &mut App, command: Option<Effect>, max: u64| {
        let Some(Effect::Io(Request::LogsSearchOlder {
            session,
            service,
            before,
            query,
            redactor,
            ..
        })) = command
        else {
            panic!("the search goes on into the files: {command:?}");
        };
        let result = logs::search::search_history(&base, service, before, &query, max, &redactor);
        app.answer(stackless_tui::event::Answer::LogsSearchOlder {
            session,
            service,
            result,
        });
    };
    let command = search(&mut app, "needle");
    answer(&mut app, command, logs::search::SEARCH_BYTES);
    let (row, current) = search_line(&app);
    assert_eq!(current.as_deref(), Some("needle near"));
    assert!(row.contains("\"needle\": found in older history"), "{row}");
    assert!(held(&app).len() > 1000, "put in front of the lines held");
    // Further back than half a tab: the lines around it replace the held.
    let command = press(&mut app, KeyCode::Char('n'));
    answer(&mut app, command, logs::search::SEARCH_BYTES);
    let (row, current) = search_line(&app);
    assert_eq!(current.as_deref(), Some("needle far 0"));
    assert!(
        row.contains("newer lines dropped: G reads the tail"),
        "{row}"
    );
    assert_eq!(held(&app)[0], "needle far 0");
    // Nothing older: said, with how far it searched.
    assert_eq!(press(&mut app, KeyCode::Char('n')), None);
    let (row, _) = search_line(&app);
    assert!(row.contains("\"needle\": no older match in the"), "{row}");
    // A bound reached is said as such.
    press(&mut app, KeyCode::Esc);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    let command = search(&mut app, "absent");
    answer(&mut app, command, 64 << 10);
    let (row, _) = search_line(&app);
    assert!(
        row.contains("searched 64 KiB back: no more matches"),
        "{row}"
    );
}

/// The logs directory removed and made again (and then `<state_dir>/logs`
/// too): notifications are armed again on the new directories, so lines
/// written to the new file arrive with no safety poll at all (it is set
/// to an hour here); no timing is asserted, only that they come.
#[test]
fn a_recreated_logs_dir_is_watched_again() {
    use super::logs::{append, pump};
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    let numbered = |from: usize, to: usize| -> String {
        (from..=to).map(|i| format!("line {i:03}\n")).collect()
    };
    append(&web, &numbered(1, 5));
    let options = logs::follower::Options {
        notify: true,
        safety_poll: std::time::Duration::from_secs(3600),
    };
    let (mut app, mut rx, handle) = super::logs::follow_web(state.path(), options);
    append(&web, &numbered(6, 10));
    pump(&mut app, &mut rx, |a| held(a).len() == 10);
    // The instance's logs directory goes and comes back.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    append(&web, &numbered(11, 15));
    pump(&mut app, &mut rx, |a| {
        held(a).last().map(String::as_str) == Some("line 015")
    });
    append(&web, &numbered(16, 20));
    pump(&mut app, &mut rx, |a| {
        held(a).last().map(String::as_str) == Some("line 020")
    });
    // And `<state_dir>/logs` itself.
    std::fs::remove_dir_all(state.path().join("logs")).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    append(&web, &numbered(21, 25));
    pump(&mut app, &mut rx, |a| {
        held(a).last().map(String::as_str) == Some("line 025")
    });
    append(&web, &numbered(26, 30));
    pump(&mut app, &mut rx, |a| {
        held(a).last().map(String::as_str) == Some("line 030")
    });
    let got = held(&app);
    let want: Vec<String> = (1..=30).map(|i| format!("line {i:03}")).collect();
    let lines: Vec<&String> = got.iter().filter(|l| l.starts_with("line ")).collect();
    assert_eq!(lines, want.iter().collect::<Vec<_>>());
    drop(handle);
}

/// A 1 GiB log of one line (no newline at all): the tail is the line's
/// last block, its oldest piece marked as cut at the start; the file is
/// never scanned for the line's start (one block read, not the 1 MiB
/// bound twice over).
#[test]
fn a_one_line_gigabyte_log_shows_its_end_cut_at_the_start() {
    use stackless_tui::model::logtext::{BLOCK, MAX_LINE};
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    let file = std::fs::File::create(&web).unwrap();
    file.set_len(1 << 30).unwrap();
    drop(file);
    super::logs::append(&web, &format!("{}tail-marker", "x".repeat(200 << 10)));
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state.path(), &request);
    let service = &opened.services[0];
    assert!(
        service.lines.len() <= BLOCK / MAX_LINE,
        "{}",
        service.lines.len()
    );
    assert!(service.lines[0].cut && service.lines.iter().skip(1).all(|l| !l.cut));
    assert!(service.lines.iter().all(|l| l.cont));
    assert!(matches!(
        service.older,
        stackless_tui::model::logview::Older::Before(_)
    ));
    let partial = service.partial.as_ref().expect("the unended last part");
    assert!(partial.text.ends_with("tail-marker"));
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('g'));
    let screen = crate::common::ui::render_app(&app, 100, 24);
    assert!(
        screen.contains("↪… (line continues before: 1.0 GiB) xxxx"),
        "{screen}"
    );
}
