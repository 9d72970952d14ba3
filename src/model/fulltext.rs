//! The full text of a line the panes cut short (issue 11, item 2): a
//! titled list of sanitized lines, unwrapped; the full-text view wraps them
//! to its width when it draws. Pure: no I/O.
//!
//! Store and process text is untrusted: every line goes through
//! [`crate::model::text::sanitize`] after splitting on `\n`, and a hostile
//! store cannot make one view hold more than [`MAX_LINES`] lines of at most
//! [`MAX_LINE_CHARS`] characters.

use unicode_width::UnicodeWidthChar as _;

use super::text::sanitize_short;

/// Most characters kept of one line (a line longer than this is cut with
/// `…`): 64 Ki, far beyond any envelope, bounded against a hostile store.
pub const MAX_LINE_CHARS: usize = 65_536;
/// Most lines kept in one full-text view (the rest counted in a last line).
pub const MAX_LINES: usize = 10_000;
/// Width of the label column of a labelled line (`remediation` + 2).
pub const LABEL: usize = 13;

/// One full-text view's content.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FullText {
    /// What the text is, e.g. `Activity 13:57:26 reaper golf failed`
    /// (sanitized).
    pub title: String,
    /// The lines, sanitized, not wrapped.
    pub lines: Vec<String>,
    /// Width of the label column the view wraps under (continuation rows
    /// of a labelled line start there): [`LABEL`], or the detail view's
    /// when it shows the detail document.
    pub indent: usize,
}

impl FullText {
    /// An empty view titled `title` (sanitized here).
    #[must_use]
    pub fn new(title: &str) -> Self {
        Self {
            title: sanitize_short(title, 200),
            lines: Vec::new(),
            indent: LABEL,
        }
    }

    /// Append `text` (split on `\n`, a trailing `\r` dropped, tabs
    /// expanded, each line sanitized), up to [`MAX_LINES`].
    pub fn text(&mut self, text: &str) {
        for line in text.trim_end_matches(['\n', '\r']).split('\n') {
            self.line(line);
        }
    }

    /// Append one line (sanitized; a `\n` in it is shown as `␊`).
    pub fn line(&mut self, line: &str) {
        match self.lines.len() {
            n if n < MAX_LINES => {
                let line = line
                    .strip_suffix('\r')
                    .unwrap_or(line)
                    .replace('\t', "    ");
                self.lines.push(sanitize_short(&line, MAX_LINE_CHARS));
            }
            n if n == MAX_LINES => self.lines.push("… more lines not shown".to_owned()),
            _ => {}
        }
    }

    /// Append `label` and `value` as one labelled line (`label` padded to
    /// [`LABEL`] columns); a multi-line value continues under the value
    /// column.
    pub fn labelled(&mut self, label: &str, value: &str) {
        let mut lines = value.trim_end_matches(['\n', '\r']).split('\n');
        let first = lines.next().unwrap_or_default();
        let width = LABEL - 1;
        self.line(&format!("{label:<width$} {first}"));
        for line in lines {
            self.line(&format!("{:LABEL$}{line}", ""));
        }
    }

    /// Append a blank line.
    pub fn blank(&mut self) {
        self.line("");
    }

    /// Append `text` read as an error: [`envelope_lines`] when it is a
    /// JSON envelope or error object, else JSON pretty-printed when it
    /// parses, else as text.
    pub fn error(&mut self, text: &str) {
        if let Some(lines) = envelope_lines(text) {
            for (label, value) in lines {
                self.labelled(&label, &value);
            }
        } else if let Some(pretty) = pretty_json(text) {
            self.text(&pretty);
        } else {
            self.text(text);
        }
    }
}

/// JSON pretty-printed (keys in stored order), or `None` when `text` is not
/// a JSON object or array.
#[must_use]
pub fn pretty_json(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    if !(value.is_object() || value.is_array()) {
        return None;
    }
    serde_json::to_string_pretty(&value).ok()
}

/// A stackless error envelope (`{"ok":false,"error":{...}}`, schema 1 or 2)
/// or a bare error object (`operations.error_json`, with a `code`), as
/// labelled lines: `code`, `message`, `step`, `instance`, `remediation`,
/// then `context` pretty-printed, then any other field of the error object
/// (`schema_version`, ...). `None` for anything else (not JSON, a success
/// envelope, JSON without a `code`). Values are as stored: the caller
/// sanitizes (see [`FullText::error`]).
#[must_use]
pub fn envelope_lines(text: &str) -> Option<Vec<(String, String)>> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    let object = value.as_object()?;
    let error = if object.contains_key("error") || object.contains_key("ok") {
        if object.get("ok").and_then(serde_json::Value::as_bool) == Some(true) {
            return None;
        }
        object.get("error")?.as_object()?
    } else {
        object
    };
    error.get("code")?.as_str()?;
    let show = |value: &serde_json::Value| match value {
        serde_json::Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    let order = [
        "code",
        "message",
        "step",
        "instance",
        "remediation",
        "context",
    ];
    let mut out: Vec<(String, String)> = order
        .iter()
        .filter_map(|key| error.get(*key).map(|v| ((*key).to_owned(), show(v))))
        .collect();
    out.extend(
        error
            .iter()
            .filter(|(key, _)| !order.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), show(value))),
    );
    Some(out)
}

/// Split `text` into pieces of at most `width` columns, at spaces where it
/// can (a word longer than a line is cut inside). At least one piece.
#[must_use]
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let body = text.trim_start_matches(' ');
    // Leading spaces (indented JSON) are kept when they leave room.
    let lead = text.len() - body.len();
    let lead = if lead + 1 < width { lead } else { 0 };
    let mut pieces = vec![" ".repeat(lead)];
    let mut used = lead;
    let mut has_word = false;
    for word in body.split(' ') {
        let word_width: usize = word.chars().map(|c| c.width().unwrap_or(0)).sum();
        if has_word {
            if used + 1 + word_width <= width {
                pieces.last_mut().expect("one piece").push(' ');
                used += 1;
            } else {
                pieces.push(String::new());
                used = 0;
            }
        }
        for c in word.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                pieces.push(String::new());
                used = 0;
            }
            pieces.last_mut().expect("one piece").push(c);
            used += w;
        }
        has_word = true;
    }
    pieces
}

/// Every line of `lines` wrapped to `width` columns ([`wrap`]), with the
/// continuation of a labelled line (one starting with `indent` or more
/// spaces after a label) indented by `indent` columns.
#[must_use]
pub fn wrap_all(lines: &[String], width: usize, indent: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let (head, rest) = split_label(line, indent);
        if head.is_empty() || width <= indent + 8 {
            out.extend(wrap(line, width));
            continue;
        }
        for (n, piece) in wrap(rest, width - indent).into_iter().enumerate() {
            if n == 0 {
                out.push(format!("{head}{piece}"));
            } else {
                out.push(format!("{:indent$}{piece}", ""));
            }
        }
    }
    out
}

/// `(label column, value)` when `line` has a label column of exactly
/// `indent` columns (ASCII, ending in a space), else `("", line)`.
fn split_label(line: &str, indent: usize) -> (&str, &str) {
    if indent == 0 || !line.is_char_boundary(indent) || line.len() <= indent {
        return ("", line);
    }
    let (head, rest) = line.split_at(indent);
    if head.is_ascii() && head.ends_with(' ') {
        (head, rest)
    } else {
        ("", line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V2_BARE: &str = include_str!("../../tests/fixtures/envelopes/v2-error-json-bare.json");

    #[test]
    fn wraps_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("a bb ccc", 4), ["a bb", "ccc"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(
            wrap("use `stackless down alpha` first", 12),
            ["use", "`stackless", "down alpha`", "first"]
        );
        assert_eq!(wrap("  {", 10), ["  {"]);
        assert_eq!(
            wrap_all(&["code         a b c d e f g h".to_owned()], 24, 13),
            ["code         a b c d e f", "             g h"]
        );
    }

    #[test]
    fn envelopes_are_labelled_with_their_context() {
        let lines = envelope_lines(V2_BARE).expect("a bare error object");
        let labels: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(&labels[..2], ["code", "message"]);
        assert!(labels.contains(&"remediation"));
        assert!(labels.contains(&"context"));
        assert_eq!(lines[0].1, "engine.teardown.survivors");
        let wrapped = r#"{"ok":false,"error":{"code":"x.y","message":"m","context":{"a":1}}}"#;
        assert_eq!(
            envelope_lines(wrapped),
            Some(vec![
                ("code".into(), "x.y".into()),
                ("message".into(), "m".into()),
                ("context".into(), "{\n  \"a\": 1\n}".into()),
            ])
        );
        assert_eq!(envelope_lines(r#"{"ok":true,"outcome":"destroyed"}"#), None);
        assert_eq!(envelope_lines("}"), None);
        let mut full = FullText::new("t");
        full.error(wrapped);
        assert_eq!(
            full.lines,
            [
                "code         x.y",
                "message      m",
                "context      {",
                "               \"a\": 1",
                "             }"
            ]
        );
    }

    #[test]
    fn hostile_text_is_split_then_sanitized_and_bounded() {
        let mut full = FullText::new("evil\u{1b}[2J");
        full.text("a\r\n\tb\u{1b}]0;x\u{7}\n");
        assert_eq!(full.title, "evil␛[2J");
        assert_eq!(full.lines, ["a", "    b␛]0;x␇"]);
        let mut big = FullText::new("");
        big.text(&"x\n".repeat(MAX_LINES + 5));
        assert_eq!(big.lines.len(), MAX_LINES + 1);
        assert_eq!(big.lines[MAX_LINES], "… more lines not shown");
    }
}
