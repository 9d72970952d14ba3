//! The view model of the controller's operations (stackless 0.4.0): the
//! Operations pane's rows ([`operation_row`]), the pending operation on an
//! Instances row ([`pending_text`]), the operation overlay's lines
//! ([`operation_lines`]) and the cancel question ([`cancel_question`]).
//! Pure: `now` is a parameter (unix seconds); every stored string is
//! sanitized here ([`crate::model::text::sanitize_short`]).

use super::text::{CUT_LONG, CUT_SHORT};
use crate::model::envelope::parse_error;
use crate::model::op_rules::short_id;
use crate::model::text::sanitize_short;
use crate::model::{OpStatus, Operation, time};

/// Shown in the DETAIL column (and after the pending text) when a cancel
/// was asked for.
pub const CANCEL_REQUESTED: &str = "cancel requested";

/// One row of the Operations pane, as sanitized text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationRow {
    /// VERB column: `up`, `down`, `verify`, `gc`.
    pub verb: String,
    /// INSTANCE column: the name at submit time.
    pub instance: String,
    /// STATUS column.
    pub status: String,
    /// AGE column: how long it has been pending (`3s`, `2m 05s`), or how
    /// long ago it finished (`5m 02s ago`).
    pub age: String,
    /// TOOK column: how long a finished one ran (`0.4s`, its wait in the
    /// queue left out: [`Operation::took`]); empty while pending.
    pub took: String,
    /// DETAIL column: the step progress (`start:web 2/3`) and `cancel
    /// requested` of a pending one; `code: message` of a failure.
    pub detail: String,
    /// The status, for styling.
    pub state: OpStatus,
}

/// `code: message` of a stored failure, else the raw text (cut), else
/// empty.
fn failure_summary(op: &Operation) -> String {
    match op.error_json.as_deref() {
        None => String::new(),
        Some(text) => parse_error(text).map_or_else(
            || sanitize_short(text.trim(), CUT_LONG),
            |e| sanitize_short(&e.summary(), CUT_LONG),
        ),
    }
}

/// Build one Operations row at `now`.
#[must_use]
pub fn operation_row(op: &Operation, now: i64) -> OperationRow {
    let pending = op.status.is_pending();
    let mut detail = Vec::new();
    if pending && let Some(progress) = &op.progress {
        detail.push(sanitize_short(&progress.text(), CUT_SHORT));
    }
    if op.cancel_requested && op.status != OpStatus::Cancelled {
        detail.push(CANCEL_REQUESTED.to_owned());
    }
    let failure = failure_summary(op);
    if !failure.is_empty() {
        detail.push(failure);
    }
    OperationRow {
        verb: sanitize_short(&op.verb, CUT_SHORT),
        instance: sanitize_short(&op.instance, CUT_SHORT),
        status: sanitize_short(op.status.as_str(), CUT_SHORT),
        age: if pending {
            time::span(op.age(now))
        } else {
            time::ago(op.updated_at, now)
        },
        took: if pending { String::new() } else { op.took(now) },
        detail: detail.join(" · "),
        state: op.status.clone(),
    }
}

/// A pending operation as the Instances row shows it: `down running 3s`,
/// `up queued 12s`, with ` · cancel requested` when asked.
#[must_use]
pub fn pending_text(op: &Operation, now: i64) -> String {
    let mut text = format!(
        "{} {} {}",
        sanitize_short(&op.verb, CUT_SHORT),
        op.status,
        time::span(op.age(now))
    );
    if op.cancel_requested {
        text.push_str(" · ");
        text.push_str(CANCEL_REQUESTED);
    }
    text
}

/// The cancel question, naming the command as it will run with `program`
/// (`--stackless`): `Cancel down alpha (op 3f2c…)? This runs: stackless
/// operation cancel 3f2c… --json [y/N]` (the whole id on the command
/// line, shell-quoted for reading; an id not safe to pass says so).
#[must_use]
pub fn cancel_question(op: &Operation, program: &str) -> String {
    let runs = crate::controller::cancel::argv(&program.into(), &op.id).map_or_else(
        |why| format!("nothing ({why})"),
        |argv| {
            let words: Vec<String> = argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            crate::reaper::teardown::shell_line(&crate::model::redact::shown_argv(&words))
        },
    );
    format!(
        "Cancel {} {} (op {})? This runs: {} [y/N]",
        sanitize_short(&op.verb, CUT_SHORT),
        sanitize_short(&op.instance, CUT_SHORT),
        sanitize_short(&short_id(&op.id), CUT_SHORT),
        sanitize_short(&runs, crate::ui::text::CUT_LONG)
    )
}

fn at(at: i64, now: i64, zone: &jiff::tz::TimeZone) -> String {
    format!("{} ({})", time::stamp(at, zone), time::ago(at, now))
}

/// The operation overlay's lines, `(label, text)`: id, verb, instance,
/// birth id, status, times (a finished one's run time as `took`, its wait
/// in the queue as `queued`), progress, cancel, and for a failure its code,
/// message, step and remediation.
#[must_use]
pub fn operation_lines(
    op: &Operation,
    now: i64,
    zone: &jiff::tz::TimeZone,
) -> Vec<(&'static str, String)> {
    let mut lines = vec![
        ("id", sanitize_short(&op.id, CUT_SHORT)),
        ("verb", sanitize_short(&op.verb, CUT_SHORT)),
        ("instance", sanitize_short(&op.instance, CUT_SHORT)),
        (
            "birth",
            op.instance_id.as_deref().map_or_else(
                || "- (not bound)".to_owned(),
                |id| sanitize_short(id, CUT_SHORT),
            ),
        ),
        ("status", sanitize_short(op.status.as_str(), CUT_SHORT)),
        ("submitted", at(op.created_at, now, zone)),
    ];
    if op.status == OpStatus::Running
        && let (Some(queued), Some(ran)) = (op.queued_secs(), op.run_ms(now))
    {
        // The wait in the queue apart from the run (its first step on).
        lines.push(("queued", time::span(queued)));
        lines.push(("running for", crate::model::operation::run_span(ran)));
    } else if op.status.is_pending() {
        lines.push(("pending for", time::span(op.age(now))));
    } else {
        lines.push(("finished", at(op.updated_at, now, zone)));
        lines.push(("took", op.took(now)));
        if let Some(queued) = op.queued_secs() {
            lines.push(("queued", time::span(queued)));
        }
    }
    if let Some(progress) = &op.progress {
        lines.push((
            "progress",
            format!(
                "{} ({})",
                sanitize_short(&progress.text(), CUT_SHORT),
                sanitize_short(&progress.event, CUT_SHORT)
            ),
        ));
    }
    lines.push((
        "cancel",
        if op.cancel_requested {
            "requested".to_owned()
        } else {
            "no".to_owned()
        },
    ));
    if let Some(text) = op.error_json.as_deref() {
        match parse_error(text) {
            Some(error) => {
                lines.push(("code", sanitize_short(&error.code, CUT_SHORT)));
                lines.push(("message", sanitize_short(&error.message, CUT_LONG)));
                if let Some(step) = &error.step {
                    lines.push(("step", sanitize_short(step, CUT_SHORT)));
                }
                lines.push((
                    "remediation",
                    error
                        .remediation
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), |r| sanitize_short(r, CUT_LONG)),
                ));
            }
            None => lines.push(("error", sanitize_short(text.trim(), CUT_LONG))),
        }
    }
    lines
}

/// One event as the overlay lists it: its time of day to the millisecond
/// in `zone`, what happened, the step and its place in the plan, and how
/// long the step took: `04:31:07.650  Completed  start:web 2/3  412ms`
/// (`Failed` adds its code). Sanitized.
#[must_use]
pub fn event_line(event: &crate::model::operation::OpEvent, zone: &jiff::tz::TimeZone) -> String {
    let at = event.at_ms.map_or_else(
        || "--:--:--.---".to_owned(),
        |ms| {
            format!(
                "{}.{:03}",
                time::clock_in(ms.div_euclid(1000), zone),
                ms.rem_euclid(1000)
            )
        },
    );
    let mut text = format!("{at}  {:<9}", sanitize_short(&event.event, CUT_SHORT));
    if let Some(step) = &event.step {
        text.push_str("  ");
        text.push_str(&sanitize_short(&step.text(), CUT_SHORT));
    }
    if let Some(took) = event.duration_ms {
        text.push_str("  ");
        // Steps often take milliseconds: said as such under a second.
        if took < 1000 {
            text.push_str(&format!("{took}ms"));
        } else {
            text.push_str(&crate::model::operation::run_span(took));
        }
    }
    if let Some(code) = &event.code {
        text.push_str("  ");
        text.push_str(&sanitize_short(code, CUT_SHORT));
    }
    text.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::operation::StepProgress;

    fn op(status: OpStatus) -> Operation {
        Operation {
            id: "3f2c9a1e-5b7d-4c1e-9f00-0123456789ab".into(),
            instance: "alpha".into(),
            instance_id: Some("0123456789abcdef0123456789abcdef".into()),
            verb: "down".into(),
            status,
            cancel_requested: false,
            created_at: 1_000,
            updated_at: 1_002,
            error_json: None,
            progress: None,
            ran: None,
        }
    }

    #[test]
    fn rows_pending_and_finished() {
        let mut running = op(OpStatus::Running);
        running.verb = "up".into();
        running.cancel_requested = true;
        running.progress = Some(StepProgress {
            event: "Started".into(),
            step_id: "start:web".into(),
            index: 2,
            total: 3,
        });
        let row = operation_row(&running, 1_125);
        assert_eq!(
            (row.age.as_str(), row.took.as_str(), row.detail.as_str()),
            ("2m 05s", "", "start:web 2/3 · cancel requested")
        );
        assert_eq!(
            pending_text(&running, 1_003),
            "up running 3s · cancel requested"
        );
        let mut failed = op(OpStatus::Failed);
        failed.error_json = Some(
            r#"{"schema_version":2,"code":"engine.teardown.survivors","message":"1 resource\u001b[2J survived"}"#
                .into(),
        );
        let row = operation_row(&failed, 1_062);
        assert_eq!(
            (row.age.as_str(), row.took.as_str(), row.detail.as_str()),
            (
                "1m 00s ago",
                "≤2s",
                "engine.teardown.survivors: 1 resource␛[2J survived"
            )
        );
        // TOOK is the run time; the overlay says the
        // wait apart.
        let mut ran = op(OpStatus::Succeeded);
        ran.updated_at = 1_199;
        ran.ran = Some(crate::model::operation::Ran {
            started_ms: 1_199_300,
            last_ms: 1_199_712,
        });
        assert_eq!(operation_row(&ran, 1_260).took, "0.4s");
        let zone = jiff::tz::TimeZone::UTC;
        let lines = operation_lines(&ran, 1_260, &zone);
        let took: Vec<_> = lines
            .iter()
            .filter(|(label, _)| ["took", "queued"].contains(label))
            .collect();
        assert_eq!(
            took,
            [
                &("took", "0.4s".to_owned()),
                &("queued", "3m 19s".to_owned())
            ]
        );
        assert_eq!(
            cancel_question(&op(OpStatus::Queued), "stackless"),
            format!(
                "Cancel down alpha (op 3f2c…)? This runs: stackless operation cancel {} --json [y/N]",
                op(OpStatus::Queued).id
            )
        );
    }

    /// A running operation that has begun its steps says its wait in the
    /// queue apart from its run so far; its events read one a line.
    #[test]
    fn a_running_operation_says_its_wait_apart_and_events_read_whole() {
        let mut running = op(OpStatus::Running);
        running.verb = "up".into();
        running.ran = Some(crate::model::operation::Ran {
            started_ms: 1_199_250,
            last_ms: 1_200_000,
        });
        let lines = operation_lines(&running, 1_203, &jiff::tz::TimeZone::UTC);
        let find = |label: &str| {
            lines
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, t)| t.as_str())
        };
        assert_eq!(find("queued"), Some("3m 19s"));
        assert_eq!(find("running for"), Some("3.7s"));
        assert_eq!(find("pending for"), None);
        let zone = jiff::tz::TimeZone::UTC;
        let event = |json: &str| {
            event_line(
                &crate::model::operation::OpEvent::parse(1, json, Some(1_199)),
                &zone,
            )
        };
        assert_eq!(
            event(
                r#"{"event":"Failed","step_id":"start:web","index":2,"total":3,"code":"local.health_failed","at_epoch_ms":1199250,"duration_ms":2500}"#
            ),
            "00:19:59.250  Failed     start:web 2/3  2.5s  local.health_failed"
        );
        assert_eq!(
            event(
                r#"{"event":"Completed","step_id":"x\u001b[2J","index":1,"total":1,"at_epoch_ms":1199001,"duration_ms":7}"#
            ),
            "00:19:59.001  Completed  x␛[2J 1/1  7ms"
        );
        assert_eq!(
            event(r#"{"event":"VerificationJournal","version":1}"#),
            "00:19:59.000  VerificationJournal"
        );
    }
}
