//! The real stackless 0.4.0 CLI, built from crates.io: exactly its `main`
//! (stackless-0.4.0/src/main.rs). `cargo test` builds it to
//! `<target>/debug/examples/real_stackless`, where `tests/real` finds it.
//! It must be nothing but `run()`: the controller re-executes this binary
//! for `daemon run`, `daemon helper` and `daemon workload`.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

fn main() -> std::process::ExitCode {
    stackless::cli::run()
}
