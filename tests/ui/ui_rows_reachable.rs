//! Every table row reachable and the hidden ones counted: random
//! snapshots, pane sizes and keys (a seeded loop, the same on every run);
//! after each step the Instances pane draws the selection, and the rows it
//! draws plus the `↑ N more` / `↓ N more` of its bottom border are exactly
//! the rows its filter shows. The Operations pane's layout is checked the
//! same way over random queues, sizes, selections and stale offsets.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{press, render_pane};
use crossterm::event::KeyCode;

use stackless_tui::event::Event;
use stackless_tui::model::{Rows, Snapshot};
use stackless_tui::ui::panes::operations::OpsLayout;
use stackless_tui::ui::{App, AppConfig, panes};

/// xorshift64*: a fixed sequence, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn config() -> AppConfig {
    AppConfig {
        store_label: "/s/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(60),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    }
}

fn snapshot(rng: &mut Rng, count: u64) -> Arc<Snapshot> {
    let instances: Vec<_> = (0..count)
        .map(|i| {
            crate::common::builders::instance(&format!("i{i:03}"))
                .lease(
                    3600,
                    CAPTURE - 1800 + i64::try_from(rng.below(7200)).unwrap(),
                )
                .build()
        })
        .collect();
    Arc::new(Snapshot::from(Rows {
        instances: instances.into(),
        ..Rows::default()
    }))
}

/// `(above, drawn, below, selection drawn)` of the Instances pane drawn
/// `width` x `height`.
fn counts(app: &App, width: u16, height: u16) -> (usize, usize, usize, bool) {
    let text = render_pane(app, width, height, panes::instances::render);
    let lines: Vec<&str> = text.lines().collect();
    let bottom = lines.last().copied().unwrap_or_default();
    let number = |arrow: &str| {
        bottom.find(arrow).map_or(0, |at| {
            bottom[at + arrow.len()..]
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        })
    };
    // Rows between the header row and the bottom border.
    let data = &lines[2.min(lines.len())..lines.len().saturating_sub(1)];
    let drawn = data
        .iter()
        .filter(|l| l.trim_matches(['"', '│', '║', ' ']).starts_with(['▶', 'i']))
        .count();
    let selected = data.iter().any(|l| l.contains('▶'));
    (number("↑ "), drawn, number("↓ "), selected)
}

#[test]
fn every_instance_row_is_reachable_and_the_hidden_ones_counted() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let keys = [
        KeyCode::Char('j'),
        KeyCode::Char('k'),
        KeyCode::Char('g'),
        KeyCode::Char('G'),
        KeyCode::PageDown,
        KeyCode::PageUp,
    ];
    for round in 0..25 {
        let mut app = App::new(config(), CAPTURE);
        let mut len = 1 + rng.below(60);
        app.handle(Event::Snapshot(snapshot(&mut rng, len)), CAPTURE);
        for step in 0..40 {
            match rng.below(10) {
                // A new snapshot: rows come and go (the sort moves them).
                0 => {
                    len = 1 + rng.below(60);
                    app.handle(Event::Snapshot(snapshot(&mut rng, len)), CAPTURE);
                }
                _ => {
                    let key = keys[usize::try_from(rng.below(keys.len() as u64)).unwrap()];
                    press(&mut app, key);
                }
            }
            let width = 60 + u16::try_from(rng.below(80)).unwrap();
            let height = 4 + u16::try_from(rng.below(36)).unwrap();
            let (above, drawn, below, selected) = counts(&app, width, height);
            let len = usize::try_from(len).unwrap();
            assert_eq!(
                above + drawn + below,
                len,
                "round {round} step {step}: {width}x{height}, {len} rows\n{}",
                render_pane(&app, width, height, panes::instances::render)
            );
            assert!(
                selected,
                "round {round} step {step}: the selection is not drawn\n{}",
                render_pane(&app, width, height, panes::instances::render)
            );
            // No room to spare while rows are hidden above.
            let room = usize::from(height) - 3;
            assert!(above == 0 || drawn == room, "round {round} step {step}");
        }
    }
}

#[test]
fn every_operation_is_drawn_or_counted_whatever_the_offset_before() {
    let mut rng = Rng(0x0fe5_7a7e_0000_0002);
    for case in 0..20_000 {
        let len = 1 + usize::try_from(rng.below(80)).unwrap();
        let pending = usize::try_from(rng.below(len as u64 + 1)).unwrap();
        let rows = usize::try_from(rng.below(30)).unwrap();
        let selected = usize::try_from(rng.below(len as u64)).unwrap();
        // The last frame's offset, stale: any value, even past the end.
        let previous = usize::try_from(rng.below(len as u64 + 10)).unwrap();
        let layout = OpsLayout::new(previous, selected, pending, len, rows);
        let drawn = layout.shown().filter(|&i| i < len).count();
        let (above, below) = layout.hidden(len);
        assert_eq!(
            above + drawn + below,
            len,
            "case {case}: {layout:?} len {len} pending {pending} rows {rows} selected {selected}"
        );
        if rows >= 2 {
            assert!(
                layout.position(selected).is_some(),
                "case {case}: selected {selected} not drawn: {layout:?} len {len} pending {pending} rows {rows}"
            );
        }
        if len <= rows {
            assert_eq!((above, below), (0, 0), "case {case}: {layout:?}");
        }
        assert!(drawn <= rows, "case {case}: {layout:?} rows {rows}");
        // A finished one selected that fits in the window with the newest
        // finished: the newest is drawn, whatever the offset before.
        if selected >= pending && pending < len && selected - pending < layout.window {
            assert!(
                layout.position(pending).is_some(),
                "case {case}: the newest finished hidden: {layout:?} len {len} pending {pending} rows {rows} selected {selected} previous {previous}"
            );
        }
    }
}
