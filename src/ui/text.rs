//! Text cut and measured for the terminal, shared by every view: how much
//! of a store's text is kept ([`CUT_SHORT`], [`CUT_LONG`]), a line fitted
//! to a width with `…` ([`fit`], at a word: [`fit_words`]), wrapped at
//! words ([`wrap_words`], [`wrap_fit`]), a byte count for people ([`size`]).

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The narrowest terminal (columns) the full layout is drawn in.
pub const MIN_WIDTH: u16 = 60;
/// The shortest terminal (rows) the full layout is drawn in.
pub const MIN_HEIGHT: u16 = 15;

/// Longest text kept for short store fields (names, substrate, status,
/// operation, host), in characters. A DNS-safe name is at most 63.
pub const CUT_SHORT: usize = 96;
/// Longest text kept for long fields (error summaries, remediation,
/// activity details, supervisor lines), in characters.
pub const CUT_LONG: usize = 400;

/// `text` fitted to `width` terminal columns: as it is when it fits, else cut
/// and ended with `…` so the operator sees that something is missing.
#[must_use]
pub fn fit(text: &str, width: usize) -> Cow<'_, str> {
    if text.width() <= width {
        return Cow::Borrowed(text);
    }
    if width == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    // Multi-character sequences (emoji with a variation selector) can be
    // wider than their characters: trim until the whole fits.
    while !out.is_empty() && out.width() > width - 1 {
        out.pop();
    }
    out.push('…');
    Cow::Owned(out)
}

/// `text` fitted to `width` columns cut at a word boundary: as it is when
/// it fits, else the whole words that fit then `…` (never cut
/// mid-word). A word so long that cutting before it would keep less than
/// half of `width` (a hash, a path, a dump) is cut as [`fit`] does.
#[must_use]
pub fn fit_words(text: &str, width: usize) -> Cow<'_, str> {
    if text.width() <= width {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    for word in text.split(' ') {
        let sep = usize::from(!out.is_empty());
        // Room for the word and the `…` after it.
        if out.width() + sep + word.width() + 1 > width {
            break;
        }
        if sep > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.trim().width() * 2 < width {
        return fit(text, width);
    }
    let kept = out.trim_end().len();
    out.truncate(kept);
    out.push('…');
    Cow::Owned(out)
}

/// `text` cut into lines of at most `width` columns at spaces; a word
/// wider than `width` goes on over the next lines (nothing is lost).
#[must_use]
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let sep = usize::from(!line.is_empty());
        if line.width() + sep + word.width() <= width {
            if sep > 0 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            out.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            if line.width() + c.width().unwrap_or(0) > width && !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

/// `text` in at most `rows` lines of `width` columns, wrapped at words;
/// when it needs more, the last line is cut at a word with `…`
/// ([`fit_words`]).
#[must_use]
pub fn wrap_fit(text: &str, width: usize, rows: usize) -> Vec<String> {
    let mut lines = wrap_words(text, width);
    if lines.len() > rows {
        let rest = lines.split_off(rows.saturating_sub(1)).join(" ");
        if rows > 0 {
            lines.push(fit_words(&rest, width).into_owned());
        }
    }
    lines
}

/// `812 B`, `12.3 KiB`, `4.0 MiB`, `1.2 GiB`.
#[must_use]
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // Precision does not matter at one decimal.
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cut at a word, never mid-word; wrapped, nothing lost.
    #[test]
    fn words_are_cut_whole_or_wrapped() {
        let text = "these resources still exist and may bill or hold state";
        assert_eq!(
            fit_words(text, 45),
            "these resources still exist and may bill or…"
        );
        assert_eq!(fit_words(text, 100), text);
        assert_eq!(fit_words("abcdefghij", 5), "abcd…");
        assert_eq!(fit_words("ab cdefghijklmnop", 10), "ab cdefgh…");
        assert_eq!(
            wrap_words(text, 20),
            [
                "these resources",
                "still exist and may",
                "bill or hold state"
            ]
        );
        assert_eq!(
            wrap_words("ab [\"render:srv-d0\"] c", 8),
            ["ab", "[\"render", ":srv-d0\"", "] c"]
        );
        assert_eq!(
            wrap_fit(text, 20, 2),
            ["these resources", "still exist and may…"]
        );
        assert_eq!(wrap_fit(text, 20, 3).len(), 3);
        assert!(wrap_fit(text, 20, 0).is_empty());
    }

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("alpha", 5), "alpha");
        assert_eq!(fit("alphabet", 5), "alph…");
        assert_eq!(fit("wide-測試", 7), "wide-…");
        assert_eq!(fit("wide-測試", 8), "wide-測…");
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit("abc", 1), "…");
    }

    #[test]
    fn sizes() {
        assert_eq!(size(812), "812 B");
        assert_eq!(size(12_595), "12.3 KiB");
        assert_eq!(size(4 * 1024 * 1024), "4.0 MiB");
        assert_eq!(size(3 * 1024 * 1024 * 1024 * 1024), "3072.0 GiB");
    }
}
