//! The UI drawn into ratatui's `TestBackend` (no terminal), in one test
//! binary: the panes and the operator flows, with insta snapshots in
//! `tests/snapshots/`.
//!
//! `cargo test --test ui <module>::` runs one file.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;

/// `insta::assert_snapshot!(name, value)` against
/// `tests/snapshots/<module>__<name>.snap`, `<module>` being the calling
/// module's name (`ui_panes`, `ui_operator`): the names these snapshots had
/// when each file was its own test binary (insta would otherwise prefix the
/// whole module path, `ui__ui_panes__`, and look in `tests/ui/snapshots/`).
macro_rules! assert_snapshot {
    ($name:expr, $value:expr $(,)?) => {{
        let module = module_path!().rsplit("::").next().expect("a module");
        insta::with_settings!({
            snapshot_path => "../snapshots",
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(format!("{module}__{}", $name), $value);
        });
    }};
}

mod ui_confirm;
mod ui_faults;
mod ui_fleet;
mod ui_fleet_app;
mod ui_fulltext;
mod ui_jump_bulk_filter;
mod ui_layout;
mod ui_logs;
mod ui_marks;
mod ui_operations;
mod ui_operator;
mod ui_panes;
mod ui_partial;
mod ui_reaper;
mod ui_rebirth;
mod ui_remote;
mod ui_replay;
mod ui_rows_reachable;
mod ui_verbs;
