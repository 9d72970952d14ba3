//! The logs view against real files: the tail read from the end, the
//! follower across appends, rotation and truncation (every line once, in
//! order, on the screen), scroll-back through rotated generations, refused
//! symlinks, a missing directory, a substrate that keeps logs elsewhere, and
//! hostile bytes.

use crate::common::ui::Answers as _;
use stackless_tui::event::Request;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use stackless_tui::event::{Event, EventReceiver};
use stackless_tui::logs::{self, follower};
use stackless_tui::model::logview::{LogsRequest, LogsState, Older, Opened};
use stackless_tui::model::{Birth, Generation, Instance, Rows, Snapshot};
use stackless_tui::ui::{App, AppConfig, Effect};

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app};

pub(super) fn instance(name: &str, substrate: &str, birth: Option<Birth>) -> Instance {
    crate::common::builders::instance(name)
        .substrate(substrate)
        .created(Some(CAPTURE - 60))
        .lease(3600, CAPTURE + 3600)
        .with_birth(birth)
        .build()
}

/// An app showing `instances` on a schema-`version` store.
pub(super) fn app_with(instances: Vec<Instance>, version: i64) -> App {
    let config = AppConfig {
        store_label: "state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Off("--no-reaper".into()),
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: true,
    };
    let mut app = App::new(config, CAPTURE);
    let snapshot = Snapshot::from(Rows {
        generation: Generation::new(version),
        instances: instances.into(),
        ..Rows::default()
    });
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    app
}

/// alpha's logs view (a schema-5 store at `state`), on its `web` tab and
/// followed with `options`: the app, the follower's events, its handle.
pub(super) fn follow_web(
    state: &Path,
    options: follower::Options,
) -> (App, EventReceiver, follower::Handle) {
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, follows) = logs::open(state, &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let dir = state.join("logs/alpha");
    let handle =
        follower::spawn_with(session, dir, vec!["web".into()], follows, tx, options).unwrap();
    (app, rx, handle)
}

/// `l` on the selected row: the session and request it asks for.
pub(super) fn press_l(app: &mut App) -> (u64, LogsRequest) {
    match press(app, KeyCode::Char('l')) {
        Some(Effect::Io(Request::OpenLogs { session, request })) => (session, request),
        other => panic!("l asked for {other:?}"),
    }
}

fn lines(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("line {i:03}\n")).collect()
}

pub(super) fn append(path: &Path, text: &str) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// The texts of the shown tab's lines.
pub(super) fn held(app: &App) -> Vec<String> {
    let view = app.logs().expect("logs open");
    view.buffer()
        .lines()
        .iter()
        .map(|l| l.text.clone())
        .collect()
}

/// Apply events to `app` until `done` holds (or 10 s pass: a failure).
pub(super) fn pump(app: &mut App, rx: &mut EventReceiver, done: impl Fn(&App) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(app) {
        assert!(Instant::now() < deadline, "timed out; held {:?}", held(app));
        match rx.try_recv() {
            Ok(event) => {
                app.handle(event, CAPTURE);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn expected(range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|i| format!("line {i:03}")).collect()
}

/// Write, append, rotate (the old file gains a last line after the rename,
/// and a line is split across the two files), truncate: every line arrives
/// once, in order, and is on the screen.
fn follow_through_everything(notify: bool) {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    append(&web, &lines(1..=20));
    append(&web, "line 0");
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    assert_eq!(request.dir, "alpha");
    let (opened, follows) = logs::open(state.path(), &request);
    assert_eq!(opened.state, LogsState::Ready);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    assert_eq!(held(&app), expected(1..=20));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = follower::spawn(
        session,
        dir.clone(),
        vec!["web".into()],
        follows,
        tx,
        notify,
    )
    .unwrap();

    // The line being written at open ends now.
    append(&web, "21\n");
    append(&web, &lines(22..=40));
    pump(&mut app, &mut rx, |a| held(a).len() == 40);

    // Rotation: the writer renames, still writes to the old file, then
    // starts the new one; line 046 is split across the two files.
    let mut old = OpenOptions::new().append(true).open(&web).unwrap();
    std::fs::rename(&web, dir.join("web.log.1")).unwrap();
    old.write_all(lines(41..=45).as_bytes()).unwrap();
    old.write_all(b"line 0").unwrap();
    drop(old);
    append(&web, "46\n");
    append(&web, &lines(47..=60));
    pump(&mut app, &mut rx, |a| held(a).len() == 60);

    // Truncation: the file is emptied and written again from its start.
    std::fs::write(&web, lines(61..=65)).unwrap();
    pump(&mut app, &mut rx, |a| held(a).len() == 65);
    append(&web, &lines(66..=70));
    pump(&mut app, &mut rx, |a| held(a).len() == 70);
    assert_eq!(held(&app), expected(1..=70));

    // And on the screen, in order, once each.
    let screen = render_app(&app, 100, 90);
    let shown: Vec<&str> = screen
        .lines()
        .filter_map(|row| row.find("line ").map(|at| &row[at..at + 8]))
        .collect();
    let want = expected(1..=70);
    assert_eq!(shown, want.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(screen.contains("● following"), "{screen}");
    assert!(
        screen.contains("web.log truncated: read again from its start"),
        "{screen}"
    );
    let watch = if notify { "notify" } else { "poll 250ms" };
    assert!(screen.contains(watch), "{screen}");
    drop(handle);
}

#[test]
fn follower_keeps_every_line_with_notifications() {
    follow_through_everything(true);
}

#[test]
fn follower_keeps_every_line_polling() {
    follow_through_everything(false);
}

#[test]
fn the_follower_says_rotation_and_truncation() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    append(&web, &lines(1..=3));
    let request = LogsRequest {
        instance: "alpha".into(),
        dir: "alpha".into(),
        substrate: "local".into(),
    };
    let (_, follows) = logs::open(state.path(), &request);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _handle = follower::spawn(7, dir.clone(), vec!["web".into()], follows, tx, false).unwrap();
    let mut notes = Vec::new();
    let mut wait_note = |rx: &mut EventReceiver| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(Instant::now() < deadline, "no note: {notes:?}");
            if let Ok(Event::Logs(stackless_tui::model::logview::LogUpdate::Note {
                note, ..
            })) = rx.try_recv()
            {
                notes.push(note);
                return notes.clone();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    std::fs::rename(&web, dir.join("web.log.1")).unwrap();
    append(&web, "new\n");
    use stackless_tui::model::logview::FollowNote;
    assert_eq!(wait_note(&mut rx), [FollowNote::Rotated]);
    std::fs::write(&web, "").unwrap();
    assert_eq!(
        wait_note(&mut rx),
        [FollowNote::Rotated, FollowNote::Truncated]
    );
}

/// Three generations: the tail at open takes the current file and as much
/// of `.log.1` as it needs; scrolling back reads `.log.2` and stops at its
/// start.
#[test]
fn scroll_back_walks_the_rotated_generations() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/sl-0123");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("web.log.2"), lines(1..=300)).unwrap();
    std::fs::write(dir.join("web.log.1"), lines(301..=600)).unwrap();
    std::fs::write(dir.join("web.log"), lines(601..=700)).unwrap();
    std::fs::write(dir.join("web.log.lock"), "").unwrap();
    let birth = Birth::new("0123", "sl-0123");
    let mut app = app_with(vec![instance("alpha", "local", Some(birth))], 14);
    let (session, request) = press_l(&mut app);
    assert_eq!(request.dir, "sl-0123");
    let (opened, _follows) = logs::open(state.path(), &request);
    assert_eq!(
        opened.services.len(),
        1,
        "the .lock and rotated files are no services"
    );
    assert_eq!(opened.services[0].name, "web");
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    assert_eq!(held(&app), expected(301..=700));
    // Scroll to the top: the console asks for older lines.
    let Some(Effect::Io(Request::LogsOlder {
        session: s,
        service,
        before,
        ..
    })) = press(&mut app, KeyCode::Char('g'))
    else {
        panic!("g near the top reads older lines");
    };
    let base = dir.join("web.log");
    let (raw, older) = logs::history::older(&base, before, 400).unwrap();
    assert_eq!(older, Older::Start);
    let older_lines = raw
        .iter()
        .map(|r| stackless_tui::model::logview::LogLine::from_raw(r, service))
        .collect();
    app.answer(stackless_tui::event::Answer::LogsOlder {
        session: s,
        service,
        lines: older_lines,
        older,
    });
    assert_eq!(held(&app), expected(1..=700));
    let view = app.logs().unwrap();
    assert!(!view.buffer().following());
    // G: back to the bottom, following.
    assert_eq!(press(&mut app, KeyCode::Char('G')), None);
    assert!(app.logs().unwrap().buffer().following());
}

/// A sparse 1 GiB file with lines at its end: the tail is read from the
/// end in a few blocks (reading it whole would take seconds and 1 GiB).
#[test]
fn a_huge_log_opens_at_its_tail() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    let file = std::fs::File::create(&web).unwrap();
    file.set_len(1 << 30).unwrap();
    drop(file);
    append(&web, &format!("\n{}", lines(1..=1000)));
    let request = LogsRequest {
        instance: "alpha".into(),
        dir: "alpha".into(),
        substrate: "local".into(),
    };
    let (opened, _follows) = logs::open(state.path(), &request);
    let texts: Vec<String> = opened.services[0]
        .lines
        .iter()
        .map(|l| l.text.clone())
        .collect();
    assert_eq!(texts, expected(601..=1000));
    assert!(matches!(opened.services[0].older, Older::Before(_)));
}

pub(super) fn alpha() -> LogsRequest {
    LogsRequest {
        instance: "alpha".into(),
        dir: "alpha".into(),
        substrate: "local".into(),
    }
}

#[test]
fn symlinks_are_never_followed() {
    let state = tempfile::tempdir().unwrap();
    let secret = state.path().join("secret.txt");
    std::fs::write(&secret, "SECRET\n").unwrap();
    // A symlinked service log is listed, refused, and never read.
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("web.log")).unwrap();
    std::fs::write(dir.join("worker.log"), "ok\n").unwrap();
    let (opened, follows) = logs::open(state.path(), &alpha());
    assert_eq!(opened.state, LogsState::Ready);
    assert_eq!(
        opened.services[0].error.as_deref(),
        Some("cannot open web.log: a symlink: not followed")
    );
    assert!(opened.services[0].lines.is_empty());
    assert_eq!(follows.len(), 1);
    // A FIFO does not block the open.
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.log"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let (opened, _) = logs::open(state.path(), &alpha());
    assert_eq!(opened.services.len(), 2, "a FIFO is not listed");
    // A symlinked instance directory is refused whole.
    let elsewhere = state.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("web.log"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, state.path().join("logs/beta")).unwrap();
    let request = LogsRequest {
        dir: "beta".into(),
        ..alpha()
    };
    let (opened, follows) = logs::open(state.path(), &request);
    let LogsState::Failed(message) = &opened.state else {
        panic!("{:?}", opened.state);
    };
    assert!(
        message.ends_with(
            "logs/beta is a symlink: refused (logs are read only from ordinary directories)"
        ),
        "{message}"
    );
    assert!(follows.is_empty());
}

/// What the view says when there is nothing on disk to follow.
#[test]
fn no_dir_no_files_and_logs_elsewhere_are_said() {
    let state = tempfile::tempdir().unwrap();
    let (opened, _) = logs::open(state.path(), &alpha());
    let gone = format!("{}/logs/alpha", state.path().display());
    assert_eq!(opened.state, LogsState::DirGone { path: gone.clone() });
    std::fs::create_dir_all(state.path().join("logs/alpha")).unwrap();
    let (opened, _) = logs::open(state.path(), &alpha());
    assert_eq!(opened.state, LogsState::NoFiles { path: gone });
    let render = LogsRequest {
        substrate: "render".into(),
        ..alpha()
    };
    let (opened, follows): (Opened, _) = logs::open(state.path(), &render);
    assert_eq!(opened.state, LogsState::Elsewhere);
    assert!(follows.is_empty());
}

/// A hostile row: a logs directory name that is not DNS-safe is refused
/// before any path is built.
#[test]
fn a_hostile_namespace_is_refused() {
    let birth = Birth::new("x", "../../etc");
    let mut app = app_with(vec![instance("alpha", "local", Some(birth))], 14);
    assert_eq!(press(&mut app, KeyCode::Char('l')), None);
    assert!(app.logs().is_none());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("logs of alpha: its logs directory name is not DNS-safe: refused")
    );
}

/// Hostile bytes in a log (the store tests' escape set, and invalid UTF-8)
/// never reach the terminal; their placeholders are drawn instead.
#[test]
fn hostile_log_bytes_never_reach_the_terminal() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let mut hostile = Vec::new();
    hostile.extend_from_slice(b"clear \x1b[2J title \x1b]0;pwned\x07 red \x1b[31mRED\n");
    hostile.extend_from_slice("bidi \u{202e}evil \u{2066}x\n".as_bytes());
    hostile.extend_from_slice(b"nul \0 cr \r mid bell \x07 c1 \xc2\x9b2J\n");
    hostile.extend_from_slice(b"binary \xff\xfe\x80\x81 \x1b]0;title\x07\n");
    std::fs::write(dir.join("web.log"), &hostile).unwrap();
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _follows) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    for tab in 0..2 {
        for wrap in [false, true] {
            for (w, h) in [(120, 40), (80, 24), (250, 60)] {
                let bytes = crate::hostile::render_bytes(&app, w, h);
                for raw in [
                    b"\x1b[2J".as_slice(),
                    b"\x1b]0;pwned".as_slice(),
                    b"\x1b]0;title".as_slice(),
                    b"\x1b[31mRED".as_slice(),
                    "\u{202e}".as_bytes(),
                    "\u{2066}".as_bytes(),
                    b"\0".as_slice(),
                    b"\r".as_slice(),
                    b"\x07".as_slice(),
                    b"\xc2\x9b".as_slice(),
                    b"\xff".as_slice(),
                ] {
                    assert!(
                        !crate::hostile::contains(&bytes, raw),
                        "{raw:?} reached the terminal at {w}x{h} (tab {tab}, wrap {wrap})"
                    );
                }
                assert!(crate::hostile::contains(&bytes, "␛[2J".as_bytes()));
                // Spaces are skipped by the backend: the run of placeholders.
                assert!(crate::hostile::contains(&bytes, "����".as_bytes()));
            }
            press(&mut app, KeyCode::Char('w'));
        }
        press(&mut app, KeyCode::Tab);
    }
}

/// Opened before the instance wrote anything: the view looks again every
/// tick and shows the logs once they are there.
#[test]
fn a_logs_dir_that_appears_later_is_picked_up() {
    let state = tempfile::tempdir().unwrap();
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, _) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    let screen = render_app(&app, 120, 20);
    assert!(screen.contains("no logs directory"), "{screen}");
    let again = |app: &mut App| match app.handle(Event::Tick, CAPTURE) {
        Some(Effect::Io(Request::OpenLogs { session, request })) => {
            let (opened, _) = logs::open(state.path(), &request);
            app.answer(stackless_tui::event::Answer::LogsOpened {
                session,
                opened,
                bases: Vec::new(),
            });
        }
        other => panic!("a tick asked for {other:?}"),
    };
    again(&mut app);
    assert!(matches!(
        app.logs().unwrap().state,
        LogsState::DirGone { .. }
    ));
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    again(&mut app);
    assert!(matches!(
        app.logs().unwrap().state,
        LogsState::NoFiles { .. }
    ));
    std::fs::write(dir.join("web.log"), lines(1..=2)).unwrap();
    again(&mut app);
    assert_eq!(app.logs().unwrap().state, LogsState::Ready);
    assert_eq!(held(&app), expected(1..=2));
    // Ready: ticks ask for nothing more.
    assert_eq!(app.handle(Event::Tick, CAPTURE), None);
}

/// A service that starts after the view opened: its log becomes a new
/// tab, read from its start, in the all-services tab too.
#[test]
fn a_service_log_that_appears_while_following_gets_a_tab() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("web.log"), lines(1..=2)).unwrap();
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let opening = logs::open_all(state.path(), &request);
    assert_eq!(opening.names, ["web"]);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: opening.opened,
        bases: Vec::new(),
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _handle = follower::spawn(
        session,
        dir.clone(),
        opening.names,
        opening.follows,
        tx,
        true,
    )
    .unwrap();
    std::fs::write(dir.join("worker.log"), "job 1 done\njob 2 done\n").unwrap();
    pump(&mut app, &mut rx, |a| {
        a.logs().unwrap().tab_names() == ["all", "web", "worker"] && held(a).len() == 4
    });
    assert_eq!(
        held(&app),
        ["line 001", "line 002", "job 1 done", "job 2 done"]
    );
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(held(&app), ["job 1 done", "job 2 done"]);
}

/// An open logs view whose directory does not change does not list it again
/// (it held a million files: listed every second, 28 % of a CPU); a
/// `<service>.log` that appears is still picked up, by one more listing. The
/// follower lists the directory once as it starts (a file made between the
/// open and the follower's start); then the view stays idle for three safety
/// polls (each a wake) and reads a line written to its log (a wake with no
/// new name).
#[test]
fn an_idle_logs_view_does_not_list_its_directory_again() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    append(&web, &lines(1..=2));
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let opening = logs::open_all(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened: opening.opened,
        bases: Vec::new(),
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _handle = follower::spawn(
        session,
        dir.clone(),
        opening.names,
        opening.follows,
        tx,
        true,
    )
    .unwrap();
    append(&web, &lines(3..=3));
    pump(&mut app, &mut rx, |a| held(a).len() == 3);
    std::thread::sleep(follower::SAFETY_POLL * 3 + follower::RESCAN);
    append(&web, &lines(4..=4));
    pump(&mut app, &mut rx, |a| held(a).len() == 4);
    assert_eq!(follower::listings(&dir), 1);
    std::fs::write(dir.join("worker.log"), "job 1 done\n").unwrap();
    pump(&mut app, &mut rx, |a| {
        a.logs().unwrap().tab_names() == ["all", "web", "worker"] && held(a).len() == 5
    });
    assert_eq!(follower::listings(&dir), 2);
}

/// The rows of the screen showing `line ` or `panic`, trimmed.
fn log_rows(app: &App) -> Vec<String> {
    render_app(app, 80, 30)
        .lines()
        .filter(|row| row.contains("line ") || row.contains("panic"))
        .map(|row| row.trim_matches(|c: char| " \"║│".contains(c)).to_owned())
        .collect()
}

/// A last line without its `\n` (a crashed service's last words): shown at
/// once on open, marked unfinished; when written further it is shown again
/// once stable; when its `\n` comes it is replaced by the line, not doubled.
#[test]
fn an_unfinished_last_line_is_shown_and_replaced() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    append(&web, &lines(1..=2));
    append(&web, "panic: boom");
    let mut app = app_with(vec![instance("alpha", "local", None)], 5);
    let (session, request) = press_l(&mut app);
    let (opened, follows) = logs::open(state.path(), &request);
    app.answer(stackless_tui::event::Answer::LogsOpened {
        session,
        opened,
        bases: Vec::new(),
    });
    press(&mut app, KeyCode::Tab);
    assert_eq!(held(&app), expected(1..=2));
    assert_eq!(log_rows(&app), ["line 001", "line 002", "panic: boom ⏎?"]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _handle =
        follower::spawn(session, dir.clone(), vec!["web".into()], follows, tx, true).unwrap();

    append(&web, " at main.rs:3");
    pump(&mut app, &mut rx, |a| {
        log_rows(a).last().map(String::as_str) == Some("panic: boom at main.rs:3 ⏎?")
    });
    assert_eq!(
        log_rows(&app),
        ["line 001", "line 002", "panic: boom at main.rs:3 ⏎?"]
    );
    append(&web, "\nline 003\n");
    pump(&mut app, &mut rx, |a| held(a).len() == 4);
    assert_eq!(
        log_rows(&app),
        [
            "line 001",
            "line 002",
            "panic: boom at main.rs:3",
            "line 003"
        ]
    );
}

/// Truncated and written again to the very same size before the follower
/// looks: the last bytes read are no longer where they were, so it is
/// taken as a truncation (said) and read again from the start.
#[test]
fn truncated_and_refilled_to_the_same_size_is_seen() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    append(&web, &lines(1..=5));
    let options = follower::Options {
        notify: false,
        safety_poll: follower::SAFETY_POLL,
    };
    let (mut app, mut rx, _handle) = follow_web(state.path(), options);
    pump(&mut app, &mut rx, |a| {
        a.logs().is_some_and(|v| v.watch.is_some())
    });
    std::fs::write(&web, lines(6..=10)).unwrap();
    assert_eq!(std::fs::metadata(&web).unwrap().len(), 45);
    pump(&mut app, &mut rx, |a| held(a).len() == 10);
    assert_eq!(held(&app), expected(1..=10));
    assert!(
        render_app(&app, 100, 30).contains("web.log truncated: read again from its start"),
        "no note"
    );
}

/// More services than one view opens, and a name that is not UTF-8: both
/// said above the tabs, the name sanitized.
#[test]
fn services_left_out_are_said() {
    use std::os::unix::ffi::OsStrExt as _;
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..40 {
        append(&dir.join(format!("s{i:02}.log")), "up\n");
    }
    let odd = std::ffi::OsStr::from_bytes(b"b\xff\x1b[2Jad.log");
    append(&dir.join(odd), "hidden\n");
    let request = alpha();
    let (opened, _) = logs::open(state.path(), &request);
    assert_eq!(opened.services.len(), 32);
    assert_eq!(
        opened.notice.as_deref(),
        Some(
            "32 of 40 services shown (the first 32 by name; the rest are not opened); \
             not UTF-8, not opened: b\u{fffd}␛[2Jad.log"
        )
    );
}

/// A hard link planted in the logs directory (`ln /etc/shadow ...`) is
/// refused, said on its tab; an ordinary log beside it opens.
#[test]
fn a_hard_link_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let secret = state.path().join("secret");
    std::fs::write(&secret, "root:$6$hash\n").unwrap();
    std::fs::hard_link(&secret, dir.join("hard.log")).unwrap();
    append(&dir.join("web.log"), "up\n");
    let (opened, follows) = logs::open(state.path(), &alpha());
    assert_eq!(follows.len(), 1);
    let hard = &opened.services[0];
    assert_eq!(hard.name, "hard");
    assert!(hard.lines.is_empty());
    assert_eq!(
        hard.error.as_deref(),
        Some("cannot open hard.log: 2 hard links: refused (it may be another file)")
    );
    assert_eq!(opened.services[1].lines[0].text, "up");
}
