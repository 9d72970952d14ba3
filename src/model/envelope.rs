//! `stackless down --json` output: the envelopes, the error objects of the
//! controller's queue, and the failure reason this console records.
//!
//! What the releases print (docs/stackless-releases.md, "CLI JSON outputs";
//! cli-0.4.0/src/output.rs:458-488, 577-600; core-0.3.3/src/fault.rs:233-256),
//! always pretty-printed (multi-line) on stdout:
//! - success, exit 0, in **every** release:
//!   `{"schema_version": 1|2, "ok": true, "instance": N, "outcome":
//!   "destroyed"|"already_down"}` (`"spend"` only when present);
//! - failure, exit 1: `{"ok": false, "error": {"schema_version": 1|2,
//!   "code", "message", "step"?, "instance"?, "remediation", "context":
//!   {...}}}` (0.2/0.3 write 1, 0.4.0 writes 2; the same code space).
//!
//! The 0.4.0 controller stores the bare error object (the envelope's
//! `error`) in `operations.error_json`. [`parse_error`] reads either form.

use serde::{Deserialize, Serialize};

/// The error object of a failure envelope, or a bare one
/// (`operations.error_json`). Unknown fields are ignored (codes and fields
/// are stable API; new ones may come). Texts are as stored: sanitize before
/// display.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct EnvelopeError {
    /// 1 (stackless 0.2/0.3) or 2 (0.4.0); `None` when absent.
    #[serde(default)]
    pub schema_version: Option<i64>,
    /// Stable machine code, e.g. `state.lock.held`.
    pub code: String,
    /// One-sentence human message.
    #[serde(default)]
    pub message: String,
    /// What the operator can do about it.
    #[serde(default)]
    pub remediation: Option<String>,
    /// The engine step that failed, when known.
    #[serde(default)]
    pub step: Option<String>,
    /// The instance name, when the error names one.
    #[serde(default)]
    pub instance: Option<String>,
}

impl EnvelopeError {
    /// `code: message` (the code alone when there is no message).
    #[must_use]
    pub fn summary(&self) -> String {
        if self.message.is_empty() {
            self.code.clone()
        } else {
            format!("{}: {}", self.code, self.message)
        }
    }
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    ok: Option<bool>,
    error: Option<EnvelopeError>,
}

/// What a successful `down --json` says it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownOutcome {
    /// `"destroyed"`: the instance was torn down.
    Destroyed,
    /// `"already_down"`: it was already a tombstone.
    AlreadyDown,
}

/// The code `down` uses when another operation holds the instance's lock.
/// Not a teardown failure: "try again later" (contract).
pub const LOCK_HELD_CODE: &str = "state.lock.held";

/// Parse an error from text (pretty-printed or on one line): a failure
/// envelope `{"ok":false,"error":{...}}` of any schema version, or a bare
/// error object `{"schema_version":2,"code":...}` as the controller stores
/// it in `operations.error_json`. `None` when the text is not JSON, is a
/// success envelope, or carries no error with a `code`.
#[must_use]
pub fn parse_error(text: &str) -> Option<EnvelopeError> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    let object = value.as_object()?;
    if object.contains_key("error") || object.contains_key("ok") {
        let envelope: Envelope = serde_json::from_value(value).ok()?;
        if envelope.ok == Some(true) {
            return None;
        }
        return envelope.error;
    }
    serde_json::from_value(value).ok()
}

/// Parse a success envelope of `down --json` (any schema version): its
/// outcome. `None` for anything else (a failure, prose, an unknown
/// outcome).
#[must_use]
pub fn parse_down_success(text: &str) -> Option<DownOutcome> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    if value.get("ok")?.as_bool()? {
        match value.get("outcome")?.as_str()? {
            "destroyed" => Some(DownOutcome::Destroyed),
            "already_down" => Some(DownOutcome::AlreadyDown),
            _ => None,
        }
    } else {
        None
    }
}

/// How a teardown process ended, as far as the reason needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this status code.
    Code(i32),
    /// Killed by this signal (name, e.g. `SIGKILL`).
    Signal(String),
    /// Killed by this console at its deadline, after this many seconds.
    TimedOut(u64),
    /// Killed by this console for writing more than this many bytes.
    TooMuchOutput(u64),
    /// The command could not be started at all (the reason): `down` never
    /// ran, so nothing is recorded against the instance.
    NotStarted(String),
    /// Stopped by this console (TERM, then KILL to its group) because the
    /// `reap --once` pass was interrupted (an operator's signal, or the
    /// `--controller` launcher gone): not the instance's failure, so
    /// nothing is recorded against it.
    Interrupted,
}

/// How [`failure_reason`] begins for a `down` this console killed at its
/// deadline ([`Exit::TimedOut`]): `timed out after 10m`.
const TIMED_OUT: &str = "timed out after ";

/// Whether `reason` ([`failure_reason`], as a failed teardown's Activity
/// keeps it whole) says this console killed `down` at its deadline: the
/// teardown may still finish (stackless 0.4.0's controller runs a `down`
/// to its end when the CLI is killed).
#[must_use]
pub fn is_deadline_kill(reason: &str) -> bool {
    reason.starts_with(TIMED_OUT)
}

/// A failed `down`'s reason, whole: what the audit trail and the Activity
/// entry keep ([`stored_reason`] is what the store gets).
///
/// Better than stackless's 0.2 daemon, which keeps only the last stdout
/// line (a lone `}` for a pretty-printed envelope): when stdout parses as
/// JSON (an envelope of schema 1 or 2) it is
/// re-serialized on one line, keeping the whole envelope; otherwise the last
/// non-empty line; when stdout is empty, `down exited with <status>` (the
/// signal named when killed).
#[must_use]
pub fn failure_reason(stdout: &str, exit: &Exit) -> String {
    // Killed or never started by this console: its own reason, whatever the
    // partial output said.
    match exit {
        Exit::TimedOut(secs) => {
            return format!(
                "{TIMED_OUT}{}",
                humantime::format_duration(std::time::Duration::from_secs(*secs))
            );
        }
        Exit::TooMuchOutput(bytes) => {
            return format!(
                "down wrote more than {} MiB and was killed",
                bytes / (1024 * 1024)
            );
        }
        Exit::NotStarted(why) => return why.clone(),
        Exit::Interrupted => return "interrupted: the reap pass was stopped".to_owned(),
        Exit::Code(_) | Exit::Signal(_) => {}
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(stdout.trim()) {
        return value.to_string();
    }
    if let Some(line) = stdout.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
        return line.to_owned();
    }
    match exit {
        Exit::Signal(signal) => format!("down was killed by {signal}"),
        Exit::Code(code) => format!("down exited with status {code}"),
        Exit::TimedOut(_) | Exit::TooMuchOutput(_) | Exit::NotStarted(_) | Exit::Interrupted => {
            String::new()
        }
    }
}

/// The `reap_attempts.last_error` this console writes for a failed reap
/// whose answer was `reason` ([`failure_reason`]): an error envelope (of
/// any schema) or a bare error object as `code: message`, the form
/// stackless 0.4.0 gives a fault on one line (stackless-core-0.4.0
/// src/engine/run.rs:708, a teardown's failures) and that its `status`
/// prints well after `reap failed N time(s): ` (stackless-0.4.0
/// src/client/report.rs:524-528; src/output.rs:363-364, one `⚠` line);
/// the 0.3 daemon wrote the envelope's last line, a lone `}`. Any other
/// reason is kept. Always one line: a run of whitespace holding a line
/// break becomes one space. The whole envelope goes to the audit trail
/// ([`crate::model::activity::Activity::envelope`]), never to the store.
#[must_use]
pub fn stored_reason(reason: &str) -> String {
    let summary = read_reason(reason).summary;
    let mut out = String::with_capacity(summary.len());
    let mut gap = String::new();
    let mut broke = false;
    for c in summary.trim().chars() {
        if c.is_whitespace() {
            broke |= matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
            gap.push(c);
            continue;
        }
        if broke {
            out.push(' ');
        } else {
            out.push_str(&gap);
        }
        gap.clear();
        broke = false;
        out.push(c);
    }
    out
}

/// The code of a one-line `code: message` (the form [`stored_reason`]
/// writes): a dotted lowercase code (`engine.teardown.survivors`) before
/// the first `: `; `None` for anything else. [`read_reason`] leaves such
/// prose without a code (its rules key on envelopes); a report may show
/// it.
#[must_use]
pub fn line_code(text: &str) -> Option<&str> {
    let (code, _) = text.split_once(": ")?;
    let well_formed = code.contains('.')
        && !code.starts_with('.')
        && !code.ends_with('.')
        && code
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    well_formed.then_some(code)
}

/// A stored `last_error` (or an `operations.error_json`) made readable:
/// `code: message` plus the remediation when it is an envelope (schema 1
/// or 2) or a bare error object, else the text as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// `code: message`, or the raw text.
    pub summary: String,
    /// The envelope's remediation, when present.
    pub remediation: Option<String>,
    /// The envelope's code, when it is one.
    pub code: Option<String>,
}

/// Read a stored `last_error` or `error_json`: an envelope of schema 1 or
/// 2, a bare error object, or prose such as the 0.2 daemon's lone `}` or the
/// 0.3 daemon's `code: message` (not sanitized: callers sanitize).
#[must_use]
pub fn read_reason(last_error: &str) -> Reason {
    match parse_error(last_error) {
        Some(error) => Reason {
            summary: if error.message.is_empty() {
                error.code.clone()
            } else {
                format!("{}: {}", error.code, error.message)
            },
            remediation: error.remediation,
            code: Some(error.code),
        },
        None => Reason {
            summary: last_error.to_owned(),
            remediation: None,
            code: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRETTY: &str = include_str!("../../tests/fixtures/envelopes/down-survivors-error.json");
    const V2_FAILURE: &str =
        include_str!("../../tests/fixtures/envelopes/v2-down-source-override-shared-error.json");
    const V2_SUCCESS: &str = include_str!("../../tests/fixtures/envelopes/v2-down-destroyed.json");
    const V1_SUCCESS: &str =
        include_str!("../../tests/fixtures/envelopes/v1-down-already-down.json");
    const V2_BARE: &str = include_str!("../../tests/fixtures/envelopes/v2-error-json-bare.json");

    #[test]
    fn schema_2_envelopes_and_bare_error_objects() {
        let failure = parse_error(V2_FAILURE).expect("failure envelope");
        assert_eq!(failure.schema_version, Some(2));
        assert_eq!(failure.code, "engine.source_override.shared");
        assert_eq!(failure.instance.as_deref(), Some("b"));
        assert_eq!(
            failure.remediation.as_deref(),
            Some(
                "use a separate git worktree per parallel agent, omit --source so stackless \
                 materializes per-instance checkouts, or `stackless down a` before reusing \
                 this checkout"
            )
        );
        let bare = parse_error(V2_BARE).expect("bare error object");
        assert_eq!(bare.code, "engine.teardown.survivors");
        assert_eq!(bare.step.as_deref(), Some("start:web"));
        assert_eq!(
            read_reason(V2_BARE).summary,
            "engine.teardown.survivors: teardown of \"demo\" left survivors: [\"process:web\"]; failures: []"
        );
        let one_line = failure_reason(V2_FAILURE, &Exit::Code(1));
        assert_eq!(
            read_reason(&one_line).code.as_deref(),
            Some("engine.source_override.shared")
        );
        // Successes are envelopes too, never errors.
        assert_eq!(parse_error(V2_SUCCESS), None);
        assert_eq!(parse_error(V1_SUCCESS), None);
        assert_eq!(parse_down_success(V2_SUCCESS), Some(DownOutcome::Destroyed));
        assert_eq!(
            parse_down_success(V1_SUCCESS),
            Some(DownOutcome::AlreadyDown)
        );
        assert_eq!(parse_down_success(V2_FAILURE), None);
        // JSON without a code is no error.
        assert_eq!(parse_error(r#"{"message":"x"}"#), None);
        assert_eq!(parse_error("[1]"), None);
    }

    #[test]
    fn the_code_of_a_one_line_reason() {
        assert_eq!(
            line_code("provider.auth: token [redacted] rejected"),
            Some("provider.auth")
        );
        for prose in [
            "down exited 0 in 0.4s: still active",
            "timed out after 10m",
            ".x: y",
            "Provider.Auth: no",
            "}",
        ] {
            assert_eq!(line_code(prose), None, "{prose}");
        }
    }

    #[test]
    fn daemon_reasons_of_0_2_and_0_3_stay_prose() {
        // 0.2.2 keeps the last line; 0.3.3 keeps `code: message`.
        let r = read_reason("state.lock.held: instance \"golf\" is locked");
        assert_eq!(r.code, None);
        assert_eq!(r.summary, "state.lock.held: instance \"golf\" is locked");
    }

    #[test]
    fn pretty_envelope_is_kept_whole_on_one_line() {
        let reason = failure_reason(PRETTY, &Exit::Code(1));
        assert!(!reason.contains('\n'));
        assert!(reason.starts_with('{'));
        let parsed = parse_error(&reason).expect("still an envelope");
        assert_eq!(parsed.code, "engine.teardown.survivors");
    }

    #[test]
    fn the_store_gets_code_and_message_on_one_line() {
        let reason = failure_reason(PRETTY, &Exit::Code(1));
        assert_eq!(
            stored_reason(&reason),
            "engine.teardown.survivors: teardown of \"golf\" left survivors: \
             [\"/home/operator/.local/state/stackless/sources/golf/web\"]"
        );
        assert_eq!(
            stored_reason(V2_BARE),
            "engine.teardown.survivors: teardown of \"demo\" left survivors: [\"process:web\"]; failures: []"
        );
        // No message: the code alone.
        assert_eq!(
            stored_reason(r#"{"ok":false,"error":{"code":"x.y"}}"#),
            "x.y"
        );
        // A message across lines stays one line; other spacing is kept.
        assert_eq!(
            stored_reason(r#"{"ok":false,"error":{"code":"c","message":"a  b\r\n  c\n"}}"#),
            "c: a  b c"
        );
        // Not an envelope: kept.
        assert_eq!(stored_reason("timed out after 10m"), "timed out after 10m");
        assert_eq!(stored_reason("}"), "}");
    }

    #[test]
    fn non_json_keeps_last_non_empty_line() {
        assert_eq!(
            failure_reason("first\nsecond\n\n  \n", &Exit::Code(3)),
            "second"
        );
    }

    #[test]
    fn empty_stdout_names_the_status_or_signal() {
        assert_eq!(
            failure_reason("", &Exit::Code(2)),
            "down exited with status 2"
        );
        assert_eq!(
            failure_reason("\n", &Exit::Signal("SIGKILL".into())),
            "down was killed by SIGKILL"
        );
        assert_eq!(
            failure_reason("partial", &Exit::TimedOut(600)),
            "timed out after 10m"
        );
        assert!(is_deadline_kill(&failure_reason("", &Exit::TimedOut(1))));
        assert!(!is_deadline_kill(&failure_reason("", &Exit::Code(1))));
        assert!(!is_deadline_kill(&failure_reason(
            "",
            &Exit::TooMuchOutput(1 << 30)
        )));
    }

    #[test]
    fn reasons_read_envelopes_and_raw_text() {
        let r = read_reason(
            r#"{"ok": false, "error": {"schema_version": 1, "code": "render.api.unavailable", "message": "Render API answered 503", "remediation": "retry later"}}"#,
        );
        assert_eq!(r.summary, "render.api.unavailable: Render API answered 503");
        assert_eq!(r.remediation.as_deref(), Some("retry later"));
        let raw = read_reason("}");
        assert_eq!(raw.summary, "}");
        assert_eq!(raw.code, None);
    }

    #[test]
    fn lock_held_is_recognized() {
        let e =
            parse_error(r#"{"ok":false,"error":{"code":"state.lock.held","message":"locked"}}"#)
                .unwrap();
        assert_eq!(e.code, LOCK_HELD_CODE);
    }
}
