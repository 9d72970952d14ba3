//! Adapters for the stackless controller (0.4.0; the daemon of 0.2/0.3):
//! - [`probe`]: which process serves a store, and its persistence warning
//!   (files under `<state_dir>`, `/proc/locks`);
//! - [`lease_reaper`]: whether it runs stackless's lease reaper (asked on
//!   `daemon.sock`, or read from its command line);
//! - [`answer`]: one such command run for its `--json` answer (argv, its
//!   own process group, a deadline);
//! - [`cancel`]: `stackless operation cancel ID --json`, run as argv (never
//!   through a shell);
//! - [`queue_down`]: `stackless down NAME --no-wait --json`, a teardown
//!   queued behind a pending operation (`d` on a schema-14 store).

pub mod answer;
pub mod cancel;
pub mod lease_reaper;
pub mod probe;
pub mod queue_down;
