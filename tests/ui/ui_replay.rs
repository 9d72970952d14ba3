//! The console on a recording (`stackless-tui replay`): the header's
//! cursor, every pane as it was then (countdowns at the cursor), a gap
//! said as `not recorded` with no row, and every action refused with the
//! replay's reason.

use std::sync::Arc;

use crossterm::event::KeyCode;
use stackless_tui::event::{Activity, ActivityKind, Actor, Event};
use stackless_tui::model::history::cursor::{Frame, Span};
use stackless_tui::model::{Generation, Instance, Rows, Snapshot};
use stackless_tui::ui::app::replay::{READ_ONLY, config};
use stackless_tui::ui::{App, Effect};

use crate::common::CAPTURE;
use crate::common::builders::instance;
use crate::common::ui::{press, render_app, select};

/// The cursor: 5h 48m before the wall clock ([`CAPTURE`]).
const AT: i64 = CAPTURE - (5 * 3_600 + 48 * 60);

/// The span recorded: an hour before the cursor to the wall clock.
fn span() -> Span {
    Span {
        first: AT - 3_600,
        last: CAPTURE,
        changes: vec![AT - 3_600, AT - 60, AT, AT + 120],
    }
}

/// Two instances as recorded at the cursor: `payments-staging`'s lease ran
/// out 2 minutes before it, `web-1`'s runs 10 more minutes.
fn recorded() -> Vec<Instance> {
    vec![
        instance("payments-staging")
            .lease(3_600, AT - 120)
            .created(Some(AT - 7_200))
            .build(),
        instance("web-1")
            .lease(1_800, AT + 600)
            .created(Some(AT - 1_200))
            .build(),
    ]
}

fn frame(instances: Option<Vec<Instance>>) -> Frame {
    let snapshot = instances.map(|instances| {
        Arc::new(Snapshot::from(Rows {
            generation: Generation::new(5),
            instances: instances.into(),
            ..Rows::default()
        }))
    });
    let recorded = snapshot.is_some();
    Frame {
        at: AT,
        snapshot,
        why: (!recorded).then(|| "a gap of 20m in the recording".to_owned()),
        reaper: recorded.then(|| "reaper: every 1m (console pid 4242)".to_owned()),
        banners: Vec::new(),
        activity: if recorded {
            vec![Activity::new(
                AT - 60,
                Actor::Reaper,
                "payments-staging",
                ActivityKind::Failed,
                "down exited 1: volume busy",
            )]
        } else {
            Vec::new()
        },
        span: span(),
    }
}

/// A replay App at the wall clock [`CAPTURE`] showing `frame`.
fn replay(frame: Frame) -> App {
    let mut app = App::new(
        config("/state/stackless-tui/history".into(), false),
        CAPTURE,
    );
    assert_eq!(app.handle(Event::Replay(Box::new(frame)), CAPTURE), None);
    app
}

#[test]
fn the_header_shows_the_cursor_and_the_panes_as_recorded_then() {
    let app = replay(frame(Some(recorded())));
    // Countdowns at the cursor, not at the wall clock.
    assert_eq!(app.now(), AT);
    assert_eq!(
        app.replay_text(CAPTURE).as_deref(),
        Some("replay 08:10:06, 5h 48m ago")
    );
    assert_snapshot!("replay_at_a_past_cursor_120x40", render_app(&app, 120, 40));
    assert_snapshot!("replay_at_a_past_cursor_80x24", render_app(&app, 80, 24));
}

#[test]
fn a_gap_is_not_recorded_and_shows_no_row() {
    let app = replay(frame(None));
    assert!(app.snapshot().instances.is_empty());
    assert_eq!(
        app.replay_text(CAPTURE).as_deref(),
        Some("replay 08:10:06, 5h 48m ago: not recorded")
    );
    assert_snapshot!("replay_in_a_gap_80x24", render_app(&app, 80, 24));
}

#[test]
fn every_action_is_refused_in_a_replay_and_d_then_y_runs_nothing() {
    let mut app = replay(frame(Some(recorded())));
    select(&mut app, "payments-staging");
    for key in ['d', 'r', 'L', 'v', 'c'] {
        assert_eq!(press(&mut app, KeyCode::Char(key)), None, "{key}");
        assert!(app.confirming().is_none(), "{key}");
    }
    // No question is open: `y` copies the name, and tears nothing down.
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::Copy {
            text: "payments-staging".into()
        })
    );
    // `d`, `r`, `L` and `v` on the instance (folded into one line), `c`
    // with no operation selected: each refused with the replay's reason.
    let refused: Vec<(String, String, u32)> = app
        .activity()
        .entries()
        .iter()
        .filter(|e| e.entry.kind == ActivityKind::Refused)
        .map(|e| (e.entry.instance.clone(), e.entry.detail.clone(), e.count))
        .collect();
    assert_eq!(
        refused,
        [
            ("payments-staging".to_owned(), READ_ONLY.to_owned(), 4),
            (String::new(), READ_ONLY.to_owned(), 1)
        ]
    );
}

#[test]
fn the_seek_keys_ask_the_reader_in_a_replay() {
    use stackless_tui::model::history::cursor::Seek;
    let mut app = replay(frame(Some(recorded())));
    let asked: Vec<Option<Effect>> = ['[', ']', '{', '}', '>']
        .into_iter()
        .map(|c| press(&mut app, KeyCode::Char(c)))
        .collect();
    assert_eq!(
        asked,
        [
            Some(Effect::Seek(Seek::PreviousChange)),
            Some(Effect::Seek(Seek::NextChange)),
            Some(Effect::Seek(Seek::MinuteBack)),
            Some(Effect::Seek(Seek::MinuteForward)),
            Some(Effect::Seek(Seek::Live)),
        ]
    );
    // `t` opens the `:` line with `at ` typed; a time of day is on the
    // cursor's date (08:10:06 UTC here).
    assert_eq!(press(&mut app, KeyCode::Char('t')), None);
    for c in "03:12".chars() {
        assert_eq!(press(&mut app, KeyCode::Char(c)), None);
    }
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        Some(Effect::Seek(Seek::To(
            AT - (8 * 3_600 + 10 * 60 + 6) + 3 * 3_600 + 12 * 60
        )))
    );
    assert_eq!(press(&mut app, KeyCode::Char('t')), None);
    for c in "soon".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some(
            "\"soon\" is not a time: give RFC 3339 (2026-12-06T03:12:00Z), unix seconds, or `10m ago`"
        )
    );
}

#[test]
fn t_asks_the_reader_in_a_replay_and_shows_the_timeline_it_sends() {
    use stackless_tui::model::history::timeline::{Entry, Shown};
    let mut app = replay(frame(Some(recorded())));
    select(&mut app, "payments-staging");
    assert_eq!(
        press(&mut app, KeyCode::Char('T')),
        Some(Effect::Timeline("payments-staging".into()))
    );
    let entries = [
        (AT - 7_200, "created on local, lease to 07:10:06"),
        (AT - 3_600, "lease renewed: expiry 07:10:06 -> 08:08:06"),
        (
            AT - 60,
            "reap attempt 1 failed: volume busy; next retry 08:14:06",
        ),
        (AT + 300, "lock taken: down by pid 4242"),
        (AT + 305, "reaper reaped: down exited 0"),
        (AT + 306, "tombstoned"),
    ];
    let shown = Shown {
        name: "payments-staging".into(),
        entries: entries
            .iter()
            .map(|(at, text)| Entry {
                at: *at,
                text: (*text).to_owned(),
            })
            .collect(),
        note: None,
    };
    assert_eq!(app.handle(Event::Timeline(Box::new(shown)), CAPTURE), None);
    assert_snapshot!("timeline_in_a_replay_80x24", render_app(&app, 80, 24));
}

#[test]
fn t_live_shows_what_the_store_and_the_audit_trail_hold_and_says_no_recording() {
    let mut app = App::new(
        stackless_tui::ui::AppConfig {
            write_keys: Ok(()),
            ..config("/state/state.db".into(), false)
        },
        CAPTURE,
    );
    let snapshot = Snapshot::from(Rows {
        generation: Generation::new(5),
        instances: vec![
            instance("payments-staging")
                .lease(3_600, CAPTURE - 120)
                .created(Some(CAPTURE - 7_200))
                .build(),
        ]
        .into(),
        ..Rows::default()
    });
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    app.handle(
        Event::Activity(Activity::new(
            CAPTURE - 60,
            Actor::Reaper,
            "payments-staging",
            ActivityKind::Failed,
            "down exited 1: volume busy",
        )),
        CAPTURE,
    );
    select(&mut app, "payments-staging");
    assert_eq!(press(&mut app, KeyCode::Char('T')), None);
    assert_snapshot!("timeline_live_80x24", render_app(&app, 80, 24));
}

/// A flash lasts its seconds of the wall clock, not of the cursor (which
/// stands still between seeks).
#[test]
fn a_flash_in_a_replay_goes_after_its_seconds_of_the_wall_clock() {
    let mut app = replay(frame(Some(recorded())));
    select(&mut app, "payments-staging");
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert!(app.flash().is_some());
    let later = CAPTURE + stackless_tui::ui::app::FLASH_SECS;
    assert_eq!(app.handle(Event::Tick, later), None);
    assert_eq!(app.flash(), None);
    assert_eq!(app.now(), AT, "the panes' time is still the cursor's");
}

/// A recorded banner is drawn as the live header drew it: its own `!`
/// once, never `! !`.
#[test]
fn a_recorded_banner_keeps_its_one_mark() {
    let mut recorded_frame = frame(Some(recorded()));
    recorded_frame.banners = vec![
        "! teardown command not found: `stackless` is not on PATH".to_owned(),
        "store busy".to_owned(),
    ];
    let app = replay(recorded_frame);
    let screen = render_app(&app, 120, 40);
    assert!(
        screen.contains("! teardown command not found") && !screen.contains("! ! teardown"),
        "{screen}"
    );
    assert!(screen.contains("! store busy"), "{screen}");
}
