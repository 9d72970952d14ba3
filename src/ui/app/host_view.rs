//! A host's text view over a fleet, as one of the App's layers
//! ([`super::Layer::HostText`]): an instance's detail (Enter) or its logs
//! (`l`, with `/` to search), read over the instance's host's agent
//! (docs/protocol.md "Commands": `detail`, `logs`). The fleet sends the
//! command and hands the view to the App to open
//! (`crate::ui::app::over_fleet::FleetState::take_view`); the host's answers come back
//! as [`ToView`], which the App applies to its open view
//! ([`HostView::apply`]): an answer for another view is dropped.

use serde_json::Value;

use crate::model::text::sanitize_short;
use crate::ui::keys::Context;

/// The most lines a logs view keeps (the oldest go).
pub const MAX_LOG_LINES: usize = 5_000;

/// A text view of one host's: its title, its lines (sanitized), where it
/// is scrolled, the stream it follows and the answer it waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct HostView {
    /// Which of the console's views it is, as the key table names it
    /// (`Detail`, `Logs`): its keys are looked up there.
    pub context: Context,
    /// The title (`detail: alpha on fleet-3`).
    pub title: String,
    /// The lines, sanitized.
    pub lines: Vec<String>,
    /// The first line shown.
    pub scroll: usize,
    /// Follow the end (logs).
    pub follow: bool,
    /// The logs stream's host and command id, while it runs.
    pub logs: Option<(usize, Value)>,
    /// The detail or logs answer this view waits for: (host, command id).
    pub waiting: Option<(usize, Value)>,
    /// The logs view's search (`/`), if any.
    pub search: Option<Search>,
}

/// The logs view's search: its text (matched without case), and whether
/// the prompt still has the keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Search {
    /// What is searched for.
    pub text: String,
    /// The prompt has the keys (typing edits it; Enter keeps it).
    pub editing: bool,
}

/// What a host said for a text view, in the order it came (the fleet's
/// host-message handling makes these; the App applies them).
#[derive(Debug, Clone, PartialEq)]
pub enum ToView {
    /// The answer to a `detail` command: its lines, or the refusal's words.
    Detail {
        /// The host answering.
        host: usize,
        /// The command's id.
        id: Value,
        /// The detail's lines, or why it was refused.
        lines: Result<Vec<String>, String>,
    },
    /// The answer to a `logs` command: the services followed, or the
    /// refusal's words.
    Logs {
        /// The host answering.
        host: usize,
        /// The command's id.
        id: Value,
        /// The services followed, or why it was refused.
        services: Result<Vec<String>, String>,
    },
    /// One line of a logs stream (`cont`: it continues the last line).
    Line {
        /// The host streaming.
        host: usize,
        /// The logs command's id.
        logs: Value,
        /// The service the line is from.
        service: String,
        /// The line's text.
        text: String,
        /// It continues the previous line.
        cont: bool,
    },
    /// A logs stream ended, and why.
    End {
        /// The host streaming.
        host: usize,
        /// The logs command's id.
        logs: Value,
        /// Why it ended.
        reason: String,
    },
    /// The host's connection was lost: its logs stream with it.
    Lost {
        /// The host.
        host: usize,
    },
}

impl HostView {
    /// Apply what a host said: a detail's or logs' answer to the view
    /// waiting for it, a stream's line or end to the view following it,
    /// a lost connection to the view following that host. Anything for
    /// another view changes nothing.
    pub fn apply(&mut self, news: ToView) {
        match news {
            ToView::Detail { host, id, lines } => {
                if self.answers(host, &id) {
                    self.lines = lines.unwrap_or_else(|why| vec![format!("refused: {why}")]);
                }
            }
            ToView::Logs { host, id, services } => {
                if self.answers(host, &id) {
                    match services {
                        Ok(services) => self.lines.insert(
                            0,
                            format!("-- following {} over its agent", services.join(", ")),
                        ),
                        Err(why) => {
                            self.logs = None;
                            self.lines = vec![format!("refused: {why}")];
                        }
                    }
                }
            }
            ToView::Line {
                host,
                logs,
                service,
                text,
                cont,
            } => {
                if self.logs == Some((host, logs)) {
                    self.log(&service, &text, cont);
                }
            }
            ToView::End { host, logs, reason } => {
                if self.logs == Some((host, logs)) {
                    self.logs = None;
                    self.lines.push(format!(
                        "-- the logs stream ended: {}",
                        sanitize_short(&reason, 64)
                    ));
                }
            }
            ToView::Lost { host } => {
                if self.logs.as_ref().is_some_and(|(h, _)| *h == host) {
                    self.logs = None;
                    self.lines
                        .push("-- the host's connection was lost: press l to follow again".into());
                }
            }
        }
    }

    /// Whether this view waits for the answer (host, id): then it no
    /// longer does.
    fn answers(&mut self, host: usize, id: &Value) -> bool {
        let waits = self.waiting.as_ref() == Some(&(host, id.clone()));
        if waits {
            self.waiting = None;
        }
        waits
    }

    /// One line of the followed stream, sanitized; at most
    /// [`MAX_LOG_LINES`] kept.
    fn log(&mut self, service: &str, text: &str, cont: bool) {
        let text = sanitize_short(text, 1_024);
        match self.lines.last_mut() {
            Some(last) if cont => last.push_str(&text),
            _ => self
                .lines
                .push(format!("{} │ {text}", sanitize_short(service, 32))),
        }
        if self.lines.len() > MAX_LOG_LINES {
            let extra = self.lines.len() - MAX_LOG_LINES;
            self.lines.drain(..extra);
            self.scroll = self.scroll.saturating_sub(extra);
        }
    }
}
