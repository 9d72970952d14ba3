//! The full-text view's state ([`FullView`], [`super::Layer::FullText`]):
//! the text, its scroll, and its wrapping cached per width.

use std::cell::{Cell, Ref, RefCell};

use crate::model::fulltext::FullText;
use crate::model::fulltext::wrap_all;

/// The open full-text view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullView {
    /// What it shows (sanitized).
    pub text: FullText,
    /// First wrapped row shown.
    pub scroll: usize,
    /// The text wrapped at the width it was last drawn at (built once per
    /// width: a frame at the same width only slices it).
    wrapped: RefCell<Option<(usize, Vec<String>)>>,
    /// How many times the text was wrapped (once per width drawn at).
    wraps: Cell<usize>,
}

impl FullView {
    /// A view of `text` at its top.
    #[must_use]
    pub fn new(text: FullText) -> Self {
        Self {
            text,
            scroll: 0,
            wrapped: RefCell::new(None),
            wraps: Cell::new(0),
        }
    }

    /// Redact the text shown (the values to redact grew while it was
    /// open); wrapped again at the next frame.
    pub fn redact(&mut self, redactor: &crate::model::redact::Redactor) {
        if redactor.is_empty() {
            return;
        }
        self.text.redact(redactor);
        *self.wrapped.borrow_mut() = None;
    }

    /// Add to the text shown (`more` appends to it); wrapped again at the
    /// next frame, the scroll kept.
    pub fn extend(&mut self, more: impl FnOnce(&mut FullText)) {
        more(&mut self.text);
        *self.wrapped.borrow_mut() = None;
    }

    /// The text wrapped to `width` columns ([`wrap_all`]): wrapped the
    /// first time it is drawn at that width, then kept.
    #[must_use]
    pub fn rows(&self, width: usize) -> Ref<'_, [String]> {
        if self.wrapped.borrow().as_ref().map(|(w, _)| *w) != Some(width) {
            let rows = wrap_all(&self.text.lines, width, self.text.indent);
            self.wraps.set(self.wraps.get() + 1);
            *self.wrapped.borrow_mut() = Some((width, rows));
        }
        Ref::map(self.wrapped.borrow(), |cache| {
            cache.as_ref().map_or(&[][..], |(_, rows)| rows.as_slice())
        })
    }

    /// How many times the text was wrapped so far (once per width it was
    /// drawn at; a frame that changes nothing wraps nothing).
    #[must_use]
    pub fn wraps(&self) -> usize {
        self.wraps.get()
    }
}
