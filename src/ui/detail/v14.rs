//! The detail view's schema-14 sections (stackless 0.4.0): what the birth
//! owns (`resources`, never their payloads), where each service runs
//! (`placements`), desired vs applied configuration (`instance_revisions`:
//! pending), and what was last observed of each service (`observations`).
//! Sanitized once when the detail is read, like the rest of the detail.

use super::doc::MAX_LINE_CHARS;
use crate::model::detail::InstanceDetail;
use crate::model::text::sanitize_short;

/// One section: its title and its lines (sanitized).
pub(crate) type Section = (String, Vec<String>);

/// The schema-14 sections of `detail`, each only when the store has rows
/// for it (none at all before schema 7). `now` is unix seconds.
#[must_use]
pub(crate) fn sections(detail: &InstanceDetail, now: i64) -> Vec<Section> {
    let mut out = Vec::new();
    if !detail.resources.is_empty() {
        let lines = detail
            .resources
            .iter()
            .map(|r| {
                format!(
                    "{:<8} {:<9} {:<20} {:<8} {:<18} {}",
                    sanitize_short(&r.phase, MAX_LINE_CHARS),
                    sanitize_short(&r.ownership, MAX_LINE_CHARS),
                    sanitize_short(&r.kind, MAX_LINE_CHARS),
                    sanitize_short(&r.provider, MAX_LINE_CHARS),
                    if r.step_id.is_empty() {
                        "(instance)".to_owned()
                    } else {
                        sanitize_short(&r.step_id, MAX_LINE_CHARS)
                    },
                    sanitize_short(&r.id, MAX_LINE_CHARS)
                )
            })
            .collect();
        out.push((format!("Resources ({})", detail.resources.len()), lines));
    }
    if !detail.placements.is_empty() {
        let lines = detail
            .placements
            .iter()
            .map(|p| {
                format!(
                    "{} on {}",
                    sanitize_short(&p.node, MAX_LINE_CHARS),
                    sanitize_short(&p.provider, MAX_LINE_CHARS)
                )
            })
            .collect();
        out.push(("Placements".to_owned(), lines));
    }
    if let Some(revision) = &detail.revision {
        let applied = revision
            .applied
            .as_deref()
            .map_or_else(|| "never".to_owned(), |a| sanitize_short(a, MAX_LINE_CHARS));
        let state = if revision.pending() {
            "pending: the desired configuration is not applied yet"
        } else {
            "applied"
        };
        out.push((
            "Revision".to_owned(),
            vec![
                format!(
                    "desired  {}",
                    sanitize_short(&revision.desired, MAX_LINE_CHARS)
                ),
                format!("applied  {applied}"),
                format!("state    {state}"),
            ],
        ));
    }
    if !detail.observations.is_empty() {
        out.push(("Observations".to_owned(), observation_lines(detail, now)));
    }
    out
}

/// The Observations section: per node its readiness, existence,
/// configuration and age, its `error_code`, then one line per drift entry.
fn observation_lines(detail: &InstanceDetail, now: i64) -> Vec<String> {
    detail
        .observations
        .iter()
        .flat_map(|o| {
            let field = |v: &Option<String>| {
                v.as_deref()
                    .map_or_else(|| "?".to_owned(), |s| sanitize_short(s, MAX_LINE_CHARS))
            };
            let mut line = format!(
                "{}: readiness {} · existence {} · configuration {}{}",
                sanitize_short(&o.node, MAX_LINE_CHARS),
                field(&o.readiness),
                field(&o.existence),
                field(&o.configuration),
                o.observed_at.map_or_else(String::new, |at| format!(
                    " · {}",
                    super::doc::relative(at, now)
                ))
            );
            if let Some(code) = &o.error_code {
                line.push_str(&format!(" · error {}", field(&Some(code.clone()))));
            }
            let mut lines = vec![line];
            lines.extend(o.drift.iter().map(|d| format!("  {}", drift_text(d))));
            lines
        })
        .collect()
}

/// `drift port: expected 8080, actual 9090` for one drift entry
/// (sanitized).
#[must_use]
pub(crate) fn drift_text(drift: &crate::model::detail::Drift) -> String {
    format!(
        "drift {}: expected {}, actual {}",
        sanitize_short(&drift.setting, MAX_LINE_CHARS),
        sanitize_short(&drift.expected, MAX_LINE_CHARS),
        sanitize_short(&drift.actual, MAX_LINE_CHARS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::detail::{Observation, Placement, Resource, Revision};

    #[test]
    fn sections_only_for_what_the_store_has() {
        assert!(sections(&InstanceDetail::default(), 0).is_empty());
        let detail = InstanceDetail {
            resources: vec![Resource {
                kind: "process".into(),
                id: "4242\u{1b}[2J".into(),
                phase: "ready".into(),
                ownership: "owned".into(),
                provider: "local".into(),
                step_id: "start:web".into(),
                updated_at: Some(90),
            }],
            placements: vec![Placement {
                node: "service:web".into(),
                provider: "local".into(),
            }],
            revision: Some(Revision {
                desired: "r2".into(),
                applied: Some("r1".into()),
            }),
            observations: vec![Observation {
                node: "service:web".into(),
                readiness: Some("ready".into()),
                existence: Some("present".into()),
                configuration: None,
                observed_at: Some(40),
                error_code: Some("health.status_mismatch".into()),
                drift: vec![crate::model::detail::Drift {
                    setting: "port".into(),
                    expected: "8080".into(),
                    actual: "9090".into(),
                }],
            }],
            ..InstanceDetail::default()
        };
        let got = sections(&detail, 100);
        let titles: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            titles,
            ["Resources (1)", "Placements", "Revision", "Observations"]
        );
        assert_eq!(
            got[0].1,
            ["ready    owned     process              local    start:web          4242␛[2J"]
        );
        assert_eq!(got[1].1, ["service:web on local"]);
        assert_eq!(
            got[2].1,
            [
                "desired  r2",
                "applied  r1",
                // 0.4.0's word (`Configuration::Pending`,
                // report.rs:147-153); "drifted" is an observation's.
                "state    pending: the desired configuration is not applied yet"
            ]
        );
        assert_eq!(
            got[3].1,
            [
                "service:web: readiness ready · existence present · configuration ? · 1m 00s ago \
                 · error health.status_mismatch",
                "  drift port: expected 8080, actual 9090"
            ]
        );
    }
}
