//! The console's keyframe (docs/history.md, "Segments"), made from what
//! the console already holds: the snapshot of the last group written (the
//! same `Arc` the render loop holds), its `seq` and `at`, the `hello`, who
//! reaps and the banners up. No row is parsed or kept for it: the rows are
//! made again from the snapshot by the agent's row builders
//! ([`lines::every_row_group`]: the rows a `reset` group sends, no table
//! built) only when a segment starts, and handed out one line at a time.

use std::sync::Arc;

use crate::model::Snapshot;
use crate::model::protocol::lines::{self, Banner, Hello, Message, ReaperLine, Reset};

/// The last snapshot group written: its snapshot, `seq` and `synced.at`
/// (unix seconds).
#[derive(Debug, Clone)]
pub struct Group {
    /// The snapshot its rows were made from.
    pub snapshot: Arc<Snapshot>,
    /// Its `seq`.
    pub seq: u64,
    /// Its `synced.at` (unix seconds).
    pub at: i64,
}

/// The recording's state at a point between two groups, as a reader
/// replaying the lines up to that point holds it (`model::history::replay`).
#[derive(Debug, Clone, Default)]
pub struct Held {
    /// The stream's `hello` (`None` before it).
    pub hello: Option<Arc<Hello>>,
    /// The last group written (`None` before the first).
    pub group: Option<Group>,
    /// Who reaps, as last said (the `hello`'s, then each `reaper` line).
    pub reaper: Option<ReaperLine>,
    /// The banners up, as last said.
    pub banners: Vec<Banner>,
}

impl Held {
    /// The keyframe's lines (unstamped), each handed to `emit` as it is
    /// made: `hello`, `reset` (no `reason`: a keyframe is not a store read
    /// anew), the `rows` of every row (each under the protocol's longest
    /// line), `synced` with the last group's `seq` and `at` and its counts,
    /// who reaps, each banner up. Nothing before the first group (as
    /// `Replay::keyframe`: there is no table to rebuild).
    pub fn lines(&self, emit: &mut impl FnMut(String)) {
        let Some(group) = &self.group else {
            return;
        };
        if let Some(hello) = &self.hello {
            emit(lines::hello(hello));
        }
        emit(lines::line(&Message::Reset(Reset {
            seq: group.seq,
            reason: None,
        })));
        lines::every_row_group(group.seq, &group.snapshot, group.at, emit);
        if let Some(reaper) = &self.reaper {
            emit(lines::reaper(reaper));
        }
        for banner in &self.banners {
            emit(lines::banner(banner));
        }
    }
}
