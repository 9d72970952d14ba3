//! `metrics`: the document of docs/metrics.md for this agent's store, from
//! the snapshot the stream last sent, who reaps as the `reaper` message
//! says it (this agent reaping is `console`: it holds the `console`
//! role), the audit trail's counts as the `audit-counts` thread last read
//! them and the helper's restarts (the metrics file's sources: nothing is
//! read on the agent's loop).

use serde_json::Value;

use super::Session;
use crate::model::metrics::{Parts, StoreState, document_of};
use crate::model::protocol::lines::{self, Reply};
use crate::model::protocol::{MAX_MESSAGE_BYTES, MAX_TEXT_CHARS};
use crate::model::time::unix_now;

impl Session {
    /// Answer the `metrics` commands that waited for the audit trail's
    /// first count, once it ended (each tick).
    pub(super) fn metrics_again(&mut self) {
        if self.metrics_waiting.is_empty() || self.metrics.audit().is_none() {
            return;
        }
        for id in std::mem::take(&mut self.metrics_waiting) {
            self.metrics(&id);
        }
    }

    /// Answer `metrics` with the document's lines; refused while only the
    /// first rows of a big store are read (no count would be a total), or
    /// when the document does not fit one message (a store whose label
    /// values are long and many: `--metrics-file` writes it whole).
    pub(super) fn metrics(&mut self, id: &Value) {
        if let Some(partial) = self.latest.partial {
            self.send(lines::reply_error(
                id,
                "refused",
                &format!("{}: metrics once the store is read whole", partial.words()),
            ));
            return;
        }
        let store_up = !crate::ui::panes::header::banner_items(&self.app)
            .iter()
            .any(|banner| banner.id == "store_error");
        let state = store_up.then(|| StoreState::of(&self.latest, unix_now()));
        let by = match super::words::reaper_line(Some(&self.app)).by.as_str() {
            "agent" | "console" => "console",
            "controller" => "controller",
            "nobody" => "nobody",
            _ => "unknown",
        };
        let Some((_, counts)) = self.metrics.audit() else {
            // Not read here: answered at a tick once the trail's first
            // count ended.
            self.metrics_waiting.push(id.clone());
            return;
        };
        let helpers = self.metrics.helpers();
        let text = document_of(&Parts {
            state: state.as_ref(),
            by: Some(by),
            counts: counts.as_ref(),
            helpers: &helpers,
        });
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let fits = text.len() + lines.len() * 4 + 256 < MAX_MESSAGE_BYTES
            && lines.iter().all(|l| l.chars().count() <= MAX_TEXT_CHARS);
        if !fits {
            self.send(lines::reply_error(
                id,
                "refused",
                "the metrics do not fit one message: --metrics-file writes them whole",
            ));
            return;
        }
        self.send(lines::reply(Reply {
            metrics: Some(lines),
            ..Reply::ok(id)
        }));
    }
}
