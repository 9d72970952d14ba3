//! The operation overlay (Enter on the Operations pane): everything the
//! store says about one operation (id, verb, instance, birth, status,
//! times, the queue wait apart from the run, progress, cancel, and for a
//! failure its code, message and remediation), then every step event in
//! the order written, each with its time and duration (like `stackless
//! operation wait`), live from the snapshot and the events read for it,
//! drawn over the panes.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::centered;
use crate::model::Operation;
use crate::model::fulltext::wrap;
use crate::model::op_rules::short_id;
use crate::model::text::sanitize_short;
use crate::ui::app::{App, OpEvents};
use crate::ui::opview;
use crate::ui::text::{CUT_LONG, CUT_SHORT};
use crate::ui::theme;

/// Width of the label column.
const LABEL: usize = 13;

/// The label of the events section's first line.
const EVENTS: &str = "events";

/// The overlay's lines as plain text (for `op` and its `events`, or a
/// notice when the operation `id` is no longer in the snapshot), times in
/// `zone`.
#[must_use]
pub fn lines(
    id: &str,
    op: Option<&Operation>,
    events: Option<&OpEvents>,
    now: i64,
    zone: &jiff::tz::TimeZone,
) -> Vec<String> {
    lines_of(id, op, events, now, zone)
        .into_iter()
        .map(|(label, text)| {
            if op.is_none() {
                text
            } else {
                format!("{label:<LABEL$} {text}")
            }
        })
        .collect()
}

/// Draw the overlay for operation `id` (`op` as in the current snapshot)
/// centred in `area`: each value wrapped under its label, the box as tall
/// as the wrapped text (up to the whole area). The events scroll
/// ([`App::operation_scroll`]; the newest while it follows them), the
/// title saying which are shown: `events 12-24 of 40`.
pub fn render(frame: &mut Frame, area: Rect, app: &App, id: &str, op: Option<&Operation>) {
    let width = area.width.saturating_sub(4).min(110);
    // Inside the borders, after " {label} ".
    let value_width = usize::from(width.saturating_sub(2)).saturating_sub(LABEL + 2);
    let mut lines: Vec<Line> = Vec::new();
    // Where the event rows begin (after the events heading), and the event
    // each of them shows (an event may wrap to several rows).
    let mut events_from = None;
    let mut event_of_row: Vec<usize> = Vec::new();
    for (label, value) in lines_of(id, op, app.operation_events(), app.now(), app.zone()) {
        let pieces = wrap(&value, value_width);
        if events_from.is_some() {
            let event = event_of_row.last().map_or(0, |e| e + 1);
            event_of_row.extend(std::iter::repeat_n(event, pieces.len()));
        }
        for (n, piece) in pieces.into_iter().enumerate() {
            let label = if n == 0 { label.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!(" {label:<LABEL$} "), theme::muted()),
                Span::raw(piece),
            ]));
        }
        if label == EVENTS {
            events_from = Some(lines.len());
        }
    }
    let room = usize::from(area.height.saturating_sub(2));
    let mut title = TITLE.to_owned();
    if let Some(from) = events_from
        && let Some(&newest) = event_of_row.last()
    {
        let (start, end) = event_window(app, room.saturating_sub(from), event_of_row.len());
        title = format!(
            "{} · events {}-{} of {} ",
            TITLE.trim_end(),
            event_of_row[start] + 1,
            event_of_row[end - 1] + 1,
            newest + 1
        );
        lines.truncate(from + end);
        lines.drain(from..from + start);
    }
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let rect = centered(area, width, height);
    let block = Block::bordered()
        .title(Span::styled(title, theme::focused_border()))
        .border_type(theme::FOCUSED_BORDER)
        .border_style(theme::focused_border());
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// The overlay's title, before the events shown.
const TITLE: &str = " Operation (Esc closes · c cancels · e full text) ";

/// The event rows shown, `start..end` of `total` in `room` rows (at least
/// one): from the overlay's scroll, the newest while it follows them;
/// recorded for the movement keys.
fn event_window(app: &App, room: usize, total: usize) -> (usize, usize) {
    let rows = room.clamp(1, total);
    let last = total - rows;
    let start = app.operation_scroll().map_or(last, |s| s.min(last));
    let mut viewport = app.viewport.get();
    viewport.op_event_rows = rows;
    viewport.op_event_len = total;
    app.viewport.set(viewport);
    (start, start + rows)
}

/// `(label, value)` pairs for `op` and its events, or the notice when it
/// is gone.
fn lines_of(
    id: &str,
    op: Option<&Operation>,
    events: Option<&OpEvents>,
    now: i64,
    zone: &jiff::tz::TimeZone,
) -> Vec<(String, String)> {
    let Some(op) = op else {
        return vec![(
            String::new(),
            format!(
                "operation {} is no longer shown",
                sanitize_short(&short_id(id), CUT_SHORT)
            ),
        )];
    };
    let mut lines: Vec<(String, String)> = opview::operation_lines(op, now, zone)
        .into_iter()
        .map(|(label, text)| (label.to_owned(), text))
        .collect();
    let heading = |text: String| (EVENTS.to_owned(), text);
    match events {
        None | Some(OpEvents::Loading) => lines.push(heading("reading…".into())),
        Some(OpEvents::Failed(why)) => {
            lines.push(heading(format!(
                "cannot read them: {}",
                sanitize_short(why, CUT_LONG)
            )));
        }
        Some(OpEvents::Ready(events)) if events.is_empty() => {
            lines.push(heading("none yet".into()));
        }
        Some(OpEvents::Ready(events)) => {
            lines.push(heading(format!(
                "{} in order (times {})",
                events.len(),
                crate::model::time::zone_label(now, zone)
            )));
            lines.extend(
                events
                    .iter()
                    .map(|event| (String::new(), opview::event_line(event, zone))),
            );
        }
    }
    lines
}
