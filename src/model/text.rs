//! Making store text safe to draw: nothing from the state store reaches the
//! terminal with a control character, an escape sequence, a NUL or a
//! bidirectional override in it.

use std::borrow::Cow;

/// Replace every character that could move the cursor, change the terminal's
/// state or reorder text with a visible placeholder, and fold the text onto
/// one line.
///
/// - C0 controls (U+0000-U+001F) become their Control Pictures (`␀`, `␛`,
///   `␊`, ...), so `ESC [ 2 J` is drawn as `␛[2J` and does nothing.
/// - DEL becomes `␡`; C1 controls (U+0080-U+009F, which include the 8-bit CSI)
///   become `�`.
/// - Bidirectional embeddings, overrides and isolates (U+202A-U+202E,
///   U+2066-U+2069), the marks U+200E, U+200F, U+061C, and the line/paragraph
///   separators U+2028/U+2029 become `�`.
/// - Invisible characters become `�` too: the zero-width space, joiners
///   and marks U+200B-U+200F (the emoji joiner U+200D included: a joined
///   sequence's drawn width depends on the terminal, so it is shown as its
///   parts), the word joiner and invisible operators U+2060-U+2064, the
///   byte order mark U+FEFF and the tag characters U+E0000-U+E007F.
///
/// Borrowed when nothing needed replacing (the common case).
#[must_use]
pub fn sanitize(text: &str) -> Cow<'_, str> {
    // Printable ASCII (U+0020-U+007E) is never replaced: one byte test per
    // character instead of the whole table (measured: every line `reap
    // --once` prints goes through here).
    if text.bytes().all(|b| (b' '..=b'~').contains(&b)) || !text.chars().any(needs_replacing) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(replacement).collect())
}

fn needs_replacing(c: char) -> bool {
    replacement(c) != c
}

fn replacement(c: char) -> char {
    match c {
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        '\u{80}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2060}'..='\u{2064}'
        | '\u{feff}'
        | '\u{e0000}'..='\u{e007f}'
        | '\u{061c}'
        | '\u{2028}'
        | '\u{2029}' => '\u{fffd}',
        other => other,
    }
}

/// [`sanitize`] and cut to at most `max_chars` characters, marking the cut
/// with `…`. For long store text (a 5,000-character `last_error`) that would
/// otherwise be built into every frame.
#[must_use]
pub fn sanitize_short(text: &str, max_chars: usize) -> String {
    // Printable ASCII no longer than the cut is the text itself (as in
    // [`sanitize`]: one byte test per character; measured: the table's
    // cells at 100,000 instances spent a tenth of `snapshot` here).
    if text.len() <= max_chars && text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars).map(replacement).collect();
    if text.chars().nth(max_chars).is_some() {
        out.pop();
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(sanitize("alpha"), Cow::Borrowed("alpha")));
    }

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(
            sanitize("evil\u{1b}[2J\u{1b}]0;pwned\u{7}"),
            "evil␛[2J␛]0;pwned␇"
        );
    }

    #[test]
    fn newlines_nul_del_and_c1_are_replaced() {
        assert_eq!(sanitize("a\nb\r\0c\u{7f}d\u{9b}e"), "a␊b␍␀c␡d\u{fffd}e");
    }

    #[test]
    fn bidi_overrides_are_replaced() {
        assert_eq!(
            sanitize("bidi-\u{202e}evil\u{2066}x"),
            "bidi-\u{fffd}evil\u{fffd}x"
        );
    }

    #[test]
    fn invisible_characters_are_replaced() {
        assert_eq!(
            sanitize("a\u{200b}b\u{200d}c\u{2060}d\u{2064}e\u{feff}f\u{e0001}g\u{e007f}"),
            "a\u{fffd}b\u{fffd}c\u{fffd}d\u{fffd}e\u{fffd}f\u{fffd}g\u{fffd}"
        );
        // An emoji ZWJ sequence is drawn as its parts (its width is then
        // the sum of theirs, as unicode-width counts it).
        assert_eq!(sanitize("👩\u{200d}💻"), "👩\u{fffd}💻");
        assert_eq!(sanitize_short("x\u{200b}", 5), "x\u{fffd}");
    }

    #[test]
    fn wide_characters_are_kept() {
        assert_eq!(sanitize("wide-測試-🏕️"), "wide-測試-🏕️");
    }

    #[test]
    fn short_printable_ascii_is_the_text_up_to_the_cut() {
        assert_eq!(sanitize_short("abcd", 4), "abcd");
        assert_eq!(sanitize_short(" ~z", 3), " ~z");
        assert_eq!(sanitize_short("abcde", 4), "abc…");
        assert_eq!(sanitize_short("abc\u{7f}", 4), "abc\u{2421}");
        assert_eq!(sanitize_short("", 0), "");
        assert_eq!(sanitize_short("a", 0), "…");
    }

    #[test]
    fn short_cuts_with_ellipsis() {
        assert_eq!(sanitize_short("abcdef", 4), "abc…");
        assert_eq!(sanitize_short("abcd", 4), "abcd");
        assert_eq!(sanitize_short("a\u{1b}b", 10), "a␛b");
    }

    #[test]
    fn no_control_character_survives() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        let clean = sanitize(&all);
        assert!(!clean.chars().any(char::is_control));
        assert!(!clean.contains('\u{202e}'));
    }
}
