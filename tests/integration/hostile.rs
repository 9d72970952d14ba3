//! hostile.db: nothing from the store reaches the terminal raw (checked on
//! the bytes a real crossterm backend writes) or a command line.

use std::sync::Arc;

use crate::common::{CAPTURE, argv_log, fake_down, fixture, reaper, runtime};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use stackless_tui::event::{ActivityKind, Actor, Event};
use stackless_tui::reaper::Intent;
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};
use stackless_tui::ui::{App, AppConfig};

fn hostile_snapshot() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    stackless_tui::model::Snapshot,
) {
    let (dir, path) = fixture("hostile.db");
    let snapshot = Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap();
    (dir, path, snapshot)
}

/// A writer whose bytes the test can read after the backend wrote them.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes a real crossterm backend writes for one frame of `app`.
pub(crate) fn render_bytes(app: &App, width: u16, height: u16) -> Vec<u8> {
    let captured = Captured::default();
    let backend = CrosstermBackend::new(captured.clone());
    let mut terminal = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, width, height)),
        },
    )
    .unwrap();
    terminal.draw(|f| stackless_tui::ui::draw(f, app)).unwrap();
    drop(terminal);
    let bytes = captured.0.lock().unwrap().clone();
    assert!(bytes.len() > 1000, "the frame was written");
    bytes
}

/// Whether `needle` occurs in `haystack`.
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn store_text_never_reaches_the_terminal_raw() {
    let (_dir, _path, snapshot) = hostile_snapshot();
    let config = AppConfig {
        store_label: "hostile\u{1b}]0;title\u{7}.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Off("--no-reaper".into()),
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    };
    let mut app = App::new(config, CAPTURE);
    app.handle(Event::Snapshot(Arc::new(snapshot)), CAPTURE);
    // Walk the selection over every row so each one is drawn selected too,
    // and press r on each (the refusals land in the activity pane).
    for _ in 0..8 {
        app.handle(
            Event::Input(crossterm::event::Event::Key(
                crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('r')),
            )),
            CAPTURE,
        );
        for (w, h) in [(120, 40), (80, 24), (250, 60)] {
            let bytes = render_bytes(&app, w, h);
            for raw in [
                b"\x1b[2J".as_slice(),
                b"\x1b]0;pwned".as_slice(),
                b"\x1b]0;title".as_slice(),
                b"\x1b[31mRED".as_slice(),
                "\u{202e}".as_bytes(),
                "\u{2066}".as_bytes(),
                b"\0".as_slice(),
                b"\r".as_slice(),
                b"\x07".as_slice(),
            ] {
                assert!(
                    !contains(&bytes, raw),
                    "{raw:?} reached the terminal at {w}x{h}"
                );
            }
            // The placeholders are drawn instead.
            assert!(contains(&bytes, "␛".as_bytes()));
        }
        app.handle(
            Event::Input(crossterm::event::Event::Key(
                crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Down),
            )),
            CAPTURE,
        );
    }
}

#[test]
fn operator_reap_of_a_hostile_name_runs_nothing() {
    let rt = runtime();
    let (dir, path, snapshot) = hostile_snapshot();
    let down = fake_down(dir.path(), "touch /tmp/stackless-tui-pwned-b; exit 0");
    let (mut reaper, log) = reaper(
        &path,
        down,
        Box::new(FixedProbe::default()),
        CAPTURE + 8000,
        &rt,
    );
    for instance in &snapshot.instances {
        if instance.name == "ok-neighbour" {
            continue;
        }
        let kind = reaper.reap(instance, None, Actor::Operator, Intent::TearDown);
        assert_eq!(kind, Some(ActivityKind::Refused), "{:?}", instance.name);
    }
    assert!(argv_log(dir.path()).is_empty());
    assert!(!std::path::Path::new("/tmp/stackless-tui-pwned-a").exists());
    assert!(!std::path::Path::new("/tmp/stackless-tui-pwned-b").exists());
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 6);
    assert!(log.iter().all(|a| a.detail == "not a DNS-safe name"));
}
