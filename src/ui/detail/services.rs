//! The detail view's Services section and its Last teardown section: per
//! service where it runs, its process (pid,
//! alive or dead), its origin, the last observed readiness, its log's size
//! and last line time; then the output of the last teardown this console
//! ran on the instance. Sanitized here.

use super::doc::{MAX_BLOCK_LINES, MAX_LINE_CHARS, Tone, relative, when};
use super::text::text_lines;
use crate::event::Activity;
use crate::model::envelope::read_reason;
use crate::model::services::{LogState, Service};
use crate::model::text::sanitize_short;

/// One labelled line of a section: label (may be empty), text, tone.
pub(crate) type Labelled = (String, String, Tone);

/// The Services section's lines for `services`, times relative to `now`
/// (unix seconds); `active` whether the instance is active (a dead process
/// under an active instance is an error, under a tombstone expected); each
/// service's stage as `stackless list` derives it
/// ([`Service::stage`]: a troubled one under an active instance is a
/// warning, every service of a row that is not active is absent); each
/// live service's origin on `proxy_port` ([`Service::origin`]; none shown
/// while it is not known).
#[must_use]
pub(crate) fn lines(
    services: &[Service],
    active: bool,
    now: i64,
    proxy_port: Option<u16>,
) -> Vec<Labelled> {
    let mut out = Vec::new();
    for service in services {
        let name = sanitize_short(&service.name, MAX_LINE_CHARS);
        // The stage `stackless list`/`status` would give.
        let stage = crate::model::readiness::service_stage(service, !active);
        let mut first = format!(
            "on {} · {}",
            sanitize_short(&service.runs_on, MAX_LINE_CHARS),
            stage.as_str()
        );
        let mut tone = if active && stage.troubled() {
            Tone::Warning
        } else {
            Tone::Plain
        };
        match (&service.start, service.process) {
            (Some(start), Some(process)) => {
                first.push_str(&format!(" · pid {} {}", start.pid, process.as_str()));
                if process.dead() {
                    tone = if active { Tone::Error } else { Tone::Muted };
                }
                if let Some(origin) = proxy_port.and_then(|port| service.origin(port)) {
                    first.push_str(&format!(
                        " · {} (through the stackless proxy)",
                        sanitize_short(&origin, MAX_LINE_CHARS)
                    ));
                }
                if let Some(port) = start.port {
                    first.push_str(&format!(" · port {port}"));
                }
            }
            _ => first.push_str(" · no process recorded"),
        }
        out.push((name, first, tone));
        if service.readiness.is_some() || service.configuration.is_some() {
            let field = |v: &Option<String>| {
                v.as_deref()
                    .map_or_else(|| "?".to_owned(), |s| sanitize_short(s, MAX_LINE_CHARS))
            };
            let at = service
                .observed_at
                .map_or_else(String::new, |at| format!(" ({})", relative(at, now)));
            let error = service
                .error_code
                .as_ref()
                .map_or_else(String::new, |code| {
                    format!(" · error {}", field(&Some(code.clone())))
                });
            let tone = if service.error_code.is_some() || !service.drift.is_empty() {
                Tone::Warning
            } else {
                Tone::Plain
            };
            out.push((
                String::new(),
                format!(
                    "observed: readiness {} · configuration {}{error}{at}",
                    field(&service.readiness),
                    field(&service.configuration)
                ),
                tone,
            ));
            for drift in &service.drift {
                out.push((String::new(), super::v14::drift_text(drift), Tone::Warning));
            }
        }
        out.push((
            String::new(),
            log_line(service, now),
            log_tone(&service.log),
        ));
    }
    out
}

fn log_tone(log: &LogState) -> Tone {
    match log {
        LogState::Present { .. } => Tone::Plain,
        LogState::Refused(_) => Tone::Warning,
        LogState::Missing | LogState::Elsewhere => Tone::Muted,
    }
}

fn log_line(service: &Service, now: i64) -> String {
    let path = service
        .log_path
        .as_deref()
        .map_or_else(String::new, |p| sanitize_short(p, MAX_LINE_CHARS));
    match &service.log {
        LogState::Present {
            size: bytes,
            modified,
        } => format!(
            "log {path} · {} · last line {}",
            crate::ui::text::size(*bytes),
            modified.map_or_else(|| "?".to_owned(), |at| relative(at, now))
        ),
        LogState::Missing => format!("log {path}: not there (not started, or removed)"),
        LogState::Refused(why) => format!("log {path}: {}", sanitize_short(why, MAX_LINE_CHARS)),
        LogState::Elsewhere => format!(
            "log: kept by {}, not on this disk",
            sanitize_short(&service.runs_on, MAX_LINE_CHARS)
        ),
    }
}

/// The Last teardown section: what the newest teardown this console ran on
/// the instance did (`last`), when, its reason, and its stderr tail.
#[must_use]
pub(crate) fn last_teardown(last: &Activity, now: i64, zone: &super::doc::Zone) -> Vec<Labelled> {
    let tone = if last.kind == crate::event::ActivityKind::Failed {
        Tone::Error
    } else {
        Tone::Plain
    };
    let mut out = vec![
        (
            "result".to_owned(),
            format!("{} {}", last.actor, last.kind),
            tone,
        ),
        ("at".to_owned(), when(last.at, now, zone), Tone::Plain),
    ];
    let detail = last.detail.trim();
    if !detail.is_empty() {
        let reason = read_reason(detail);
        out.push((
            "reason".to_owned(),
            sanitize_short(&reason.summary, MAX_LINE_CHARS),
            tone,
        ));
        // A failure's remediation is in its envelope (kept whole on the
        // entry and in the audit trail), not in its line.
        let remediation = reason
            .remediation
            .or_else(|| read_reason(&last.envelope).remediation);
        if let Some(remediation) = remediation {
            out.push((
                "remediation".to_owned(),
                sanitize_short(&remediation, MAX_LINE_CHARS),
                Tone::Plain,
            ));
        }
    }
    let stderr = text_lines(&last.stderr_tail, MAX_BLOCK_LINES);
    if stderr.is_empty() {
        out.push(("stderr".to_owned(), "(empty)".to_owned(), Tone::Muted));
    }
    for (i, line) in stderr.into_iter().enumerate() {
        let label = if i == 0 { "stderr" } else { "" };
        out.push((label.to_owned(), line, Tone::Code));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::services::{ProcessState, StartRecord};

    #[test]
    fn a_dead_service_under_an_active_instance_is_an_error() {
        let service = Service {
            name: "web\u{1b}[2J".into(),
            runs_on: "local".into(),
            start: Some(StartRecord {
                service: "web".into(),
                pid: 4242,
                start_time: 1,
                port: Some(41325),
                hosts: vec!["web.alpha.localhost".into(), "alpha.localhost".into()],
                log: None,
            }),
            process: Some(ProcessState::Dead),
            readiness: Some("ready".into()),
            existence: Some("present".into()),
            configuration: Some("applied".into()),
            observed_at: Some(40),
            error_code: None,
            drift: vec![],
            log_path: Some("/s/logs/sl-1/web.log".into()),
            log: LogState::Present {
                size: 2048,
                modified: Some(70),
            },
        };
        // A dead service has no origin.
        let got = lines(std::slice::from_ref(&service), true, 100, Some(39171));
        assert_eq!(
            got,
            [
                (
                    "web␛[2J".to_owned(),
                    "on local · absent · pid 4242 dead · port 41325".to_owned(),
                    Tone::Error
                ),
                (
                    String::new(),
                    "observed: readiness ready · configuration applied (1m 00s ago)".to_owned(),
                    Tone::Plain
                ),
                (
                    String::new(),
                    "log /s/logs/sl-1/web.log · 2.0 KiB · last line 30s ago".to_owned(),
                    Tone::Plain
                ),
            ]
        );
        assert_eq!(
            lines(std::slice::from_ref(&service), false, 100, None)[0].2,
            Tone::Muted
        );
        // A live one's origin is on the proxy's port, as 0.4.0 builds it.
        let alive = Service {
            process: Some(ProcessState::Alive),
            ..service
        };
        assert_eq!(
            lines(std::slice::from_ref(&alive), true, 100, Some(39171))[0].1,
            "on local · healthy · pid 4242 alive · http://alpha.localhost:39171 (through the \
             stackless proxy) · port 41325"
        );
        assert_eq!(
            lines(&[alive], true, 100, None)[0].1,
            "on local · healthy · pid 4242 alive · port 41325"
        );
    }
}
