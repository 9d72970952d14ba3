//! The I/O worker: one `io-worker` thread that does every read the UI asks
//! for, so the render loop never waits on a file or the store. The loop
//! forwards each [`Request`] (the detail, the logs view's open,
//! scroll-back, searches of up to 64 MiB, whole lines) and the audit lines
//! of the UI's own refusals; the worker answers each read with an
//! [`Event::Answer`] on the one event channel, tagged with what it belongs
//! to (the instance's name, the logs session), and the UI drops answers to
//! a view closed or opened again since. Model: gitui's `asyncgit` jobs,
//! pushing instead of polled.
//!
//! It owns the detail view's read-only connection (busy timeout 50 ms,
//! dropped when another of this console's connections saw the file change,
//! `crate::store::epoch`) and the logs follower's handle (dropped on
//! [`Request::CloseLogs`], a new open, or the worker's end, which stops the
//! follower). It stops when the loop drops its [`IoWorker`]; a read under
//! way then finishes first, unseen.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use crate::event::{Activity, Answer, Event, EventSender, Request};
use crate::logs::{self, follower};
use crate::model::logview::{LogLine, Older, TAIL_LINES};
use crate::model::services::DetailView;
use crate::recorder::Recorder;
use crate::store::{Access, Store};

/// How often an idle worker lets go of a detail connection whose store
/// file changed (`crate::store::epoch`), so it never keeps an old file's
/// descriptors.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// The detail reader's busy timeout: a read behind another process's lock
/// gives up quickly and the next snapshot asks again.
const DETAIL_BUSY: Duration = Duration::from_millis(50);

/// One thing for the worker to do.
enum Job {
    /// A read (or the logs' close) the UI asked for.
    Io(Request),
    /// Audit and log an activity the UI already shows (its refusals).
    Persist(Activity),
}

/// The render loop's handle on the worker: sends, never waits.
pub(super) struct IoWorker {
    jobs: mpsc::Sender<Job>,
}

impl IoWorker {
    /// Start the worker for the store at `path` (its state directory
    /// `state_dir` holds the logs), answering on `tx`, auditing through
    /// `recorder`.
    ///
    /// # Errors
    /// The thread could not be started.
    pub(super) fn spawn(
        path: PathBuf,
        state_dir: PathBuf,
        tx: EventSender,
        recorder: Recorder,
    ) -> std::io::Result<Self> {
        let (jobs, rx) = mpsc::channel();
        let mut worker = Worker {
            details: DetailReader {
                path,
                store: None,
                probe: crate::store::probe::checked_sysinfo(),
            },
            state_dir,
            tx,
            recorder,
            follower: None,
        };
        std::thread::Builder::new()
            .name("io-worker".into())
            .spawn(move || worker.run(&rx))?;
        Ok(Self { jobs })
    }

    /// Hand `request` to the worker.
    pub(super) fn send(&self, request: Request) {
        let _ = self.jobs.send(Job::Io(request));
    }

    /// Audit and log `activity` (already shown) on the worker.
    pub(super) fn persist(&self, activity: Activity) {
        let _ = self.jobs.send(Job::Persist(activity));
    }
}

/// The worker thread's state.
struct Worker {
    details: DetailReader,
    state_dir: PathBuf,
    tx: EventSender,
    recorder: Recorder,
    follower: Option<follower::Handle>,
}

impl Worker {
    /// Take jobs until the loop's handle drops. A detail read with a read
    /// of the same name queued behind it is skipped (the later read answers
    /// both: answers are matched by name); a read of another name is not
    /// (each `detail` command of `serve --stdio` is answered).
    fn run(&mut self, rx: &mpsc::Receiver<Job>) {
        let mut queued = std::collections::VecDeque::new();
        loop {
            let job = match queued.pop_front() {
                Some(job) => job,
                None => match rx.recv_timeout(IDLE_CHECK) {
                    Ok(job) => job,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        self.details.release_if_stale();
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                },
            };
            queued.extend(rx.try_iter());
            // A read asked for again later is done once, at its last ask.
            let superseded = match &job {
                Job::Io(Request::OpenDetail { name }) => queued.iter().any(
                    |j| matches!(j, Job::Io(Request::OpenDetail { name: later }) if later == name),
                ),
                Job::Io(Request::OperationEvents { id }) => queued.iter().any(
                    |j| matches!(j, Job::Io(Request::OperationEvents { id: later }) if later == id),
                ),
                _ => false,
            };
            if superseded {
                continue;
            }
            match job {
                Job::Persist(activity) => self.recorder.persist(&activity),
                Job::Io(request) => {
                    if let Some(answer) = self.answer(request) {
                        let _ = self.tx.send(Event::Answer(answer));
                    }
                }
            }
        }
    }

    /// Carry out `request`; its answer, if it has one.
    fn answer(&mut self, request: Request) -> Option<Answer> {
        match request {
            Request::OpenDetail { name } => {
                let result = self.details.read(&name);
                Some(Answer::Detail { name, result })
            }
            Request::OpenLogs { session, request } => Some(self.open_logs(session, &request)),
            Request::CloseLogs => {
                self.follower = None;
                None
            }
            Request::OperationEvents { id } => {
                let result = self.details.events(&id);
                Some(Answer::OperationEvents { id, result })
            }
            Request::VerifyOutput { instance, path } => {
                // The path is stackless's answer: never one of the store's
                // own files (those are touched only through SQLite).
                let result = if crate::store::files::names_a_store_file(&self.details.path, &path) {
                    Err(format!(
                        "{} is one of the store's files: not read",
                        path.display()
                    ))
                } else {
                    read_tail(&path, crate::event::VERIFY_OUTPUT_BYTES).map_err(|e| e.to_string())
                };
                Some(Answer::VerifyOutput {
                    instance,
                    path,
                    result,
                })
            }
            search @ (Request::LogsSearchOlder { .. } | Request::LogsSearchNewer { .. }) => {
                search_logs(search)
            }
            read => read_logs(read),
        }
    }

    /// Open `request`'s logs for `session` and follow them; the tails and
    /// each service's log path, as the answer.
    fn open_logs(&mut self, session: u64, request: &crate::model::logview::LogsRequest) -> Answer {
        self.follower = None;
        let logs::Opening {
            opened,
            follows,
            names,
        } = logs::open_all(&self.state_dir, request);
        let dir = self.state_dir.join("logs").join(&request.dir);
        let bases = (0..opened.services.len())
            .map(|index| {
                follows
                    .iter()
                    .find(|f| usize::from(f.service) == index)
                    .map(|f| f.base.clone())
                    .unwrap_or_default()
            })
            .collect();
        if !follows.is_empty() {
            match follower::spawn(session, dir, names, follows, self.tx.clone(), true) {
                Ok(handle) => self.follower = Some(handle),
                Err(e) => tracing::warn!("cannot start the logs follower: {e}"),
            }
        }
        Answer::LogsOpened {
            session,
            opened,
            bases,
        }
    }
}

/// The last `max` bytes of the regular file at `path` (opened without
/// following a symlink there, nor waiting on a FIFO), from its first
/// whole line when the file held more.
///
/// # Errors
/// The file cannot be opened or read, is a symlink, or is not a regular
/// file.
fn read_tail(path: &std::path::Path, max: u64) -> std::io::Result<crate::event::TailText> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let len = meta.len();
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    let cut = start > 0;
    let from = if cut {
        bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(0, |at| at + 1)
    } else {
        0
    };
    Ok(crate::event::TailText {
        text: String::from_utf8_lossy(&bytes[from..]).into_owned(),
        cut,
    })
}

/// A read of a service's log history (a scroll-back page, of one service
/// or of every service, or a whole line), answered; `None` for a request
/// of another kind.
fn read_logs(request: Request) -> Option<Answer> {
    Some(match request {
        Request::LogsOlder {
            session,
            service,
            base,
            before,
        } => {
            let (lines, older) = match logs::history::older(&base, before, TAIL_LINES) {
                Ok((raw, older)) => (
                    raw.iter().map(|r| LogLine::from_raw(r, service)).collect(),
                    older,
                ),
                Err(e) => {
                    tracing::warn!("cannot read older log lines: {e}");
                    (Vec::new(), Older::Start)
                }
            };
            Answer::LogsOlder {
                session,
                service,
                lines,
                older,
            }
        }
        Request::LogsOlderAll {
            session,
            bases,
            reads,
            want,
        } => Answer::LogsOlderAll {
            session,
            read: logs::history::older_all(&bases, &reads, want),
        },
        Request::LogsLineWhole {
            session,
            base,
            piece,
            title,
            ..
        } => Answer::LogsLineWhole {
            session,
            text: logs::history::whole_line_text(&base, piece, &title),
        },
        _ => return None,
    })
}

/// A search of a service's history past the lines held (`n` older, `N`
/// newer; bounded by `logs::search::SEARCH_BYTES`), answered; `None` for a
/// request of another kind.
fn search_logs(request: Request) -> Option<Answer> {
    Some(match request {
        Request::LogsSearchOlder {
            session,
            service,
            base,
            before,
            query,
            redactor,
        } => Answer::LogsSearchOlder {
            session,
            service,
            result: logs::search::search_history(
                &base,
                service,
                before,
                &query,
                logs::search::SEARCH_BYTES,
                &redactor,
            ),
        },
        Request::LogsSearchNewer {
            session,
            service,
            base,
            after,
            query,
            redactor,
        } => Answer::LogsSearchNewer {
            session,
            service,
            result: logs::search::search_newer(
                &base,
                service,
                after,
                &query,
                logs::search::SEARCH_BYTES,
                &redactor,
            ),
        },
        _ => return None,
    })
}

/// Reads an instance's detail rows for the detail view, on a read-only
/// connection of its own with a short busy timeout ([`DETAIL_BUSY`]).
struct DetailReader {
    path: PathBuf,
    store: Option<Store>,
    /// Probes the services' processes (pid plus start time, like lock
    /// holders).
    probe: Box<dyn crate::store::probe::HostProbe + Send>,
}

impl DetailReader {
    /// Drop the connection when another of this console's connections saw
    /// the file change (`store::epoch`); opened again at the next read.
    fn release_if_stale(&mut self) {
        if self.store.as_ref().is_some_and(Store::stale) {
            self.store = None;
        }
    }

    /// The connection, opened when there is none.
    fn store(&mut self) -> Result<&mut Store, String> {
        self.release_if_stale();
        if self.store.is_none() {
            let store = Store::open(&self.path, Access::ReadOnly).map_err(|e| e.to_string())?;
            let _ = store.set_busy_timeout(DETAIL_BUSY);
            self.store = Some(store);
        }
        self.store
            .as_mut()
            .ok_or_else(|| "the store is not open".to_owned())
    }

    /// Operation `id`'s events for the operation overlay, on the detail's
    /// connection.
    fn events(&mut self, id: &str) -> Result<Vec<crate::model::operation::OpEvent>, String> {
        let store = self.store()?;
        match store.operation_events(id) {
            Ok(events) => Ok(events),
            Err(e) => {
                if e.breaks_connection() {
                    store.invalidate();
                }
                self.store = None;
                Err(e.to_string())
            }
        }
    }

    fn read(&mut self, name: &str) -> Result<Option<DetailView>, String> {
        let store = self.store()?;
        let state_dir = store.state_dir();
        let detail = match store.instance_detail(name) {
            Ok(detail) => detail,
            Err(e) => {
                if e.breaks_connection() {
                    store.invalidate();
                }
                self.store = None;
                return Err(e.to_string());
            }
        };
        Ok(detail
            .map(|detail| crate::store::services::observe(detail, &state_dir, self.probe.as_mut())))
    }
}

#[cfg(test)]
mod tests {
    use super::read_tail;

    /// A file over the bound: its last bytes, from the first whole line,
    /// said to be cut; one under it whole; a symlink and a FIFO refused
    /// (the FIFO without waiting for a writer).
    #[test]
    fn a_verify_output_is_read_bounded_from_a_whole_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let big = dir.path().join("verify.log");
        let text: String = (0..10_000).map(|i| format!("line {i:05}\n")).collect();
        std::fs::write(&big, &text).expect("write");
        let tail = read_tail(&big, 1_000).expect("read");
        assert!(tail.cut);
        // 11 bytes a line: the 1,000 bytes start 1 byte into line 9909,
        // so 90 whole lines follow.
        assert_eq!(tail.text.lines().count(), 90);
        assert_eq!(tail.text.lines().next(), Some("line 09910"));
        assert!(tail.text.ends_with("line 09999\n"));
        let whole = read_tail(&big, 1 << 20).expect("read");
        assert!(!whole.cut);
        assert_eq!(whole.text, text);
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&big, &link).expect("symlink");
        assert!(
            read_tail(&link, 1_000).is_err(),
            "a symlink is not followed"
        );
        let fifo = dir.path().join("fifo.log");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        assert!(read_tail(&fifo, 1_000).is_err(), "a FIFO is no file");
    }
}
