//! The follower thread (`logs-follower`, one per open logs view): it reads
//! what each service's log gains and sends it as `Event::Logs` lines.
//!
//! - Woken by file notifications on the logs directory (the `notify`
//!   crate: inotify on Linux) with a 1 s safety poll, or, when
//!   notifications cannot be set up, by polling every
//!   [`POLL_INTERVAL`]; which one is sent first ([`LogUpdate::Watching`]).
//! - Rotation (`web.log` renamed to `web.log.1`, a new `web.log`): seen as
//!   another file at the path; the old file (still open) is read to its end
//!   *before* switching, so nothing written in between is lost. A line
//!   split across the two files (stackless 0.4.0 rotates at exactly 1 MiB,
//!   mid-line) is joined.
//! - Truncation (the file shrank below what was read): read again from 0,
//!   with a note.
//! - A `<service>.log` that appears later (a service started after the
//!   open) becomes a new tab, followed from its start (the directory is
//!   listed again every [`RESCAN`]).
//! - Stops when its [`Handle`] is dropped (the view closed, or the render
//!   loop ended) or the event channel closed.

use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Follow, key_of, open_log};
use crate::event::{Event, EventSender};
use crate::model::logtext::Assembler;
use crate::model::logtext::{LinePos, RawLine};
use crate::model::logview::{FollowNote, LogLine, LogUpdate, WatchMode};
use crate::model::text::sanitize;

/// How often the files are polled when notifications are unavailable.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The safety poll while notifications work.
pub const SAFETY_POLL: Duration = Duration::from_secs(1);
/// The most bytes read from one file per wake (then it goes on at once):
/// a burst never holds the thread or a message for long.
const READ_PER_WAKE: u64 = 4 << 20;

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
    let (wake, woken) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let handle = Handle {
        stop: Arc::clone(&stop),
        wake: wake.clone(),
    };
    std::thread::Builder::new()
        .name("logs-follower".into())
        .spawn(move || {
            let watcher = if notify { watch(&dir, wake) } else { None };
            let (mode, interval) = if watcher.is_some() {
                (WatchMode::Notify, SAFETY_POLL)
            } else {
                (WatchMode::Poll(250), POLL_INTERVAL)
            };
            let mut tracked: Vec<Tracked> = follows
                .into_iter()
                .map(|follow| Tracked {
                    follow,
                    refused: false,
                })
                .collect();
            let send = |update| tx.send(Event::Logs(update)).is_ok();
            if !send(LogUpdate::Watching { session, mode }) {
                return;
            }
            let mut known = known;
            let mut scanned = Instant::now();
            while !stop.load(Ordering::Acquire) {
                if scanned.elapsed() >= RESCAN {
                    scanned = Instant::now();
                    for (update, follow) in new_services(session, &dir, &mut known) {
                        if !send(update) {
                            return;
                        }
                        tracked.extend(follow.map(|follow| Tracked {
                            follow,
                            refused: false,
                        }));
                    }
                }
                let mut more = false;
                for t in &mut tracked {
                    let (lines, notes, rest) = t.poll();
                    more |= rest;
                    let service = t.follow.service;
                    for note in notes {
                        if !send(LogUpdate::Note {
                            session,
                            service,
                            note,
                        }) {
                            return;
                        }
                    }
                    if !lines.is_empty() {
                        let lines = lines
                            .iter()
                            .map(|l| LogLine::from_raw(l, service))
                            .collect();
                        if !send(LogUpdate::Lines {
                            session,
                            service,
                            lines,
                        }) {
                            return;
                        }
                    }
                }
                let wait = if more { Duration::ZERO } else { interval };
                if let Err(mpsc::RecvTimeoutError::Disconnected) = woken.recv_timeout(wait) {
                    return;
                }
                while woken.try_recv().is_ok() {}
            }
            drop(watcher);
        })?;
    Ok(handle)
}

/// How often the directory is listed for logs that appeared since.
pub const RESCAN: Duration = Duration::from_secs(1);

/// The `<service>.log` files in `dir` not in `known` (which they join):
/// for each, its [`LogUpdate::NewService`] (and a refusal note when it
/// cannot be opened) and, when it can, the file to follow from its start.
fn new_services(
    session: u64,
    dir: &std::path::Path,
    known: &mut Vec<String>,
) -> Vec<(LogUpdate, Option<Follow>)> {
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

/// Notifications on `dir` (not recursive), each one a wake.
fn watch(dir: &std::path::Path, wake: mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher as _;
    let mut watcher = notify::recommended_watcher(move |_: notify::Result<notify::Event>| {
        let _ = wake.send(());
    })
    .ok()?;
    watcher
        .watch(dir, notify::RecursiveMode::NonRecursive)
        .ok()?;
    Some(watcher)
}

/// A followed file and whether its replacement was refused already (said
/// once).
struct Tracked {
    follow: Follow,
    refused: bool,
}

/// What the path holds now, against the file being read.
enum AtPath {
    Same,
    Replaced,
    Missing,
    Refused,
}

impl Tracked {
    /// One wake: new complete lines, notes, and whether more bytes wait.
    fn poll(&mut self) -> (Vec<RawLine>, Vec<FollowNote>, bool) {
        let mut lines = Vec::new();
        let mut notes = Vec::new();
        // What is at the path is looked at first: once another file is
        // there, the writer has left the old one, which is read to its end
        // before switching.
        let at_path = match std::fs::symlink_metadata(&self.follow.base) {
            Ok(meta) if !meta.is_file() => AtPath::Refused,
            Ok(meta) if key_of(&meta) != self.follow.key => AtPath::Replaced,
            Ok(_) => AtPath::Same,
            Err(_) => AtPath::Missing,
        };
        let mut more = match self.drain(&mut lines, &mut notes) {
            Ok(more) => more,
            Err(e) => {
                notes.push(FollowNote::Error(e.to_string()));
                false
            }
        };
        match at_path {
            AtPath::Replaced if !more => match open_log(&self.follow.base) {
                Ok(file) => {
                    if let Ok(meta) = file.metadata() {
                        self.follow.key = key_of(&meta);
                    }
                    self.follow.file = file;
                    self.follow.offset = 0;
                    self.refused = false;
                    notes.push(FollowNote::Rotated);
                    more = self.drain(&mut lines, &mut notes).unwrap_or(false);
                }
                Err(_) => self.refuse(&mut notes),
            },
            AtPath::Refused => self.refuse(&mut notes),
            AtPath::Replaced | AtPath::Same | AtPath::Missing => {}
        }
        (lines, notes, more)
    }

    fn refuse(&mut self, notes: &mut Vec<FollowNote>) {
        if !self.refused {
            self.refused = true;
            notes.push(FollowNote::Refused);
        }
    }

    /// Read the open file from the offset to its end (at most
    /// [`READ_PER_WAKE`]); a file shorter than the offset was truncated:
    /// from 0 again. `Ok(true)` when bytes remain.
    fn drain(&mut self, lines: &mut Vec<RawLine>, notes: &mut Vec<FollowNote>) -> io::Result<bool> {
        let follow = &mut self.follow;
        let len = follow.file.metadata()?.len();
        if len < follow.offset {
            follow.assembler.flush(lines);
            follow.offset = 0;
            notes.push(FollowNote::Truncated);
        }
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
        Ok(follow.offset < len)
    }
}
