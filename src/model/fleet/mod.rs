//! The fleet view's state, as pure rules: each host's link (as the wiring
//! reports it) and the tables its agent's stream built (docs/protocol.md),
//! merged into one view over every host. No I/O and no clock: times are
//! parameters (unix milliseconds where a round trip is measured, unix
//! seconds elsewhere, as the protocol's).

/// A host's link state, as the wiring's reconnect rules decide it
/// (docs/protocol.md "Fleet stream": `connecting`, `connected`, `stale`,
/// `failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Its ssh runs; no `hello` yet.
    Connecting,
    /// Its `hello` came; lines arrive.
    Connected,
    /// Its ssh ended or it went silent: its rows are kept, dimmed, and it
    /// is connected again at `retry_at`.
    Stale,
    /// It cannot work until someone acts (host key, login, not installed,
    /// older protocol): not retried.
    Failed,
}

impl LinkState {
    /// The word the Hosts pane and the `host` message use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Stale => "stale",
            Self::Failed => "failed",
        }
    }
}

/// One host's link, as the wiring reports it at each change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Its state.
    pub state: LinkState,
    /// When it entered that state (unix seconds).
    pub since: i64,
    /// Why it is stale or failed (the operator's sentence), else `None`.
    pub error: Option<String>,
    /// When a stale host is connected again (unix seconds).
    pub retry_at: Option<i64>,
}
