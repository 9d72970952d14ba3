//! The shape of the code by purpose, not by a line cap. Function length,
//! argument lists, bool-heavy structs, `Option<Option<_>>` and `unwrap` are
//! clippy's (`Cargo.toml [lints.clippy]`: `too_many_lines` at 80 lines in
//! `clippy.toml`, run with `-D warnings`). What clippy cannot see: the UI
//! state stays a handful of parts, not a field per mode (its layers,
//! tables and status are sub-states).

use std::path::Path;

/// The fields of `pub struct App` in `src/ui/app/mod.rs`.
fn app_fields() -> Vec<String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui/app/mod.rs"))
            .unwrap();
    let start = text.find("pub struct App {").expect("struct App");
    let body = &text[start..];
    let end = body.find("\n}\n").expect("its end");
    body[..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with('#') && l.contains(':'))
        .map(|l| {
            l.trim_start_matches("pub(crate) ")
                .split(':')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn the_ui_state_is_a_handful_of_parts() {
    let fields = app_fields();
    assert!(
        fields.len() <= 22,
        "App has {} fields: group them into a sub-state or a layer: {fields:?}",
        fields.len()
    );
    // Modes are layers, not fields of their own.
    for mode in [
        "confirm", "help", "detail", "logs", "full", "op_open", "command",
    ] {
        assert!(
            !fields.iter().any(|f| f == mode),
            "{mode} is a layer: {fields:?}"
        );
    }
    assert!(fields.iter().any(|f| f == "layers"), "{fields:?}");
}
