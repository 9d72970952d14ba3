//! `P` and `R` (pause/resume, a pass now): the header's schedule (`next
//! pass in 42s · last: 2 reaped, 1 failed, 3 skipped`), a paused reaper
//! said in the header and the footer, the commands the keys return, and
//! refusals where this console runs no reaper.

use std::sync::Arc;

use crossterm::event::KeyCode;
use stackless_tui::event::{Event, RoleState};
use stackless_tui::reaper::{LastPass, PassSummary, ReaperStatus};
use stackless_tui::ui::{App, AppConfig, Effect, ReaperMode, panes};

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, press, render_pane};

fn console_app(reaper: ReaperMode) -> App {
    let mut app = App::new(
        AppConfig {
            store_label: "/home/operator/.local/state/stackless/state.db".into(),
            reaper,
            helper: stackless_tui::ui::HelperMode::None,
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        CAPTURE,
    );
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    app
}

fn status(paused: bool) -> ReaperStatus {
    ReaperStatus {
        paused,
        next_pass_at: (!paused).then_some(CAPTURE + 42),
        last: Some(LastPass {
            at: CAPTURE - 18,
            summary: PassSummary {
                reaped: 2,
                failed: 1,
                skipped: 3,
                ..PassSummary::default()
            },
        }),
    }
}

fn header(app: &App) -> String {
    render_pane(app, 120, 2, panes::header::render)
}

fn footer(app: &App) -> String {
    render_pane(app, 120, 1, panes::footer::render)
}

#[test]
fn the_header_counts_down_to_the_next_pass_and_says_the_last_one() {
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    // Before the reaper's first report: the start-up line only.
    assert!(!header(&app).contains("next pass"), "{}", header(&app));
    app.handle(Event::Reaper(status(false)), CAPTURE);
    let text = header(&app);
    assert!(
        text.contains(
            "reaper: every 1m  │  next pass in 42s · last: 2 reaped, 1 failed, 3 skipped  │  helper: none"
        ),
        "{text}"
    );
    // It counts down with the clock.
    app.handle(Event::Tick, CAPTURE + 30);
    assert!(header(&app).contains("next pass in 12s · last: "));
    app.handle(Event::Tick, CAPTURE + 50);
    assert!(header(&app).contains("next pass now · last: "));
}

#[test]
fn p_pauses_and_resumes_and_a_paused_reaper_says_so_in_header_and_footer() {
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    app.handle(Event::Reaper(status(false)), CAPTURE);
    assert_eq!(
        press(&mut app, KeyCode::Char('P')),
        Some(Effect::PauseReaper(true))
    );
    assert!(app.reaper().paused);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("reaper paused (P resumes): the role is free for another console or reap --once")
    );
    let text = header(&app);
    assert!(
        text.contains("reaper: paused (P resumes)  │  helper: none"),
        "{text}"
    );
    assert!(!text.contains("next pass"), "{text}");
    // Once the flash is gone, the footer says it too.
    app.handle(Event::Tick, CAPTURE + 10);
    assert!(app.flash().is_none());
    let text = footer(&app);
    assert!(text.contains("(reaper paused: P resumes)"), "{text}");
    // R while paused runs nothing and says why.
    assert_eq!(press(&mut app, KeyCode::Char('R')), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("the reaper is paused: P resumes it (and runs a pass)")
    );
    // P again resumes.
    assert_eq!(
        press(&mut app, KeyCode::Char('P')),
        Some(Effect::PauseReaper(false))
    );
    assert!(!app.reaper().paused);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("reaper resumed: it reaps once it has the role (the header says who reaps)")
    );
    assert!(header(&app).contains("reaper: every 1m  │  next pass in "));
    app.handle(Event::Tick, CAPTURE + 20);
    assert!(!footer(&app).contains("reaper paused"));
}

#[test]
fn r_asks_for_a_pass_now() {
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    assert_eq!(
        press(&mut app, KeyCode::Char('R')),
        Some(Effect::ReaperPass)
    );
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("reaper pass asked for: it runs now")
    );
}

/// After `R` the header stops counting down to the scheduled pass: it says
/// the pass runs until one closes at or after `R`, then counts down again.
#[test]
fn after_r_the_header_says_the_pass_runs_until_it_closes() {
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    app.handle(Event::Reaper(status(false)), CAPTURE);
    assert_eq!(
        press(&mut app, KeyCode::Char('R')),
        Some(Effect::ReaperPass)
    );
    app.handle(Event::Tick, CAPTURE + 5);
    let text = header(&app);
    assert!(
        !text.contains("next pass")
            && text.contains("reaper: every 1m  │  pass running (R) · last: 2 reaped"),
        "{text}"
    );
    // A report of the old pass (closed before R) keeps it so.
    app.handle(Event::Reaper(status(false)), CAPTURE + 6);
    assert!(
        header(&app).contains("pass running (R)"),
        "{}",
        header(&app)
    );
    // The pass closes: the countdown to the next one again.
    let mut done = status(false);
    done.next_pass_at = Some(CAPTURE + 67);
    done.last = Some(LastPass {
        at: CAPTURE + 7,
        summary: PassSummary::default(),
    });
    app.handle(Event::Reaper(done), CAPTURE + 7);
    let text = header(&app);
    assert!(text.contains("next pass in 1m 00s · last: "), "{text}");
}

#[test]
fn p_and_r_are_refused_where_this_console_runs_no_reaper() {
    let mut app = console_app(ReaperMode::Off("--no-reaper".into()));
    assert_eq!(press(&mut app, KeyCode::Char('P')), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("the reaper does not run in this console (reaper: off (--no-reaper))")
    );
    assert!(!app.reaper().paused);
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    app.handle(Event::Role(RoleState::Standby { pid: Some(7) }), CAPTURE);
    assert_eq!(press(&mut app, KeyCode::Char('R')), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("this console stands by: the active console runs the reaper")
    );
}

/// When the console role is held by another console, the header says who
/// runs the reaper (the role lock's holder); when it could not be taken at
/// all, that the reaper does not run here, and why.
#[test]
fn the_header_says_who_runs_the_reaper_when_this_console_does_not() {
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    app.handle(Event::Role(RoleState::Standby { pid: Some(4242) }), CAPTURE);
    assert_eq!(
        app.reaper_text(),
        "reaper: run by another console (pid 4242)"
    );
    let header = render_pane(&app, 120, 3, panes::header::render);
    assert!(
        header.contains("reaper: run by another console (pid 4242)"),
        "{header}"
    );
    app.handle(Event::Role(RoleState::Standby { pid: None }), CAPTURE);
    assert_eq!(app.reaper_text(), "reaper: run by another console");
    let reason = "cannot take the console role: /s/stackless-tui/roles/console.lock is a symbolic link: refusing to follow it";
    app.handle(
        Event::Role(RoleState::Unavailable {
            reason: reason.into(),
        }),
        CAPTURE,
    );
    assert_eq!(
        app.reaper_text(),
        "reaper: not running (console role not taken)"
    );
    let banner =
        format!("! the reaper does not run in this console: {reason}; tried again every 0.5s");
    assert!(
        panes::header::banners(&app)
            .iter()
            .any(|(t, _)| *t == banner),
        "{:?}",
        panes::header::banners(&app)
    );
    app.handle(Event::Role(RoleState::Active), CAPTURE);
    assert_eq!(app.reaper_text(), "reaper: every 1m");
}

/// `--reaper auto` beside a controller that runs stackless's lease reaper:
/// the header says the controller reaps and this console stands by, a
/// banner says it takes over, and `P` says "do not take over when it
/// stops" (`P` again undoes it).
#[test]
fn beside_a_controller_that_reaps_the_console_says_it_stands_by() {
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    app.handle(Event::Role(RoleState::ControllerReaps { pid: 77 }), CAPTURE);
    assert_eq!(
        app.reaper_text(),
        "reaper: the controller reaps (pid 77); standing by"
    );
    let banners: Vec<String> = panes::header::banners(&app)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    assert_eq!(
        banners,
        [
            "! standby: the stackless controller (pid 77) runs its lease reaper; this console's reaper takes over if it stops (--reaper always reaps here too)"
        ]
    );
    // `P` in standby: do not take over when the controller stops.
    assert_eq!(
        press(&mut app, KeyCode::Char('P')),
        Some(Effect::PauseReaper(true))
    );
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some(
            "the controller (pid 77) reaps; when it stops this console will not take over (P: it will)"
        )
    );
    // Activity says it (no pass runs in standby to say it).
    let last = &app.activity().last().expect("a line").entry;
    assert_eq!(
        (last.kind, last.detail.as_str()),
        (
            stackless_tui::event::ActivityKind::Role,
            "the controller (pid 77) reaps; when it stops this console will not take over (P: it will)"
        )
    );
    // The header says it for as long as it holds.
    assert_eq!(
        app.reaper_text(),
        "reaper: the controller reaps (pid 77); paused: will not take over when the controller stops (P: will)"
    );
    let banners: Vec<String> = panes::header::banners(&app)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    assert_eq!(
        banners,
        [
            "! standby: the stackless controller (pid 77) runs its lease reaper; this console won't take over if it stops (paused: P takes over)"
        ]
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('P')),
        Some(Effect::PauseReaper(false))
    );
    assert_eq!(
        app.reaper_text(),
        "reaper: the controller reaps (pid 77); standing by"
    );
    // It took over (the controller stopped): the start-up line again.
    app.handle(Event::Role(RoleState::Active), CAPTURE);
    assert_eq!(app.reaper_text(), "reaper: every 1m");
}

/// `P` gives the role up: the header says the pause and who reaps now, as
/// the role thread last saw it.
#[test]
fn a_paused_console_says_who_reaps_now() {
    use stackless_tui::model::controller::Reaping;
    let mut app = console_app(ReaperMode::Every {
        tick: std::time::Duration::from_secs(60),
        dry_run: false,
        always: false,
    });
    app.handle(Event::Role(RoleState::Active), CAPTURE);
    assert_eq!(
        press(&mut app, KeyCode::Char('P')),
        Some(Effect::PauseReaper(true))
    );
    assert_eq!(app.reaper_text(), "reaper: paused (P resumes)");
    for (now, said) in [
        (
            Reaping::Nobody,
            "reaper: paused (P resumes); nobody reaps now",
        ),
        (
            Reaping::Console(Some(4242)),
            "reaper: paused (P resumes); console pid 4242 reaps now",
        ),
        (
            Reaping::Controller(77),
            "reaper: paused (P resumes); the controller reaps (pid 77)",
        ),
    ] {
        app.handle(Event::Role(RoleState::Released { now }), CAPTURE);
        assert_eq!(app.reaper_text(), said);
    }
    // Resumed: the role thread takes the role back or says who has it.
    assert_eq!(
        press(&mut app, KeyCode::Char('P')),
        Some(Effect::PauseReaper(false))
    );
    assert_eq!(app.reaper_text(), "reaper: every 1m");
    app.handle(Event::Role(RoleState::Standby { pid: Some(4242) }), CAPTURE);
    assert_eq!(
        app.reaper_text(),
        "reaper: run by another console (pid 4242)"
    );
}

/// With this console's reaper off, the header says who reaps instead, as
/// the role thread sees it without taking the role: the controller's lease
/// reaper, a console (never "nobody" while a console reaps), or nobody
/// (said, since nothing else says that nobody reaps).
#[test]
fn with_the_reaper_off_the_header_says_who_reaps_instead() {
    use stackless_tui::model::controller::Reaping;
    let mut app = console_app(ReaperMode::Off("--no-reaper".into()));
    assert_eq!(app.reaper_text(), "reaper: off (--no-reaper)");
    for (now, said) in [
        (
            Reaping::Controller(77),
            "reaper: off (--no-reaper); the controller reaps (pid 77)",
        ),
        (
            Reaping::Console(Some(22301)),
            "reaper: off (--no-reaper); console pid 22301 reaps now",
        ),
        (
            Reaping::Nobody,
            "reaper: off (--no-reaper); nobody reaps now",
        ),
        (
            Reaping::Unknown,
            "reaper: off (--no-reaper); who reaps now cannot be told here",
        ),
    ] {
        app.handle(Event::Role(RoleState::Watching { now }), CAPTURE);
        assert_eq!(app.reaper_text(), said);
    }
}
