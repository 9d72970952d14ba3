//! Log bytes into lines, purely: the forward [`Assembler`] a follower feeds
//! with whatever it read, the backward block scan ([`scan_back`]) that
//! pages through a file from its end without reading it whole, the
//! sanitized text of a line ([`line_text`]) and search matches
//! ([`find_all`]).
//!
//! A log is untrusted input: every line is shown through
//! [`super::text::sanitize`], invalid UTF-8 becomes `�`, and no line is
//! longer than [`MAX_LINE`] bytes: a longer one is cut into pieces, the
//! later ones marked [`RawLine::cont`] (nothing is dropped).

use std::ops::Range;

use super::text::sanitize;

/// The most bytes one shown line holds; a longer line is cut into pieces of
/// this size (the last piece shorter).
pub const MAX_LINE: usize = 4096;

/// The block size of backward reads: a multiple of [`MAX_LINE`].
pub const BLOCK: usize = 16 * MAX_LINE;

/// Which file a position is in: `(st_dev, st_ino)`, so a position survives
/// the file being renamed by a rotation (`web.log` -> `web.log.1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FileKey {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// Where a line starts: a file and a byte offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LinePos {
    /// The file (by identity, not by name).
    pub file: FileKey,
    /// Byte offset of the line's first byte.
    pub offset: u64,
}

/// One line (or piece of a long line) as read, without its `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLine {
    /// The bytes, at most [`MAX_LINE`], as written (may be any bytes).
    pub bytes: Vec<u8>,
    /// Where it starts.
    pub at: LinePos,
    /// Whether this is a later piece of a line longer than [`MAX_LINE`].
    pub cont: bool,
    /// The line goes on before this piece, unread: the backward reader
    /// stopped at a block wholly inside one line (a file of one huge line
    /// is never scanned for its start).
    pub cut: bool,
}

/// The text to show for a line's bytes: invalid UTF-8 as `�`, one trailing
/// `\r` (CRLF logs) dropped, then [`sanitize`]d (escapes, bidi, NUL become
/// visible placeholders). Timestamps and everything else stay as written.
#[must_use]
pub fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let lossy = String::from_utf8_lossy(bytes);
    sanitize(&lossy).into_owned()
}

/// Cut `segment` (one line's bytes, starting at `at`) into pieces of at
/// most [`MAX_LINE`] bytes; the first piece's `cont` is `first_cont`, the
/// others' `true`.
fn pieces(segment: &[u8], at: LinePos, first_cont: bool, out: &mut Vec<RawLine>) {
    if segment.is_empty() {
        out.push(RawLine {
            bytes: Vec::new(),
            at,
            cont: first_cont,
            cut: false,
        });
        return;
    }
    let mut offset = at.offset;
    for (index, chunk) in segment.chunks(MAX_LINE).enumerate() {
        out.push(RawLine {
            bytes: chunk.to_vec(),
            at: LinePos { offset, ..at },
            cont: first_cont || index > 0,
            cut: false,
        });
        offset += chunk.len() as u64;
    }
}

/// Turns a stream of bytes (as a follower reads them, in any chunks) into
/// complete lines. The bytes after the last `\n` are kept until their line
/// ends; when more than [`MAX_LINE`] of them wait, a full piece is given
/// out at once (so memory stays bounded whatever the file holds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assembler {
    carry: Vec<u8>,
    carry_at: LinePos,
    cont: bool,
}

impl Assembler {
    /// An assembler holding `carry`, the start of a line not yet ended
    /// (read from the end of a file at open), which starts at `at`.
    #[must_use]
    pub fn with_carry(carry: Vec<u8>, at: LinePos) -> Self {
        Self {
            carry,
            carry_at: at,
            cont: false,
        }
    }

    /// The bytes waiting for their `\n`.
    #[must_use]
    pub fn pending(&self) -> &[u8] {
        &self.carry
    }

    /// The bytes waiting for their `\n` as a line (none waiting: `None`):
    /// what a service wrote last without ending it (a crash's last words).
    #[must_use]
    pub fn pending_line(&self) -> Option<RawLine> {
        (!self.carry.is_empty()).then(|| RawLine {
            bytes: self.carry.clone(),
            at: self.carry_at,
            cont: self.cont,
            cut: false,
        })
    }

    /// Feed `bytes`, read at `at` (the position of `bytes[0]`); complete
    /// lines are appended to `out`, oldest first.
    pub fn push(&mut self, bytes: &[u8], at: LinePos, out: &mut Vec<RawLine>) {
        let mut rest = bytes;
        let mut pos = at;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            if self.carry.is_empty() && !self.cont {
                self.carry_at = pos;
            }
            self.carry.extend_from_slice(&rest[..newline]);
            let carry = std::mem::take(&mut self.carry);
            pieces(&carry, self.carry_at, self.cont, out);
            self.cont = false;
            rest = &rest[newline + 1..];
            pos.offset += newline as u64 + 1;
        }
        if rest.is_empty() {
            return;
        }
        if self.carry.is_empty() && !self.cont {
            self.carry_at = pos;
        }
        self.carry.extend_from_slice(rest);
        while self.carry.len() > MAX_LINE {
            let piece: Vec<u8> = self.carry.drain(..MAX_LINE).collect();
            out.push(RawLine {
                bytes: piece,
                at: self.carry_at,
                cont: self.cont,
                cut: false,
            });
            self.cont = true;
            self.carry_at.offset += MAX_LINE as u64;
        }
    }

    /// Give out the waiting bytes as a line even though no `\n` ended it
    /// (the file was truncated under it: what was written is still shown).
    pub fn flush(&mut self, out: &mut Vec<RawLine>) {
        if !self.carry.is_empty() {
            let carry = std::mem::take(&mut self.carry);
            pieces(&carry, self.carry_at, self.cont, out);
        }
        self.cont = false;
    }
}

/// What one backward block yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackScan {
    /// The lines found, oldest first.
    pub lines: Vec<RawLine>,
    /// Where the oldest line found starts: the next backward read ends here
    /// (0: the file's start was reached).
    pub top: u64,
    /// The block lies wholly inside one line (its first piece is marked
    /// [`RawLine::cut`]): a backward reader stops here.
    pub inside: bool,
}

/// Scan one block read backwards: `block` is the bytes `[start, top)` of
/// `file`, where `top` is where the lines already held begin (a line start,
/// or the end of the file, or inside a line longer than a block). Returns
/// the lines wholly inside the block and the new `top`.
///
/// - A `\n` ending the block ends the line before `top`.
/// - When `start > 0` the bytes before the block's first `\n` belong to a
///   line that starts further back: they are left for the next block (the
///   new `top` is just after that `\n`).
/// - A block without any `\n` (and `start > 0`) lies inside one long line:
///   it is given out whole as pieces, the first marked [`RawLine::cut`]
///   (`inside`), so a file without newlines is still paged through in
///   bounded steps and never scanned for the line's start.
#[must_use]
pub fn scan_back(block: &[u8], start: u64, file: FileKey) -> BackScan {
    let mut lines = Vec::new();
    if block.is_empty() {
        return BackScan {
            lines,
            top: start,
            inside: false,
        };
    }
    let body = block.strip_suffix(b"\n").unwrap_or(block);
    let (first, top) = if start == 0 {
        (0, 0)
    } else if let Some(newline) = body.iter().position(|&b| b == b'\n') {
        (newline + 1, start + newline as u64 + 1)
    } else {
        pieces(
            body,
            LinePos {
                file,
                offset: start,
            },
            true,
            &mut lines,
        );
        if let Some(first) = lines.first_mut() {
            first.cut = true;
        }
        return BackScan {
            lines,
            top: start,
            inside: true,
        };
    };
    let mut offset = first;
    for segment in body[first..].split(|&b| b == b'\n') {
        let at = LinePos {
            file,
            offset: start + offset as u64,
        };
        pieces(segment, at, false, &mut lines);
        offset += segment.len() + 1;
    }
    BackScan {
        lines,
        top,
        inside: false,
    }
}

/// Where `query` occurs in `text`: byte ranges, left to right, not
/// overlapping. Smart case: a query with no uppercase letter matches any
/// case (ASCII), one with an uppercase letter matches exactly. An empty
/// query matches nothing.
#[must_use]
pub fn find_all(text: &str, query: &str) -> Vec<Range<usize>> {
    if query.is_empty() {
        return Vec::new();
    }
    let fold = !query.chars().any(char::is_uppercase);
    let (hay, needle) = if fold {
        (text.to_ascii_lowercase(), query.to_ascii_lowercase())
    } else {
        (text.to_owned(), query.to_owned())
    };
    hay.match_indices(&needle)
        .map(|(at, found)| at..at + found.len())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: FileKey = FileKey { dev: 1, ino: 2 };

    fn at(offset: u64) -> LinePos {
        LinePos { file: F, offset }
    }

    fn texts(lines: &[RawLine]) -> Vec<String> {
        lines.iter().map(|l| line_text(&l.bytes)).collect()
    }

    #[test]
    fn assembler_joins_chunks_into_lines() {
        let mut asm = Assembler::default();
        let mut out = Vec::new();
        asm.push(b"one\ntw", at(0), &mut out);
        assert_eq!(texts(&out), ["one"]);
        assert_eq!(asm.pending(), b"tw");
        asm.push(b"o\n\nthree\n", at(6), &mut out);
        assert_eq!(texts(&out), ["one", "two", "", "three"]);
        assert_eq!(out[1].at, at(4));
        assert_eq!(out[2].at, at(8));
        assert_eq!(out[3].at, at(9));
        assert!(asm.pending().is_empty());
    }

    #[test]
    fn assembler_bounds_a_long_line() {
        let mut asm = Assembler::default();
        let mut out = Vec::new();
        asm.push(&vec![b'x'; MAX_LINE * 2 + 10], at(0), &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(asm.pending().len(), 10);
        asm.push(b"\n", at((MAX_LINE * 2 + 10) as u64), &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(
            out.iter()
                .map(|l| (l.bytes.len(), l.cont))
                .collect::<Vec<_>>(),
            [(MAX_LINE, false), (MAX_LINE, true), (10, true)]
        );
        assert_eq!(out[2].at, at((MAX_LINE * 2) as u64));
    }

    #[test]
    fn assembler_carry_from_the_tail_and_flush() {
        let mut asm = Assembler::with_carry(b"par".to_vec(), at(10));
        let mut out = Vec::new();
        asm.push(b"tial\nnext", at(13), &mut out);
        assert_eq!(texts(&out), ["partial"]);
        assert_eq!(out[0].at, at(10));
        asm.flush(&mut out);
        assert_eq!(texts(&out), ["partial", "next"]);
        assert_eq!(out[1].at, at(18));
    }

    #[test]
    fn scan_back_from_the_start_takes_everything() {
        let scan = scan_back(b"a\nbb\nccc\n", 0, F);
        assert_eq!(texts(&scan.lines), ["a", "bb", "ccc"]);
        assert_eq!(scan.top, 0);
        assert_eq!(scan.lines[2].at, at(5));
        let scan = scan_back(b"a\n\n", 0, F);
        assert_eq!(texts(&scan.lines), ["a", ""]);
    }

    #[test]
    fn scan_back_leaves_the_first_partial_line() {
        // Bytes [100, 110) of a file: "xyz" belongs to a line before.
        let scan = scan_back(b"xyz\nab\ncd\n", 100, F);
        assert_eq!(texts(&scan.lines), ["ab", "cd"]);
        assert_eq!(scan.top, 104);
        assert_eq!(scan.lines[0].at, at(104));
        assert_eq!(scan.lines[1].at, at(107));
    }

    #[test]
    fn scan_back_inside_a_long_line_gives_pieces() {
        let block = vec![b'z'; BLOCK];
        let scan = scan_back(&block, 1000, F);
        assert_eq!(scan.lines.len(), BLOCK / MAX_LINE);
        assert!(scan.lines.iter().all(|l| l.cont));
        assert!(scan.inside && scan.lines[0].cut && !scan.lines[1].cut);
        assert_eq!(scan.top, 1000);
        assert_eq!(scan.lines[1].at, at(1000 + MAX_LINE as u64));
    }

    #[test]
    fn scan_back_unterminated_block_keeps_its_last_fragment() {
        let scan = scan_back(b"a\nb", 0, F);
        assert_eq!(texts(&scan.lines), ["a", "b"]);
    }

    #[test]
    fn hostile_and_binary_bytes_become_safe_text() {
        assert_eq!(
            line_text(b"evil\x1b[2J\x1b]0;x\x07 done\r"),
            "evil␛[2J␛]0;x␇ done"
        );
        assert_eq!(line_text(b"\xff\xfe\x00bin"), "\u{fffd}\u{fffd}␀bin");
        assert_eq!(line_text("bidi\u{202e}x".as_bytes()), "bidi\u{fffd}x");
        assert_eq!(line_text(b"\xc2\x9b31m"), "\u{fffd}31m");
    }

    #[test]
    fn search_is_smart_case() {
        assert_eq!(
            find_all("Error error ERROR", "error"),
            [0..5, 6..11, 12..17]
        );
        assert_eq!(find_all("Error error ERROR", "Error"), [0..5, 0..0][..1]);
        assert_eq!(find_all("aaaa", "aa"), [0..2, 2..4]);
        assert!(find_all("abc", "").is_empty());
        assert_eq!(find_all("測試 error", "error"), [7..12, 0..0][..1]);
    }
}
