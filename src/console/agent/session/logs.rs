//! `serve --stdio`'s `logs` command: one stream at a time, opened on the
//! I/O worker as the logs view opens one, its tail (at most
//! [`LOGS_TAIL`] lines per service) and then each line followed, every
//! line redacted as the view redacts it; ended by `logs_stop`, a new
//! `logs` (`replaced`), or the instance leaving the store (`gone`).

use serde_json::Value;

use super::Session;
use crate::console::actions::Actions;
use crate::event::Request;
use crate::model::protocol::LOGS_TAIL;
use crate::model::protocol::lines;

/// One `logs` command's stream.
pub(super) struct LogsStream {
    /// The command's id (`log.logs`).
    id: Value,
    /// The instance, as stored.
    name: String,
    /// The logs session it asked the I/O worker for.
    pub(super) session: u64,
    /// The service asked for, or all.
    service: Option<String>,
    /// The services' names, by index, once opened.
    services: Vec<String>,
    /// Whether the reply was sent (the open answered).
    answered: bool,
}

impl Session {
    /// A logs stream whose instance left the store ends (`gone`).
    pub(super) fn logs_of_the_gone(&mut self, actions: &Actions<'_>) {
        let latest = &self.latest;
        if let Some(logs) = self
            .logs
            .take_if(|logs| latest.instance(&logs.name).is_none())
        {
            actions.io().send(Request::CloseLogs);
            self.end_logs(&logs, "gone");
        }
    }

    /// End `logs` for `reason` (`stopped`, `replaced`, `gone`): a stream
    /// that was answered gets its `logs_end`; one whose open was not
    /// answered yet gets its one reply instead, a refusal saying why (its
    /// open's answer, coming later, belongs to no stream then).
    fn end_logs(&mut self, logs: &LogsStream, reason: &str) {
        if logs.answered {
            self.send(lines::logs_end(&logs.id, reason));
            return;
        }
        let why = match reason {
            "replaced" => "replaced by a later logs command",
            "stopped" => "stopped by logs_stop",
            _ => "the instance left the store",
        };
        self.send(lines::reply_error(
            &logs.id,
            "refused",
            &format!("logs: {why} before it opened"),
        ));
    }

    pub(super) fn open_logs(
        &mut self,
        actions: &Actions<'_>,
        id: Value,
        name: &str,
        service: Option<String>,
    ) {
        let Some(instance) = self.app.snapshot().instance(name).cloned() else {
            self.send(lines::reply_error(
                &id,
                "refused",
                "refused: no such instance in the store",
            ));
            return;
        };
        let request = match crate::model::logview::LogsRequest::for_instance(&instance) {
            Ok(request) => request,
            Err(reason) => {
                self.send(lines::reply_error(
                    &id,
                    "refused",
                    &format!("logs of {name}: {reason}"),
                ));
                return;
            }
        };
        if let Some(old) = self.logs.take() {
            self.end_logs(&old, "replaced");
        }
        self.logs_session += 1;
        let session = self.logs_session;
        actions.io().send(Request::OpenLogs { session, request });
        self.logs = Some(LogsStream {
            id,
            name: name.to_owned(),
            session,
            service,
            services: Vec::new(),
            answered: false,
        });
    }

    pub(super) fn stop_logs(&mut self, actions: &Actions<'_>, id: &Value, logs: &Value) {
        if let Some(stream) = self.logs.take_if(|l| l.id == *logs) {
            actions.io().send(Request::CloseLogs);
            self.end_logs(&stream, "stopped");
            self.send(lines::reply(lines::Reply::ok(id)));
        } else {
            self.send(lines::reply_error(
                id,
                "refused",
                "refused: no logs stream with that id",
            ));
        }
    }

    pub(super) fn logs_opened(&mut self, mut opened: crate::model::logview::Opened) {
        opened.redact(&self.app.snapshot().redactor);
        let Some(mut logs) = self.logs.take() else {
            return;
        };
        logs.services = opened.services.iter().map(|s| s.name.clone()).collect();
        logs.answered = true;
        let failed = match &opened.state {
            crate::model::logview::LogsState::Ready | crate::model::logview::LogsState::Loading => {
                None
            }
            crate::model::logview::LogsState::Elsewhere => {
                Some("its substrate keeps its logs elsewhere, not on this disk".to_owned())
            }
            crate::model::logview::LogsState::DirGone { path } => {
                Some(format!("no logs directory {path}"))
            }
            crate::model::logview::LogsState::NoFiles { path } => {
                Some(format!("no *.log file in {path}"))
            }
            crate::model::logview::LogsState::Failed(why) => Some(why.clone()),
        };
        let unknown = logs
            .service
            .as_ref()
            .filter(|s| !logs.services.contains(s))
            .cloned();
        if let Some(why) = failed.or_else(|| unknown.map(|s| format!("no service {s} in its logs")))
        {
            self.send(lines::reply_error(
                &logs.id,
                "refused",
                &format!("logs: {why}"),
            ));
            return;
        }
        self.send(lines::reply(lines::Reply {
            services: Some(logs.services.clone()),
            ..lines::Reply::ok(&logs.id)
        }));
        for service in &opened.services {
            if logs.service.as_ref().is_some_and(|s| *s != service.name) {
                continue;
            }
            // The last LOGS_TAIL lines: a line is its first piece and the
            // pieces that continue it.
            let mut starts = 0;
            let start = service
                .lines
                .iter()
                .rposition(|line| {
                    starts += usize::from(!line.cont);
                    starts == LOGS_TAIL
                })
                .unwrap_or(0);
            for line in &service.lines[start..] {
                for text in lines::log(&logs.id, &service.name, &line.text, line.cont) {
                    self.send(text);
                }
            }
        }
        self.logs = Some(logs);
    }

    pub(super) fn logs_update(&mut self, mut update: crate::model::logview::LogUpdate) {
        use crate::model::logview::LogUpdate;
        crate::model::logview::redact_update(&mut update, &self.app.snapshot().redactor);
        let Some(logs) = self.logs.as_mut() else {
            return;
        };
        match update {
            LogUpdate::Lines {
                service,
                lines: read,
                ..
            } => {
                let name = logs
                    .services
                    .get(usize::from(service))
                    .cloned()
                    .unwrap_or_default();
                if logs.service.as_ref().is_some_and(|s| *s != name) {
                    return;
                }
                let id = logs.id.clone();
                for line in read {
                    for text in lines::log(&id, &name, &line.text, line.cont) {
                        self.send(text);
                    }
                }
            }
            LogUpdate::NewService { service, name, .. } => {
                let at = usize::from(service);
                if logs.services.len() <= at {
                    logs.services.resize(at + 1, String::new());
                }
                logs.services[at] = name;
            }
            LogUpdate::DirGone { gone: true, .. } => {
                if let Some(logs) = self.logs.take() {
                    self.end_logs(&logs, "gone");
                }
            }
            _ => {}
        }
    }
}
