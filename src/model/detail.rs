//! One instance's full record for the detail view: what the snapshot does
//! not carry (the definition, `definition_dir`, `source_overrides`, the
//! checkpoints; on v14 the birth's resources, placements, revision and
//! observations). Filled by `crate::store::detail`, drawn by `crate::ui::detail`.
//! Pure data: texts are as stored (the UI sanitizes when it draws).

/// One `checkpoints` row: a resource the instance owns, recorded before
/// stackless moved on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// `step_id`, e.g. `start:web` (empty when NULL).
    pub step_id: String,
    /// `resource_kind`: `source`, `source-override`, `process`, `action`, ...
    pub resource_kind: String,
    /// `resource_id`: a path, a pid, a step name, ...
    pub resource_id: String,
    /// `payload`: JSON as stored (empty when NULL).
    pub payload: String,
    /// `recorded_at`, unix seconds (`None` when it holds no integer).
    pub recorded_at: Option<i64>,
}

/// Everything about one instance that the snapshot does not carry. Texts
/// are as stored (not sanitized: the UI sanitizes when it draws).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceDetail {
    /// `definition`: the stack definition (TOML) snapshotted at creation.
    pub definition: String,
    /// `definition_dir` (migration 2); empty when the column is missing.
    pub definition_dir: String,
    /// `source_overrides`: JSON object, service -> local path.
    pub source_overrides: String,
    /// The instance's checkpoints, oldest first (by `recorded_at`, then in
    /// the order they were written).
    pub checkpoints: Vec<Checkpoint>,
    /// The birth's resources (v7+; keyed by `owner_id` = `instance_id`),
    /// by `resource_key`. Empty before v7.
    pub resources: Vec<Resource>,
    /// The birth's placements (v14), by node.
    pub placements: Vec<Placement>,
    /// The birth's revision (v11+), when recorded.
    pub revision: Option<Revision>,
    /// The birth's observations (v11+), by node.
    pub observations: Vec<Observation>,
    /// `instances.substrate` as stored.
    pub substrate: String,
    /// The directory under `<state_dir>/logs/` that holds the instance's
    /// service logs: `resource_namespace` from schema 7 on, else the name
    /// (docs/stackless-releases.md).
    pub logs_dir_name: String,
}

/// One `resources` row of the instance's birth (v7+, stackless 0.4.0),
/// never its `payload` (it holds credentials).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `resource_kind`: `process`, `verification-command`, ...
    pub kind: String,
    /// `resource_id`: the provider's handle.
    pub id: String,
    /// `phase`: `intent`, `created`, `ready`, `absent`.
    pub phase: String,
    /// `ownership`: `owned`, `borrowed`, `shared`.
    pub ownership: String,
    /// `provider`.
    pub provider: String,
    /// `step_id` (empty: instance-scoped).
    pub step_id: String,
    /// Unix seconds.
    pub updated_at: Option<i64>,
}

/// One `placements` row (v14): which provider hosts a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// `service:<name>` or `integration:<name>`.
    pub node: String,
    /// The provider.
    pub provider: String,
}

/// `instance_revisions` (v11+): the configuration the instance should have
/// and the one last applied by a successful `up`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// `desired_revision`.
    pub desired: String,
    /// `applied_revision` (`None`: never applied).
    pub applied: Option<String>,
}

impl Revision {
    /// Pending: applied differs from desired, or was never applied
    /// (stackless 0.4.0's word, `Configuration::Pending`: cli-0.4.0
    /// src/client/report.rs:147-153; "drifted" is what an observation finds
    /// changed out of band).
    #[must_use]
    pub fn pending(&self) -> bool {
        self.applied.as_deref() != Some(self.desired.as_str())
    }
}

/// One `observations` row (v11+), its `evidence_json` parsed (fields that
/// are missing or of another type read as `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// `service:<name>` or `integration:<name>`.
    pub node: String,
    /// `ready`, `unready`, `unknown`, `not_applicable`.
    pub readiness: Option<String>,
    /// `present`, `absent`, `unknown`.
    pub existence: Option<String>,
    /// `applied`, `pending`, `drifted`, `unknown`.
    pub configuration: Option<String>,
    /// `observed_at`, unix seconds (the column; the evidence's own is ms).
    pub observed_at: Option<i64>,
    /// `error_code` of the evidence (e.g. `health.status_mismatch`,
    /// `observation.timeout`; 0.4.0 `report.rs`), `None` when null.
    pub error_code: Option<String>,
    /// `drift` of the evidence: the settings whose applied value differs
    /// from the desired one (schema 14, 0.4.0 `ObservedState`).
    pub drift: Vec<Drift>,
}

/// One entry of an observation's `drift` array, `{setting, expected,
/// actual}`: strings as stored, any other JSON value compact (`?` when
/// missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The setting that drifted.
    pub setting: String,
    /// What the desired configuration says.
    pub expected: String,
    /// What was observed.
    pub actual: String,
}

impl Observation {
    /// An observation from its row: `evidence_json` as stored.
    #[must_use]
    pub fn parse(node: String, evidence_json: &str, observed_at: Option<i64>) -> Self {
        let value: serde_json::Value =
            serde_json::from_str(evidence_json).unwrap_or(serde_json::Value::Null);
        let field = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        let shown = |v: Option<&serde_json::Value>| match v {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "?".to_owned(),
        };
        let drift = value
            .get("drift")
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|item| Drift {
                        setting: shown(item.get("setting")),
                        expected: shown(item.get("expected")),
                        actual: shown(item.get("actual")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            node,
            readiness: field("readiness"),
            existence: field("existence"),
            configuration: field("configuration"),
            observed_at,
            error_code: field("error_code"),
            drift,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_keep_their_drift_and_error_code() {
        let evidence = r#"{"configuration":"drifted","drift":[{"setting":"port","expected":8080,"actual":"9090"},{"setting":"env"}],"error_code":"health.status_mismatch","existence":"present","observed_at":1796118096961,"readiness":"unready"}"#;
        let o = Observation::parse("service:web".into(), evidence, Some(7));
        assert_eq!(o.error_code.as_deref(), Some("health.status_mismatch"));
        assert_eq!(
            o.drift,
            [
                Drift {
                    setting: "port".into(),
                    expected: "8080".into(),
                    actual: "9090".into()
                },
                Drift {
                    setting: "env".into(),
                    expected: "?".into(),
                    actual: "?".into()
                }
            ]
        );
        let clean = Observation::parse(
            "service:web".into(),
            r#"{"error_code":null,"drift":[]}"#,
            None,
        );
        assert_eq!((clean.error_code, clean.drift), (None, vec![]));
    }
}
