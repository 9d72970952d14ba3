//! The bounded, coalescing logs behind the Supervisor and Activity panes.

use std::collections::VecDeque;

/// How many entries the activity and supervisor logs keep (oldest dropped
/// first).
pub const LOG_CAPACITY: usize = 500;

/// How many of the newest lines a repeat may fold into when other lines
/// came between ([`Log::push_folding`]): about what the Activity pane shows
/// at 120x40.
pub(super) const FOLD_WINDOW: usize = 12;

/// A log entry with how many identical entries were folded into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged<T> {
    /// The newest of the folded entries (its time, and for a supervisor
    /// back-off its `until`).
    pub entry: T,
    /// How many entries were folded into this one (1 = not coalesced).
    pub count: u32,
}

/// A bounded log whose last entry absorbs equal newcomers, with a selected
/// line and a scroll position, both counted from the bottom (0 = the
/// newest entry). A selection of 0 follows the newest entry; any other
/// stays on the line the operator chose as new entries arrive, and so does
/// the view. The window always holds the selection (see
/// [`crate::ui::panes::log_window`]).
#[derive(Debug, Clone)]
pub struct Log<T> {
    entries: VecDeque<Logged<T>>,
    scroll_up: usize,
    selected_up: usize,
    /// Every entry pushed since the last [`Log::drain_journal`], folded or
    /// not, while journaling is on (`serve --stdio` sends each once);
    /// `None`: off (the console's panes need no journal).
    journal: Option<Vec<T>>,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            scroll_up: 0,
            selected_up: 0,
            journal: None,
        }
    }
}

impl<T: Clone> Log<T> {
    /// Keep every entry pushed from now on for [`Log::drain_journal`].
    pub(super) fn start_journal(&mut self) {
        self.journal.get_or_insert_with(Vec::new);
    }

    /// The entries pushed since the last call, oldest first (none while
    /// journaling is off).
    pub(super) fn drain_journal(&mut self) -> Vec<T> {
        self.journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Append `entry`, or fold it into the last entry when `same(last, entry)`.
    pub(super) fn push(&mut self, entry: T, same: impl Fn(&T, &T) -> bool) {
        self.push_folding(entry, same, |_, _| false);
    }

    /// [`Log::push`], and fold `entry` into an earlier line among the last
    /// [`FOLD_WINDOW`] when `apart(line, entry)` (failures repeated with
    /// other lines between them: the controller's lease reaper failing on
    /// four instances in turn). That line moves to the newest place, its
    /// count one more and its entry `entry` (the latest time), so the log
    /// stays in the order of each line's latest entry and every count is
    /// exact. The line the operator selected is never moved: a repeat of
    /// it is a new line.
    pub(super) fn push_folding(
        &mut self,
        entry: T,
        same: impl Fn(&T, &T) -> bool,
        apart: impl Fn(&T, &T) -> bool,
    ) {
        if let Some(journal) = &mut self.journal {
            journal.push(entry.clone());
        }
        if let Some(last) = self.entries.back_mut()
            && same(&last.entry, &entry)
        {
            last.entry = entry;
            last.count = last.count.saturating_add(1);
            return;
        }
        let len = self.entries.len();
        let selected = (self.selected_up > 0).then(|| len.saturating_sub(1 + self.selected_up));
        let earlier = (len.saturating_sub(FOLD_WINDOW)..len)
            .rev()
            .skip(1)
            .find(|&i| self.entries.get(i).is_some_and(|l| apart(&l.entry, &entry)))
            .filter(|&i| Some(i) != selected);
        if let Some(line) = earlier.and_then(|i| self.entries.remove(i)) {
            if selected.is_some_and(|s| earlier < Some(s)) {
                // The lines above the moved one shift down by one: keep
                // the selection and the view on the same lines.
                self.selected_up += 1;
                self.scroll_up += 1;
            }
            self.entries.push_back(Logged {
                entry,
                count: line.count.saturating_add(1),
            });
            self.scroll_up = self.scroll_up.min(self.selected_up);
            return;
        }
        self.entries.push_back(Logged { entry, count: 1 });
        if self.selected_up > 0 {
            // The operator chose a line: keep it selected, and the same
            // lines in view.
            self.selected_up += 1;
            self.scroll_up += 1;
        }
        if self.entries.len() > LOG_CAPACITY {
            self.entries.pop_front();
        }
        self.selected_up = self.selected_up.min(self.entries.len().saturating_sub(1));
        self.scroll_up = self.scroll_up.min(self.selected_up);
    }
}

impl<T> Log<T> {
    /// The entries, oldest first.
    #[must_use]
    pub fn entries(&self) -> &VecDeque<Logged<T>> {
        &self.entries
    }

    /// The newest entry.
    #[must_use]
    pub fn last(&self) -> Option<&Logged<T>> {
        self.entries.back()
    }

    /// How many entries the view is scrolled up from the newest (0 = sticky
    /// at the bottom).
    #[must_use]
    pub fn scroll_up(&self) -> usize {
        self.scroll_up
    }

    /// How many entries the selected line is above the newest (0 = the
    /// newest, following it).
    #[must_use]
    pub fn selected_up(&self) -> usize {
        self.selected_up
    }

    /// The selected entry (what Enter and `e` open whole).
    #[must_use]
    pub fn selected(&self) -> Option<&Logged<T>> {
        let index = self.entries.len().checked_sub(1 + self.selected_up)?;
        self.entries.get(index)
    }

    /// Move the selection `delta` lines (negative: older), clamped to the
    /// log, and scroll just enough to keep it in a window of `visible`
    /// lines. Moving to the newest line follows it again.
    pub(super) fn select_by(&mut self, delta: isize, visible: usize) {
        let max = self.entries.len().saturating_sub(1);
        let up = self.selected_up.min(max);
        self.selected_up = if delta < 0 {
            up.saturating_add(delta.unsigned_abs()).min(max)
        } else {
            up.saturating_sub(delta.unsigned_abs())
        };
        self.keep_in_view(visible);
    }

    /// A wheel notch of `delta` lines (negative: older): the view scrolls
    /// by it, within the log, and the selection moves with it.
    pub(super) fn wheel(&mut self, delta: isize, visible: usize) {
        let len = self.entries.len();
        let max_scroll = len.saturating_sub(visible.max(1));
        let before = self.scroll_up.min(max_scroll);
        self.scroll_up = if delta < 0 {
            before.saturating_add(delta.unsigned_abs()).min(max_scroll)
        } else {
            before.saturating_sub(delta.unsigned_abs())
        };
        let max = len.saturating_sub(1);
        self.selected_up = if self.scroll_up >= before {
            self.selected_up
                .saturating_add(self.scroll_up - before)
                .min(max)
        } else {
            self.selected_up.saturating_sub(before - self.scroll_up)
        };
        self.keep_in_view(visible);
    }

    /// Select the entry at `index` (oldest first), clamped to the log.
    pub(super) fn select_index(&mut self, index: usize, visible: usize) {
        let len = self.entries.len();
        self.selected_up = len.saturating_sub(1 + index.min(len.saturating_sub(1)));
        self.keep_in_view(visible);
    }

    fn keep_in_view(&mut self, visible: usize) {
        let rows = visible.max(1);
        if self.scroll_up > self.selected_up {
            self.scroll_up = self.selected_up;
        } else if self.selected_up >= self.scroll_up + rows {
            self.scroll_up = self.selected_up + 1 - rows;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_coalesces_and_stays_bounded() {
        let mut log = Log::default();
        for i in 0..(LOG_CAPACITY + 10) {
            log.push(i, |a, b| a == b);
        }
        log.push(LOG_CAPACITY + 9, |a, b| a == b);
        assert_eq!(log.entries().len(), LOG_CAPACITY);
        assert_eq!(
            log.last().map(|l| (l.entry, l.count)),
            Some((LOG_CAPACITY + 9, 2))
        );
        assert_eq!(log.entries().front().map(|l| l.entry), Some(10));
    }

    #[test]
    fn selected_line_keeps_its_place() {
        let mut log = Log::default();
        for i in 0..20 {
            log.push(i, |a, b| a == b);
        }
        // Following: the newest is selected, and stays so.
        assert_eq!(log.selected().map(|l| l.entry), Some(19));
        log.select_by(-3, 5);
        assert_eq!((log.selected_up(), log.scroll_up()), (3, 0));
        assert_eq!(log.selected().map(|l| l.entry), Some(16));
        log.select_by(-4, 5);
        assert_eq!((log.selected_up(), log.scroll_up()), (7, 3));
        // A new entry moves neither the selection nor the view.
        log.push(100, |a, b| a == b);
        assert_eq!((log.selected_up(), log.scroll_up()), (8, 4));
        assert_eq!(log.selected().map(|l| l.entry), Some(12));
        // The oldest line can be selected.
        log.select_by(isize::MIN / 2, 5);
        assert_eq!(log.selected().map(|l| l.entry), Some(0));
        assert_eq!((log.selected_up(), log.scroll_up()), (20, 16));
        log.wheel(3, 5);
        assert_eq!((log.selected_up(), log.scroll_up()), (17, 13));
        log.wheel(-100, 5);
        assert_eq!((log.selected_up(), log.scroll_up()), (20, 16));
        log.select_index(5, 5);
        assert_eq!(log.selected().map(|l| l.entry), Some(5));
        // Back to the newest: following again.
        log.select_by(isize::MAX / 2, 5);
        assert_eq!((log.selected_up(), log.scroll_up()), (0, 0));
        log.push(101, |a, b| a == b);
        assert_eq!(log.selected().map(|l| l.entry), Some(101));
    }

    #[test]
    fn a_selected_line_dropped_at_capacity_moves_to_the_oldest() {
        let mut log = Log::default();
        for i in 0..LOG_CAPACITY {
            log.push(i, |a, b| a == b);
        }
        log.select_by(isize::MIN / 2, 10);
        assert_eq!(log.selected().map(|l| l.entry), Some(0));
        log.push(LOG_CAPACITY, |a, b| a == b);
        assert_eq!(log.selected().map(|l| l.entry), Some(1));
        assert_eq!(log.selected_up(), LOG_CAPACITY - 1);
    }

    #[test]
    fn repeats_apart_fold_into_their_line_which_moves_to_the_newest() {
        // (instance, error): four instances failing in turn, one other
        // line between.
        let same = |a: &(&str, u32), b: &(&str, u32)| a.0 == b.0;
        let apart = |a: &(&str, u32), b: &(&str, u32)| a.0 == b.0 && a.0 != "other";
        let mut log = Log::default();
        for pass in 0..6_u32 {
            for name in ["golf", "india", "hotel", "alpha"] {
                log.push_folding((name, pass), same, apart);
            }
            if pass == 2 {
                log.push_folding(("other", pass), same, apart);
            }
        }
        let lines: Vec<(&str, u32, u32)> = log
            .entries()
            .iter()
            .map(|l| (l.entry.0, l.entry.1, l.count))
            .collect();
        assert_eq!(
            lines,
            vec![
                ("other", 2, 1),
                ("golf", 5, 6),
                ("india", 5, 6),
                ("hotel", 5, 6),
                ("alpha", 5, 6),
            ]
        );
    }

    #[test]
    fn a_selected_line_is_not_moved_by_a_repeat_apart() {
        let same = |a: &u32, b: &u32| a == b;
        let apart = |a: &u32, b: &u32| a == b;
        let mut log = Log::default();
        for i in [1, 2, 3, 4] {
            log.push_folding(i, same, apart);
        }
        log.select_by(-3, 10);
        assert_eq!(log.selected().map(|l| l.entry), Some(1));
        // 2 is below the selection: it moves, the selection stays on 1.
        log.push_folding(2, same, apart);
        assert_eq!(log.selected().map(|l| l.entry), Some(1));
        // 1 is the selected line: a new line, counted apart.
        log.push_folding(1, same, apart);
        assert_eq!(log.selected().map(|l| l.entry), Some(1));
        let lines: Vec<(u32, u32)> = log.entries().iter().map(|l| (l.entry, l.count)).collect();
        assert_eq!(lines, vec![(1, 1), (3, 1), (4, 1), (2, 2), (1, 1)]);
        log.select_by(-1, 10);
        assert_eq!(log.selected().map(|l| (l.entry, l.count)), Some((1, 1)));
        // Above the selection: it moves, the selection follows its line.
        log.select_by(isize::MIN / 2, 10);
        log.select_by(2, 10);
        assert_eq!(log.selected().map(|l| l.entry), Some(4));
        log.push_folding(3, same, apart);
        assert_eq!(log.selected().map(|l| l.entry), Some(4));
    }
}
