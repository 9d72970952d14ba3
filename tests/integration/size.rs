//! The size rules of the project's brief, checked: no file in `src/` over
//! 700 lines, and the teardown job's `execute` (once 143 lines) kept
//! short as its named steps.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_700_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let long: Vec<(String, usize)> = files
        .iter()
        .map(|p| (p, std::fs::read_to_string(p).unwrap().lines().count()))
        .filter(|(_, n)| *n > 700)
        .map(|(p, n)| (p.display().to_string(), n))
        .collect();
    assert_eq!(long, Vec::<(String, usize)>::new());
}

/// The lines of the function whose signature starts `start` (indented by
/// four spaces: a method), up to its closing brace.
fn method_lines(text: &str, start: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("{start} not found"));
    let end = lines[first..]
        .iter()
        .position(|l| *l == "    }")
        .expect("its closing brace");
    end + 1
}

#[test]
fn the_teardown_jobs_execute_is_under_80_lines() {
    let jobs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/reaper/jobs.rs"))
            .unwrap();
    let n = method_lines(&jobs, "pub(super) fn execute(");
    assert!(n < 80, "JobRunner::execute is {n} lines");
}
