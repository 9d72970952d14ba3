//! The logs view's state ([`LogsView`], [`super::Layer::Logs`]): the
//! session, the tabs and their buffers, wrap, search, what the follower
//! said.

use crate::model::logmerge::AllBack;
use crate::model::logtext::LinePos;
use unicode_width::UnicodeWidthStr as _;

use crate::model::logbuffer::Buffer;
use crate::model::logview::{LogLine, LogsRequest, LogsState, Older, WatchMode};

/// One service tab's name and why it cannot be read, if so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceTab {
    /// The service (file stem), sanitized.
    pub name: String,
    /// Why its file cannot be read (a symlink, unreadable), or the last
    /// rotation/truncation note.
    pub note: Option<String>,
}

/// The open logs view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogsView {
    /// Which open this is: updates of an earlier one are dropped.
    pub session: u64,
    /// What was opened.
    pub request: LogsRequest,
    /// What was found.
    pub state: LogsState,
    /// The logs directory as shown.
    pub path: String,
    /// The services, in tab order after tab 0 (all).
    pub services: Vec<ServiceTab>,
    pub(super) buffers: Vec<Buffer>,
    /// The tab shown: 0 all services, `1 + i` service `i`.
    pub tab: usize,
    /// Whether long lines wrap (else they are cut at the edge).
    pub wrap: bool,
    /// The search (empty: none); highlighted in every line.
    pub search: String,
    /// The search being typed, while the prompt is open.
    pub editing: Option<String>,
    /// How the follower watches (`None` until it says).
    pub watch: Option<WatchMode>,
    /// What the open left out ([`Opened::notice`]).
    pub notice: Option<String>,
    /// The all-services tab's scroll-back through every service.
    pub(super) all_back: AllBack,
    /// Where the last search stopped (no match held, searched back so
    /// far), said on the search line until the next search.
    pub search_note: Option<String>,
    /// This search's reads of older history: bytes searched in all, and
    /// where one stopped at its bound (`tab`, position), for `n` to go on.
    pub(super) search_far: SearchFar,
    /// The logs directory was removed while followed (the lines read
    /// before stay shown); cleared when it is back.
    pub dir_gone: bool,
    /// Where each service's log is read from, by service index (as the
    /// open and the follower found them): what the scroll-back, search and
    /// whole-line requests carry to the I/O worker.
    pub(super) bases: Vec<std::path::PathBuf>,
    /// The query of the search into a service's history (`n`, `N` past
    /// the lines held) the I/O worker has not answered yet. While one is
    /// out, neither another search nor a scroll-back read is asked for
    /// (both would read from the same place and add the same lines), and
    /// its answer is dropped when the search changed meanwhile.
    pub(super) asked: Option<String>,
}

/// A search's reads of older history so far (since `/` Enter).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SearchFar {
    /// Bytes searched in the files, every `n` and `N` counted.
    pub(super) total: u64,
    /// Where a search back stopped at its bound: the tab and the position
    /// the next `n` goes on before.
    pub(super) resume: Option<(usize, LinePos)>,
    /// Bytes searched back since the last match.
    pub(super) back: u64,
    /// Searches back that stopped at their bound since the last match.
    pub(super) rounds: u64,
}

impl LogsView {
    /// The service label's width on the all tab (0 on a service's tab).
    #[must_use]
    pub fn label_width(&self) -> usize {
        if self.tab == 0 {
            self.services
                .iter()
                .map(|s| s.name.width())
                .max()
                .unwrap_or(0)
        } else {
            0
        }
    }

    /// How many rows each line of the shown tab takes wrapped at `width`, as
    /// drawn (the label and marks included): for scrolling by rows. Owns what
    /// it needs, so the view can be changed while it is used.
    pub fn row_counter(&self, width: usize) -> impl Fn(&LogLine) -> usize + use<> {
        let names: Vec<String> = self.services.iter().map(|s| s.name.clone()).collect();
        let label_width = self.label_width();
        move |line: &LogLine| {
            let mut prefix = String::new();
            if label_width > 0 {
                let name = names
                    .get(usize::from(line.service))
                    .map_or("?", String::as_str);
                prefix.push_str(name);
                prefix.push_str(&" ".repeat(label_width.saturating_sub(name.width())));
                prefix.push_str(" │ ");
            }
            if line.cont {
                prefix.push('↪');
            }
            if line.cut {
                prefix.push_str(&crate::ui::logs_layout::cut_mark(line));
            }
            crate::ui::logs_layout::render_line(&prefix, line, "", false, width.max(1), true).len()
        }
    }

    pub(super) fn loading(session: u64, request: LogsRequest) -> Self {
        Self {
            session,
            request,
            state: LogsState::Loading,
            path: String::new(),
            services: Vec::new(),
            buffers: vec![Buffer::new(Vec::new(), Older::Start)],
            tab: 0,
            wrap: false,
            search: String::new(),
            editing: None,
            watch: None,
            notice: None,
            all_back: AllBack::default(),
            search_note: None,
            search_far: SearchFar::default(),
            dir_gone: false,
            bases: Vec::new(),
            asked: None,
        }
    }

    /// The tab shown's buffer.
    #[must_use]
    pub fn buffer(&self) -> &Buffer {
        &self.buffers[self.tab.min(self.buffers.len() - 1)]
    }

    /// Where service `service`'s log is read from (empty when unknown:
    /// the read then fails and says so, as for a service not followed).
    pub(super) fn base(&self, service: u16) -> std::path::PathBuf {
        self.bases
            .get(usize::from(service))
            .cloned()
            .unwrap_or_default()
    }

    pub(super) fn buffer_mut(&mut self) -> &mut Buffer {
        let tab = self.tab.min(self.buffers.len() - 1);
        &mut self.buffers[tab]
    }

    /// The tab titles: `all`, then each service.
    #[must_use]
    pub fn tab_names(&self) -> Vec<&str> {
        std::iter::once("all")
            .chain(self.services.iter().map(|s| s.name.as_str()))
            .collect()
    }

    /// The name of service `index`.
    #[must_use]
    pub fn service_name(&self, index: u16) -> &str {
        self.services
            .get(usize::from(index))
            .map_or("?", |s| s.name.as_str())
    }

    pub(super) fn push(&mut self, service: u16, lines: &[LogLine]) {
        let tab = usize::from(service) + 1;
        if let Some(buffer) = self.buffers.get_mut(tab) {
            buffer.push(lines);
            let dropped = self.buffers[0].push_trimmed(lines);
            if !dropped.is_empty() {
                self.all_back.trimmed(&dropped, self.buffers[0].lines());
            }
        }
    }

    /// Where the all-services tab's older lines are, as its buffer keeps
    /// it: a mark that some are left (the positions are in `all_back`).
    pub(super) fn all_older(&self) -> Older {
        if self.all_back.more() {
            Older::Before(crate::model::logtext::LinePos::default())
        } else {
            Older::Start
        }
    }

    /// Put one all-services scroll-back step in front of the all tab.
    pub(super) fn all_step(&mut self, read: Vec<(u16, Vec<LogLine>, Older)>) {
        let lines = self.all_back.step(read);
        let older = self.all_older();
        self.buffers[0].prepend(lines, older);
    }

    /// `service`'s unfinished last line, on its tab and the all tab.
    pub(super) fn partial(&mut self, service: u16, line: LogLine) {
        let tab = usize::from(service) + 1;
        if let Some(buffer) = self.buffers.get_mut(tab) {
            buffer.set_partial(line.clone());
            self.buffers[0].set_partial(line);
        }
    }
}
