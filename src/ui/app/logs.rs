//! The logs view's UI state (`l`): tab 0 is every service's lines (the
//! service name on each; history merged by timestamp, lines that arrive
//! while following in arrival order, scroll-back through every service's
//! files by [`AllBack`]), tabs 1.. one service each; each tab a bounded
//! [`Buffer`]. Keys scroll, follow (`G`), switch tabs, wrap, search; what
//! needs the files (open, read older lines) is asked of the console as a
//! [`Effect`]. Lines arrive as `Event::Logs` from the follower.

use super::logs_view::{LogsView, SearchFar, ServiceTab};
use super::{App, Effect, FlashLevel, Layer, LayerKind};
use crate::event::Request;
use crate::model::fulltext::FullText;
use crate::model::logbuffer::Buffer;
use crate::model::logmerge::{AllBack, per_service};
use crate::model::logview::{
    FollowNote, LogLine, LogUpdate, LogsRequest, LogsState, Older, Opened,
};

impl App {
    /// The open logs view, if any.
    #[must_use]
    pub fn logs(&self) -> Option<&LogsView> {
        self.layers.logs()
    }

    /// `l`: open the logs of the target instance (the detail view's, the
    /// selected backoff's, or the selected row's).
    pub(super) fn open_logs(&mut self) -> Option<Effect> {
        let instance = match self.target() {
            Ok(instance) => instance,
            Err((_, detail)) => {
                self.set_flash(FlashLevel::Warning, detail.replace("refused: ", ""));
                return None;
            }
        };
        let request = match LogsRequest::for_instance(&instance) {
            Ok(request) => request,
            Err(reason) => {
                self.set_flash(
                    FlashLevel::Warning,
                    format!("logs of {}: {reason}", instance.name),
                );
                return None;
            }
        };
        self.logs_session += 1;
        let session = self.logs_session;
        self.layers
            .open(Layer::Logs(LogsView::loading(session, request.clone())));
        Some(Effect::Io(Request::OpenLogs { session, request }))
    }

    /// The answer to [`Effect::OpenLogs`]: what was found and each
    /// service's tail. Ignored when the view was closed or reopened since.
    /// A re-open (`G` after scrolling far back) keeps the tab, wrap and
    /// search.
    pub(super) fn show_logs(
        &mut self,
        session: u64,
        opened: Opened,
        bases: Vec<std::path::PathBuf>,
    ) {
        let Some(view) = self.layers.logs_mut().filter(|v| v.session == session) else {
            return;
        };
        view.bases = bases;
        let mut tails = Vec::new();
        let mut buffers = Vec::new();
        view.services.clear();
        view.all_back = AllBack::default();
        let mut partials = Vec::new();
        for (index, service) in opened.services.into_iter().enumerate() {
            view.all_back.add_service(Older::Start);
            let index = u16::try_from(index).unwrap_or(u16::MAX);
            tails.push((index, service.lines.clone(), service.older));
            view.services.push(ServiceTab {
                name: service.name,
                note: service.error,
            });
            let mut buffer = Buffer::new(service.lines, service.older);
            if let Some(partial) = service.partial {
                buffer.set_partial(partial.clone());
                partials.push(partial);
            }
            buffers.push(buffer);
        }
        buffers.insert(0, Buffer::new(Vec::new(), Older::Start));
        view.buffers = buffers;
        // The tails, merged by their timestamps (what may belong between
        // older lines not read yet waits for the scroll-back).
        view.all_step(tails);
        for partial in partials {
            view.buffers[0].set_partial(partial);
        }
        view.state = opened.state;
        view.path = opened.path;
        view.notice = opened.notice;
        view.tab = view.tab.min(view.buffers.len() - 1);
    }

    /// The answer to [`Effect::LogsOlder`]: older lines of `service`
    /// (oldest first) and where to go on from.
    pub(super) fn show_older_logs(
        &mut self,
        session: u64,
        service: u16,
        lines: Vec<LogLine>,
        older: Older,
    ) {
        let Some(view) = self.layers.logs_mut().filter(|v| v.session == session) else {
            return;
        };
        if let Some(buffer) = view.buffers.get_mut(usize::from(service) + 1) {
            buffer.prepend(lines, older);
        }
    }

    /// The answer to [`Effect::LogsOlderAll`]: each service's older page
    /// (service, lines oldest first, where to go on from), merged into the
    /// all-services tab.
    pub(super) fn show_older_all(&mut self, session: u64, read: Vec<(u16, Vec<LogLine>, Older)>) {
        let Some(view) = self.layers.logs_mut().filter(|v| v.session == session) else {
            return;
        };
        view.all_step(read);
    }

    /// An update from the follower.
    pub(super) fn logs_update(&mut self, update: LogUpdate) {
        let Some(view) = self
            .layers
            .logs_mut()
            .filter(|v| v.session == update.session())
        else {
            return;
        };
        match update {
            LogUpdate::Lines { service, lines, .. } => view.push(service, &lines),
            LogUpdate::Watching { mode, .. } => view.watch = Some(mode),
            LogUpdate::DirGone { gone, .. } => {
                view.dir_gone = gone;
                let text = if gone {
                    "the logs directory was removed: the lines read are kept"
                } else {
                    "the logs directory is back: following"
                };
                self.set_flash(FlashLevel::Info, text.into());
            }
            LogUpdate::Partial { service, line, .. } => view.partial(service, line),
            LogUpdate::NewService {
                service,
                name,
                base,
                ..
            } => {
                if usize::from(service) == view.services.len() {
                    view.bases
                        .resize(view.services.len(), std::path::PathBuf::new());
                    view.bases.push(base);
                    let text = format!("{name}.log appeared: a new tab");
                    view.services.push(ServiceTab { name, note: None });
                    view.buffers.push(Buffer::new(Vec::new(), Older::Start));
                    view.all_back.add_service(Older::Start);
                    self.set_flash(FlashLevel::Info, text);
                }
            }
            LogUpdate::Note { service, note, .. } => {
                // A rotation is routine (stackless 0.4.0 rotates every
                // MiB): said in the footer only. The rest stays on the tab.
                let (text, keep) = match note {
                    FollowNote::Rotated => ("rotated: following the new file".to_owned(), false),
                    FollowNote::Gap => (
                        "rotated faster than read: earlier generations left .log.1-.log.3 unseen, lines may be missing"
                            .to_owned(),
                        true,
                    ),
                    FollowNote::Truncated => {
                        ("truncated: read again from its start".to_owned(), true)
                    }
                    FollowNote::Refused => (
                        "replaced by a symlink or a non-file: not followed".to_owned(),
                        true,
                    ),
                    FollowNote::Error(e) => (format!("read failed: {e}"), true),
                };
                let name = view.service_name(service).to_owned();
                if keep && let Some(tab) = view.services.get_mut(usize::from(service)) {
                    tab.note = Some(format!("{name}.log {text}"));
                }
                self.set_flash(FlashLevel::Info, format!("{name}.log {text}"));
            }
        }
    }

    /// On each tick: a logs view that found no logs directory, or no log in
    /// it, looks again (an instance still starting writes its logs soon).
    pub(super) fn recheck_logs(&mut self) -> Option<Effect> {
        let view = self.layers.logs_mut()?;
        if !matches!(
            view.state,
            LogsState::DirGone { .. } | LogsState::NoFiles { .. }
        ) {
            return None;
        }
        self.logs_session += 1;
        view.session = self.logs_session;
        Some(Effect::Io(Request::OpenLogs {
            session: view.session,
            request: view.request.clone(),
        }))
    }

    /// Esc in the logs view.
    pub(super) fn close_logs(&mut self) -> Option<Effect> {
        self.layers.close(LayerKind::Logs);
        Some(Effect::Io(Request::CloseLogs))
    }

    /// Scroll the shown tab by `delta` lines (by screen rows while lines
    /// wrap); asks for older lines when near the top of what is held.
    pub(super) fn scroll_logs(&mut self, delta: isize) -> Option<Effect> {
        let rows = self.viewport.get().logs_rows.max(1);
        let view = self.layers.logs_mut()?;
        let tab = view.tab;
        let wants = if view.wrap {
            // Wrapped: by screen rows, so a very long line is read row by
            // row (the bottom line, the cursor, stays on the screen).
            let height = view.row_counter(self.viewport.get().logs_width);
            view.buffer_mut().scroll_rows(delta, rows, height)
        } else {
            view.buffer_mut().scroll(delta, rows, false)
        };
        older_command(view, tab, wants)
    }

    /// ↑/↓ (`k`/`j`): move the cursor line; scrolls when it reaches the
    /// top (asking for older lines near the top of what is held). While
    /// lines wrap, scrolls by one screen row instead.
    pub(super) fn move_logs_cursor(&mut self, delta: isize) -> Option<Effect> {
        let rows = self.viewport.get().logs_rows.max(1);
        if self.layers.logs()?.wrap {
            return self.scroll_logs(delta);
        }
        let view = self.layers.logs_mut()?;
        let tab = view.tab;
        let wants = view.buffer_mut().move_cursor(delta, rows, false);
        older_command(view, tab, wants)
    }

    /// The cursor line whole, for the full-text view (Enter, `e`): titled
    /// `Log: SERVICE`, its text (sanitized when read, and again here).
    #[must_use]
    pub(super) fn log_line_text(&self) -> Option<FullText> {
        let view = self.layers.logs()?;
        if view.state != LogsState::Ready {
            return None;
        }
        let buffer = view.buffer();
        let line = &buffer.lines()[buffer.selected()?];
        let mut text = FullText::new(&format!("Log: {}", view.service_name(line.service)));
        text.indent = 0;
        text.line(&line.text);
        Some(text)
    }

    /// Enter/`e` on a piece of a line longer than a piece (4 KiB, shown
    /// `↪`): the whole line is read again from its file
    /// ([`Effect::LogsLineWhole`]). `None` for a line held whole.
    pub(super) fn log_line_whole(&self) -> Option<Effect> {
        let view = self.layers.logs()?;
        if view.state != LogsState::Ready
            || self.layers.has(LayerKind::Operation)
            || self.layers.has(LayerKind::FullText)
        {
            return None;
        }
        let buffer = view.buffer();
        let index = buffer.selected()?;
        let line = &buffer.lines()[index];
        let next_piece = buffer
            .lines()
            .get(index + 1)
            .is_some_and(|n| n.cont && n.service == line.service && n.at.file == line.at.file);
        if !line.cont && !next_piece {
            return None;
        }
        let name = view.service_name(line.service);
        Some(Effect::Io(Request::LogsLineWhole {
            session: view.session,
            service: line.service,
            base: view.base(line.service),
            piece: line.at,
            title: format!("Log: {name} (the whole line, read again from its file)"),
        }))
    }

    /// The answer to [`Effect::LogsLineWhole`]: the whole line, in the
    /// full-text view.
    pub(super) fn show_log_line(&mut self, session: u64, text: FullText) {
        if self.layers.logs().is_some_and(|v| v.session == session) {
            self.layers
                .open(Layer::FullText(super::full_view::FullView::new(text)));
        }
    }

    /// `G`: back to the bottom, following; reads the tail again when newer
    /// lines were dropped for older ones.
    pub(super) fn follow_logs(&mut self) -> Option<Effect> {
        let view = self.layers.logs_mut()?;
        if view.buffer_mut().follow() {
            return None;
        }
        self.logs_session += 1;
        view.session = self.logs_session;
        Some(Effect::Io(Request::OpenLogs {
            session: view.session,
            request: view.request.clone(),
        }))
    }

    /// Tab / Shift-Tab in the logs view.
    pub(super) fn logs_tab(&mut self, forward: bool) {
        if let Some(view) = self.layers.logs_mut() {
            let count = view.buffers.len();
            view.tab = if forward {
                (view.tab + 1) % count
            } else {
                (view.tab + count - 1) % count
            };
        }
    }

    /// `w`.
    pub(super) fn toggle_wrap(&mut self) {
        let rows = self.viewport.get().logs_rows.max(1);
        if let Some(view) = self.layers.logs_mut() {
            view.wrap = !view.wrap;
            view.buffer_mut().skip_rows = 0;
            // Unwrapped, a line is a row: no further up than a page's top.
            let wrap = view.wrap;
            view.buffer_mut().move_cursor(0, rows, wrap);
            let text = if view.wrap { "wrap on" } else { "wrap off" };
            self.set_flash(FlashLevel::Info, text.into());
        }
    }

    /// The search prompt's keys: `Some(c)` a character, `None` Backspace.
    pub(super) fn edit_search(&mut self, typed: Option<char>) {
        if let Some(editing) = self.layers.logs_mut().and_then(|v| v.editing.as_mut()) {
            match typed {
                Some(c) => editing.push(c),
                None => {
                    editing.pop();
                }
            }
        }
    }

    /// `/`, Enter, Esc of the search prompt; Enter searches (which may
    /// ask for older history, as `n`). `/` starts an empty query (the
    /// last one is only a hint: typing does not add to it);
    /// Enter on an empty prompt searches the last query again, as `less`.
    pub(super) fn search_prompt(&mut self, open: bool, keep: bool) -> Option<Effect> {
        let view = self.layers.logs_mut()?;
        if open {
            view.editing = Some(String::new());
            return None;
        }
        let typed = view.editing.take().unwrap_or_default();
        view.buffer_mut().current = None;
        view.search_note = None;
        view.search_far = SearchFar::default();
        if keep {
            if !typed.is_empty() {
                view.search = typed;
            }
            return self.find_in_logs(true);
        }
        view.search.clear();
        None
    }
}

/// A read of older lines for tab `tab`, when wanted and possible. On the
/// all tab, a step whose lines were all read already is taken at once.
fn older_command(view: &mut LogsView, tab: usize, wants: bool) -> Option<Effect> {
    // Not while a search of the files is out: both would add the same
    // lines (the wheel asks again when the answer is in).
    if !wants || view.asked.is_some() {
        return None;
    }
    if tab == 0 {
        let reads = view.all_back.reads();
        if reads.is_empty() {
            view.all_step(Vec::new());
            return None;
        }
        view.buffers[0].loading = true;
        return Some(Effect::Io(Request::LogsOlderAll {
            session: view.session,
            bases: view.bases.clone(),
            reads,
            want: per_service(view.services.len()),
        }));
    }
    let buffer = view.buffers.get_mut(tab)?;
    let Older::Before(before) = buffer.older else {
        return None;
    };
    buffer.loading = true;
    let service = u16::try_from(tab - 1).unwrap_or(u16::MAX);
    Some(Effect::Io(Request::LogsOlder {
        session: view.session,
        service,
        base: view.base(service),
        before,
    }))
}
