//! `stackless down --json` output: the error envelope, and the failure reason
//! this console records.
//!
//! Contract ("`down --json` output"): stdout carries one JSON envelope,
//! `{"ok": false, "error": {"schema_version": 1, "code", "message", "step"?,
//! "instance"?, "context"?, "remediation"}}` on failure; success prints
//! nothing on stdout and exits 0.

use serde::Deserialize;

/// The `error` object of a failure envelope. Unknown fields are ignored
/// (codes and fields are stable API; new ones may come).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EnvelopeError {
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
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    ok: Option<bool>,
    error: Option<EnvelopeError>,
}

/// The code `down` uses when another operation holds the instance's lock.
/// Not a teardown failure: "try again later" (contract).
pub const LOCK_HELD_CODE: &str = "state.lock.held";

/// Parse a failure envelope from text (pretty-printed or on one line).
/// `None` when the text is not JSON or carries no `error` object.
#[must_use]
pub fn parse_error(text: &str) -> Option<EnvelopeError> {
    let envelope: Envelope = serde_json::from_str(text.trim()).ok()?;
    if envelope.ok == Some(true) {
        return None;
    }
    envelope.error
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
}

/// The failure reason to store in `reap_attempts.last_error`.
///
/// Better than stackless's daemon, which keeps only the last stdout line (a
/// lone `}` for a pretty-printed envelope): when stdout parses as JSON it is
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
                "timed out after {}",
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
        Exit::TimedOut(_) | Exit::TooMuchOutput(_) | Exit::NotStarted(_) => String::new(),
    }
}

/// A stored `last_error` made readable: `code: message` plus the remediation
/// when it is an envelope, else the text as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// `code: message`, or the raw text.
    pub summary: String,
    /// The envelope's remediation, when present.
    pub remediation: Option<String>,
    /// The envelope's code, when it is one.
    pub code: Option<String>,
}

/// Read a stored `last_error` (not sanitized: callers sanitize for display).
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

    #[test]
    fn pretty_envelope_is_kept_whole_on_one_line() {
        let reason = failure_reason(PRETTY, &Exit::Code(1));
        assert!(!reason.contains('\n'));
        assert!(reason.starts_with('{'));
        let parsed = parse_error(&reason).expect("still an envelope");
        assert_eq!(parsed.code, "engine.teardown.survivors");
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
