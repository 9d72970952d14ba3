//! One line of an agent's stream (docs/protocol.md "The out-stream") read
//! on the connection's reader thread into the protocol's own typed
//! [`Message`] ([`crate::model::protocol::lines::read`]: straight into
//! the typed rows, no JSON tree in between; a tree of 2,000 rows is five
//! times their size, and 50 hosts' first snapshots arrive at once).
//! Unknown fields and message types are ignored (a new field within
//! protocol 1); a known message whose fields have the wrong types is not
//! the protocol (`Err`, and the host is failed).

pub use crate::model::protocol::lines::{Message, Rows};
use crate::model::protocol::lines::{ReadError, read};

/// Read one line of an agent's stream (`raw`, without its newline).
///
/// # Errors
/// The sentence (the host's error) when it is not a JSON object, or a
/// known message whose fields are not protocol 1's.
pub fn parse(raw: &[u8]) -> Result<Message, String> {
    read(raw).map_err(|error| match error {
        ReadError::NotObject => format!(
            "its stream sent a line that is not a JSON object ({} bytes): not the protocol",
            raw.len()
        ),
        ReadError::Fields(kind, error) => {
            let kind = crate::model::text::sanitize_short(&kind, 32);
            format!("its stream sent a {kind} message that is not protocol 1 ({error})")
        }
    })
}
