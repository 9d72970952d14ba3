//! The reaper: the pure decision ([`decision`]), the teardown runner
//! ([`teardown`]) and the background thread that applies stackless §6 every
//! tick ([`runner`]), which the operator pauses or hurries ([`control`]).

pub mod clock;
pub mod control;
pub mod decision;
pub mod jobs;
pub mod kernel_clock;
pub mod runner;
pub mod teardown;

pub use control::{LastPass, ReaperControl, ReaperStatus, StatusSink};
pub use jobs::{InFlight, Intent, ReaperConfig, Teardowns};
pub use runner::{PassSummary, Reaper};
pub use teardown::DownCommand;
