//! What the full-text view shows for the selected line of each pane
//! (Enter or `e`): the line's every field whole, an error envelope
//! labelled ([`crate::model::fulltext`]), a teardown's stderr tail. Built
//! once when the view opens, from the snapshot and the logs; sanitized
//! there ([`FullText`]), so drawing only wraps.

use crate::event::{Activity, SupervisorNote};
use crate::model::fulltext::FullText;
use crate::model::{Instance, Liveness, Operation, ReapAttempt, time};
use crate::ui::detail::{Zone, when};
use crate::ui::opview;

/// Labels of [`opview::operation_lines`] that describe the error, which
/// [`operation`] shows whole from `error_json` instead.
const ERROR_LABELS: [&str; 5] = ["code", "message", "step", "remediation", "error"];

/// An Activity entry (folded `count` times): when, who, what, the whole
/// detail (an envelope labelled) and the teardown's stderr tail.
#[must_use]
pub(crate) fn activity(entry: &Activity, count: u32, zone: &Zone) -> FullText {
    let mut full = FullText::new(&format!(
        "Activity · {} {} {}",
        time::clock_in(entry.at, zone),
        entry.actor,
        entry.kind
    ));
    full.labelled("at", &time::stamp(entry.at, zone));
    full.labelled("actor", &entry.actor.to_string());
    if !entry.instance.is_empty() {
        full.labelled("instance", &entry.instance);
    }
    full.labelled("what", &entry.kind.to_string());
    if entry.restored {
        full.labelled(
            "recorded",
            "by an earlier console: read back from the audit trail (audit.jsonl) at start",
        );
    }
    if count > 1 {
        full.labelled("repeated", &format!("{count} times (the newest shown)"));
    }
    if let Some(took) = entry.duration {
        full.labelled(
            "took",
            &time::span(i64::try_from(took.as_secs()).unwrap_or(i64::MAX)),
        );
    }
    let detail = time::restamp(entry.detail.trim(), zone);
    if !detail.is_empty() {
        full.blank();
        full.error(&detail);
    }
    command_answer(&mut full, entry.kind.answered_by(), &entry.envelope);
    teardown_output(&mut full, &entry.stderr_tail);
    full
}

/// The verify overlay (`v`, when its outcome arrives): the instance, the
/// check (its tier: `default` is `[stack.verify]`) and its result; when
/// it passed, the renewed lease; when it failed, the failing check's code,
/// message and remediation, then its output's last lines and where the
/// whole output is (stackless 0.4.0 `verify.rs:287-318`, `error.rs`).
#[must_use]
pub(crate) fn verify(entry: &Activity, zone: &Zone) -> FullText {
    use crate::model::verbs::{Outcome, Verb, interpret};
    let mut full = FullText::new(&format!("Verify · {}", entry.instance));
    full.labelled("instance", &entry.instance);
    full.labelled("at", &time::stamp(entry.at, zone));
    if let Some(took) = entry.duration {
        full.labelled("took", &took_text(took));
    }
    let answer = match interpret(Verb::Verify, Some(0), &entry.envelope) {
        Outcome::Verified(passed) => Outcome::Verified(passed),
        _ => interpret(Verb::Verify, Some(1), &entry.envelope),
    };
    match answer {
        Outcome::Verified(passed) => {
            full.labelled("check", passed.tier.as_deref().unwrap_or("default"));
            full.labelled(
                "result",
                &format!(
                    "passed (exit {}, {} ms)",
                    passed.exit_status, passed.duration_ms
                ),
            );
            let lease = passed.lease_remaining_secs.map_or_else(
                || "no lease recorded".to_owned(),
                |left| {
                    format!(
                        "renewed: {} left",
                        time::span(i64::try_from(left).unwrap_or(i64::MAX))
                    )
                },
            );
            full.labelled("lease", &lease);
            full.labelled("output", &passed.log_path);
        }
        Outcome::Refused(error, context) => {
            let ran = matches!(error.code.as_str(), "verify.failed" | "verify.timeout");
            if ran {
                // The console runs `verify NAME` (no `--tier`): the
                // default check, `[stack.verify]`; the failure names none.
                full.labelled("check", "default");
            }
            full.labelled("result", "failed");
            full.labelled("code", &error.code);
            full.labelled("message", &error.message);
            if let Some(fix) = &error.remediation {
                full.labelled("remediation", fix);
            }
            // The check ran: stackless renewed the lease before running it
            // (stackless 0.4.0 `verify.rs:139`), pass or fail.
            if ran {
                full.labelled(
                    "lease",
                    "renewed when the check started, as every verify does",
                );
            }
            if let Some(path) = &context.log_path {
                full.labelled("output", path);
            }
            if let Some(tail) = context.log_tail.as_deref().filter(|t| !t.trim().is_empty()) {
                full.blank();
                full.line("the check's last lines:");
                full.text(tail);
            }
        }
        Outcome::Renewed { .. } | Outcome::Broken(_) => {
            full.labelled("result", "did not run to an answer");
            full.blank();
            full.error(entry.detail.trim());
            teardown_output(&mut full, &entry.stderr_tail);
        }
    }
    full
}

/// The verify overlay's title for `instance` (sanitized as
/// [`FullText::new`] does): the output read later goes under the overlay
/// with this title.
#[must_use]
pub(crate) fn verify_title(instance: &str) -> String {
    FullText::new(&format!("Verify · {instance}")).title
}

/// A passed check's output, read from its file (its last
/// [`crate::event::VERIFY_OUTPUT_BYTES`]), under the overlay: its lines,
/// or why the file could not be read.
pub(crate) fn verify_output(full: &mut FullText, result: Result<crate::event::TailText, String>) {
    full.blank();
    match result {
        Ok(tail) if tail.text.trim().is_empty() => full.line("the check printed nothing"),
        Ok(tail) => {
            full.line(if tail.cut {
                "the check's output (its last 64 KiB):"
            } else {
                "the check's output:"
            });
            full.text(&tail.text);
        }
        Err(e) => full.line(&format!("the check's output cannot be read: {e}")),
    }
}

/// How long a verify took, in the unit its check's own result uses under
/// 10 s (`327 ms`, beside `passed (exit 0, 12 ms)`), else as the console
/// says spans (`1m 05s`).
fn took_text(took: std::time::Duration) -> String {
    if took < std::time::Duration::from_secs(10) {
        format!("{} ms", took.as_millis())
    } else {
        time::span(i64::try_from(took.as_secs()).unwrap_or(i64::MAX))
    }
}

/// The `--json` answer section of a failed command (`command`: `down
/// --json` for a teardown, `up --json` for a renew, `verify --json` for a
/// verify: [`crate::event::ActivityKind::answered_by`]): its whole answer,
/// an envelope labelled (code, message, remediation, context, ...);
/// nothing when none was kept.
pub(crate) fn command_answer(full: &mut FullText, command: &str, envelope: &str) {
    if envelope.trim().is_empty() {
        return;
    }
    full.blank();
    full.line(&format!("what `{command}` answered:"));
    full.error(envelope.trim());
}

/// The `stderr` section of a teardown: its last 4 KiB as `down` wrote
/// them (nothing when it wrote none).
pub(crate) fn teardown_output(full: &mut FullText, stderr_tail: &str) {
    if stderr_tail.trim().is_empty() {
        return;
    }
    full.blank();
    full.line("stderr of the teardown (its last 4 KiB):");
    full.text(stderr_tail);
}

/// A Supervisor entry: when, what kind, the whole text.
#[must_use]
pub(crate) fn supervisor(note: &SupervisorNote, count: u32, zone: &Zone) -> FullText {
    let mut full = FullText::new(&format!("Supervisor · {}", time::clock_in(note.at, zone)));
    full.labelled("at", &time::stamp(note.at, zone));
    full.labelled("kind", &format!("{:?}", note.kind));
    if count > 1 {
        full.labelled("repeated", &format!("{count} times (the newest shown)"));
    }
    full.blank();
    full.text(note.text.trim());
    full
}

/// A Backoffs row: the attempts, the retry, the whole `last_error` (an
/// envelope labelled).
#[must_use]
pub(crate) fn backoff(attempt: &ReapAttempt, now: i64, zone: &Zone) -> FullText {
    let mut full = FullText::new(&format!("Backoff · {}", attempt.instance));
    full.labelled("instance", &attempt.instance);
    full.labelled("attempts", &attempt.attempts.to_string());
    full.labelled(
        "next retry",
        &format!(
            "{} ({})",
            time::stamp(attempt.next_retry_at, zone),
            time::retry_text(attempt.next_retry_at, now)
        ),
    );
    full.blank();
    if attempt.last_error.trim().is_empty() {
        full.line("last_error is empty");
    } else {
        full.error(&attempt.last_error);
    }
    if matches!(attempt.last_error.trim(), "}" | "]") {
        full.blank();
        full.line(
            "not an envelope: the stackless daemon keeps only the last line of `down --json`",
        );
    }
    full
}

/// An operation (Operations pane, operation overlay): its fields, then its
/// whole `error_json` (labelled when it is an error object).
#[must_use]
pub(crate) fn operation(op: &Operation, now: i64, zone: &Zone) -> FullText {
    let mut full = FullText::new(&format!("Operation · {} {}", op.verb, op.instance));
    for (label, value) in opview::operation_lines(op, now, zone) {
        if !ERROR_LABELS.contains(&label) {
            full.labelled(label, &value);
        }
    }
    if let Some(error) = op.error_json.as_deref().filter(|e| !e.trim().is_empty()) {
        full.blank();
        full.error(error);
    }
    full
}

/// The open operation overlay's operation (`e` on it): [`operation`], then
/// every step event read for it, in the order written (the overlay shows
/// only those that fit).
#[must_use]
pub(crate) fn operation_with_events(
    op: &Operation,
    events: &[crate::model::operation::OpEvent],
    now: i64,
    zone: &Zone,
) -> FullText {
    let mut full = operation(op, now, zone);
    full.blank();
    full.labelled(
        "events",
        &format!(
            "{} in order (times {})",
            events.len(),
            crate::model::time::zone_label(now, zone)
        ),
    );
    for event in events {
        full.line(&opview::event_line(event, zone));
    }
    full
}

/// An Instances row: every column whole (name, substrate, status, lease,
/// lock, the last reap error).
#[must_use]
pub(crate) fn instance(
    instance: &Instance,
    liveness: Option<&Liveness>,
    attempt: Option<&ReapAttempt>,
    (now, zone): (i64, &Zone),
) -> FullText {
    let mut full = FullText::new(&format!("Instance · {}", instance.name));
    full.labelled("name", &instance.name);
    full.labelled("substrate", &instance.substrate);
    full.labelled("status", instance.status.as_str());
    if let Some(at) = instance.created_at {
        full.labelled("created", &when(at, now, zone));
    }
    match instance.lease {
        Some(lease) => full.labelled("lease", &time::lease_text(lease.expires_at, now)),
        None => full.labelled("lease", "none"),
    }
    if let Some(lock) = &instance.lock {
        let state = liveness.map_or_else(|| "unprobed".to_owned(), ToString::to_string);
        full.labelled(
            "lock",
            &format!("{} by pid {} ({state})", lock.operation, lock.holder_pid),
        );
    }
    for anomaly in &instance.anomalies {
        full.labelled("anomaly", anomaly);
    }
    if let Some(attempt) = attempt {
        full.labelled(
            "reap",
            &format!(
                "{} attempts, {}",
                attempt.attempts,
                time::retry_text(attempt.next_retry_at, now)
            ),
        );
        full.blank();
        full.error(&attempt.last_error);
    }
    full
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ActivityKind, Actor};

    /// A verify's run time reads in the unit of its check's result beside
    /// it (`327 ms`, not `0s`), and as a span from 10 s on.
    #[test]
    fn a_verify_took_reads_in_one_unit_with_its_result() {
        let mut entry = Activity::new(
            3_600,
            Actor::Operator,
            "alpha",
            ActivityKind::Verified,
            "default check passed",
        )
        .with_envelope(r#"{"schema_version":2,"ok":true,"instance":"alpha","duration_ms":327,"exit_status":0,"log_path":"/s/logs/verify.log","lease_remaining_secs":7200}"#);
        entry.duration = Some(std::time::Duration::from_millis(327));
        let full = verify(&entry, &Zone::UTC);
        let took: Vec<&String> = full
            .lines
            .iter()
            .filter(|l| l.starts_with("took"))
            .collect();
        assert_eq!(took.len(), 1, "{:#?}", full.lines);
        assert!(took[0].ends_with(" 327 ms"), "{took:?}");
        assert_eq!(took_text(std::time::Duration::from_secs(65)), "1m 05s");
    }

    #[test]
    fn activity_shows_the_whole_envelope_and_the_stderr_tail() {
        let mut entry = Activity::new(
            3_600,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            r#"{"ok":false,"error":{"code":"engine.teardown.survivors","message":"left survivors","remediation":"run down again"}}"#,
        );
        entry.stderr_tail = "warn: one\n\u{1b}[31mred\n".into();
        let full = activity(&entry, 2, &Zone::UTC);
        let envelope = r#"{"ok":false,"schema_version":2,"error":{"code":"engine.teardown.survivors","message":"left \u001b[31m","remediation":"re-run down \u202e","context":{"survivors":["local:1234"]}}}"#;
        let summary = Activity::new(
            3_600,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "teardown left survivors (attempt 1, retry at 01:01:00)",
        )
        .with_envelope(envelope);
        assert_eq!(
            activity(&summary, 1, &Zone::UTC).lines[4..],
            [
                "",
                "teardown left survivors (attempt 1, retry at 01:01:00)",
                "",
                "what `down --json` answered:",
                "code         engine.teardown.survivors",
                "message      left ␛[31m",
                "remediation  re-run down \u{fffd}",
                "context      {",
                "               \"survivors\": [",
                "                 \"local:1234\"",
                "               ]",
                "             }",
            ]
        );
        // A failed renew keeps `up --json`'s answer, a verify `verify --json`'s.
        for (kind, label) in [
            (ActivityKind::RenewFailed, "what `up --json` answered:"),
            (ActivityKind::VerifyFailed, "what `verify --json` answered:"),
        ] {
            let failed = Activity::new(3_600, Actor::Operator, "golf", kind, "refused")
                .with_envelope(envelope);
            assert_eq!(
                activity(&failed, 1, &Zone::UTC).lines[4..8],
                ["", "refused", "", label],
                "{kind:?}"
            );
        }
        assert_eq!(full.title, "Activity · 01:00:00 reaper failed");
        assert_eq!(
            full.lines,
            [
                "at           1970-01-01T01:00:00Z",
                "actor        reaper",
                "instance     golf",
                "what         failed",
                "repeated     2 times (the newest shown)",
                "",
                "code         engine.teardown.survivors",
                "message      left survivors",
                "remediation  run down again",
                "",
                "stderr of the teardown (its last 4 KiB):",
                "warn: one",
                "␛[31mred",
            ]
        );
    }

    /// The real 0.4.0 `down --json` failure (the
    /// `schema_version` inside `error`, `step` and `instance` given:
    /// docs/stackless-state-store.md "`down --json` output").
    #[test]
    fn the_real_down_failure_envelope_is_labelled() {
        let envelope = r#"{"ok":false,"error":{"schema_version":2,"code":"engine.teardown.survivors","message":"teardown left survivors","step":"stop","instance":"golf","remediation":"run `stackless down golf` again","context":{"survivors":["local:1234"]}}}"#;
        let mut full = FullText::new("t");
        command_answer(&mut full, "down --json", envelope);
        let text = full.lines.join("\n");
        assert!(text.starts_with("\nwhat `down --json` answered:\ncode         engine.teardown.survivors\nmessage      teardown left survivors\n"), "{text}");
        assert!(
            text.contains("\nremediation  run `stackless down golf` again\n"),
            "{text}"
        );
        assert!(text.contains("\ncontext      {\n"), "{text}");
        assert!(
            !text.contains(r#"{"ok""#),
            "not the raw one-line JSON: {text}"
        );
        assert!(
            text.contains("\nstep         stop\n") && text.contains("\ninstance     golf\n"),
            "{text}"
        );
    }
}
