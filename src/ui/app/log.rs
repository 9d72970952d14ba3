//! The bounded, coalescing logs behind the Supervisor and Activity panes.

use std::collections::VecDeque;

/// How many entries the activity and supervisor logs keep (oldest dropped
/// first).
pub const LOG_CAPACITY: usize = 500;

/// A log entry with how many identical entries were folded into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged<T> {
    /// The newest of the folded entries (its time, and for a supervisor
    /// back-off its `until`).
    pub entry: T,
    /// How many entries were folded into this one (1 = not coalesced).
    pub count: u32,
}

/// A bounded log whose last entry absorbs equal newcomers, with a scroll
/// position counted from the bottom (0 = following the newest entry).
#[derive(Debug, Clone)]
pub struct Log<T> {
    entries: VecDeque<Logged<T>>,
    scroll_up: usize,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            scroll_up: 0,
        }
    }
}

impl<T> Log<T> {
    /// Append `entry`, or fold it into the last entry when `same(last, entry)`.
    pub(super) fn push(&mut self, entry: T, same: impl Fn(&T, &T) -> bool) {
        if let Some(last) = self.entries.back_mut()
            && same(&last.entry, &entry)
        {
            last.entry = entry;
            last.count = last.count.saturating_add(1);
            return;
        }
        self.entries.push_back(Logged { entry, count: 1 });
        if self.entries.len() > LOG_CAPACITY {
            self.entries.pop_front();
        }
        if self.scroll_up > 0 {
            // The operator scrolled up: keep the same lines in view.
            self.scroll_up = (self.scroll_up + 1).min(self.entries.len().saturating_sub(1));
        }
    }

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

    pub(super) fn scroll_by(&mut self, delta: isize, visible: usize) {
        let max = self.entries.len().saturating_sub(visible.max(1));
        let current = self.scroll_up.min(max);
        self.scroll_up = current.saturating_add_signed(delta).min(max);
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
    fn scrolled_log_keeps_its_place() {
        let mut log = Log::default();
        for i in 0..20 {
            log.push(i, |a, b| a == b);
        }
        log.scroll_by(3, 5);
        assert_eq!(log.scroll_up(), 3);
        log.push(100, |a, b| a == b);
        assert_eq!(log.scroll_up(), 4);
        log.scroll_by(-100, 5);
        assert_eq!(log.scroll_up(), 0);
        log.push(101, |a, b| a == b);
        assert_eq!(log.scroll_up(), 0);
    }
}
