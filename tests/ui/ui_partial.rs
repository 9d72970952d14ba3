//! The first rows of a big store (`model::Partial`), shown before the
//! whole read ends: the header and the title say how many of how many,
//! no count is shown as the store's, every action is refused in those
//! words, and the whole read replaces them.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app, select};
use crossterm::event::KeyCode;

use stackless_tui::event::{ActivityKind, Event};
use stackless_tui::model::{Instance, Partial, Rows, Snapshot};
use stackless_tui::ui::{App, AppConfig, Effect, SortKey, panes};

fn instance(name: &str, expires_at: i64) -> Instance {
    crate::common::builders::instance(name)
        .substrate("local")
        .created(Some(CAPTURE - 1000))
        .lease(3600, expires_at)
        .dirty(None)
        .build()
}

/// alpha .. echo, all expired; `first`: only alpha and bravo, read first
/// of five.
fn snapshot(first: bool) -> Snapshot {
    let names = ["alpha", "bravo", "charlie", "delta", "echo"];
    let shown = if first { &names[..2] } else { &names[..] };
    let mut snapshot = Snapshot::from(Rows {
        instances: shown
            .iter()
            .map(|name| instance(name, CAPTURE - 60))
            .collect::<Vec<_>>()
            .into(),
        ..Rows::default()
    });
    if first {
        snapshot.partial = Some(Partial { read: 2, total: 5 });
    }
    snapshot
}

fn app() -> App {
    let config = AppConfig {
        store_label: "/srv/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(5),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, CAPTURE);
    app.handle(Event::Snapshot(Arc::new(snapshot(true))), CAPTURE);
    app.set_sort(SortKey::Name, None);
    app
}

fn refusals(app: &mut App) -> Vec<(String, String)> {
    app.drain_outbox()
        .into_iter()
        .filter(|a| a.kind == ActivityKind::Refused)
        .map(|a| (a.instance, a.detail))
        .collect()
}

const WORDS: &str = "refused: reading the store: 2 of 5; ask again when it is read";

#[test]
fn the_first_rows_say_so_refuse_every_action_and_the_whole_read_replaces_them() {
    let mut app = app();
    let banners: Vec<String> = panes::header::banners(&app)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    assert_eq!(
        banners,
        [
            "! reading the store: 2 of 5: the soonest leases first; counts are not totals and actions wait until it is read"
        ]
    );
    assert_eq!(
        panes::instances::title_suffix(&app),
        "1/2 · reading the store: 2 of 5"
    );
    let screen = render_app(&app, 160, 30);
    assert!(!screen.contains("tombstoned"), "{screen}");
    assert!(screen.contains("reading the store: 2 of 5 ═"), "{screen}");

    // One row: `r`, asked and answered, is refused in the header's words.
    select(&mut app, "bravo");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    app.drawn(std::time::Instant::now() + std::time::Duration::from_secs(1));
    assert_eq!(press(&mut app, KeyCode::Char('y')), None);
    assert_eq!(refusals(&mut app), [("bravo".to_owned(), WORDS.to_owned())]);

    // Both rows marked, `d` on the marks: every one refused, nothing run.
    for name in ["alpha", "bravo"] {
        select(&mut app, name);
        press(&mut app, KeyCode::Char(' '));
    }
    assert_eq!(app.marks().len(), 2);
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    app.drawn(std::time::Instant::now() + std::time::Duration::from_secs(1));
    let bulk = press(&mut app, KeyCode::Char('y'));
    assert!(
        !matches!(&bulk, Some(Effect::Bulk { jobs, .. }) if !jobs.is_empty()),
        "{bulk:?}"
    );
    assert_eq!(
        refusals(&mut app),
        [(
            String::new(),
            "teardown: 2 of 2 marked instances refused (alpha, bravo)".to_owned()
        )]
    );
    let logged: Vec<(String, String)> = app
        .activity()
        .entries()
        .iter()
        .map(|e| &e.entry)
        .filter(|a| a.kind == ActivityKind::Refused)
        .map(|a| (a.instance.clone(), a.detail.clone()))
        .collect();
    let each = |name: &str| (name.to_owned(), WORDS.to_owned());
    // `r` on bravo, then the marks' alpha and bravo.
    assert_eq!(logged, [each("bravo"), each("alpha"), each("bravo")]);

    // The whole read arrives: it replaces the first rows (the selection
    // stays on bravo), the counts are the store's, and `r` reaps.
    app.handle(Event::Snapshot(Arc::new(snapshot(false))), CAPTURE);
    // Nothing is compared with the first rows: the rest of the store is
    // not news (no `appeared` line for charlie, delta, echo).
    assert!(app.settle().is_none());
    assert!(app.drain_outbox().is_empty());
    assert_eq!(
        app.activity()
            .entries()
            .iter()
            .filter(|e| e.entry.kind != ActivityKind::Refused)
            .count(),
        0
    );
    assert!(panes::header::banners(&app).is_empty());
    assert_eq!(app.visible().len(), 5);
    assert_eq!(
        panes::instances::title_suffix(&app),
        "2/5 · 5 active (5 expired) · 0 tombstoned"
    );
    select(&mut app, "echo");
    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    app.drawn(std::time::Instant::now() + std::time::Duration::from_secs(1));
    assert!(matches!(
        press(&mut app, KeyCode::Char('y')),
        Some(Effect::Reap { instance, .. }) if instance.name == "echo"
    ));
}
