//! `stackless-tui record`: the store's protocol stream (the agent's
//! `snapshot --follow` pipeline: read-only, no reaper, no helper) kept in
//! the history directory (docs/history.md). The agent's stdout thread
//! writes into a [`Sink`]; a ticker thread turns what came each second
//! into one zstd frame, starts a segment with a keyframe when one is full,
//! and applies the retention.

use std::io;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::files::{Dir, Writing};
use crate::model::history::replay::Replay;
use crate::model::history::{
    Header, Segment, segment_full, segment_name, span_words, stamp, to_drop,
};
use crate::model::protocol::lines::{Banner, Message, read};
use crate::model::recorded_teardowns::RecordedTeardowns;
use crate::model::time::unix_now;

/// How long a line waits at most before it is on disk (a `kill -9` loses
/// at most this).
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// What is kept: `--retain` (seconds) and `--max-size` (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// The oldest line kept is this many seconds old.
    pub retain_secs: i64,
    /// The segments together are at most this many bytes.
    pub max_bytes: u64,
}

impl Retention {
    /// The words the recorder and `history` say it in.
    #[must_use]
    pub fn words(self) -> String {
        format!(
            "keeps {} and at most {} (the oldest segment dropped first)",
            span_words(self.retain_secs),
            bytes_words(self.max_bytes)
        )
    }
}

/// A size in the words `history` says it (`256.0 MB`, `12.3 kB`).
#[must_use]
pub fn bytes_words(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let value = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", value / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", value / 1e6),
        _ => format!("{:.1} GB", value / 1e9),
    }
}

/// Reads instances' services as `snapshot --json` reports them (for each,
/// the report's service objects; `None`: the read failed, nothing is
/// recorded for them): the recorder's own read of the store.
pub type ReadServices =
    Box<dyn FnMut(&[crate::model::Instance]) -> Option<Vec<Vec<serde_json::Value>>> + Send>;

/// The recording's writer: the lines received, stamped, waiting for the
/// next frame; the segment being written; the tables as recorded so far
/// (for the next keyframe).
pub struct Sink {
    dir: Dir,
    store: String,
    host: Option<String>,
    retention: Retention,
    /// Whole lines stamped, not yet on disk, each with its message.
    waiting: Vec<(i64, String)>,
    /// A line's start not yet ended by its newline.
    partial: Vec<u8>,
    writing: Option<Writing>,
    /// When the segment being written started and its first and last time.
    span: (i64, i64, i64),
    /// The segments closed, oldest first.
    closed: Vec<Segment>,
    next_seq: u64,
    replay: Replay,
    /// Recording paused since (unix seconds) and why: a write failed.
    paused: Option<(i64, String)>,
    /// The teardowns seen finishing (`record --metrics-file`).
    teardowns: RecordedTeardowns,
    /// The services' read (`None`: no `services` lines recorded).
    services: Option<ReadServices>,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("dir", &self.dir)
            .field("store", &self.store)
            .field("host", &self.host)
            .field("waiting", &self.waiting.len())
            .field("span", &self.span)
            .field("closed", &self.closed)
            .field("paused", &self.paused)
            .field("services", &self.services.is_some())
            .finish_non_exhaustive()
    }
}

impl Sink {
    /// A sink writing into `dir` for `store` (its segments continue the
    /// ones already there).
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn new(
        dir: Dir,
        store: String,
        host: Option<String>,
        retention: Retention,
    ) -> io::Result<Self> {
        let closed = dir.segments()?;
        let next_seq = closed
            .iter()
            .filter_map(|s| crate::model::history::segment_seq(&s.file))
            .map(|(_, seq)| seq + 1)
            .max()
            .unwrap_or(1);
        Ok(Self {
            dir,
            store,
            host,
            retention,
            waiting: Vec::new(),
            partial: Vec::new(),
            writing: None,
            span: (0, 0, 0),
            closed,
            next_seq,
            replay: Replay::new(),
            paused: None,
            teardowns: RecordedTeardowns::default(),
            services: None,
        })
    }

    /// Record each instance's services too, read by `read` when its row
    /// changed and at every keyframe, a `services` line written when
    /// they differ from the ones recorded (docs/history.md, "Services").
    #[must_use]
    pub fn with_services(mut self, read: ReadServices) -> Self {
        self.replay = Replay::recording();
        self.services = Some(read);
        self
    }

    /// The `down` operations seen finishing while recorded.
    #[must_use]
    pub fn teardowns(&self) -> &RecordedTeardowns {
        &self.teardowns
    }

    /// Take bytes of the stream (whole lines, or a line's start).
    pub fn take(&mut self, bytes: &[u8], now: i64) {
        self.partial.extend_from_slice(bytes);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return;
        };
        let rest = self.partial.split_off(end + 1);
        let whole = std::mem::replace(&mut self.partial, rest);
        for line in whole.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            if let Ok(text) = std::str::from_utf8(line) {
                self.waiting.push((now, text.to_owned()));
            }
        }
    }

    /// Write what waits as one frame (a new segment first, with its
    /// keyframe, when none is open or the open one is full and no group
    /// is half written), then apply the retention. A failed write pauses
    /// the recording (its lines still update the tables, so the keyframe
    /// of the next segment is whole) until a write succeeds.
    pub fn tick(&mut self, now: i64) {
        if self.waiting.is_empty() {
            return;
        }
        let waiting = std::mem::take(&mut self.waiting);
        let mut text = String::new();
        let full = self
            .writing
            .as_ref()
            .is_some_and(|w| segment_full(self.span.0, w.bytes, now));
        let new_segment = (self.writing.is_none() || full) && self.replay.between_groups();
        // The keyframe is stamped with the first line's time: a segment's
        // lines never go back in time.
        let first = waiting.first().map_or(now, |(t, _)| *t);
        if new_segment {
            self.close();
            self.push_keyframe(&mut text, now, first);
            self.replay.mark_all_changed();
        }
        for (t, line) in &waiting {
            text.push_str(&stamp(line, *t, self.host.as_deref()));
            text.push('\n');
        }
        let last = waiting.last().map_or(now, |(t, _)| *t);
        for (t, line) in waiting {
            if let Ok(message) = read(line.as_bytes()) {
                self.teardowns.see(&message);
                self.replay.apply(t, message);
            }
        }
        for line in self.services_lines() {
            text.push_str(&stamp(&line, last, self.host.as_deref()));
            text.push('\n');
            if let Ok(message) = read(line.as_bytes()) {
                self.replay.apply(last, message);
            }
        }
        match self.write(new_segment, &text, now) {
            Ok(()) => {
                if new_segment {
                    self.span = (now, first, last);
                }
                self.span.2 = last;
                if self.paused.take().is_some() {
                    eprintln!("stackless-tui: record: resumed: writes succeed again");
                }
                self.write_index();
            }
            Err(error) => self.pause(now, &error),
        }
    }

    /// The `services` lines of the instance rows changed since the last
    /// frame whose services read now differ from the ones recorded.
    fn services_lines(&mut self) -> Vec<String> {
        let changed = self.replay.take_changed();
        let Some(read) = self.services.as_mut() else {
            return Vec::new();
        };
        let (keys, instances): (Vec<_>, Vec<_>) = changed
            .into_iter()
            .filter_map(|key| Some((key.clone(), self.replay.instance(&key)?)))
            .unzip();
        if instances.is_empty() {
            return Vec::new();
        }
        let Some(read) = read(&instances) else {
            return Vec::new();
        };
        keys.iter()
            .zip(read)
            .filter_map(|(key, services)| self.replay.services_line(key, services))
            .collect()
    }

    fn push_keyframe(&mut self, text: &mut String, now: i64, at: i64) {
        let header = Header::new(
            &self.store,
            now,
            self.retention.retain_secs,
            self.retention.max_bytes,
        );
        text.push_str(&serde_json::to_string(&header).unwrap_or_default());
        text.push('\n');
        if let Some((since, why)) = &self.paused {
            let resumed = Banner {
                id: "recording".to_owned(),
                level: "warning".to_owned(),
                text: format!(
                    "recording paused {} ({why}); resumed: nothing recorded in between",
                    span_words(now - *since)
                ),
            };
            let line = serde_json::to_string(&Message::Banner(resumed)).unwrap_or_default();
            text.push_str(&stamp(&line, at, self.host.as_deref()));
            text.push('\n');
        }
        for line in self.replay.keyframe() {
            text.push_str(&stamp(&line, at, self.host.as_deref()));
            text.push('\n');
        }
    }

    fn write(&mut self, new_segment: bool, text: &str, now: i64) -> io::Result<()> {
        if new_segment {
            let name = segment_name(now, self.next_seq);
            self.next_seq += 1;
            self.writing = Some(Writing::start(&self.dir, name)?);
        }
        match self.writing.as_mut() {
            Some(writing) => writing.frame(text.as_bytes()),
            None => Err(io::Error::other("no segment open")),
        }
    }

    fn pause(&mut self, now: i64, error: &io::Error) {
        if self.paused.is_none() {
            eprintln!(
                "stackless-tui: record: paused: cannot write the recording ({error}); resumes when writes succeed"
            );
            self.paused = Some((now, error.to_string()));
        }
        // The next write starts a new segment, with a keyframe.
        self.close();
    }

    /// The segment being written is done: it joins the closed ones (one
    /// with no frame on disk is removed).
    fn close(&mut self) {
        let Some(writing) = self.writing.take() else {
            return;
        };
        if writing.bytes == 0 {
            let _ = self.dir.remove(&writing.name);
        } else {
            self.closed.push(Segment {
                file: writing.name,
                first: self.span.1,
                last: self.span.2,
                bytes: writing.bytes,
            });
        }
    }

    /// Every segment, the one being written last.
    fn segments(&self) -> Vec<Segment> {
        let mut all = self.closed.clone();
        if let Some(writing) = &self.writing {
            all.push(Segment {
                file: writing.name.clone(),
                first: self.span.1,
                last: self.span.2,
                bytes: writing.bytes,
            });
        }
        all
    }

    /// Drop what retention drops (oldest first), then write the index.
    fn write_index(&mut self) {
        let all = self.segments();
        let drop = to_drop(
            &all,
            self.span.2,
            self.retention.retain_secs,
            self.retention.max_bytes,
        )
        .min(self.closed.len());
        for gone in self.closed.drain(..drop) {
            if let Err(error) = self.dir.remove(&gone.file) {
                eprintln!(
                    "stackless-tui: record: cannot remove {}: {error}",
                    gone.file
                );
            }
        }
        if let Err(error) = self.dir.write_index(&self.segments()) {
            eprintln!("stackless-tui: record: cannot write the index: {error}");
        }
    }
}

/// The agent's stdout as the recorder's: each chunk handed to the
/// [`Sink`].
#[derive(Debug, Clone)]
pub struct Shared(pub Arc<Mutex<Sink>>);

impl io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Ok(mut sink) = self.0.lock() {
            sink.take(buf, unix_now());
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Start the ticker thread: a frame each [`FLUSH_EVERY`], until the sink
/// is dropped.
///
/// # Errors
/// The thread could not be started.
pub fn start_ticker(sink: &Arc<Mutex<Sink>>) -> io::Result<()> {
    let weak: Weak<Mutex<Sink>> = Arc::downgrade(sink);
    std::thread::Builder::new()
        .name("history-ticker".into())
        .spawn(move || {
            loop {
                std::thread::sleep(FLUSH_EVERY);
                let Some(sink) = weak.upgrade() else { return };
                if let Ok(mut sink) = sink.lock() {
                    sink.tick(unix_now());
                }
            }
        })?;
    Ok(())
}
