//! A logs tab's bounded window of lines ([`Buffer`]), purely: its scroll
//! (by lines, or by screen rows while lines wrap), the cursor line,
//! follow/pause, scroll-back and search among the lines held.

use std::collections::VecDeque;

use super::logtext::find_all;
use super::logview::{LogLine, Older, WINDOW_BYTES, WINDOW_LINES};

/// A tab's bounded window of lines, with its scroll position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    lines: VecDeque<LogLine>,
    bytes: usize,
    /// Where older lines are.
    pub older: Older,
    /// Lines between the newest held and the bottom row shown (0: at the
    /// bottom).
    pub scroll_up: usize,
    /// While lines wrap: rows of the bottom line shown that are below the
    /// view (0: its last row is the bottom row), so a line of many rows is
    /// read row by row.
    pub skip_rows: usize,
    /// Newer lines were dropped to make room for older ones: new lines are
    /// not appended until `G` reads the tail again.
    pub newer_dropped: bool,
    /// Lines that arrived while `newer_dropped`.
    pub missed: usize,
    /// The cursor line, in lines above the bottom row shown (0: the bottom
    /// one). Always 0 while lines wrap (the cursor is the bottom line).
    pub cursor: usize,
    /// An older read was asked for and has not come back.
    pub loading: bool,
    /// The current search match (an index into the lines).
    pub current: Option<usize>,
    /// Unfinished last lines (at most one per service), shown after the
    /// held lines; a service's goes when its lines come.
    partials: Vec<LogLine>,
}

impl Buffer {
    /// A window holding `lines` (oldest first).
    #[must_use]
    pub fn new(lines: Vec<LogLine>, older: Older) -> Self {
        let mut buffer = Self {
            bytes: lines.iter().map(|l| l.text.len()).sum(),
            lines: lines.into(),
            older,
            scroll_up: 0,
            skip_rows: 0,
            newer_dropped: false,
            missed: 0,
            cursor: 0,
            loading: false,
            current: None,
            partials: Vec::new(),
        };
        let _dropped = buffer.trim_front();
        buffer
    }

    /// Redact every line held and every partial line: when the values to
    /// redact grew after lines arrived (a snapshot with a new
    /// `secret_history` row came after the follower's lines).
    pub fn redact(&mut self, redactor: &super::redact::Redactor) {
        if redactor.is_empty() {
            return;
        }
        super::logview::redact_lines(self.lines.make_contiguous(), redactor);
        self.partials
            .iter_mut()
            .for_each(|l| l.redact_partial(redactor));
        self.bytes = self.lines.iter().map(|l| l.text.len()).sum();
    }

    /// The lines held, oldest first.
    #[must_use]
    pub fn lines(&self) -> &VecDeque<LogLine> {
        &self.lines
    }

    /// The unfinished last lines (one per service at most), oldest first.
    #[must_use]
    pub fn partials(&self) -> &[LogLine] {
        &self.partials
    }

    /// Show `line` as its service's unfinished last line (replacing the one
    /// shown before).
    pub fn set_partial(&mut self, line: LogLine) {
        self.partials.retain(|p| p.service != line.service);
        self.partials.push(line);
    }

    /// Whether new lines show as they come (at the bottom, nothing dropped).
    #[must_use]
    pub fn following(&self) -> bool {
        self.scroll_up == 0 && self.skip_rows == 0 && self.cursor == 0 && !self.newer_dropped
    }

    /// Lines held below the cursor line (shown as "lines below").
    #[must_use]
    pub fn below(&self) -> usize {
        self.scroll_up + self.cursor
    }

    /// The cursor line's index into [`Buffer::lines`], if any is held.
    #[must_use]
    pub fn selected(&self) -> Option<usize> {
        let len = self.lines.len();
        let end = len - self.scroll_up.min(len);
        let last = end.checked_sub(1)?;
        Some(last - self.cursor.min(last))
    }

    /// The cursor line (↑/↓, `k`/`j`): moves by `delta` lines (negative:
    /// up, older) within the `rows` shown, scrolling when it reaches the
    /// top or bottom. While lines wrap (`wrap`) the cursor is the bottom
    /// line and the lines scroll. Returns whether older lines should be
    /// read now, as [`Buffer::scroll`].
    pub fn move_cursor(&mut self, delta: isize, rows: usize, wrap: bool) -> bool {
        let page = if wrap { 1 } else { rows.max(1) };
        let end = self.lines.len() - self.scroll_up.min(self.lines.len());
        // The most the cursor can be above the bottom row.
        let top = page.min(end.max(1)) - 1;
        let mut scroll = 0isize;
        if delta < 0 {
            let up = delta.unsigned_abs();
            let moved = up.min(top.saturating_sub(self.cursor));
            self.cursor += moved;
            scroll = -isize::try_from(up - moved).unwrap_or(isize::MAX);
        } else if delta > 0 {
            let down = delta.unsigned_abs();
            let moved = down.min(self.cursor);
            self.cursor -= moved;
            scroll = isize::try_from(down - moved).unwrap_or(isize::MAX);
        }
        // What does not fit the page (wrap turned on) scrolls instead.
        if self.cursor > top {
            self.scroll_up += self.cursor - top;
            self.cursor = top;
        }
        self.scroll(scroll, rows, wrap)
    }

    /// Append new lines. While paused the view stays where it is; while
    /// newer lines are dropped they are only counted.
    pub fn push(&mut self, lines: &[LogLine]) {
        let _dropped = self.push_trimmed(lines);
    }

    /// [`Buffer::push`], giving out the oldest lines dropped to make room
    /// (the all-services tab reads them again from their services).
    pub fn push_trimmed(&mut self, lines: &[LogLine]) -> Vec<LogLine> {
        // What was unfinished has ended (it is among `lines`), or was
        // written further: it comes again when it is stable.
        self.partials
            .retain(|p| lines.iter().all(|l| l.service != p.service));
        if self.newer_dropped {
            self.missed += lines.len();
            return Vec::new();
        }
        if !self.following() {
            self.scroll_up += lines.len();
        }
        for line in lines {
            self.bytes += line.text.len();
            self.lines.push_back(line.clone());
        }
        self.trim_front()
    }

    /// Drop the oldest lines beyond the bounds, and give them out; what is
    /// dropped can be read again (older moves to the new first line).
    fn trim_front(&mut self) -> Vec<LogLine> {
        let mut gone = Vec::new();
        while self.lines.len() > WINDOW_LINES || self.bytes > WINDOW_BYTES {
            let Some(line) = self.lines.pop_front() else {
                break;
            };
            self.bytes -= line.text.len();
            gone.push(line);
        }
        let dropped = gone.len();
        if dropped > 0 {
            if let Some(first) = self.lines.front() {
                self.older = Older::Before(first.at);
            }
            self.current = self.current.and_then(|c| c.checked_sub(dropped));
            self.scroll_up = self.scroll_up.min(self.lines.len().saturating_sub(1));
        }
        gone
    }

    /// Put older lines (oldest first) in front; the view does not move. The
    /// newest lines are dropped beyond the bounds (then `newer_dropped`).
    pub fn prepend(&mut self, lines: Vec<LogLine>, older: Older) {
        self.loading = false;
        self.older = older;
        let added = lines.len();
        for line in lines.into_iter().rev() {
            self.bytes += line.text.len();
            self.lines.push_front(line);
        }
        self.current = self.current.map(|c| c + added);
        while self.lines.len() > WINDOW_LINES || self.bytes > WINDOW_BYTES {
            let Some(line) = self.lines.pop_back() else {
                break;
            };
            self.bytes -= line.text.len();
            self.newer_dropped = true;
            self.scroll_up = self.scroll_up.saturating_sub(1);
        }
        if self.current.is_some_and(|c| c >= self.lines.len()) {
            self.current = None;
        }
    }

    /// The lines to draw in `rows` rows (one row each): `(start, end)`.
    #[must_use]
    pub fn window(&self, rows: usize) -> (usize, usize) {
        let len = self.lines.len();
        let end = len - self.scroll_up.min(len);
        (end.saturating_sub(rows), end)
    }

    /// Scroll by `delta` lines (negative: up, older), for a view `rows`
    /// high. Cut lines (`wrap` false) take a row each, so the oldest line
    /// is at the top once `rows` lines are below it; wrapped ones may take
    /// more, so any line can be the bottom one. Returns whether older lines
    /// should be read now (the top of the window is within a page).
    pub fn scroll(&mut self, delta: isize, rows: usize, wrap: bool) -> bool {
        let shown = if wrap { 1 } else { rows.max(1) };
        let max = self.lines.len().saturating_sub(shown);
        self.scroll_up = if delta < 0 {
            self.scroll_up.saturating_add(delta.unsigned_abs())
        } else {
            self.scroll_up.saturating_sub(delta.unsigned_abs())
        }
        .min(max);
        self.wants_older(rows)
    }

    /// Scroll by `delta` screen rows (negative: up, older) while lines
    /// wrap, `height` giving the rows a line takes: the bottom row moves
    /// through a long line's rows one by one, then on to the next line.
    /// The bottom line (the cursor line) always keeps a row on the screen;
    /// any line can be the bottom one. Returns whether older lines should
    /// be read now, as [`Buffer::scroll`].
    pub fn scroll_rows(
        &mut self,
        delta: isize,
        rows: usize,
        height: impl Fn(&LogLine) -> usize,
    ) -> bool {
        let len = self.lines.len();
        self.cursor = 0;
        if len == 0 {
            return false;
        }
        self.scroll_up = self.scroll_up.min(len - 1);
        let bottom_height = |b: &Self| height(&b.lines[len - 1 - b.scroll_up]).max(1);
        self.skip_rows = self.skip_rows.min(bottom_height(self) - 1);
        let mut n = delta.unsigned_abs();
        while n > 0 {
            if delta < 0 {
                let room = bottom_height(self) - 1 - self.skip_rows;
                if n <= room {
                    self.skip_rows += n;
                    n = 0;
                } else if self.scroll_up + 1 < len {
                    n -= room + 1;
                    self.scroll_up += 1;
                    self.skip_rows = 0;
                } else {
                    self.skip_rows += room;
                    n = 0;
                }
            } else if n <= self.skip_rows {
                self.skip_rows -= n;
                n = 0;
            } else if self.scroll_up > 0 {
                n -= self.skip_rows + 1;
                self.scroll_up -= 1;
                self.skip_rows = bottom_height(self) - 1;
            } else {
                self.skip_rows = 0;
                n = 0;
            }
        }
        self.wants_older(rows)
    }

    /// Whether the top of what is shown is within a page of the oldest line
    /// held and older lines can be read.
    #[must_use]
    pub fn wants_older(&self, rows: usize) -> bool {
        let (start, _) = self.window(rows);
        matches!(self.older, Older::Before(_)) && !self.loading && start <= rows
    }

    /// Back to the bottom, following (`G`). `false` when newer lines were
    /// dropped: the tail must be read again.
    pub fn follow(&mut self) -> bool {
        self.scroll_up = 0;
        self.skip_rows = 0;
        self.cursor = 0;
        !self.newer_dropped
    }

    /// Fill the screen when the lines from the oldest held down to the
    /// bottom row take fewer than `rows` rows (a search jumped to a line
    /// near the start of what is held): the bottom moves down over the
    /// lines after it until the screen is full, the cursor staying on its
    /// line (cut lines); wrapped (`height` giving a line's rows), the
    /// bottom line moves down, the cursor being the bottom line.
    pub fn fill_screen(&mut self, rows: usize, wrap: bool, height: impl Fn(&LogLine) -> usize) {
        let len = self.lines.len();
        if len == 0 || self.scroll_up == 0 {
            return;
        }
        let end = len - self.scroll_up.min(len);
        if wrap {
            let mut used: usize = self.lines.range(..end).map(|l| height(l).max(1)).sum();
            used = used.saturating_sub(self.skip_rows);
            while self.scroll_up > 0 {
                let next = height(&self.lines[len - self.scroll_up]).max(1);
                if used + next > rows {
                    break;
                }
                used += next;
                self.scroll_up -= 1;
                self.skip_rows = 0;
            }
        } else if end < rows {
            let shift = (rows.min(len) - end).min(self.scroll_up);
            self.scroll_up -= shift;
            self.cursor += shift;
        }
    }

    /// Put lines read again after the newest held (oldest first: a
    /// search forward after newer lines were dropped); the view does not
    /// move. The oldest lines are dropped beyond the bounds.
    pub fn append_read(&mut self, lines: &[LogLine]) {
        for line in lines {
            self.bytes += line.text.len();
            self.lines.push_back(line.clone());
        }
        self.scroll_up += lines.len();
        let _dropped = self.trim_front();
    }

    /// Make the oldest match of `query` the current one (the bottom row).
    /// `false` when none is held.
    pub fn find_oldest(&mut self, query: &str) -> bool {
        let Some(index) =
            (0..self.lines.len()).find(|&i| !find_all(&self.lines[i].text, query).is_empty())
        else {
            return false;
        };
        self.current = Some(index);
        self.scroll_up = self.lines.len() - 1 - index;
        self.skip_rows = 0;
        self.cursor = 0;
        true
    }

    /// Whether any line held matches `query` (a search that found nothing
    /// says `no match`, not `no older match`).
    #[must_use]
    pub fn holds_match(&self, query: &str) -> bool {
        !query.is_empty()
            && self
                .lines
                .iter()
                .any(|l| !find_all(&l.text, query).is_empty())
    }

    /// Move to the next match of `query`, older (`n`) or newer (`N`) than
    /// the current one (or the bottom line shown); it becomes the bottom
    /// row. `false` when there is none among the lines held.
    pub fn find(&mut self, query: &str, older: bool) -> bool {
        let len = self.lines.len();
        if len == 0 || query.is_empty() {
            return false;
        }
        let bottom = self.selected().unwrap_or(len - 1);
        let anchor = self.current.filter(|&c| c < len).unwrap_or(bottom);
        let hit = |i: &usize| !find_all(&self.lines[*i].text, query).is_empty();
        let found = if older {
            let from = if self.current.is_some() {
                anchor
            } else {
                anchor + 1
            };
            (0..from).rev().find(hit)
        } else {
            (anchor + 1..len).find(hit)
        };
        let Some(index) = found else {
            return false;
        };
        self.current = Some(index);
        self.scroll_up = len - 1 - index;
        self.skip_rows = 0;
        self.cursor = 0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::logtext::{FileKey, LinePos};

    fn line(text: &str, offset: u64) -> LogLine {
        LogLine {
            text: text.into(),
            service: 0,
            at: LinePos {
                file: FileKey { dev: 1, ino: 1 },
                offset,
            },
            cont: false,
            cut: false,
        }
    }

    fn lines(n: usize) -> Vec<LogLine> {
        (0..n)
            .map(|i| line(&format!("l{i}"), i as u64 * 10))
            .collect()
    }

    /// A search with no match held anywhere is told apart from one with
    /// no match older or newer than the current one.
    #[test]
    fn holds_match_says_whether_any_line_matches() {
        let b = Buffer::new(lines(20), Older::Start);
        assert!(b.holds_match("l19"));
        assert!(!b.holds_match("nowhere"));
        assert!(!b.holds_match(""));
    }

    #[test]
    fn paused_view_stays_put_when_lines_arrive() {
        let mut b = Buffer::new(lines(20), Older::Start);
        assert!(b.following());
        b.scroll(-5, 10, false);
        assert!(!b.following());
        assert_eq!(b.window(10), (5, 15));
        b.push(&[line("new", 999)]);
        assert_eq!(b.scroll_up, 6);
        assert_eq!(b.window(10), (5, 15));
        assert!(b.follow());
        assert_eq!(b.window(10), (11, 21));
    }

    #[test]
    fn scrolling_near_the_top_asks_for_older() {
        let older = Older::Before(line("", 0).at);
        let mut b = Buffer::new(lines(50), older);
        assert!(!b.scroll(-10, 10, false));
        assert!(b.scroll(-25, 10, false));
        b.loading = true;
        assert!(!b.wants_older(10));
        b.prepend(vec![line("older", 0)], Older::Start);
        assert!(!b.loading);
        assert_eq!(b.lines()[0].text, "older");
        assert_eq!(b.scroll_up, 35);
        assert!(!b.wants_older(10));
        // Wrapped, any line can be the bottom one.
        let mut b = Buffer::new(lines(50), Older::Start);
        b.scroll(-100, 10, true);
        assert_eq!(b.scroll_up, 49);
        b.scroll(-100, 10, false);
        assert_eq!(b.scroll_up, 40);
    }

    #[test]
    fn the_window_is_bounded_both_ways() {
        let mut b = Buffer::new(lines(WINDOW_LINES), Older::Start);
        b.push(&[line("next", 1)]);
        assert_eq!(b.lines().len(), WINDOW_LINES);
        assert_eq!(b.older, Older::Before(b.lines()[0].at));
        b.prepend(vec![line("a", 0), line("b", 5)], Older::Start);
        assert_eq!(b.lines().len(), WINDOW_LINES);
        assert!(b.newer_dropped);
        b.push(&[line("lost", 2)]);
        assert_eq!(b.missed, 1);
        assert!(!b.follow());
    }

    #[test]
    fn the_cursor_moves_then_scrolls() {
        let mut b = Buffer::new(lines(20), Older::Start);
        assert_eq!(b.selected(), Some(19));
        b.move_cursor(-2, 5, false);
        assert_eq!((b.cursor, b.scroll_up, b.selected()), (2, 0, Some(17)));
        assert!(!b.following());
        b.push(&[line("new", 999)]);
        assert_eq!((b.cursor, b.scroll_up, b.selected()), (2, 1, Some(17)));
        b.move_cursor(-4, 5, false);
        assert_eq!((b.cursor, b.scroll_up, b.selected()), (4, 3, Some(13)));
        b.move_cursor(9, 5, false);
        assert_eq!((b.cursor, b.scroll_up, b.selected()), (0, 0, Some(20)));
        assert!(b.following());
        b.move_cursor(-3, 5, false);
        b.move_cursor(0, 5, true);
        assert_eq!((b.cursor, b.scroll_up, b.selected()), (0, 3, Some(17)));
    }

    #[test]
    fn wrapped_lines_scroll_by_rows() {
        let mut b = Buffer::new(lines(3), Older::Start);
        // l2 takes 5 rows, the others 1.
        let height = |l: &LogLine| if l.text == "l2" { 5 } else { 1 };
        b.scroll_rows(-1, 4, height);
        assert_eq!((b.scroll_up, b.skip_rows), (0, 1));
        assert!(!b.following());
        b.scroll_rows(-3, 4, height);
        assert_eq!((b.scroll_up, b.skip_rows), (0, 4));
        b.scroll_rows(-1, 4, height);
        assert_eq!((b.scroll_up, b.skip_rows), (1, 0));
        b.scroll_rows(-9, 4, height);
        assert_eq!((b.scroll_up, b.skip_rows), (2, 0));
        b.scroll_rows(2, 4, height);
        assert_eq!((b.scroll_up, b.skip_rows), (0, 4));
        b.scroll_rows(3, 4, height);
        assert_eq!((b.scroll_up, b.skip_rows), (0, 1));
        b.scroll_rows(5, 4, height);
        assert!(b.following());
    }

    #[test]
    fn search_moves_between_matches() {
        let mut b = Buffer::new(
            vec![
                line("error one", 0),
                line("ok", 1),
                line("Error two", 2),
                line("ok", 3),
            ],
            Older::Start,
        );
        assert!(b.find("error", true));
        assert_eq!(b.current, Some(2));
        assert_eq!(b.scroll_up, 1);
        assert!(b.find("error", true));
        assert_eq!(b.current, Some(0));
        assert!(!b.find("error", true));
        assert!(b.find("error", false));
        assert_eq!(b.current, Some(2));
        assert!(!b.find("missing", true));
    }

    #[test]
    fn a_match_near_the_oldest_line_fills_the_screen() {
        let mut b = Buffer::new(
            vec![
                line("needle", 0),
                line("a", 1),
                line("b", 2),
                line("c", 3),
                line("d", 4),
            ],
            Older::Start,
        );
        assert!(b.find("needle", true));
        assert_eq!(b.window(3), (0, 1));
        b.fill_screen(3, false, |_| 1);
        assert_eq!(b.window(3), (0, 3));
        assert_eq!(
            (b.selected(), b.current, b.cursor, b.scroll_up),
            (Some(0), Some(0), 2, 2)
        );
        // Wrapped: lines after the bottom one fill what is left.
        let mut b = Buffer::new(
            vec![line("needle", 0), line("a", 1), line("b", 2), line("c", 3)],
            Older::Start,
        );
        assert!(b.find("needle", true));
        b.fill_screen(4, true, |l| if l.text == "a" { 2 } else { 1 });
        assert_eq!((b.scroll_up, b.cursor), (1, 0));
    }
}
