//! What a child printed (the answer of a `down`, an `up`, a `verify`, an
//! `operation cancel`: its stdout and its stderr tail), redacted where it
//! enters the program (`crate::process_group::run`), before any sink (the
//! store's `reap_attempts.last_error`, the audit trail, `console.log`,
//! the stream, stdout, the screen) can read it:
//! - a `--json` answer (the whole text, or a line of it, a JSON object or
//!   array): every credential-named field ([`super::sensitive_key`], any
//!   case, any depth) becomes [`REDACTED`] whole (a 0.4.0 secret reference
//!   is left; the protocol fields `code`, `status`, `id`, ... as 0.4.0
//!   leaves them), and every other string is redacted as text (below): a
//!   message that embeds JSON (`{"client_secret":"x"}`) or `token=x`;
//! - text (the rest: lines that are not JSON, taken together, so a value
//!   continued on the next line is seen): the registered `secret_history`
//!   values ([`Redactor::text`]; a stderr tail at its cut start too,
//!   [`Redactor::cut_text`]), credential-named JSON fields written in it
//!   ([`super::credential_fields`]), then [`super::credentials_in_text`]
//!   (`key=value`, `key: value`, `Authorization: Bearer x`, `Basic x`,
//!   `X-Api-Key: x`, `https://u:p@h`, a private key block, `--password
//!   x`, ...); a stderr tail cut inside a private key block has its body,
//!   from the start to the end marker, redacted too.
//!
//! A JSON answer that had something redacted is written back compact, on
//! one line; one that had nothing is left as the child wrote it.

use super::{REDACTED, Redactor, credential_fields_piece, credentials_in_text};

impl Redactor {
    /// A child's stdout (at most its kept head), redacted as the module
    /// says.
    #[must_use]
    pub fn child_output(&self, text: &str) -> String {
        self.child(text, false)
    }

    /// The last bytes of a child's stderr, redacted as the module says; it
    /// may begin inside a value (cut).
    #[must_use]
    pub fn child_tail(&self, text: &str) -> String {
        self.child(text, true)
    }

    fn child(&self, text: &str, cut_start: bool) -> String {
        if !cut_start && let Some(whole) = self.child_json(text) {
            return whole;
        }
        let mut out = String::with_capacity(text.len());
        let mut block: Option<usize> = None;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let json = if at == 0 && cut_start {
                None
            } else {
                self.child_json(line)
            };
            match json {
                Some(done) => {
                    if let Some(start) = block.take() {
                        out.push_str(&self.child_text(&text[start..at], cut_start && start == 0));
                    }
                    out.push_str(&done);
                }
                None => {
                    block.get_or_insert(at);
                }
            }
            at += line.len();
        }
        if let Some(start) = block {
            out.push_str(&self.child_text(&text[start..], cut_start && start == 0));
        }
        out
    }

    /// Free text a child printed, redacted.
    fn child_text(&self, text: &str, cut_start: bool) -> String {
        let valued = if self.is_empty() {
            text.to_owned()
        } else {
            self.cut_text(text, cut_start, false)
        };
        let (fields, _) = credential_fields_piece(&valued, false);
        let free = credentials_in_text(&fields).0;
        match cut_start
            .then(|| super::shapes::pem_body_at_start(&free))
            .flatten()
        {
            Some(body) => super::shapes::replace_ranges(&free, vec![body]).into_owned(),
            None => free.into_owned(),
        }
    }

    /// `text` redacted as a JSON answer, when it is a JSON object or array
    /// (surrounding whitespace aside); `None` otherwise.
    fn child_json(&self, text: &str) -> Option<String> {
        let trimmed = text.trim();
        if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
            return None;
        }
        let mut value: serde_json::Value = serde_json::from_str(trimmed).ok()?;
        let before = value.clone();
        self.value_with(&mut value, &|leaf| self.child_text(leaf, false));
        if value == before {
            return Some(text.to_owned());
        }
        let mut out = serde_json::to_string(&value).unwrap_or_else(|_| REDACTED.to_owned());
        if text.ends_with('\n') {
            out.push('\n');
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARIES: [&str; 7] = [
        "CANARY1", "CANARY2", "CANARY3", "CANARY4", "CANARY5", "CANARY6", "CANARY7",
    ];

    /// The answer of a failing child with a canary in each place a
    /// credential hides.
    pub(crate) const ENVELOPE: &str = r#"{"ok":false,"error":{"code":"provider.auth","message":"rejected {\"client_secret\":\"CANARY2\"} token=CANARY3 via https://u:CANARY5@h.example/x","context":{"Password":"CANARY1","headers":{"X-Api-Key":"CANARY6"},"note":"sent Basic CANARY7"}}}"#;

    #[test]
    fn a_json_answer_has_every_canary_redacted_and_its_meaning_kept() {
        let shown = Redactor::default().child_output(ENVELOPE);
        for canary in CANARIES {
            assert!(!shown.contains(canary), "{canary} in {shown}");
        }
        let value: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(value["error"]["code"], "provider.auth");
        assert_eq!(value["error"]["context"]["Password"], REDACTED);
        assert_eq!(
            value["error"]["message"],
            "rejected {\"client_secret\":\"[redacted]\"} token=[redacted] via https://[redacted]@h.example/x"
        );
        assert_eq!(value["error"]["context"]["note"], "sent Basic [redacted]");
        // Nothing to redact: left as written.
        let plain = "{ \"ok\": true }\n";
        assert_eq!(Redactor::default().child_output(plain), plain);
    }

    #[test]
    fn text_and_json_lines_and_a_stderr_tail() {
        let redactor = Redactor::new(["sk_live_REGISTERED".to_owned()]);
        let stdout =
            "progress\n{\"password\":\"CANARY1\"}\npassword:\n  CANARY3\nkey sk_live_REGISTERED\n";
        assert_eq!(
            redactor.child_output(stdout),
            "progress\n{\"password\":\"[redacted]\"}\npassword:\n  [redacted]\nkey [redacted]\n"
        );
        assert_eq!(
            redactor
                .child_tail("ve_REGISTERED\nAuthorization: Bearer CANARY4\nX-Api-Key: CANARY6\n"),
            "[redacted]\nAuthorization: Bearer [redacted]\nX-Api-Key: [redacted]\n"
        );
        // A stdout cut inside a JSON answer is text: its open value goes.
        assert_eq!(
            Redactor::default().child_output("{\"a\":1,\"client_secret\":\"CANA"),
            "{\"a\":1,\"client_secret\":\"[redacted]\""
        );
    }
}
