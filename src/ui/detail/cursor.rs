//! The detail view's field cursor: which drawn rows each field takes, and
//! how `j`/`k`, paging and the wheel move the cursor and the scroll
//! together. Pure: the document as drawn (its rows' line indices) and the
//! pane's height are parameters.
//!
//! Rules: `j`/`k` move the cursor to the next / previous field and scroll
//! just enough to show it; past the last (first) field, or while the
//! cursor's field is out of view, they scroll by one row like a pager (the
//! definition below the fields has none). Whenever the cursor's field goes
//! out of view (paging, `g`/`G`, the wheel, that pager scroll), the cursor
//! moves onto the nearest field in view, if one is. `g`/`G` put the cursor
//! on the first / last field.

use super::DocLine;

/// Where one field is drawn: its first row and how many rows it takes
/// (more than one when its text wraps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldRows {
    /// First drawn row.
    pub start: usize,
    /// Drawn rows (at least 1).
    pub rows: usize,
}

/// The drawn rows of `doc`'s fields, in document order: `line_of_row`
/// gives, for each drawn row in order, the index of the document line it
/// belongs to.
#[must_use]
pub(crate) fn field_rows(doc: &[DocLine<'_>], line_of_row: &[usize]) -> Vec<FieldRows> {
    let mut out: Vec<(usize, FieldRows)> = Vec::new();
    for (row, &line) in line_of_row.iter().enumerate() {
        if doc.get(line).is_none_or(|l| l.field.is_none()) {
            continue;
        }
        match out.last_mut() {
            Some((last, rows)) if *last == line => rows.rows += 1,
            _ => out.push((
                line,
                FieldRows {
                    start: row,
                    rows: 1,
                },
            )),
        }
    }
    out.into_iter().map(|(_, rows)| rows).collect()
}

/// The document line of field number `cursor` (clamped to the last
/// field), `None` when the document has no field.
#[must_use]
pub(crate) fn cursor_line(doc: &[DocLine<'_>], cursor: usize) -> Option<usize> {
    let fields: Vec<usize> = doc
        .iter()
        .enumerate()
        .filter(|(_, l)| l.field.is_some())
        .map(|(i, _)| i)
        .collect();
    fields
        .get(cursor.min(fields.len().checked_sub(1)?))
        .copied()
}

/// What moved the detail view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Move {
    /// `j` (`true`) or `k` (`false`): the next / previous field.
    Field(bool),
    /// Scroll by this many drawn rows (paging, the wheel).
    Scroll(isize),
    /// `G` (`true`): the cursor onto the last field, scrolled as far down
    /// as keeps it in view (`G` again: on to the document's end); `g`
    /// (`false`): the first field, at the top (not left
    /// mid-page).
    Edge(bool),
}

/// The cursor (a field index) and the scroll (the first drawn row shown)
/// after `step`, for a document of `total` drawn rows shown `rows` at a
/// time, whose fields are drawn at `fields`.
#[must_use]
pub(crate) fn step(
    fields: &[FieldRows],
    total: usize,
    rows: usize,
    (cursor, scroll): (usize, usize),
    step: Move,
) -> (usize, usize) {
    let rows = rows.max(1);
    let max = total.saturating_sub(rows);
    let scroll = scroll.min(max);
    let Some(last) = fields.len().checked_sub(1) else {
        let delta = match step {
            Move::Field(down) => {
                if down {
                    1
                } else {
                    -1
                }
            }
            Move::Scroll(delta) => delta,
            Move::Edge(last) => {
                if last {
                    isize::MAX / 2
                } else {
                    isize::MIN / 2
                }
            }
        };
        return (0, scroll.saturating_add_signed(delta).min(max));
    };
    let cursor = cursor.min(last);
    let shown = |f: FieldRows, scroll: usize| f.start >= scroll && f.start < scroll + rows;
    // The cursor's field out of view: onto the nearest field in view.
    let snap = |cursor: usize, scroll: usize| {
        if shown(fields[cursor], scroll) {
            return (cursor, scroll);
        }
        let mut visible = (0..fields.len()).filter(|&i| shown(fields[i], scroll));
        let nearest = if fields[cursor].start < scroll {
            visible.next()
        } else {
            visible.next_back()
        };
        (nearest.unwrap_or(cursor), scroll)
    };
    match step {
        Move::Field(down) => {
            if shown(fields[cursor], scroll) {
                if down && cursor < last {
                    return (cursor + 1, reveal(fields[cursor + 1], scroll, rows, max));
                }
                if !down && cursor > 0 {
                    return (cursor - 1, reveal(fields[cursor - 1], scroll, rows, max));
                }
            }
            let scroll = if down {
                (scroll + 1).min(max)
            } else {
                scroll.saturating_sub(1)
            };
            snap(cursor, scroll)
        }
        Move::Scroll(delta) => snap(cursor, scroll.saturating_add_signed(delta).min(max)),
        Move::Edge(false) => (0, 0),
        Move::Edge(true) => {
            let at = fields[last].start.min(max);
            // Already there: on to the document's end (the definition).
            if cursor == last && scroll == at {
                (last, max)
            } else {
                (last, at)
            }
        }
    }
}

/// The scroll that shows `field` whole (its first row when it is taller
/// than the pane), moving as little as it can from `scroll`.
fn reveal(field: FieldRows, scroll: usize, rows: usize, max: usize) -> usize {
    let end = field.start + field.rows;
    let scroll = if field.start < scroll {
        field.start
    } else if end > scroll + rows {
        (end - rows).min(field.start)
    } else {
        scroll
    };
    scroll.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(start: usize, rows: usize) -> FieldRows {
        FieldRows { start, rows }
    }

    #[test]
    fn j_and_k_move_between_fields_and_scroll_to_show_them() {
        // Fields at rows 1, 2, 5 (two rows), 9; 20 rows drawn, 4 shown.
        let fields = [f(1, 1), f(2, 1), f(5, 2), f(9, 1)];
        assert_eq!(step(&fields, 20, 4, (0, 0), Move::Field(true)), (1, 0));
        // Field 2 ends at row 7: the scroll moves to 3 to show it whole.
        assert_eq!(step(&fields, 20, 4, (1, 0), Move::Field(true)), (2, 3));
        assert_eq!(step(&fields, 20, 4, (2, 3), Move::Field(true)), (3, 6));
        // Past the last field, j scrolls on.
        assert_eq!(step(&fields, 20, 4, (3, 6), Move::Field(true)), (3, 7));
        assert_eq!(step(&fields, 20, 4, (3, 16), Move::Field(true)), (3, 16));
        // k scrolls back until the cursor's field is in view, then moves.
        assert_eq!(step(&fields, 20, 4, (3, 10), Move::Field(false)), (3, 9));
        assert_eq!(step(&fields, 20, 4, (3, 9), Move::Field(false)), (2, 5));
        assert_eq!(step(&fields, 20, 4, (0, 1), Move::Field(false)), (0, 0));
    }

    #[test]
    fn scrolling_puts_the_cursor_on_a_field_in_view() {
        let fields = [f(1, 1), f(2, 1), f(5, 2), f(9, 1)];
        assert_eq!(step(&fields, 20, 4, (0, 0), Move::Scroll(4)), (2, 4));
        assert_eq!(step(&fields, 20, 4, (3, 9), Move::Scroll(-8)), (1, 1));
        // No field in view: the cursor stays.
        assert_eq!(step(&fields, 20, 4, (3, 9), Move::Scroll(100)), (3, 16));
        // The cursor out of view (no field shown): j and k scroll, never
        // jump back to it; a field coming into view takes the cursor.
        assert_eq!(step(&fields, 20, 4, (0, 16), Move::Field(true)), (0, 16));
        assert_eq!(step(&fields, 20, 4, (0, 16), Move::Field(false)), (0, 15));
        assert_eq!(step(&fields, 20, 4, (0, 10), Move::Field(false)), (3, 9));
        // A document without fields scrolls.
        assert_eq!(step(&[], 20, 4, (0, 0), Move::Field(true)), (0, 1));
    }

    /// `G` puts the cursor on the last field (scrolled as
    /// far down as keeps it in view), `g` on the first, at the top.
    #[test]
    fn g_and_shift_g_take_the_cursor_to_the_first_and_last_field() {
        let fields = [f(1, 1), f(2, 1), f(5, 2), f(9, 1)];
        assert_eq!(step(&fields, 20, 4, (1, 2), Move::Edge(true)), (3, 9));
        // G again: the document's end.
        assert_eq!(step(&fields, 20, 4, (3, 9), Move::Edge(true)), (3, 16));
        assert_eq!(step(&fields, 20, 4, (3, 9), Move::Edge(false)), (0, 0));
        // The last field near the end: the scroll stops at the bottom.
        let fields = [f(1, 1), f(18, 1)];
        assert_eq!(step(&fields, 20, 4, (0, 0), Move::Edge(true)), (1, 16));
        assert_eq!(step(&fields, 20, 4, (1, 16), Move::Edge(true)), (1, 16));
        assert_eq!(step(&[], 20, 4, (0, 0), Move::Edge(true)), (0, 16));
    }
}
