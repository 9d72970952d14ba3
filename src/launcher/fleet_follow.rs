//! `snapshot --follow` over a fleet, as pure rules: each host's link state
//! (`connecting`, `connected`, `stale`, `failed`), its reconnect backoff,
//! the `host` field added to every line of its stream and the `host`
//! message sent when its state changes (docs/protocol.md "Fleet stream").
//! No I/O and no clock: `now` (unix seconds) is a parameter;
//! [`super::fleet_follow_run`] runs the ssh.

use serde_json::{Map, Value};

use super::failure::Failure;

/// The longest line one host's stream may send (bytes, without its
/// newline): the agent's `max_message_bytes` (docs/protocol.md
/// "Framing"). A longer line fails the host (its ssh killed): never
/// unbounded memory.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// `heartbeat_secs` before a host's `hello` says its own (the agent's
/// default, docs/protocol.md `hello`).
pub(crate) const DEFAULT_HEARTBEAT_SECS: i64 = 5;

/// The longest `heartbeat_secs` a host's `hello` may set (seconds): a
/// larger one is taken as this.
pub(crate) const MAX_HEARTBEAT_SECS: i64 = 300;

/// A host with no line (heartbeats included) for this many
/// `heartbeat_secs` is stale (3 x 5 s = 15 s by default).
pub(crate) const SILENT_BEATS: i64 = 3;

/// The first reconnect delay (seconds); doubled at each failed attempt.
pub(crate) const BACKOFF_FIRST: i64 = 1;

/// The longest reconnect delay (seconds).
pub(crate) const BACKOFF_MAX: i64 = 60;

/// A connection that stayed up this long (seconds) resets the backoff to
/// [`BACKOFF_FIRST`].
pub(crate) const HEALTHY_RUN: i64 = 60;

/// The protocol version this fleet stream reads (`hello.protocol`).
pub(crate) const PROTOCOL: u64 = 1;

/// One host's link state, as its `host` message names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Its ssh runs; no `hello` yet.
    Connecting,
    /// Its `hello` came; lines arrive.
    Connected,
    /// Its ssh ended, or it was silent for [`SILENT_BEATS`] heartbeats:
    /// its rows are kept; reconnected at `retry_at`.
    Stale,
    /// It cannot work until someone acts (host key, login, not installed,
    /// older protocol, a line over [`MAX_LINE`]): not retried.
    Failed,
}

impl State {
    /// The name the `host` message gives it.
    #[must_use]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Stale => "stale",
            Self::Failed => "failed",
        }
    }
}

/// One host's link: its state and what decides the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// Its state.
    pub state: State,
    /// When it entered that state (unix seconds).
    pub since: i64,
    /// Why it is stale or failed (the operator's sentence).
    pub error: Option<String>,
    /// When a stale host is connected again (unix seconds).
    pub retry_at: Option<i64>,
    /// Its `hello.heartbeat_secs` (else [`DEFAULT_HEARTBEAT_SECS`]).
    pub heartbeat_secs: i64,
    /// When its last line came, or its ssh started (unix seconds).
    pub last_line: i64,
    /// When its current connection got its `hello`.
    pub connected_at: Option<i64>,
    /// The next reconnect delay (seconds).
    pub backoff: i64,
}

impl Link {
    /// A host whose ssh was started at `now`.
    #[must_use]
    pub(crate) fn new(now: i64) -> Self {
        Self {
            state: State::Connecting,
            since: now,
            error: None,
            retry_at: None,
            heartbeat_secs: DEFAULT_HEARTBEAT_SECS,
            last_line: now,
            connected_at: None,
            backoff: BACKOFF_FIRST,
        }
    }

    fn enter(&mut self, state: State, now: i64, error: Option<String>, retry_at: Option<i64>) {
        self.state = state;
        self.since = now;
        self.error = error;
        self.retry_at = retry_at;
    }

    /// Its ssh was started again at `now` (a stale host's retry): it is
    /// `connecting` (a change).
    pub(crate) fn restarted(&mut self, now: i64) {
        self.last_line = now;
        self.connected_at = None;
        self.heartbeat_secs = DEFAULT_HEARTBEAT_SECS;
        self.enter(State::Connecting, now, None, None);
    }

    /// A line of kind `line` came at `now`. `true` when the state
    /// changed: a `hello` of [`PROTOCOL`] connects it; one of another
    /// protocol fails it (older protocol). A stale or failed host's line
    /// (one its killed connection left queued) changes nothing.
    pub(crate) fn line(&mut self, now: i64, line: &Line) -> bool {
        if matches!(self.state, State::Stale | State::Failed) {
            return false;
        }
        self.last_line = now;
        let Line::Hello {
            protocol,
            heartbeat_secs,
        } = line
        else {
            return false;
        };
        if *protocol != Some(PROTOCOL) {
            let said = protocol.map_or_else(|| "none".to_owned(), |p| p.to_string());
            self.enter(
                State::Failed,
                now,
                Some(format!(
                    "older protocol: its hello says protocol {said}, this console reads \
                     {PROTOCOL}; install this stackless-tui there"
                )),
                None,
            );
            return true;
        }
        // A host's own word, within bounds: a huge one would keep a silent
        // host connected for ever (or overflow the silence limit).
        if let Some(secs) = heartbeat_secs
            .filter(|s| *s > 0)
            .map(|s| s.min(MAX_HEARTBEAT_SECS))
        {
            self.heartbeat_secs = secs;
        }
        self.connected_at = Some(now);
        self.enter(State::Connected, now, None, None);
        true
    }

    /// Its stream ended at `now` (`failure`: how its ssh ended,
    /// [`super::failure::classify`]; `error`: the sentence). A failure
    /// that will not pass by itself ([`permanent`]) fails it; anything
    /// else makes it stale with a retry after the backoff. `false` when it
    /// was already stale or failed (no change).
    pub(crate) fn ended(&mut self, now: i64, failure: Option<Failure>, error: String) -> bool {
        if matches!(self.state, State::Stale | State::Failed) {
            return false;
        }
        if failure.is_some_and(permanent) {
            self.enter(State::Failed, now, Some(error), None);
        } else {
            self.stale(now, error);
        }
        true
    }

    /// Failed at `now` for `error` (a line over [`MAX_LINE`], a line
    /// that is not the protocol); `false` when already failed.
    pub(crate) fn fail(&mut self, now: i64, error: String) -> bool {
        if self.state == State::Failed {
            return false;
        }
        self.enter(State::Failed, now, Some(error), None);
        true
    }

    /// Stale from `now`, retried after the backoff, which then doubles (up
    /// to [`BACKOFF_MAX`]); reset first after a healthy run.
    fn stale(&mut self, now: i64, error: String) {
        if self
            .connected_at
            .is_some_and(|at| now.saturating_sub(at) >= HEALTHY_RUN)
        {
            self.backoff = BACKOFF_FIRST;
        }
        let delay = self.backoff;
        self.backoff = (delay * 2).min(BACKOFF_MAX);
        self.connected_at = None;
        self.enter(State::Stale, now, Some(error), Some(now + delay));
    }

    /// `true` when at `now` it has been silent (no line, heartbeats
    /// included) for [`SILENT_BEATS`] heartbeats while connecting or
    /// connected: it is then stale (its ssh is to be killed).
    pub(crate) fn check_silence(&mut self, now: i64) -> bool {
        let quiet = now.saturating_sub(self.last_line);
        let limit = SILENT_BEATS.saturating_mul(self.heartbeat_secs);
        if !matches!(self.state, State::Connecting | State::Connected) || quiet < limit {
            return false;
        }
        self.stale(
            now,
            format!(
                "no line for {quiet} s (3 x heartbeat_secs {})",
                self.heartbeat_secs
            ),
        );
        true
    }

    /// `true` when a stale host's retry is due at `now`.
    #[must_use]
    pub(crate) fn due(&self, now: i64) -> bool {
        self.state == State::Stale && self.retry_at.is_some_and(|at| now >= at)
    }
}

/// A failure that will not pass by itself: not retried (host key, login,
/// not installed, cannot start or run, an older stackless-tui there).
#[must_use]
pub(crate) fn permanent(failure: Failure) -> bool {
    matches!(
        failure,
        Failure::HostKey
            | Failure::Auth
            | Failure::NotInstalled
            | Failure::CannotStart
            | Failure::NotExecutable
            | Failure::OlderRemote
            | Failure::NoStreams
    )
}

/// What a line of a host's stream is, for its link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// A `hello` with its `protocol` and `heartbeat_secs`.
    Hello {
        /// `hello.protocol`.
        protocol: Option<u64>,
        /// `hello.heartbeat_secs`.
        heartbeat_secs: Option<i64>,
    },
    /// Any other message.
    Other,
}

/// One line of host `name`'s stream (`raw`, without its newline) with
/// `"host": name` added first, and what it is; `Err` (the sentence) when
/// it is not a JSON object.
///
/// # Errors
/// The line is not UTF-8 JSON, or not an object.
pub(crate) fn tag_line(name: &str, raw: &[u8]) -> Result<(String, Line), String> {
    let (fields, line) = parse_line(raw)?;
    let mut out = Map::new();
    out.insert("host".to_owned(), name.into());
    for (key, value) in fields {
        if key != "host" {
            out.insert(key, value);
        }
    }
    Ok((Value::Object(out).to_string(), line))
}

/// One line of a host's stream (`raw`, without its newline) as its JSON
/// object, and what it is for its link.
///
/// # Errors
/// The sentence when it is not UTF-8 JSON, or not an object (the host is
/// then failed: not the protocol).
pub(crate) fn parse_line(raw: &[u8]) -> Result<(Map<String, Value>, Line), String> {
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(raw) else {
        return Err(format!(
            "its stream sent a line that is not a JSON object ({} bytes): not the protocol",
            raw.len()
        ));
    };
    let line = if fields.get("type").and_then(Value::as_str) == Some("hello") {
        Line::Hello {
            protocol: fields.get("protocol").and_then(Value::as_u64),
            heartbeat_secs: fields.get("heartbeat_secs").and_then(Value::as_i64),
        }
    } else {
        Line::Other
    };
    Ok((fields, line))
}

/// Why a host whose stream sent a line over [`MAX_LINE`] bytes failed.
#[must_use]
pub(crate) fn too_long() -> String {
    format!("its stream sent a line over {MAX_LINE} bytes: not the protocol (its ssh was killed)")
}

/// The `host` message for host `name` in `link`'s state:
/// `{"type":"host","host":NAME,"state":...,"since":UNIX,"error":...,
/// "retry_at":UNIX|null}`.
#[must_use]
pub(crate) fn host_message(name: &str, link: &Link) -> String {
    /// The fleet stream's `host` message (docs/protocol.md "Fleet stream").
    #[derive(serde::Serialize)]
    struct HostMessage<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        host: &'a str,
        state: &'static str,
        since: i64,
        error: Option<&'a str>,
        retry_at: Option<i64>,
    }
    serde_json::to_string(&HostMessage {
        kind: "host",
        host: name,
        state: link.state.name(),
        since: link.since,
        error: link.error.as_deref(),
        retry_at: link.retry_at,
    })
    .unwrap_or_default()
}

#[cfg(test)]
#[path = "fleet_follow_tests.rs"]
mod tests;
