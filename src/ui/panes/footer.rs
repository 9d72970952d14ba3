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
use crate::ui::text::{CUT_LONG, fit};
use crate::ui::theme;

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

/// An item after the keys: its full and short forms.
type Forms = (String, String);

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
        frame.render_widget(Paragraph::new(flash_line(flash, width)), area);
        return;
    }
    let mut entries = entries(app);
    let (items, reason) = off_items(app);
    let mut off: Vec<String> = items.iter().map(|(full, _)| full.clone()).collect();
    let off_width = |off: &[String]| off.iter().map(|o| 2 + o.width()).sum::<usize>();
    let used = |entries: &[Entry]| {
        entries
            .iter()
            .map(|(k, w, _, _)| k.width() + 1 + w.width())
            .sum::<usize>()
            + 2 * entries.len().saturating_sub(1)
    };
    // The keys of rank 2 and up make room for the items; then the keys of
    // rank 1 and up make room for the keys of rank 0.
    for (reserve, keep) in [(off_width(&off), 1), (0, 0)] {
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
    // Too wide: the reason is cut between words (`(r/d off: the store
    // is open…)`); the last item takes its short form, then goes.
    if off_width(&off) > room
        && let Some((head, why)) = &reason
    {
        let others = off_width(&off[..off.len() - 1]);
        let left = room.saturating_sub(others + 2 + head.width() + 1);
        if let Some(cut) = fit_words(why, left)
            && let Some(last) = off.last_mut()
        {
            *last = format!("{head}{cut})");
        }
    }
    let mut room = room;
    while off_width(&off) > room && !off.is_empty() {
        let last = off.len() - 1;
        if off[last] != items[last].1 {
            off[last].clone_from(&items[last].1);
        } else if last == 0
            && app.reaper().paused
            && let Some(drop) = entries.iter().rposition(|e| e.3 > 0)
        {
            // A paused reaper says so, short, before a key of rank 1.
            entries.remove(drop);
            room = width.saturating_sub(used(&entries));
        } else {
            off.pop();
        }
    }
    let off = (!off.is_empty()).then(|| format!("  {}", off.join("  ")));
    frame.render_widget(Paragraph::new(Line::from(key_spans(entries, off))), area);
}

/// The flash message as the footer's line: `[warn] text`, fitted to
/// `width`.
fn flash_line(flash: &crate::ui::Flash, width: usize) -> Line<'static> {
    let text = format!(
        "{} {}",
        flash_tag(flash.level),
        sanitize_short(&flash.text, CUT_LONG)
    );
    Line::styled(fit(&text, width).into_owned(), theme::flash(flash.level))
}

/// What the footer says after the keys, each a whole item in its full and
/// short forms (never cut mid-word: an item that does not fit takes its
/// short form, then goes): the reaper paused, and why the write keys are
/// off; with the reason's `(keys off: ` head and text, which may be cut
/// between words.
fn off_items(app: &App) -> (Vec<Forms>, Option<(String, String)>) {
    let mut items: Vec<Forms> = Vec::new();
    if app.reaper().paused {
        items.push((
            "(reaper paused: P resumes)".to_owned(),
            "(paused)".to_owned(),
        ));
    }
    let mut reason = None;
    if let Some(why) = app.write_keys_off() {
        let keys = keys::write_keys(app.snapshot().generation.has_operations());
        let why = sanitize_short(&why, 60);
        items.push((format!("({keys} off: {why})"), format!("({keys} off)")));
        reason = Some((format!("({keys} off: "), why));
    }
    (items, reason)
}

/// The keys as spans (a disabled one struck through), then the items
/// after them.
fn key_spans(entries: Vec<Entry>, off: Option<String>) -> Vec<Span<'static>> {
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
    spans
}

/// `text` in at most `width` columns, cut only between words: as many
/// whole words from the start as fit with `…` after them (`None` when not
/// even the first word fits; `text` itself when it fits whole).
#[must_use]
fn fit_words(text: &str, width: usize) -> Option<String> {
    if text.width() <= width {
        return Some(text.to_owned());
    }
    let mut out = String::new();
    for word in text.split(' ') {
        let sep = usize::from(!out.is_empty());
        if out.width() + sep + word.width() + 1 > width {
            break;
        }
        if sep == 1 {
            out.push(' ');
        }
        out.push_str(word);
    }
    (!out.is_empty()).then(|| format!("{out}…"))
}
