//! The help overlay's state ([`HelpView`], [`super::Layer::Help`]): its
//! scroll and its search.

/// Where the help is scrolled to and what it is searched for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelpView {
    pub(super) scroll: usize,
    pub(super) query: String,
    pub(super) typing: bool,
}

impl HelpView {
    /// The first line shown (clamped by drawing).
    #[must_use]
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// The search text (empty: every entry).
    #[must_use]
    pub fn query(&self) -> &str {
        &self.query
    }

    /// Whether the search prompt has the keyboard.
    #[must_use]
    pub fn typing(&self) -> bool {
        self.typing
    }
}
