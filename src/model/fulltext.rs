//! The full text of a line the panes cut short (nothing the operator needs
//! is lost to a column's width): a titled list of sanitized lines,
//! unwrapped; the full-text view wraps them once per width ([`wrap_all`])
//! and draws only the rows in view. Pure: no I/O.
//!
//! Store and process text is untrusted: every line goes through
//! [`crate::model::text::sanitize`] after splitting on `\n`. No line is
//! cut and no line count is capped; one bound stays, for memory: a view
//! holds at most [`MAX_BYTES`] of text, and what it did not keep is counted
//! ([`FullText::cut_note`], shown in the view's title).

use unicode_width::UnicodeWidthChar as _;

use super::text::{sanitize, sanitize_short};

/// Most bytes of text (as given, before sanitizing) one full-text view
/// keeps: 10 MiB. The rest is counted, not kept ([`FullText::cut_note`]).
pub const MAX_BYTES: usize = 10 * 1024 * 1024;
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
    /// Bytes of text kept so far (as given, before sanitizing).
    kept_bytes: usize,
    /// Lines given past [`MAX_BYTES`] and not kept (a line cut there counts
    /// in [`FullText::cut_bytes`] only).
    cut_lines: usize,
    /// Bytes given past [`MAX_BYTES`] and not kept.
    cut_bytes: usize,
}

impl FullText {
    /// An empty view titled `title` (sanitized here).
    #[must_use]
    pub fn new(title: &str) -> Self {
        Self {
            title: sanitize_short(title, 200),
            indent: LABEL,
            ..Self::default()
        }
    }

    /// Append `text` (split on `\n`, a trailing `\r` dropped, tabs
    /// expanded, each line sanitized).
    pub fn text(&mut self, text: &str) {
        for line in text.trim_end_matches(['\n', '\r']).split('\n') {
            self.line(line);
        }
    }

    /// Replace `redactor`'s values in the title and every line kept.
    pub fn redact(&mut self, redactor: &crate::model::redact::Redactor) {
        if redactor.is_empty() {
            return;
        }
        self.title = redactor.text(&self.title);
        for line in &mut self.lines {
            *line = redactor.text(line);
        }
    }

    /// [`FullText::redact`] for a whole log line: each line kept also has
    /// its credential-named JSON fields and the credentials written in it
    /// as text redacted, whatever `redactor` holds
    /// ([`crate::model::redact::Redactor::log_line`]), as the logs view
    /// shows the line's pieces.
    pub fn redact_log(&mut self, redactor: &crate::model::redact::Redactor) {
        self.redact(redactor);
        for line in &mut self.lines {
            if let std::borrow::Cow::Owned(shown) = redactor.log_line(line, false, false) {
                *line = shown;
            }
        }
    }

    /// Append one line (sanitized; a `\n` in it is shown as `␊`), whole
    /// while the view holds less than [`MAX_BYTES`]; past that, what is
    /// not kept is counted.
    pub fn line(&mut self, line: &str) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let room = MAX_BYTES.saturating_sub(self.kept_bytes);
        if self.cut_bytes > 0 || (room == 0 && !line.is_empty()) {
            self.cut_lines += 1;
            self.cut_bytes += line.len().max(1);
            return;
        }
        let mut end = line.len().min(room);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        self.cut_bytes += line.len() - end;
        self.kept_bytes += end;
        let kept = &line[..end];
        let kept = if kept.contains('\t') {
            kept.replace('\t', "    ")
        } else {
            kept.to_owned()
        };
        self.lines.push(match sanitize(&kept) {
            std::borrow::Cow::Borrowed(_) => kept,
            std::borrow::Cow::Owned(clean) => clean,
        });
    }

    /// What the [`MAX_BYTES`] bound left out, e.g. `10 MiB shown: 1024
    /// more lines (1048576 bytes) not kept`; `None` when nothing was.
    #[must_use]
    pub fn cut_note(&self) -> Option<String> {
        (self.cut_bytes > 0).then(|| {
            format!(
                "{} MiB shown: {} more lines ({} bytes) not kept",
                MAX_BYTES / (1024 * 1024),
                self.cut_lines,
                self.cut_bytes
            )
        })
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
    Some(pretty(&value))
}

/// `value` pretty-printed as `serde_json::to_string_pretty` does (two
/// spaces a level, keys in stored order), except that a string holding
/// `\n` (a `context.log_tail`) is shown as its lines: `|` after its key,
/// then each line indented under it (no quotes, no escapes; the caller
/// sanitizes each line).
#[must_use]
pub fn pretty(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

fn write_pretty(value: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    let compact = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (n, (key, item)) in map.iter().enumerate() {
                out.push_str(&" ".repeat(indent + 2));
                out.push_str(&compact(&Value::String(key.clone())));
                out.push_str(": ");
                let block = write_item(item, indent + 2, out);
                if n + 1 < map.len() && !block {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&" ".repeat(indent));
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (n, item) in items.iter().enumerate() {
                out.push_str(&" ".repeat(indent + 2));
                let block = write_item(item, indent + 2, out);
                if n + 1 < items.len() && !block {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&" ".repeat(indent));
            out.push(']');
        }
        other => out.push_str(&compact(other)),
    }
}

/// One member or element: a multi-line string as a block of its lines
/// (`true`: no comma follows it), else [`write_pretty`].
fn write_item(item: &serde_json::Value, indent: usize, out: &mut String) -> bool {
    match item {
        serde_json::Value::String(text) if text.contains('\n') => {
            out.push('|');
            for line in text.trim_end_matches(['\n', '\r']).split('\n') {
                out.push('\n');
                out.push_str(&" ".repeat(indent + 2));
                out.push_str(line.strip_suffix('\r').unwrap_or(line));
            }
            true
        }
        other => {
            write_pretty(other, indent, out);
            false
        }
    }
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
        other => pretty(other),
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

    /// A whole log line's view shows it as the logs view shows its pieces:
    /// fields, credentials written as text, command-line credentials.
    #[test]
    fn a_whole_log_line_has_its_text_credentials_redacted() {
        let mut text = FullText::new("line");
        text.text("mysql --password P1 token=P2 {\"pwd\":\"P3\"} ok");
        text.redact_log(&crate::model::redact::Redactor::default());
        assert_eq!(
            text.lines,
            [r#"mysql --password [redacted] token=[redacted] {"pwd":"[redacted]"} ok"#]
        );
    }

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
    fn multi_line_strings_show_as_their_lines() {
        let error = r#"{"code":"local.health_failed","context":{"log_path":"/l/web.log","log_tail":"GET / 200\nGET /x 500\u001b[2J\n","n":[1,"a\nb"],"z":{}}}"#;
        let mut full = FullText::new("t");
        full.error(error);
        assert_eq!(
            full.lines,
            [
                "code         local.health_failed",
                "context      {",
                "               \"log_path\": \"/l/web.log\",",
                "               \"log_tail\": |",
                "                 GET / 200",
                "                 GET /x 500␛[2J",
                "               \"n\": [",
                "                 1,",
                "                 |",
                "                   a",
                "                   b",
                "               ],",
                "               \"z\": {}",
                "             }",
            ]
        );
        let plain = serde_json::json!({"a": [1, {"b": null}], "c": "d"});
        assert_eq!(
            pretty(&plain),
            serde_json::to_string_pretty(&plain).expect("json")
        );
    }

    #[test]
    fn hostile_text_is_split_then_sanitized_and_bounded() {
        let mut full = FullText::new("evil\u{1b}[2J");
        full.text("a\r\n\tb\u{1b}]0;x\u{7}\n");
        assert_eq!(full.title, "evil␛[2J");
        assert_eq!(full.lines, ["a", "    b␛]0;x␇"]);
        // No line is cut and no line count capped below the byte bound.
        let mut long = FullText::new("");
        long.text(&format!("{}\n", "y".repeat(100_000)).repeat(3));
        long.text(&"x\n".repeat(20_000));
        assert_eq!(long.lines.len(), 20_003);
        assert_eq!(long.lines[0].len(), 100_000);
        assert_eq!(long.cut_note(), None);
        // Past 10 MiB, what is left out is counted, exactly.
        let mut big = FullText::new("");
        let line = "z".repeat(1024);
        big.text(&format!("{line}\n").repeat(10 * 1024 + 5));
        assert_eq!(big.lines.len(), 10 * 1024);
        assert_eq!(
            big.cut_note().as_deref(),
            Some("10 MiB shown: 5 more lines (5120 bytes) not kept")
        );
        let mut cut = FullText::new("");
        cut.text(&format!("{line}\n").repeat(10 * 1024 - 1));
        cut.line(&"w".repeat(1_500));
        cut.line("abc");
        assert_eq!(cut.lines.last().map(String::len), Some(1024));
        assert_eq!(
            cut.cut_note().as_deref(),
            Some("10 MiB shown: 1 more lines (479 bytes) not kept")
        );
    }
}
