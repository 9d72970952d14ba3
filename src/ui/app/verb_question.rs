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
}

impl VerbQuestion {
    /// The question: `Renew alpha's lease for 2h? This runs: stackless up
    /// --name alpha --lease 2h --json [y/N]`; `Verify alpha? This runs:
    /// stackless verify alpha --json (a pass renews its lease) [y/N]`; for
    /// several, `Renew the leases of 3 instances (alpha, bravo, charlie)?
    /// This runs: …, then the same for each other name [y/N]` (names
    /// sanitized and cut).
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
                "Renew {}'s lease for {}?",
                cut(&first.instance.name),
                verbs::lease_text(lease_secs)
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
                    Verb::Renew { .. } => {
                        format!("Renew the leases of {count} instances ({list})?")
                    }
                    Verb::Verify => format!("Verify {count} instances ({list})?"),
                }
            }
        };
        text.push_str(&format!(
            " This runs: {}",
            sanitize_short(&self.runs, crate::ui::text::CUT_LONG)
        ));
        if count > 1 {
            text.push_str(", then the same for each other name");
        }
        if first.verb == Verb::Verify {
            text.push_str(" (a pass renews the lease)");
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
}
