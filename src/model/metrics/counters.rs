//! Counts that need memory, read from the audit trail (`audit.jsonl` and
//! its rotated `audit.jsonl.1`): teardowns started, succeeded and failed
//! by actor, and how long they took. The trail is capped and rotated, so
//! a count drops when its oldest file is rotated away: Prometheus reads a
//! drop of a counter as a reset (`rate`, `increase`).

use std::collections::BTreeMap;

use super::{Capped, Family, Kind, Sample, count};

/// `stackless_helper_restarts_total{helper}`: how often this process's
/// helper supervisor started each helper again after it exited (its
/// first start is not one), by the helper's configured name (label
/// values capped: [`Capped`]; escaped when written). Counted in memory
/// by the supervisor: it starts at 0 with the process (a counter reset).
#[must_use]
pub fn helper_restarts(helpers: &[(String, u64)]) -> Family {
    let mut names = Capped::default();
    let mut samples: Vec<Sample> = Vec::new();
    for (helper, restarts) in helpers {
        let name = names.of(helper);
        match samples.iter_mut().find(|s| s.labels[0].1 == name) {
            Some(sample) => sample.value += count(*restarts),
            None => samples.push(Sample::new(vec![("helper", name)], count(*restarts))),
        }
    }
    Family {
        name: "stackless_helper_restarts_total",
        help: "How often the console's helper supervisor started a helper again after it exited, by helper.",
        kind: Kind::Counter,
        unit: None,
        samples,
    }
}

/// The actors a teardown is counted under: the reaper's own and the
/// operator's (a key, a `serve --stdio` command); each always written.
pub const ACTORS: [&str; 2] = ["reaper", "operator"];

/// The outcomes a teardown is counted under, each always written:
/// `attempted` (a `teardown`/`started` line), `succeeded`, `failed`.
pub const OUTCOMES: [&str; 3] = ["attempted", "succeeded", "failed"];

/// The teardown duration histogram's upper bounds, seconds (the default
/// `--down-timeout` is 600 s); `+Inf` follows.
pub const DURATION_BUCKETS: [f64; 9] = [1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0];

/// The audit trail's counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditCounts {
    /// Teardowns by `(actor, outcome)` ([`ACTORS`], [`OUTCOMES`]).
    pub teardowns: BTreeMap<(&'static str, &'static str), u64>,
    /// Finished teardowns' durations by actor: the count in each of
    /// [`DURATION_BUCKETS`] (not cumulative), then the count above them.
    pub buckets: BTreeMap<&'static str, [u64; DURATION_BUCKETS.len() + 1]>,
    /// Their durations summed, seconds, by actor.
    pub duration_sum: BTreeMap<&'static str, f64>,
}

impl AuditCounts {
    /// Count one audit line: its `actor`, `action`, `outcome` and, for a
    /// finished teardown, `duration_ms`. Lines of other actions and
    /// actors are not counted.
    pub fn add(&mut self, actor: &str, action: &str, outcome: &str, duration_ms: Option<u64>) {
        let Some(actor) = ACTORS.iter().copied().find(|a| *a == actor) else {
            return;
        };
        if action != "teardown" {
            return;
        }
        let outcome = match outcome {
            "started" => "attempted",
            "succeeded" => "succeeded",
            "failed" => "failed",
            _ => return,
        };
        *self.teardowns.entry((actor, outcome)).or_default() += 1;
        if outcome == "attempted" {
            return;
        }
        if let Some(ms) = duration_ms {
            #[allow(clippy::cast_precision_loss)]
            let secs = ms as f64 / 1000.0;
            let at = DURATION_BUCKETS
                .iter()
                .position(|bound| secs <= *bound)
                .unwrap_or(DURATION_BUCKETS.len());
            self.buckets.entry(actor).or_default()[at] += 1;
            *self.duration_sum.entry(actor).or_default() += secs;
        }
    }

    /// The teardowns of `actor` with `outcome`.
    #[must_use]
    pub fn teardowns(&self, actor: &str, outcome: &str) -> u64 {
        self.teardowns
            .iter()
            .find(|((a, o), _)| *a == actor && *o == outcome)
            .map_or(0, |(_, n)| *n)
    }

    /// Its families: `stackless_teardowns_total` and
    /// `stackless_teardown_duration_seconds`.
    #[must_use]
    pub fn families(&self) -> Vec<Family> {
        let mut totals = Vec::new();
        for actor in ACTORS {
            for outcome in OUTCOMES {
                totals.push(Sample::new(
                    vec![("actor", actor.to_owned()), ("outcome", outcome.to_owned())],
                    count(self.teardowns(actor, outcome)),
                ));
            }
        }
        vec![
            Family {
                name: "stackless_teardowns_total",
                help: "Teardowns by actor (reaper, operator) and outcome (attempted, succeeded, failed), from the audit trail kept.",
                kind: Kind::Counter,
                unit: None,
                samples: totals,
            },
            self.histogram(),
        ]
    }

    fn histogram(&self) -> Family {
        let mut samples = Vec::new();
        for actor in ACTORS {
            let buckets = self.buckets.get(actor).copied().unwrap_or_default();
            let mut cumulative = 0;
            for (at, n) in buckets.iter().enumerate() {
                cumulative += n;
                let le = DURATION_BUCKETS
                    .get(at)
                    .map_or_else(|| "+Inf".to_owned(), |b| format!("{b:.1}"));
                samples.push(Sample {
                    suffix: "_bucket",
                    labels: vec![("actor", actor.to_owned()), ("le", le)],
                    value: count(cumulative),
                });
            }
            samples.push(Sample {
                suffix: "_sum",
                labels: vec![("actor", actor.to_owned())],
                value: self.duration_sum.get(actor).copied().unwrap_or(0.0),
            });
            samples.push(Sample {
                suffix: "_count",
                labels: vec![("actor", actor.to_owned())],
                value: count(cumulative),
            });
        }
        Family {
            name: "stackless_teardown_duration_seconds",
            help: "How long finished teardowns (succeeded, failed) took, by actor, from the audit trail kept.",
            kind: Kind::Histogram,
            unit: Some("seconds"),
            samples,
        }
    }
}
