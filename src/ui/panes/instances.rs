//! The Instances pane: one row per instance (NAME, ST, SUBSTRATE, STATUS,
//! LEASE, LOCK, REAP), filtered (`/`) and sorted (`s`) through the app's
//! row index. Only the rows that fit are built, so a 100,000-instance store
//! costs the same per frame as an 8-instance one.

use std::fmt::Write as _;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};
use unicode_width::UnicodeWidthStr;

use super::{HIGHLIGHT_SYMBOL, focused, pane_block, scroll_window};
use crate::model::text::sanitize_short;
use crate::ui::app::{App, Focus};
use crate::ui::theme;
use crate::ui::view::{self, CUT_SHORT, InstanceRow, LeaseState, LockState};

/// Column headers, in order.
pub const HEADERS: [&str; 7] = ["NAME", "ST", "SUBSTRATE", "STATUS", "LEASE", "LOCK", "REAP"];

const SPACING: u16 = super::TABLE_SPACING;

/// Drawn before a marked instance's name (`space`, Ctrl-A).
pub const MARK: &str = "●";

/// The headers as drawn in columns `widths` wide: [`HEADERS`] with `▲`
/// (or `▼`, high to low) after the sorted column's; where the column is too
/// narrow for both, the mark takes the header's last letter (`REA▼`), so it
/// is never cut away.
#[must_use]
pub fn headers(app: &App, widths: &[u16; 7]) -> [String; 7] {
    let column = app.sort().column();
    let mark = if app.sort_descending() { '▼' } else { '▲' };
    std::array::from_fn(|i| {
        let header = HEADERS[i];
        if i != column {
            return header.to_owned();
        }
        let room = usize::from(widths[i]).saturating_sub(1);
        let mut text: String = header.chars().take(room).collect();
        text.push(mark);
        text
    })
}

/// The cursor drawn at the end of the filter prompt.
pub const PROMPT_CURSOR: &str = "▏";

/// The title's counts: `3 of 11 match "ren" · row 1` with a filter,
/// `1 of 8` without, then the store-wide `· 6 active (1 expired) · 2
/// tombstoned`.
#[must_use]
pub fn title_suffix(app: &App) -> String {
    let total = app.snapshot().instances.len();
    let len = app.visible().len();
    let counts = app.counts();
    let mut suffix = if !app.filter().is_empty() {
        let mut s = format!(
            "{len} of {total} match \"{}\"",
            sanitize_short(app.filter(), CUT_SHORT)
        );
        if len > 0 {
            let _ = write!(s, " · row {}", app.selected_index() + 1);
        }
        s
    } else if len == 0 {
        String::from("(0)")
    } else {
        format!("{} of {len}", app.selected_index() + 1)
    };
    if !app.marks().is_empty() {
        let _ = write!(suffix, " · {} marked", app.marks().len());
    }
    if total > 0 {
        let _ = write!(suffix, " · {} active", counts.active);
        if counts.expired > 0 {
            let _ = write!(suffix, " ({} expired)", counts.expired);
        }
        let _ = write!(suffix, " · {} tombstoned", counts.tombstoned);
    }
    suffix
}

fn title_line(app: &App, is_focused: bool) -> Line<'static> {
    let name_style = if is_focused {
        theme::focused_border()
    } else {
        Style::new().add_modifier(Modifier::BOLD)
    };
    let mut spans = vec![Span::styled(" Instances ", name_style)];
    if app.filter_editing() {
        spans.push(Span::styled(
            format!(
                "/{}{PROMPT_CURSOR}",
                sanitize_short(app.filter(), CUT_SHORT)
            ),
            theme::prompt(),
        ));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(
        format!("{} ", title_suffix(app)),
        theme::muted(),
    ));
    Line::from(spans)
}

/// Draw the Instances pane into `area`.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let is_focused = focused(app, Focus::Instances);
    let snapshot = app.snapshot();
    let instances = &snapshot.instances;
    let visible = app.visible();
    let len = visible.len();
    let block = pane_block(title_line(app, is_focused), is_focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if len == 0 {
        let text = if let Some(error) = app.filter_error() {
            format!("filter: {}", sanitize_short(error, CUT_SHORT * 2))
        } else if !app.loaded() {
            "reading the store…".to_owned()
        } else if instances.is_empty() {
            "no instances in this store".to_owned()
        } else {
            format!(
                "no instance matches \"{}\" (Esc clears the filter)",
                sanitize_short(app.filter(), CUT_SHORT)
            )
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
    let now = app.now();
    let built: Vec<InstanceRow> = visible[offset..end]
        .iter()
        .filter_map(|&p| instances.get(p as usize))
        .map(|i| {
            let row = view::instance_row(
                i,
                snapshot.lock_liveness(&i.name),
                snapshot.reap_attempt(&i.name),
                now,
            )
            .with_pending(snapshot.pending_operation(&i.name), now)
            // The counts may lag a teardown by a few seconds: active only.
            .with_dead_services(if i.status == crate::model::Status::Active {
                snapshot.dead_services(&i.name)
            } else {
                0
            });
            marked(row, app.is_marked(&i.name))
        })
        .collect();
    let widths = column_widths(inner.width, &built);
    let rows: Vec<Row> = built.into_iter().map(|r| row(r, widths)).collect();
    let headers = headers(app, &widths);
    let headers: [&str; 7] = std::array::from_fn(|i| headers[i].as_str());
    super::render_table(
        frame,
        inner,
        &headers,
        rows,
        &widths,
        selected - offset,
        is_focused,
    );
}

/// `row` with [`MARK`] before its name when `marked`.
fn marked(mut row: InstanceRow, marked: bool) -> InstanceRow {
    if marked {
        row.name = format!("{MARK} {}", row.name);
    }
    row
}

fn row(r: InstanceRow, widths: [u16; 7]) -> Row<'static> {
    let cell = |text: String, i: usize| -> Cell<'static> {
        Cell::from(view::fit(&text, usize::from(widths[i])).into_owned())
    };
    let lease_style = match r.lease_state {
        LeaseState::Expired => theme::expired(),
        _ => Style::new(),
    };
    let lock_style = match r.lock_state {
        _ if r.dead_services > 0 => theme::failure(),
        LockState::Held => theme::lock_held(),
        LockState::Free if r.pending => theme::lock_held(),
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
        cell(r.state, 1).style(theme::state_marks()),
        cell(r.substrate, 2),
        cell(r.status, 3).style(status_style),
        cell(r.lease, 4).style(lease_style),
        cell(r.lock, 5).style(lock_style),
        cell(r.reap, 6).style(reap_style),
    ])
    .style(row_style)
}

/// Column widths (in [`HEADERS`] order) for a table `width` columns wide
/// showing `rows`: fixed ST,
/// SUBSTRATE, STATUS, LEASE and REAP (SUBSTRATE narrower below ~90 columns), the rest
/// shared by NAME and LOCK, LOCK first up to its longest visible text but
/// NAME never squeezed below two fifths of the share (or 12 columns).
#[must_use]
pub fn column_widths(width: u16, rows: &[InstanceRow]) -> [u16; 7] {
    let symbol = u16::try_from(HIGHLIGHT_SYMBOL.width()).unwrap_or(2);
    let state = 3;
    let available = width.saturating_sub(symbol + SPACING * 6 + state);
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
    [name, state, substrate, status, lease, lock, reap]
}
