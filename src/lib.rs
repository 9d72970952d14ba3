//! stackless-tui: a terminal operations console for stackless state stores.
//!
//! Architecture (`docs/ARCHITECTURE.md` maps the layers, the threads and
//! the data flow; `tests/integration/arrows.rs` keeps the imports one
//! way):
//! - [`model`]: the pure core: rows, snapshot, liveness, backoff, schema
//!   generations, the controller's operations, activities, envelopes,
//!   services, full text, names, text, countdowns. No I/O.
//! - [`reaper`]: the reap decision (pure, `reaper::decision`), the teardown
//!   jobs, the reaper thread and the `down` subprocess (adapters).
//! - [`store`]: the `SQLite` adapter (open, read, write, detail), the
//!   watcher thread, the process probe.
//! - [`supervisor`]: the helper supervisor thread (succession).
//! - [`controller`]: the stackless controller beside a store (probe,
//!   cancel an operation).
//! - [`logs`]: an instance's service logs on disk: read from the end,
//!   followed on a thread (`logs-follower`) across rotation and truncation.
//! - [`audit`], [`recorder`]: the audit trail, and the one place an outcome
//!   becomes an audit, log and Activity line.
//! - [`ui`]: the App state, the one key table, the view model, each pane.
//! - [`event`]: the one event enum flowing into the render loop.
//! - [`startup`], [`roles`], [`stop`]: shared by the wiring: open the
//!   store the flags name, claim succession roles, stop threads.
//! - [`process_group`]: signalling a child's process group (TERM, then
//!   KILL after a grace), never group 0 or 1.
//! - [`nofollow`]: files the console creates, appends to or removes,
//!   never through a planted symbolic link; a file's `(device, inode)`.
//! - [`dispatch`]: the binary's entry point: flags -> the mode to run
//!   (here, or through [`launcher`] on the controller's host).
//! - [`cli`]: the flags, the subcommands and the config file; `man`
//!   beside it renders the man page from them and the key table.
//! - [`launcher`]: `--controller ssh://HOST`: runs this program on the
//!   controller's host through ssh before anything local starts; the pure
//!   plan (`launcher::plan`: targets, the ssh argv) and failure rules
//!   (`launcher::failure`: what ssh's exit status means) beside it; a
//!   fleet (`--controller` twice or more, `--fleet FILE`) is planned there
//!   too (`launcher::fleet`: the fleet file, the merge and the table,
//!   pure) and run by `fleet`.
//! - `fleet`: the runs over a fleet: its connections, link rules and
//!   runners: `snapshot [--json]` on every host at once, merged
//!   (`fleet::once`), `snapshot --follow` as one stream (`fleet::link`,
//!   `fleet::follow`), and the console over every host's agent
//!   (`fleet::console`, `fleet::hosts`, `fleet::conn`: one `serve
//!   --stdio` per host, drawn by `ui::app::over_fleet`).
//! - [`console`], [`headless`]: wiring: the interactive console; `snapshot`
//!   and `reap --once`.
//! - [`demo`]: the seeded demo store, demo teardown and demo helper.
//!
//! Rule citations: "§2", "§6", "D14" are sections of the state-store
//! contract, `docs/stackless-state-store.md`; "schema 5", "schema 14" and
//! "the controller's reaper (0.4.0)" are sections of
//! `docs/stackless-releases.md`.

#![warn(unreachable_pub)]

pub mod audit;
// Only for the benches and examples/gen_store.rs (Cargo.toml: the
// `bench-support` feature, on for dev targets only).
#[cfg(feature = "bench-support")]
#[doc(hidden)]
pub mod bench_support;
pub(crate) mod cli;
pub(crate) mod console;
pub mod controller;
pub mod demo;
pub mod dispatch;
pub mod event;
pub mod stop;
// Test-only unless the `fault-injection` feature is on (Cargo.toml).
#[doc(hidden)]
pub mod fault;
pub(crate) mod fleet;
pub mod headless;
pub mod history;
pub(crate) mod launcher;
pub mod logs;
mod man;
pub mod model;
pub mod nofollow;
pub(crate) mod process_group;
pub mod reaper;
pub mod recorder;
pub(crate) mod render_thread;
pub mod roles;
pub(crate) mod startup;
pub mod store;
pub mod supervisor;
pub mod ui;
