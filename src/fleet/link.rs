//! `snapshot --follow` over a fleet, as pure rules: each host's link state
//! (`connecting`, `connected`, `stale`, `failed`), its reconnect backoff,
//! the `host` field added to every line of its stream and the `host`
//! message sent when its state changes (docs/protocol.md "Fleet stream").
//! No I/O and no clock: `now` (unix seconds) is a parameter;
//! [`super::follow`] runs the ssh.

use crate::model::fleet::LinkState;
use serde_json::{Map, Value};

use crate::launcher::failure::Failure;

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

/// How far a host's measured clock skew may move (seconds) before the
/// held one is replaced: its clock is read in whole seconds on both ends,
/// so one second either way is the reading's own error, not a change.
pub(crate) const SKEW_JITTER: i64 = 1;

/// The most hosts connecting at once (their ssh started, no `hello`
/// yet): the rest wait their turn, so 500 hosts, most unreachable, start
/// in waves of at most this many.
pub(crate) const MAX_CONNECTING: usize = 32;

/// One host's link: its state and what decides the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// Its state.
    pub state: LinkState,
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
    /// The host's clock minus this machine's (seconds), measured when its
    /// `hello.now` or a `heartbeat.at` arrived; `None` until one did (an
    /// older agent's `hello` has no `now`). Kept over a reconnect: the
    /// host's clock did not change with its connection.
    pub skew: Option<i64>,
    /// This host's share of a reconnect wave: its retry is spread by up to
    /// a quarter of its backoff from this seed ([`spread`]), so hosts lost
    /// together do not all come back in the same second.
    pub seed: u64,
}

impl Link {
    /// A host whose ssh was started at `now`.
    #[must_use]
    pub(crate) fn new(now: i64) -> Self {
        Self {
            state: LinkState::Connecting,
            since: now,
            error: None,
            retry_at: None,
            heartbeat_secs: DEFAULT_HEARTBEAT_SECS,
            last_line: now,
            connected_at: None,
            backoff: BACKOFF_FIRST,
            skew: None,
            seed: 0,
        }
    }

    /// The same link with its reconnect spread seeded by `seed` (the
    /// host's index in its fleet plus one: seed 0 is not spread).
    #[must_use]
    pub(crate) fn seeded(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    fn enter(&mut self, state: LinkState, now: i64, error: Option<String>, retry_at: Option<i64>) {
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
        self.enter(LinkState::Connecting, now, None, None);
    }

    /// A line of kind `line` came at `now`. `true` when the state changed
    /// (a `heartbeat` may change the held clock skew, [`Link::skew`],
    /// which is not a state change: the caller compares it). A `hello` of [`PROTOCOL`] connects it;
    /// one of another protocol fails it, named older or newer
    /// ([`protocol_error`]). A stream out of order fails it with the
    /// reason: a second `hello` on one connection (it could turn
    /// `read_only` off or change the teardown unseen), or rows, `reset`
    /// or `synced` before the `hello`. A stale or failed host's line (one
    /// its killed connection left queued) changes nothing.
    pub(crate) fn line(&mut self, now: i64, line: &Line) -> bool {
        if matches!(self.state, LinkState::Stale | LinkState::Failed) {
            return false;
        }
        self.last_line = now;
        match line {
            Line::Hello {
                protocol,
                heartbeat_secs,
                now: host_now,
            } => self.hello(now, *protocol, *heartbeat_secs, *host_now),
            Line::Group if self.state == LinkState::Connecting => {
                self.enter(
                    LinkState::Failed,
                    now,
                    Some("rows before hello".to_owned()),
                    None,
                );
                true
            }
            Line::Heartbeat { at } if self.state == LinkState::Connected => {
                self.clock(now, *at);
                false
            }
            Line::Group | Line::Heartbeat { .. } | Line::Other => false,
        }
    }

    fn hello(
        &mut self,
        now: i64,
        protocol: Option<u64>,
        heartbeat_secs: Option<i64>,
        host_now: Option<i64>,
    ) -> bool {
        if self.state == LinkState::Connected {
            self.enter(
                LinkState::Failed,
                now,
                Some("a second hello".to_owned()),
                None,
            );
            return true;
        }
        if let Some(error) = protocol_error(protocol) {
            self.enter(LinkState::Failed, now, Some(error), None);
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
        if let Some(at) = host_now {
            self.skew = Some(at.saturating_sub(now));
        }
        self.connected_at = Some(now);
        self.enter(LinkState::Connected, now, None, None);
        true
    }

    /// The host's clock read `at` when its line came at `now`: the held
    /// skew replaced when it moved more than [`SKEW_JITTER`].
    fn clock(&mut self, now: i64, at: i64) {
        let skew = at.saturating_sub(now);
        if self
            .skew
            .is_none_or(|held| held.abs_diff(skew) > SKEW_JITTER.unsigned_abs())
        {
            self.skew = Some(skew);
        }
    }

    /// Its stream ended at `now` (`failure`: how its ssh ended,
    /// [`crate::launcher::failure::classify`]; `error`: the sentence). A failure
    /// that will not pass by itself ([`permanent`]) fails it; anything
    /// else makes it stale with a retry after the backoff. `false` when it
    /// was already stale or failed (no change).
    pub(crate) fn ended(&mut self, now: i64, failure: Option<Failure>, error: String) -> bool {
        if matches!(self.state, LinkState::Stale | LinkState::Failed) {
            return false;
        }
        if failure.is_some_and(permanent) {
            self.enter(LinkState::Failed, now, Some(error), None);
        } else {
            self.stale(now, error);
        }
        true
    }

    /// Failed at `now` for `error` (a line over [`MAX_LINE`], a line
    /// that is not the protocol); `false` when already failed.
    pub(crate) fn fail(&mut self, now: i64, error: String) -> bool {
        if self.state == LinkState::Failed {
            return false;
        }
        self.enter(LinkState::Failed, now, Some(error), None);
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
        let retry = now + delay + spread(self.seed, now, delay);
        self.enter(LinkState::Stale, now, Some(error), Some(retry));
    }

    /// `true` when at `now` it has been silent (no line, heartbeats
    /// included) for [`SILENT_BEATS`] heartbeats while connecting or
    /// connected: it is then stale (its ssh is to be killed).
    pub(crate) fn check_silence(&mut self, now: i64) -> bool {
        let quiet = now.saturating_sub(self.last_line);
        let limit = SILENT_BEATS.saturating_mul(self.heartbeat_secs);
        if !matches!(self.state, LinkState::Connecting | LinkState::Connected) || quiet < limit {
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
        self.state == LinkState::Stale && self.retry_at.is_some_and(|at| now >= at)
    }
}

/// Which hosts start now: of `candidates` (a host's index, and `None`
/// when it was never started, else the retry time it is due since), at
/// most `free` (the places left of [`MAX_CONNECTING`]): hosts never
/// started first, in the fleet's order, then due retries, the longest due
/// first. So every host gets its first try before any is retried, and a
/// host that keeps failing never starves one further down the fleet.
#[must_use]
pub(crate) fn next_wave(
    candidates: impl Iterator<Item = (usize, Option<i64>)>,
    free: usize,
) -> Vec<usize> {
    let mut all: Vec<(usize, Option<i64>)> = candidates.collect();
    // `None` sorts before any `Some`: never started first.
    all.sort_by_key(|&(index, due)| (due, index));
    all.into_iter().take(free).map(|(index, _)| index).collect()
}

/// Why a `hello` of `protocol` cannot be read here, or `None` when it is
/// [`PROTOCOL`]: a newer one asks for this console to be upgraded, an
/// older one for the host's agent (docs/protocol.md "Versions").
#[must_use]
pub(crate) fn protocol_error(protocol: Option<u64>) -> Option<String> {
    match protocol {
        Some(PROTOCOL) => None,
        Some(p) if p > PROTOCOL => Some(format!(
            "protocol {p} is newer than this console's {PROTOCOL}: upgrade stackless-tui here"
        )),
        Some(p) => Some(format!(
            "protocol {p} is older than this console's {PROTOCOL}: upgrade stackless-tui there"
        )),
        None => Some(format!(
            "its hello names no protocol (this console reads {PROTOCOL}): not the protocol"
        )),
    }
}

/// How much later than its backoff a host seeded `seed` is retried after
/// going stale at `now` with delay `delay` (seconds): `0..=delay / 4`
/// (always 0 for seed 0: a lone host, as `snapshot --follow` of one),
/// spread over hosts and attempts, so a wave of hosts lost together comes
/// back spread over a quarter of the backoff, not in one second.
#[must_use]
pub(crate) fn spread(seed: u64, now: i64, delay: i64) -> i64 {
    let span = u64::try_from(delay / 4).unwrap_or(0);
    if span == 0 || seed == 0 {
        return 0;
    }
    // A fixed mix of seed and time (splitmix64's step): no randomness,
    // so a test knows each host's retry.
    let mut x = seed ^ now.unsigned_abs().wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    i64::try_from(x % (span + 1)).unwrap_or(0)
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
    /// A `hello` with its `protocol`, `heartbeat_secs` and `now`.
    Hello {
        /// `hello.protocol`.
        protocol: Option<u64>,
        /// `hello.heartbeat_secs`.
        heartbeat_secs: Option<i64>,
        /// `hello.now`: the host's clock (unix seconds; older agents do
        /// not send it).
        now: Option<i64>,
    },
    /// `reset`, `rows` or `synced`: part of a snapshot group, which only
    /// follows a `hello`.
    Group,
    /// A `heartbeat` with its `at` (the host's clock, unix seconds).
    Heartbeat {
        /// `heartbeat.at`.
        at: i64,
    },
    /// Any other message.
    Other,
}

impl Line {
    /// What `message` is for its link.
    #[must_use]
    pub(crate) fn of(message: &crate::model::fleet::wire::Message) -> Self {
        use crate::model::fleet::wire::Message;
        match message {
            Message::Hello(hello) => Self::Hello {
                protocol: hello.protocol,
                heartbeat_secs: hello.heartbeat_secs,
                now: hello.now,
            },
            Message::Reset(_) | Message::Rows(_) | Message::Synced(_) => Self::Group,
            Message::Heartbeat(beat) => Self::Heartbeat { at: beat.at },
            _ => Self::Other,
        }
    }
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
    let line = match fields.get("type").and_then(Value::as_str) {
        Some("hello") => Line::Hello {
            protocol: fields.get("protocol").and_then(Value::as_u64),
            heartbeat_secs: fields.get("heartbeat_secs").and_then(Value::as_i64),
            now: fields.get("now").and_then(Value::as_i64),
        },
        Some("reset" | "rows" | "synced") => Line::Group,
        Some("heartbeat") => fields
            .get("at")
            .and_then(Value::as_i64)
            .map_or(Line::Other, |at| Line::Heartbeat { at }),
        _ => Line::Other,
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
#[path = "link_tests.rs"]
mod tests;
