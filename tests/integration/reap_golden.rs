//! `reap --once --dry-run` prints the same lines for the same store and
//! wall clock however its pass reads the store (whole, or streamed with
//! only the instances it acts on held): each fixture store's output is
//! compared with its golden file under `tests/fixtures/golden/`
//! (`*.reap`), and a generated store of 100,000 instances with its golden
//! fingerprint. The wall clock is set to the fixtures' capture time with
//! `STACKLESS_TUI_CLOCK_OFFSET` (the `fault-injection` build's).
//!
//! A deliberate change of the output regenerates them:
//! `UPDATE_GOLDEN=1 cargo test --test integration reap_golden`.

use std::path::Path;
use std::process::Command;

use super::snapshot_golden::{FIXTURES, against_golden, fingerprint, replace, steady_locks};
use crate::common::{CAPTURE, fixture};

/// `reap --once --dry-run --state PATH` at the wall clock `now` as the
/// binary prints it: `exit N` on the first line, then stdout, then
/// `stderr:` and stderr. No teardown command is on `PATH` (the dry run's
/// note says so the same way on every machine).
fn dry_run(path: &Path, now: i64) -> Vec<u8> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stackless-tui"));
    command
        .env_remove("STACKLESS_STATE_URL")
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .env("XDG_STATE_HOME", "/nonexistent-state")
        .env("PATH", "/nonexistent-path")
        .env("TZ", "UTC0");
    for (key, _) in std::env::vars() {
        if key.starts_with("STACKLESS_TUI_") {
            command.env_remove(key);
        }
    }
    let offset = now - stackless_tui::model::time::unix_now();
    let out = command
        .env("STACKLESS_TUI_CLOCK_OFFSET", offset.to_string())
        .args(["reap", "--once", "--dry-run", "--state"])
        .arg(path)
        .output()
        .expect("run the binary");
    let mut bytes = format!("exit {:?}\n", out.status.code()).into_bytes();
    bytes.extend_from_slice(&out.stdout);
    bytes.extend_from_slice(b"stderr:\n");
    bytes.extend_from_slice(&out.stderr);
    bytes
}

/// Each fixture at its capture time (where the store's newest writes
/// pause the pass on three of them: the clock evidence is read as the
/// pass reads the rows) and two days on (after every fixture's newest
/// write, every lease expired; still behind any machine's clock from the
/// day the fixtures were made, which a kernel check never doubts).
#[test]
fn reap_dry_run_prints_the_golden_lines_of_every_fixture_store() {
    for name in FIXTURES {
        let (dir, path) = fixture(name);
        steady_locks(name, &path);
        let shown = dir.path().display().to_string();
        let mut got = replace(&dry_run(&path, CAPTURE), &shown, "$DIR");
        got.extend_from_slice(b"two days on:\n");
        got.extend(replace(
            &dry_run(&path, CAPTURE + 2 * 86_400),
            &shown,
            "$DIR",
        ));
        against_golden(&format!("{name}.reap"), &got);
    }
}

#[test]
fn reap_dry_run_of_a_generated_100k_store_keeps_its_golden_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    // Locks "on this host" name a host that is no machine's: read as
    // foreign (never probed), the output is the same on any machine.
    let spec = stackless_tui::bench_support::GenSpec {
        instances: 100_000,
        seed: 42,
        now: CAPTURE,
        host: "golden-host.invalid".into(),
    };
    stackless_tui::bench_support::generate(&path, &spec).unwrap();
    let shown = dir.path().display().to_string();
    let got = replace(&dry_run(&path, CAPTURE + 600), &shown, "$DIR");
    assert!(got.starts_with(b"exit Some(0)\n"), "the dry run exits 0");
    assert!(
        got.windows(b"would reap".len())
            .filter(|w| w == b"would reap")
            .count()
            > 1000,
        "the pass would reap many instances"
    );
    against_golden(
        "generated-100k.reap.fingerprint",
        fingerprint(&got).as_bytes(),
    );
}
