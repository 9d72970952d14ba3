//! `stackless-tui record`: the store's protocol stream (the agent's
//! `snapshot --follow` pipeline: read-only, no reaper, no helper) kept in
//! the history directory (docs/history.md). The agent's stdout thread
//! writes into a [`Sink`]; a ticker thread turns what came each second
//! into one zstd frame, starts a segment with a keyframe when one is full,
//! and applies the retention.

use std::io;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::files::{Dir, Frame, Writing};
use super::keyframe::Held;
use crate::model::history::replay::Replay;
use crate::model::history::{
    Header, SEGMENT_BYTES, Segment, segment_full, segment_name, span_words, stamp, to_drop,
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

/// At most this many bytes of lines wait for their frame: one more line
/// and what waits is written as a frame first, even mid-group (a segment
/// still starts only between groups), so a frame's text is never held
/// whole (the first group of 100,000 instances is 38 MB of rows).
pub const FRAME_BYTES: usize = 1 << 20;

/// Where a new segment's keyframe comes from (docs/history.md,
/// "Segments").
enum Keys {
    /// `record`: every line read into the tables a reader holds.
    Replay(Box<Replay>),
    /// The console: its own state, handed by [`Sink::settle`] after the
    /// lines of each thing it recorded (never a copy of its rows).
    Held {
        /// As of the end of the lines written (or dropped by a failed
        /// write); `None`: they end mid-group.
        before: Option<Box<Held>>,
        /// As of the end of every line taken; `None`: a line came since
        /// the last [`Sink::settle`].
        after: Option<Box<Held>>,
    },
}

impl Keys {
    /// No group is half written: a segment may start here.
    fn between_groups(&self) -> bool {
        match self {
            Self::Replay(replay) => replay.between_groups(),
            Self::Held { before, .. } => before.is_some(),
        }
    }

    /// The lines taken are all written (or dropped): what held after
    /// them holds before the next frame.
    fn written(&mut self) {
        if let Self::Held { before, after } = self {
            before.clone_from(after);
        }
    }
}

/// The recording's writer: the lines received, stamped, waiting for the
/// next frame; the segment being written; where the next keyframe comes
/// from.
pub struct Sink {
    dir: Dir,
    store: String,
    host: Option<String>,
    retention: Retention,
    /// Whole lines, each with the time it came, not yet on disk.
    waiting: Vec<(i64, String)>,
    /// The bytes of `waiting`'s lines (their newlines counted).
    waiting_bytes: usize,
    /// At most this many bytes wait ([`FRAME_BYTES`]).
    frame_bytes: usize,
    /// A segment this large on disk is full ([`SEGMENT_BYTES`], as
    /// [`segment_full`] says; smaller in the tests).
    segment_bytes: u64,
    /// A line's start not yet ended by its newline.
    partial: Vec<u8>,
    writing: Option<Writing>,
    /// The bytes of the open segment up to the end of its first whole
    /// group (its header and keyframe, or the first group of a recording
    /// that starts with none): not counted toward [`segment_full`].
    keyframe_bytes: u64,
    /// The open segment's first whole group is not written yet.
    keyframe_pending: bool,
    /// When the segment being written started and its first and last time.
    span: (i64, i64, i64),
    /// The segments closed, oldest first.
    closed: Vec<Segment>,
    next_seq: u64,
    keys: Keys,
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
    /// ones already there), each line read into the tables its keyframes
    /// are made from: `record`'s.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn new(
        dir: Dir,
        store: String,
        host: Option<String>,
        retention: Retention,
    ) -> io::Result<Self> {
        Self::open(dir, store, host, retention, Keys::Replay(Box::default()))
    }

    /// The console's sink: no line is read back; a keyframe is made from
    /// the state the console hands over ([`Sink::settle`]).
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn console(dir: Dir, store: String, retention: Retention) -> io::Result<Self> {
        let nothing = Some(Box::default());
        Self::open(
            dir,
            store,
            None,
            retention,
            Keys::Held {
                before: nothing.clone(),
                after: nothing,
            },
        )
    }

    fn open(
        dir: Dir,
        store: String,
        host: Option<String>,
        retention: Retention,
        keys: Keys,
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
            waiting_bytes: 0,
            frame_bytes: FRAME_BYTES,
            segment_bytes: SEGMENT_BYTES,
            partial: Vec::new(),
            writing: None,
            keyframe_bytes: 0,
            keyframe_pending: false,
            span: (0, 0, 0),
            closed,
            next_seq,
            keys,
            paused: None,
            teardowns: RecordedTeardowns::default(),
            services: None,
        })
    }

    /// The same sink with frames of at most `frame_bytes` of lines and
    /// segments full at `segment_bytes` (the tests' small bounds).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn bounded(mut self, frame_bytes: usize, segment_bytes: u64) -> Self {
        self.frame_bytes = frame_bytes;
        self.segment_bytes = segment_bytes;
        self
    }

    /// Record each instance's services too, read by `read` when its row
    /// changed and at every keyframe, a `services` line written when
    /// they differ from the ones recorded (docs/history.md, "Services").
    #[must_use]
    pub fn with_services(mut self, read: ReadServices) -> Self {
        self.keys = Keys::Replay(Box::new(Replay::recording()));
        self.services = Some(read);
        self
    }

    /// The `down` operations seen finishing while recorded.
    #[must_use]
    pub fn teardowns(&self) -> &RecordedTeardowns {
        &self.teardowns
    }

    /// The rows this sink holds for its keyframes (instances, operations
    /// and backoffs): `record`'s tables; none for the console's.
    #[must_use]
    pub fn rows_held(&self) -> usize {
        match &self.keys {
            Keys::Replay(replay) => {
                replay.instances.len() + replay.operations.len() + replay.backoffs.len()
            }
            Keys::Held { .. } => 0,
        }
    }

    /// Take bytes of the stream (whole lines, or a line's start): each
    /// whole line as [`Sink::take_line`].
    pub fn take(&mut self, bytes: &[u8], now: i64) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let line = &rest[..end];
            rest = &rest[end + 1..];
            if self.partial.is_empty() {
                self.take_bytes(line, now);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.take_bytes(&whole, now);
            }
        }
        self.partial.extend_from_slice(rest);
    }

    /// One whole line's bytes (an empty one, or one not UTF-8, skipped).
    fn take_bytes(&mut self, line: &[u8], now: i64) {
        if line.is_empty() {
            return;
        }
        if let Ok(text) = std::str::from_utf8(line) {
            self.take_line(text.to_owned(), now);
        }
    }

    /// Take one whole line (no newline) that came at `now`: it waits for
    /// the next frame; what waits is written first when this line would
    /// take it past the frame's bound ([`FRAME_BYTES`]).
    pub fn take_line(&mut self, line: String, now: i64) {
        if !self.waiting.is_empty() && self.waiting_bytes + line.len() + 1 > self.frame_bytes {
            self.flush(now);
        }
        if let Keys::Held { after, .. } = &mut self.keys {
            *after = None;
        }
        self.waiting_bytes += line.len() + 1;
        self.waiting.push((now, line));
    }

    /// The console's state after every line taken so far (which end a
    /// group, if any): a keyframe written before the lines that follow
    /// is made from it. `record`'s sink ignores it (its lines are read).
    pub fn settle(&mut self, held: Held) {
        if let Keys::Held { after, .. } = &mut self.keys {
            *after = Some(Box::new(held));
        }
    }

    /// Write what waits as one frame (a new segment first, with its
    /// keyframe, when none is open or the open one is full and no group
    /// is half written), then apply the retention. A failed write pauses
    /// the recording (its lines still update the tables, so the keyframe
    /// of the next segment is whole) until a write succeeds.
    pub fn tick(&mut self, now: i64) {
        if self.waiting.is_empty() {
            self.keys.written();
            return;
        }
        self.flush(now);
    }

    fn flush(&mut self, now: i64) {
        let waiting = std::mem::take(&mut self.waiting);
        self.waiting_bytes = 0;
        let full = self.writing.as_ref().is_some_and(|w| {
            let lines = w.bytes.saturating_sub(self.keyframe_bytes);
            segment_full(self.span.0, lines, now) || lines >= self.segment_bytes
        });
        let new_segment = (self.writing.is_none() || full) && self.keys.between_groups();
        // The keyframe is stamped with the first line's time: a segment's
        // lines never go back in time.
        let first = waiting.first().map_or(now, |(t, _)| *t);
        let last = waiting.last().map_or(now, |(t, _)| *t);
        let mut started = Ok(());
        if new_segment {
            self.close();
            let name = segment_name(now, self.next_seq);
            self.next_seq += 1;
            started = Writing::start(&self.dir, name).map(|w| self.writing = Some(w));
        }
        let mut writing = self.writing.take();
        let result = match (started, writing.as_mut()) {
            (Ok(()), Some(writing)) => {
                writing.frame(|frame| self.fill(frame, new_segment, waiting, now))
            }
            (started, _) => {
                let error = started
                    .err()
                    .unwrap_or_else(|| io::Error::other("no segment open"));
                let mut frame = Frame::failed(error);
                self.fill(&mut frame, new_segment, waiting, now);
                frame.finish().map(|_| ())
            }
        };
        self.writing = writing;
        match result {
            Ok(()) => {
                if new_segment {
                    self.span = (now, first, last);
                    self.keyframe_pending = true;
                }
                self.span.2 = last;
                if self.paused.take().is_some() {
                    eprintln!("stackless-tui: record: resumed: writes succeed again");
                }
                self.write_index();
            }
            Err(error) => self.pause(now, &error),
        }
        self.keys.written();
        if self.keyframe_pending && self.keys.between_groups() {
            self.keyframe_bytes = self.writing.as_ref().map_or(0, |w| w.bytes);
            self.keyframe_pending = false;
        }
    }

    /// The frame's lines, each handed to `frame` as it is made: the
    /// header and keyframe of a new segment, the lines that waited
    /// (`record` reads each into its tables), the `services` lines.
    fn fill(
        &mut self,
        frame: &mut Frame<'_>,
        new_segment: bool,
        waiting: Vec<(i64, String)>,
        now: i64,
    ) {
        let first = waiting.first().map_or(now, |(t, _)| *t);
        let last = waiting.last().map_or(now, |(t, _)| *t);
        if new_segment {
            self.push_keyframe(frame, now, first);
            if let Keys::Replay(replay) = &mut self.keys {
                replay.mark_all_changed();
            }
        }
        for (t, line) in waiting {
            frame.line(&stamp(&line, t, self.host.as_deref()));
            if let Keys::Replay(replay) = &mut self.keys
                && let Ok(message) = read(line.as_bytes())
            {
                self.teardowns.see(&message);
                replay.apply(t, message);
            }
        }
        for line in self.services_lines() {
            frame.line(&stamp(&line, last, self.host.as_deref()));
            if let Keys::Replay(replay) = &mut self.keys
                && let Ok(message) = read(line.as_bytes())
            {
                replay.apply(last, message);
            }
        }
    }

    /// The `services` lines of the instance rows changed since the last
    /// frame whose services read now differ from the ones recorded.
    fn services_lines(&mut self) -> Vec<String> {
        let (Some(read), Keys::Replay(replay)) = (self.services.as_mut(), &mut self.keys) else {
            return Vec::new();
        };
        let changed = replay.take_changed();
        let (keys, instances): (Vec<_>, Vec<_>) = changed
            .into_iter()
            .filter_map(|key| Some((key.clone(), replay.instance(&key)?)))
            .unzip();
        if instances.is_empty() {
            return Vec::new();
        }
        let Some(read) = read(&instances) else {
            return Vec::new();
        };
        keys.iter()
            .zip(read)
            .filter_map(|(key, services)| replay.services_line(key, services))
            .collect()
    }

    fn push_keyframe(&self, frame: &mut Frame<'_>, now: i64, at: i64) {
        let header = Header::new(
            &self.store,
            now,
            self.retention.retain_secs,
            self.retention.max_bytes,
        );
        frame.line(&serde_json::to_string(&header).unwrap_or_default());
        let host = self.host.as_deref();
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
            frame.line(&stamp(&line, at, host));
        }
        let mut emit = |line: String| frame.line(&stamp(&line, at, host));
        match &self.keys {
            Keys::Replay(replay) => replay.keyframe_with(&mut emit),
            Keys::Held { before, .. } => {
                if let Some(held) = before {
                    held.lines(&mut emit);
                }
            }
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
