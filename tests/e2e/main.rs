//! End-to-end tests of the real `stackless-tui` binary in pseudo-terminals
//! (the harness: [`harness`]), in one test binary. The binary under test is
//! the one `cargo test` builds, with the `fault-injection` feature (see
//! Cargo.toml), which [`faults`] needs.
//!
//! `cargo test --test e2e <module>::` runs one file.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod integrity;

mod bulk;
mod bulk_renew;
mod bursts_signals_and_swaps;
mod canaries;
mod console_records;
mod faults;
mod fleet;
mod fleet_console;
mod fleet_follow;
mod fleet_record;
mod fleet_waves;
mod hidden_rows;
mod logs;
mod operator;
mod pty;
mod read_only;
mod reaper_keys;
mod remote;
mod remote_stream;
mod replay;
mod sshd;
