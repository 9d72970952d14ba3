//! The header as the store and the clock change under a running console: it
//! says what the reaper does with the store as it is now.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, press, render_app};
use crossterm::event::KeyCode;
use stackless_tui::event::{ActivityKind, Event};
use stackless_tui::model::reaper_status::PauseReasons;
use stackless_tui::ui::{App, AppConfig, panes};

fn app() -> App {
    App::new(
        AppConfig {
            store_label: "/srv/state.db".into(),
            reaper: stackless_tui::ui::ReaperMode::Every {
                tick: std::time::Duration::from_secs(1),
                dry_run: false,
                always: false,
            },
            helper: stackless_tui::ui::HelperMode::None,
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        CAPTURE,
    )
}

fn header_lines(app: &App) -> Vec<String> {
    render_app(app, 120, 40)
        .lines()
        .take(4)
        .map(|l| l.trim_matches('"').trim_end().to_owned())
        .collect()
}

#[test]
fn a_store_swapped_for_schema_2_turns_the_reaper_line_off() {
    let mut app = app();
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    assert_eq!(app.reaper_text(), "reaper: every 1s");
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("older-v2.db"))),
        CAPTURE,
    );
    assert_eq!(app.reaper_text(), "reaper: off (schema v2)");
    let header = header_lines(&app);
    assert_eq!(
        header[1],
        "reaper: off (schema v2)  │  helper: none  │  sort: lease expiry"
    );
}

#[test]
fn a_wall_clock_that_looks_wrong_pauses_the_reaper_line_and_refuses_r() {
    let mut app = app();
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    let doubt = "clock looks wrong: the wall clock is 1y 000d ahead of the kernel's clock (boot time + uptime); reaper and GC paused, r is off";
    app.handle(
        Event::Pauses(PauseReasons {
            clock: Some(doubt.into()),
            ..PauseReasons::default()
        }),
        CAPTURE,
    );
    assert_eq!(app.reaper_text(), "reaper: paused (clock looks wrong)");
    let banners: Vec<String> = panes::header::banners(&app)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    assert_eq!(banners, [format!("! {doubt}")]);
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    let refused = app.drain_outbox();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].kind, ActivityKind::Refused);
    assert_eq!(
        refused[0].detail,
        "the wall clock looks wrong (see the header): r is off until it looks right"
    );
    app.handle(Event::Pauses(PauseReasons::default()), CAPTURE);
    assert_eq!(app.reaper_text(), "reaper: every 1s");
}

#[test]
fn a_store_that_does_not_record_failures_pauses_the_reaper_line_and_refuses_r_and_d() {
    let mut app = app();
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    let error = "state store /s/state.db: attempt to write a readonly database";
    app.handle(
        Event::Pauses(PauseReasons {
            unrecorded: Some(error.into()),
            ..PauseReasons::default()
        }),
        CAPTURE,
    );
    assert_eq!(
        app.reaper_text(),
        "reaper: paused (failures cannot be recorded)"
    );
    let banners: Vec<String> = panes::header::banners(&app)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    assert_eq!(
        banners,
        [
            "! reaper paused: failures cannot be recorded in the store (state store /s/state.db: attempt to write a readonly database); nothing is torn down until the store accepts writes"
        ]
    );
    for key in ['r', 'd'] {
        assert_eq!(press(&mut app, KeyCode::Char(key)), None);
        let refused = app.drain_outbox();
        assert_eq!(refused.len(), 1, "{key}");
        assert_eq!(refused[0].kind, ActivityKind::Refused);
        assert_eq!(
            refused[0].detail,
            format!(
                "the store does not record failures ({error}): r, d, L and v are off until it accepts writes"
            )
        );
    }
    app.handle(Event::Pauses(PauseReasons::default()), CAPTURE);
    assert_eq!(app.reaper_text(), "reaper: every 1s");
}

#[test]
fn pasted_text_types_into_the_filter_prompt_and_is_never_run_as_keys() {
    let paste = |text: &str| Event::Input(crossterm::event::Event::Paste(text.into()));
    let mut app = app();
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    // Outside a prompt: ignored (no dialog, nothing asked).
    assert_eq!(app.handle(paste("dy"), CAPTURE), None);
    assert!(app.confirming().is_none());
    assert!(app.drain_outbox().is_empty());
    assert_eq!(press(&mut app, KeyCode::Char('/')), None);
    assert_eq!(app.handle(paste("al\u{1b}[2Jp\n"), CAPTURE), None);
    assert_eq!(app.filter(), "al[2Jp");
}

#[test]
fn an_audit_trail_that_cannot_be_written_pauses_the_reaper_in_the_header() {
    let mut app = app();
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    let error = "No space left on device (os error 28)";
    app.handle(
        Event::Pauses(PauseReasons {
            audit: Some(error.into()),
            ..PauseReasons::default()
        }),
        CAPTURE,
    );
    assert_eq!(
        app.reaper_text(),
        "reaper: paused (audit trail cannot be written)"
    );
    let banner = format!(
        "! reaper paused: the audit trail cannot be written ({error}); nothing is torn down until it can"
    );
    assert!(
        panes::header::banners(&app)
            .iter()
            .any(|(text, _)| *text == banner),
        "{:?}",
        panes::header::banners(&app)
    );
    app.handle(Event::Pauses(PauseReasons::default()), CAPTURE);
    assert_eq!(app.reaper_text(), "reaper: every 1s");
}
