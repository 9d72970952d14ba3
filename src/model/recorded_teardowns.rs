//! The teardowns a recording saw finish (`record --metrics-file`,
//! docs/metrics.md): the `down` operations of the store's operations
//! table (stackless 0.4.0's controller, schema 14: whoever asked for
//! them) that reached `succeeded` or `failed` while `record` ran. Pure:
//! fed the protocol's messages in order.

use std::collections::HashSet;

use crate::model::protocol::lines::{Message, Rows};

/// The counts, and the operations already counted (or finished before the
/// recording's first whole snapshot ended: known, not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedTeardowns {
    /// Finished `down` operations seen, by id (JSON text).
    finished: HashSet<String>,
    /// The first `synced` came: finishes seen from now on are counted.
    started: bool,
    /// `down` operations that succeeded while recorded.
    pub succeeded: u64,
    /// `down` operations that failed while recorded.
    pub failed: u64,
}

impl RecordedTeardowns {
    /// Take one message of the stream: an operations row upserted as a
    /// finished `down` counts once per id, unless it was already finished
    /// in the first whole snapshot.
    pub fn see(&mut self, message: &Message) {
        match message {
            Message::Synced(_) => self.started = true,
            Message::Rows(Rows::Operations(rows)) => {
                for row in rows.upsert.iter().filter(|r| r.verb == "down") {
                    let failed = match row.status.as_str() {
                        "succeeded" => false,
                        "failed" => true,
                        _ => continue,
                    };
                    if !self.finished.insert(row.id.to_string()) || !self.started {
                        continue;
                    }
                    if failed {
                        self.failed += 1;
                    } else {
                        self.succeeded += 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// The `stackless_recorded_teardowns_total` family in the text format
    /// `model::metrics` writes (the counter named with its `_total`, as
    /// the Prometheus text format 0.0.4 and `promtool` want it; each
    /// outcome always written), ending with a newline.
    #[must_use]
    pub fn family(&self) -> String {
        format!(
            "# HELP stackless_recorded_teardowns_total down operations of the store's operations table that finished while record ran, by outcome\n\
             # TYPE stackless_recorded_teardowns_total counter\n\
             stackless_recorded_teardowns_total{{outcome=\"succeeded\"}} {}\n\
             stackless_recorded_teardowns_total{{outcome=\"failed\"}} {}\n",
            self.succeeded, self.failed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::protocol::lines::read;

    fn op(id: &str, verb: &str, status: &str) -> Message {
        read(
            format!(
                r#"{{"type":"rows","seq":1,"table":"operations","upsert":[{{"id":"{id}","instance":"a","verb":"{verb}","status":"{status}","created_at":1,"updated_at":2,"error":null}}],"remove":[]}}"#
            )
            .as_bytes(),
        )
        .expect("a rows line")
    }

    #[test]
    fn downs_finished_while_recorded_count_once_and_the_first_snapshots_do_not() {
        let mut counts = RecordedTeardowns::default();
        counts.see(&op("old", "down", "succeeded"));
        counts.see(&read(br#"{"type":"synced","seq":1,"at":5}"#).expect("synced"));
        counts.see(&op("old", "down", "succeeded"));
        counts.see(&op("d1", "down", "running"));
        counts.see(&op("d1", "down", "succeeded"));
        counts.see(&op("d1", "down", "succeeded"));
        counts.see(&op("d2", "down", "failed"));
        counts.see(&op("u1", "up", "failed"));
        assert_eq!((counts.succeeded, counts.failed), (1, 1));
        assert_eq!(
            counts.family(),
            "# HELP stackless_recorded_teardowns_total down operations of the store's operations table that finished while record ran, by outcome\n\
             # TYPE stackless_recorded_teardowns_total counter\n\
             stackless_recorded_teardowns_total{outcome=\"succeeded\"} 1\n\
             stackless_recorded_teardowns_total{outcome=\"failed\"} 1\n"
        );
    }
}
