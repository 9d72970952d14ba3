//! The lenient row readers every store reader shares: a NULL, or a value
//! of the wrong type (possible in a hand-made or damaged store: `SQLite`
//! does not enforce column types), reads as `None` or is converted, never
//! an error. A leaf: it imports nothing of the store.

use rusqlite::types::ValueRef;

/// An integer read leniently: INTEGER as is, REAL truncated, TEXT parsed,
/// NULL/BLOB/unparsable as `None`.
pub(super) fn lenient_int(value: ValueRef<'_>) -> Option<i64> {
    match value {
        ValueRef::Integer(i) => Some(i),
        #[allow(clippy::cast_possible_truncation)]
        ValueRef::Real(f) if f.is_finite() => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// Text read leniently: TEXT decoded lossily (invalid UTF-8 becomes U+FFFD,
/// which no DNS-safe check accepts), numbers formatted, NULL/BLOB `None`.
pub(super) fn lenient_text(value: ValueRef<'_>) -> Option<String> {
    match value {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    }
}

/// [`lenient_text`] borrowed from the row when it is valid UTF-8 text.
pub(super) fn lenient_str(value: ValueRef<'_>) -> Option<std::borrow::Cow<'_, str>> {
    match value {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t)),
        other => lenient_text(other).map(std::borrow::Cow::Owned),
    }
}

/// Column `index` of `row`, NULL when it cannot be read.
pub(super) fn col<'a>(row: &'a rusqlite::Row<'_>, index: usize) -> ValueRef<'a> {
    row.get_ref(index).unwrap_or(ValueRef::Null)
}
