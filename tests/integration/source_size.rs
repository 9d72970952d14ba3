//! The size rules of the project's brief, for the UI: no file under
//! `src/ui` over 700 lines, and the UI state's `src/ui/app/mod.rs` kept
//! below 600 (it grows with every key; its accessors live in the
//! submodules by concern).

use std::path::Path;

/// Line counts of every `.rs` file under `dir`, recursively.
fn line_counts(dir: &Path, out: &mut Vec<(String, usize)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            line_counts(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            out.push((path.display().to_string(), lines));
        }
    }
}

#[test]
fn no_ui_file_over_700_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    let mut counts = Vec::new();
    line_counts(&root, &mut counts);
    let over: Vec<_> = counts.iter().filter(|(_, n)| *n > 700).collect();
    assert!(over.is_empty(), "over 700 lines: {over:?}");
}

#[test]
fn app_state_module_below_600_lines() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui/app/mod.rs");
    let lines = std::fs::read_to_string(path).unwrap().lines().count();
    assert!(lines < 600, "src/ui/app/mod.rs has {lines} lines");
}
