//! The fleet's answers from its hosts' agents: a command's `reply`
//! (a ping's round trip, an action's answer tallied per `y`, a detail's
//! lines, a logs stream's start) and a logs stream's lines, matched to
//! what was sent by (host, id) (docs/protocol.md "Replies").

use serde_json::Value;

use super::{Answers, FleetApp, Layer, MAX_LOG_LINES, Sent, TextView, id_key};
use crate::model::protocol::lines::Reply;
use crate::model::text::sanitize_short;

impl FleetApp {
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

    pub(super) fn waiting_view(&mut self, host: usize, id: &Value) -> Option<&mut TextView> {
        match self.layers.last_mut() {
            Some(Layer::Text(view)) if view.waiting.as_ref() == Some(&(host, id.clone())) => {
                Some(view)
            }
            _ => None,
        }
    }

    pub(super) fn detail_reply(
        &mut self,
        host: usize,
        id: &Value,
        ok: bool,
        message: &str,
        reply: &Reply,
    ) {
        let Some(view) = self.waiting_view(host, id) else {
            return;
        };
        view.waiting = None;
        view.lines = if ok {
            reply.detail.as_ref().map_or_else(Vec::new, |detail| {
                detail
                    .lines
                    .iter()
                    .map(|l| sanitize_short(l, 1_024))
                    .collect()
            })
        } else {
            vec![format!("refused: {message}")]
        };
    }

    pub(super) fn logs_reply(
        &mut self,
        host: usize,
        id: &Value,
        ok: bool,
        message: &str,
        reply: &Reply,
    ) {
        let Some(view) = self.waiting_view(host, id) else {
            return;
        };
        view.waiting = None;
        if ok {
            let services: Vec<String> = reply
                .services
                .iter()
                .flatten()
                .map(|s| sanitize_short(s, 64))
                .collect();
            view.lines.insert(
                0,
                format!("-- following {} over its agent", services.join(", ")),
            );
        } else {
            view.logs = None;
            view.lines = vec![format!("refused: {message}")];
        }
    }

    pub(super) fn log(&mut self, host: usize, logs: &Value, service: &str, text: &str, cont: bool) {
        let Some(Layer::Text(view)) = self.layers.last_mut() else {
            return;
        };
        if view.logs.as_ref() != Some(&(host, logs.clone())) {
            return;
        }
        let text = sanitize_short(text, 1_024);
        match view.lines.last_mut() {
            Some(last) if cont => last.push_str(&text),
            _ => view
                .lines
                .push(format!("{} │ {text}", sanitize_short(service, 32))),
        }
        if view.lines.len() > MAX_LOG_LINES {
            let extra = view.lines.len() - MAX_LOG_LINES;
            view.lines.drain(..extra);
            view.scroll = view.scroll.saturating_sub(extra);
        }
    }
}
