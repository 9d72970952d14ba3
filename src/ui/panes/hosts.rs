//! The Hosts pane over a fleet of two or more hosts: one row per host
//! (its link state, schema, counts, who reaps, its last error), and the
//! fleet's header (its counts, the sort; below [`HOSTS_PANE_MIN_HEIGHT`]
//! rows also the hosts as one line, which then stand in for the pane).
//! What the fleet's panes share lives here too: a host's state as words
//! and style, a selected row's style, the first row a pane draws.
//! Everything from a host is sanitized here, as it is drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table};
use unicode_width::UnicodeWidthStr as _;

use super::{pane_block, title, whole_items};
use crate::model::fleet::{Host, LinkState};
use crate::model::text::sanitize_short;
use crate::model::time;
use crate::ui::app::Focus;
use crate::ui::app::over_fleet::FleetState;
use crate::ui::text::fit;
use crate::ui::theme;

/// Below this many rows the Hosts pane becomes one header line.
pub(crate) const HOSTS_PANE_MIN_HEIGHT: u16 = 30;

/// The fleet view's header, body and footer in `area`: the header is two
/// lines below [`HOSTS_PANE_MIN_HEIGHT`] rows (the hosts as one line),
/// else one; the footer one line.
#[must_use]
pub fn frame_areas(area: Rect) -> [Rect; 3] {
    let header_height = if area.height < HOSTS_PANE_MIN_HEIGHT {
        2
    } else {
        1
    };
    Layout::vertical([
        Constraint::Length(header_height),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area)
}

/// The fleet's header in `area` at `now` (unix seconds): its hosts by
/// link state, its instances, the marks, the sort; when `small` (below
/// [`HOSTS_PANE_MIN_HEIGHT`] rows) a second line with every host and its
/// state, in place of the Hosts pane.
pub fn render_header(
    frame: &mut Frame,
    area: Rect,
    (app, marked): (&FleetState, usize),
    now: i64,
    small: bool,
) {
    let fleet = app.fleet();
    let mut states = [0usize; 4];
    let (mut instances, mut expired) = (0, 0);
    for host in &fleet.hosts {
        states[host.link.state as usize] += 1;
        let counts = host.counts(now);
        instances += counts.0;
        expired += counts.2;
    }
    let mut items = vec![format!("stackless-tui fleet: {} hosts", fleet.hosts.len())];
    for (i, word) in ["connecting", "connected", "stale", "failed"]
        .iter()
        .enumerate()
    {
        if states[i] > 0 {
            items.push(format!("{} {word}", states[i]));
        }
    }
    items.push(format!("{instances} instances ({expired} expired)"));
    let (sort, descending) = app.sort();
    if marked > 0 {
        items.push(format!("{marked} marked"));
    }
    items.push(format!(
        "sort: {} {}",
        sort.label(),
        if descending { "▼" } else { "▲" }
    ));
    let width = usize::from(area.width);
    let mut lines = vec![Line::styled(whole_items(&items, width), theme::title())];
    if small {
        let hosts: Vec<Span> = fleet
            .hosts
            .iter()
            .enumerate()
            .flat_map(|(i, host)| {
                let sep = Span::raw(if i == 0 { "" } else { " · " });
                let text = format!(
                    "{} {}",
                    sanitize_short(&host.name, 64),
                    state_text(host, now)
                );
                [sep, Span::styled(text, host_style(host))]
            })
            .collect();
        lines.push(Line::from(hosts));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// One Hosts row: state, schema, counts, who reaps, the last error.
fn host_row(host: &Host, now: i64, error_width: usize, zone: &jiff::tz::TimeZone) -> Row<'static> {
    let (count, _, expired, _) = host.counts(now);
    let synced = host.synced_at.is_some();
    let number = |n: usize| {
        if synced {
            n.to_string()
        } else {
            "-".to_owned()
        }
    };
    let schema = host
        .hello
        .as_ref()
        .map_or_else(|| "-".to_owned(), |h| h.schema.to_string());
    let mut reaper = host.reaper.as_ref().map_or_else(String::new, reaper_text);
    if let Some(left) = host.first_pass_in(now) {
        reaper.push_str(&format!(" first pass in {}", time::span(left)));
    }
    let error = match (&host.link.error, &host.note, &host.last_error) {
        (None, _, _) if host.skew_shown().is_some() => host.skew_text().unwrap_or_default(),
        (Some(error), _, _) => sanitize_short(error, 400),
        (None, Some(note), _) => sanitize_short(note, 400),
        (None, None, Some((at, error))) => {
            format!(
                "{} {}",
                time::clock_in(*at, zone),
                sanitize_short(error, 400)
            )
        }
        _ => String::new(),
    };
    let error = fit(&error, error_width).into_owned();
    let expired_style = if expired > 0 {
        theme::expired()
    } else {
        Style::new()
    };
    Row::new([
        Span::raw(sanitize_short(&host.name, 64)),
        Span::styled(state_text(host, now), host_style(host)),
        Span::raw(schema),
        Span::raw(number(count)),
        Span::styled(number(expired), expired_style),
        Span::raw(number(host.backoffs().count())),
        Span::raw(reaper),
        Span::styled(error, theme::failure()),
    ])
}

/// Draw the Hosts pane of `app`'s fleet into `area`, focused and its
/// cursor as `console` (the App over the fleet) has them, at its clock.
pub fn render(frame: &mut Frame, area: Rect, app: &FleetState, console: &crate::ui::App) {
    let now = console.now();
    let fleet = app.fleet();
    let focused = console.focus() == Focus::Hosts;
    let stale = fleet
        .hosts
        .iter()
        .filter(|h| h.link.state != LinkState::Connected)
        .count();
    let suffix = format!("{} · {stale} not connected", fleet.hosts.len());
    let block = pane_block(title("Hosts", &suffix, focused), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height.saturating_sub(1));
    let cursor = console.fleet_cursor(Focus::Hosts);
    let first = window(cursor, fleet.hosts.len(), height);
    let headers = [
        "HOST",
        "STATE",
        "SCHEMA",
        "INSTANCES",
        "EXPIRED",
        "BACKOFFS",
        "REAPER",
        "LAST ERROR",
    ];
    let host_width = fleet
        .hosts
        .iter()
        .map(|h| sanitize_short(&h.name, 64).width())
        .max()
        .unwrap_or(4)
        .max(4);
    // HOST, STATE 20, SCHEMA 6, INSTANCES 9, EXPIRED 7, BACKOFFS 8, REAPER 22, spacing 8.
    let error_width = usize::from(inner.width)
        .saturating_sub(host_width + 72 + 8)
        .max(10);
    let rows: Vec<Row> = fleet
        .hosts
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, host)| {
            host_row(host, now, error_width, app.zone())
                .style(row_style(i == cursor && focused, focused))
        })
        .collect();
    let widths = [
        Constraint::Length(u16::try_from(host_width).unwrap_or(64)),
        Constraint::Length(20),
        Constraint::Length(6),
        Constraint::Length(9),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(22),
        Constraint::Min(10),
    ];
    let table = Table::new(rows, widths)
        .header(Row::new(headers).style(theme::table_header()))
        .column_spacing(1);
    frame.render_widget(table, inner);
}

/// Who reaps on a host, short: `agent`, `agent (paused)`, `controller
/// pid 77`, `console pid 5`, `nobody`.
fn reaper_text(reaper: &crate::model::fleet::Reaper) -> String {
    let mut text = sanitize_short(&reaper.by, 16);
    if let Some(pid) = reaper.pid
        && reaper.by != "agent"
    {
        text.push_str(&format!(" pid {pid}"));
    }
    if reaper.paused {
        text.push_str(" (paused)");
    }
    text
}

/// A host's state as the Hosts pane says it: `connected 3ms`,
/// `connecting`, `stale 40s` (its rows' age), `failed`.
#[must_use]
pub(crate) fn state_text(host: &Host, now: i64) -> String {
    match host.link.state {
        LinkState::Connected => match host.rtt_ms {
            Some(ms) => format!("connected {ms}ms"),
            None => "connected".to_owned(),
        },
        LinkState::Connecting if host.reconnects > 0 => {
            format!("connecting (retry {})", host.reconnects)
        }
        LinkState::Connecting => "connecting".to_owned(),
        LinkState::Stale => format!(
            "stale {}",
            time::span(now.saturating_sub(host.rows_since()))
        ),
        LinkState::Failed => "failed".to_owned(),
    }
}

/// How a host's rows and state are drawn: dim while it is not connected,
/// the failure style once it failed.
pub(crate) fn host_style(host: &Host) -> Style {
    match host.link.state {
        LinkState::Connected => Style::new(),
        LinkState::Connecting | LinkState::Stale => Style::new().add_modifier(Modifier::DIM),
        LinkState::Failed => theme::failure(),
    }
}

/// The first row to draw so that `selected` shows in `height` rows.
pub(crate) fn window(selected: usize, len: usize, height: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    selected.saturating_sub(height - 1).min(len - height)
}

/// A row's style: reversed when selected in the focused pane, bold when
/// selected elsewhere.
pub(crate) fn row_style(selected: bool, focused: bool) -> Style {
    match (selected, focused) {
        (true, true) => theme::selected_focused(),
        (true, false) => Style::new().add_modifier(Modifier::BOLD),
        _ => Style::new(),
    }
}
