//! Helpers shared by the UI tests: fixture snapshots at a fixed probe,
//! rendering to `TestBackend` as text, keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use stackless_tui::event::Event;
use stackless_tui::model::Snapshot;
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};
use stackless_tui::ui::{self, App, Effect};

use super::CAPTURE;

/// A read-only store over a copy of `tests/fixtures/<name>` (the fixture
/// itself is never opened: `SQLite` would create `-wal`/`-shm` beside it).
pub fn fixture_store(name: &str) -> (tempfile::TempDir, Store) {
    let (dir, copy) = super::fixture_as(name, name);
    let store = Store::open(&copy, Access::ReadOnly).expect("open fixture copy");
    (dir, store)
}

/// A snapshot of a fixture copy with a fixed probe (host `vm`, no live
/// processes).
pub fn fixture_snapshot(name: &str) -> Snapshot {
    let (_dir, mut store) = fixture_store(name);
    let mut probe = FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    store.snapshot(&mut probe).expect("snapshot")
}

/// Render with `draw` into a `width` x `height` test terminal; the buffer as
/// text, one quoted line per row (ratatui's `TestBackend` display).
pub fn render(width: u16, height: u16, draw: impl FnOnce(&mut ratatui::Frame)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal.draw(draw).expect("draw");
    if width == 0 {
        // TestBackend's display cannot show a zero-width buffer.
        return String::new();
    }
    terminal.backend().to_string()
}

/// The whole console drawn at `width` x `height`.
pub fn render_app(app: &App, width: u16, height: u16) -> String {
    render(width, height, |f| ui::draw(f, app))
}

/// One pane alone, filling the whole test terminal.
pub fn render_pane(
    app: &App,
    width: u16,
    height: u16,
    pane: fn(&mut ratatui::Frame, Rect, &App),
) -> String {
    render(width, height, |f| pane(f, f.area(), app))
}

/// A key press with no modifier.
pub fn key(code: KeyCode) -> Event {
    Event::Input(crossterm::event::Event::Key(KeyEvent::new(
        code,
        KeyModifiers::NONE,
    )))
}

/// Press `code` at [`CAPTURE`].
pub fn press(app: &mut App, code: KeyCode) -> Option<Effect> {
    app.handle(key(code), CAPTURE)
}

/// Move the instance selection to `name`: `g` to the first row, then `j`
/// until there (in table order: sorted and filtered).
pub fn select(app: &mut App, name: &str) {
    press(app, KeyCode::Char('g'));
    for _ in 0..app.visible().len() {
        if app.selected_instance().map(|i| i.name.as_str()) == Some(name) {
            return;
        }
        press(app, KeyCode::Char('j'));
    }
    assert_eq!(
        app.selected_instance().map(|i| i.name.as_str()),
        Some(name),
        "could not select {name}"
    );
}

/// Hand `app` the I/O worker's answer, as the render loop does: through
/// [`App::handle`], at the app's own time.
pub trait Answers {
    /// Apply `answer` (an [`Event::Answer`]).
    fn answer(&mut self, answer: stackless_tui::event::Answer);
}

impl Answers for App {
    fn answer(&mut self, answer: stackless_tui::event::Answer) {
        let now = self.now();
        let effect = self.handle(Event::Answer(answer), now);
        assert_eq!(effect, None, "an answer asks for nothing");
    }
}
