//! The follower thread (`logs-follower`, one per open logs view): it reads
//! what each service's log gains and sends it as `Event::Logs` lines.
//!
//! - Woken by file notifications on the logs directory (the `notify`
//!   crate: inotify on Linux) with a 1 s safety poll, or, when
//!   notifications cannot be set up, by polling every
//!   [`POLL_INTERVAL`]; which one is sent first ([`LogUpdate::Watching`]).
//!   The logs directory's parent is watched too, so a logs directory
//!   removed and made again (another inode: the old watch is dead) is
//!   watched again at once (`Watches::rearm`), not only at the next poll;
//!   while the parent itself is missing, the state dir is watched for it.
//! - Rotation (`web.log` renamed to `web.log.1`, a new `web.log`): seen as
//!   another file at the path. Files are tracked by `(st_dev, st_ino)`: the
//!   old file (still open) is read to its end, then every generation
//!   rotated since (found among `.log.1` .. `.log.3` by identity, opened at
//!   once so a later rotation cannot take it away) from its start, oldest
//!   first, then the new `web.log`, so a burst of rotations loses nothing
//!   still on disk. A line split across two generations (stackless 0.4.0
//!   rotates at exactly 1 MiB, mid-line) is joined with its own
//!   continuation only; when generations left the slots unseen, the cut
//!   line ends there and [`FollowNote::Gap`] says so.
//! - A last line without its `\n` (a crashed service's last words) is sent
//!   as [`LogUpdate::Partial`] once it has stayed the same for
//!   `PARTIAL_AFTER` (200 ms); its line replaces it when the `\n` comes.
//! - Truncation (the file shrank below what was read, or no longer holds
//!   the last 64 bytes read where they were: truncated and written again,
//!   even to the same size, between two looks): read again from 0, with a
//!   note.
//! - A `<service>.log` that appears later (a service started after the
//!   open) becomes a new tab, followed from its start. The directory is
//!   listed once as the follower starts, then again only when a name in
//!   it changed: a notification naming an entry made, removed or renamed
//!   there (or one that lost events), or, looked at on every wake, the
//!   directory's identity or its modification or change time differs
//!   from the one seen before the last listing (a logs
//!   directory of a million files listed every second costs 28 % of a
//!   CPU). Without notifications, a listing taken less than [`RESCAN`]
//!   after the directory's last change is taken again at the next wake
//!   (two changes within one tick of a coarse file-system clock leave the
//!   same time).
//! - The logs directory removed while followed (GC, by hand) is said
//!   ([`LogUpdate::DirGone`], looked at on every wake: at least every
//!   second), and again when it is back.
//! - Stops when its [`Handle`] is dropped (the view closed, or the render
//!   loop ended) or the event channel closed.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::FileExt as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use super::watches::Watches;
use super::{Follow, key_of, open_log};
use crate::event::{Event, EventSender};
use crate::model::logtext::Assembler;
use crate::model::logtext::{FileKey, LinePos, RawLine};
use crate::model::logview::{FollowNote, LogLine, LogUpdate, PARTIAL_AFTER, WatchMode};
use crate::model::text::sanitize;

/// How often the files are polled when notifications are unavailable.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The safety poll while notifications work.
pub const SAFETY_POLL: Duration = Duration::from_secs(1);
/// The most bytes read from one file per wake (then it goes on at once):
/// a burst never holds the thread or a message for long, and the path is
/// looked at again (new generations opened) at least every this many
/// bytes, far less than a rotation (1 MiB).
const READ_PER_WAKE: u64 = 128 << 10;

/// Stops the follower when dropped.
#[derive(Debug)]
pub struct Handle {
    stop: Arc<AtomicBool>,
    wake: mpsc::Sender<()>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.wake.send(());
    }
}

/// Start following `follows` (files in `dir`) for logs session `session`;
/// `known` are the names of every service found at open, in index order
/// (a `<service>.log` that appears later gets the next index and its own
/// [`LogUpdate::NewService`]). `notify` false: poll only (tests of the
/// fallback).
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn(
    session: u64,
    dir: PathBuf,
    known: Vec<String>,
    follows: Vec<Follow>,
    tx: EventSender,
    notify: bool,
) -> io::Result<Handle> {
    let options = Options {
        notify,
        safety_poll: SAFETY_POLL,
    };
    spawn_with(session, dir, known, follows, tx, options)
}

/// How a follower is woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Use file notifications (else poll every [`POLL_INTERVAL`]).
    pub notify: bool,
    /// The safety poll while notifications work ([`SAFETY_POLL`]; tests
    /// make it long to see that notifications alone keep up).
    pub safety_poll: Duration,
}

/// [`spawn`] with `options`.
///
/// # Errors
/// The thread could not be spawned.
pub fn spawn_with(
    session: u64,
    dir: PathBuf,
    known: Vec<String>,
    follows: Vec<Follow>,
    tx: EventSender,
    options: Options,
) -> io::Result<Handle> {
    let (wake, woken) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let handle = Handle {
        stop: Arc::clone(&stop),
        wake: wake.clone(),
    };
    std::thread::Builder::new()
        .name("logs-follower".into())
        .spawn(move || {
            // A name in the directory changed (set by notifications; the
            // first listing is due at start).
            let renamed = Arc::new(AtomicBool::new(true));
            let mut watcher = if options.notify {
                Watches::new(&dir, wake, Arc::clone(&renamed))
            } else {
                None
            };
            let (mode, interval) = if watcher.is_some() {
                (WatchMode::Notify, options.safety_poll)
            } else {
                (WatchMode::Poll(250), POLL_INTERVAL)
            };
            let mut tracked: Vec<Tracked> = follows.into_iter().map(Tracked::new).collect();
            let send = |update| tx.send(Event::Logs(update)).is_ok();
            if !send(LogUpdate::Watching { session, mode }) {
                return;
            }
            let mut known = known;
            // The directory as seen before the last listing (`None`: not
            // listed yet, or to be listed again).
            let mut listed: Option<DirStamp> = None;
            let mut gone = false;
            // Until when to poll at the fallback's pace after a directory
            // was made again: the notify crate drops the old watch's state
            // on its own thread, and may drop the new one's with it, so the
            // first writes into the new directory could wake nobody.
            let mut settle_until: Option<Instant> = None;
            while !stop.load(Ordering::Acquire) {
                if let Some(watches) = watcher.as_mut()
                    && watches.rearm()
                {
                    settle_until = Some(Instant::now() + REARM_SETTLE);
                }
                // The directory removed under the view (or back): said.
                let meta = std::fs::symlink_metadata(&dir);
                let missing = matches!(&meta, Err(e) if e.kind() == io::ErrorKind::NotFound);
                let stamp = meta.ok().as_ref().and_then(DirStamp::of);
                if missing != gone {
                    gone = missing;
                    if !send(LogUpdate::DirGone { session, gone }) {
                        return;
                    }
                }
                let names_changed = renamed.swap(false, Ordering::AcqRel);
                if let Some(stamp) = stamp
                    && (names_changed || listed != Some(stamp))
                {
                    // Kept only when a later change is sure to differ from
                    // it, or to be notified.
                    listed = (watcher.is_some() || stamp.settled()).then_some(stamp);
                    for (update, follow) in new_services(session, &dir, &mut known) {
                        if !send(update) {
                            return;
                        }
                        tracked.extend(follow.map(Tracked::new));
                    }
                }
                let Some((more, soon)) = poll_tracked(&mut tracked, session, &send) else {
                    return;
                };
                let mut wait = next_wait(more, soon, interval);
                if settle_until.is_some_and(|until| Instant::now() < until) {
                    wait = wait.min(POLL_INTERVAL);
                }
                if let Err(mpsc::RecvTimeoutError::Disconnected) = woken.recv_timeout(wait) {
                    return;
                }
                while woken.try_recv().is_ok() {}
            }
            drop(watcher);
        })?;
    Ok(handle)
}

/// Poll every tracked log once and send what it read: its lines and notes
/// ([`send_poll`]), then its partial last line once it has waited
/// [`PARTIAL_AFTER`]. `(more, soon)`: some log has more to read at once,
/// some partial line is still waiting. `None` when the channel closed.
fn poll_tracked(
    tracked: &mut [Tracked],
    session: u64,
    send: &impl Fn(LogUpdate) -> bool,
) -> Option<(bool, bool)> {
    let (mut more, mut soon) = (false, false);
    for t in tracked {
        let (lines, notes, rest) = t.poll();
        more |= rest;
        let service = t.follow.service;
        if !send_poll(send, session, service, &lines, notes) {
            return None;
        }
        let (partial, waits) = t.partial();
        soon |= waits;
        if let Some(line) = partial {
            let line = LogLine::from_raw(&line, service);
            if !send(LogUpdate::Partial {
                session,
                service,
                line,
            }) {
                return None;
            }
        }
    }
    Some((more, soon))
}

/// How long the follower waits for a wake-up before it polls again: not at
/// all when a log has more to read, at most a quarter of
/// [`PARTIAL_AFTER`] while a partial line waits, else `interval` (the
/// safety poll, or [`POLL_INTERVAL`] without notifications).
fn next_wait(more: bool, soon: bool, interval: Duration) -> Duration {
    if more {
        Duration::ZERO
    } else if soon {
        interval.min(PARTIAL_AFTER / 4)
    } else {
        interval
    }
}

/// Send one poll's lines and notes, each note where it happened among the
/// lines (a gap note sits exactly where lines are missing). False when the
/// channel closed.
fn send_poll(
    send: &impl Fn(LogUpdate) -> bool,
    session: u64,
    service: u16,
    lines: &[RawLine],
    notes: Vec<(usize, FollowNote)>,
) -> bool {
    let batch = |from: usize, to: usize| {
        let lines: Vec<LogLine> = lines[from..to]
            .iter()
            .map(|l| LogLine::from_raw(l, service))
            .collect();
        lines.is_empty()
            || send(LogUpdate::Lines {
                session,
                service,
                lines,
            })
    };
    let mut from = 0;
    for (at, note) in notes {
        let at = at.min(lines.len());
        if !batch(from, at) {
            return false;
        }
        from = at;
        if !send(LogUpdate::Note {
            session,
            service,
            note,
        }) {
            return false;
        }
    }
    batch(from, lines.len())
}

/// How long after its last change a directory's listing is taken as
/// settled when the follower polls (no notifications): a change within the
/// same tick of a coarse file-system clock can leave the same modification
/// time, so a listing of a directory changed this recently is taken again
/// at the next wake.
pub const RESCAN: Duration = Duration::from_secs(1);

/// What tells that a directory's names may have changed: its identity and
/// its modification and change times (seconds, nanoseconds), from one
/// `lstat`. Making, removing or renaming an entry sets both times; writing
/// to a file in it sets neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DirStamp {
    key: FileKey,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl DirStamp {
    /// The stamp of a directory's metadata (`None`: not a directory).
    fn of(meta: &std::fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        meta.is_dir().then(|| Self {
            key: key_of(meta),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// Whether the directory last changed at least [`RESCAN`] before now
    /// by the wall clock (a change after the listing then gives another
    /// time).
    fn settled(&self) -> bool {
        let last = self.modified.max(self.changed);
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        now.saturating_sub(last.0) > i64::try_from(RESCAN.as_secs()).unwrap_or(1)
    }
}

/// The `<service>.log` files in `dir` not in `known` (which they join):
/// for each, its [`LogUpdate::NewService`] (and a refusal note when it
/// cannot be opened) and, when it can, the file to follow from its start.
fn new_services(
    session: u64,
    dir: &std::path::Path,
    known: &mut Vec<String>,
) -> Vec<(LogUpdate, Option<Follow>)> {
    count_listing(dir);
    let Ok(names) = super::services(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for name in names {
        if known.contains(&name) || known.len() >= super::MAX_SERVICES {
            continue;
        }
        let Ok(service) = u16::try_from(known.len()) else {
            break;
        };
        known.push(name.clone());
        let base = dir.join(format!("{name}.log"));
        found.push((
            LogUpdate::NewService {
                session,
                service,
                name: sanitize(&name).into_owned(),
                base: base.clone(),
            },
            None,
        ));
        match open_log(&base).and_then(|file| Ok((key_of(&file.metadata()?), file))) {
            Ok((key, file)) => {
                if let Some(last) = found.last_mut() {
                    last.1 = Some(Follow {
                        service,
                        base,
                        file,
                        key,
                        offset: 0,
                        assembler: Assembler::default(),
                    });
                }
            }
            Err(e) => found.push((
                LogUpdate::Note {
                    session,
                    service,
                    note: FollowNote::Error(super::open_error(&e)),
                },
                None,
            )),
        }
    }
    found
}

/// How many times followers listed each directory (tests only: the
/// `fault-injection` feature).
#[cfg(feature = "fault-injection")]
static LISTINGS: std::sync::Mutex<Vec<(PathBuf, usize)>> = std::sync::Mutex::new(Vec::new());

/// Count one listing of `dir` by a follower (tests only; nothing without
/// the `fault-injection` feature).
#[cfg_attr(not(feature = "fault-injection"), expect(unused_variables))]
fn count_listing(dir: &std::path::Path) {
    #[cfg(feature = "fault-injection")]
    {
        let mut listings = LISTINGS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match listings.iter_mut().find(|(path, _)| path == dir) {
            Some((_, count)) => *count += 1,
            None => listings.push((dir.to_path_buf(), 1)),
        }
    }
}

/// How many times the followers of this process listed `dir` for new
/// `<service>.log` files (tests only: the `fault-injection` feature).
#[cfg(feature = "fault-injection")]
#[must_use]
pub fn listings(dir: &std::path::Path) -> usize {
    LISTINGS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .find(|(path, _)| path == dir)
        .map_or(0, |(_, count)| *count)
}

/// A followed file, the newer generations opened but not read yet, and
/// whether a replacement by a non-file was refused already (said once).
struct Tracked {
    follow: Follow,
    refused: bool,
    /// The unfinished line's (length, start) and since when it is so.
    pending: ((usize, LinePos), Instant),
    /// The last bytes read (at most [`PRINT`], ending at the offset): when
    /// the file no longer holds them there it was truncated and written
    /// again (even to the same size) between two looks.
    print: Vec<u8>,
    /// The unfinished line last sent as [`LogUpdate::Partial`].
    partial_sent: Option<(usize, LinePos)>,
    /// Newer generations (oldest first), held open from the moment they
    /// are seen, so a later rotation cannot take them away unread.
    queue: VecDeque<Next>,
}

/// A newer generation waiting to be read from its start.
struct Next {
    file: File,
    key: FileKey,
    /// Generations between the one read before and this one may have left
    /// `.log.1` .. `.log.3` before they were seen.
    gap: bool,
}

/// What identifies the unfinished line: its length and start.
fn pending_sig(assembler: &Assembler) -> (usize, LinePos) {
    let line = assembler.pending_line();
    line.map_or((0, LinePos::default()), |l| (l.bytes.len(), l.at))
}

/// When `file` was last written (`None`: unknown, sorts first).
fn modified(file: &File) -> Option<SystemTime> {
    file.metadata().and_then(|m| m.modified()).ok()
}

/// How many of the last bytes read are compared on each look (truncation
/// then a refill to the same size changes them).
const PRINT: usize = 64;

/// How long the follower also polls after it watched a directory made
/// again ([`Watches::rearm`]).
const REARM_SETTLE: Duration = Duration::from_secs(5);

/// The rotated slots looked at: `.log.1` .. `.log.3`.
const SLOTS: u32 = 3;

impl Tracked {
    fn new(follow: Follow) -> Self {
        // The unfinished line at open is on the screen already.
        let sig = pending_sig(&follow.assembler);
        let from = follow.offset.saturating_sub(PRINT as u64);
        let mut print = vec![0; usize::try_from(follow.offset - from).unwrap_or(0)];
        if follow.file.read_exact_at(&mut print, from).is_err() {
            print.clear();
        }
        Self {
            print,
            follow,
            refused: false,
            queue: VecDeque::new(),
            pending: (sig, Instant::now()),
            partial_sent: (sig.0 > 0).then_some(sig),
        }
    }

    /// When the newest known file was last written.
    fn newest_modified(&self) -> Option<SystemTime> {
        modified(
            self.queue
                .back()
                .map_or(&self.follow.file, |next| &next.file),
        )
    }

    /// The newest identity known: the last queued, or the file being read.
    fn newest(&self) -> FileKey {
        self.queue.back().map_or(self.follow.key, |next| next.key)
    }

    /// One wake: new complete lines, notes (each with the number of lines
    /// before it), and whether more bytes wait.
    fn poll(&mut self) -> (Vec<RawLine>, Vec<(usize, FollowNote)>, bool) {
        let mut lines = Vec::new();
        let mut notes = Vec::new();
        // What is at the path is looked at first: once another file is
        // there, the writer has left the old one, which is read to its end
        // before the newer generations are read in order.
        match std::fs::symlink_metadata(&self.follow.base) {
            Ok(meta) if !meta.is_file() => self.refuse(lines.len(), &mut notes),
            Ok(meta) if key_of(&meta) != self.newest() => {
                self.refused = false;
                self.discover();
            }
            Ok(_) => self.refused = false,
            Err(_) => {}
        }
        let mut more;
        loop {
            more = match self.drain(&mut lines, &mut notes) {
                Ok(more) => more,
                Err(e) => {
                    notes.push((lines.len(), FollowNote::Error(e.to_string())));
                    false
                }
            };
            if more {
                break;
            }
            let Some(next) = self.queue.pop_front() else {
                break;
            };
            if next.gap {
                // The line cut at the rotation continues in a generation
                // that is gone: it ends here, never glued to another.
                self.follow.assembler.flush(&mut lines);
                notes.push((lines.len(), FollowNote::Gap));
            } else {
                notes.push((lines.len(), FollowNote::Rotated));
            }
            self.follow.file = next.file;
            self.follow.key = next.key;
            self.follow.offset = 0;
            self.print.clear();
        }
        (lines, notes, more)
    }

    /// The unfinished last line, once it has stayed the same for
    /// [`PARTIAL_AFTER`] and was not sent as it is; and whether one waits
    /// to become stable (the follower then wakes sooner).
    fn partial(&mut self) -> (Option<RawLine>, bool) {
        let sig = pending_sig(&self.follow.assembler);
        if sig != self.pending.0 {
            self.pending = (sig, Instant::now());
        }
        if sig.0 == 0 || self.partial_sent == Some(sig) {
            return (None, false);
        }
        if self.pending.1.elapsed() < PARTIAL_AFTER {
            return (None, true);
        }
        self.partial_sent = Some(sig);
        (self.follow.assembler.pending_line(), false)
    }

    /// The path holds a file not known yet: open every generation newer
    /// than the newest known, from `.log` down to `.log.3` (a rotation only
    /// moves files to higher slots, so scanning upwards never misses one;
    /// the scan is taken again when `.log` changed during it), and queue
    /// them oldest first.
    fn discover(&mut self) {
        let base = self.follow.base.clone();
        let at_base = || std::fs::symlink_metadata(&base).ok().map(|m| key_of(&m));
        let mut found: Vec<(u32, FileKey, File)> = Vec::new();
        for _ in 0..4 {
            found.clear();
            let before = at_base();
            for index in 0..=SLOTS {
                let Ok(file) = open_log(&super::generation(&base, index)) else {
                    continue;
                };
                let Ok(meta) = file.metadata() else { continue };
                let key = key_of(&meta);
                if !found.iter().any(|(_, k, _)| *k == key) {
                    found.push((index, key, file));
                }
            }
            if before.is_some() && before == at_base() {
                break;
            }
        }
        // `found` is newest first; what is newer than the newest known.
        let newest = self.newest();
        let known = found.iter().position(|(_, key, _)| *key == newest);
        let fresh: Vec<(u32, FileKey, File)> = match known {
            Some(at) => found.drain(..at).collect(),
            // The newest known is in no slot (deleted, or rotated past
            // `.log.3`): newer generations were last written no earlier
            // than it (an older `.log.1` left by a `rm web.log` is not).
            // Identities cannot tell: a freed inode number is reused.
            None => {
                let since = self.newest_modified();
                found
                    .drain(..)
                    .filter(|(_, _, file)| modified(file) >= since)
                    .collect()
            }
        };
        // The newest known left every slot before its successors were seen:
        // when the oldest of them was rotated already, some between may be
        // gone.
        let mut gap = known.is_none() && fresh.last().is_some_and(|(index, ..)| *index > 0);
        for (_, key, file) in fresh.into_iter().rev() {
            self.queue.push_back(Next { file, key, gap });
            gap = false;
        }
    }

    /// Whether the file still holds the last bytes read where they were.
    fn print_holds(&self) -> io::Result<bool> {
        let Some(from) = self.follow.offset.checked_sub(self.print.len() as u64) else {
            return Ok(false);
        };
        let mut now = vec![0; self.print.len()];
        match self.follow.file.read_exact_at(&mut now, from) {
            Ok(()) => Ok(now == self.print),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn refuse(&mut self, at: usize, notes: &mut Vec<(usize, FollowNote)>) {
        if !self.refused {
            self.refused = true;
            notes.push((at, FollowNote::Refused));
        }
    }

    /// Read the open file from the offset to its end (at most
    /// [`READ_PER_WAKE`]); a file shorter than the offset was truncated:
    /// from 0 again. `Ok(true)` when bytes remain.
    fn drain(
        &mut self,
        lines: &mut Vec<RawLine>,
        notes: &mut Vec<(usize, FollowNote)>,
    ) -> io::Result<bool> {
        let len = self.follow.file.metadata()?.len();
        if len < self.follow.offset || !self.print_holds()? {
            self.follow.assembler.flush(lines);
            self.follow.offset = 0;
            self.print.clear();
            notes.push((lines.len(), FollowNote::Truncated));
        }
        let follow = &mut self.follow;
        if len == follow.offset {
            return Ok(false);
        }
        follow.file.seek(SeekFrom::Start(follow.offset))?;
        let want = (len - follow.offset).min(READ_PER_WAKE);
        let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
        (&follow.file).take(want).read_to_end(&mut bytes)?;
        let at = LinePos {
            file: follow.key,
            offset: follow.offset,
        };
        follow.assembler.push(&bytes, at, lines);
        follow.offset += bytes.len() as u64;
        self.print
            .extend_from_slice(&bytes[bytes.len().saturating_sub(PRINT)..]);
        let excess = self.print.len().saturating_sub(PRINT);
        self.print.drain(..excess);
        Ok(follow.offset < len)
    }
}
