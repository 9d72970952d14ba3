//! Credential-named JSON fields inside free text (a log line, a piece of
//! one): 0.4.0's `Redactor::value` rule for JSON (`security.rs:251-290`)
//! applied to JSON written in a line. Pure; no I/O.

use super::{REDACTED, is_secret_ref, mentions_credential, sensitive_key};

/// `text` (free text: a log line, a piece of one, a whole line) with the
/// value of every JSON-like `"key": value` pair whose key is
/// credential-named ([`sensitive_key`]) replaced by `"[redacted]"`
/// ([`REDACTED`] as a JSON string, so the line stays JSON-like): the rule
/// 0.4.0's `Redactor::value` applies to JSON (`security.rs:251-290`),
/// applied to JSON written in a line, whole (`{"password":"x"}`) or after
/// a prefix (`2026-12-02T07:00:00Z {"token":"x"}`).
///
/// A key is a JSON string (escapes read), then optional whitespace, `:`,
/// optional whitespace, then its value: a JSON string (escapes read), an
/// object or array (brackets matched, strings read; the whole of it is
/// replaced, unless it is a 0.4.0 secret reference, left as it is), or a
/// bare token (a number, `true`, `null`) up to `,` `}` `]` or whitespace.
/// A value left open (a string or object with no end: the line goes on in
/// the next piece, or is still being written) is replaced to the end of
/// `text`. Borrowed (unchanged) when nothing is replaced; cheap when
/// `text` has no `"` or names no credential word.
///
/// Limits: a piece of a long line that begins inside a value shows what
/// the piece holds of it, when no key of it is in the piece (the key was
/// in the piece before); a quote left unpaired at such a start is tried
/// as the start of a key and then skipped, so a later key is still found.
/// JSON written inside a JSON string (`"msg":"{\"token\":\"x\"}"`) is
/// text, as 0.4.0 has it: only registered values are redacted there.
#[must_use]
pub fn credential_fields(text: &str) -> std::borrow::Cow<'_, str> {
    credential_fields_piece(text, false).0
}

/// [`credential_fields`] of one piece of a line read in pieces (a line
/// longer than `logtext::MAX_LINE`), with whether the piece ends inside a
/// credential-named field's string value (left open: redacted to its
/// end). `inside`: the piece before ended so, and this one begins inside
/// that value: up to the quote that closes it, it is [`REDACTED`]
/// (`[redacted]",…`; the whole piece when no quote closes it). Only a
/// string value is carried on so; an object left open is not.
#[must_use]
pub fn credential_fields_piece(text: &str, inside: bool) -> (std::borrow::Cow<'_, str>, bool) {
    use std::borrow::Cow;
    if !inside && (!text.contains('"') || !mentions_credential(text)) {
        return (Cow::Borrowed(text), false);
    }
    let bytes = text.as_bytes();
    let mut out = String::new();
    // `text[copied..]` is not yet in `out`.
    let mut copied = 0;
    let mut pos = 0;
    let mut open = false;
    if inside {
        let Some(end) = close_quote(bytes, 0) else {
            return (Cow::Owned(REDACTED.to_owned()), true);
        };
        out.push_str(REDACTED);
        out.push('"');
        (copied, pos) = (end, end);
    }
    while let Some(found) = bytes
        .get(pos..)
        .and_then(|rest| rest.iter().position(|&b| b == b'"'))
    {
        let start = pos + found;
        let Some(key_end) = close_quote(bytes, start + 1) else {
            break;
        };
        let colon = skip_space(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            // Not a key: a value, or a quote left unpaired by a cut.
            pos = start + 1;
            continue;
        }
        let value = skip_space(bytes, colon + 1);
        let Some(&first) = bytes.get(value) else {
            break;
        };
        let end = match first {
            b'"' => close_quote(bytes, value + 1),
            b'{' | b'[' => bracket_end(bytes, value),
            b',' | b'}' | b']' => {
                pos = value;
                continue;
            }
            _ => Some(token_end(bytes, value)),
        };
        let whole = end.unwrap_or(bytes.len());
        if !sensitive_key(&text[start + 1..key_end - 1]) {
            // Into an object or array (its keys are read); past a string
            // or a token.
            pos = if matches!(first, b'{' | b'[') {
                value + 1
            } else {
                whole
            };
            continue;
        }
        if !(first == b'{' && end.is_some() && secret_reference(&text[value..whole])) {
            out.push_str(&text[copied..value]);
            out.push('"');
            out.push_str(REDACTED);
            out.push('"');
            copied = whole;
            open = first == b'"' && end.is_none();
        }
        pos = whole;
    }
    if copied == 0 {
        return (Cow::Borrowed(text), false);
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), open)
}

/// Where a JSON string whose contents start at `bytes[from]` ends: just
/// past its closing quote (escapes read); `None` when it is not closed.
pub(super) fn close_quote(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Where the object or array opening at `bytes[start]` ends: just past the
/// bracket that closes it (strings read); `None` when it is not closed.
pub(super) fn bracket_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                i = close_quote(bytes, i + 1)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where a bare value (a number, `true`, `null`) starting at `start` ends:
/// at `,` `}` `]`, whitespace, or the end of the text.
fn token_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
        .map_or(bytes.len(), |n| start + n)
}

/// The first index at or after `at` that is not ASCII whitespace.
fn skip_space(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|b| !b.is_ascii_whitespace()))
        .map_or(bytes.len(), |n| at + n)
}

/// Whether `text` is a JSON object that is a 0.4.0 secret reference
/// ([`is_secret_ref`]): 0.4.0 leaves it under a credential-named key.
pub(super) fn secret_reference(text: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
        .is_ok_and(|fields| is_secret_ref(&fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log line holding JSON with credential-named fields (whole, or
    /// after a prefix) is redacted even when `secret_history` is empty.
    #[test]
    fn credential_fields_in_a_log_line_whole_or_after_a_prefix() {
        assert_eq!(
            credential_fields(
                r#"{"level":"info","password":"LOGPW2","api_key":"LOGAK","msg":"hi"}"#
            ),
            r#"{"level":"info","password":"[redacted]","api_key":"[redacted]","msg":"hi"}"#
        );
        assert_eq!(
            credential_fields(r#"2026-12-02T07:00:00Z {"token":"LOGTOK"}"#),
            r#"2026-12-02T07:00:00Z {"token":"[redacted]"}"#
        );
        assert_eq!(
            credential_fields(r#"{ "Password" :  "a b" , "n": 1 }"#),
            r#"{ "Password" :  "[redacted]" , "n": 1 }"#
        );
        // Nested: a key inside an object is read; a credential-named
        // object is replaced whole.
        assert_eq!(
            credential_fields(
                r#"{"db":{"host":"h","db_password":"P1"},"credentials":{"u":"a","p":["b","}"]},"x":2}"#
            ),
            r#"{"db":{"host":"h","db_password":"[redacted]"},"credentials":"[redacted]","x":2}"#
        );
        // Escaped quotes inside values, the key's and another's.
        assert_eq!(
            credential_fields(r#"{"msg":"say \"token\": \"no\"","secret":"a\"b\\","k":"v"}"#),
            r#"{"msg":"say \"token\": \"no\"","secret":"[redacted]","k":"v"}"#
        );
        // Bare values: numbers, true, null.
        assert_eq!(
            credential_fields(r#"{"pin_token":123456,"cookie":true,"secret":null}"#),
            r#"{"pin_token":"[redacted]","cookie":"[redacted]","secret":"[redacted]"}"#
        );
        assert_eq!(
            credential_fields(r#"{"token": 42 }"#),
            r#"{"token": "[redacted]" }"#
        );
        // 0.4.0 leaves a secret reference under a credential-named key.
        let reference = r#"{"password":{"kind":"secret_ref","instance_id":"o","integration":"db","output":"password"}}"#;
        assert_eq!(credential_fields(reference), reference);
        // Already redacted: unchanged (the view redacts again when values
        // grow).
        let redacted = r#"{"token":"[redacted]"}"#;
        assert_eq!(credential_fields(redacted), redacted);
        // Multibyte text around and inside.
        assert_eq!(
            credential_fields(r#"é {"tökén":"x","token":"ü\"ß"} ✓"#),
            r#"é {"tökén":"x","token":"[redacted]"} ✓"#
        );
    }

    #[test]
    fn keys_that_are_not_credentials_and_text_that_is_not_json_are_left() {
        for text in [
            r#"{"level":"info","msg":"password rejected","key":"k1","url":"u"}"#,
            "token=abc password: hunter2",
            r#"{"message":"the \"token\" field"}"#,
            r#"["password","token"]"#,
            r#"{"token" "x"}"#,
            r#"{"token"#,
            r#""token":"#,
            r#""token":   "#,
            r#"{"token":,"a":1}"#,
            "\"",
            "\"\\",
            r#"{"a":"\"#,
            "",
        ] {
            assert_eq!(credential_fields(text), text, "{text}");
            assert!(matches!(
                credential_fields(text),
                std::borrow::Cow::Borrowed(_)
            ));
        }
    }

    /// A value left open (a piece cut inside it, a line still being
    /// written) is redacted to the end; a piece beginning inside a value
    /// (its key in the piece before) still has its later keys found.
    #[test]
    fn credential_fields_in_pieces_of_a_cut_line() {
        assert_eq!(
            credential_fields(r#"{"a":1,"password":"LOGP"#),
            r#"{"a":1,"password":"[redacted]""#
        );
        assert_eq!(
            credential_fields(r#"{"token":"x\"#),
            r#"{"token":"[redacted]""#
        );
        assert_eq!(
            credential_fields(r#"{"credentials":{"u":"a","p":"b"#),
            r#"{"credentials":"[redacted]""#
        );
        assert_eq!(
            credential_fields(r#"LOGPW2","api_key":"LOGAK","msg":"hi"}"#),
            r#"LOGPW2","api_key":"[redacted]","msg":"hi"}"#
        );
    }

    #[test]
    fn a_piece_that_begins_inside_a_credential_value() {
        assert_eq!(
            credential_fields_piece(r#"W2\"","msg":"hi"}"#, true),
            (r#"[redacted]","msg":"hi"}"#.into(), false)
        );
        assert_eq!(
            credential_fields_piece("no quote at all", true),
            (REDACTED.into(), true)
        );
        assert_eq!(
            credential_fields_piece(r#"{"a":"b","token":"x"#, false),
            (r#"{"a":"b","token":"[redacted]""#.into(), true)
        );
        assert_eq!(
            credential_fields_piece(r#"{"a":"b","credentials":{"u":"x"#, false),
            (r#"{"a":"b","credentials":"[redacted]""#.into(), false),
            "an object left open is not carried"
        );
        assert_eq!(credential_fields_piece("\\", true), (REDACTED.into(), true));
        assert_eq!(credential_fields_piece("", true), (REDACTED.into(), true));
    }

    /// A 1 MB line: one pass, well under the time a frame takes.
    #[test]
    fn a_one_megabyte_line_is_read_in_one_pass() {
        let field = r#""token":"abcdefgh","msg":"x\"y","n":12,"#;
        let mut line = String::from("{");
        while line.len() < 1 << 20 {
            line.push_str(field);
        }
        line.push_str(r#""end":true}"#);
        let started = std::time::Instant::now();
        let shown = credential_fields(&line);
        let took = started.elapsed();
        assert!(!shown.contains("abcdefgh"));
        assert_eq!(
            shown.matches(r#""token":"[redacted]""#).count(),
            line.matches(r#""token":"abcdefgh""#).count()
        );
        // Quotes and no key: every quote tried once.
        let quotes = "\"x".repeat(1 << 19) + "token";
        let started_quotes = std::time::Instant::now();
        assert_eq!(credential_fields(&quotes), quotes);
        let took_quotes = started_quotes.elapsed();
        assert!(took < std::time::Duration::from_millis(500), "{took:?}");
        assert!(
            took_quotes < std::time::Duration::from_millis(500),
            "{took_quotes:?}"
        );
    }
}
