//! The footer: the latest flash message while it is live (about 4 s), else
//! the keys of the current mode, on one line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use crate::model::text::sanitize_short;
use crate::ui::app::{App, FlashLevel};
use crate::ui::keys;
use crate::ui::theme;
use crate::ui::view::{CUT_LONG, fit};

/// The word in front of a flash message, so its level reads without colour.
#[must_use]
pub const fn flash_tag(level: FlashLevel) -> &'static str {
    match level {
        FlashLevel::Info => "[info]",
        FlashLevel::Warning => "[warn]",
        FlashLevel::Error => "[error]",
    }
}

/// One footer entry: the key, what it does, whether it is enabled, and its
/// rank (entries of the highest rank are dropped first when the line is too
/// narrow).
type Entry = (&'static str, &'static str, bool, u8);

/// The keys of the current mode ([`App::base_context`]), in display order,
/// from the key table ([`keys::footer`]). Write keys are disabled while the
/// configuration or the schema turns them off; keys on the controller's
/// operations (`c`) are left out on stores without them.
fn entries(app: &App) -> Vec<Entry> {
    let writable = app.write_keys_off().is_none();
    let operations = app.snapshot().generation.has_operations();
    keys::footer(app.base_context())
        .into_iter()
        .filter(|(entry, _)| operations || !entry.needs_operations())
        .map(|(entry, label)| {
            (
                label.key,
                label.label,
                writable || !entry.writes(),
                label.drop_rank,
            )
        })
        .collect()
}

/// Draw the footer into `area` (one line). Keys are struck through while
/// the write keys are disabled; the least important keys are left out when
/// the line is too narrow.
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let width = usize::from(area.width);
    if let Some(flash) = app.flash() {
        let text = format!(
            "{} {}",
            flash_tag(flash.level),
            sanitize_short(&flash.text, CUT_LONG)
        );
        frame.render_widget(
            Paragraph::new(Line::styled(
                fit(&text, width).into_owned(),
                theme::flash(flash.level),
            )),
            area,
        );
        return;
    }
    let mut entries = entries(app);
    // Why the write keys are off: the keys of rank 2 and up make room for
    // it; what still does not fit of it is cut.
    let mut off = app.write_keys_off().map(|reason| {
        format!(
            "  ({} off: {})",
            keys::write_keys(app.snapshot().generation.has_operations()),
            sanitize_short(&reason, 60)
        )
    });
    if app.reaper().paused {
        // A paused reaper says so here too, first.
        off = Some(format!(
            "  (reaper paused: P resumes){}",
            off.unwrap_or_default()
        ));
    }
    let off_width = off.as_deref().map_or(0, UnicodeWidthStr::width);
    let used = |entries: &[Entry]| {
        entries
            .iter()
            .map(|(k, w, _, _)| k.width() + 1 + w.width())
            .sum::<usize>()
            + 2 * entries.len().saturating_sub(1)
    };
    for (reserve, keep) in [(off_width, 1), (0, 0)] {
        while used(&entries) + reserve > width {
            let Some(lowest) = entries.iter().map(|e| e.3).max().filter(|&r| r > keep) else {
                break;
            };
            let Some(drop) = entries.iter().rposition(|e| e.3 == lowest) else {
                break;
            };
            entries.remove(drop);
        }
    }
    let room = width.saturating_sub(used(&entries));
    let off = off.map(|off| fit(&off, room).into_owned());
    let mut spans = Vec::new();
    for (key, what, enabled, _) in entries {
        if !spans.is_empty() {
            spans.push(Span::raw("  "));
        }
        if enabled {
            spans.push(Span::styled(key, theme::key()));
            spans.push(Span::raw(format!(" {what}")));
        } else {
            spans.push(Span::styled(format!("{key} {what}"), theme::key_disabled()));
        }
    }
    if let Some(off) = off {
        spans.push(Span::styled(off, theme::muted()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
