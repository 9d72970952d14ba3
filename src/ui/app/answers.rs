//! The I/O worker's answers ([`Answer`], `crate::console::io_worker`), applied:
//! each goes to the view that asked, and is dropped when that view was
//! closed or opened again since (another instance's detail, another logs
//! session).

use super::App;
use crate::event::Answer;

impl App {
    /// Apply one answer.
    pub(super) fn take_answer(&mut self, answer: Answer) {
        match answer {
            Answer::Detail { name, result } => self.show_detail(&name, result),
            Answer::LogsOpened {
                session,
                opened,
                bases,
            } => self.show_logs(session, opened, bases),
            Answer::LogsOlder {
                session,
                service,
                lines,
                older,
            } => self.show_older_logs(session, service, lines, older),
            Answer::LogsOlderAll { session, read } => self.show_older_all(session, read),
            Answer::LogsSearchOlder {
                session,
                service,
                result,
            } => self.show_search_older(session, service, result),
            Answer::LogsSearchNewer {
                session,
                service,
                result,
            } => self.show_search_newer(session, service, result),
            Answer::LogsLineWhole { session, text } => self.show_log_line(session, text),
        }
    }
}
