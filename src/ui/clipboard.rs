//! Copy to the clipboard through the terminal: OSC 52
//! (`ESC ] 52 ; c ; <base64> BEL`), built here from the text made safe for
//! the terminal first ([`crate::model::text::sanitize`]). The sequence is
//! built when it is written (by the render loop, through its terminal
//! handle), never stored as text elsewhere.

/// The OSC 52 sequence that puts `text` (sanitized) on the clipboard:
/// `\x1b]52;c;` + standard base64 (with padding) + `\x07`.
#[must_use]
pub fn osc52(text: &str) -> String {
    let safe = crate::model::text::sanitize(text);
    format!("\x1b]52;c;{}\x07", base64(safe.as_bytes()))
}

/// Standard base64 (RFC 4648 §4, `+` `/`, `=` padding).
#[must_use]
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let index = (n >> (18 - 6 * i)) & 63;
                out.push(char::from(ALPHABET[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_of_rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (text, encoded) in vectors {
            assert_eq!(base64(text.as_bytes()), encoded, "{text}");
        }
    }

    #[test]
    fn osc52_of_sanitized_text() {
        assert_eq!(osc52("golf"), "\x1b]52;c;Z29sZg==\x07");
        // A control character never reaches the sequence raw.
        let hostile = osc52("a\x1b]52;c;x\x07");
        assert!(
            !hostile[7..hostile.len() - 1].contains('\x1b'),
            "{hostile:?}"
        );
        assert!(
            !hostile[7..hostile.len() - 1].contains('\x07'),
            "{hostile:?}"
        );
    }
}
