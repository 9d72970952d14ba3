//! The agent's stdout (`agent-stdout` thread): the loop hands it batches
//! of lines and never waits for the reader. A reader that stops reading
//! without closing (a stalled ssh connection, a paused `| less`) would
//! otherwise stop the loop in a `write`, and with it the signals, the
//! end of stdin and the role's release. Unsent bytes are counted: the
//! stream is given up as stalled when nothing was written for
//! [`STALL`] while bytes wait, or when more than [`MAX_PENDING`] wait.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Nothing written for this long while lines wait: the reader stalled.
pub(super) const STALL: Duration = Duration::from_secs(30);

/// More unsent bytes than this: the reader stalled (the first snapshot of
/// 100,000 instances is 38 MB).
pub(super) const MAX_PENDING: usize = 512 * 1024 * 1024;

/// Lines queued past this many bytes are handed to the writer thread at
/// once, not at the next [`Out::flush`]: a large group (the first
/// snapshot of 100,000 instances is 38 MB) is written while the rest of
/// it is still being built, and never held whole.
pub(super) const HAND_ON_BYTES: usize = 1 << 20;

/// Why the stream cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gone {
    /// A write failed: the reader closed stdout.
    Closed,
    /// The reader stopped reading ([`STALL`], [`MAX_PENDING`]).
    Stalled,
}

/// What the loop and the writer thread share.
#[derive(Debug)]
struct Shared {
    pending: AtomicUsize,
    broken: AtomicBool,
    /// Milliseconds since `epoch` of the last write that completed (or of
    /// the start).
    progress_ms: AtomicU64,
    epoch: Instant,
}

impl Shared {
    fn progressed(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.progress_ms.store(ms, Ordering::Relaxed);
    }

    fn since_progress(&self) -> Duration {
        let then = Duration::from_millis(self.progress_ms.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(then)
    }
}

/// The loop's end of stdout.
pub(super) struct Out {
    batch: Vec<u8>,
    tx: std::sync::mpsc::Sender<Vec<u8>>,
    shared: Arc<Shared>,
    /// When the loop last queued a line (the heartbeat's clock).
    pub(super) last_write: Instant,
    /// [`STALL`], shorter in tests.
    stall: Duration,
}

impl Out {
    /// Start the writer thread on this process's stdout.
    ///
    /// # Errors
    /// The thread could not be started.
    pub(super) fn stdout() -> std::io::Result<Self> {
        Self::spawn(std::io::stdout())
    }

    /// Start the writer thread on `writer`.
    ///
    /// # Errors
    /// The thread could not be started.
    pub(super) fn spawn(writer: impl std::io::Write + Send + 'static) -> std::io::Result<Self> {
        Self::spawn_with(writer, STALL)
    }

    /// [`Out::spawn`] with another stall time.
    fn spawn_with(
        writer: impl std::io::Write + Send + 'static,
        stall: Duration,
    ) -> std::io::Result<Self> {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let shared = Arc::new(Shared {
            pending: AtomicUsize::new(0),
            broken: AtomicBool::new(false),
            progress_ms: AtomicU64::new(0),
            epoch: Instant::now(),
        });
        let thread_shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("agent-stdout".into())
            .spawn(move || {
                let mut writer = writer;
                for chunk in rx {
                    let len = chunk.len();
                    if writer
                        .write_all(&chunk)
                        .and_then(|()| writer.flush())
                        .is_err()
                    {
                        thread_shared.broken.store(true, Ordering::Relaxed);
                        return;
                    }
                    thread_shared.pending.fetch_sub(len, Ordering::Relaxed);
                    thread_shared.progressed();
                }
            })?;
        Ok(Self {
            batch: Vec::new(),
            tx,
            shared,
            last_write: Instant::now(),
            stall,
        })
    }

    /// Queue one line (handed on at [`Out::flush`], or at once when the
    /// lines queued reach [`HAND_ON_BYTES`]).
    pub(super) fn send(&mut self, line: &str) {
        self.batch.extend_from_slice(line.as_bytes());
        self.batch.push(b'\n');
        self.last_write = Instant::now();
        if self.batch.len() >= HAND_ON_BYTES {
            let next =
                Vec::with_capacity(HAND_ON_BYTES + crate::model::protocol::MAX_MESSAGE_BYTES);
            let chunk = std::mem::replace(&mut self.batch, next);
            // A closed stream is said at the next `flush`.
            if !self.hand_on(chunk) {
                self.shared.broken.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Give `chunk` to the writer thread; whether it is still there.
    fn hand_on(&self, chunk: Vec<u8>) -> bool {
        if self
            .shared
            .pending
            .fetch_add(chunk.len(), Ordering::Relaxed)
            == 0
        {
            // Waiting starts now, not at the last write.
            self.shared.progressed();
        }
        self.tx.send(chunk).is_ok()
    }

    /// Hand the lines queued to the writer thread, waiting for none of it.
    ///
    /// # Errors
    /// The stream is gone: closed, or stalled.
    pub(super) fn flush(&mut self) -> Result<(), Gone> {
        if self.shared.broken.load(Ordering::Relaxed) {
            return Err(Gone::Closed);
        }
        if !self.batch.is_empty() {
            let chunk = std::mem::take(&mut self.batch);
            if !self.hand_on(chunk) {
                return Err(Gone::Closed);
            }
        }
        let pending = self.shared.pending.load(Ordering::Relaxed);
        if pending > MAX_PENDING || (pending > 0 && self.shared.since_progress() >= self.stall) {
            return Err(Gone::Stalled);
        }
        Ok(())
    }

    /// Wait at most `grace` for what is queued to be written (at the stop);
    /// whether it was.
    pub(super) fn drain(&mut self, grace: Duration) -> bool {
        if self.flush() == Err(Gone::Closed) {
            return false;
        }
        let deadline = Instant::now() + grace;
        while self.shared.pending.load(Ordering::Relaxed) > 0 {
            if self.shared.broken.load(Ordering::Relaxed) || Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that takes nothing until told to.
    struct Stuck(Arc<AtomicBool>, Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Stuck {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            while !self.0.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.1.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_reader_never_blocks_the_loop_and_the_lines_come_in_order() {
        let go = Arc::new(AtomicBool::new(false));
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut out = Out::spawn(Stuck(Arc::clone(&go), Arc::clone(&got))).expect("spawn");
        let started = Instant::now();
        for i in 0..1_000 {
            out.send(&format!("line {i}"));
            assert_eq!(out.flush(), Ok(()));
        }
        assert!(started.elapsed() < Duration::from_secs(2));
        go.store(true, Ordering::Relaxed);
        assert!(out.drain(Duration::from_secs(5)));
        let text = String::from_utf8(got.lock().expect("lock").clone()).expect("utf8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1_000);
        assert_eq!((lines[0], lines[999]), ("line 0", "line 999"));
    }

    /// A writer that records what it was given.
    struct Taken(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Taken {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_past_the_hand_on_size_are_written_before_the_flush() {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut out = Out::spawn(Taken(Arc::clone(&got))).expect("spawn");
        // 16 lines of 65,535 bytes and their newlines: 1,048,576 bytes,
        // exactly the hand-on size, and one more line held.
        let line = "x".repeat(65_535);
        for _ in 0..16 {
            out.send(&line);
        }
        out.send("held");
        let deadline = Instant::now() + Duration::from_secs(5);
        while got.lock().expect("lock").len() < HAND_ON_BYTES {
            assert!(
                Instant::now() < deadline,
                "nothing written before the flush"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(got.lock().expect("lock").len(), HAND_ON_BYTES);
        assert!(out.drain(Duration::from_secs(5)));
        assert_eq!(
            got.lock().expect("lock").len(),
            HAND_ON_BYTES + "held\n".len()
        );
        assert!(got.lock().expect("lock").ends_with(b"x\nheld\n"));
    }

    #[test]
    fn a_closed_reader_is_closed() {
        struct Closed;
        impl std::io::Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut out = Out::spawn(Closed).expect("spawn");
        out.send("x");
        let _ = out.flush();
        let deadline = Instant::now() + Duration::from_secs(5);
        while out.flush() != Err(Gone::Closed) {
            assert!(Instant::now() < deadline, "never closed");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn bytes_waiting_with_no_write_for_the_stall_time_are_a_stall() {
        let go = Arc::new(AtomicBool::new(false));
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut out = Out::spawn_with(
            Stuck(Arc::clone(&go), Arc::clone(&got)),
            Duration::from_millis(200),
        )
        .expect("spawn");
        out.send("x");
        assert_eq!(out.flush(), Ok(()));
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(out.flush(), Err(Gone::Stalled));
        // Written at last: not stalled any more.
        go.store(true, Ordering::Relaxed);
        assert!(out.drain(Duration::from_secs(5)));
        assert_eq!(out.flush(), Ok(()));
    }
}
