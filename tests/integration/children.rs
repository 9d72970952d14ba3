//! Every child the console starts for its answer runs through the one
//! runner (`src/process_group/run.rs`: output bounded, group stopped
//! through `src/process_group.rs`, answer redacted), and only
//! `src/process_group.rs` signals a process group: read from the sources
//! (comments and strings left out), as `arrows.rs` reads imports.

use std::path::{Path, PathBuf};

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `code` with `//` comments blanked (doc comments among them: a rule
/// named in prose is no call) and clap's `Command` (a parser, no process)
/// left out.
fn without_comments(code: &str) -> String {
    code.lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("clap::Command", "clap")
}

/// Each source file (relative to the crate, `src/...`) whose code holds
/// `needle`.
fn files_with(needle: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rs_files(&root.join("src"), &mut files);
    let mut found: Vec<String> = files
        .iter()
        .filter(|path| without_comments(&std::fs::read_to_string(path).unwrap()).contains(needle))
        .map(|path| {
            path.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    found.sort();
    found
}

#[test]
fn only_process_group_rs_signals_a_process_group() {
    assert_eq!(files_with("killpg"), ["src/process_group.rs"]);
}

/// The programs started elsewhere are not children run for an answer: the
/// supervised helper (a long-lived process whose output is discarded) and
/// `ssh` to a remote console (a stream read line by line).
#[test]
fn every_child_run_for_its_answer_goes_through_the_one_runner() {
    assert_eq!(
        files_with("Command::new("),
        [
            "src/launcher/ssh.rs",
            "src/process_group/run.rs",
            "src/supervisor/thread.rs",
        ]
    );
    assert_eq!(files_with("tokio::process"), ["src/process_group/run.rs"]);
    assert_eq!(files_with("wait_with_output"), Vec::<String>::new());
}
