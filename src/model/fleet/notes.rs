//! What this console itself tells of a host, as pure rules: its link lost
//! or recovered, and the commands a lost connection took with it. The
//! fleet turns each into a `console` Activity line ([`super::Fleet::note`]).
//! No I/O and no clock: times are parameters (unix seconds).

use serde_json::Value;

use super::{Link, LinkState};
use crate::model::text::sanitize_short;

/// The most commands one connection keeps as sent and not yet answered:
/// past it the oldest is reported lost at once (an agent that never
/// answers never grows this console's memory without end).
pub const MAX_OUTSTANDING: usize = 4_096;

/// A lost or recovered host, for the Activity pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkNote {
    /// When (unix seconds): the new link's `since`.
    pub at: i64,
    /// `lost` or `recovered`.
    pub kind: &'static str,
    /// The words.
    pub detail: String,
}

/// The note of host `name`'s link going from `old` to `new`: a connected
/// host going stale or failed is `lost` (with the reason); a host lost
/// before (`lost_at`, kept here) connected again is `recovered` (with how
/// long it was out). Any other change has no note (a first connection, a
/// retry starting).
#[must_use]
pub fn link_note(
    name: &str,
    lost_at: &mut Option<i64>,
    old: &Link,
    new: &Link,
) -> Option<LinkNote> {
    let name = sanitize_short(name, 64);
    match (old.state, new.state) {
        (LinkState::Connected, LinkState::Stale | LinkState::Failed) => {
            *lost_at = Some(new.since);
            let why = sanitize_short(new.error.as_deref().unwrap_or("no reason given"), 200);
            let then = if new.state == LinkState::Stale {
                "its rows are kept, dimmed, until it is back"
            } else {
                "not retried until someone acts"
            };
            Some(LinkNote {
                at: new.since,
                kind: "lost",
                detail: format!("{name}'s connection was lost: {why}; {then}"),
            })
        }
        (previous, LinkState::Connected) if previous != LinkState::Connected => {
            let since = lost_at.take()?;
            Some(LinkNote {
                at: new.since,
                kind: "recovered",
                detail: format!(
                    "{name} is connected again after {} out",
                    crate::model::time::span(new.since.saturating_sub(since))
                ),
            })
        }
        _ => None,
    }
}

/// A command sent on one connection and not yet answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outstanding {
    /// Its `id`, as JSON text (the key a reply is matched by).
    pub id: String,
    /// Its `cmd`.
    pub cmd: String,
    /// Its target instance's `name`, when it has one.
    pub instance: Option<String>,
}

impl Outstanding {
    /// The words of this command lost with host `host`'s connection: its
    /// outcome is unknown, never taken as done.
    #[must_use]
    pub fn lost_text(&self, host: &str) -> String {
        let host = sanitize_short(host, 64);
        let what = match &self.instance {
            Some(name) => format!("{} {}", self.cmd, sanitize_short(name, 64)),
            None => self.cmd.clone(),
        };
        format!(
            "command {what} lost with {host}'s connection: its outcome is unknown; see the host's \
             Activity"
        )
    }
}

/// The commands one connection sent and its agent has not answered yet,
/// oldest first, by `id` (docs/protocol.md "Commands": one `reply` per
/// command). `ping`s are not kept: losing one loses nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unanswered {
    sent: Vec<Outstanding>,
}

impl Unanswered {
    /// Command line `line` was handed to the connection's writer. `Some`
    /// when that pushed the oldest out ([`MAX_OUTSTANDING`]): it is to be
    /// reported lost.
    pub fn sent(&mut self, line: &str) -> Option<Outstanding> {
        /// The fields of a command line kept here (the rest skipped).
        #[derive(serde::Deserialize)]
        struct Head {
            #[serde(default)]
            id: Value,
            #[serde(default)]
            cmd: String,
            #[serde(default)]
            name: Option<String>,
        }
        let head = serde_json::from_str::<Head>(line).ok()?;
        if head.cmd == "ping" || head.id.is_null() {
            return None;
        }
        self.sent.push(Outstanding {
            id: head.id.to_string(),
            cmd: sanitize_short(&head.cmd, 32),
            instance: head.name,
        });
        (self.sent.len() > MAX_OUTSTANDING).then(|| self.sent.remove(0))
    }

    /// A `reply` with `id` came: that command is answered.
    pub fn answered(&mut self, id: &Value) {
        let key = id.to_string();
        if let Some(at) = self.sent.iter().position(|sent| sent.id == key) {
            self.sent.remove(at);
        }
    }

    /// The connection was lost: every command still unanswered, oldest
    /// first (each to be reported lost), and none kept.
    pub fn lost(&mut self) -> Vec<Outstanding> {
        std::mem::take(&mut self.sent)
    }

    /// How many wait for their reply.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sent.len()
    }

    /// None waits for its reply.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(state: LinkState, since: i64, error: Option<&str>) -> Link {
        Link {
            state,
            since,
            error: error.map(str::to_owned),
            retry_at: None,
            skew: None,
        }
    }

    #[test]
    fn a_connected_host_lost_and_back_is_noted_once_each_way() {
        let mut lost_at = None;
        let connecting = link(LinkState::Connecting, 100, None);
        let connected = link(LinkState::Connected, 101, None);
        // A first connection is no news.
        assert_eq!(
            link_note("fleet-2", &mut lost_at, &connecting, &connected),
            None
        );
        let stale = link(LinkState::Stale, 200, Some("no line for 15 s"));
        assert_eq!(
            link_note("fleet-2", &mut lost_at, &connected, &stale),
            Some(LinkNote {
                at: 200,
                kind: "lost",
                detail: "fleet-2's connection was lost: no line for 15 s; its rows are kept, \
                         dimmed, until it is back"
                    .to_owned(),
            })
        );
        let retry = link(LinkState::Connecting, 201, None);
        assert_eq!(link_note("fleet-2", &mut lost_at, &stale, &retry), None);
        let back = link(LinkState::Connected, 242, None);
        assert_eq!(
            link_note("fleet-2", &mut lost_at, &retry, &back),
            Some(LinkNote {
                at: 242,
                kind: "recovered",
                detail: "fleet-2 is connected again after 42s out".to_owned(),
            })
        );
        assert_eq!(lost_at, None);
        let failed = link(LinkState::Failed, 300, Some("a second hello"));
        assert_eq!(
            link_note("fleet-2", &mut lost_at, &back, &failed).map(|n| n.detail),
            Some(
                "fleet-2's connection was lost: a second hello; not retried until someone acts"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_fleet_adds_the_link_notes_as_console_activity() {
        let mut fleet = super::super::Fleet::new(vec!["fleet-1".into()], 100);
        assert!(!fleet.set_link(0, link(LinkState::Connected, 101, None)));
        assert!(fleet.set_link(0, link(LinkState::Stale, 130, Some("ssh ended"))));
        let line = fleet.activity.back().expect("a line");
        assert_eq!(
            (line.host, line.at, line.actor.as_str(), line.kind.as_str()),
            (0, 130, "console", "lost")
        );
        assert!(!fleet.set_link(0, link(LinkState::Connecting, 131, None)));
        assert!(fleet.set_link(0, link(LinkState::Connected, 132, None)));
        assert_eq!(fleet.activity.len(), 2);
        assert_eq!(fleet.activity[1].kind, "recovered");
    }

    #[test]
    fn commands_unanswered_when_the_connection_is_lost_are_lost_not_done() {
        let mut waiting = Unanswered::default();
        assert_eq!(
            waiting.sent(r#"{"id":"a1","cmd":"reap","name":"alpha"}"#),
            None
        );
        assert_eq!(waiting.sent(r#"{"id":2,"cmd":"pause"}"#), None);
        assert_eq!(waiting.sent(r#"{"id":"p","cmd":"ping"}"#), None);
        assert_eq!(
            waiting.sent(r#"{"id":"d","cmd":"down","name":"beta"}"#),
            None
        );
        assert_eq!(waiting.len(), 3);
        waiting.answered(&Value::from(2));
        waiting.answered(&Value::from("nope"));
        let lost = waiting.lost();
        assert!(waiting.is_empty());
        let words: Vec<String> = lost.iter().map(|c| c.lost_text("fleet-2")).collect();
        assert_eq!(
            words,
            [
                "command reap alpha lost with fleet-2's connection: its outcome is unknown; see \
                 the host's Activity",
                "command down beta lost with fleet-2's connection: its outcome is unknown; see \
                 the host's Activity",
            ]
        );
    }

    #[test]
    fn past_the_bound_the_oldest_unanswered_is_lost_at_once() {
        let mut waiting = Unanswered::default();
        for id in 0..MAX_OUTSTANDING {
            assert_eq!(
                waiting.sent(&format!(r#"{{"id":{id},"cmd":"pause"}}"#)),
                None
            );
        }
        let pushed = waiting.sent(r#"{"id":"last","cmd":"resume"}"#);
        assert_eq!(pushed.map(|c| c.id), Some("0".to_owned()));
        assert_eq!(waiting.len(), MAX_OUTSTANDING);
    }
}
