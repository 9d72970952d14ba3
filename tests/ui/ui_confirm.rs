//! Confirmation dialogs answer only keys read once they were drawn
//! (`model::confirm`): `dy` in one write opens the dialog and leaves it
//! open.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, render_app, select};
use crossterm::event::{KeyCode, KeyEvent};
use stackless_tui::event::Event;
use stackless_tui::ui::{App, AppConfig, Effect};

fn app() -> App {
    let mut app = App::new(
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
    );
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("stackless-real-v4.db"))),
        CAPTURE,
    );
    app
}

fn at(read: Instant, code: KeyCode) -> Event {
    Event::InputAt(crossterm::event::Event::Key(KeyEvent::from(code)), read)
}

#[test]
fn a_y_read_with_the_d_never_answers_the_teardown_dialog() {
    let mut app = app();
    let name = app.selected_instance().expect("a row").name.clone();
    let burst = Instant::now();
    assert_eq!(app.handle(at(burst, KeyCode::Char('d')), CAPTURE), None);
    assert_eq!(app.handle(at(burst, KeyCode::Char('y')), CAPTURE), None);
    assert_eq!(app.confirming().map(|i| i.name.clone()), Some(name.clone()));
    // Drawn; the typed-ahead `y` still does not count, nor does Esc read
    // before the frame: the dialog stays.
    app.drawn(burst + Duration::from_millis(3));
    assert!(render_app(&app, 120, 40).contains(&format!("Tear down {name}?")));
    assert_eq!(app.handle(at(burst, KeyCode::Char('y')), CAPTURE), None);
    assert_eq!(app.handle(at(burst, KeyCode::Esc), CAPTURE), None);
    assert!(app.confirming().is_some());
    // A later frame does not move the instant it was first shown.
    app.drawn(burst + Duration::from_secs(1));
    let pressed = burst + Duration::from_millis(500);
    assert!(matches!(
        app.handle(at(pressed, KeyCode::Char('y')), CAPTURE),
        Some(Effect::TearDown { instance, .. }) if instance.name == name
    ));
    assert!(app.confirming().is_none());
    // The next dialog is shown anew: keys read before its own frame are
    // dropped again.
    assert_eq!(app.handle(at(pressed, KeyCode::Char('d')), CAPTURE), None);
    assert_eq!(app.handle(at(pressed, KeyCode::Char('y')), CAPTURE), None);
    assert!(app.confirming().is_some());
}

#[test]
fn a_y_read_with_the_bulk_d_never_answers_it() {
    let mut app = app();
    let names: Vec<String> = app
        .snapshot()
        .rows
        .instances
        .iter()
        .filter(|i| i.status == stackless_tui::model::Status::Active)
        .map(|i| i.name.clone())
        .take(2)
        .collect();
    for name in &names {
        select(&mut app, name);
        app.handle(at(Instant::now(), KeyCode::Char(' ')), CAPTURE);
    }
    let burst = Instant::now();
    assert_eq!(app.handle(at(burst, KeyCode::Char('d')), CAPTURE), None);
    assert_eq!(app.handle(at(burst, KeyCode::Char('y')), CAPTURE), None);
    assert!(app.confirming_bulk().is_some(), "still asked");
    app.drawn(burst + Duration::from_millis(2));
    assert!(matches!(
        app.handle(
            at(burst + Duration::from_millis(4), KeyCode::Char('y')),
            CAPTURE
        ),
        Some(Effect::Bulk { .. })
    ));
    assert!(app.confirming_bulk().is_none());
}

/// `r` asks first, like `d`: the question names the instance and, when the
/// reap skips a backoff, how long was left; `y` reaps, any other key
/// cancels.
#[test]
fn r_asks_first_naming_the_instance_and_the_backoff_it_skips() {
    let mut app = app();
    select(&mut app, "golf");
    let burst = Instant::now();
    assert_eq!(
        app.handle(at(burst, KeyCode::Char('r')), CAPTURE),
        None,
        "r reaped without asking"
    );
    assert_eq!(app.confirming_reap().map(|i| i.name.as_str()), Some("golf"));
    app.drawn(burst + Duration::from_millis(2));
    // golf's lease ran out 332 s before CAPTURE; its third failed reap
    // backs off until 173 s after it.
    assert_snapshot!("reap_question_120x40", render_app(&app, 120, 40));
    // Esc: no reap, the cancel said.
    let later = burst + Duration::from_millis(5);
    assert_eq!(app.handle(at(later, KeyCode::Esc), CAPTURE), None);
    assert!(app.confirming_reap().is_none());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("reap of golf cancelled")
    );
    // Asked again once the backoff is over: no backoff named; `y` reaps.
    let again = burst + Duration::from_millis(10);
    let past = CAPTURE + 200;
    assert_eq!(app.handle(at(again, KeyCode::Char('r')), past), None);
    app.drawn(again + Duration::from_millis(2));
    let screen = render_app(&app, 120, 40);
    assert!(
        screen.contains("Reap golf (lease expired 8m 52s ago)? This runs:"),
        "{screen}"
    );
    assert!(!screen.contains("backoff"), "{screen}");
    match app.handle(
        at(again + Duration::from_millis(4), KeyCode::Char('y')),
        past,
    ) {
        Some(Effect::Reap { instance, attempt }) => {
            assert_eq!(instance.name, "golf");
            assert_eq!(attempt.map(|a| a.attempts), Some(3));
        }
        other => panic!("expected Reap golf, got {other:?}"),
    }
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("reap requested for golf")
    );
}
