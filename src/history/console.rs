//! The console's own recording (docs/history.md, "The console records"):
//! the render loop hands cheap clones of what a recording needs (each new
//! snapshot, the Activity lines, who reaps, the banners) over an
//! unbounded channel to the `history-recorder` thread, which turns them
//! into the protocol's lines with the agent's code
//! ([`crate::model::protocol::lines`]: `stream_group`, `activity`,
//! `reaper`, `banner`) and gives them to a [`Sink`]. The render loop never
//! waits for it and does no I/O for it.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::files::Dir;
use super::keyframe::{Group, Held};
use super::record::{FLUSH_EVERY, Retention, Sink, bytes_words};
use crate::model::Snapshot;
use crate::model::activity::Activity;
use crate::model::history::span_words;
use crate::model::protocol::HEARTBEAT_SECS;
use crate::model::protocol::lines::{self, Banner, Hello, ReaperLine};
use crate::model::protocol::rows::Tables;
use crate::model::time::unix_now;

/// What the console keeps: `record`'s defaults (`--retain 7d`,
/// `--max-size 256MB`).
pub const DEFAULT_RETENTION: Retention = Retention {
    retain_secs: 7 * 86_400,
    max_bytes: 256_000_000,
};

/// One thing the render loop forwards to the recorder.
#[derive(Debug)]
pub enum Fed {
    /// The first whole snapshot's `hello` (who reaps, the schema): sent
    /// once, before the first [`Fed::Snapshot`].
    Hello(Box<Hello>),
    /// A whole snapshot from the watcher (never a partial first read).
    Snapshot(Arc<Snapshot>),
    /// An Activity line (redacted here, by the newest snapshot's values).
    Activity(Activity),
    /// Who reaps, when it changed.
    Reaper(ReaperLine),
    /// The header's banners, when their set or words changed.
    Banners(Vec<Banner>),
}

/// The render loop's end of the channel: [`Feed::send`] never blocks.
#[derive(Debug)]
pub struct Feed {
    tx: std::sync::mpsc::Sender<Fed>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Feed {
    /// Hand `fed` to the recorder (dropped if the thread is gone).
    pub fn send(&self, fed: Fed) {
        let _ = self.tx.send(fed);
    }

    /// Stop: what came is written (one last frame), the lock released.
    pub fn finish(mut self) {
        let thread = self.thread.take();
        drop(self);
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// Who records the store, as the header says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recording {
    /// This console records, keeping this much.
    On(Retention),
    /// Another recorder holds the history directory (`pid N`).
    By(String),
    /// Not recorded: why (`--no-record`, `--demo`, the error).
    Off(String),
}

impl Recording {
    /// The header's words: `recording (7d, 256 MB)`, `recorded by pid
    /// 4242`, `not recording (--no-record)`.
    #[must_use]
    pub fn words(&self) -> String {
        match self {
            Self::On(retention) => format!(
                "recording ({}, {})",
                span_words(retention.retain_secs),
                bytes_words(retention.max_bytes).replace(".0 ", " ")
            ),
            Self::By(who) => format!("recorded by {who}"),
            Self::Off(why) => format!("not recording ({why})"),
        }
    }
}

/// Start recording into `dir_path` (created 0700) for `store`: the
/// history lock taken and the `history-recorder` thread started (it writes
/// a frame each second itself). Another recorder holding the lock, or any
/// error, is said in the returned [`Recording`] and no feed is made.
#[must_use]
pub fn start(dir_path: &Path, store: String, retention: Retention) -> (Option<Feed>, Recording) {
    let dir = match Dir::create(dir_path) {
        Ok(dir) => dir,
        Err(e) => return (None, Recording::Off(format!("cannot record: {e}"))),
    };
    let held = match dir.lock() {
        Ok(held) => held,
        Err(Ok(who)) => return (None, Recording::By(who)),
        Err(Err(e)) => return (None, Recording::Off(format!("cannot record: {e}"))),
    };
    let sink = match Sink::console(dir, store, retention) {
        Ok(sink) => sink,
        Err(e) => return (None, Recording::Off(format!("cannot record: {e}"))),
    };
    let (tx, rx) = std::sync::mpsc::channel::<Fed>();
    let thread = std::thread::Builder::new()
        .name("history-recorder".into())
        .spawn(move || {
            let _held = held;
            run(&mut Recorder::new(sink), &rx);
        });
    match thread {
        Ok(thread) => (
            Some(Feed {
                tx,
                thread: Some(thread),
            }),
            Recording::On(retention),
        ),
        Err(e) => (None, Recording::Off(format!("cannot record: {e}"))),
    }
}

/// The `history-recorder` thread's loop: each thing forwarded recorded as
/// it comes; each [`FLUSH_EVERY`] a heartbeat when nothing was said for
/// [`HEARTBEAT_SECS`] (a quiet store is still recorded: never a gap), then
/// a frame; the last frame when the feed closes.
fn run(recorder: &mut Recorder, rx: &std::sync::mpsc::Receiver<Fed>) {
    let mut said = Instant::now();
    let mut ticked = Instant::now();
    let quiet = Duration::from_secs(HEARTBEAT_SECS);
    loop {
        match rx.recv_timeout(FLUSH_EVERY.saturating_sub(ticked.elapsed())) {
            Ok(fed) => {
                if recorder.take(fed, unix_now()) > 0 {
                    said = Instant::now();
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if ticked.elapsed() < FLUSH_EVERY {
            continue;
        }
        if said.elapsed() >= quiet && recorder.heartbeat(unix_now()) {
            said = Instant::now();
        }
        recorder.tick(unix_now());
        ticked = Instant::now();
    }
    recorder.tick(unix_now());
}

/// The console's recorder: the protocol's lines made from what was
/// forwarded, handed one at a time to its [`Sink`] (a frame written once
/// [`super::record::FRAME_BYTES`] wait, or each tick), with the state
/// after them ([`Held`]: what the console holds, no copy of its rows) for
/// the next keyframe.
#[derive(Debug)]
pub struct Recorder {
    lines: Lines,
    sink: Sink,
}

impl Recorder {
    /// Recording into `sink` (a [`Sink::console`]).
    #[must_use]
    pub fn new(sink: Sink) -> Self {
        Self {
            lines: Lines::default(),
            sink,
        }
    }

    /// Take `fed` at `now` (unix seconds): its lines to the sink, then
    /// the state after them. How many lines it made.
    pub fn take(&mut self, fed: Fed, now: i64) -> usize {
        let mut made = 0;
        let sink = &mut self.sink;
        self.lines.take(fed, now, &mut |line| {
            made += 1;
            sink.take_line(line, now);
        });
        self.sink.settle(self.lines.held());
        made
    }

    /// A `heartbeat` at `now` (once the first group was written):
    /// whether one was made.
    pub fn heartbeat(&mut self, now: i64) -> bool {
        let mut made = false;
        let sink = &mut self.sink;
        self.lines.heartbeat(now, &mut |line| {
            made = true;
            sink.take_line(line, now);
        });
        self.sink.settle(self.lines.held());
        made
    }

    /// Write what waits as a frame ([`Sink::tick`]).
    pub fn tick(&mut self, now: i64) {
        self.sink.tick(now);
    }

    /// Its sink.
    #[must_use]
    pub fn sink(&self) -> &Sink {
        &self.sink
    }
}

/// What was forwarded, as the protocol's lines: the tables as last
/// written (for the deltas), the last group, the `hello`, who reaps and
/// the banners shown (the state a keyframe says).
#[derive(Debug, Default)]
pub struct Lines {
    tables: Tables,
    seq: u64,
    hello: Option<Arc<Hello>>,
    /// The last group written, its snapshot the newest one forwarded (a
    /// snapshot whose rows all equal the group's replaces it: the same
    /// rows, and the render loop's `Arc`, so no older one is kept).
    group: Option<Group>,
    reaper: Option<ReaperLine>,
    banners: Vec<Banner>,
}

impl Lines {
    /// A `heartbeat` (once the first group was written): the store was
    /// read and did not change.
    pub fn heartbeat(&self, now: i64, emit: &mut impl FnMut(String)) {
        if self.seq > 0 {
            emit(lines::heartbeat(now, self.seq));
        }
    }

    /// The state after the lines made so far: what a reader replaying
    /// them holds (a keyframe's source).
    #[must_use]
    pub fn held(&self) -> Held {
        Held {
            hello: self.hello.clone(),
            group: self.group.clone(),
            reaper: self.reaper.clone(),
            banners: self.banners.clone(),
        }
    }

    /// The lines `fed` makes (`now`: unix seconds), each handed to `emit`:
    /// a snapshot is a group of deltas (a `reset` for the first and for a
    /// store read anew, with its reason), as the agent's stream.
    pub fn take(&mut self, fed: Fed, now: i64, emit: &mut impl FnMut(String)) {
        match fed {
            Fed::Hello(hello) => {
                emit(lines::hello(&hello));
                self.reaper = Some(hello.reaper.clone());
                self.hello = Some(Arc::from(hello));
            }
            Fed::Snapshot(snapshot) => {
                let reset = self.seq == 0 || snapshot.reopened.is_some();
                if snapshot.reopened.is_some() {
                    self.tables = Tables::new();
                }
                let seq = self.seq + 1;
                if lines::stream_group(seq, reset, &mut self.tables, &snapshot, now, emit) {
                    self.seq = seq;
                    self.group = Some(Group {
                        snapshot,
                        seq,
                        at: now,
                    });
                } else if let Some(group) = &mut self.group {
                    group.snapshot = snapshot;
                }
            }
            Fed::Activity(activity) => {
                let detail = self.group.as_ref().map_or_else(
                    || activity.detail.clone(),
                    |g| g.snapshot.redactor.text(&activity.detail),
                );
                emit(lines::activity(&activity, &detail));
            }
            Fed::Reaper(line) => {
                emit(lines::reaper(&line));
                self.reaper = Some(line);
            }
            Fed::Banners(now_shown) => {
                for gone in self
                    .banners
                    .iter()
                    .filter(|b| !now_shown.iter().any(|n| n.id == b.id))
                {
                    emit(lines::banner_cleared(&gone.id));
                }
                for banner in &now_shown {
                    if !self.banners.contains(banner) {
                        emit(lines::banner(banner));
                    }
                }
                self.banners = now_shown;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_words_say_who_records() {
        let on = Recording::On(DEFAULT_RETENTION);
        assert_eq!(on.words(), "recording (7d, 256 MB)");
        assert_eq!(
            Recording::By("pid 4242".to_owned()).words(),
            "recorded by pid 4242"
        );
        assert_eq!(
            Recording::Off("--no-record".to_owned()).words(),
            "not recording (--no-record)"
        );
    }

    #[test]
    fn a_banner_is_said_when_it_appears_or_changes_and_cleared_when_gone() {
        let mut lines = Lines::default();
        let banner = |id: &str, text: &str| Banner {
            id: id.to_owned(),
            level: "warning".to_owned(),
            text: text.to_owned(),
        };
        let mut out = Vec::new();
        lines.take(Fed::Banners(vec![banner("clock", "a")]), 5, &mut |l| {
            out.push(l);
        });
        lines.take(
            Fed::Banners(vec![banner("clock", "a"), banner("audit", "b")]),
            6,
            &mut |l| out.push(l),
        );
        lines.take(Fed::Banners(vec![banner("audit", "b")]), 7, &mut |l| {
            out.push(l);
        });
        assert_eq!(
            out,
            vec![
                lines::banner(&banner("clock", "a")),
                lines::banner(&banner("audit", "b")),
                lines::banner_cleared("clock"),
            ]
        );
    }
}
