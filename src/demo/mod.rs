//! The demo: a seeded state store that shows every state the console draws
//! ([`seed()`]) with service logs for `l` ([`logs`], and a writer that
//! keeps one of them growing), a stand-in for `stackless down NAME --json` that works on it
//! ([`down`]), and a helper process built on succession for the supervisor
//! pane ([`helper`]).
//!
//! `--demo` (0.4.0) seeds a schema-14 store instead ([`v14`]) and plays
//! stackless 0.4.0's part on it: a controller stand-in that runs the
//! operation queue ([`controller`]) and a CLI stand-in for the commands
//! the console runs ([`stackless`]); `--demo v4` keeps the schema-4 store.
//!
//! Nothing here is used against a real stackless store: `--demo` creates a
//! fresh file, and the console's commands are pointed at the demo's
//! stand-ins instead of `stackless`.

pub mod controller;
pub mod down;
pub mod helper;
pub(crate) mod logs;
pub mod seed;
pub mod stackless;
pub mod v14;

pub use seed::{LiveHolder, seed};
