//! A row's JSON text made to fit one `rows` message: its texts cut to
//! [`MAX_TEXT_CHARS`], or to [`CUT_TEXT_CHARS`] and marked `"cut": true`
//! when it would still be over [`MAX_ROW_BYTES`].

use serde_json::Value;

use crate::model::protocol::{CUT_TEXT_CHARS, MAX_MESSAGE_BYTES, MAX_TEXT_CHARS};

/// The row's JSON text, its texts cut to [`MAX_TEXT_CHARS`]; one that
/// would still not fit a message has them cut to [`CUT_TEXT_CHARS`] and
/// `"cut": true`.
#[must_use]
pub fn fit(mut row: Value) -> String {
    cut_texts(&mut row, MAX_TEXT_CHARS);
    let text = row.to_string();
    if text.len() <= MAX_ROW_BYTES {
        return text;
    }
    cut_texts(&mut row, CUT_TEXT_CHARS);
    if let Value::Object(fields) = &mut row {
        fields.insert("cut".into(), Value::Bool(true));
    }
    row.to_string()
}

/// The longest row a `rows` message carries: the message's own fields fit
/// in the rest.
pub const MAX_ROW_BYTES: usize = MAX_MESSAGE_BYTES - 256;

/// Cut every string in `value` to `max` characters, the last one `…`.
pub fn cut_texts(value: &mut Value, max: usize) {
    match value {
        Value::String(text) => {
            if let Some((at, _)) = text.char_indices().nth(max) {
                let keep = text[..at]
                    .char_indices()
                    .nth(max - 1)
                    .map_or(at, |(i, _)| i);
                text.truncate(keep);
                text.push('…');
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cut_texts(v, max)),
        Value::Object(fields) => fields.values_mut().for_each(|v| cut_texts(v, max)),
        _ => {}
    }
}
