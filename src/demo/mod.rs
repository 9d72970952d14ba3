//! The demo: a seeded state store that shows every state the console draws
//! ([`seed()`]) with service logs for `l` ([`logs`], and a writer that
//! keeps one of them growing), a stand-in for `stackless down NAME --json` that works on it
//! ([`down`]), and a helper process built on succession for the supervisor
//! pane ([`helper`]).
//!
//! Nothing here is used against a real stackless store: `--demo` creates a
//! fresh file, and the reaper is pointed at `stackless-tui demo-down` instead
//! of `stackless down`.

pub mod down;
pub mod helper;
pub(crate) mod logs;
pub mod seed;

pub use seed::{LiveHolder, seed};
