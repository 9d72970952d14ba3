//! The I/O worker's answers ([`Answer`], `crate::console::io_worker`), applied:
//! each goes to the view that asked, and is dropped when that view was
//! closed or opened again since (another instance's detail, another logs
//! session).
//!
//! Every log line and whole line is redacted here, as it enters the App,
//! by the redactor read with the snapshot on screen
//! (`crate::model::redact`): what is held is what is shown, searched and
//! copied.

use super::App;
use crate::event::Answer;

impl App {
    /// Apply one answer.
    pub(super) fn take_answer(&mut self, mut answer: Answer) {
        redact_answer(&mut answer, &self.shown.snapshot.redactor);
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
            Answer::OperationEvents { id, result } => self.show_operation_events(&id, result),
            Answer::VerifyOutput {
                instance, result, ..
            } => self.show_verify_output(&instance, result),
        }
    }
}

/// Redact the lines of a logs answer (the detail is redacted as it is read:
/// `crate::store::detail`).
///
/// Log lines are redacted whatever `redactor` holds: their credential-named
/// JSON fields are redacted with no `secret_history` too
/// ([`crate::model::redact::Redactor::log_line`]).
fn redact_answer(answer: &mut Answer, redactor: &crate::model::redact::Redactor) {
    match answer {
        Answer::Detail { .. } => {}
        Answer::LogsOpened { opened, .. } => opened.redact(redactor),
        Answer::LogsOlder { lines, .. } => crate::model::logview::redact_lines(lines, redactor),
        Answer::LogsOlderAll { read, .. } => {
            for (_, lines, _) in read {
                crate::model::logview::redact_lines(lines, redactor);
            }
        }
        Answer::LogsSearchOlder { result, .. } | Answer::LogsSearchNewer { result, .. } => {
            result.redact(redactor);
        }
        Answer::LogsLineWhole { text, .. } => text.redact_log(redactor),
        Answer::VerifyOutput { result, .. } => {
            if let Ok(tail) = result {
                tail.text = if tail.cut {
                    redactor.child_tail(&tail.text)
                } else {
                    redactor.child_output(&tail.text)
                };
            }
        }
        Answer::OperationEvents { .. } if redactor.is_empty() => {}
        Answer::OperationEvents { result, .. } => {
            for event in result.iter_mut().flatten() {
                if let Some(step) = &mut event.step {
                    step.step_id = redactor.text(&step.step_id);
                }
                if let Some(code) = &mut event.code {
                    *code = redactor.text(code);
                }
            }
        }
    }
}
