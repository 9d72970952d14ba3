//! The logs view (`l`): in the space of the panes, a tab row (all
//! services, then one per service, scrolled to show the selected one), a
//! "following"/"paused" mark with how the follower watches (always on the
//! right), the lines with the cursor line highlighted (cut at the edge or
//! wrapped, `w`: then scrolled by screen rows, the bottom line's rows
//! below the view left out), a line not read back to its start marked
//! `… (line continues before: SIZE)`, the search matches highlighted, and
//! the search prompt (or where the last search stopped). When there is
//! nothing to follow it says why: the substrate keeps the logs elsewhere,
//! the logs directory is gone, it holds no logs.
//!
//! Every line was sanitized when read (`model::logtext::line_text`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr as _;

use super::pane_block;
use crate::model::Status;
use crate::model::logview::{LogLine, LogsState, WatchMode};
use crate::model::text::sanitize_short;
use crate::ui::app::{App, LogsView};
use crate::ui::logs_layout::{PARTIAL_MARK, cut_mark, render_line};
use crate::ui::text::{CUT_SHORT, fit};
use crate::ui::theme;

/// Draw the open logs view into `area` (nothing when none is open).
pub(crate) fn render(frame: &mut Frame, area: Rect, app: &App) {
    let Some(view) = app.logs() else {
        return;
    };
    let title = title(app, view, usize::from(area.width.saturating_sub(2)));
    let block = pane_block(title, true);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height < 2 {
        return;
    }
    let width = usize::from(inner.width);
    let mut lines = vec![tab_row(view, width)];
    let prompt = prompt_line(view, width);
    let rows = usize::from(inner.height) - 1 - usize::from(prompt.is_some());
    let mut viewport = app.viewport.get();
    viewport.logs_rows = rows;
    viewport.logs_width = width;
    app.viewport.set(viewport);
    if let Some((text, style)) = state_text(view) {
        frame.render_widget(
            Paragraph::new(Line::styled(text, style)).wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        );
        return;
    }
    lines.extend(body(view, width, rows));
    lines.truncate(1 + rows);
    if let Some(prompt) = prompt {
        lines.resize(1 + rows, Line::raw(""));
        lines.push(prompt);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// ` Logs: NAME ` and the directory, and for a tombstoned instance that
/// its logs are kept until GC, in `room` columns (the title row inside
/// the corners): cut at whole words ([`title_parts`]).
fn title(app: &App, view: &LogsView, room: usize) -> Line<'static> {
    let tombstoned = app
        .snapshot()
        .instance(&view.request.instance)
        .is_some_and(|i| i.status == Status::Tombstoned);
    let name = sanitize_short(&view.request.instance, CUT_SHORT);
    let [head, path, note] = title_parts(&name, &view.path, tombstoned, room);
    let mut title = vec![Span::styled(head, theme::focused_border())];
    for part in [path, note] {
        if !part.is_empty() {
            title.push(Span::styled(part, theme::muted()));
        }
    }
    Line::from(title)
}

/// The tombstone notes of the logs title, longest first: the first that
/// fits is shown.
const TOMBSTONED: [&str; 3] = [
    "· tombstoned: stackless keeps its logs until GC ",
    "· tombstoned: logs kept until GC ",
    "· tombstoned ",
];

/// The logs title's parts in `room` columns, never cut mid-word:
/// ` Logs: NAME ` (cut with `…` only when it alone is wider),
/// then the directory `path` whole, else its last `/` segments after `…/`,
/// else none; then for a tombstoned instance the longest of
/// [`TOMBSTONED`] that fits, else none.
#[must_use]
pub(crate) fn title_parts(name: &str, path: &str, tombstoned: bool, room: usize) -> [String; 3] {
    let head = fit(&format!(" Logs: {name} "), room).into_owned();
    let mut left = room.saturating_sub(head.width());
    let whole = format!("{path} ");
    let path = if whole.width() <= left {
        whole
    } else {
        // The last segments that fit, after `…/`.
        let mut kept = String::new();
        for segment in path.rsplit('/').filter(|s| !s.is_empty()) {
            let next = format!("/{segment}{kept}");
            if "…".width() + next.width() + 1 > left {
                break;
            }
            kept = next;
        }
        if kept.is_empty() {
            String::new()
        } else {
            format!("…{kept} ")
        }
    };
    left = left.saturating_sub(path.width());
    let note = if tombstoned {
        TOMBSTONED
            .iter()
            .find(|n| n.width() <= left)
            .map_or_else(String::new, |n| (*n).to_owned())
    } else {
        String::new()
    };
    [head, path, note]
}

/// What to say instead of lines, when the logs cannot be followed.
fn state_text(view: &LogsView) -> Option<(String, Style)> {
    let name = sanitize_short(&view.request.instance, CUT_SHORT);
    let substrate = sanitize_short(&view.request.substrate, CUT_SHORT);
    let text = match &view.state {
        LogsState::Ready => return None,
        LogsState::Loading => "reading the logs…".to_owned(),
        LogsState::Elsewhere => format!(
            "{substrate} keeps this instance's logs on its side: they are not on disk \
             (`stackless logs {name}` fetches them)"
        ),
        LogsState::DirGone { path } => format!(
            "no logs directory: {path} does not exist (nothing was written here, \
             or it was removed with the instance); looked for again every second"
        ),
        LogsState::NoFiles { path } => {
            format!("{path} holds no service log (*.log); looked for again every second")
        }
        LogsState::Failed(message) => message.clone(),
    };
    let style = match view.state {
        LogsState::Loading => theme::muted(),
        LogsState::Failed(_) => theme::failure(),
        _ => theme::lock_held(),
    };
    Some((text, style))
}

/// The widest a tab's name is shown; a longer one is cut with `…`.
pub(crate) const TAB_NAME: usize = 24;

/// The tab row: the follow mark on the right (its width reserved first),
/// the tabs in the rest, scrolled so the selected one is shown.
fn tab_row(view: &LogsView, width: usize) -> Line<'static> {
    let buffer = view.buffer();
    let mark = follow_mark(view, width);
    let mark = fit(&mark, width).into_owned();
    let room = width.saturating_sub(mark.width() + 1);
    let tabs: Vec<String> = view
        .tab_names()
        .into_iter()
        .map(|name| format!(" {} ", fit(name, TAB_NAME)))
        .collect();
    // Each tab and its `│`.
    let widths: Vec<usize> = tabs.iter().map(|t| t.width() + 1).collect();
    let selected = view.tab.min(tabs.len().saturating_sub(1));
    let mut first = 0;
    while first < selected && widths[first..=selected].iter().sum::<usize>() > room {
        first += 1;
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for (index, tab) in tabs.into_iter().enumerate().skip(first) {
        if index != first && used + widths[index] > room {
            break;
        }
        used += widths[index];
        let style = if index == view.tab {
            theme::selected_focused()
        } else {
            Style::new()
        };
        spans.push(Span::styled(tab, style));
        spans.push(Span::styled("│", theme::muted()));
    }
    let used: usize = spans.iter().map(|s| s.content.width()).sum();
    let gap = width.saturating_sub(used + mark.width()).max(1);
    spans.push(Span::raw(" ".repeat(gap)));
    let style = if buffer.following() {
        Style::new().add_modifier(Modifier::BOLD)
    } else {
        theme::lock_held()
    };
    spans.push(Span::styled(mark, style));
    Line::from(spans)
}

/// "following" or "paused" and how the follower watches (nothing while
/// the logs are not ready).
fn follow_mark(view: &LogsView, width: usize) -> String {
    let buffer = view.buffer();
    let watch = match view.watch {
        Some(WatchMode::Notify) => "notify".to_owned(),
        Some(WatchMode::Poll(ms)) => format!("poll {ms}ms"),
        None => "…".to_owned(),
    };
    if view.state != LogsState::Ready {
        String::new()
    } else if buffer.following() {
        format!("● following · {watch}")
    } else if buffer.newer_dropped {
        format!("‖ paused · newer lines dropped · G reads the tail · {watch}")
    } else if view.wrap {
        format!(
            "‖ paused · {} below · G follows · {watch}",
            rows_below(view, width)
        )
    } else {
        format!(
            "‖ paused · {} below · G follows · {watch}",
            count(buffer.below(), "line")
        )
    }
}

/// The most lines below whose wrapped rows are counted for the mark (each
/// is laid out); past them, the count is a lower bound.
const ROWS_COUNTED: usize = 500;

/// While lines wrap: the screen rows below the bottom row, `N rows` (the
/// bottom line's rows below the view, then every line's after it), `more
/// than N rows` past [`ROWS_COUNTED`] lines.
fn rows_below(view: &LogsView, width: usize) -> String {
    let buffer = view.buffer();
    let height = view.row_counter(width);
    let len = buffer.lines().len();
    let below = buffer.scroll_up.min(len);
    let counted = below.min(ROWS_COUNTED);
    let rows: usize = buffer.skip_rows
        + buffer
            .lines()
            .range(len - below..len - below + counted)
            .map(|l| height(l).max(1))
            .sum::<usize>();
    if counted < below {
        format!("more than {}", count(rows + below - counted, "row"))
    } else {
        count(rows, "row")
    }
}

/// `1 line`, `2 lines`.
fn count(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// The search prompt, or the search kept, on the last row.
fn prompt_line(view: &LogsView, width: usize) -> Option<Line<'static>> {
    if let Some(editing) = &view.editing {
        // The last query, a hint only: typing starts a new one.
        let text = if editing.is_empty() && !view.search.is_empty() {
            format!(
                "/█  (Enter: \"{}\" again)",
                sanitize_short(&view.search, 60)
            )
        } else {
            format!("/{}█", sanitize_short(editing, 200))
        };
        return Some(Line::styled(
            fit(&text, width).into_owned(),
            theme::prompt(),
        ));
    }
    if view.search.is_empty() {
        return None;
    }
    let held = view.buffer().lines().len();
    let text = match &view.search_note {
        Some(note) => format!("{} · n older · N newer", sanitize_short(note, 200)),
        None => format!(
            "search \"{}\" in the {held} lines held · n older · N newer",
            sanitize_short(&view.search, 60)
        ),
    };
    Some(Line::styled(fit(&text, width).into_owned(), theme::muted()))
}

/// What is said above the lines: what the open left out, a logs
/// directory gone, the shown service's note.
fn notes(view: &LogsView, width: usize) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    if let Some(notice) = &view.notice {
        out.push(Line::styled(
            fit(notice, width).into_owned(),
            theme::lock_held(),
        ));
    }
    if view.dir_gone {
        let text = format!(
            "no logs directory: {} does not exist (removed while shown: the lines below were read before); looked for again every second",
            view.path
        );
        out.push(Line::styled(
            fit(&text, width).into_owned(),
            theme::lock_held(),
        ));
    }
    if view.tab > 0
        && let Some(note) = view
            .services
            .get(view.tab - 1)
            .and_then(|s| s.note.as_ref())
    {
        out.push(Line::styled(
            fit(note, width).into_owned(),
            theme::lock_held(),
        ));
    }
    out
}

/// The rows of lines ending at the bottom of what is shown.
fn body(view: &LogsView, width: usize, rows: usize) -> Vec<Line<'static>> {
    let buffer = view.buffer();
    let mut out = notes(view, width);
    let rows = rows.saturating_sub(out.len());
    if buffer.lines().is_empty() && buffer.partials().is_empty() {
        out.push(Line::styled(
            "no lines yet: quiet, and following",
            theme::muted(),
        ));
        return out;
    }
    let (_, end) = buffer.window(rows);
    let label_width = view.label_width();
    let selected = buffer.selected();
    let mut stack: Vec<Line<'static>> = Vec::new();
    if buffer.scroll_up == 0 && buffer.skip_rows == 0 {
        // Unfinished last lines (no `\n` yet), marked, at the bottom.
        for line in buffer.partials().iter().rev() {
            let mut shown = line.clone();
            shown.text.push_str(PARTIAL_MARK);
            let prefix = prefix(view, line, label_width);
            let mut made = render_line(&prefix, &shown, &view.search, false, width, view.wrap);
            while let Some(row) = made.pop() {
                if stack.len() < rows {
                    stack.push(row.patch_style(theme::muted()));
                }
            }
        }
    }
    for index in (0..end).rev() {
        if stack.len() >= rows {
            break;
        }
        let line = &buffer.lines()[index];
        let mut prefix = prefix(view, line, label_width);
        // The oldest piece held of a line cut at the start (never read
        // whole backwards): how much of the file is before it.
        if line.cut
            && buffer
                .lines()
                .iter()
                .position(|l| l.service == line.service)
                == Some(index)
        {
            prefix.push_str(&cut_mark(line));
        }
        let current = buffer.current == Some(index);
        let mut made = render_line(&prefix, line, &view.search, current, width, view.wrap);
        if index + 1 == end && view.wrap {
            // Scrolled by rows into the bottom line: its last rows are
            // below the view (one row of it is always shown).
            let keep = made.len().saturating_sub(buffer.skip_rows).max(1);
            made.truncate(keep);
        }
        let cursor = selected == Some(index);
        while let Some(row) = made.pop() {
            if stack.len() >= rows {
                break;
            }
            stack.push(if cursor {
                row.style(theme::selected_focused())
            } else {
                row
            });
        }
    }
    stack.reverse();
    out.extend(stack);
    out
}

/// The service label (all tab) and the continuation mark.
fn prefix(view: &LogsView, line: &LogLine, label_width: usize) -> String {
    let mut prefix = String::new();
    if label_width > 0 {
        let name = view.service_name(line.service);
        prefix.push_str(name);
        prefix.push_str(&" ".repeat(label_width.saturating_sub(name.width())));
        prefix.push_str(" │ ");
    }
    if line.cont {
        prefix.push('↪');
    }
    prefix
}

#[cfg(test)]
mod tests {
    use super::title_parts;

    /// The title's parts are whole words: the path cut at a
    /// `/` after `…`, the tombstone note shortened, else dropped.
    #[test]
    fn title_parts_are_cut_at_whole_words() {
        let path = "/home/operator/.local/state/stackless/logs/alpha";
        assert_eq!(
            title_parts("alpha", path, true, 200),
            [
                " Logs: alpha ".to_owned(),
                format!("{path} "),
                "· tombstoned: stackless keeps its logs until GC ".to_owned()
            ]
        );
        assert_eq!(
            title_parts("alpha", path, true, 40),
            [
                " Logs: alpha ".to_owned(),
                "…/stackless/logs/alpha ".to_owned(),
                String::new()
            ]
        );
        assert_eq!(
            title_parts("alpha", path, false, 20),
            [" Logs: alpha ".to_owned(), String::new(), String::new()]
        );
        assert_eq!(
            title_parts("alpha", "/l/alpha", true, 37),
            [
                " Logs: alpha ".to_owned(),
                "/l/alpha ".to_owned(),
                "· tombstoned ".to_owned()
            ]
        );
    }
}
