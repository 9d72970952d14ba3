//! The help overlay: the legend of the state marks (the ST column a new
//! reader meets first; left out over a fleet, whose rows have no ST
//! column), then every entry of the key table
//! ([`crate::ui::keys`]), wrapped to the terminal's width and
//! scrolled (`↑↓`/`jk`, PgUp/PgDn) so it fits any size down to the
//! console's minimum (60x15), the lines above and below counted in its
//! bottom border (`↑ 3 more · ↓ 10 more`, [`super::render_more`]); `/` inside it keeps only the entries whose
//! keys or text contain the query. Over a fleet (the App over 2+ hosts)
//! each entry says under it what it does there
//! ([`crate::ui::keys::KeyEntry::over_a_fleet`]): the one help over 1..N
//! hosts.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::centered;
use crate::model::text::sanitize_short;
use crate::ui::app::{App, HelpView};
use crate::ui::keys::ENTRIES;
use crate::ui::{theme, view};

/// The help's lines for a text area `width` columns wide: (without a
/// query, and on one host: over a fleet the rows have no ST column) the
/// legend first, then the entries whose keys or text contain
/// `query` (case-insensitive; all of them when it is empty), each wrapped
/// under its text column (over a fleet, `fleet`, followed by what it does
/// there, which the query reads too).
#[must_use]
pub fn lines(query: &str, width: usize, fleet: bool) -> Vec<Line<'static>> {
    let key_width = ENTRIES.iter().map(|e| e.keys.width()).max().unwrap_or(0);
    let needle = query.to_lowercase();
    let text_width = width.saturating_sub(key_width + 3).max(12);
    // Over a fleet the Instances rows have no ST column: its legend would
    // describe no mark drawn there.
    let mut lines: Vec<Line<'static>> = if needle.is_empty() && !fleet {
        let mut legend = legend(width);
        legend.push(Line::raw(""));
        legend
    } else {
        Vec::new()
    };
    for entry in ENTRIES {
        let (keys, what) = (entry.keys, entry.help);
        let there = fleet.then(|| format!("over a fleet: {}", entry.over_a_fleet()));
        if !needle.is_empty()
            && !keys.to_lowercase().contains(&needle)
            && !what.to_lowercase().contains(&needle)
            && !there
                .as_ref()
                .is_some_and(|t| t.to_lowercase().contains(&needle))
        {
            continue;
        }
        for (i, part) in wrap(what, text_width).into_iter().enumerate() {
            let key = if i == 0 { keys } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!(" {key:<key_width$}  "), theme::key()),
                Span::raw(part),
            ]));
        }
        for part in there.iter().flat_map(|t| wrap(t, text_width)) {
            lines.push(Line::from(vec![
                Span::raw(format!(" {:<key_width$}  ", "")),
                Span::styled(part, theme::muted()),
            ]));
        }
    }
    if !needle.is_empty() && lines.is_empty() {
        lines.push(Line::styled(
            format!(
                " no key matches \"{}\"",
                sanitize_short(query, crate::ui::text::CUT_SHORT)
            ),
            theme::muted(),
        ));
    }
    lines
}

/// The legend of the ST column's marks and the STATUS mark, wrapped to
/// `width`.
fn legend(width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut legend = vec![" State column (ST, after NAME): lease, lock, reap marks".to_owned()];
    for group in view::STATE_LEGEND.chunks(3) {
        let text: Vec<String> = group
            .iter()
            .map(|(mark, what)| format!("{mark} {what}"))
            .collect();
        legend.push(format!("   {}", text.join(" · ")));
    }
    legend.push(" STATUS (!): unreadable row · flash: [info] [warn] [error]".to_owned());
    for text in legend {
        for part in wrap(&text, width.max(12)) {
            lines.push(Line::styled(part, theme::muted()));
        }
    }
    lines
}

/// `text` cut into lines of at most `width` columns at spaces (a word
/// longer than `width` is cut).
#[must_use]
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let body = text.trim_start_matches(' ');
    let indent = &text[..text.len() - body.len()];
    let width = width.saturating_sub(indent.len()).max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in body.split(' ') {
        let needed = if line.is_empty() {
            word.width()
        } else {
            line.width() + 1 + word.width()
        };
        if needed > width && !line.is_empty() {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out.into_iter().map(|l| format!("{indent}{l}")).collect()
}

/// Draw the help overlay, centred in `area`, scrolled and searched as
/// `app` says, over a fleet with what each key does there (the rows that
/// fit are kept for paging).
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let (rows, len) = draw(frame, area, app.help_view(), app.fleet().is_some());
    let mut viewport = app.viewport.get();
    viewport.help_rows = rows;
    viewport.help_len = len;
    app.viewport.set(viewport);
}

/// Draw the help for `help` (scroll, query) centred in `area` (over a
/// fleet, `fleet`, each entry with what it does there); returns the rows
/// that fit and the lines there are.
pub fn draw(frame: &mut Frame, area: Rect, help: &HelpView, fleet: bool) -> (usize, usize) {
    let natural = lines(help.query(), usize::MAX / 4, false)
        .iter()
        .map(Line::width)
        .max()
        .unwrap_or(0)
        .saturating_add(3);
    let width = u16::try_from(natural)
        .unwrap_or(u16::MAX)
        .min(area.width)
        .max(40.min(area.width));
    let text_width = usize::from(width.saturating_sub(3));
    let all = lines(help.query(), text_width, fleet);
    let height = u16::try_from(all.len() + 2).unwrap_or(u16::MAX);
    let rect = centered(area, width, height);
    let rows = usize::from(rect.height.saturating_sub(2));
    let max = all.len().saturating_sub(rows);
    let scroll = help.scroll().min(max);
    let len = all.len();
    let mut title = vec![Span::styled(
        " Help (Esc or ? closes) ",
        theme::focused_border(),
    )];
    if help.typing() || !help.query().is_empty() {
        let cursor = if help.typing() {
            crate::ui::panes::instances::PROMPT_CURSOR
        } else {
            ""
        };
        title.push(Span::styled(
            format!(
                "/{}{cursor} ",
                sanitize_short(help.query(), crate::ui::text::CUT_SHORT)
            ),
            theme::prompt(),
        ));
    }
    if max > 0 {
        title.push(Span::styled(
            format!(
                "{}-{} of {} ",
                scroll + 1,
                (scroll + rows).min(all.len()),
                all.len()
            ),
            theme::muted(),
        ));
    }
    let block = Block::bordered()
        .title(Line::from(title))
        .border_type(theme::FOCUSED_BORDER)
        .border_style(theme::focused_border());
    let shown: Vec<Line> = all.into_iter().skip(scroll).take(rows).collect();
    let below = len - scroll - shown.len();
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(shown).block(block), rect);
    // What j/k (PgUp/PgDn) scroll to, in the bottom border as the panes
    // say it: nothing of the help is left without a word.
    super::render_more(frame, rect, scroll, below);
    (rows, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("abcdefgh", 4), ["abcdefgh"]);
        assert_eq!(wrap("", 4), [""]);
        assert_eq!(wrap("  a bb ccc", 6), ["  a bb", "  ccc"]);
    }

    #[test]
    fn a_query_keeps_matching_entries() {
        let text: Vec<String> = lines("payload", 200, false)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(text[0].contains("checkpoint payloads"), "{text:?}");
        let none = lines("zzzz", 200, false);
        assert_eq!(none[0].to_string(), " no key matches \"zzzz\"");
    }
}
