//! The one `App` over a fleet (`App::over_fleet`): the fleet's rows are
//! its source of rows, it takes the console's events (keys with the
//! instant their burst was read, the tick, a resize, a signal) and hands
//! each host's command on as `Effect::Fleet`; `ui::draw` draws it.

use crossterm::event::{Event as Term, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use stackless_tui::event::Event;
use stackless_tui::ui::{App, Effect};

use super::ui_fleet::{
    Failure, NOW, fleet, fleet_in, press_key, question_lines, screen, select, sent,
};

/// The App over the three-host fleet of `ui_fleet`, fleet-2's `alpha`
/// selected.
fn app() -> App {
    let mut fleet = fleet();
    select(&mut fleet, "fleet-2", "alpha");
    fleet.0
}

fn app_screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| stackless_tui::ui::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut line = String::new();
        for x in 0..width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn key_at(c: char, read: std::time::Instant) -> Event {
    Event::InputAt(
        Term::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
        read,
    )
}

/// The commands of one `Effect::Fleet`: (host, command without its id).
fn fleet_sent(effect: Option<Effect>) -> Vec<(usize, serde_json::Value)> {
    match effect {
        Some(Effect::Fleet(effects)) => sent(&effects),
        None | Some(Effect::Quit) => Vec::new(),
        other => panic!("not a fleet effect: {other:?}"),
    }
}

/// `ui::draw` on the App over a fleet draws the fleet's panes, at the
/// App's time, exactly as the fleet view draws them (120x40, and 80x24
/// with the Hosts pane as a header line).
#[test]
fn the_app_over_a_fleet_draws_its_hosts_rows() {
    let app = app();
    let mut fleet = fleet();
    select(&mut fleet, "fleet-2", "alpha");
    assert_eq!(app_screen(&app, 120, 40), screen(&fleet, 120, 40));
    let small = app_screen(&app, 80, 24);
    assert_eq!(small, screen(&fleet, 80, 24));
    assert!(
        small
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("fleet-1 connected · fleet-2 connected · fleet-3 stale 40s"),
        "{small}"
    );
}

/// `dy` read in one burst through the App's events: `d` asks, the `y`
/// read before the question was drawn answers nothing (no effect); a `y`
/// read once the frame with it began sends `down` to fleet-2 alone.
#[test]
fn dy_in_one_burst_through_the_app_sends_nothing_until_the_question_is_drawn() {
    let mut app = app();
    let burst = std::time::Instant::now();
    assert_eq!(app.handle(key_at('d', burst), NOW), None);
    assert_eq!(app.handle(key_at('y', burst), NOW), None);
    assert_eq!(
        question_lines(&app),
        [
            "Tear down alpha on fleet-2? This runs there: stackless down alpha --json",
            "[y/N]"
        ]
    );
    let drawn = burst + std::time::Duration::from_millis(16);
    app.drawn(drawn);
    let early = burst + std::time::Duration::from_millis(8);
    assert_eq!(app.handle(key_at('y', early), NOW), None);
    assert_eq!(
        fleet_sent(app.handle(key_at('y', drawn), NOW)),
        [(
            1,
            json!({"cmd":"down","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
        )]
    );
    assert_eq!(app.layers().host_view(), None);
}

/// `L` and `v` through the App: each asks, naming the row's host and the
/// argv run there, and its `y` sends `renew` / `verify` to that host.
#[test]
fn l_and_v_through_the_app_go_to_the_rows_host() {
    let mut app = app();
    let read = std::time::Instant::now();
    assert_eq!(app.handle(key_at('L', read), NOW), None);
    app.drawn(read);
    assert_eq!(
        fleet_sent(app.handle(key_at('y', read), NOW)),
        [(
            1,
            json!({"cmd":"renew","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"},"lease_secs":null})
        )]
    );
    let read = read + std::time::Duration::from_millis(1);
    assert_eq!(app.handle(key_at('v', read), NOW), None);
    app.drawn(read);
    assert_eq!(
        fleet_sent(app.handle(key_at('y', read), NOW)),
        [(
            1,
            json!({"cmd":"verify","name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-x"}})
        )]
    );
}

/// Over a fleet a frame is owed only when something drawn changed: a
/// resize owes one, and nothing after it was drawn.
#[test]
fn a_resize_over_a_fleet_owes_one_frame() {
    let mut app = app();
    let _ = app.needs_draw();
    assert!(!app.needs_draw());
    assert_eq!(app.handle(Event::Input(Term::Resize(100, 30)), NOW), None);
    assert!(app.needs_draw());
    assert!(!app.needs_draw());
}

/// `q` quits the App over a fleet; a signal quits it with `Effect::Quit`.
#[test]
fn q_or_a_signal_quits_the_app_over_a_fleet() {
    let mut app = app();
    assert_eq!(
        app.handle(key_at('q', std::time::Instant::now()), NOW),
        None
    );
    assert!(app.quitting());
    let mut app = self::app();
    assert_eq!(
        app.handle(Event::Terminate("SIGTERM"), NOW),
        Some(Effect::Quit)
    );
    assert!(app.quitting());
}

/// A host's wake-up is the wiring's: the App takes it without an effect
/// and owes no frame for it.
#[test]
fn a_hosts_wake_up_is_left_to_the_wiring() {
    let mut app = app();
    let _ = app.needs_draw();
    let wake = stackless_tui::model::fleet::wake::HostWake::Queued {
        host: 1,
        generation: 1,
    };
    assert_eq!(app.handle(Event::Host(wake), NOW), None);
    assert!(!app.needs_draw());
}

/// `key` (a sample for the key table's wildcards, as `ui_fleet`'s
/// `press_key` presses it) as the terminal's event.
fn event_of(key: stackless_tui::ui::keys::Key) -> Event {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    use stackless_tui::ui::keys::{Key, Mods};
    let mouse = |kind| {
        Event::Input(Term::Mouse(MouseEvent {
            kind,
            column: 3,
            row: 12,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let key_event = |code, modifiers| Event::Input(Term::Key(KeyEvent::new(code, modifiers)));
    match key {
        Key::Code(code, Mods::Ctrl) => key_event(code, KeyModifiers::CONTROL),
        Key::Code(code, _) => key_event(code, KeyModifiers::NONE),
        Key::Text => key_event(KeyCode::Char('x'), KeyModifiers::NONE),
        Key::Other => key_event(KeyCode::Char('n'), KeyModifiers::NONE),
        Key::Click => mouse(MouseEventKind::Down(MouseButton::Left)),
        Key::WheelUp => mouse(MouseEventKind::ScrollUp),
        Key::WheelDown => mouse(MouseEventKind::ScrollDown),
    }
}

/// Every entry of the one key table, each key in each context a fleet
/// has, pressed through the App over a fleet (`App::handle`) and into the
/// fleet's rows alone: the same commands to the same hosts, the same
/// layer, the same message, the same quit. (What each does over a fleet,
/// or the refusal it says, is `ui_fleet`'s
/// `every_key_table_entry_acts_on_the_rows_host_or_says_why_not`.)
#[test]
fn every_key_table_entry_through_the_app_does_what_it_does_over_a_fleet() {
    use stackless_tui::ui::keys::ENTRIES;
    let mut pressed = 0;
    for entry in ENTRIES {
        for bind in entry.binds {
            for context in bind.contexts {
                for key in bind.keys {
                    let (Some(mut alone), Some(fleet)) = (fleet_in(*context), fleet_in(*context))
                    else {
                        continue;
                    };
                    let what = format!("{:?} {:?} in {context:?}", entry.keys, bind.action);
                    let mut app = fleet.0;
                    let expected = sent(&press_key(&mut alone, *key));
                    let effect = app.handle(event_of(*key), NOW);
                    pressed += 1;
                    assert_eq!(fleet_sent(effect), expected, "{what}");
                    assert_eq!(app.layers().host_view(), alone.layer(), "{what}");
                    assert_eq!(app.flash(), alone.flash(), "{what}");
                    assert_eq!(app.quitting(), alone.0.quitting(), "{what}");
                }
            }
        }
    }
    assert_eq!(pressed, 143);
}

/// The App over a fleet with its help open (`?`), its search typed (`/`)
/// when `search`.
fn with_help(search: bool) -> App {
    let mut app = app();
    assert_eq!(app.handle(key('?'), NOW), None);
    if search {
        assert_eq!(app.handle(key('/'), NOW), None);
    }
    assert_eq!(
        app.layers()
            .help()
            .map(stackless_tui::ui::app::HelpView::typing),
        Some(search)
    );
    app
}

fn key(c: char) -> Event {
    Event::Input(Term::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

/// Every entry of the one key table bound in the help or its search,
/// pressed through the App over a fleet with the help open: the console's
/// one help takes it as on one host. Nothing is sent to any host, the
/// fleet's rows open no layer of their own, Esc and `?` close the help,
/// `q` quits, the search's keys edit its query.
#[test]
fn every_help_key_through_the_app_over_a_fleet_is_the_consoles_help() {
    use stackless_tui::ui::keys::{Action, Context, ENTRIES};
    let mut pressed = 0;
    for entry in ENTRIES {
        for bind in entry.binds {
            for context in bind.contexts {
                if !matches!(context, Context::Help | Context::HelpSearch) {
                    continue;
                }
                for key in bind.keys {
                    let what = format!("{:?} {:?} in {context:?}", entry.keys, bind.action);
                    let mut app = with_help(*context == Context::HelpSearch);
                    let effect = app.handle(event_of(*key), NOW);
                    pressed += 1;
                    assert_eq!(app.layers().host_view(), None, "{what}");
                    let help = app
                        .layers()
                        .help()
                        .map(|h| (h.typing(), h.query().to_owned()));
                    if bind.action == Action::Quit {
                        assert_eq!(effect, Some(Effect::Quit), "{what}");
                        assert!(app.quitting(), "{what}");
                        continue;
                    }
                    assert_eq!(effect, None, "{what}");
                    assert!(!app.quitting(), "{what}");
                    let expected = match bind.action {
                        Action::CloseHelp => None,
                        Action::HelpSearch => Some((true, String::new())),
                        Action::HelpText => Some((true, "x".to_owned())),
                        Action::HelpBackspace => Some((true, String::new())),
                        Action::HelpKeep | Action::HelpClear => Some((false, String::new())),
                        _ => Some((false, String::new())),
                    };
                    assert_eq!(help, expected, "{what}");
                }
            }
        }
    }
    // 14 in the help, 4 in its search.
    assert_eq!(pressed, 18);
}

/// `?` over a fleet opens the console's one help over the fleet's panes
/// (120x40): each entry followed by what it does over a fleet; its search
/// (`/ctrl-f`, Enter keeps it) keeps the one entry with its fleet words;
/// Esc closes the help (a frame owed); `:help` opens the same help.
#[test]
fn the_help_over_a_fleet_is_the_consoles_help_with_each_keys_fleet_words() {
    let mut app = with_help(false);
    let screen = app_screen(&app, 120, 40);
    assert!(screen.contains("Help (Esc or ? closes)"), "{screen}");
    assert!(
        screen.contains("over a fleet: the same filter; words match the HOST too"),
        "{screen}"
    );
    for c in "/ctrl-f".chars() {
        app.handle(key(c), NOW);
    }
    app.handle(
        Event::Input(Term::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))),
        NOW,
    );
    let screen = app_screen(&app, 120, 40);
    let shown: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains("║ Ctrl-F") || l.contains("over a fleet:"))
        .map(|l| l.trim_matches(|c| c == '║' || c == ' '))
        .collect();
    assert_eq!(
        shown,
        [
            "Ctrl-F               jump to an instance by name (fuzzy; never runs a command)",
            "over a fleet: the same, on the selected row's host"
        ],
        "{screen}"
    );
    // Enter kept the search; Esc closes the help, as on one host.
    let esc = || Event::Input(Term::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    assert_eq!(
        app.layers()
            .help()
            .map(|h| (h.typing(), h.query().to_owned())),
        Some((false, "ctrl-f".to_owned()))
    );
    assert_eq!(app.handle(esc(), NOW), None);
    assert!(app.layers().help().is_none());
    assert!(app.needs_draw());
    assert!(!app_screen(&app, 120, 40).contains("Help (Esc"));
    for c in ":help".chars() {
        app.handle(key(c), NOW);
    }
    app.handle(
        Event::Input(Term::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))),
        NOW,
    );
    assert!(app.layers().help().is_some());
    assert_eq!(app.layers().host_view(), None);
}

/// The console's one filter over a fleet: its field terms read each
/// host's rows (`op:` its operations, `backoff:` its backoffs, `lock:` its
/// probed locks, `host:` its name), and text it cannot read keeps no row
/// and says why, in the console's words.
#[test]
fn the_consoles_filter_terms_read_every_hosts_rows() {
    let filter = |text: &str| {
        let mut app = fleet();
        let mut typed = vec!['/'];
        typed.extend(text.chars());
        for c in typed {
            app.key(
                KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
                NOW * 1000,
            );
        }
        app.key(
            KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            NOW * 1000,
        );
        let rows: Vec<String> = app
            .rows()
            .iter()
            .map(|r| {
                let host = &app.fleet().hosts[r.host];
                format!("{}/{}", host.name, host.instances()[r.index].key.name)
            })
            .collect();
        let flash = app.flash().map(|f| (f.text.clone(), f.level.is_failure()));
        (rows, flash)
    };
    assert_eq!(
        filter("op:running"),
        (vec!["fleet-2/charlie".to_owned()], None)
    );
    assert_eq!(
        filter("backoff:waiting"),
        (vec!["fleet-2/alpha".to_owned()], None)
    );
    assert_eq!(filter("!lock:none").0, Vec::<String>::new());
    assert_eq!(filter("host:fleet-1 !status:expired").0, ["fleet-1/alpha"]);
    assert_eq!(
        filter("colour:red"),
        (
            Vec::new(),
            Some((
                "filter \"colour:red\": unknown field \"colour\" (fields: status, substrate, \
                 name, lock, backoff, op, host)"
                    .to_owned(),
                true
            ))
        )
    );
}

/// The console's one set of sort keys over a fleet, `host` first: `s`
/// cycles through them all (reap attempts most first, `▼`); `:sort reap`
/// puts fleet-2's `alpha` (2 failed reaps) first; `:sort lease desc`
/// runs high to low.
#[test]
fn the_consoles_sort_keys_order_every_hosts_rows() {
    let mut app = fleet();
    let key = |app: &mut super::ui_fleet::Over, c: char| {
        app.key(
            KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
            NOW * 1000,
        );
    };
    let sort_shown = |app: &super::ui_fleet::Over| {
        let header = screen(app, 120, 40).lines().next().unwrap().to_owned();
        header[header.find("sort: ").unwrap()..].to_owned()
    };
    let mut cycle = vec![sort_shown(&app)];
    for _ in 0..7 {
        key(&mut app, 's');
        cycle.push(sort_shown(&app));
    }
    assert_eq!(
        cycle,
        [
            "sort: host ▲",
            "sort: lease expiry ▲",
            "sort: name ▲",
            "sort: substrate ▲",
            "sort: reap attempts ▼",
            "sort: status ▲",
            "sort: lock ▲",
            "sort: host ▲"
        ]
    );
    let line = |app: &mut super::ui_fleet::Over, text: &str| {
        key(app, ':');
        for c in text.chars() {
            key(app, c);
        }
        app.key(
            KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            NOW * 1000,
        );
    };
    line(&mut app, "sort reap");
    let first = app.rows()[0];
    let host = &app.fleet().hosts[first.host];
    assert_eq!(
        (
            host.name.as_str(),
            host.instances()[first.index].key.name.as_str()
        ),
        ("fleet-2", "alpha")
    );
    assert_eq!(sort_shown(&app), "sort: reap attempts ▼");
    line(&mut app, "sort lease desc");
    assert_eq!(sort_shown(&app), "sort: lease expiry ▼");
}

/// The `:` line over a fleet is read by the console's one parser: its
/// refusals in the console's words, nothing sent.
#[test]
fn the_command_line_over_a_fleet_is_read_by_the_consoles_parser() {
    let run = |text: &str| {
        let mut app = fleet();
        let mut sent = Vec::new();
        for c in std::iter::once(':').chain(text.chars()) {
            sent.extend(app.key(
                KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
                NOW * 1000,
            ));
        }
        sent.extend(app.key(
            KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            NOW * 1000,
        ));
        (
            sent.len(),
            app.flash().map(|f| (f.text.clone(), f.level.is_failure())),
        )
    };
    assert_eq!(
        run("down fleet-2/Bad_Name"),
        (
            0,
            Some((
                "\"fleet-2/Bad_Name\" is not a DNS-safe name".to_owned(),
                true
            ))
        )
    );
    assert_eq!(
        run("sort colour"),
        (
            0,
            Some((
                "unknown sort key \"colour\" (host, lease, name, substrate, reap, status, lock)"
                    .to_owned(),
                true
            ))
        )
    );
    assert_eq!(
        run("reap"),
        (0, Some((":reap needs instance names".to_owned(), true)))
    );
}

/// The command id of the one command sent.
fn sent_id(effect: Option<Effect>) -> serde_json::Value {
    let Some(Effect::Fleet(sent)) = effect else {
        panic!("nothing sent: {effect:?}")
    };
    let stackless_tui::ui::app::over_fleet::FleetEffect::Send { line, .. } = &sent[0];
    serde_json::from_str::<serde_json::Value>(line).unwrap()["id"].clone()
}

#[test]
fn detail_and_logs_over_a_fleet_are_the_apps_layers_under_its_help() {
    use stackless_tui::ui::app::LayerKind;
    let mut app = app();
    let key = |code| Event::Input(Term::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    let detail = sent_id(app.handle(key(KeyCode::Enter), NOW));
    assert_eq!(app.layers().top_kind(), Some(LayerKind::HostDetail));
    // The help over the detail: the detail's answer still fills it.
    app.handle(key(KeyCode::Char('?')), NOW);
    assert_eq!(app.layers().top_kind(), Some(LayerKind::Help));
    app.fleet_mut().unwrap().line(
        1,
        &json!({"type":"reply","id":detail,"ok":true,"detail":{"name":"alpha","birth":null,
            "lines":["Instance alpha"]}}),
        NOW * 1000,
    );
    app.settle_fleet();
    assert_eq!(app.layers().host_view().unwrap().lines, ["Instance alpha"]);
    app.handle(key(KeyCode::Esc), NOW);
    // `l` in the detail: the logs over it, following its stream.
    let logs = sent_id(app.handle(key(KeyCode::Char('l')), NOW));
    assert_eq!(app.layers().top_kind(), Some(LayerKind::HostLogs));
    app.fleet_mut().unwrap().line(
        1,
        &json!({"type":"log","logs":logs,"service":"web","text":"GET /","at":null,"cont":false}),
        NOW * 1000,
    );
    app.settle_fleet();
    assert_eq!(app.layers().host_view().unwrap().lines, ["web │ GET /"]);
    // Esc: the stream stopped on its host, back to the detail under it,
    // then to the panes.
    let Some(Effect::Fleet(stop)) = app.handle(key(KeyCode::Esc), NOW) else {
        panic!("nothing sent")
    };
    assert_eq!(sent(&stop), [(1, json!({"cmd":"logs_stop","logs":logs}))]);
    assert_eq!(app.layers().top_kind(), Some(LayerKind::HostDetail));
    app.handle(key(KeyCode::Esc), NOW);
    assert_eq!(app.layers().top_kind(), None);
}

#[test]
fn a_mark_over_a_fleet_is_the_apps_and_names_its_host_and_birth() {
    use stackless_tui::model::fleet::rows::InstanceKey;
    let mut app = app();
    let key = |code| Event::Input(Term::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    app.handle(key(KeyCode::Char(' ')), NOW);
    // fleet-2's alpha (birth a2), never fleet-1's alpha (a1).
    let alpha = InstanceKey {
        name: "alpha".into(),
        birth: Some("a2".into()),
    };
    assert_eq!(
        app.fleet_marks().iter().cloned().collect::<Vec<_>>(),
        [(1, alpha)]
    );
    let text = app_screen(&app, 120, 40);
    assert!(text.contains("1 marked"), "{text}");
    // Esc clears the App's marks.
    app.handle(key(KeyCode::Esc), NOW);
    assert!(app.fleet_marks().is_empty());
}
