//! Where things land on screen, for both the state that pages and clicks
//! (`crate::ui::app`) and the panes that draw: a log pane's window of
//! lines and the line under a click, and the detail document's rows at a
//! width. Pure: no drawing, no state.

use std::borrow::Cow;

use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

use crate::model::fulltext::wrap;
use crate::ui::detail::{self, Tone};

/// The window of a log of `len` entries that shows `rows` lines ending
/// `scroll_up` entries above the newest, moved as little as needed to hold
/// the selected line (`selected_up` entries above the newest): `(start,
/// end)` (end exclusive).
#[must_use]
pub fn log_window(len: usize, rows: usize, scroll_up: usize, selected_up: usize) -> (usize, usize) {
    let selected = selected_up.min(len.saturating_sub(1));
    let mut scroll = scroll_up.min(selected);
    if rows > 0 && selected >= scroll + rows {
        scroll = selected + 1 - rows;
    }
    let scroll = scroll.min(len.saturating_sub(rows));
    let end = len - scroll;
    (end.saturating_sub(rows), end)
}

/// The index (oldest first) of the line a log pane drew at screen row `y`
/// of `rect`, given its window `(start, end)`.
#[must_use]
pub fn log_line_at(rect: Rect, y: u16, (start, end): (usize, usize)) -> Option<usize> {
    let first = rect.y.checked_add(1)?;
    let index = start + usize::from(y.checked_sub(first)?);
    (index < end).then_some(index)
}

/// One drawn row of the detail document: label column, text, tone, and the
/// index of the document line it belongs to.
pub(crate) type Row<'a> = (Cow<'a, str>, Cow<'a, str>, Tone, usize);

/// The document as drawn `width` columns wide: a line whose text does not
/// fit beside its label is wrapped (at spaces where it can), its
/// continuation rows indented under the text; nothing is cut.
#[must_use]
pub(crate) fn wrap_document<'a>(doc: &'a [detail::DocLine<'a>], width: usize) -> Vec<Row<'a>> {
    let mut rows = Vec::with_capacity(doc.len());
    for (index, line) in doc.iter().enumerate() {
        let label = crate::ui::text::fit(&line.label, width);
        let label_width = label.width();
        let left = width.saturating_sub(label_width);
        if line.text.width() <= left {
            rows.push((label, Cow::Borrowed(line.text.as_ref()), line.tone, index));
            continue;
        }
        if left < 8 {
            // Too narrow to wrap beside the label: the text under it.
            for piece in wrap(&line.text, width) {
                rows.push((Cow::Borrowed(""), Cow::Owned(piece), line.tone, index));
            }
            continue;
        }
        for (n, piece) in wrap(&line.text, left).into_iter().enumerate() {
            let label = if n == 0 {
                label.clone()
            } else {
                Cow::Owned(" ".repeat(label_width))
            };
            rows.push((label, Cow::Owned(piece), line.tone, index));
        }
    }
    rows
}
