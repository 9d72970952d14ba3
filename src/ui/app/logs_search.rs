//! The logs view's search keys (`n`, `N`, and Enter at the `/` prompt):
//! among the lines held first; `n` past the oldest held line of a
//! service's tab goes on into its older history (the console reads it
//! backwards in blocks, bounded: `crate::logs::search`) and says where it
//! stopped.

use super::{App, Effect, FlashLevel};
use crate::event::Request;
use crate::model::logbuffer::Buffer;
use crate::model::logview::{HistorySearch, Older};

impl App {
    /// `n` / `N`: the next older / newer match among the lines held; `n`
    /// with none older held, on a service's tab with older lines in its
    /// files, asks the console to search them.
    pub(super) fn find_in_logs(&mut self, older: bool) -> Option<Effect> {
        let view = self.layers.logs_mut()?;
        if view.search.is_empty() {
            self.set_flash(FlashLevel::Info, "no search: / to search".into());
            return None;
        }
        let query = view.search.clone();
        let held = view.buffer().lines().len();
        view.search_note = None;
        if view.buffer_mut().find(&query, older) {
            self.fill_logs_screen();
            return None;
        }
        // Where the last search back stopped at its bound, else before
        // the oldest line held.
        let resume = view
            .search_far
            .resume
            .filter(|&(tab, _)| tab == view.tab)
            .map(|(_, pos)| pos);
        let from = match view.buffer().older {
            Older::Before(before) => Some(resume.unwrap_or(before)),
            Older::Start => None,
        };
        let reads = view.tab > 0
            && ((older && from.is_some())
                || (!older && view.buffer().newer_dropped && !view.buffer().lines().is_empty()));
        if reads && (view.asked.is_some() || view.buffer().loading) {
            // The last read of this view's files is not answered yet.
            self.set_flash(
                FlashLevel::Info,
                format!("\"{query}\": still reading the files: n again when it answers"),
            );
            return None;
        }
        if older
            && view.tab > 0
            && let Some(before) = from
        {
            let service = u16::try_from(view.tab - 1).unwrap_or(u16::MAX);
            view.asked = Some(query.clone());
            return Some(Effect::Io(Request::LogsSearchOlder {
                session: view.session,
                service,
                base: view.base(service),
                before,
                query,
                redactor: std::sync::Arc::clone(&self.shown.snapshot.redactor),
            }));
        }
        if !older
            && view.tab > 0
            && view.buffer().newer_dropped
            && let Some(after) = view.buffer().lines().back().map(|last| last.at)
        {
            // Newer lines were dropped for older ones: read them again.
            let service = u16::try_from(view.tab - 1).unwrap_or(u16::MAX);
            view.asked = Some(query.clone());
            return Some(Effect::Io(Request::LogsSearchNewer {
                session: view.session,
                service,
                base: view.base(service),
                after,
                query,
                redactor: std::sync::Arc::clone(&self.shown.snapshot.redactor),
            }));
        }
        let which = if !view.buffer().holds_match(&query) {
            ""
        } else if older {
            "older "
        } else {
            "newer "
        };
        let text = format!("\"{query}\": no {which}match in the {held} lines held");
        view.search_note = Some(text.clone());
        self.set_flash(FlashLevel::Info, text);
        None
    }

    /// The answer to [`Effect::LogsSearchOlder`]: the match's lines are
    /// put in front of the tab's (or, far back, in place of them: `G`
    /// then reads the tail again) and it becomes the current match; or
    /// where the search stopped, said on the search line.
    pub(super) fn show_search_older(&mut self, session: u64, service: u16, result: HistorySearch) {
        let Some(view) = self.layers.logs_mut().filter(|v| v.session == session) else {
            return;
        };
        // An answer to a search no longer the view's (cleared or changed
        // while it was read) is dropped.
        if view.asked.take().as_deref() != Some(view.search.as_str()) {
            return;
        }
        let query = view.search.clone();
        let tab = usize::from(service) + 1;
        let Some(buffer) = view.buffers.get_mut(tab) else {
            return;
        };
        let far = &mut view.search_far;
        // Found after a search that stopped at its bound: the lines end
        // where that one stopped, not at the lines held.
        let resumed = far.resume.is_some_and(|(t, _)| t == tab);
        far.total += result.searched;
        far.back += result.searched;
        far.resume = result.resume.map(|pos| (tab, pos));
        let searched = crate::ui::text::size(result.searched);
        let back = crate::ui::text::size(far.back);
        if result.found.is_some() {
            far.back = 0;
            far.rounds = 0;
        }
        let text = match result.found {
            Some((lines, older, true)) if !resumed => {
                buffer.prepend(lines, older);
                buffer.find(&query, true);
                format!("\"{query}\": found in older history ({searched} searched)")
            }
            Some((lines, older, _)) => {
                *buffer = Buffer::new(lines, older);
                buffer.newer_dropped = true;
                buffer.find(&query, true);
                format!(
                    "\"{query}\": found {back} back in older history (newer lines dropped: G reads the tail)"
                )
            }
            None => match result.bound {
                Some(bound) => {
                    far.rounds += 1;
                    format!(
                        "searched {} back: no more matches (n searches on)",
                        whole_size(bound.saturating_mul(far.rounds))
                    )
                }
                None => format!(
                    "searched back to the start of the oldest log ({} searched in all): no more matches",
                    crate::ui::text::size(far.total)
                ),
            },
        };
        view.search_note = Some(text.clone());
        let shown = view.tab == tab;
        self.set_flash(FlashLevel::Info, text);
        if shown {
            self.fill_logs_screen();
        }
    }

    /// The answer to [`Effect::LogsSearchNewer`]: the lines read after
    /// the newest held are put after them (or, far on, in place of them)
    /// and the first match among them becomes the current one; or where
    /// the search stopped, said on the search line. The tail is still not
    /// held: `G` reads it.
    pub(super) fn show_search_newer(&mut self, session: u64, service: u16, result: HistorySearch) {
        let Some(view) = self.layers.logs_mut().filter(|v| v.session == session) else {
            return;
        };
        // An answer to a search no longer the view's (cleared or changed
        // while it was read) is dropped.
        if view.asked.take().as_deref() != Some(view.search.as_str()) {
            return;
        }
        let query = view.search.clone();
        let tab = usize::from(service) + 1;
        let Some(buffer) = view.buffers.get_mut(tab) else {
            return;
        };
        view.search_far.total += result.searched;
        let searched = crate::ui::text::size(result.searched);
        let text = match result.found {
            Some((lines, _, true)) => {
                buffer.append_read(&lines);
                buffer.find(&query, false);
                format!(
                    "\"{query}\": found in newer history ({searched} searched; G reads the tail)"
                )
            }
            Some((lines, older, false)) => {
                *buffer = Buffer::new(lines, older);
                buffer.newer_dropped = true;
                buffer.find_oldest(&query);
                format!(
                    "\"{query}\": found {searched} on in newer history (older lines dropped; G reads the tail)"
                )
            }
            None => match result.bound {
                Some(bound) => format!("searched {} on: no newer match", whole_size(bound)),
                None => format!("searched on to the tail ({searched}): no newer match"),
            },
        };
        view.search_note = Some(text.clone());
        let shown = view.tab == tab;
        self.set_flash(FlashLevel::Info, text);
        if shown {
            self.fill_logs_screen();
        }
    }

    /// After a jump to a match: the lines after it fill the screen (see
    /// [`Buffer::fill_screen`]), not blank rows under a lone line.
    fn fill_logs_screen(&mut self) {
        let viewport = self.viewport.get();
        let rows = viewport.logs_rows.max(1);
        let Some(view) = self.layers.logs_mut() else {
            return;
        };
        let wrap = view.wrap;
        let height = view.row_counter(viewport.logs_width);
        view.buffer_mut().fill_screen(rows, wrap, height);
    }
}

/// A bound as written: `64 MiB`, `64 KiB` (else as `size` says).
fn whole_size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        crate::ui::text::size(bytes)
    }
}
