//! The Instances pane over a fleet of two or more hosts: every host's instances, HOST first;
//! HOST and NAME never cut (SUBSTRATE and LOCK give way first, then
//! STATUS and LEASE share what is left), a stale or failed host's rows
//! dimmed with its state in their HOST cell.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Paragraph, Row, Table};
use unicode_width::UnicodeWidthStr as _;

use crate::model::fleet::LinkState;
use crate::model::fleet::rows::Instance;
use crate::model::text::sanitize_short;
use crate::model::time;
use crate::ui::app::over_fleet::{FleetMarks, FleetState};
use crate::ui::panes::hosts::{host_style, row_style, state_text, window};
use crate::ui::panes::{HIGHLIGHT_SYMBOL, pane_block, title};
use crate::ui::text::fit;
use crate::ui::theme;

/// The Instances table's column headers.
pub(crate) const HEADERS: [&str; 7] = [
    "HOST",
    "NAME",
    "SUBSTRATE",
    "STATUS",
    "LEASE",
    "LOCK",
    "REAP",
];

fn lease_cell(instance: &Instance, now: i64) -> (String, Style) {
    if instance.tombstoned() {
        let text = instance.tombstoned_at.map_or_else(
            || "tombstoned".to_owned(),
            |at| format!("tombstoned {}", time::ago(at, now)),
        );
        return (text, theme::tombstoned());
    }
    if instance.failed_up {
        return ("failed up: no lease".to_owned(), theme::failure());
    }
    match instance.lease {
        Some(lease) if lease.expires_at <= now => {
            (time::lease_text(lease.expires_at, now), theme::expired())
        }
        Some(lease) => (time::lease_text(lease.expires_at, now), Style::new()),
        None => ("no lease".to_owned(), Style::new()),
    }
}

fn lock_cell(instance: &Instance) -> (String, Style) {
    let Some(lock) = &instance.lock else {
        return (String::new(), Style::new());
    };
    let text = format!(
        "{} by pid {}, {}",
        sanitize_short(&lock.operation, 32),
        lock.holder_pid,
        sanitize_short(&lock.liveness, 32).replace('_', " ")
    );
    let style = if lock.held {
        theme::lock_held()
    } else {
        theme::lock_stale()
    };
    (text, style)
}

/// One Instances row as drawn: its cells (text, style), dimmed (its host
/// is not connected), selected.
struct Drawn {
    cells: [(String, Style); 7],
    dim: Style,
    chosen: bool,
}

/// The cells of instance `index` of host `host` at `now`.
fn instance_cells(
    app: &FleetState,
    marks: &FleetMarks,
    (host, index): (usize, usize),
    now: i64,
) -> [(String, Style); 7] {
    let one = &app.fleet().hosts[host];
    let instance = &one.instances()[index];
    let mark = if marks.contains(&(host, instance.key.clone())) {
        "● "
    } else {
        ""
    };
    // Leases count down on the host's clock: its reaper reads it.
    let (lease, lease_style) = lease_cell(instance, one.host_now(now));
    let (mut lock, lock_style) = lock_cell(instance);
    // Dead service processes lead the LOCK text, as on one host
    // (`1 svc dead`, `2 svc dead; up by pid 4242, alive`).
    if instance.services_dead > 0 {
        let dead = format!("{} svc dead", instance.services_dead);
        lock = if lock.is_empty() {
            dead
        } else {
            format!("{dead}; {lock}")
        };
    }
    let reap = one
        .backoff(&instance.key.name)
        .map(|b| b.attempts.to_string())
        .unwrap_or_default();
    let status = sanitize_short(&instance.status, 32);
    let host_cell = match one.link.state {
        LinkState::Connected => sanitize_short(&one.name, 64),
        _ => format!(
            "{} ({})",
            sanitize_short(&one.name, 64),
            state_text(one, now)
        ),
    };
    [
        (host_cell, host_style(one)),
        (
            format!("{mark}{}", sanitize_short(&instance.key.name, 96)),
            Style::new(),
        ),
        (sanitize_short(&instance.substrate, 32), Style::new()),
        (status, Style::new()),
        (lease, lease_style),
        (lock, lock_style),
        (reap, Style::new()),
    ]
}

/// Draw the merged Instances table of `app`'s fleet into `area` at `now`
/// (unix seconds), `focused` as the App's focus says: HOST first, then
/// the console's columns.
pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    app: &FleetState,
    (marks, focused): (&FleetMarks, bool),
    now: i64,
) {
    let rows = app.rows();
    let fleet = app.fleet();
    let selected = app.selected();
    let total: usize = fleet.hosts.iter().map(|h| h.instances().len()).sum();
    let mut suffix = format!(
        "{}/{}",
        if rows.is_empty() { 0 } else { selected + 1 },
        rows.len()
    );
    if !marks.is_empty() {
        suffix.push_str(&format!(" · {} marked", marks.len()));
    }
    if !app.filter_text().is_empty() {
        suffix.push_str(&format!(
            " · match \"{}\" (filtered from {total})",
            sanitize_short(app.filter_text(), 40)
        ));
    }
    let block = pane_block(title("Instances", &suffix, focused), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height.saturating_sub(1));
    let first = window(selected, rows.len(), height);
    let shown = &rows[first..rows.len().min(first + height)];
    let cells: Vec<Drawn> = shown
        .iter()
        .enumerate()
        .map(|(i, r)| Drawn {
            cells: instance_cells(app, marks, (r.host, r.index), now),
            dim: match fleet.hosts[r.host].link.state {
                LinkState::Connected => Style::new(),
                _ => Style::new().add_modifier(Modifier::DIM),
            },
            chosen: first + i == selected,
        })
        .collect();
    let widths = column_widths(&cells, usize::from(inner.width).saturating_sub(3));
    let header = Row::new(std::iter::once(String::new()).chain(HEADERS.map(str::to_owned)))
        .style(theme::table_header());
    let table_rows = cells.into_iter().map(|drawn| {
        let marker = if drawn.chosen && focused {
            HIGHLIGHT_SYMBOL
        } else {
            ""
        };
        // A cell wider than its column ends with `…`, never cut silently.
        let cells = drawn
            .cells
            .into_iter()
            .zip(widths)
            .map(|((text, style), width)| {
                Span::styled(fit(&text, usize::from(width)).into_owned(), style)
            });
        Row::new(std::iter::once(Span::raw(marker)).chain(cells))
            .style(drawn.dim.patch(row_style(drawn.chosen, focused)))
    });
    let mut constraints = vec![Constraint::Length(2)];
    constraints.extend(widths.map(Constraint::Length));
    let table = Table::new(table_rows, constraints)
        .header(header)
        .column_spacing(1);
    frame.render_widget(table, inner);
    let (above, below) = crate::ui::panes::hidden_rows(0, first, height, rows.len());
    crate::ui::panes::render_more(frame, area, above, below);
    if rows.is_empty() {
        let text = if fleet.hosts.iter().all(|h| h.synced_at.is_none()) {
            "waiting for the hosts' first snapshots…"
        } else if app.filter_text().is_empty() {
            "no instance on any host"
        } else {
            "no instance matches the filter (Esc clears it)"
        };
        let line = Rect {
            y: inner.y.saturating_add(1),
            height: 1,
            ..inner
        };
        frame.render_widget(Paragraph::new(text).style(theme::muted()), line);
    }
}

/// Column widths for `cells` in `room` columns: HOST and NAME whole (as
/// wide as their widest shown cell), then STATUS, LEASE and REAP, then
/// LOCK (as wide as its widest shown cell) and SUBSTRATE share the
/// rest, SUBSTRATE giving way first (down to nothing); LOCK takes what is
/// left; with no room left for them, STATUS and LEASE share what there is.
fn column_widths(cells: &[Drawn], room: usize) -> [u16; 7] {
    let widest = |i: usize, min: usize| {
        cells
            .iter()
            .map(|d| d.cells[i].0.width())
            .max()
            .unwrap_or(0)
            .max(min)
    };
    let host = widest(0, 4);
    let name = widest(1, 4);
    let substrate_full = widest(2, 9);
    let mut status = widest(3, 6);
    let mut lease = widest(4, 5);
    let lock_need = widest(5, 4);
    let reap = 4;
    let spacing = 6;
    let left = room.saturating_sub(host + name + reap + spacing);
    let (substrate, lock) = if left >= status + lease {
        let left = left - status - lease;
        let substrate = substrate_full.min(left.saturating_sub(lock_need));
        (substrate, left - substrate)
    } else {
        // No room for SUBSTRATE or LOCK: STATUS and LEASE share what is
        // left (each cut with `…`), HOST and NAME stay whole.
        status = status.min(left.div_ceil(2));
        lease = left - status;
        (0, 0)
    };
    let as_u16 = |w: usize| u16::try_from(w).unwrap_or(u16::MAX);
    [host, name, substrate, status, lease, lock, reap].map(as_u16)
}
