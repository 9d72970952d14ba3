//! Reading a log backwards in blocks ([`logtext::BLOCK`]), never the whole
//! file: the tail at open ([`tail`]) and each scroll-back step
//! ([`older`], and [`older_all`] for the all-services tab), across the
//! rotated generations `.log.1` .. `.log.3`.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::Path;

use super::{generation, key_of, open_log};
use crate::model::logtext::{self, BLOCK, FileKey, LinePos, RawLine, scan_back};
use crate::model::logview::{LogLine, Older, TAIL_BYTES, TAIL_LINES};

/// The newest generation index read back to (`.log.3`; stackless 0.4.0
/// keeps `.log.1` and `.log.2`, see `stackless-local-0.4.0/src/logging.rs`).
pub const OLDEST_GENERATION: u32 = 3;

/// Lines read backwards from `top` in `file`, oldest first, until `want`
/// lines or `max_bytes` read or the start, or a block wholly inside one
/// line (its pieces given, the first marked [`RawLine::cut`]); with the
/// new top.
///
/// # Errors
/// A read failed.
pub fn read_back(
    file: &File,
    key: FileKey,
    mut top: u64,
    want: usize,
    max_bytes: usize,
) -> io::Result<(Vec<RawLine>, u64)> {
    let mut chunks: Vec<Vec<RawLine>> = Vec::new();
    let mut count = 0;
    let mut read = 0;
    let mut block = vec![0; BLOCK];
    while top > 0 && count < want && read < max_bytes {
        let start = top.saturating_sub(BLOCK as u64);
        let len = usize::try_from(top - start).unwrap_or(BLOCK);
        file.read_exact_at(&mut block[..len], start)?;
        read += len;
        let scan = scan_back(&block[..len], start, key);
        count += scan.lines.len();
        chunks.push(scan.lines);
        top = scan.top;
        if scan.inside {
            // Inside a line longer than a block: its last part is enough;
            // its start is never searched for (a file of one 1 GiB line).
            break;
        }
    }
    let mut lines: Vec<RawLine> = chunks.into_iter().rev().flatten().collect();
    if lines.len() > want {
        let cut = lines.len() - want;
        top = lines[cut].at.offset;
        lines.drain(..cut);
        // A piece first: its line goes on before, unread.
        if let Some(first) = lines.first_mut().filter(|l| l.cont) {
            first.cut = true;
        }
    }
    Ok((lines, top))
}

/// What the tail of a log's current file holds at open.
#[derive(Debug)]
pub struct Tail {
    /// The last complete lines (at most [`TAIL_LINES`]), oldest first.
    pub lines: Vec<RawLine>,
    /// The bytes after the last `\n` (a line still being written), for the
    /// follower's assembler, and where they start.
    pub carry: (Vec<u8>, LinePos),
    /// Where the follower goes on: the file's length when read.
    pub end: u64,
    /// Where older lines are.
    pub older: Older,
}

/// The tail of `file` (the current generation of `base`): one `fstat`, then
/// blocks read backwards from its end. Older generations are read when the
/// current file holds fewer lines than [`TAIL_LINES`].
///
/// # Errors
/// A read failed.
pub fn tail(base: &Path, file: &File) -> io::Result<Tail> {
    let meta = file.metadata()?;
    let key = key_of(&meta);
    let end = meta.len();
    // The bytes after the last newline wait in the follower's assembler.
    let last = end.saturating_sub(logtext::MAX_LINE as u64);
    let mut probe = vec![0; usize::try_from(end - last).unwrap_or(0)];
    file.read_exact_at(&mut probe, last)?;
    let carry_len = match probe.iter().rposition(|&b| b == b'\n') {
        Some(newline) => probe.len() - newline - 1,
        // No newline in the last MAX_LINE bytes (or the whole file is one
        // unended line): those bytes wait; what is before is paged as pieces.
        None => probe.len(),
    };
    let carry_at = end - carry_len as u64;
    let carry = probe[probe.len() - carry_len..].to_vec();
    let (mut lines, top) = read_back(file, key, carry_at, TAIL_LINES, TAIL_BYTES)?;
    let mut older = Older::Before(LinePos {
        file: key,
        offset: top,
    });
    // The current file read to its start and short: older generations.
    if lines.len() < TAIL_LINES && top == 0 {
        let more = self::older(base, pos_of(older), TAIL_LINES - lines.len())?;
        older = more.1;
        let mut all = more.0;
        all.append(&mut lines);
        lines = all;
    }
    Ok(Tail {
        lines,
        carry: (
            carry,
            LinePos {
                file: key,
                offset: carry_at,
            },
        ),
        end,
        older,
    })
}

fn pos_of(older: Older) -> LinePos {
    match older {
        Older::Before(pos) => pos,
        Older::Start => LinePos::default(),
    }
}

/// The generation of `base` that is the file `key` now (rotation renames
/// it), with its index.
pub(super) fn find_generation(base: &Path, key: FileKey) -> Option<(u32, File)> {
    (0..=OLDEST_GENERATION).find_map(|index| {
        let file = open_log(&generation(base, index)).ok()?;
        let meta = file.metadata().ok()?;
        (key_of(&meta) == key).then_some((index, file))
    })
}

/// Up to `want` lines before `before` (oldest first), walking into older
/// generations at a file's start; with where to go on from.
///
/// # Errors
/// A read failed.
pub fn older(base: &Path, before: LinePos, want: usize) -> io::Result<(Vec<RawLine>, Older)> {
    crate::render_thread::assert_off("read older log lines");
    let Some((mut index, mut file)) = find_generation(base, before.file) else {
        // The file is gone (rotated past the oldest kept, or removed).
        return Ok((Vec::new(), Older::Start));
    };
    let mut top = before.offset;
    let mut key = before.file;
    let mut got: Vec<RawLine> = Vec::new();
    loop {
        if top > 0 {
            let (mut lines, new_top) = read_back(&file, key, top, want - got.len(), TAIL_BYTES)?;
            lines.append(&mut got);
            got = lines;
            top = new_top;
        }
        if top > 0 || got.len() >= want {
            return Ok((
                got,
                Older::Before(LinePos {
                    file: key,
                    offset: top,
                }),
            ));
        }
        // The start of this generation: the next older one, from its end.
        let next = (index + 1..=OLDEST_GENERATION)
            .find_map(|i| open_log(&generation(base, i)).ok().map(|f| (i, f)));
        let Some((i, f)) = next else {
            return Ok((got, Older::Start));
        };
        let meta = f.metadata()?;
        index = i;
        key = key_of(&meta);
        top = meta.size();
        file = f;
        if top == 0 {
            continue;
        }
    }
}

/// One all-services scroll-back step: for each `(service, before)` in
/// `reads`, up to `want` lines before it in `bases[service]` (its
/// `<service>.log`), through its older generations, as the view's lines.
/// A service whose read fails gives no lines and no more (logged).
#[must_use]
pub fn older_all(
    bases: &[std::path::PathBuf],
    reads: &[(u16, LinePos)],
    want: usize,
) -> Vec<(u16, Vec<LogLine>, Older)> {
    crate::render_thread::assert_off("read older log lines");
    reads
        .iter()
        .map(|&(service, before)| {
            let Some(base) = bases.get(usize::from(service)) else {
                return (service, Vec::new(), Older::Start);
            };
            match older(base, before, want) {
                Ok((raw, older)) => (
                    service,
                    raw.iter().map(|r| LogLine::from_raw(r, service)).collect(),
                    older,
                ),
                Err(e) => {
                    tracing::warn!("cannot read older log lines: {e}");
                    (service, Vec::new(), Older::Start)
                }
            }
        })
        .collect()
}

/// A whole line read again from its file (Enter on a piece of a line
/// longer than [`logtext::MAX_LINE`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeLine {
    /// Its bytes, at most the bound asked for.
    pub bytes: Vec<u8>,
    /// Its start is further back than the bound: read from there.
    pub start_cut: bool,
    /// It goes on past the bound: cut there.
    pub end_cut: bool,
}

/// The whole line that the piece at `piece` belongs to, read from its
/// file (found by identity among `base`'s generations): backwards from the
/// piece for the `\n` before it (at most `max` bytes back), then forwards
/// to its `\n`, at most `max` bytes kept. `None` when the file is gone.
///
/// # Errors
/// A read failed.
pub fn whole_line(base: &Path, piece: LinePos, max: usize) -> io::Result<Option<WholeLine>> {
    let Some((_, file)) = find_generation(base, piece.file) else {
        return Ok(None);
    };
    let mut block = vec![0; BLOCK];
    let (mut start, mut start_cut) = (piece.offset, false);
    while start > 0 {
        if piece.offset - start >= max as u64 {
            start_cut = true;
            break;
        }
        let from = start.saturating_sub(BLOCK as u64);
        let len = usize::try_from(start - from).unwrap_or(BLOCK);
        file.read_exact_at(&mut block[..len], from)?;
        if let Some(newline) = block[..len].iter().rposition(|&b| b == b'\n') {
            start = from + newline as u64 + 1;
            break;
        }
        start = from;
    }
    let (mut bytes, mut at) = (Vec::new(), start);
    while bytes.len() <= max {
        let read = file.read_at(&mut block, at)?;
        if read == 0 {
            break;
        }
        if let Some(newline) = block[..read].iter().position(|&b| b == b'\n') {
            bytes.extend_from_slice(&block[..newline]);
            break;
        }
        bytes.extend_from_slice(&block[..read]);
        at += read as u64;
    }
    let end_cut = bytes.len() > max;
    bytes.truncate(max);
    Ok(Some(WholeLine {
        bytes,
        start_cut,
        end_cut,
    }))
}

/// [`whole_line`] as the full-text view shows it, titled `title`:
/// sanitized, bounded by the view's [`crate::model::fulltext::MAX_BYTES`],
/// what was cut said.
#[must_use]
pub fn whole_line_text(
    base: &Path,
    piece: LinePos,
    title: &str,
) -> crate::model::fulltext::FullText {
    crate::render_thread::assert_off("read a whole log line");
    use crate::model::fulltext::{FullText, MAX_BYTES};
    let mut text = FullText::new(title);
    text.indent = 0;
    match whole_line(base, piece, MAX_BYTES) {
        Ok(Some(line)) => {
            if line.start_cut {
                text.line(
                    "… (the line starts more than 10 MiB before this piece: shown from there)",
                );
            }
            if line.end_cut {
                text.title.push_str(" · cut at 10 MiB: the line goes on");
            }
            text.line(&logtext::line_text(&line.bytes));
        }
        Ok(None) => text.line("the file this line was in is gone (rotated away or removed)"),
        Err(e) => text.line(&format!(
            "cannot read the line again: {}",
            crate::model::text::sanitize(&e.to_string())
        )),
    }
    text
}
