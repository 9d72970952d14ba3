//! The detail view's store text, sanitized once when it is read
//! ([`DetailText::new`]) so drawing a frame only borrows: multi-line text
//! split on `\n` first, then each line sanitized and cut
//! ([`super::MAX_LINE_CHARS`]).

use super::doc::{MAX_BLOCK_LINES, MAX_DEFINITION_LINES, MAX_LINE_CHARS};
use crate::model::services::DetailView;
use crate::model::text::sanitize_short;

/// Multi-line store text as drawable lines: split on `\n` first (a trailing
/// `\r` dropped, tabs expanded), then each line sanitized and cut to
/// [`MAX_LINE_CHARS`]; at most `max_lines`, the rest counted in a last line.
#[must_use]
pub fn text_lines(text: &str, max_lines: usize) -> Vec<String> {
    let text = text.trim_end_matches(['\n', '\r']);
    let mut out = Vec::new();
    let mut lines = text.split('\n');
    for line in lines.by_ref().take(max_lines) {
        let line = line
            .strip_suffix('\r')
            .unwrap_or(line)
            .replace('\t', "    ");
        out.push(sanitize_short(&line, MAX_LINE_CHARS));
    }
    let rest = lines.count();
    if rest > 0 {
        out.push(format!("… {rest} more lines"));
    }
    out
}

/// JSON pretty-printed (keys in stored order; a multi-line string as its
/// lines: [`crate::model::fulltext::pretty`]) when it parses, else as
/// [`text_lines`].
#[must_use]
pub fn json_lines(text: &str, max_lines: usize) -> Vec<String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => text_lines(&crate::model::fulltext::pretty(&value), max_lines),
        Err(_) => text_lines(text, max_lines),
    }
}

/// One checkpoint, sanitized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointText {
    /// `step_id`.
    pub step_id: String,
    /// `resource_kind`.
    pub resource_kind: String,
    /// `resource_id`.
    pub resource_id: String,
    /// `recorded_at`.
    pub recorded_at: Option<i64>,
    /// The payload, pretty-printed when it is JSON.
    pub payload: Vec<String>,
}

/// [`InstanceDetail`] sanitized once, ready to draw every frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailText {
    /// `definition_dir` (empty when the store has no such column).
    pub definition_dir: String,
    /// `source_overrides`, pretty-printed when it is JSON.
    pub source_overrides: Vec<String>,
    /// The checkpoints, oldest first.
    pub checkpoints: Vec<CheckpointText>,
    /// The definition TOML, one entry per line.
    pub definition: Vec<String>,
    /// The services, probed when read (`store::services::observe`).
    pub services: Vec<crate::model::services::Service>,
    /// The proxy port their origins are on (the controller probe's,
    /// [`crate::model::controller::ControllerState::proxy_port`]; `None`
    /// before the first probe: no origin shown).
    pub proxy_port: Option<u16>,
    /// What a schema-14 birth owns and was observed to be
    /// ([`crate::ui::detail::v14`]); empty before schema 7. Times relative to
    /// when the detail was read.
    pub birth_sections: Vec<super::v14::Section>,
}

impl DetailText {
    /// Sanitize `detail` for drawing, with times relative to `now` (unix
    /// seconds, when it was read) and its services' origins on
    /// `proxy_port`.
    #[must_use]
    pub fn new(view: &DetailView, now: i64, proxy_port: Option<u16>) -> Self {
        let detail = &view.detail;
        Self {
            services: view.services.clone(),
            proxy_port,
            birth_sections: super::v14::sections(detail, now),
            definition_dir: sanitize_short(&detail.definition_dir, MAX_LINE_CHARS),
            source_overrides: json_lines(&detail.source_overrides, MAX_BLOCK_LINES),
            checkpoints: detail
                .checkpoints
                .iter()
                .map(|c| CheckpointText {
                    step_id: sanitize_short(&c.step_id, MAX_LINE_CHARS),
                    resource_kind: sanitize_short(&c.resource_kind, MAX_LINE_CHARS),
                    resource_id: sanitize_short(&c.resource_id, MAX_LINE_CHARS),
                    recorded_at: c.recorded_at,
                    payload: json_lines(&c.payload, MAX_BLOCK_LINES),
                })
                .collect(),
            definition: if detail.definition.is_empty() {
                Vec::new()
            } else {
                text_lines(&detail.definition, MAX_DEFINITION_LINES)
            },
        }
    }
}
