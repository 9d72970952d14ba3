//! A renew or verify awaiting confirmation ([`VerbQuestion`], asked as
//! [`super::Question::Verbs`]).

use crate::model::verbs::{self, Verb, VerbRequest};

/// A renew or verify awaiting its y/N ([`Question::Verbs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbQuestion {
    /// What runs, one per instance, sorted by name.
    pub requests: Vec<VerbRequest>,
    /// The first request's command line, shell-quoted for reading, as it
    /// will run (`stackless up --name alpha --lease 2h --json`).
    pub runs: String,
    /// The named instances refused before asking (each said why in
    /// Activity): a bulk `L` skips a row without a lease or with an
    /// operation pending.
    pub skipped: usize,
    /// Unix seconds when asked (the lease's expiry is shown from it).
    pub now: i64,
    /// `--dry-run`: the question says what would run.
    pub dry_run: bool,
}

impl VerbQuestion {
    /// The question: `Renew alpha's lease for 2h? stackless resumes the
    /// instance (its prepare hooks run again). It expires in 1h 59m now,
    /// then in 2h. This runs: stackless up --name alpha --lease 2h --json
    /// [y/N]`; `Verify alpha? This runs: stackless verify alpha --json (it
    /// renews the lease when the check starts, pass or fail) [y/N]`; for
    /// several, `Renew the leases of 3 instances (alpha, bravo, charlie)?
    /// stackless resumes each (...). This runs: …, then the same for each
    /// other name [y/N]` (names sanitized and cut). Under `--dry-run`,
    /// `This would run: … (dry run: nothing runs)`.
    #[must_use]
    pub fn question(&self) -> String {
        use crate::model::text::sanitize_short;
        let cut = |n: &str| sanitize_short(n, crate::ui::text::CUT_SHORT);
        let Some(first) = self.requests.first() else {
            return "nothing to run [y/N]".into();
        };
        let count = self.requests.len();
        let mut text = match (first.verb, count) {
            (Verb::Renew { lease_secs }, 1) => format!(
                "Renew {}'s lease for {}? stackless resumes the instance (its prepare hooks run again).{}",
                cut(&first.instance.name),
                verbs::lease_text(lease_secs),
                self.expiry(first, lease_secs)
            ),
            (Verb::Verify, 1) => format!("Verify {}?", cut(&first.instance.name)),
            (verb, _) => {
                let mut list = self
                    .requests
                    .iter()
                    .take(super::BULK_NAMES_SHOWN)
                    .map(|r| cut(&r.instance.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                if count > super::BULK_NAMES_SHOWN {
                    list = format!("{list} and {} more", count - super::BULK_NAMES_SHOWN);
                }
                match verb {
                    Verb::Renew { .. } => format!(
                        "Renew the leases of {count} instances ({list})? stackless resumes each (its prepare hooks run again)."
                    ),
                    Verb::Verify => format!("Verify {count} instances ({list})?"),
                }
            }
        };
        text.push_str(&format!(
            " This {}: {}",
            if self.dry_run { "would run" } else { "runs" },
            sanitize_short(&self.runs, crate::ui::text::CUT_LONG)
        ));
        if count > 1 {
            text.push_str(", then the same for each other name");
        }
        if first.verb == Verb::Verify {
            text.push_str(" (it renews the lease when the check starts, pass or fail)");
        }
        if self.dry_run {
            text.push_str(" (dry run: nothing runs)");
        }
        if self.skipped > 0 {
            text.push_str(&format!(
                "; {} skipped (refused: see Activity)",
                self.skipped
            ));
        }
        text.push_str(" [y/N]");
        text
    }

    /// ` It expires in 1h 59m now, then in 2h.` (` It has expired, then
    /// expires in 2h.`), with `: shorter than what is left` when the new
    /// lease ends sooner; empty without a lease.
    fn expiry(&self, request: &VerbRequest, lease_secs: u64) -> String {
        let Some(lease) = &request.instance.lease else {
            return String::new();
        };
        let left = lease.expires_at.saturating_sub(self.now);
        let new = i64::try_from(lease_secs).unwrap_or(i64::MAX);
        let now = if left > 0 {
            format!("It expires in {} now", crate::model::time::span(left))
        } else {
            "It has expired".to_owned()
        };
        let shorter = if new < left {
            ": shorter than what is left"
        } else {
            ""
        };
        format!(
            " {now}, then in {}{shorter}.",
            verbs::lease_text(lease_secs)
        )
    }
}
