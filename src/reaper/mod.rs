//! The reaper: the pure decision ([`decision`]), the teardown runner
//! ([`teardown`]) and the background thread that applies stackless §6 every
//! tick ([`runner`]).

pub mod clock;
pub mod decision;
pub mod jobs;
pub mod kernel_clock;
pub mod runner;
pub mod teardown;

pub use jobs::{InFlight, Intent, ReaperConfig, Teardowns};
pub use runner::{PassSummary, Reaper};
pub use teardown::DownCommand;
