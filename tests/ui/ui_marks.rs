//! Marks and bulk actions (`space`, Ctrl-A, Esc; `r`/`d` on the marked
//! set), field filters and the sorted column's mark, the help scrolled and
//! searched at the smallest terminal: drawn into `TestBackend` at a fixed
//! clock.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{press, render_app, select};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use stackless_tui::event::{ActivityKind, Event};
use stackless_tui::model::{Instance, Liveness, OpLock, Rows, Snapshot, Status};
use stackless_tui::reaper::Intent;
use stackless_tui::ui::{App, AppConfig, Effect, FlashLevel, SortKey};

fn instance(name: &str, substrate: &str, expires_at: i64) -> Instance {
    crate::common::builders::instance(name)
        .substrate(substrate)
        .created(Some(CAPTURE - 1000))
        .lease(3600, expires_at)
        .dirty(None)
        .build()
}

/// alpha, bravo (locked by a live holder), delta expired; charlie not;
/// echo on render, expired.
fn app() -> App {
    let mut bravo = instance("bravo", "local", CAPTURE - 60);
    bravo.lock = Some(Box::new(OpLock {
        operation: "up".into(),
        holder_pid: 4242,
        holder_start_time: CAPTURE - 30,
        acquired_at: CAPTURE - 30,
        holder_host: Some("vm".into()),
        claim_id: None,
    }));
    let rows = Rows {
        instances: vec![
            instance("alpha", "local", CAPTURE - 120),
            bravo,
            instance("charlie", "local", CAPTURE + 600),
            instance("delta", "local", CAPTURE - 10),
            instance("echo", "render", CAPTURE - 5),
        ]
        .into(),
        ..Rows::default()
    };
    let mut snapshot = Snapshot::from(rows);
    snapshot
        .liveness_mut()
        .insert("bravo".into(), Liveness::Alive);
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
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
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

fn names(app: &App) -> Vec<String> {
    (0..app.visible().len())
        .filter_map(|row| app.instance_at(row).map(|i| i.name.clone()))
        .collect()
}

fn marks(app: &App) -> Vec<String> {
    app.marks().iter().cloned().collect()
}

#[test]
fn space_marks_and_bulk_r_refuses_the_locked_one_with_its_reason() {
    let mut app = app();
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char(' '));
    select(&mut app, "bravo");
    press(&mut app, KeyCode::Char(' '));
    select(&mut app, "delta");
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(marks(&app), ["alpha", "bravo", "delta"]);
    let text = render_app(&app, 100, 20);
    assert_snapshot!("marks_100x20", text);
    assert!(text.contains("3 marked"), "{text}");
    assert!(text.contains("● alpha"), "{text}");
    assert!(text.contains("NAME▲"), "{text}");

    assert_eq!(press(&mut app, KeyCode::Char('r')), None);
    assert_eq!(
        app.confirming_bulk()
            .map(stackless_tui::ui::app::Bulk::question),
        Some(
            "Reap 2 of 3 marked instances (alpha, bravo, delta)? Refused, not run: bravo: locked \
             (alive). [y/N]"
                .to_owned()
        )
    );
    let text = render_app(&app, 100, 20);
    assert_snapshot!("bulk_confirm_100x20", text);

    let Some(Effect::Bulk { intent, jobs, .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no bulk command");
    };
    assert_eq!(intent, Intent::Reap);
    let started: Vec<&str> = jobs.iter().map(|(i, _)| i.name.as_str()).collect();
    assert_eq!(started, ["alpha", "delta"]);
    let refused: Vec<(String, String)> = app
        .activity()
        .entries()
        .iter()
        .map(|e| &e.entry)
        .filter(|a| a.kind == ActivityKind::Refused)
        .map(|a| (a.instance.clone(), a.detail.clone()))
        .collect();
    assert_eq!(
        refused,
        [("bravo".to_owned(), "refused: locked (alive)".to_owned())]
    );
    assert_eq!(
        app.flash().map(|f| (f.level, f.text.as_str())),
        Some((
            FlashLevel::Warning,
            "reap requested for 2 instances, 1 refused (see Activity)"
        ))
    );
    assert!(app.marks().is_empty(), "marks cleared after the action");
    // The audit trail gets the refusals as one batch (one write, not one
    // per refused line), each line as the single key's refusal writes it.
    let outbox = app.drain_outbox();
    assert_eq!(outbox.len(), 1);
    assert_eq!(
        outbox[0].detail,
        "reap: 1 of 3 marked instances refused (bravo)"
    );
    let batch: Vec<(&str, &str)> = outbox[0]
        .batch
        .iter()
        .map(|a| (a.instance.as_str(), a.detail.as_str()))
        .collect();
    assert_eq!(batch, [("bravo", "refused: locked (alive)")]);
    let dir = tempfile::tempdir().unwrap();
    let audit =
        |name: &str| stackless_tui::audit::AuditLog::open(&dir.path().join(name), 1 << 20).unwrap();
    let recorder = stackless_tui::recorder::Recorder::new(
        Some(std::sync::Arc::new(std::sync::Mutex::new(audit(
            "batch.jsonl",
        )))),
        stackless_tui::recorder::Forward::Stdout,
    );
    recorder.persist(&outbox[0]);
    let mut single = audit("single.jsonl");
    single.activity(&outbox[0].batch[0]).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("batch.jsonl"), read("single.jsonl"));
    assert_eq!(
        read("batch.jsonl"),
        format!(
            "{{\"time\":\"2026-11-29T13:58:06Z\",\"unix\":{CAPTURE},\"actor\":\"operator\",\"instance\":\"bravo\",\"action\":\"refuse\",\"outcome\":\"refused\",\"reason\":\"refused: locked (alive)\"}}\n"
        )
    );
}

#[test]
fn bulk_d_lists_every_refusal_and_audits_them_in_one_batch() {
    let mut app = app();
    // Tombstone two instances: `d` refuses them as not active.
    let mut rows = (*app.snapshot().rows).clone();
    for i in [0, 2] {
        rows.instances[i].status = Status::Tombstoned;
        rows.instances[i].lease = None;
    }
    let liveness = (*app.snapshot().liveness).clone();
    app.handle(
        Event::Snapshot(Arc::new(Snapshot::new(rows, liveness))),
        CAPTURE,
    );
    ctrl(&mut app, 'a');
    assert_eq!(press(&mut app, KeyCode::Char('d')), None);
    let Some(Effect::Bulk { jobs, .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no bulk command");
    };
    let started: Vec<&str> = jobs.iter().map(|(i, _)| i.name.as_str()).collect();
    assert_eq!(started, ["delta", "echo"]);
    let refused: Vec<(String, String)> = app
        .activity()
        .entries()
        .iter()
        .map(|e| &e.entry)
        .filter(|a| a.kind == ActivityKind::Refused)
        .map(|a| (a.instance.clone(), a.detail.clone()))
        .collect();
    let expected = [
        ("alpha", "refused: not active"),
        ("bravo", "refused: locked (alive)"),
        ("charlie", "refused: not active"),
    ];
    let mut shown: Vec<(&str, &str)> = refused
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_str()))
        .collect();
    shown.sort_unstable();
    assert_eq!(shown, expected, "every refused instance has its own line");
    let outbox = app.drain_outbox();
    assert_eq!(outbox.len(), 1);
    assert_eq!(
        outbox[0].detail,
        "teardown: 3 of 5 marked instances refused (alpha, bravo, charlie)"
    );
    let batch: Vec<(&str, &str)> = outbox[0]
        .batch
        .iter()
        .map(|a| (a.instance.as_str(), a.detail.as_str()))
        .collect();
    assert_eq!(batch, expected);
}

#[test]
fn bulk_d_defaults_to_no_and_esc_clears_marks() {
    let mut app = app();
    ctrl(&mut app, 'a');
    assert_eq!(marks(&app).len(), 5);
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(
        app.confirming_bulk()
            .map(stackless_tui::ui::app::Bulk::question),
        Some(
            "Tear down 4 of 5 marked instances (alpha, bravo, charlie and 2 more)? This runs: \
             stackless down alpha --json, then the same with {name} = each other name. Refused, \
             not run: bravo: locked (alive). [y/N]"
                .to_owned()
        )
    );
    // Any other key: no.
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert!(app.confirming_bulk().is_none());
    assert_eq!(marks(&app).len(), 5, "a refused dialog keeps the marks");
    press(&mut app, KeyCode::Esc);
    assert!(app.marks().is_empty());
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("5 marks cleared")
    );
}

#[test]
fn ctrl_a_marks_what_the_field_filter_shows() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "status:expired !lock:held");
    press(&mut app, KeyCode::Enter);
    assert_eq!(names(&app), ["alpha", "delta", "echo"]);
    ctrl(&mut app, 'a');
    assert_eq!(marks(&app), ["alpha", "delta", "echo"]);
    // Esc: the filter first, then the marks.
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.filter(), "");
    assert_eq!(marks(&app).len(), 3);
    press(&mut app, KeyCode::Esc);
    assert!(app.marks().is_empty());
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "!substrate:local");
    assert_eq!(names(&app), ["echo"]);
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "lock:maybe");
    assert!(names(&app).is_empty());
    assert_eq!(
        app.filter_error(),
        Some("lock:maybe: values are alive, foreign, held, stale, none, any")
    );
}

#[test]
fn capital_s_reverses_with_the_mark_on_the_sorted_column() {
    let mut app = app();
    press(&mut app, KeyCode::Char('S'));
    assert_eq!(names(&app), ["echo", "delta", "charlie", "bravo", "alpha"]);
    let text = render_app(&app, 100, 20);
    assert_snapshot!("sorted_name_desc_100x20", text);
    assert!(text.contains("NAME▼"), "{text}");
    assert!(text.contains("sort: name, reversed"), "{text}");
}

#[test]
fn help_scrolls_and_searches_at_60x15() {
    let mut app = app();
    press(&mut app, KeyCode::Char('?'));
    let top = render_app(&app, 60, 15);
    press(&mut app, KeyCode::PageDown);
    let scrolled = render_app(&app, 60, 15);
    assert_ne!(top, scrolled);
    assert_snapshot!("help_scrolled_60x15", scrolled);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "mark");
    press(&mut app, KeyCode::Enter);
    let searched = render_app(&app, 60, 15);
    assert_snapshot!("help_search_60x15", searched);
    assert!(searched.contains("Space / Ctrl-A"), "{searched}");
    assert!(!searched.contains("PgUp / PgDn"), "{searched}");
    press(&mut app, KeyCode::Esc);
    assert!(!app.help_open());
}

fn command(app: &mut App, line: &str) -> Option<Effect> {
    assert_eq!(press(app, KeyCode::Char(':')), None);
    type_text(app, line);
    press(app, KeyCode::Enter)
}

#[test]
fn command_line_completes_commands_then_names() {
    let mut app = app();
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "re");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("reap")
    );
    let text = render_app(&app, 100, 20);
    assert_snapshot!("command_completion_100x20", text);
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        footer.starts_with("\":reap▏  [reap] renew resume "),
        "{footer}"
    );
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("renew")
    );
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("resume")
    );
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("reap")
    );
    type_text(&mut app, " al");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("reap alpha ")
    );
    type_text(&mut app, "de");
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("reap alpha delta ")
    );
    assert_eq!(press(&mut app, KeyCode::Enter), None);
    assert_eq!(
        app.confirming_bulk()
            .map(stackless_tui::ui::app::Bulk::question),
        Some("Reap 2 instances (alpha, delta)? [y/N]".to_owned())
    );
    press(&mut app, KeyCode::Char('n'));
    // History: Up brings the line back.
    press(&mut app, KeyCode::Char(':'));
    press(&mut app, KeyCode::Up);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("reap alpha delta")
    );
    press(&mut app, KeyCode::Down);
    assert_eq!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text),
        Some("")
    );
    press(&mut app, KeyCode::Esc);
    assert!(
        app.command_line()
            .map(stackless_tui::ui::app::CommandLine::text)
            .is_none()
    );
}

#[test]
fn commands_act_like_the_keys() {
    let mut app = app();
    // One name: the single key's question, then `y`.
    assert_eq!(command(&mut app, "reap alpha"), None);
    assert_eq!(
        app.confirming_reap().map(|i| i.name.as_str()),
        Some("alpha")
    );
    let Some(Effect::Reap { instance, .. }) = press(&mut app, KeyCode::Char('y')) else {
        panic!("no reap");
    };
    assert_eq!(instance.name, "alpha");
    assert_eq!(command(&mut app, "reap bravo"), None);
    let last = app
        .activity()
        .entries()
        .back()
        .map(|e| e.entry.detail.clone());
    assert_eq!(last.as_deref(), Some("refused: locked (alive)"));
    assert_eq!(command(&mut app, "down charlie"), None);
    assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("charlie"));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(command(&mut app, "down Bad_Name"), None);
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some(":down Bad_Name: \"Bad_Name\" is not a DNS-safe name")
    );
    command(&mut app, "filter substrate:render");
    assert_eq!(names(&app), ["echo"]);
    command(&mut app, "filter");
    assert_eq!(names(&app).len(), 5);
    command(&mut app, "sort lease desc");
    assert_eq!(app.sort(), SortKey::LeaseExpiry);
    assert_eq!(names(&app), ["charlie", "echo", "delta", "bravo", "alpha"]);
    command(&mut app, "sort name");
    assert_eq!(names(&app), ["alpha", "bravo", "charlie", "delta", "echo"]);
    for (line, flash) in [
        (
            "pause",
            "reaper paused (P resumes): the role is free for another console or reap --once",
        ),
        ("pause", "the reaper is already paused"),
        (
            "pass",
            "the reaper is paused: P resumes it (and runs a pass)",
        ),
        (
            "resume",
            "reaper resumed: it reaps once it has the role (the header says who reaps)",
        ),
        ("resume", "the reaper is not paused"),
        ("pass", "reaper pass asked for: it runs now"),
        ("logs nobody", "no instance named \"nobody\""),
        (
            "ops",
            "no operations on this store (schema v4: stackless 0.4.0 has them)",
        ),
    ] {
        command(&mut app, line);
        assert_eq!(app.flash().map(|f| f.text.as_str()), Some(flash), "{line}");
    }
    command(&mut app, "chrl");
    assert_eq!(
        app.selected_instance().map(|i| i.name.as_str()),
        Some("charlie")
    );
    assert_eq!(
        app.flash().map(|f| f.text.as_str()),
        Some("jumped to charlie")
    );
    ctrl(&mut app, 'f');
    type_text(&mut app, "ech");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.selected_instance().map(|i| i.name.as_str()),
        Some("echo")
    );
    command(&mut app, "help");
    assert!(app.help_open());
    press(&mut app, KeyCode::Esc);
    assert_eq!(command(&mut app, "q"), Some(Effect::Quit));
}

/// `op:` looks the pending operation up through the snapshot's index (not a
/// scan of every pending operation per row); it matches what it matched
/// before: the oldest pending operation of each name.
#[test]
fn op_filters_match_the_oldest_pending_operation_of_each_name() {
    use stackless_tui::model::{Generation, OpStatus, Operation};
    let op = |id: &str, instance: &str, status: OpStatus| Operation {
        id: id.into(),
        instance: instance.into(),
        instance_id: None,
        verb: "up".into(),
        status,
        cancel_requested: false,
        created_at: CAPTURE - 10,
        updated_at: CAPTURE - 10,
        error_json: None,
        progress: None,
        ran: None,
    };
    let mut app = app();
    let mut rows = (*app.snapshot().rows).clone();
    rows.generation = Generation::new(14);
    rows.operations = vec![
        op("1", "echo", OpStatus::Running),
        op("2", "charlie", OpStatus::Queued),
        op("3", "echo", OpStatus::Queued),
        op("4", "alpha", OpStatus::Succeeded),
    ];
    app.handle(Event::Snapshot(Arc::new(Snapshot::from(rows))), CAPTURE);
    for (filter, shown) in [
        ("op:running", &["echo"][..]),
        ("op:queued", &["charlie"][..]),
        ("op:pending", &["charlie", "echo"][..]),
        ("!op:pending", &["alpha", "bravo", "delta"][..]),
    ] {
        assert_eq!(press(&mut app, KeyCode::Char('/')), None);
        type_text(&mut app, filter);
        assert_eq!(press(&mut app, KeyCode::Enter), None);
        let mut names = names(&app);
        names.sort_unstable();
        assert_eq!(names, shown, "{filter}");
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.filter(), "", "{filter}");
    }
}

/// `d` on an instance whose lock holder is gone (stale, as stackless §2
/// decides it) says so before `y`: stackless takes the lock over; a lock
/// whose pid was reused says that.
#[test]
fn d_on_a_stale_locked_instance_says_its_lock_is_stale() {
    for (liveness, words) in [
        (
            Liveness::StalePidGone,
            "Tear down bravo? Its up lock is stale (pid 4242 gone): stackless takes it over. This runs: stackless down bravo --json [y/N]",
        ),
        (
            Liveness::StalePidReused,
            "Tear down bravo? Its up lock is stale (pid 4242 reused by another process): stackless takes it over. This runs: stackless down bravo --json [y/N]",
        ),
    ] {
        let mut app = app();
        let mut snapshot = app.snapshot().clone();
        snapshot.liveness_mut().insert("bravo".into(), liveness);
        app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
        select(&mut app, "bravo");
        assert_eq!(press(&mut app, KeyCode::Char('d')), None);
        assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("bravo"));
        let text = render_app(&app, 200, 24);
        let question: String = text
            .lines()
            .filter_map(|l| l.find("Tear down").map(|at| &l[at..]))
            .map(|l| l.trim_end_matches(['║', ' ', '"']))
            .collect();
        assert_eq!(question, words, "{text}");
    }
}
