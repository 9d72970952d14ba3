//! The real stackless 0.4.0 CLI, built from crates.io: exactly its `main`
//! (stackless-0.4.0/src/main.rs). `cargo test` builds it to
//! `<target>/debug/examples/real_stackless`, where `tests/real` finds it.
//! It must be nothing but `run()`: the controller re-executes this binary
//! for `daemon run`, `daemon helper` and `daemon workload`.

fn main() -> std::process::ExitCode {
    stackless::cli::run()
}
