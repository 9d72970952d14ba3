//! A bulk `r`/`d` awaiting confirmation ([`Bulk`], asked as
//! [`super::Question::Bulk`]).

use crate::reaper::Intent;

/// How many names the bulk confirmation lists before `and N more`.
pub const BULK_NAMES_SHOWN: usize = 3;

/// A bulk `r` or `d` awaiting confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bulk {
    /// Reap (`r`) or tear down (`d`).
    pub intent: Intent,
    /// The names acted on, sorted: the marked rows the filter shows (`r`,
    /// `d`), or the names typed (`:reap`, `:down`).
    pub names: Vec<String>,
    /// The birth of each of `names` (same order) the question is asked
    /// about, as the snapshot showed it: `y` refuses a name born again
    /// since ([`crate::model::birth_check::birth_refusal`]).
    pub births: Vec<crate::model::birth_check::BirthSeen>,
    /// Whether `names` are marks (`r`/`d`) rather than typed names.
    pub marked: bool,
    /// Marked instances the filter hides: left alone, kept marked.
    pub hidden: usize,
    /// For a teardown: the command line for the first name torn down
    /// now, as the single `d` dialog shows it
    /// ([`super::TeardownInfo::line_for`]).
    pub runs: Option<String>,
    /// For a teardown on a store with controller operations (0.4.0): the
    /// names with a pending operation, whose teardown is queued behind it
    /// instead (`stackless down NAME --no-wait --json`), counted apart,
    /// and the command line for the first of them.
    pub queued: Vec<String>,
    /// The queue command line for the first of `queued`.
    pub queues: Option<String>,
    /// The names the rules refuse as the question is asked, one sentence
    /// each naming it (the words [`crate::model::rules::admit`] gives, the
    /// check `y` runs again): said before `y`.
    pub refused: Vec<(String, String)>,
}

impl Bulk {
    /// The question: `Reap 3 marked instances (alpha, bravo, charlie)?
    /// [y/N]`; `Tear down 2 instances (alpha, bravo)? This runs: stackless
    /// down alpha --json, then the same with {name} = each other name
    /// [y/N]`; with marks the filter hides, `… 2 other marked instances are
    /// hidden by the filter and left alone. …`; with refusals, how many of
    /// them run: `Tear down 2 of 3 marked instances (…)? … Refused, not
    /// run: …` (names sanitized and cut).
    #[must_use]
    pub fn question(&self) -> String {
        use crate::model::text::sanitize_short;
        let mut text = self.opening();
        if self.hidden > 0 {
            let (n, verb) = if self.hidden == 1 {
                ("instance is", "it")
            } else {
                ("instances are", "them")
            };
            text.push_str(&format!(
                " {} other marked {n} hidden by the filter: this leaves {verb} alone.",
                self.hidden
            ));
        }
        let refused = |n: &String| self.refused.iter().any(|(r, _)| r == n);
        let queued = self.queued.iter().filter(|n| !refused(n)).count();
        let now = self
            .names
            .iter()
            .filter(|n| !self.queued.contains(n) && !refused(n))
            .count();
        if let Some(line) = self.runs.as_ref().filter(|_| now > 0) {
            text.push_str(&format!(
                " This runs: {}",
                sanitize_short(line, crate::ui::text::CUT_LONG)
            ));
            if now > 1 {
                text.push_str(", then the same with {name} = each other name");
            }
            if queued > 0 {
                text.push('.');
            }
        }
        if let Some(line) = self.queues.as_ref().filter(|_| queued > 0) {
            let (n, them) = if queued == 1 {
                ("1 has a pending operation", "its teardown is")
            } else {
                (
                    &*format!("{queued} have a pending operation"),
                    "their teardowns are",
                )
            };
            text.push_str(&format!(
                " {n}: {them} queued behind it, to run after the current operation: {}",
                sanitize_short(line, crate::ui::text::CUT_LONG)
            ));
            if queued > 1 {
                text.push_str(", then the same for each other name");
            }
        }
        if !self.refused.is_empty() && !text.ends_with(['?', '.']) {
            text.push('.');
        }
        text.push_str(&refused_text(&self.refused));
        text.push_str(" [y/N]");
        text
    }

    /// The question's first sentence: `Reap 3 marked instances (alpha,
    /// bravo, charlie)?`; with refusals, how many of them run: `Tear down
    /// 2 of 3 marked instances (…)?` (names sanitized and cut).
    fn opening(&self) -> String {
        use crate::model::text::sanitize_short;
        let verb = match self.intent {
            Intent::Reap => "Reap",
            Intent::TearDown => "Tear down",
        };
        let count = self.names.len();
        let noun = if count == 1 { "instance" } else { "instances" };
        let marked = if self.marked { "marked " } else { "" };
        let mut list = self
            .names
            .iter()
            .take(BULK_NAMES_SHOWN)
            .map(|n| sanitize_short(n, crate::ui::text::CUT_SHORT))
            .collect::<Vec<_>>()
            .join(", ");
        if count > BULK_NAMES_SHOWN {
            list = format!("{list} and {} more", count - BULK_NAMES_SHOWN);
        }
        // With refusals, how many of them run: `Tear down 2 of 3 marked
        // instances (…)?`.
        let runs = self
            .names
            .iter()
            .filter(|n| !self.refused.iter().any(|(r, _)| r == *n))
            .count();
        if runs < count {
            format!("{verb} {runs} of {count} {marked}{noun} ({list})?")
        } else {
            format!("{verb} {count} {marked}{noun} ({list})?")
        }
    }
}

/// ` Refused, not run: echo: locked (alive); bravo has no lease.` naming
/// each refused instance (name, the rules' words) and why (the first
/// [`BULK_NAMES_SHOWN`], then `and N more (see Activity)`); empty when none
/// is. Each reason as the rules word it (`refused: ...; nothing run`), that
/// frame said once for all, after the name unless the words start with it.
pub(super) fn refused_text(refused: &[(String, String)]) -> String {
    let Some(first) = refused.first() else {
        return String::new();
    };
    let cut = |(name, words): &(String, String)| {
        let bare = words.strip_prefix("refused: ").unwrap_or(words);
        let bare = bare.strip_suffix("; nothing run").unwrap_or(bare);
        let said = if bare.starts_with(&format!("{name} ")) {
            bare.to_owned()
        } else {
            format!("{name}: {bare}")
        };
        crate::model::text::sanitize_short(&said, crate::ui::text::CUT_LONG)
    };
    let mut text = format!(" Refused, not run: {}", cut(first));
    for reason in refused.iter().skip(1).take(BULK_NAMES_SHOWN - 1) {
        text.push_str(&format!("; {}", cut(reason)));
    }
    if refused.len() > BULK_NAMES_SHOWN {
        text.push_str(&format!(
            "; and {} more (see Activity)",
            refused.len() - BULK_NAMES_SHOWN
        ));
    }
    text.push('.');
    text
}
