//! Layout that serves the name, on the demo's own store
//! (`src/demo/seed.rs`): at 80x24, 100x30, 120x40 and 60x15 every demo name
//! shown is whole (LEASE and LOCK give way to their short forms first), no
//! column header is cut, and `z` zooms the focused pane to the whole body
//! and back.

use std::sync::Arc;

use crossterm::event::KeyCode;
use stackless_tui::demo::{LiveHolder, seed};
use stackless_tui::event::Event;
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};
use stackless_tui::ui::{App, AppConfig, Focus};

use crate::common::ui::{press, render_app};

const NOW: i64 = 1_795_960_686;

/// Every name the demo seeds, but the 8-day tombstone the first pass
/// collects.
const DEMO_NAMES: [&str; 12] = [
    "api-gateway-dev",
    "checkout-preview",
    "docs-site-pr-412",
    "billing-sandbox",
    "feature-flags-demo",
    "orders-e2e",
    "payments-staging",
    "flaky-gpu-worker",
    "inventory-sync",
    "ml-feature-store",
    "legacy-auth-spike",
    "marketing-preview",
];

fn demo_app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let holder = LiveHolder {
        pid: 4242,
        start_time: 1_795_950_000,
        host: "demo-box".into(),
    };
    seed(&path, NOW, &holder).unwrap();
    let snapshot = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe {
            host: Some(holder.host.clone()),
            processes: vec![(holder.pid, holder.start_time)],
        })
        .unwrap();
    let mut app = App::new(
        AppConfig {
            store_label: "demo store /tmp/stackless-tui-demo-x/state.db".into(),
            reaper: stackless_tui::ui::ReaperMode::Every {
                tick: std::time::Duration::from_secs(5),
                dry_run: false,
                always: false,
            },
            helper: stackless_tui::ui::HelperMode::Program("stackless-tui demo-helper".into()),
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        NOW,
    );
    app.handle(Event::Snapshot(Arc::new(snapshot)), NOW);
    app
}

/// The demo names on `screen`, each checked whole: a name that shows at
/// all shows with a space after it, never with `…`.
fn names_shown(screen: &str) -> Vec<&'static str> {
    assert!(!screen.contains("SUBST…"), "{screen}");
    DEMO_NAMES
        .iter()
        .copied()
        .filter(|name| {
            let prefix = &name[..name.len().min(8)];
            let shown = screen.contains(prefix);
            if shown {
                assert!(
                    screen.contains(&format!("{name} ")),
                    "{name} cut:\n{screen}"
                );
            }
            shown
        })
        .collect()
}

#[test]
fn every_demo_name_is_whole_at_every_size() {
    let app = demo_app();
    for (width, height, all) in [
        (80, 24, false),
        (100, 30, true),
        (120, 40, true),
        (60, 15, false),
    ] {
        let screen = render_app(&app, width, height);
        assert_snapshot!(format!("demo_{width}x{height}"), screen);
        let shown = names_shown(&screen);
        if all {
            assert_eq!(shown.len(), DEMO_NAMES.len(), "{width}x{height}:\n{screen}");
        } else {
            assert!(!shown.is_empty(), "{screen}");
        }
    }
}

#[test]
fn z_zooms_the_focused_pane_and_back() {
    let mut app = demo_app();
    // 60x15 shows a few rows; zoomed, the Instances pane has the body.
    let before = render_app(&app, 60, 15);
    assert!(before.contains("Activity"), "{before}");
    press(&mut app, KeyCode::Char('z'));
    assert!(app.zoomed());
    let zoomed = render_app(&app, 60, 15);
    assert_snapshot!("demo_zoomed_60x15", zoomed);
    assert!(
        !zoomed.contains("Activity") && !zoomed.contains("Backoffs"),
        "{zoomed}"
    );
    assert!(
        names_shown(&zoomed).len() > names_shown(&before).len(),
        "{zoomed}"
    );
    // Tab moves the zoom to the next pane.
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Backoffs);
    let backoffs = render_app(&app, 60, 15);
    assert!(
        backoffs.contains("Backoffs") && !backoffs.contains("Instances"),
        "{backoffs}"
    );
    press(&mut app, KeyCode::Char('z'));
    assert!(!app.zoomed());
    let back = render_app(&app, 60, 15);
    assert!(
        back.contains("Instances") && back.contains("Backoffs"),
        "{back}"
    );
}

/// Titles, column headers and the footer drop whole items (or take a
/// defined short form), never cut mid-word: checked on every border line,
/// the table header lines and the footer, at 60x15 and 80x24 with the reap
/// sort, marks, a paused reaper and failures in Activity.
#[test]
fn titles_headers_and_footer_never_cut_mid_word() {
    use stackless_tui::event::{Activity, ActivityKind, Actor};
    let mut app = demo_app();
    for (kind, name) in [
        (ActivityKind::Reaped, "orders-e2e"),
        (ActivityKind::Failed, "flaky-gpu-worker"),
    ] {
        app.handle(
            Event::Activity(Activity::new(NOW - 60, Actor::Reaper, name, kind, "x")),
            NOW,
        );
    }
    app.set_sort(stackless_tui::ui::SortKey::ReapAttempts, Some(true));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('P'));
    // The pause's flash expires: the footer shows the keys again.
    let later = NOW + stackless_tui::ui::app::FLASH_SECS + 1;
    app.handle(Event::Tick, later);
    assert!(app.reaper().paused && app.flash().is_none());
    for (width, height) in [(60, 15), (80, 24)] {
        let screen = render_app(&app, width, height);
        assert_snapshot!(format!("demo_paused_reap_sort_{width}x{height}"), screen);
        let lines: Vec<&str> = screen.lines().collect();
        for line in &lines {
            if line.contains('╔') || line.contains('┌') {
                assert!(!line.contains('…'), "{width}x{height} cut: {line}");
            }
            // A table's header row (the pane beside it may cut its text).
            for cell in line.split(['│', '║']) {
                if cell.contains("NAME") || cell.contains("INSTANCE") {
                    assert!(!cell.contains('…'), "{width}x{height} cut: {line}");
                }
            }
        }
        let footer = lines.last().unwrap();
        assert!(!footer.contains('…'), "{footer}");
        assert!(screen.contains("REAP▼"), "{screen}");
        assert!(
            footer.contains("(reaper paused: P resumes)") || footer.contains("(paused)"),
            "{footer}"
        );
        let activity = lines.iter().find(|l| l.contains("Activity")).unwrap();
        assert!(
            activity.contains("failed ▁") && activity.contains("█ 1")
                || activity.contains("failed 1")
                || !activity.contains("failed"),
            "{activity}"
        );
    }
}

/// At 80x24 the Backoffs pane gives INSTANCE its name whole first (the
/// error then shows under the table), as Instances does.
#[test]
fn backoffs_name_is_whole_at_80x24() {
    let app = demo_app();
    let screen = render_app(&app, 80, 24);
    let backoffs: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("Backoffs"))
        .take(7)
        .collect();
    let row = backoffs.iter().find(|l| l.contains('▶')).expect("a row");
    assert!(row.contains("▶ flaky-gpu-worker "), "{backoffs:#?}");
    let error = backoffs
        .iter()
        .any(|l| l.contains("error: engine.teardown"));
    assert!(error, "the error under the table: {backoffs:#?}");
}

/// The rows of the pane whose title starts with `name` on `screen`, inside
/// its borders (the left border's column onwards, `width` columns).
fn pane_rows(screen: &str, name: &str, width: usize) -> Vec<String> {
    let lines: Vec<String> = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().collect())
        .collect();
    let top = lines
        .iter()
        .position(|l| l.contains(&format!(" {name} ")))
        .expect("the pane");
    let left = lines[top].chars().take_while(|c| *c == ' ').count() + 1;
    lines[top + 1..]
        .iter()
        .take_while(|l| !l.chars().nth(left - 1).is_some_and(|c| "└╚".contains(c)))
        .map(|l| {
            l.chars()
                .skip(left)
                .take(width)
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// At 80x24 the selected backoff's error is shown whole under the table
/// (wrapped at words, as the README says), and the remediation is never cut
/// mid-word, also when zoomed (it is wrapped there, whole).
#[test]
fn the_backoff_error_is_whole_and_the_remediation_cut_at_words() {
    let mut app = demo_app();
    let screen = render_app(&app, 80, 24);
    assert_eq!(
        pane_rows(&screen, "Backoffs", 42),
        [
            "  INSTANCE          ATTEMPTS RETRY",
            "▶ flaky-gpu-worker  2        retry in 12s",
            "error: engine.teardown.survivors: teardown",
            "of \"flaky-gpu-worker\" left survivors:",
            "[\"render:srv-d0gpu7flaky4w1\"]",
        ],
        "{screen}"
    );
    while app.focus() != Focus::Backoffs {
        press(&mut app, KeyCode::Tab);
    }
    press(&mut app, KeyCode::Char('z'));
    let screen = render_app(&app, 80, 24);
    let rows = pane_rows(&screen, "Backoffs", 78);
    assert_eq!(
        rows[1..7],
        [
            "▶ flaky-gpu-worker 2        retry in 12s engine.teardown.survivors: teardown…",
            "error: engine.teardown.survivors: teardown of \"flaky-gpu-worker\" left",
            "survivors: [\"render:srv-d0gpu7flaky4w1\"]",
            "remediation: these resources still exist and may bill or hold state:",
            "[\"render:srv-d0gpu7flaky4w1\"]; re-run `stackless down` to retry, or remove",
            "them on the substrate and re-run to verify",
        ],
        "{screen}"
    );
}

/// The first `y` of a session says how to let OSC 52 through, and at 80x24
/// the footer shows it whole (never cut at the footer's edge, as in
/// `... flaky-gpu-worker · not pasted…`): tmux's setting only under tmux,
/// else the terminal's.
#[test]
fn the_first_copy_says_how_to_allow_osc52_at_80x24() {
    let mut app = demo_app();
    press(&mut app, KeyCode::Char('y'));
    let screen = render_app(&app, 80, 24);
    assert!(
        screen.contains("OSC 52 sent; not pasted? allow clipboard access (OSC 52) in the terminal"),
        "{screen}"
    );
    assert!(!screen.contains("tmux"), "{screen}");
    let mut app = demo_app();
    app.set_under_tmux(true);
    press(&mut app, KeyCode::Char('y'));
    let screen = render_app(&app, 80, 24);
    assert!(
        screen.contains("OSC 52 sent; not pasted? tmux: set -g set-clipboard on"),
        "{screen}"
    );
}

/// The 0.4.0 demo's store (`src/demo/v14.rs`) as the console's first
/// snapshot shows it.
fn demo_v14_app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let holder = LiveHolder {
        pid: 4242,
        start_time: 1_795_950_000,
        host: "demo-box".into(),
    };
    stackless_tui::demo::v14::seed(&path, NOW, &holder).unwrap();
    let snapshot = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe {
            host: Some(holder.host.clone()),
            processes: vec![(holder.pid, holder.start_time)],
        })
        .unwrap();
    let mut app = App::new(
        AppConfig {
            store_label: "demo store /tmp/stackless-tui-demo-x/state.db".into(),
            reaper: stackless_tui::ui::ReaperMode::Every {
                tick: std::time::Duration::from_secs(5),
                dry_run: false,
                always: false,
            },
            helper: stackless_tui::ui::HelperMode::Program("stackless-tui demo-helper".into()),
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        NOW,
    );
    app.handle(Event::Snapshot(Arc::new(snapshot)), NOW);
    app
}

/// At 80x24 the 0.4.0 demo's Backoffs pane has one row of room inside its
/// borders: its one backoff row is drawn there (the header gives way), not
/// the header and `↓ 1 more`, focused or not.
#[test]
fn the_only_backoff_row_is_drawn_at_80x24_on_the_0_4_0_demo() {
    let mut app = demo_v14_app();
    assert_eq!(app.snapshot().reap_attempts.len(), 1);
    let name = app.snapshot().reap_attempts[0].instance.clone();
    let screen = render_app(&app, 80, 24);
    let backoffs: Vec<&str> = screen
        .lines()
        .skip_while(|l| !l.contains("Backoffs"))
        .take(3)
        .collect();
    assert!(
        backoffs.iter().any(|l| l.contains(&format!("▶ {name} "))),
        "{screen}"
    );
    assert!(!screen.contains("↓ 1 more"), "{screen}");
    while app.focus() != Focus::Backoffs {
        press(&mut app, KeyCode::Tab);
    }
    insta::assert_snapshot!(render_app(&app, 80, 24));
}

/// The 0.4.0 demo's header says its controller stand-in runs, before the
/// first probe and after a probe that finds no real controller.
#[test]
fn the_0_4_0_demo_says_its_controller_stand_in_runs() {
    let mut app = demo_v14_app();
    let header = |app: &App| render_app(app, 120, 40).lines().take(3).collect::<String>();
    assert!(
        header(&app).contains("controller: not running"),
        "{}",
        header(&app)
    );
    app.set_controller_stand_in(4242);
    assert!(
        header(&app).contains("controller: running (pid 4242, demo)"),
        "{}",
        header(&app)
    );
    app.handle(
        Event::Controller(stackless_tui::model::controller::ControllerState {
            proxy_port: Some(4444),
            ..Default::default()
        }),
        NOW,
    );
    assert!(
        header(&app).contains("controller: running (pid 4242, demo)"),
        "{}",
        header(&app)
    );
    assert_eq!(app.controller().lease_reaper, Some(false));
}

/// The controller coming and going is an Activity line with its pid (not
/// the first probe's finding).
#[test]
fn the_controller_coming_and_going_is_an_activity_line() {
    use stackless_tui::model::controller::ControllerState;
    let mut app = demo_v14_app();
    let probed = |pid| ControllerState {
        pid,
        proxy_port: Some(4444),
        ..Default::default()
    };
    app.handle(Event::Controller(probed(Some(76))), NOW);
    app.handle(Event::Controller(probed(None)), NOW);
    app.handle(Event::Controller(probed(Some(77))), NOW);
    app.handle(Event::Controller(probed(Some(77))), NOW);
    let said: Vec<String> = app
        .activity()
        .entries()
        .iter()
        .filter(|e| e.entry.kind == stackless_tui::event::ActivityKind::Role)
        .map(|e| e.entry.detail.clone())
        .collect();
    assert_eq!(
        said,
        [
            "the controller stopped (pid 76 gone)",
            "the controller started (pid 77)"
        ]
    );
}
