//! The binary's heap: mimalloc, its memory committed page by page as used
//! and handed back as soon as it is free (`src/main.rs`; at a million
//! instances, the console's `VmHWM` 315 MB under glibc, 280 MB so).

use std::process::Command;

/// mimalloc's own account of its options (`MIMALLOC_VERBOSE=1` prints
/// each as `option 'NAME': VALUE` on stderr when it starts), for one run
/// of `--version` with `env` added.
fn mimalloc_options(env: &[(&str, &str)]) -> Vec<String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stackless-tui"));
    command.arg("--version").env("MIMALLOC_VERBOSE", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|line| line.starts_with("option '"))
        .map(|line| line.trim_end().to_owned())
        .collect()
}

#[test]
fn the_heap_is_mimalloc_committed_as_used_and_purged_at_once() {
    let options = mimalloc_options(&[]);
    // The option numbers `src/main.rs` sets are the ones these names
    // have in the mimalloc that is linked in.
    for wanted in ["option 'arena_eager_commit': 0", "option 'purge_delay': 0"] {
        assert!(
            options.iter().any(|line| line == wanted),
            "{wanted:?} not among {options:#?}"
        );
    }
}

#[test]
fn the_environment_does_not_undo_the_binarys_heap_options() {
    let options = mimalloc_options(&[
        ("MIMALLOC_ARENA_EAGER_COMMIT", "2"),
        ("MIMALLOC_PURGE_DELAY", "1000"),
    ]);
    let of = |name: &str| {
        options
            .iter()
            .find(|line| line.starts_with(&format!("option '{name}':")))
            .cloned()
    };
    assert_eq!(
        of("arena_eager_commit").as_deref(),
        Some("option 'arena_eager_commit': 0")
    );
    assert_eq!(
        of("purge_delay").as_deref(),
        Some("option 'purge_delay': 0")
    );
}
