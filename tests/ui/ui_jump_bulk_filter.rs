//! A jump (Ctrl-F) never runs a command; bulk actions over the marked
//! rows and the filter; filter errors and the help; completion and the
//! prompts' editing keys: drawn into `TestBackend` at a fixed clock.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app, select};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use stackless_tui::event::Event;
use stackless_tui::model::{Instance, Rows, Snapshot, Status};
use stackless_tui::ui::{App, AppConfig, Effect, SortKey};

fn instance(name: &str, substrate: &str, expires_at: i64) -> Instance {
    crate::common::builders::instance(name)
        .substrate(substrate)
        .created(Some(CAPTURE - 1000))
        .lease(3600, expires_at)
        .dirty(None)
        .build()
}

/// An app over instances named `names` (sorted by name), all on `local`
/// and expired, but those starting with `r` on `render`.
fn app_with(names: &[&str]) -> App {
    let mut sorted: Vec<&str> = names.to_vec();
    sorted.sort_unstable();
    let rows = Rows {
        instances: sorted
            .iter()
            .map(|n| {
                let substrate = if n.starts_with('r') {
                    "render"
                } else {
                    "local"
                };
                instance(n, substrate, CAPTURE - 60)
            })
            .collect(),
        ..Rows::default()
    };
    let config = AppConfig {
        store_label: "/home/operator/.local/state/stackless/state.db".into(),
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
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    app.set_sort(SortKey::Name, None);
    app
}

fn ctrl(app: &mut App, c: char) -> Option<Effect> {
    app.handle(
        Event::Input(crossterm::event::Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        ))),
        CAPTURE,
    )
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(press(app, KeyCode::Char(c)), None);
    }
}

fn selected(app: &App) -> Option<&str> {
    app.selected_instance().map(|i| i.name.as_str())
}

fn flash(app: &App) -> Option<&str> {
    app.flash().map(|f| f.text.as_str())
}

/// Instances named like commands: Ctrl-F only ever jumps.
#[test]
fn ctrl_f_jumps_to_an_instance_named_like_a_command_and_never_runs_it() {
    let mut app = app_with(&["alpha", "help", "pass", "q", "reap"]);
    for name in ["q", "pass", "help", "reap"] {
        select(&mut app, "alpha");
        assert_eq!(ctrl(&mut app, 'f'), None);
        type_text(&mut app, name);
        assert_eq!(press(&mut app, KeyCode::Enter), None, "{name}");
        assert!(!app.quitting() && !app.help_open(), "{name}");
        assert!(
            app.command_line()
                .map(stackless_tui::ui::app::CommandLine::text)
                .is_none(),
            "{name}"
        );
        assert_eq!(selected(&app), Some(name), "{name}");
        assert_eq!(flash(&app), Some(format!("jumped to {name}").as_str()));
    }
    // `pause` names no instance: nothing is paused, the footer says so.
    ctrl(&mut app, 'f');
    type_text(&mut app, "pause");
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert!(!app.reaper().paused);
    assert_eq!(flash(&app), Some("no instance matches \"pause\""));
    // After `:`, a word that is neither a command nor a name is a mistyped
    // command.
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "nonsense");
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert_eq!(
        flash(&app),
        Some("unknown command: nonsense (nor an instance name; ? lists the commands)")
    );
    ctrl(&mut app, 'f');
    type_text(&mut app, "p");
    let text = render_app(&app, 100, 20);
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.starts_with("\"jump to: p▏  Tab completes · Enter jumps · Esc closes"),
        "{footer}"
    );
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("pass ")
    );
    press(&mut app, KeyCode::Esc);

    // `:WORD`: the command wins, and the footer says how to jump.
    select(&mut app, "alpha");
    command(&mut app, "pass");
    assert_eq!(
        flash(&app),
        Some(
            "reaper pass asked for: it runs now · \"pass\" is also an instance: \
             Ctrl-F pass Enter jumps to it (:pass runs the command)"
        )
    );
    assert_eq!(selected(&app), Some("alpha"));
    command(&mut app, "reap");
    assert_eq!(
        flash(&app),
        Some(
            ":reap needs instance names · \"reap\" is also an instance: \
             Ctrl-F reap Enter jumps to it (:reap runs the command)"
        )
    );
    // A word that is no command still jumps.
    command(&mut app, "alph");
    assert_eq!(selected(&app), Some("alpha"));
    assert_eq!(command(&mut app, "q"), Some(Effect::Quit));
}

fn command(app: &mut App, line: &str) -> Option<Effect> {
    assert_eq!(press(app, KeyCode::Char(':')), None);
    type_text(app, line);
    press(app, KeyCode::Enter)
}

fn marks(app: &App) -> Vec<String> {
    app.marks().iter().cloned().collect()
}

fn question(app: &App) -> Option<String> {
    app.confirming_bulk()
        .map(stackless_tui::ui::app::Bulk::question)
}

/// `r`/`d` act on the marked rows the filter shows; the question says how
/// many marked ones it hides and what `d` runs.
#[test]
fn bulk_d_acts_on_the_marked_rows_shown_and_says_how_many_are_hidden() {
    let mut app = app_with(&["alpha", "bravo", "charlie", "rho", "rita"]);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "render");
    press(&mut app, KeyCode::Enter);
    ctrl(&mut app, 'a');
    assert_eq!(marks(&app), ["rho", "rita"]);
    // `/` again: the old filter is there; Ctrl-U clears it, Ctrl-W a word.
    press(&mut app, KeyCode::Char('/'));
    assert_eq!(app.filter(), "render");
    ctrl(&mut app, 'u');
    assert_eq!(app.filter(), "");
    assert_eq!(app.visible().len(), 5);
    type_text(&mut app, "status:active alp");
    ctrl(&mut app, 'w');
    assert_eq!(app.filter(), "status:active ");
    type_text(&mut app, "alp");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.visible().len(), 1);
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(marks(&app), ["alpha", "rho", "rita"]);
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        question(&app).as_deref(),
        Some(
            "Tear down 1 marked instance (alpha)? 2 other marked instances are hidden by \
             the filter: this leaves them alone. This runs: stackless down alpha --json [y/N]"
        )
    );
    let text = render_app(&app, 80, 24);
    assert_snapshot!("bulk_down_hidden_marks_80x24", text);
    let Some(Effect::Bulk { jobs, .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no bulk command");
    };
    let started: Vec<&str> = jobs.iter().map(|(i, _)| i.name.as_str()).collect();
    assert_eq!(started, ["alpha"]);
    assert_eq!(marks(&app), ["rho", "rita"], "hidden marks are kept");

    // Every mark hidden: nothing opens, the footer says why.
    press(&mut app, KeyCode::Char('r'));
    assert!(app.confirming_bulk().is_none());
    assert_eq!(
        flash(&app),
        Some(
            "the 2 marked instances are all hidden by the filter \"status:active alp\": \
             nothing to act on (Esc clears the filter)"
        )
    );
    // Esc: the filter first (as the pane's hint says), then the marks.
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.filter(), "");
    assert_eq!(marks(&app), ["rho", "rita"]);
    assert_eq!(flash(&app), Some("filter cleared"));
    press(&mut app, KeyCode::Esc);
    assert!(app.marks().is_empty());
    assert_eq!(flash(&app), Some("2 marks cleared"));

    // Typed names are not "marked"; the command the first runs is shown.
    command(&mut app, "down alpha bravo");
    assert_eq!(
        question(&app).as_deref(),
        Some(
            "Tear down 2 instances (alpha, bravo)? This runs: stackless down alpha --json, \
             then the same with {name} = each other name [y/N]"
        )
    );
    press(&mut app, KeyCode::Char('n'));
    // Ctrl-U and Ctrl-W in the `:` line.
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "down alpha bravo");
    ctrl(&mut app, 'w');
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("down alpha ")
    );
    ctrl(&mut app, 'u');
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("")
    );
}

/// A filter that cannot be read flashes why; `op:` on a store without
/// operations says it has none; the help teaches the field terms and every
/// `:` command.
#[test]
fn filter_errors_flash_and_the_help_teaches_fields_and_commands() {
    let mut app = app_with(&["alpha", "rho"]);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "statu:expired");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((
            stackless_tui::ui::FlashLevel::Warning,
            "filter \"statu:expired\": unknown field \"statu\" (fields: status, substrate, \
             name, lock, backoff, op, host)"
        ))
    );
    press(&mut app, KeyCode::Char('/'));
    ctrl(&mut app, 'u');
    type_text(&mut app, "op:running");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        flash(&app),
        Some(
            "filter \"op:running\": 0 of 2 match: this store has no operations (schema v4: \
             stackless 0.4.0 has them)"
        )
    );
    let help: String = stackless_tui::ui::keys::ENTRIES
        .iter()
        .map(|e| format!("{} {}\n", e.keys, e.help))
        .collect();
    for taught in [
        "status:expired",
        "substrate:render",
        "lock:alive",
        "backoff:due",
        "op:running",
        "!term negates",
        ":pause",
        ":resume",
        ":pass",
        ":logs NAME",
        ":sort KEY",
        ":filter EXPR",
        ":ops",
        ":help",
        ":q",
    ] {
        assert!(help.contains(taught), "{taught} not in the help:\n{help}");
    }
}

/// `:reap`/`:down` complete active names only; marked rows keep the names
/// aligned; a zoomed pane says so in its border.
#[test]
fn completion_skips_tombstones_marks_align_and_zoom_is_said() {
    let mut rows = Rows {
        instances: ["alpha", "alto", "bravo"]
            .iter()
            .map(|n| instance(n, "local", CAPTURE - 60))
            .collect(),
        ..Rows::default()
    };
    rows.instances[1].status = Status::Tombstoned;
    rows.instances[1].tombstoned_at = Some(CAPTURE - 30);
    let mut app = app_with(&[]);
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "down al");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("down alpha ")
    );
    ctrl(&mut app, 'u');
    type_text(&mut app, "logs al");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .and_then(stackless_tui::ui::app::CommandLine::candidates)
            .map(|(c, _)| c.len()),
        Some(2)
    );
    press(&mut app, KeyCode::Esc);

    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char(' '));
    let screen = render_app(&app, 100, 20);
    let column = |name: &str| {
        let line = screen.lines().find(|l| l.contains(name)).unwrap();
        line[..line.find(name).unwrap()].chars().count()
    };
    assert_eq!(column("alpha"), column("bravo"), "{screen}");
    assert!(screen.contains("● alpha"), "{screen}");

    press(&mut app, KeyCode::Char('z'));
    let zoomed = render_app(&app, 100, 20);
    let top = zoomed.lines().find(|l| l.contains("Instances")).unwrap();
    assert!(top.contains(" zoomed (z) "), "{zoomed}");
    press(&mut app, KeyCode::Char('z'));
    assert!(!render_app(&app, 100, 20).contains("zoomed (z)"));
}

/// `:api` Tab completes the instance name (a single word is a jump, README:
/// "Tab completes the command, then instance names"), and `:verify`/`:renew`
/// complete names after them.
#[test]
fn colon_tab_completes_names_for_a_jump_and_after_verify() {
    let mut app = app_with(&["alpha", "api-gateway-dev", "bravo"]);
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "api");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("api-gateway-dev ")
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(selected(&app), Some("api-gateway-dev"));
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "verify br");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("verify bravo ")
    );
}
