//! The help overlay's state: its scroll and its search (`/` inside help:
//! only the entries whose keys or text contain the query are listed).

use crossterm::event::KeyCode;

use super::help_view::HelpView;
use super::{App, Layer};
use crate::ui::keys::Input;

/// Rows one help page moves before the first frame measured it.
const DEFAULT_PAGE: usize = 10;

impl App {
    /// The help overlay's scroll and search.
    #[must_use]
    pub fn help_view(&self) -> &HelpView {
        /// What a closed help shows: its top, no query.
        static CLOSED: HelpView = HelpView {
            scroll: 0,
            query: String::new(),
            typing: false,
        };
        self.layers.help().unwrap_or(&CLOSED)
    }

    /// Open the help at its top, without a query.
    pub(super) fn open_help(&mut self) {
        self.layers.open(Layer::Help(HelpView::default()));
    }

    /// Scroll the help by `delta` lines (`isize::MIN / 2`: the top),
    /// clamped to what the last frame drew.
    pub(super) fn scroll_help(&mut self, delta: isize) {
        let viewport = self.viewport.get();
        let max = viewport.help_len.saturating_sub(viewport.help_rows.max(1));
        if let Some(view) = self.layers.help_mut() {
            view.scroll = view.scroll.min(max).saturating_add_signed(delta).min(max);
        }
    }

    /// A help page, in lines.
    pub(super) fn help_page(&self) -> isize {
        let rows = self.viewport.get().help_rows;
        isize::try_from(if rows == 0 { DEFAULT_PAGE } else { rows }).unwrap_or(isize::MAX)
    }

    /// `/` in help: type a query.
    pub(super) fn search_help(&mut self) {
        if let Some(view) = self.layers.help_mut() {
            view.typing = true;
        }
    }

    /// A character typed into the help's query.
    pub(super) fn help_text(&mut self, input: Input) {
        if let Input::Key(KeyCode::Char(c), _) = input
            && let Some(view) = self.layers.help_mut()
        {
            view.query.push(c);
            view.scroll = 0;
        }
    }

    /// Backspace in the help's query.
    pub(super) fn help_backspace(&mut self) {
        if let Some(view) = self.layers.help_mut() {
            view.query.pop();
            view.scroll = 0;
        }
    }

    /// Enter (keep the query) or Esc (clear it) in the help's prompt.
    pub(super) fn help_done(&mut self, keep: bool) {
        if let Some(view) = self.layers.help_mut() {
            view.typing = false;
            if !keep {
                view.query.clear();
            }
            view.scroll = 0;
        }
    }
}
