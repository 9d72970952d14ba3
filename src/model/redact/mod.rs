//! Secrets kept off the screen and out of every file this console writes,
//! as stackless 0.4.0 keeps them out of its own output: its `Redactor`
//! (`stackless-core-0.4.0/src/security.rs:180-290`), built from every value
//! of `secret_history` (`state/secrets.rs:81-87`, `SELECT DISTINCT value
//! FROM secret_history`) and applied to every reply the controller makes
//! (`stackless-0.4.0/src/controller.rs:163-168`, `:399-414`), `stackless
//! logs` among them.
//!
//! The rules, as 0.4.0 has them:
//! - a value is registered unless it is empty or `[redacted]`; a value that
//!   is JSON also registers each of its non-empty string leaves, and a URL
//!   with a password (`scheme://user:password@host/...`) also registers the
//!   password (`security.rs:202-241`);
//! - text: every registered value, longest first, is replaced by
//!   [`REDACTED`] wherever it occurs (`security.rs:243-249`); no trimming,
//!   no minimum length;
//! - JSON: strings are redacted as text; an object's field whose key is
//!   credential-named ([`sensitive_key`]) becomes [`REDACTED`] whole,
//!   unless it is a secret reference; the fields `code`, `status`, `verb`,
//!   `id`, `instance_id`, `instance`, `step_kind`, `schema_version` keep
//!   their protocol meaning and are left as they are; an object that is a
//!   secret reference is left whole (`security.rs:251-290`).
//!
//! Pure: the values come from the store adapter (`crate::store::secrets`).
//! Neither [`Redactor`] nor [`Secrets`] shows a value in its `Debug`.

use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError, RwLock};

/// What a secret is replaced by (`security.rs:203, 247, 271`).
pub const REDACTED: &str = "[redacted]";

/// Whether a field named `key` holds a credential: its lowercase name
/// contains `secret`, `password`, `token`, `credential`, `authorization`,
/// `cookie`, `private_key`, `api_key` or `connection_string`, or ends with
/// `_dsn` or `database_url` (stackless 0.4.0 `sensitive_key`,
/// `security.rs:72-89`); beyond 0.4.0, `-` is read as `_` (`X-Api-Key`,
/// `client-secret`, `private-key`), `apikey`, `passwd` and
/// `access_key_id` count too, and so does a key one of whose segments
/// (split at any byte that is not a letter or a digit) is a whole
/// [`CREDENTIAL_SEGMENTS`] word: `PASS`, `DB_PASS`, `MYSQL_PWD`, `auth`,
/// `session`, `sig`, `X-Amz-Signature`; not `compass` or `passenger`.
#[must_use]
pub fn sensitive_key(key: &str) -> bool {
    let key = lower_key(key);
    named_by_word(&key)
        || key
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|segment| CREDENTIAL_SEGMENTS.contains(&segment))
}

/// Whether `key` (lowercase, `-` read as `_`) holds a
/// [`CREDENTIAL_WORDS`] word or ends as a DSN does: credential-named
/// without its segments.
fn named_by_word(key: &str) -> bool {
    CREDENTIAL_WORDS.iter().any(|part| key.contains(part))
        || key.ends_with("_dsn")
        || key.ends_with("database_url")
}

/// Whether `key` is credential-named ([`sensitive_key`]) by a
/// [`CREDENTIAL_WORDS`] word, not only by a segment: the last part of a
/// dotted error code (`provider.auth: …`, `engine.session: …`) is a
/// code, not a key, unless it names a credential outright
/// (`config.password: x`).
fn sensitive_by_word(key: &str) -> bool {
    named_by_word(&lower_key(key))
}

/// The words that make a key credential-named only as a whole segment of
/// it ([`sensitive_key`]): as part of a word they are other words
/// (`compass`, `passenger`, `author`, `design`).
const CREDENTIAL_SEGMENTS: [&str; 6] = ["pass", "pwd", "auth", "session", "sig", "signature"];

/// The words a credential-named key holds ([`sensitive_key`]).
const CREDENTIAL_WORDS: [&str; 12] = [
    "secret",
    "password",
    "token",
    "credential",
    "authorization",
    "cookie",
    "private_key",
    "api_key",
    "connection_string",
    "apikey",
    "passwd",
    "access_key_id",
];

/// `key` in ASCII lowercase with `-` read as `_`.
fn lower_key(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// The shortest piece of a value [`Redactor::cut_text`] redacts at a cut
/// end (bytes): shorter, and ordinary words would match the ends of
/// values.
pub const CUT_MATCH_MIN: usize = 4;

mod child;
mod fields;
mod free;
mod shapes;
pub use fields::{credential_fields, credential_fields_piece};
pub use free::{credentials_in_text, shown_argv};

/// Whether `text` holds one of [`sensitive_key`]'s words, any case.
fn mentions_credential(text: &str) -> bool {
    let lower = lower_key(text);
    CREDENTIAL_WORDS
        .iter()
        .chain(&CREDENTIAL_SEGMENTS)
        .chain(&["_dsn", "database_url"])
        .any(|word| lower.contains(word))
}

/// The fields [`Redactor::value`] leaves as they are (`security.rs:272-282`).
const PROTOCOL_FIELDS: [&str; 8] = [
    "code",
    "status",
    "verb",
    "id",
    "instance_id",
    "instance",
    "step_kind",
    "schema_version",
];

/// Replaces known secret values (and credential-named JSON fields) with
/// [`REDACTED`]. Built from the store's `secret_history` values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Longest first, then in byte order: the order [`Redactor::text`]
    /// replaces them in (0.4.0 sorts by length, longest first).
    values: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("value_count", &self.values.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor of `values` (each registered as 0.4.0's `register` does).
    #[must_use]
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut set = BTreeSet::new();
        for value in values {
            register(&mut set, value);
        }
        // The console redacts what it shows, which is sanitized first
        // (`crate::model::text::sanitize`, one character for one: a tab is
        // `␉`): each value is also matched as it is shown, as 0.4.0 matches
        // the raw text.
        let shown: Vec<String> = set
            .iter()
            .filter_map(|value| match super::text::sanitize(value) {
                std::borrow::Cow::Owned(shown) => Some(shown),
                std::borrow::Cow::Borrowed(_) => None,
            })
            .collect();
        set.extend(shown);
        let mut values: Vec<String> = set.into_iter().collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        Self { values }
    }

    /// How many values it replaces.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether it replaces nothing (a store with no `secret_history`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every value replaced by [`REDACTED`], longest first.
    #[must_use]
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }

    /// `text` that was cut from a longer whole (a 4 KiB piece of a long log
    /// line, a line still being written, the last 4 KiB of a teardown's
    /// stderr) redacted as [`Redactor::text`] does, and also at its cut
    /// ends: `cut_start`, a beginning that is the end of a value
    /// (`…_canary_41`), `cut_end`, an end that is the beginning of one
    /// (`sk_canary_`), each at least [`CUT_MATCH_MIN`] bytes, becomes
    /// [`REDACTED`]. What 0.4.0 redacts whole is never shown in part.
    #[must_use]
    pub fn cut_text(&self, text: &str, cut_start: bool, cut_end: bool) -> String {
        let mut out = self.text(text);
        if cut_start && let Some(end) = self.value_end_at_start(&out) {
            out.replace_range(..end, REDACTED);
        }
        if cut_end && let Some(start) = self.value_start_at_end(&out) {
            out.replace_range(start.., REDACTED);
        }
        out
    }

    /// A log line (or a piece of one: `cut_start`, `cut_end` as
    /// [`Redactor::cut_text`]) as every view and reply shows it: its
    /// values redacted ([`Redactor::cut_text`]), then its credential-named
    /// JSON fields ([`credential_fields`]) and the credentials written in
    /// it as text ([`credentials_in_text`]: `token=x`, `X-Api-Key: x`,
    /// `Bearer x`, `https://u:p@h`), which are redacted whatever
    /// `secret_history` holds. Borrowed when nothing changed and no value
    /// is known.
    #[must_use]
    pub fn log_line<'a>(
        &self,
        text: &'a str,
        cut_start: bool,
        cut_end: bool,
    ) -> std::borrow::Cow<'a, str> {
        self.log_piece(text, cut_start, cut_end, false).0
    }

    /// [`Redactor::log_line`] of a piece that may begin inside a
    /// credential-named field's string value (`inside`: the piece before
    /// ended inside one), with whether this piece ends inside one
    /// ([`credential_fields_piece`]) or ends in a credential-named key
    /// whose value is still to come (`password:`: [`credentials_in_text`]).
    /// A next line (`inside`, not `cut_start`) that begins with a quote
    /// begins with that key's value (`{"password":` then ` "x"}`): the
    /// quoted string is replaced whole (` "[redacted]"}`). A line that is
    /// a private key's body line ([`key_body_line`]) is replaced whole:
    /// its block's marker lines stay, each line of its body goes.
    #[must_use]
    pub fn log_piece<'a>(
        &self,
        text: &'a str,
        cut_start: bool,
        cut_end: bool,
        inside: bool,
    ) -> (std::borrow::Cow<'a, str>, bool) {
        use std::borrow::Cow;
        let valued = if self.values.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(self.cut_text(text, cut_start, cut_end))
        };
        let (fields, open) = if inside && !cut_start && valued.trim_start().starts_with('"') {
            quoted_value_first(&valued)
        } else {
            credential_fields_piece(&valued, inside)
        };
        let (free, dangling) = credentials_in_text(&fields);
        let open = open || dangling;
        let body = key_body_line(&free);
        let unchanged = matches!(
            (&valued, &fields, &free),
            (Cow::Borrowed(_), Cow::Borrowed(_), Cow::Borrowed(_))
        ) && body.is_none();
        if unchanged {
            return (Cow::Borrowed(text), open);
        }
        match body {
            Some(range) => (
                Cow::Owned(shapes::replace_ranges(&free, vec![range]).into_owned()),
                open,
            ),
            None => (Cow::Owned(free.into_owned()), open),
        }
    }

    /// The longest prefix of `text` (at least [`CUT_MATCH_MIN`] bytes) that
    /// is a proper suffix of a value: where it ends.
    fn value_end_at_start(&self, text: &str) -> Option<usize> {
        self.values
            .iter()
            .filter_map(|value| {
                (CUT_MATCH_MIN..value.len()).rev().find(|&n| {
                    value.is_char_boundary(value.len() - n)
                        && text.is_char_boundary(n.min(text.len()))
                        && text.len() >= n
                        && text.as_bytes()[..n] == value.as_bytes()[value.len() - n..]
                })
            })
            .max()
    }

    /// The longest suffix of `text` (at least [`CUT_MATCH_MIN`] bytes) that
    /// is a proper prefix of a value: where it starts.
    fn value_start_at_end(&self, text: &str) -> Option<usize> {
        self.values
            .iter()
            .filter_map(|value| {
                (CUT_MATCH_MIN..value.len()).rev().find(|&n| {
                    text.len() >= n
                        && value.is_char_boundary(n)
                        && text.is_char_boundary(text.len() - n)
                        && text.as_bytes()[text.len() - n..] == value.as_bytes()[..n]
                })
            })
            .max()
            .map(|n| text.len() - n)
    }

    /// Whether [`Redactor::json_text`] may change `text`: some value is
    /// known, or `text` is JSON-like (`{`, `[`) and names a credential
    /// field ([`sensitive_key`]'s words), which 0.4.0 redacts whatever
    /// `secret_history` holds. Cheap: the stores with no secret read no
    /// JSON.
    #[must_use]
    pub fn may_change(&self, text: &str) -> bool {
        if !self.values.is_empty() {
            return true;
        }
        let trimmed = text.trim_start();
        (trimmed.starts_with('{') || trimmed.starts_with('[')) && mentions_credential(trimmed)
    }

    /// Redact a JSON value in place, as 0.4.0's `Redactor::value`.
    pub fn value(&self, value: &mut serde_json::Value) {
        self.value_with(value, &|text| self.text(text));
    }

    /// [`Redactor::value`] with each string that is not a protocol field
    /// redacted by `leaf`.
    fn value_with(&self, value: &mut serde_json::Value, leaf: &dyn Fn(&str) -> String) {
        match value {
            serde_json::Value::String(text) => *text = leaf(text),
            serde_json::Value::Array(values) => {
                for value in values {
                    self.value_with(value, leaf);
                }
            }
            serde_json::Value::Object(fields) => {
                if is_secret_ref(fields) {
                    return;
                }
                for (key, field) in fields.iter_mut() {
                    let reference = field.as_object().is_some_and(is_secret_ref);
                    if sensitive_key(key) && !reference {
                        *field = serde_json::Value::String(REDACTED.into());
                    } else if !PROTOCOL_FIELDS.contains(&key.as_str()) {
                        self.value_with(field, leaf);
                    }
                }
            }
            _ => {}
        }
    }

    /// Text that may be JSON (an `error_json`, a `down --json` envelope):
    /// when the whole of it parses as JSON, redacted by [`Redactor::value`]
    /// and written back on one line; else by [`Redactor::text`]. Unchanged
    /// (as written) when nothing in it is redacted.
    #[must_use]
    pub fn json_text(&self, text: &str) -> String {
        match serde_json::from_str::<serde_json::Value>(text.trim()) {
            Ok(mut value) if value.is_object() || value.is_array() => {
                let before = value.clone();
                self.value(&mut value);
                if value == before {
                    text.to_owned()
                } else {
                    serde_json::to_string(&value).unwrap_or_else(|_| self.text(text))
                }
            }
            _ => self.text(text),
        }
    }
}

/// `text` that begins (after blanks) with a quoted string: that string's
/// contents replaced by [`REDACTED`], and whether it is left open (no
/// closing quote: the rest of `text` is replaced).
fn quoted_value_first(text: &str) -> (std::borrow::Cow<'_, str>, bool) {
    let open = text.len() - text.trim_start().len() + 1;
    match fields::close_quote(text.as_bytes(), open) {
        Some(close) => (shapes::replace_ranges(text, vec![(open, close - 1)]), false),
        None => (shapes::replace_ranges(text, vec![(open, text.len())]), true),
    }
}

/// Where a line that is a private key's body line (a PEM block read line
/// by line, as a log is) lies in `line`: the whole line, blanks aside, is
/// base64 (`[A-Za-z0-9+/=]`), at least [`KEY_BODY_MIN`] bytes, with an
/// uppercase letter, a lowercase letter and a digit (a hex digest, a word
/// run together, is not one).
fn key_body_line(line: &str) -> Option<(usize, usize)> {
    let start = line.len() - line.trim_start().len();
    let body = line.trim();
    let b = body.as_bytes();
    let base64 = b
        .iter()
        .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
    let mixed = b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_digit);
    (b.len() >= KEY_BODY_MIN && base64 && mixed).then_some((start, start + body.len()))
}

/// The shortest private key body line [`key_body_line`] replaces (bytes;
/// PEM writes 64 a line, OpenSSH 70).
const KEY_BODY_MIN: usize = 40;

/// Add `value` as 0.4.0's `Redactor::register` does (`security.rs:202-220`).
fn register(set: &mut BTreeSet<String>, value: String) {
    if value.is_empty() || value == REDACTED {
        return;
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(&value) {
        json_leaves(set, &json);
    }
    if let Some((_, rest)) = value.split_once("://") {
        let authority = rest.split('/').next().unwrap_or_default();
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
            && !password.is_empty()
        {
            set.insert(password.to_owned());
        }
    }
    set.insert(value);
}

fn json_leaves(set: &mut BTreeSet<String>, value: &serde_json::Value) {
    match value {
        serde_json::Value::String(text) if !text.is_empty() => {
            set.insert(text.clone());
        }
        serde_json::Value::Array(values) => values.iter().for_each(|v| json_leaves(set, v)),
        serde_json::Value::Object(fields) => fields.values().for_each(|v| json_leaves(set, v)),
        _ => {}
    }
}

/// Whether `fields` are exactly a 0.4.0 `SecretRef` (`security.rs:10-17`:
/// `kind: "secret_ref"`, `instance_id`, `integration`, `output`, strings,
/// no other field): a selector with no credential in it.
fn is_secret_ref(fields: &serde_json::Map<String, serde_json::Value>) -> bool {
    const FIELDS: [&str; 4] = ["kind", "instance_id", "integration", "output"];
    fields.len() == FIELDS.len()
        && FIELDS
            .iter()
            .all(|f| fields.get(*f).is_some_and(serde_json::Value::is_string))
        && fields.get("kind").and_then(serde_json::Value::as_str) == Some("secret_ref")
}

/// The newest [`Redactor`], shared by the threads that show or write text:
/// the store watcher (and `snapshot`, the reaper) put the one read with
/// each snapshot; the logs reads, the recorder and the console log take it
/// when they need it. Cheap to clone (one `Arc`).
#[derive(Clone, Default)]
pub struct Secrets {
    current: Arc<RwLock<Arc<Redactor>>>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Secrets").field(&self.current()).finish()
    }
}

impl Secrets {
    /// A handle holding no value yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The redactor read last.
    #[must_use]
    pub fn current(&self) -> Arc<Redactor> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Keep `redactor` as the newest. A value once known stays known: the
    /// new one replaces values only when it holds at least every value of
    /// the old (`secret_history` only grows; a store read without the table
    /// leaves the values already known).
    pub fn update(&self, redactor: &Arc<Redactor>) {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if Arc::ptr_eq(&current, redactor) || **current == **redactor {
            return;
        }
        if current.values.iter().all(|v| redactor.values.contains(v)) {
            *current = redactor.clone();
        } else {
            let merged = current.values.iter().chain(&redactor.values).cloned();
            *current = Arc::new(Redactor::new(merged));
        }
    }
}

#[cfg(test)]
mod tests;
