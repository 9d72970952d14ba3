//! stackless-tui: a terminal operations console for stackless state stores.
//!
//! Architecture (one guess per folder):
//! - [`model`]: the pure core's data (snapshot rows, names, liveness,
//!   envelopes, countdown text). No I/O.
//! - [`reaper`]: the reap decision and backoff (pure, `reaper::decision`),
//!   the teardown runner and the reaper thread (adapters).
//! - [`store`]: the `SQLite` adapter and the watcher thread.
//! - [`supervisor`]: the helper supervisor thread (succession).
//! - [`ui`]: the view model, each pane, the terminal.
//! - [`event`]: the one event enum flowing into the render loop.
//! - [`console`]: wiring: threads, channel, render loop.
//! - [`demo`]: the seeded demo store, demo teardown and demo helper.

#![warn(unreachable_pub)]

pub mod audit;
// Only for the benches and examples/gen_store.rs (Cargo.toml: the
// `bench-support` feature, on for dev targets only).
#[cfg(feature = "bench-support")]
#[doc(hidden)]
pub mod bench_support;
pub mod cancel;
pub mod cli;
pub mod console;
pub mod controller;
pub mod demo;
pub mod event;
// Test-only unless the `fault-injection` feature is on (Cargo.toml).
#[doc(hidden)]
pub mod fault;
pub mod headless;
pub mod model;
pub mod reaper;
pub mod recorder;
pub mod roles;
pub mod startup;
pub mod store;
pub mod supervisor;
pub mod ui;
