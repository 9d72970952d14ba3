//! The logs view's search into older history (`n` past the lines held):
//! one service's log read backwards a page at a time
//! ([`super::history::older`]: blocks of [`crate::model::logtext::BLOCK`]
//! through the current file then `.log.1` .. `.log.3`), never whole,
//! until a line matches or [`SEARCH_BYTES`] were searched.

use std::collections::VecDeque;
use std::io;
use std::path::Path;

use super::history;
use crate::model::logtext::{LinePos, RawLine, find_all, line_text};
use crate::model::logview::{HistorySearch, LogLine, Older, TAIL_LINES, WINDOW_LINES};
use crate::model::redact::Redactor;

/// The most bytes one search reads back before it stops and says so.
pub const SEARCH_BYTES: u64 = 64 << 20;

/// What a search back found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchBack {
    /// Whether a line matched.
    pub found: bool,
    /// Lines to show, oldest first: when found, from the page with the
    /// match on (up to the position searched from when `contiguous`);
    /// empty when nothing matched.
    pub lines: Vec<RawLine>,
    /// Where the lines before `lines` are.
    pub older: Older,
    /// Whether `lines` end just before the position searched from (they
    /// can be put in front of the lines held; else they replace them).
    pub contiguous: bool,
    /// Bytes of lines searched.
    pub searched: u64,
    /// The search stopped at its bound ([`SEARCH_BYTES`]), not at the
    /// start of the oldest generation.
    pub bounded: bool,
    /// Where it stopped at its bound: a next search goes on from there.
    pub resume: Option<LinePos>,
}

/// Search `base` (`<service>.log` and its generations) backwards from
/// `before` for the newest line whose sanitized text holds `query`
/// (smart case, as the view's search), reading at most `max` bytes. The
/// text is matched as the view shows it: redacted by `redactor`.
///
/// # Errors
/// A read failed.
pub fn search_back(
    base: &Path,
    before: LinePos,
    query: &str,
    max: u64,
    redactor: &Redactor,
) -> io::Result<SearchBack> {
    let mut pages: VecDeque<Vec<RawLine>> = VecDeque::new();
    let mut kept = 0;
    let mut contiguous = true;
    let mut searched = 0;
    let mut pos = before;
    loop {
        if searched >= max {
            let mut back = missed(searched, true);
            back.resume = Some(pos);
            return Ok(back);
        }
        let (page, older) = history::older(base, pos, TAIL_LINES)?;
        if page.is_empty() && older == Older::Before(pos) {
            return Ok(missed(searched, false));
        }
        searched += page.iter().map(|l| l.bytes.len() as u64 + 1).sum::<u64>();
        // A page's first piece is taken as beginning outside a value (the
        // page before it, older, is read after it).
        let mut open = false;
        let hit = page.iter().any(|l| matches(l, query, redactor, &mut open));
        kept += page.len();
        pages.push_front(page);
        // Keep at most half a tab's lines; beyond, what is shown no longer
        // meets the lines held.
        while kept > WINDOW_LINES / 2 && pages.len() > 1 {
            if let Some(newest) = pages.pop_back() {
                kept -= newest.len();
                contiguous = false;
            }
        }
        if hit {
            return Ok(SearchBack {
                found: true,
                lines: pages.into_iter().flatten().collect(),
                older,
                contiguous,
                searched,
                bounded: false,
                resume: None,
            });
        }
        match older {
            Older::Before(next) => pos = next,
            Older::Start => return Ok(missed(searched, false)),
        }
    }
}

/// Whether `line`'s text as the view shows it (sanitized, then redacted)
/// holds `query`: a search never finds a line by the secret it hides, nor
/// by a credential-named JSON field's value ([`Redactor::log_line`], as
/// `crate::model::logview::LogLine::redact_cut` redacts what is shown).
/// `open`: the line before was a piece that ended inside a
/// credential-named field's string value (this one, when a later piece,
/// begins inside it); set to whether this one ends inside one.
fn matches(line: &RawLine, query: &str, redactor: &Redactor, open: &mut bool) -> bool {
    let text = line_text(&line.bytes);
    let inside = *open && line.cont;
    let (shown, ends_open) = redactor.log_piece(&text, line.cont || line.cut, false, inside);
    *open = ends_open;
    !find_all(&shown, query).is_empty()
}

fn missed(searched: u64, bounded: bool) -> SearchBack {
    SearchBack {
        found: false,
        lines: Vec::new(),
        older: Older::Start,
        contiguous: false,
        searched,
        bounded,
        resume: None,
    }
}

/// [`search_back`] for the view: service `service`'s lines, sanitized, as
/// [`HistorySearch`] (a failed read is logged and searched nothing).
#[must_use]
pub fn search_history(
    base: &Path,
    service: u16,
    before: LinePos,
    query: &str,
    max: u64,
    redactor: &Redactor,
) -> HistorySearch {
    crate::render_thread::assert_off("search the logs");
    match search_back(base, before, query, max, redactor) {
        Ok(back) => view_search(&back, service, max),
        Err(e) => {
            tracing::warn!("cannot search older log lines: {e}");
            HistorySearch {
                found: None,
                searched: 0,
                bound: None,
                resume: None,
            }
        }
    }
}

/// Search `base`'s lines after `after` (the newest line held, when newer
/// ones were dropped for older) forwards, towards the tail: from its file
/// (by identity, wherever rotation put it) on through the newer
/// generations to `<service>.log`, read in blocks of
/// [`crate::model::logtext::BLOCK`], until a line matches `query` (then
/// a page more is read, to fill a screen after it) or `max` bytes were
/// searched. The lines kept are at most half a tab's, oldest dropped
/// (then not `contiguous`). The last unended line of the current file is
/// not searched (the follower shows it).
///
/// # Errors
/// A read failed.
pub fn search_forward(
    base: &Path,
    after: LinePos,
    query: &str,
    max: u64,
    redactor: &Redactor,
) -> io::Result<SearchBack> {
    let Some((mut index, mut file)) = history::find_generation(base, after.file) else {
        return Ok(missed(0, false));
    };
    let mut key = after.file;
    let mut offset = after.offset;
    let mut assembler = crate::model::logtext::Assembler::default();
    let mut kept: VecDeque<RawLine> = VecDeque::new();
    let (mut contiguous, mut searched) = (true, 0u64);
    let mut hit: Option<usize> = None;
    let mut open = false;
    let mut block = vec![0; crate::model::logtext::BLOCK];
    loop {
        let read = std::os::unix::fs::FileExt::read_at(&file, &mut block, offset)?;
        let mut out = Vec::new();
        if read == 0 {
            if index == 0 {
                break;
            }
            // The end of an older generation: its last line, then the next
            // newer generation from its start.
            assembler.flush(&mut out);
            let Some(f) = super::open_log(&super::generation(base, index - 1)).ok() else {
                break;
            };
            index -= 1;
            key = super::key_of(&f.metadata()?);
            (file, offset) = (f, 0);
            assembler = crate::model::logtext::Assembler::default();
        } else {
            assembler.push(&block[..read], LinePos { file: key, offset }, &mut out);
            offset += read as u64;
        }
        for line in out {
            if line.at.file == after.file && line.at.offset <= after.offset {
                continue;
            }
            searched += line.bytes.len() as u64 + 1;
            if matches(&line, query, redactor, &mut open) && hit.is_none() {
                hit = Some(kept.len());
            }
            kept.push_back(line);
            if kept.len() > WINDOW_LINES / 2 {
                kept.pop_front();
                contiguous = false;
                hit = hit.map(|h| h.saturating_sub(1));
            }
        }
        match hit {
            Some(h) if kept.len() - h > TAIL_LINES => break,
            None if searched >= max => return Ok(missed(searched, true)),
            _ => {}
        }
    }
    if hit.is_none() {
        return Ok(missed(searched, false));
    }
    let older = kept.front().map_or(Older::Start, |l| Older::Before(l.at));
    Ok(SearchBack {
        found: true,
        lines: kept.into(),
        older,
        contiguous,
        searched,
        bounded: false,
        resume: None,
    })
}

/// [`search_forward`] for the view, as [`search_history`] is for
/// [`search_back`].
#[must_use]
pub fn search_newer(
    base: &Path,
    service: u16,
    after: LinePos,
    query: &str,
    max: u64,
    redactor: &Redactor,
) -> HistorySearch {
    crate::render_thread::assert_off("search the logs");
    match search_forward(base, after, query, max, redactor) {
        Ok(forward) => view_search(&forward, service, max),
        Err(e) => {
            tracing::warn!("cannot search newer log lines: {e}");
            HistorySearch {
                found: None,
                searched: 0,
                bound: None,
                resume: None,
            }
        }
    }
}

fn view_search(back: &SearchBack, service: u16, max: u64) -> HistorySearch {
    HistorySearch {
        found: back.found.then(|| {
            let lines = back
                .lines
                .iter()
                .map(|r| LogLine::from_raw(r, service))
                .collect();
            (lines, back.older, back.contiguous)
        }),
        searched: back.searched,
        bound: back.bounded.then_some(max),
        resume: back.resume,
    }
}
