//! One instance's full record for the detail view: what the snapshot does
//! not carry (the definition, `definition_dir`, `source_overrides`, the
//! checkpoints). Filled by `crate::store::detail`, drawn by `crate::ui::detail`.
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
}
