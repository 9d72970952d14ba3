//! Text cut and measured for the terminal, shared by every view: how much
//! of a store's text is kept ([`CUT_SHORT`], [`CUT_LONG`]), a line fitted
//! to a width with `…` ([`fit`]), a byte count for people ([`size`]).

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
