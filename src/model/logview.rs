//! The logs view's state, purely: where an instance's logs are
//! ([`LogsRequest`]), what opening them found ([`LogsState`], [`Opened`]),
//! what the follower sends ([`LogUpdate`]), and the bounded window of lines
//! per tab (`super::logbuffer::Buffer`) with its scroll,
//! follow/pause, scroll-back and search. The file I/O is `crate::logs`; drawing is `crate::ui::panes::logs`.
//!
//! Where the logs are (docs/stackless-releases.md):
//! `<state_dir>/logs/<dir>/<service>.log`, `<dir>` the instance name on
//! schemas 4/5 (stackless 0.2/0.3) and the birth's `resource_namespace` on
//! schema 14 (0.4.0, whose workload runner rotates at 1 MiB into `.log.1`,
//! `.log.2`). Substrates `render` and `vercel` keep logs on their side.

use super::logtext::{LinePos, RawLine, line_text};
use super::name::is_dns_safe;
use super::redact::Redactor;
use super::{Birth, Instance};

/// The most lines one tab keeps in memory (older ones are read again from
/// the file when scrolled back to).
pub const WINDOW_LINES: usize = 10_000;
/// The most text bytes one tab keeps.
pub const WINDOW_BYTES: usize = 8 << 20;
/// Lines read from the end of each service's log at open (the last
/// screenfuls), and per scroll-back step.
pub const TAIL_LINES: usize = 400;
/// The most bytes read backwards for one such step (bounds a file of very
/// long lines).
pub const TAIL_BYTES: usize = 1 << 20;

/// Whether `substrate` writes its services' logs to the state dir: `render`
/// and `vercel` keep them on their side (`stackless logs` fetches them).
#[must_use]
pub fn logs_on_disk(substrate: &str) -> bool {
    !matches!(substrate, "render" | "vercel")
}

/// What `l` asks to open: an instance's logs directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogsRequest {
    /// The instance name (as stored; shown sanitized).
    pub instance: String,
    /// The directory under `<state_dir>/logs/`: the name on schemas 4/5,
    /// `resource_namespace` on schema 14. Checked DNS-safe (as stackless's
    /// own workload runner requires), so it can never be `..` or a path.
    pub dir: String,
    /// The substrate, as stored.
    pub substrate: String,
}

impl LogsRequest {
    /// The request for `instance`'s logs. `Err(reason)` when its logs
    /// directory name is not DNS-safe (a hostile row).
    ///
    /// # Errors
    /// The directory name is not DNS-safe.
    pub fn for_instance(instance: &Instance) -> Result<Self, String> {
        let dir = instance.birth.as_ref().map(Birth::resource_namespace);
        let dir = dir
            .as_deref()
            .filter(|ns| !ns.is_empty())
            .unwrap_or(&instance.name);
        if !is_dns_safe(dir) {
            return Err("its logs directory name is not DNS-safe: refused".into());
        }
        Ok(Self {
            instance: instance.name.clone(),
            dir: dir.to_owned(),
            substrate: instance.substrate.to_string(),
        })
    }
}

/// What opening the logs found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogsState {
    /// Being opened.
    Loading,
    /// Following these services' logs.
    Ready,
    /// The substrate keeps logs elsewhere (render, vercel): not on disk.
    Elsewhere,
    /// The logs directory does not exist (never written, or removed by GC).
    DirGone {
        /// The directory looked for.
        path: String,
    },
    /// The directory exists but holds no `*.log` file.
    NoFiles {
        /// The directory.
        path: String,
    },
    /// Refused or failed (a symlinked logs dir, unreadable, ...), why.
    Failed(String),
}

/// How the follower learns of new bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// File notifications (inotify through the `notify` crate), with a
    /// 1 s safety poll.
    Notify,
    /// Polling every this many milliseconds (notifications unavailable).
    Poll(u64),
}

/// One line as the view holds it: already sanitized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// The sanitized text ([`line_text`]).
    pub text: String,
    /// The service's index in [`Opened::services`].
    pub service: u16,
    /// Where it starts in its file.
    pub at: LinePos,
    /// A later piece of a line longer than `logtext::MAX_LINE`.
    pub cont: bool,
    /// The line goes on before this piece, unread ([`RawLine::cut`]):
    /// shown with `… (line continues before: SIZE)`.
    pub cut: bool,
}

impl LogLine {
    /// The view's line for `raw` of service `service`.
    #[must_use]
    pub fn from_raw(raw: &RawLine, service: u16) -> Self {
        Self {
            text: line_text(&raw.bytes),
            service,
            at: raw.at,
            cont: raw.cont,
            cut: raw.cut,
        }
    }
}

impl LogLine {
    /// This line with `redactor`'s values replaced (stackless 0.4.0 redacts
    /// the lines `stackless logs` prints: `crate::model::redact`). Applied
    /// to the sanitized text, where every line enters the view, so what is
    /// searched is what is shown.
    pub fn redact(&mut self, redactor: &Redactor) {
        self.redact_cut(redactor, false);
    }

    /// [`LogLine::redact`], also at its cut ends ([`Redactor::cut_text`]):
    /// a piece after the first of a long line, or one whose start was not
    /// read, may begin inside a value; `cut_end`: it goes on in the next
    /// piece, or is still being written.
    /// Credential-named JSON fields are redacted whatever `redactor` holds
    /// ([`Redactor::log_line`]).
    pub fn redact_cut(&mut self, redactor: &Redactor, cut_end: bool) {
        let _open = self.redact_piece(redactor, cut_end, false);
    }

    /// [`LogLine::redact_cut`], `inside`: the piece before ended inside a
    /// credential-named field's string value ([`Redactor::log_piece`]);
    /// with whether this piece ends inside one. A piece whose piece before
    /// is not at hand (it came in another update) begins as if outside:
    /// what it holds of a value whose key was in that piece is shown.
    pub fn redact_piece(&mut self, redactor: &Redactor, cut_end: bool, inside: bool) -> bool {
        let (text, open) = redactor.log_piece(&self.text, self.cont || self.cut, cut_end, inside);
        if let std::borrow::Cow::Owned(text) = text {
            self.text = text;
        }
        open
    }

    /// A line still being written (no newline yet): its end may be the
    /// beginning of a value.
    pub fn redact_partial(&mut self, redactor: &Redactor) {
        self.redact_cut(redactor, true);
    }
}

/// Redact `lines` in order, each piece of a long line at its cut ends too:
/// a line is followed by its next piece when that one is `cont`.
/// A piece that ends inside a credential-named field's string value, or
/// in a credential-named key whose value is still to come (`password:`),
/// has what follows redacted up to the value's end (a closing quote;
/// the whole of it when none comes): the next piece of its line, and the
/// next line when it is of the same service and directly after it (a
/// multi-line JSON value, a key whose value is on the next line). One
/// line at most is carried so: the line after that one starts outside
/// (a value across three lines shows from its third), and so does a line
/// whose line before is of another service or came in another update.
pub fn redact_lines(lines: &mut [LogLine], redactor: &Redactor) {
    let mut open = false;
    // The line before was itself carried into: it carries no further.
    let mut carried = false;
    let mut service = None;
    for i in 0..lines.len() {
        let cut_end = lines.get(i + 1).is_some_and(|next| next.cont);
        let line = &lines[i];
        let next_line = !line.cont && !carried && service == Some(line.service);
        let inside = open && (line.cont || next_line);
        if !line.cont {
            carried = inside;
        }
        service = Some(line.service);
        open = lines[i].redact_piece(redactor, cut_end, inside);
    }
}

/// Redact every line of `update` (the follower's lines and partial line).
pub fn redact_update(update: &mut LogUpdate, redactor: &Redactor) {
    match update {
        LogUpdate::Lines { lines, .. } => redact_lines(lines, redactor),
        LogUpdate::Partial { line, .. } => line.redact_partial(redactor),
        // A log file named for a secret: its tab is not.
        LogUpdate::NewService { name, .. } => *name = redactor.text(name),
        LogUpdate::Note { .. } | LogUpdate::Watching { .. } | LogUpdate::DirGone { .. } => {}
    }
}

impl Opened {
    /// Redact every service's name (a log file named for a
    /// `secret_history` value: the service name is its file's stem), the
    /// notice (which names files), each tail and partial line.
    pub fn redact(&mut self, redactor: &Redactor) {
        if let Some(notice) = &mut self.notice {
            *notice = redactor.text(notice);
        }
        for service in &mut self.services {
            service.name = redactor.text(&service.name);
            redact_lines(&mut service.lines, redactor);
            if let Some(partial) = &mut service.partial {
                partial.redact_partial(redactor);
            }
        }
    }
}

impl HistorySearch {
    /// Redact the lines found.
    pub fn redact(&mut self, redactor: &Redactor) {
        if let Some((lines, _, _)) = &mut self.found {
            redact_lines(lines, redactor);
        }
    }
}

/// Where older lines are to be read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Older {
    /// Before this position (in this file or an older generation).
    Before(LinePos),
    /// The oldest generation's start was reached.
    Start,
}

/// One service as opened: its name and the tail read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedService {
    /// The service name (the file stem), sanitized.
    pub name: String,
    /// The last lines, oldest first.
    pub lines: Vec<LogLine>,
    /// Where older lines are.
    pub older: Older,
    /// Why it could not be opened (a symlink, unreadable), if so.
    pub error: Option<String>,
    /// The bytes after the last `\n` (a line not ended yet), shown at once
    /// as an unfinished line.
    pub partial: Option<LogLine>,
}

/// The answer to opening the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// What was found.
    pub state: LogsState,
    /// The logs directory, for the title.
    pub path: String,
    /// The services, sorted by name.
    pub services: Vec<OpenedService>,
    /// What was left out, said above every tab: services beyond the most
    /// one view opens, names that are not UTF-8 (sanitized).
    pub notice: Option<String>,
}

/// Something one service's log did, as the follower saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowNote {
    /// Renamed away (rotation) and a new file started: the old one was
    /// read to its end first.
    Rotated,
    /// The file read last left `.log.1` .. `.log.3` before the generations
    /// after it were seen (a burst rotated faster than the follower read):
    /// lines between may be missing here.
    Gap,
    /// It shrank: read again from its start.
    Truncated,
    /// Replaced by something that is not an ordinary file (a symlink): not
    /// followed.
    Refused,
    /// Reading failed (the message).
    Error(String),
}

/// What the follower thread sends (in `Event::Logs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogUpdate {
    /// New complete lines of a service, oldest first.
    Lines {
        /// The logs session they belong to (stale ones are dropped).
        session: u64,
        /// The service index.
        service: u16,
        /// The lines.
        lines: Vec<LogLine>,
    },
    /// A rotation, truncation or failure.
    Note {
        /// The session.
        session: u64,
        /// The service index.
        service: u16,
        /// What happened.
        note: FollowNote,
    },
    /// How the follower watches.
    Watching {
        /// The session.
        session: u64,
        /// Notifications or polling.
        mode: WatchMode,
    },
    /// The unfinished last line of a service (no `\n` yet), stable for
    /// [`PARTIAL_AFTER`]: shown marked until its line ends (then it comes
    /// again in [`LogUpdate::Lines`] and replaces it).
    Partial {
        /// The session.
        session: u64,
        /// The service index.
        service: u16,
        /// The line so far.
        line: LogLine,
    },
    /// A service log that appeared after the open (a service started
    /// later): a new tab, followed from the file's start. Sent before any
    /// of its lines.
    NewService {
        /// The session.
        session: u64,
        /// Its index: the next after every service known so far.
        service: u16,
        /// The service name, sanitized.
        name: String,
        /// `<dir>/<service>.log`, for scroll-back reads (used by the
        /// console, never shown).
        base: std::path::PathBuf,
    },
    /// The logs directory followed went (`gone`: removed under the open
    /// view, by GC or by hand) or came back; sent when it changes.
    DirGone {
        /// The session.
        session: u64,
        /// Whether it is missing now.
        gone: bool,
    },
}

impl LogUpdate {
    /// The session it belongs to.
    #[must_use]
    pub const fn session(&self) -> u64 {
        match self {
            Self::Lines { session, .. }
            | Self::Note { session, .. }
            | Self::Watching { session, .. }
            | Self::Partial { session, .. }
            | Self::NewService { session, .. }
            | Self::DirGone { session, .. } => *session,
        }
    }
}

/// What a search into a service's older history found
/// (`crate::logs::search::search_back`, for `n` past the lines held).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistorySearch {
    /// When a line matched: the lines to show (oldest first, the match
    /// among them), where the lines before them are, and whether they end
    /// just before the lines held (else they replace them).
    pub found: Option<(Vec<LogLine>, Older, bool)>,
    /// Bytes of lines searched.
    pub searched: u64,
    /// It stopped at its bound (this many bytes), not at the start of the
    /// oldest generation.
    pub bound: Option<u64>,
    /// Where a search stopped at its bound: the next `n` goes on from
    /// there (before this position), not from the lines held again.
    pub resume: Option<LinePos>,
}

/// How long a line without its `\n` stays unchanged before the follower
/// shows it as unfinished.
pub const PARTIAL_AFTER: std::time::Duration = std::time::Duration::from_millis(200);

#[cfg(test)]
mod tests {
    use super::*;

    /// A secret across the 4 KiB cut of a long
    /// line is redacted in both pieces, and a line still being written
    /// that ends in the first part of one shows none of it.
    #[test]
    fn a_value_across_two_pieces_is_redacted_in_each() {
        let redactor = Redactor::new(["sk_canary_AAAA1111".to_owned()]);
        let piece = |text: &str, cont: bool| LogLine {
            text: text.to_owned(),
            service: 0,
            at: LinePos::default(),
            cont,
            cut: false,
        };
        let mut lines = vec![
            piece("x=1 token=sk_cana", false),
            piece("ry_AAAA1111 y=2", true),
            piece("next line sk_cana", false),
        ];
        redact_lines(&mut lines, &redactor);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "x=1 token=[redacted]",
                "[redacted] y=2",
                "next line sk_cana"
            ]
        );
        let mut partial = piece("PARTIAL=sk_canary_", false);
        partial.redact_partial(&redactor);
        assert_eq!(partial.text, "PARTIAL=[redacted]");
    }

    /// A credential-named field's value
    /// across the cuts of a long line, with no `secret_history`, is
    /// redacted in every piece; a line that is not a later piece starts
    /// outside it; redacting again changes nothing.
    #[test]
    fn a_credential_fields_value_across_pieces_is_redacted_in_each() {
        let piece = |text: &str, cont: bool| LogLine {
            text: text.to_owned(),
            service: 0,
            at: LinePos::default(),
            cont,
            cut: false,
        };
        let mut lines = vec![
            piece(r#"{"msg":"a","password":"LOGP"#, false),
            piece("W2LOGPW2", true),
            piece(r#"W2\"x","api_key":"LOGAK","n":"#, true),
            piece(r#"1}"#, true),
            piece(r#"next","token":"#, false),
        ];
        redact_lines(&mut lines, &Redactor::default());
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        let expected = [
            r#"{"msg":"a","password":"[redacted]""#,
            "[redacted]",
            r#"[redacted]","api_key":"[redacted]","n":"#,
            "1}",
            r#"next","token":"#,
        ];
        assert_eq!(texts, expected);
        redact_lines(&mut lines, &Redactor::default());
        let again: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(again, expected);
    }

    /// A credential's value on the line after its key, or a JSON string
    /// value across two lines, is redacted there too; one line at most,
    /// and only of the same service.
    #[test]
    fn a_value_continued_on_the_next_line_is_redacted_there() {
        let line = |text: &str, service: u16| LogLine {
            text: text.to_owned(),
            service,
            at: LinePos::default(),
            cont: false,
            cut: false,
        };
        let mut lines = vec![
            line("db_password:", 0),
            line("   CANARY_NEXT", 0),
            line("after", 0),
            line(r#"{"client_secret":"CANARY_A"#, 0),
            line(r#"CANARY_B","n":1}"#, 0),
            line(r#"{"token":"CANARY_C"#, 0),
            line("other service", 1),
            line(
                "X-Api-Key: CANARY_D https://u:CANARY_E@h Bearer CANARY_F",
                0,
            ),
        ];
        redact_lines(&mut lines, &Redactor::default());
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "db_password:",
                "[redacted]",
                "after",
                r#"{"client_secret":"[redacted]""#,
                r#"[redacted]","n":1}"#,
                r#"{"token":"[redacted]""#,
                "other service",
                "X-Api-Key: [redacted] https://[redacted]@h Bearer [redacted]",
            ]
        );
    }

    /// A log file named for a `secret_history` value: the tab shows
    /// `[redacted]`, as an opened service and as one that appears later.
    #[test]
    fn a_service_named_for_a_secret_is_redacted() {
        let redactor = Redactor::new(["sk_live_NAMED".to_owned()]);
        let mut update = LogUpdate::NewService {
            session: 1,
            service: 2,
            name: "sk_live_NAMED".into(),
            base: std::path::PathBuf::from("/l/sk_live_NAMED.log"),
        };
        redact_update(&mut update, &redactor);
        let LogUpdate::NewService { name, .. } = update else {
            panic!("a new service");
        };
        assert_eq!(name, "[redacted]");
    }

    #[test]
    fn substrates_with_logs_on_disk() {
        assert!(logs_on_disk("local"));
        assert!(!logs_on_disk("render"));
        assert!(!logs_on_disk("vercel"));
    }
}
