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
    /// Each named instance refused before asking, with why (one sentence
    /// each (the rules `y` runs,
    /// [`crate::model::rules::verb_check`]; each also logged in Activity):
    /// a bulk `L` names a row without a lease or with an operation pending.
    pub refused: Vec<(String, String)>,
    /// The renews of a bulk question whose lease would end sooner than
    /// what is left: not run by this question's `y`, asked apart after it
    /// (their own question, their own `y`), sorted by name.
    pub shorter: Vec<VerbRequest>,
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
                "Renew {}'s lease for {}? stackless resumes the instance (its prepare hooks run again).{}{}",
                cut(&first.instance.name),
                verbs::lease_text(lease_secs),
                self.expiry(first, lease_secs),
                if self.shorter.is_empty() {
                    String::new()
                } else {
                    self.bulk_expiries()
                }
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
                        "Renew the leases of {count} instances ({list})? stackless resumes each (its prepare hooks run again).{}",
                        self.bulk_expiries()
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
            text.push_str(match first.verb {
                Verb::Renew { .. } => ", then the same for each other name at its lease",
                Verb::Verify => ", then the same for each other name",
            });
        }
        if first.verb == Verb::Verify {
            text.push_str(" (it renews the lease when the check starts, pass or fail)");
        }
        if self.dry_run {
            text.push_str(" (dry run: nothing runs)");
        }
        if !self.refused.is_empty() {
            text.push('.');
        }
        text.push_str(&super::bulk::refused_text(&self.refused));
        text.push_str(" [y/N]");
        text
    }

    /// For a bulk renew: ` Each lease now -> after: alpha 1m 30s -> 2h,
    /// bravo 1h 59m -> 10m (shorter).` (expired: `expired -> 2h`; the
    /// first [`super::BULK_NAMES_SHOWN`], then `and N more`), then, when
    /// some would get shorter and others not, ` Shorter, asked apart after
    /// this y: bravo 1h 59m -> 10m.` (only that note when one request is
    /// asked: its own expiry is said apart).
    fn bulk_expiries(&self) -> String {
        let listed = |requests: &[VerbRequest]| {
            let mut list = requests
                .iter()
                .take(super::BULK_NAMES_SHOWN)
                .filter_map(|r| match r.verb {
                    Verb::Renew { lease_secs } => Some(self.before_after(r, lease_secs)),
                    Verb::Verify => None,
                })
                .collect::<Vec<_>>()
                .join(", ");
            if requests.len() > super::BULK_NAMES_SHOWN {
                list.push_str(&format!(
                    " and {} more",
                    requests.len() - super::BULK_NAMES_SHOWN
                ));
            }
            list
        };
        if self.requests.len() == 1 {
            return format!(
                " Shorter, asked apart after this y: {}.",
                listed(&self.shorter)
            );
        }
        let mut text = format!(" Each lease now -> after: {}.", listed(&self.requests));
        if !self.shorter.is_empty() {
            text.push_str(&format!(
                " Shorter, asked apart after this y: {}.",
                listed(&self.shorter)
            ));
        }
        text
    }

    /// `alpha 1m 30s -> 2h`, `bravo 1h 59m -> 10m (shorter)`, `charlie
    /// expired -> 1h`, `delta no lease -> 1h`.
    fn before_after(&self, request: &VerbRequest, lease_secs: u64) -> String {
        let name =
            crate::model::text::sanitize_short(&request.instance.name, crate::ui::text::CUT_SHORT);
        let (now, shorter) = match &request.instance.lease {
            None => ("no lease".to_owned(), false),
            Some(lease) => {
                let left = lease.expires_at.saturating_sub(self.now);
                let now = if left > 0 {
                    crate::model::time::span(left)
                } else {
                    "expired".to_owned()
                };
                (now, verbs::shortens(lease_secs, left))
            }
        };
        format!(
            "{name} {now} -> {}{}",
            verbs::lease_text(lease_secs),
            if shorter { " (shorter)" } else { "" }
        )
    }

    /// ` It expires in 1h 59m now, then in 2h.` (` It expired 4d ago;
    /// then it expires in 2h.`), with `: shorter than what is left` when
    /// the new lease ends sooner; empty without a lease.
    fn expiry(&self, request: &VerbRequest, lease_secs: u64) -> String {
        let Some(lease) = &request.instance.lease else {
            return String::new();
        };
        let left = lease.expires_at.saturating_sub(self.now);
        let shorter = if verbs::shortens(lease_secs, left) {
            ": shorter than what is left"
        } else {
            ""
        };
        let then = verbs::lease_text(lease_secs);
        if left > 0 {
            format!(
                " It expires in {} now, then in {then}{shorter}.",
                crate::model::time::span(left)
            )
        } else {
            format!(
                " It expired {} ago; then it expires in {then}{shorter}.",
                crate::model::time::span(left.saturating_neg())
            )
        }
    }
}
