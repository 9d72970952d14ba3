//! The Instances pane: one row per instance (NAME, SUBSTRATE, STATUS, LEASE,
//! LOCK, REAP). Only the rows that fit are built, so a 100,000-instance store
//! costs the same per frame as an 8-instance one.

use std::fmt::Write as _;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use unicode_width::UnicodeWidthStr;

use super::{HIGHLIGHT_SYMBOL, focused, pane_block, scroll_window, title};
use crate::ui::app::{App, Focus};
use crate::ui::theme;
use crate::ui::view::{self, InstanceRow, LeaseState, LockState};

/// Column headers, in order.
pub const HEADERS: [&str; 6] = ["NAME", "SUBSTRATE", "STATUS", "LEASE", "LOCK", "REAP"];

const SPACING: u16 = 1;

/// Draw the Instances pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let is_focused = focused(app, Focus::Instances);
    let instances = &app.snapshot().instances;
    let len = instances.len();
    let counts = app.counts();
    let mut position = if len == 0 {
        String::from("(0)")
    } else {
        format!("{} of {len}", app.selected_index() + 1)
    };
    if len > 0 {
        let _ = write!(position, " · {} active", counts.active);
        if counts.expired > 0 {
            let _ = write!(position, " ({} expired)", counts.expired);
        }
        let _ = write!(position, " · {} tombstoned", counts.tombstoned);
    }
    let block = pane_block(title("Instances", &position, is_focused), is_focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if len == 0 {
        let text = if app.loaded() {
            "no instances in this store"
        } else {
            "reading the store…"
        };
        frame.render_widget(Paragraph::new(Line::styled(text, theme::muted())), inner);
        return;
    }
    let rows_fit = usize::from(inner.height.saturating_sub(1));
    let mut viewport = app.viewport.get();
    let selected = app.selected_index().min(len - 1);
    let offset = scroll_window(viewport.instances_offset, selected, len, rows_fit);
    viewport.instances_offset = offset;
    viewport.instances_rows = rows_fit;
    app.viewport.set(viewport);

    let end = (offset + rows_fit).min(len);
    let snapshot = app.snapshot();
    let now = app.now();
    let built: Vec<InstanceRow> = instances[offset..end]
        .iter()
        .map(|i| {
            view::instance_row(
                i,
                snapshot.lock_liveness(&i.name),
                snapshot.reap_attempt(&i.name),
                now,
            )
        })
        .collect();
    let widths = column_widths(inner.width, &built);
    let rows: Vec<Row> = built.into_iter().map(|r| row(r, widths)).collect();
    let header = Row::new(
        HEADERS
            .iter()
            .zip(widths)
            .map(|(h, w)| Cell::from(view::fit(h, usize::from(w)))),
    )
    .style(theme::table_header());
    let table = Table::new(rows, widths.map(Constraint::Length))
        .header(header)
        .column_spacing(SPACING)
        .highlight_symbol(HIGHLIGHT_SYMBOL)
        .highlight_spacing(HighlightSpacing::Always)
        .row_highlight_style(if is_focused {
            theme::selected_focused()
        } else {
            theme::selected_unfocused()
        });
    let mut state = TableState::default().with_selected(Some(selected - offset));
    frame.render_stateful_widget(table, inner, &mut state);
}

fn row(r: InstanceRow, widths: [u16; 6]) -> Row<'static> {
    let cell = |text: String, i: usize| -> Cell<'static> {
        Cell::from(view::fit(&text, usize::from(widths[i])).into_owned())
    };
    let lease_style = match r.lease_state {
        LeaseState::Expired => theme::expired(),
        _ => Style::new(),
    };
    let lock_style = match r.lock_state {
        LockState::Held => theme::lock_held(),
        LockState::Stale | LockState::Unprobed => theme::lock_stale(),
        LockState::Free => Style::new(),
    };
    let status_style = if r.unknown_status {
        theme::unknown_status()
    } else {
        Style::new()
    };
    let reap_style = if r.reap.is_empty() {
        Style::new()
    } else {
        theme::failure()
    };
    let tombstoned = r.tombstoned();
    let row_style = if tombstoned {
        theme::tombstoned()
    } else {
        Style::new()
    };
    Row::new([
        cell(r.name, 0),
        cell(r.substrate, 1),
        cell(r.status, 2).style(status_style),
        cell(r.lease, 3).style(lease_style),
        cell(r.lock, 4).style(lock_style),
        cell(r.reap, 5).style(reap_style),
    ])
    .style(row_style)
}

/// Column widths for a table `width` columns wide showing `rows`: fixed
/// SUBSTRATE, STATUS, LEASE and REAP (SUBSTRATE narrower below ~90 columns), the rest
/// shared by NAME and LOCK, LOCK first up to its longest visible text but
/// NAME never squeezed below two fifths of the share (or 12 columns).
#[must_use]
pub fn column_widths(width: u16, rows: &[InstanceRow]) -> [u16; 6] {
    let symbol = u16::try_from(HIGHLIGHT_SYMBOL.width()).unwrap_or(2);
    let available = width.saturating_sub(symbol + SPACING * 5);
    let (substrate, status, lease, reap) = if available >= 90 {
        (9, 10, 22, 4)
    } else {
        (6, 10, 22, 4)
    };
    let share = available.saturating_sub(substrate + status + lease + reap);
    let widest = |f: fn(&InstanceRow) -> &str| {
        rows.iter()
            .map(|r| f(r).width())
            .max()
            .map_or(0, |w| u16::try_from(w).unwrap_or(u16::MAX))
    };
    let name_need = widest(|r| &r.name).max(4);
    let lock_need = widest(|r| &r.lock).max(4);
    let name = if name_need.saturating_add(lock_need) <= share {
        name_need
    } else {
        name_need
            .min(share.saturating_sub(lock_need).max(share * 2 / 5).max(12))
            .min(share)
    };
    let lock = share - name;
    [name, substrate, status, lease, lock, reap]
}
