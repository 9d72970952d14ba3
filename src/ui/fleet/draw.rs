//! The fleet view's frame. Top to bottom: the header (the fleet's counts,
//! the sort, the filter; below 30 rows also one line of hosts), the Hosts
//! pane (30 rows and more), Instances (HOST first), a row with Operations
//! and Backoffs, Activity, and the footer (the prompt, the flash or the
//! keys). A text view (detail, logs, a line whole, help) replaces the
//! panes; a question is drawn over them. Everything from a host is
//! sanitized here, as it is drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table};
use unicode_width::UnicodeWidthStr as _;

use super::cells::{host_style, row_style, state_text, window};
use super::{FleetApp, Focus, Layer, TextView};
use crate::model::fleet::{Activity, Host, LinkState};
use crate::model::text::sanitize_short;
use crate::model::time;
use crate::ui::panes::{HIGHLIGHT_SYMBOL, pane_block, title, whole_items};
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

/// Draw the fleet view on `frame` at `now_ms` (unix milliseconds).
pub fn draw(frame: &mut Frame, app: &FleetApp, now_ms: i64) {
    let now = now_ms.div_euclid(1000);
    let area = frame.area();
    if area.width < 60 || area.height < 16 {
        let text = format!(
            "the fleet view needs 60x16; this terminal is {}x{}",
            area.width, area.height
        );
        frame.render_widget(Paragraph::new(text), area);
        return;
    }
    let small = area.height < HOSTS_PANE_MIN_HEIGHT;
    let [header, body, footer] = frame_areas(area);
    draw_header(frame, header, app, now, small);
    draw_footer(frame, footer, app);
    app.drawn_panes.replace(Vec::new());
    if let Some(Layer::Text(view)) = app.layer() {
        draw_text(frame, body, view);
        return;
    }
    if app.zoomed() {
        app.drawn_panes.replace(vec![(app.focus(), body)]);
        // `z`: the focused pane alone, between header and footer.
        match app.focus() {
            Focus::Instances => super::instances::draw_instances(frame, body, app, now),
            Focus::Operations => draw_operations(frame, body, app, now),
            Focus::Backoffs => draw_backoffs(frame, body, app, now),
            Focus::Activity => draw_activity(frame, body, app),
            Focus::Hosts => draw_hosts(frame, body, app, now),
        }
        return;
    }
    let hosts_height = if small {
        0
    } else {
        u16::try_from(app.fleet().hosts.len())
            .unwrap_or(u16::MAX)
            .saturating_add(3)
            .min(10)
    };
    let lower = if small { 6 } else { 8 };
    let activity = if small { 5 } else { 8 };
    let [hosts, instances, row, activity_area] = Layout::vertical([
        Constraint::Length(hosts_height),
        Constraint::Min(4),
        Constraint::Length(lower),
        Constraint::Length(activity),
    ])
    .areas(body);
    if !small {
        draw_hosts(frame, hosts, app, now);
    }
    super::instances::draw_instances(frame, instances, app, now);
    let [operations, backoffs] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(row);
    draw_operations(frame, operations, app, now);
    draw_backoffs(frame, backoffs, app, now);
    draw_activity(frame, activity_area, app);
    app.drawn_panes.replace(vec![
        (Focus::Hosts, hosts),
        (Focus::Instances, instances),
        (Focus::Operations, operations),
        (Focus::Backoffs, backoffs),
        (Focus::Activity, activity_area),
    ]);
}

fn draw_header(frame: &mut Frame, area: Rect, app: &FleetApp, now: i64, small: bool) {
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
    if app.mark_count() > 0 {
        items.push(format!("{} marked", app.mark_count()));
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

/// The logs view's search prompt, or its kept search and its keys.
fn search_line(search: &super::Search, width: usize) -> Line<'static> {
    let text = sanitize_short(&search.text, 256);
    let words = if search.editing {
        format!("search: {text}▏ (Enter finds the newest match, Esc clears)")
    } else {
        format!("search: {text} · n older · N newer · Esc clears")
    };
    Line::styled(fit(&words, width).into_owned(), theme::prompt())
}

/// The filter prompt as the footer's line over a fleet: the App's filter
/// text being typed (`/text▏ (Enter keeps, Esc clears)`).
pub fn draw_filter_prompt(frame: &mut Frame, area: Rect, text: &str) {
    let line = Line::styled(
        fit(
            &format!("/{}▏ (Enter keeps, Esc clears)", sanitize_short(text, 512)),
            usize::from(area.width),
        )
        .into_owned(),
        theme::prompt(),
    );
    frame.render_widget(ratatui::widgets::Clear, area);
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_footer(frame: &mut Frame, area: Rect, app: &FleetApp) {
    let width = usize::from(area.width);
    let line = match app.layer() {
        Some(Layer::Text(view)) if let Some(search) = &view.search => search_line(search, width),
        Some(Layer::Text(_)) => Line::styled(
            "↑↓ jk scroll · PgUp/PgDn · g/G · Esc back".to_owned(),
            theme::key(),
        ),
        _ => {
            let mut keys = Vec::new();
            if !app.filter_text().is_empty() {
                keys.push(format!("filter: {}", sanitize_short(app.filter_text(), 64)));
            }
            keys.extend(
                [
                    "Enter detail",
                    "l logs",
                    "r reap",
                    "d down",
                    "/ filter",
                    "s sort",
                    "Space mark",
                    "P/R reaper",
                    ": cmd",
                    "Tab pane",
                    "? help",
                    "q quit",
                ]
                .map(str::to_owned),
            );
            Line::styled(whole_items(&keys, width), theme::key())
        }
    };
    frame.render_widget(Paragraph::new(line), area);
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

fn draw_hosts(frame: &mut Frame, area: Rect, app: &FleetApp, now: i64) {
    let fleet = app.fleet();
    let focused = app.focus() == Focus::Hosts;
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
    let cursor = app.cursor(Focus::Hosts);
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

fn list_pane(
    frame: &mut Frame,
    area: Rect,
    app: &FleetApp,
    (name, suffix, focus): (&str, &str, Focus),
    lines: Vec<Line<'static>>,
) {
    let focused = app.focus() == focus;
    let block = pane_block(title(name, suffix, focused), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let cursor = app.cursor(focus);
    let first = window(cursor, lines.len(), height);
    let width = usize::from(inner.width);
    let shown: Vec<Line> = lines
        .into_iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, line)| {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let style = line.spans.first().map(|s| s.style).unwrap_or_default();
            let marker = if i == cursor && focused {
                HIGHLIGHT_SYMBOL
            } else {
                "  "
            };
            Line::styled(
                fit(&format!("{marker}{text}"), width).into_owned(),
                style.patch(row_style(i == cursor, focused)),
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

fn draw_operations(frame: &mut Frame, area: Rect, app: &FleetApp, now: i64) {
    let operations = app.operations();
    let pending = operations.iter().filter(|(_, op)| op.pending()).count();
    let lines = operations
        .iter()
        .map(|(host, op)| {
            let when = if op.pending() {
                time::ago(op.created_at, now)
            } else {
                time::ago(op.updated_at, now)
            };
            let text = format!(
                "{} {} {} {} {when}{}",
                sanitize_short(&app.fleet().hosts[*host].name, 64),
                sanitize_short(&op.verb, 16),
                sanitize_short(&op.instance, 96),
                sanitize_short(&op.status, 16),
                op.error
                    .as_deref()
                    .map(|e| format!(" · {}", sanitize_short(e, 200)))
                    .unwrap_or_default()
            );
            let style = match op.status.as_str() {
                "failed" | "interrupted" => theme::failure(),
                "queued" | "running" => Style::new().add_modifier(Modifier::BOLD),
                _ => theme::muted(),
            };
            Line::styled(text, style)
        })
        .collect();
    let suffix = format!("{pending} pending · {} shown", operations.len());
    list_pane(
        frame,
        area,
        app,
        ("Operations", &suffix, Focus::Operations),
        lines,
    );
}

fn draw_backoffs(frame: &mut Frame, area: Rect, app: &FleetApp, now: i64) {
    let backoffs = app.backoffs();
    let lines = backoffs
        .iter()
        .map(|(host, b)| {
            let text = format!(
                "{} {} ×{} {} · {}",
                sanitize_short(&app.fleet().hosts[*host].name, 64),
                sanitize_short(&b.instance, 96),
                b.attempts,
                time::retry_text(b.next_retry_at, now),
                sanitize_short(&b.summary, 200)
            );
            Line::styled(
                text,
                if b.next_retry_at <= now {
                    theme::due()
                } else {
                    Style::new()
                },
            )
        })
        .collect();
    let suffix = format!("{}", backoffs.len());
    list_pane(
        frame,
        area,
        app,
        ("Backoffs", &suffix, Focus::Backoffs),
        lines,
    );
}

/// One Activity line as drawn: `HH:MM:SS HOST actor instance kind detail`.
#[must_use]
pub(crate) fn activity_text(app: &FleetApp, activity: &Activity) -> String {
    let host = app
        .fleet()
        .hosts
        .get(activity.host)
        .map(|h| sanitize_short(&h.name, 64))
        .unwrap_or_default();
    let mut text = format!(
        "{} {host} {} {} {}",
        time::clock_in(activity.at, app.zone()),
        sanitize_short(&activity.actor, 16),
        sanitize_short(&activity.instance, 96),
        sanitize_short(&activity.kind, 32),
    );
    if !activity.detail.is_empty() {
        text.push_str(": ");
        text.push_str(&sanitize_short(&activity.detail, 400));
    }
    text
}

fn draw_activity(frame: &mut Frame, area: Rect, app: &FleetApp) {
    let lines = app
        .fleet()
        .activity
        .iter()
        .rev()
        .map(|a| {
            let style = match a.kind.as_str() {
                "failed" | "refused" | "stopped" => theme::failure(),
                "reaped" | "torn down" => Style::new().add_modifier(Modifier::BOLD),
                _ => Style::new(),
            };
            Line::styled(activity_text(app, a), style)
        })
        .collect();
    let suffix = format!("{} · newest first", app.fleet().activity.len());
    list_pane(
        frame,
        area,
        app,
        ("Activity", &suffix, Focus::Activity),
        lines,
    );
}

/// `line` in rows of at most `width` columns (a long line wraps, never
/// cut: a host's whole error, a detail line).
/// `line` in rows of at most `width` columns, broken at spaces where it
/// can (a word longer than a row is cut inside: `model::fulltext::wrap`);
/// a labelled line (`error: ...`, `name: ...`, a label of at most 24
/// columns) continues under its value, as the console's full-text view
/// indents it.
fn wrapped(line: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let indent = line
        .find(": ")
        .map(|at| at + 2)
        .filter(|at| *at <= 24 && at + 16 <= width && line.is_char_boundary(*at))
        .filter(|at| {
            line[..*at]
                .chars()
                .all(|c| c.is_ascii() && !c.is_ascii_control())
        })
        .unwrap_or(0);
    let (head, rest) = line.split_at(indent);
    crate::model::fulltext::wrap(rest, width - indent)
        .into_iter()
        .enumerate()
        .map(|(n, piece)| {
            if n == 0 {
                format!("{head}{piece}")
            } else {
                format!("{:indent$}{piece}", "")
            }
        })
        .collect()
}

fn draw_text(frame: &mut Frame, area: Rect, view: &TextView) {
    let block = pane_block(title(&view.title, "", true), true);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let width = usize::from(inner.width);
    // Each line's rows, and where the line at `scroll` starts.
    let scroll = view.scroll.min(view.lines.len().saturating_sub(1));
    let mut rows = Vec::new();
    let mut start = 0;
    for (i, line) in view.lines.iter().enumerate() {
        if i == scroll {
            start = rows.len();
        }
        rows.extend(wrapped(line, width));
    }
    let first = if view.follow {
        rows.len().saturating_sub(height)
    } else {
        start
    };
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(first)
        .take(height)
        .map(Line::raw)
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
