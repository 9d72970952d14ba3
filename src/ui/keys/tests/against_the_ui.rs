//! The footer, the help overlay and the handler all show or do
//! exactly what the table says.

use std::sync::Arc;

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use unicode_width::UnicodeWidthStr;

use super::super::Context::{
    Always, CommandLine, Confirm, Detail, Filter, FullText, Help, HelpSearch, LogSearch, Logs,
    Operation, Panes,
};
use super::super::*;
use super::example;
use crate::event::Event;
use crate::model::{Generation, Instance, Lease, OpStatus, Operation as Op, Snapshot, Status};
use crate::ui::panes;
use crate::ui::{App, AppConfig, Effect, Focus};

const NOW: i64 = 1_000;

fn instance(name: &str) -> Instance {
    Instance {
        name: name.into(),
        substrate: "local".into(),
        status: Status::Active,
        created_at: Some(1),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 100,
            expires_at: 900,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: None,
        birth: None,
    }
}

fn press(app: &mut App, code: KeyCode) -> Option<Effect> {
    app.handle(
        Event::Input(crossterm::event::Event::Key(
            crossterm::event::KeyEvent::new(code, KeyModifiers::NONE),
        )),
        NOW,
    )
}

/// A queued `down` on `name`.
fn queued(id: &str, name: &str) -> Op {
    Op {
        id: id.into(),
        instance: name.into(),
        instance_id: None,
        verb: "down".into(),
        status: OpStatus::Queued,
        cancel_requested: false,
        created_at: NOW - 5,
        updated_at: NOW - 5,
        error_json: None,
        progress: None,
        ran: None,
    }
}

/// An app with three instances on a stackless 0.4.0 store (schema 14),
/// alpha and charlie with a queued operation, bravo (the row selected
/// below) with one only when `bravo_pending` (a pending operation
/// refuses `r` and `d`: 0.4.0 controller), put into `context` with keys.
fn app_in(context: Context, bravo_pending: bool) -> App {
    let config = AppConfig {
        store_label: "store".into(),
        reaper: crate::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(5),
            dry_run: false,
            always: false,
        },
        helper: crate::ui::HelperMode::Program("demo-helper".into()),
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, NOW);
    let snapshot = Snapshot::from(crate::model::Rows {
        generation: Generation::new(14),
        instances: vec![instance("alpha"), instance("bravo"), instance("charlie")].into(),
        operations: if bravo_pending {
            vec![
                queued("op-a", "alpha"),
                queued("op-b", "bravo"),
                queued("op-c", "charlie"),
            ]
        } else {
            vec![queued("op-a", "alpha"), queued("op-c", "charlie")]
        },
        ..crate::model::Rows::default()
    });
    app.handle(Event::Snapshot(Arc::new(snapshot)), NOW);
    press(&mut app, KeyCode::Down);
    match context {
        Always | Panes => {}
        Confirm => {
            press(&mut app, KeyCode::Char('d'));
        }
        Help => {
            press(&mut app, KeyCode::Char('?'));
        }
        CommandLine => {
            press(&mut app, KeyCode::Char(':'));
        }
        HelpSearch => {
            press(&mut app, KeyCode::Char('?'));
            press(&mut app, KeyCode::Char('/'));
        }
        Filter => {
            press(&mut app, KeyCode::Char('/'));
        }
        Detail => {
            assert!(press(&mut app, KeyCode::Enter).is_some());
        }
        Operation => {
            press(&mut app, KeyCode::Tab);
            assert!(matches!(
                press(&mut app, KeyCode::Enter),
                Some(Effect::Io(crate::event::Request::OperationEvents { .. }))
            ));
        }
        FullText => {
            assert!(press(&mut app, KeyCode::Char('e')).is_none());
        }
        Logs | LogSearch => {
            open_logs(&mut app);
            if context == LogSearch {
                press(&mut app, KeyCode::Char('/'));
            }
        }
    }
    if context != Always {
        assert_eq!(app.context(), context);
    }
    app
}

/// `l`, answered with one service of 100 lines.
fn open_logs(app: &mut App) {
    use crate::model::logtext::LinePos;
    use crate::model::logview::{LogLine, LogsState, Older, Opened, OpenedService};
    let Some(Effect::Io(crate::event::Request::OpenLogs { session, .. })) =
        press(app, KeyCode::Char('l'))
    else {
        panic!("l opens the logs");
    };
    let lines = (0..100)
        .map(|i| LogLine {
            text: format!("line {i}"),
            service: 0,
            at: LinePos::default(),
            cont: false,
            cut: false,
        })
        .collect();
    let now = app.now();
    app.handle(
        crate::event::Event::Answer(crate::event::Answer::LogsOpened {
            session,
            opened: Opened {
                state: LogsState::Ready,
                path: "/state/logs/bravo".into(),
                services: vec![OpenedService {
                    name: "web".into(),
                    lines,
                    older: Older::Start,
                    error: None,
                    partial: None,
                }],
                notice: None,
            },
            bases: Vec::new(),
        }),
        now,
    );
}

fn rows(buffer: &ratatui::buffer::Buffer) -> Vec<String> {
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect()
}

/// The help overlay's key lines are the table's entries, one each,
/// in table order: keys in the left column, help text after it.
#[test]
fn help_lists_exactly_the_table() {
    let mut terminal = Terminal::new(TestBackend::new(100, 60)).unwrap();
    terminal
        .draw(|f| {
            let _ = panes::help::draw(f, f.area(), &crate::ui::app::HelpView::default(), false);
        })
        .unwrap();
    let rows = rows(terminal.backend().buffer());
    let top = rows.iter().position(|r| r.contains("Help (")).unwrap();
    let width = ENTRIES.iter().map(|e| e.keys.width()).max().unwrap();
    let shown: Vec<(String, String)> = rows[top + 1..]
        .iter()
        .map(|row| {
            let inner = row.trim().trim_matches('║');
            inner.strip_prefix(' ').unwrap_or(inner).to_owned()
        })
        // The legend first, then a blank line, then the entries.
        .skip_while(|line| !line.trim().is_empty())
        .skip(1)
        .take_while(|line| !line.trim().is_empty() && !line.starts_with('╚'))
        .map(|line| {
            let keys: String = line.chars().take(width).collect();
            let rest: String = line.chars().skip(width + 2).collect();
            (keys.trim_end().to_owned(), rest.trim_end().to_owned())
        })
        .collect();
    let table: Vec<(String, String)> = ENTRIES
        .iter()
        .map(|e| (e.keys.to_owned(), e.help.to_owned()))
        .collect();
    assert_eq!(shown, table);
}

/// `d` on a row with a pending operation (schema 14) asks to queue a
/// teardown behind it, from the panes and the detail view alike, and
/// its help says so; `y` hands the console [`Effect::QueueDown`].
#[test]
fn d_queues_behind_a_pending_operation() {
    let entry = ENTRIES.iter().find(|e| e.keys == "d").unwrap();
    assert_eq!(
        entry.help,
        "tear the selected instance down, queued behind a pending op (asks y/N)"
    );
    for context in [Panes, Detail] {
        let mut app = app_in(context, false);
        let mut up = queued("op-b", "bravo");
        up.verb = "up".into();
        up.status = OpStatus::Running;
        let snapshot = Snapshot::from(crate::model::Rows {
            generation: Generation::new(14),
            instances: vec![instance("alpha"), instance("bravo"), instance("charlie")].into(),
            operations: vec![up],
            ..crate::model::Rows::default()
        });
        app.handle(Event::Snapshot(Arc::new(snapshot)), NOW);
        assert_eq!(press(&mut app, KeyCode::Char('d')), None, "{context:?}");
        let (instance, op, _) = app.confirming_queue_down().expect("the queue question");
        assert_eq!((instance.name.as_str(), op.id.as_str()), ("bravo", "op-b"));
        let Some(Effect::QueueDown { instance, behind }) = press(&mut app, KeyCode::Char('y'))
        else {
            panic!("y queues ({context:?})");
        };
        assert_eq!((instance.name.as_str(), behind.as_str()), ("bravo", "up"));
    }
}

/// `d` on bravo with a running up and a queued down behind it (the
/// down is not the first pending operation) is refused, from the key,
/// `:down` and bulk `d` alike; with a running up and a queued verify
/// the question names the up and counts the verify.
#[test]
fn d_sees_every_pending_operation_of_the_name() {
    let refusal = "refused: a down of bravo is already queued (op op-d); nothing queued";
    let mut up = queued("op-b", "bravo");
    up.verb = "up".into();
    up.status = OpStatus::Running;
    let mut verify = queued("op-v", "bravo");
    verify.verb = "verify".into();
    let with = |tail: Op| {
        let mut app = app_in(Panes, false);
        let snapshot = Snapshot::from(crate::model::Rows {
            generation: Generation::new(14),
            instances: vec![instance("alpha"), instance("bravo"), instance("charlie")].into(),
            operations: vec![up.clone(), tail],
            ..crate::model::Rows::default()
        });
        app.handle(Event::Snapshot(Arc::new(snapshot)), NOW);
        app
    };
    let typed = |app: &mut App, line: &str| {
        press(app, KeyCode::Char(':'));
        for c in line.chars() {
            press(app, KeyCode::Char(c));
        }
        press(app, KeyCode::Enter)
    };
    let mut app = with(queued("op-d", "bravo"));
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    assert!(app.confirming_queue_down().is_none());
    assert_eq!(app.flash().map(|f| f.text.as_str()), Some(refusal));
    let mut app = with(queued("op-d", "bravo"));
    assert_eq!(typed(&mut app, "down bravo"), None);
    assert!(app.confirming_queue_down().is_none());
    assert_eq!(app.flash().map(|f| f.text.as_str()), Some(refusal));
    let mut app = with(queued("op-d", "bravo"));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(press(&mut app, KeyCode::Char('y')), None, "nothing run");
    let last = app
        .activity()
        .entries()
        .iter()
        .rev()
        .map(|l| &l.entry)
        .find(|a| a.instance == "bravo");
    assert_eq!(last.map(|a| a.detail.as_str()), Some(refusal));
    let mut app = with(verify.clone());
    press(&mut app, KeyCode::Char('d'));
    let (instance, op, others) = app.confirming_queue_down().expect("the queue question");
    assert_eq!((instance.name.as_str(), op.id.as_str()), ("bravo", "op-b"));
    let text = panes::confirm::queue_down_text(instance, (op, others), app.teardown());
    assert!(
        text.starts_with(
            "Queue a teardown of bravo behind its running up and 1 queued verify? \
             It runs after the pending operations."
        ),
        "{text}"
    );
}

/// Each footer shows the table's labels for its context, in slot
/// order, and nothing else.
#[test]
fn footers_show_exactly_the_table() {
    for context in [FullText, LogSearch, Logs, Filter, Detail, Panes] {
        let app = app_in(context, true);
        assert_eq!(app.base_context(), context);
        let mut terminal = Terminal::new(TestBackend::new(300, 1)).unwrap();
        terminal
            .draw(|f| panes::footer::render(f, f.area(), &app))
            .unwrap();
        let row = rows(terminal.backend().buffer()).remove(0);
        let shown: Vec<&str> = row.trim().split("  ").collect();
        let table: Vec<String> = footer(context)
            .iter()
            .map(|(_, l)| format!("{} {}", l.key, l.label))
            .collect();
        assert_eq!(shown, table, "{context:?}");
    }
}

/// Every binding reaches the handler: in an app put into each of its
/// contexts, the press resolves to the binding's action, and handling
/// it does what the action says.
#[test]
fn handler_handles_every_binding() {
    for entry in ENTRIES {
        for bind in entry.binds {
            for &context in bind.contexts {
                for &key in bind.keys {
                    let mut app = app_in(context, bind.action == Action::CancelOperation);
                    let input = example(key);
                    assert_eq!(resolve(app.context(), input), Some(bind.action));
                    let event = match input {
                        Input::Key(code, mods) => crossterm::event::Event::Key(
                            crossterm::event::KeyEvent::new(code, mods),
                        ),
                        Input::Click(_) => mouse(&app, MouseEventKind::Down(MouseButton::Left)),
                        Input::WheelUp(_) => mouse(&app, MouseEventKind::ScrollUp),
                        Input::WheelDown(_) => mouse(&app, MouseEventKind::ScrollDown),
                    };
                    let before = app.selected_index();
                    let command = app.handle(Event::Input(event), NOW);
                    check(bind.action, &app, command, before, context);
                }
            }
        }
    }
}

/// A mouse event on the first data row of the Instances pane, after
/// drawing a frame (mouse events land where the last frame drew).
fn mouse(app: &App, kind: MouseEventKind) -> crossterm::event::Event {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| crate::ui::draw(f, app)).unwrap();
    let instances = app.areas.get().unwrap().instances;
    crossterm::event::Event::Mouse(MouseEvent {
        kind,
        column: instances.x + 3,
        row: instances.y + 2,
        modifiers: KeyModifiers::NONE,
    })
}

/// What `action` must have done to `app` (in `context`, with row
/// `before` selected), returning `command`.
#[expect(
    clippy::too_many_lines,
    reason = "the oracle of every action, one arm each: a table read top to bottom"
)]
fn check(action: Action, app: &App, command: Option<Effect>, before: usize, context: Context) {
    let what = format!("{action:?} in {context:?}");
    let moved = app.selected_index() != before;
    if context == Logs && check_logs(action, app, &command, &what) {
        return;
    }
    match action {
        Action::Quit => assert_eq!(command, Some(Effect::Quit), "{what}"),
        // Row 1 of 3: every move changes the selection; the detail
        // document before its first frame has nothing to scroll; in
        // the operation overlay they scroll its events.
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::First
        | Action::Last => assert!(
            moved || matches!(context, Detail | FullText | Operation),
            "{what}"
        ),
        Action::NextPane => assert_eq!(app.focus(), Focus::Operations, "{what}"),
        Action::PreviousPane => assert_eq!(app.focus(), Focus::Activity, "{what}"),
        Action::OpenDetail => {
            assert!(
                matches!(
                    command,
                    Some(Effect::Io(crate::event::Request::OpenDetail { .. }))
                ),
                "{what}"
            );
        }
        Action::CloseDetail => assert!(app.detail().is_none(), "{what}"),
        // No filter to clear: nothing happens.
        Action::ClearFilter => {
            assert!(app.filter().is_empty() && app.flash().is_none(), "{what}");
        }
        Action::OpenHelp => assert!(app.help_open(), "{what}"),
        Action::CloseHelp => assert!(!app.help_open(), "{what}"),
        Action::TogglePayloads => {
            assert!(app.detail().is_some_and(|d| d.payloads), "{what}");
        }
        Action::EditFilter => assert!(app.filter_editing(), "{what}"),
        Action::FilterText => assert_eq!(app.filter(), "x", "{what}"),
        Action::FilterBackspace => assert_eq!(app.filter(), "", "{what}"),
        Action::FilterKeep => {
            assert!(!app.filter_editing() && app.flash().is_some(), "{what}");
        }
        Action::FilterClear => assert!(!app.filter_editing(), "{what}"),
        Action::CycleSort => {
            assert_ne!(app.sort(), crate::ui::SortKey::default(), "{what}");
        }
        Action::HelpUp
        | Action::HelpDown
        | Action::HelpPageUp
        | Action::HelpPageDown
        | Action::HelpTop
        | Action::HelpBottom => assert!(app.help_open(), "{what}"),
        Action::HelpSearch => assert!(app.help_view().typing(), "{what}"),
        Action::HelpText => assert_eq!(app.help_view().query(), "x", "{what}"),
        Action::HelpBackspace => assert_eq!(app.help_view().query(), "", "{what}"),
        Action::HelpKeep | Action::HelpClear => {
            assert!(app.help_open() && !app.help_view().typing(), "{what}");
        }
        Action::CopyName | Action::CopyField => {
            assert!(matches!(command, Some(Effect::Copy { .. })), "{what}");
        }
        Action::CopyDown => assert_eq!(
            command,
            Some(Effect::Copy {
                text: "stackless down bravo --json".into()
            }),
            "{what}"
        ),
        Action::OpenCommand => {
            assert_eq!(
                app.command_line().map(crate::ui::app::CommandLine::text),
                Some(""),
                "{what}"
            );
            assert!(
                !app.command_line()
                    .is_some_and(crate::ui::app::CommandLine::jumping),
                "{what}"
            );
        }
        Action::OpenJump => {
            assert_eq!(
                app.command_line().map(crate::ui::app::CommandLine::text),
                Some(""),
                "{what}"
            );
            assert!(
                app.command_line()
                    .is_some_and(crate::ui::app::CommandLine::jumping),
                "{what}"
            );
        }
        Action::CommandText => assert_eq!(
            app.command_line().map(crate::ui::app::CommandLine::text),
            Some("x"),
            "{what}"
        ),
        Action::CommandBackspace | Action::CommandNext | Action::CommandPrevious => {
            assert_eq!(
                app.command_line().map(crate::ui::app::CommandLine::text),
                Some(""),
                "{what}"
            );
        }
        // An empty line: completed among the command names.
        Action::CommandComplete => {
            assert_eq!(
                app.command_line().map(crate::ui::app::CommandLine::text),
                Some("down"),
                "{what}"
            );
        }
        Action::CommandRun | Action::CommandCancel => {
            assert!(
                app.command_line()
                    .map(crate::ui::app::CommandLine::text)
                    .is_none(),
                "{what}"
            );
        }
        Action::PromptClearLine | Action::PromptDeleteWord => {
            assert!(app.filter().is_empty(), "{what}");
            assert_eq!(
                app.command_line()
                    .map(crate::ui::app::CommandLine::text)
                    .is_some(),
                context == CommandLine,
                "{what}"
            );
        }
        Action::ReverseSort => assert!(app.sort_reversed(), "{what}"),
        Action::ToggleMark => assert_eq!(app.marks().len(), 1, "{what}"),
        Action::MarkAll => assert_eq!(app.marks().len(), 3, "{what}"),
        Action::Reap => {
            assert!(
                app.confirming_reap().is_some() && command.is_none(),
                "{what}"
            );
        }
        Action::TearDown => assert!(app.confirming().is_some(), "{what}"),
        Action::ConfirmTearDown => {
            assert!(matches!(command, Some(Effect::TearDown { .. })), "{what}");
        }
        Action::CancelTearDown => {
            assert!(app.confirming().is_none() && command.is_none(), "{what}");
        }
        Action::CancelOperation => {
            assert!(app.confirming_cancel().is_some(), "{what}");
        }
        Action::RenewLease => assert!(
            app.command_line()
                .is_some_and(|l| l.text().starts_with("renew ")),
            "{what}"
        ),
        Action::Verify => assert!(app.confirming_verbs().is_some(), "{what}"),
        Action::CloseOperation => assert!(app.operation_open().is_none(), "{what}"),
        // Row 0 clicked; the wheel moves 3 rows, clamped.
        Action::Click => {
            assert!(app.selected_index() == 0 && !app.filter_editing(), "{what}");
        }
        Action::WheelUp => assert!(moved || matches!(context, Detail | FullText), "{what}"),
        Action::WheelDown => assert!(moved || matches!(context, Detail | FullText), "{what}"),
        Action::OpenFullText => assert!(app.full_text().is_some(), "{what}"),
        Action::CloseFullText => assert!(app.full_text().is_none(), "{what}"),
        Action::OpenLogs => {
            assert!(
                matches!(
                    command,
                    Some(Effect::Io(crate::event::Request::OpenLogs { .. }))
                ),
                "{what}"
            );
        }
        Action::CloseLogs => {
            assert!(app.logs().is_none(), "{what}");
            assert_eq!(
                command,
                Some(Effect::Io(crate::event::Request::CloseLogs)),
                "{what}"
            );
        }
        Action::ToggleWrap => assert!(app.logs().unwrap().wrap, "{what}"),
        Action::EditSearch => assert!(app.logs().unwrap().editing.is_some(), "{what}"),
        Action::SearchText => {
            assert_eq!(app.logs().unwrap().editing.as_deref(), Some("x"), "{what}");
        }
        Action::SearchBackspace => {
            assert_eq!(app.logs().unwrap().editing.as_deref(), Some(""), "{what}");
        }
        Action::SearchKeep | Action::SearchClear => {
            assert!(app.logs().unwrap().editing.is_none(), "{what}");
            assert_eq!(app.context(), Logs, "{what}");
        }
        // No search yet: the flash says how to start one.
        Action::SearchOlder | Action::SearchNewer => assert!(app.flash().is_some(), "{what}"),
        Action::ToggleReaperPause => {
            assert_eq!(command, Some(Effect::PauseReaper(true)), "{what}");
            assert!(app.reaper().paused, "{what}");
        }
        Action::ReaperPass => assert_eq!(command, Some(Effect::ReaperPass), "{what}"),
        Action::ToggleZoom => assert!(app.zoomed(), "{what}"),
        Action::ToggleBanners => assert!(app.banners_away(), "{what}"),
        // Live: the store's timeline of the selected row, in a layer.
        Action::Timeline => {
            assert_eq!(command, None, "{what}");
            assert_eq!(app.context(), FullText, "{what}");
        }
        // A live console has no recording: the flash says where to step.
        Action::Seek(_) | Action::TypeTime => {
            assert_eq!(command, None, "{what}");
            assert_eq!(
                app.flash().map(|f| f.text.as_str()),
                Some(crate::ui::app::replay::SEEK_LIVE),
                "{what}"
            );
        }
    }
}

/// The movement keys in the logs view: up scrolls back (pausing),
/// down and `G` follow; Tab moves between service tabs. `true` when
/// `action` was one of them.
fn check_logs(action: Action, app: &App, command: &Option<Effect>, what: &str) -> bool {
    let Some(view) = app.logs() else {
        return false;
    };
    let buffer = view.buffer();
    match action {
        Action::Up | Action::PageUp | Action::First | Action::WheelUp => {
            assert!(buffer.scroll_up > 0 && !buffer.following(), "{what}");
        }
        Action::Down | Action::PageDown | Action::Last | Action::WheelDown => {
            assert!(buffer.following() && command.is_none(), "{what}");
        }
        Action::NextPane | Action::PreviousPane => assert_eq!(view.tab, 1, "{what}"),
        _ => return false,
    }
    true
}
