//! The store's state and the audit trail's counts as metrics
//! (docs/metrics.md), written in the `OpenMetrics` text format: `# HELP`
//! and `# TYPE` before each family, `# EOF` last. Counter families are
//! named with their `_total`, as the Prometheus text format 0.0.4 names
//! them (what `node_exporter`'s textfile collector and `promtool check
//! metrics` parse), and an info metric is a gauge of 1 named `_info`.
//! Pure: the values are read from a [`crate::model::Snapshot`] and `now`
//! ([`state`]), and from the audit lines ([`counters`]); [`document`] is
//! the one text every output writes (`snapshot --format openmetrics`,
//! `--metrics-file`, `serve --stdio`'s `metrics`).

pub mod counters;
pub mod state;

use std::fmt::Write as _;

pub use counters::AuditCounts;
pub use state::StoreState;

/// The longest label value written, in characters: a longer one (a
/// hostile `substrate`, `status` or `verb` from the store) is cut, its
/// last character `…`.
pub const MAX_LABEL_CHARS: usize = 64;

/// The most distinct values one label takes in one family; the rest are
/// counted under [`OTHER`], so a hostile store cannot make the document
/// grow with its rows.
pub const MAX_LABEL_VALUES: usize = 16;

/// The label value the values past [`MAX_LABEL_VALUES`] are counted under.
pub const OTHER: &str = "other";

/// A family's type, as its `# TYPE` line says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A count that only grows (its name ends `_total`).
    Counter,
    /// Buckets (`_bucket` with `le`), `_count` and `_sum`.
    Histogram,
}

impl Kind {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Gauge => "gauge",
            Self::Counter => "counter",
            Self::Histogram => "histogram",
        }
    }
}

/// One sample: its name's suffix after the family's (`""`, `_bucket`,
/// `_count`, `_sum`), its labels and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Appended to the family's name (`_bucket`, ...; empty for most).
    pub suffix: &'static str,
    /// `(name, value)` pairs, the values as they are (escaped when written).
    pub labels: Vec<(&'static str, String)>,
    /// The value.
    pub value: f64,
}

impl Sample {
    /// A sample of the family's own name.
    #[must_use]
    pub fn new(labels: Vec<(&'static str, String)>, value: f64) -> Self {
        Self {
            suffix: "",
            labels,
            value,
        }
    }
}

/// One metric family.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The name (`stackless_` first, base units, `_total` for counters).
    pub name: &'static str,
    /// The `# HELP` text (one line).
    pub help: &'static str,
    /// The `# TYPE`.
    pub kind: Kind,
    /// The `# UNIT` (`seconds`), when the name ends with it.
    pub unit: Option<&'static str>,
    /// Its samples, in order.
    pub samples: Vec<Sample>,
}

impl Family {
    /// A family of one unlabelled gauge sample.
    #[must_use]
    pub fn gauge(name: &'static str, help: &'static str, value: f64) -> Self {
        Self {
            name,
            help,
            kind: Kind::Gauge,
            unit: name.ends_with("_seconds").then_some("seconds"),
            samples: vec![Sample::new(Vec::new(), value)],
        }
    }

    /// A gauge family whose samples take one label.
    #[must_use]
    pub fn labelled(
        name: &'static str,
        help: &'static str,
        label: &'static str,
        values: impl IntoIterator<Item = (String, f64)>,
    ) -> Self {
        Self {
            name,
            help,
            kind: Kind::Gauge,
            unit: None,
            samples: values
                .into_iter()
                .map(|(value, n)| Sample::new(vec![(label, value)], n))
                .collect(),
        }
    }
}

/// Who reaps the store, as `stackless_reaper_info{by}` says it:
/// `controller`, `console`, `nobody`, `unknown`
/// ([`crate::model::controller::Reaping`]).
#[must_use]
pub const fn reaper_by(reaping: &crate::model::controller::Reaping) -> &'static str {
    use crate::model::controller::Reaping;
    match reaping {
        Reaping::Nobody => "nobody",
        Reaping::Console(_) => "console",
        Reaping::Controller(_) => "controller",
        Reaping::Unknown => "unknown",
    }
}

/// What one document is made of: the store's state (`None`: it could
/// not be read, `stackless_store_up 0` and nothing else of it), who reaps
/// (`by`, as [`reaper_by`] says it), the audit trail's counts when they
/// were read, and the restarts of each helper this process supervises.
#[derive(Debug, Clone, Copy, Default)]
pub struct Parts<'a> {
    /// The store's state.
    pub state: Option<&'a StoreState>,
    /// Who reaps ([`reaper_by`]).
    pub by: Option<&'a str>,
    /// The audit trail's counts.
    pub counts: Option<&'a AuditCounts>,
    /// `(helper, restarts)`: the helpers this process supervises, by
    /// their configured name ([`counters::helper_restarts`]); empty where
    /// nothing is supervised (no family is written then).
    pub helpers: &'a [(String, u64)],
}

/// The whole document of `state`, `by` and `counts` ([`Parts`], no
/// helper). Ends with `# EOF` and a newline.
#[must_use]
pub fn document(
    state: Option<&StoreState>,
    by: Option<&str>,
    counts: Option<&AuditCounts>,
) -> String {
    document_of(&Parts {
        state,
        by,
        counts,
        helpers: &[],
    })
}

/// The whole document of `parts`, in docs/metrics.md's order. Ends with
/// `# EOF` and a newline.
#[must_use]
pub fn document_of(parts: &Parts<'_>) -> String {
    let mut families = vec![Family::gauge(
        "stackless_store_up",
        "Whether the store could be read (1) or not (0).",
        if parts.state.is_some() { 1.0 } else { 0.0 },
    )];
    if let Some(state) = parts.state {
        families.extend(state.families());
    }
    if let Some(by) = parts.by {
        families.push(Family::labelled(
            "stackless_reaper_info",
            "Who reaps the store's expired instances now (always 1; the label says who).",
            "by",
            [(by.to_owned(), 1.0)],
        ));
    }
    if let Some(counts) = parts.counts {
        families.extend(counts.families());
    }
    if !parts.helpers.is_empty() {
        families.push(counters::helper_restarts(parts.helpers));
    }
    encode(&families)
}

/// `families` in the text format, `# EOF` last.
#[must_use]
pub fn encode(families: &[Family]) -> String {
    let mut out = String::with_capacity(4096);
    for family in families {
        let _ = writeln!(out, "# HELP {} {}", family.name, escape_help(family.help));
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind.as_str());
        if let Some(unit) = family.unit {
            let _ = writeln!(out, "# UNIT {} {unit}", family.name);
        }
        for sample in &family.samples {
            out.push_str(family.name);
            out.push_str(sample.suffix);
            if !sample.labels.is_empty() {
                out.push('{');
                for (at, (name, value)) in sample.labels.iter().enumerate() {
                    if at > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{name}=\"{}\"", escape_label(value));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(sample.value));
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A value as the text format writes it: an integer without a fraction,
/// `+Inf`, `-Inf`, `NaN`.
#[must_use]
pub fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        format!("{value}")
    }
}

/// A label value escaped (`\` as `\\`, `"` as `\"`, a newline as `\n`),
/// cut to [`MAX_LABEL_CHARS`] characters first. Every other character
/// is kept: the format takes any UTF-8 in a label value.
#[must_use]
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    for (at, c) in value.chars().enumerate() {
        if at + 1 == MAX_LABEL_CHARS && value.chars().nth(MAX_LABEL_CHARS).is_some() {
            out.push('…');
            break;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A `# HELP` text escaped (`\` and newlines).
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A label's values as they are written: the first [`MAX_LABEL_VALUES`]
/// - 1 distinct ones kept, every later one as [`OTHER`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capped(std::collections::BTreeSet<String>);

impl Capped {
    /// `value` as written: itself, or [`OTHER`] once the label has
    /// [`MAX_LABEL_VALUES`] - 1 others.
    pub fn of(&mut self, value: &str) -> String {
        if self.0.contains(value) || value == OTHER {
            return value.to_owned();
        }
        if self.0.len() + 1 < MAX_LABEL_VALUES {
            self.0.insert(value.to_owned());
            return value.to_owned();
        }
        OTHER.to_owned()
    }
}

/// `n` as a sample value (counts stay exact far past any store's size).
#[allow(clippy::cast_precision_loss)]
#[must_use]
pub const fn count(n: u64) -> f64 {
    n as f64
}

#[cfg(test)]
mod tests;
