//! The logs view's files, for the render loop: [`Command::OpenLogs`] opens
//! them (`crate::logs::open`: a few blocks read from each file's end) and
//! starts a `logs-follower` thread; [`Command::LogsOlder`] reads one
//! scroll-back step (blocks read backwards), [`Command::LogsOlderAll`] one
//! for every service of the all tab; [`Command::CloseLogs`] (or a
//! new open, or the loop ending) drops the follower's handle, which stops it.

use std::path::PathBuf;

use crate::event::EventSender;
use crate::logs::{self, follower};
use crate::model::logtext::LinePos;
use crate::model::logview::{LogLine, LogsRequest, Older, TAIL_LINES};
use crate::ui::App;

/// The open logs: the follower and each service's log path.
pub(super) struct LogsSession {
    state_dir: PathBuf,
    tx: EventSender,
    follower: Option<follower::Handle>,
    /// `(session, base path per service index)`.
    bases: (u64, Vec<PathBuf>),
}

impl LogsSession {
    pub(super) fn new(state_dir: PathBuf, tx: EventSender) -> Self {
        Self {
            state_dir,
            tx,
            follower: None,
            bases: (0, Vec::new()),
        }
    }

    /// Open `request`'s logs for `session`, hand the tails to `app`, follow.
    pub(super) fn open(&mut self, app: &mut App, session: u64, request: &LogsRequest) {
        self.follower = None;
        let logs::Opening {
            opened,
            follows,
            names,
        } = logs::open_all(&self.state_dir, request);
        let dir = self.state_dir.join("logs").join(&request.dir);
        let mut bases = Vec::new();
        for (index, _) in opened.services.iter().enumerate() {
            let base = follows
                .iter()
                .find(|f| usize::from(f.service) == index)
                .map(|f| f.base.clone());
            bases.push(base.unwrap_or_default());
        }
        self.bases = (session, bases);
        app.show_logs(session, opened);
        if !follows.is_empty() {
            match follower::spawn(session, dir, names, follows, self.tx.clone(), true) {
                Ok(handle) => self.follower = Some(handle),
                Err(e) => tracing::warn!("cannot start the logs follower: {e}"),
            }
        }
    }

    /// One scroll-back step of `service`.
    pub(super) fn older(&self, app: &mut App, session: u64, service: u16, before: LinePos) {
        let Some(base) = self.base(session, service) else {
            return;
        };
        let (lines, older) = match logs::history::older(base, before, TAIL_LINES) {
            Ok((raw, older)) => (
                raw.iter().map(|r| LogLine::from_raw(r, service)).collect(),
                older,
            ),
            Err(e) => {
                tracing::warn!("cannot read older log lines: {e}");
                (Vec::new(), Older::Start)
            }
        };
        app.show_older_logs(session, service, lines, older);
    }

    /// One all-services scroll-back step: `want` older lines of each
    /// service in `reads`.
    pub(super) fn older_all(
        &self,
        app: &mut App,
        session: u64,
        reads: &[(u16, LinePos)],
        want: usize,
    ) {
        if self.bases.0 != session {
            return;
        }
        let read = logs::history::older_all(&self.bases.1, reads, want);
        app.show_older_all(session, read);
    }

    /// Where `service`'s log of the open view `session` is read from
    /// (`None` for another session's request or an unknown service).
    fn base(&self, session: u64, service: u16) -> Option<&PathBuf> {
        if self.bases.0 != session {
            return None;
        }
        self.bases.1.get(usize::from(service))
    }

    /// Search `service`'s older history for `query` (bounded).
    pub(super) fn search_older(
        &self,
        app: &mut App,
        session: u64,
        service: u16,
        before: LinePos,
        query: &str,
    ) {
        let Some(base) = self.base(session, service) else {
            return;
        };
        let result =
            logs::search::search_history(base, service, before, query, logs::search::SEARCH_BYTES);
        app.show_search_older(session, service, result);
    }

    /// Search `service`'s newer history for `query` (bounded), after the
    /// newest line held.
    pub(super) fn search_newer(
        &self,
        app: &mut App,
        session: u64,
        service: u16,
        after: LinePos,
        query: &str,
    ) {
        let Some(base) = self.base(session, service) else {
            return;
        };
        let result =
            logs::search::search_newer(base, service, after, query, logs::search::SEARCH_BYTES);
        app.show_search_newer(session, service, result);
    }

    /// The whole line a piece at `piece` of `service` belongs to, read
    /// from its file, into the full-text view.
    pub(super) fn line_whole(
        &self,
        app: &mut App,
        session: u64,
        service: u16,
        piece: LinePos,
        title: &str,
    ) {
        let Some(base) = self.base(session, service) else {
            return;
        };
        app.show_log_line(session, logs::history::whole_line_text(base, piece, title));
    }

    /// A service log that appeared while following: where to read its
    /// older lines.
    pub(super) fn add_service(&mut self, session: u64, service: u16, base: PathBuf) {
        if self.bases.0 == session && usize::from(service) == self.bases.1.len() {
            self.bases.1.push(base);
        }
    }

    /// Stop following.
    pub(super) fn close(&mut self) {
        self.follower = None;
    }
}
