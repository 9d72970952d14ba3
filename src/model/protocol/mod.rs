//! The console's stream protocol, version [`PROTOCOL`] (`docs/protocol.md`,
//! machine-checked by `docs/protocol.schema.json`): what `serve --stdio`
//! and `snapshot --follow` write, and the commands `serve --stdio` reads.
//! Pure: the rows of a snapshot and their deltas ([`rows`]), the lines
//! they go out as, each at most [`MAX_MESSAGE_BYTES`] ([`lines`]), and
//! the commands parsed from a line of stdin ([`command`]). No I/O.

pub mod command;
pub mod lines;
pub mod rows;

/// The protocol's version (`hello.protocol`): bumped by a change that
/// breaks a client (`docs/protocol.md`, "Versions").
pub const PROTOCOL: u32 = 1;

/// The longest line either way, in bytes, the newline included
/// (`hello.max_message_bytes`; a command line over it is `too_long`).
pub const MAX_MESSAGE_BYTES: usize = 65_536;

/// A text field longer than this many characters is cut to it, its last
/// character `…` (docs/protocol.md, "Framing").
pub const MAX_TEXT_CHARS: usize = 1_024;

/// A row that does not fit a message even with [`MAX_TEXT_CHARS`] has
/// every text cut to this many characters and `"cut": true`.
pub const CUT_TEXT_CHARS: usize = 256;

/// The longest quiet time on the out-stream, in seconds, before a
/// `heartbeat` (`hello.heartbeat_secs`).
pub const HEARTBEAT_SECS: u64 = 5;

/// How many lines of each service a `logs` command sends before it
/// follows (the newest ones the open read).
pub const LOGS_TAIL: usize = 200;
