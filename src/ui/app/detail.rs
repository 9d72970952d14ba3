//! The detail view's field cursor: `j`/`k` move it over the document's
//! fields, paging and the wheel scroll (the cursor follows into view; see
//! [`crate::ui::detail::cursor`]), and `y` copies the field under it:
//! its value (sanitized, as shown, without a relative time), through the
//! console's own OSC 52 ([`Effect::Copy`]), with the flash `sent to the
//! terminal's clipboard (OSC 52): lease expires_at: 2026-11-29T13:58:06Z`.

use super::{App, Effect, FlashLevel};
use crate::ui::detail::cursor::{self, Move};
use crate::ui::detail::{self, DocLine};

/// Characters of the copied value the flash shows (the rest is cut with
/// `…`; the clipboard gets it whole).
pub(super) const FLASH_VALUE_CHARS: usize = 40;

impl App {
    /// The open detail view's document at `now`, as the pane draws it.
    fn detail_document(&self) -> Option<Vec<DocLine<'_>>> {
        let open = self.layers.detail()?;
        let name = open.name.as_str();
        Some(detail::document(
            open,
            &self.shown.snapshot,
            self.last_teardown(name),
            (self.now, &self.settings.zone),
        ))
    }

    /// Move the detail view's cursor or scroll it (`j`/`k`, paging, `g`/`G`,
    /// the wheel), against the document wrapped as the last frame drew it.
    pub(super) fn move_detail(&mut self, step: Move) {
        let viewport = self.viewport.get();
        let Some(doc) = self.detail_document() else {
            return;
        };
        // Before the first frame: unwrapped, a page of 20 rows.
        let width = if viewport.detail_width == 0 {
            usize::MAX / 2
        } else {
            viewport.detail_width
        };
        let rows = if viewport.detail_rows == 0 {
            20
        } else {
            viewport.detail_rows
        };
        let wrapped = crate::ui::geometry::wrap_document(&doc, width);
        let lines: Vec<usize> = wrapped.iter().map(|row| row.3).collect();
        let fields = cursor::field_rows(&doc, &lines);
        let total = wrapped.len();
        drop(wrapped);
        drop(doc);
        if let Some(open) = self.layers.detail_mut() {
            (open.cursor, open.scroll) =
                cursor::step(&fields, total, rows, (open.cursor, open.scroll), step);
        }
    }

    /// `y` in the detail view: copy the field under the cursor.
    pub(super) fn copy_field(&mut self) -> Option<Effect> {
        let copied = self.detail_document().and_then(|doc| {
            let cursor = self.layers.detail()?.cursor;
            let line = cursor::cursor_line(&doc, cursor)?;
            let field = doc.get(line)?.field.as_ref()?;
            Some((field.name.clone(), field.value.clone().into_owned()))
        });
        let Some((name, value)) = copied else {
            self.set_flash(FlashLevel::Warning, "nothing to copy".into());
            return None;
        };
        let shown = crate::model::text::sanitize_short(&value, FLASH_VALUE_CHARS);
        self.sent_to_clipboard(&format!("{name}: {shown}"));
        Some(Effect::Copy { text: value })
    }
}

impl App {
    /// `name`'s detail as the detail view shows it at `now`, line by line
    /// (sanitized; the read redacted): `serve --stdio`'s `detail`
    /// (docs/protocol.md), from the I/O worker's answer `view`.
    #[must_use]
    pub fn detail_lines(
        &self,
        name: &str,
        view: &crate::model::services::DetailView,
    ) -> Vec<String> {
        let open = crate::ui::detail::Detail {
            name: name.to_owned(),
            loaded: crate::ui::detail::Loaded::Ready(Box::new(crate::ui::detail::DetailText::new(
                view,
                self.now,
                self.controller().proxy_port,
            ))),
            scroll: 0,
            cursor: 0,
            payloads: false,
        };
        detail::document(
            &open,
            &self.shown.snapshot,
            self.last_teardown(name),
            (self.now, &self.settings.zone),
        )
        .iter()
        .map(DocLine::plain)
        .collect()
    }
}
