//! Tests against the real stackless 0.4.0 (built from crates.io as
//! `examples/real_stackless`, see [`harness`]): real `up`/`down`, a real
//! failed `up`, a real queued operation cancelled by the CLI, the real
//! controller's lease reaper, each read back through this crate's store,
//! reaper and headless `snapshot`; the fleet view's `L` and `v` on a real
//! host behind the real sshd of the end-to-end tests ([`sshd`]: skipped
//! as they are when sshd is missing and `CI` is unset).
//!
//! Each test gets its own stackless (a temporary root, a free proxy port)
//! and the tests run one at a time. They need `python3` on `PATH` (the
//! local service is `python3 -m http.server`).
//!
//! `cargo test --locked` builds the example first; run alone with
//! `cargo build --locked --example real_stackless && cargo test --locked --test real`.

// Tests, benches and examples read as scenarios top to bottom, and
// unwrap where a failure is the test's own: the shape lints
// (Cargo.toml [lints.clippy]) are for the crate's code.
#![allow(clippy::unwrap_used, clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;
mod harness;
/// The pseudo-terminal harness of the end-to-end tests, for the soak's
/// console.
#[path = "../e2e/harness.rs"]
mod pty;
/// The real OpenSSH server of the end-to-end tests, for the fleet's hosts.
#[path = "../e2e/sshd.rs"]
#[allow(dead_code, reason = "the fleet tests use part of it")]
mod sshd;

mod cancel;
mod demo;
mod failed_up;
mod fleet_verbs;
mod gen_store;
mod logs;
mod pending;
mod queue;
mod reap;
mod rebirth;
mod renew;
mod secrets;
mod services;
mod soak;
mod stages;
mod up;
mod who_reaps;
