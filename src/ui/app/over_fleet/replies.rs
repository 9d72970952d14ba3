//! The fleet's answers from its hosts' agents: a command's `reply`
//! (a ping's round trip, an action's answer tallied per `y`, a detail's
//! lines, a logs stream's start) and a logs stream's lines, matched to
//! what was sent by (host, id) (docs/protocol.md "Replies"); what is for
//! a text view goes to the App's as [`ToView`].

use serde_json::Value;

use super::{Answers, FleetState, Sent, id_key};
use crate::model::protocol::lines::Reply;
use crate::model::text::sanitize_short;
use crate::ui::app::host_view::ToView;

impl FleetState {
    pub(super) fn reply(&mut self, host: usize, reply: &Reply, now_ms: i64) {
        let (id, ok) = (&reply.id, reply.ok);
        let Some(sent) = self.sent.remove(&(host, id_key(id))) else {
            return;
        };
        if let Sent::Ping(at) = sent {
            // Shown at the next tick's frame: a ping costs no frame.
            if let Some(one) = self.fleet.hosts.get_mut(host) {
                one.rtt_ms = Some(now_ms.saturating_sub(at).max(0));
            }
            return;
        }
        self.dirty = true;
        let name = self.host_name(host);
        let message = sanitize_short(reply.words(), 400);
        match sent {
            Sent::Ping(_) => {}
            Sent::Action(what, batch) => {
                let answer = if ok {
                    format!("{name}: {message}")
                } else {
                    format!("{name}: {what} refused: {message}")
                };
                self.answered(batch, answer, !ok);
            }
            Sent::Detail => self.detail_reply(host, id, ok, &message, reply),
            Sent::Logs => self.logs_reply(host, id, ok, &message, reply),
            Sent::Quiet => {}
        }
    }

    /// One answer to the commands of `y` number `batch`: the footer says
    /// every answer so far of that `y` (`2/3 answered: fleet-1: ... ·
    /// fleet-2: ...`; an error when any was refused), never only the last
    /// host's.
    pub(super) fn answered(&mut self, batch: u64, answer: String, refused: bool) {
        let tally = self.answers.get_or_insert_with(|| Answers {
            batch,
            ..Answers::default()
        });
        if tally.batch != batch {
            *tally = Answers {
                batch,
                ..Answers::default()
            };
        }
        tally.lines.push(answer);
        tally.refused |= refused;
        let total = self.batch_sizes.get(&batch).copied().unwrap_or(1);
        let (text, error) = if total <= 1 {
            (tally.lines.join(" · "), tally.refused)
        } else {
            (
                format!(
                    "{}/{total} answered: {}",
                    tally.lines.len(),
                    tally.lines.join(" · ")
                ),
                tally.refused,
            )
        };
        self.say(text, error);
    }

    /// A detail's answer, for the App's view waiting for it.
    pub(super) fn detail_reply(
        &mut self,
        host: usize,
        id: &Value,
        ok: bool,
        message: &str,
        reply: &Reply,
    ) {
        let lines = if ok {
            Ok(reply.detail.as_ref().map_or_else(Vec::new, |detail| {
                detail
                    .lines
                    .iter()
                    .map(|l| sanitize_short(l, 1_024))
                    .collect()
            }))
        } else {
            Err(message.to_owned())
        };
        self.shown.news.push(ToView::Detail {
            host,
            id: id.clone(),
            lines,
        });
    }

    /// A logs command's answer, for the App's view waiting for it.
    pub(super) fn logs_reply(
        &mut self,
        host: usize,
        id: &Value,
        ok: bool,
        message: &str,
        reply: &Reply,
    ) {
        let services = if ok {
            Ok(reply
                .services
                .iter()
                .flatten()
                .map(|s| sanitize_short(s, 64))
                .collect())
        } else {
            Err(message.to_owned())
        };
        self.shown.news.push(ToView::Logs {
            host,
            id: id.clone(),
            services,
        });
    }

    /// One line of a logs stream, for the App's view following it.
    pub(super) fn log(&mut self, host: usize, logs: &Value, service: &str, text: &str, cont: bool) {
        self.shown.news.push(ToView::Line {
            host,
            logs: logs.clone(),
            service: service.to_owned(),
            text: text.to_owned(),
            cont,
        });
    }
}
