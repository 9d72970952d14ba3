//! The reaper: the pure decision ([`decision`]), the teardown runner
//! ([`teardown`]) and the background thread that applies stackless §6 every
//! tick ([`runner`]).

pub mod clock;
pub mod decision;
pub mod runner;
pub mod teardown;

pub use runner::{InFlight, Intent, PassSummary, Reaper, ReaperConfig, Teardowns};
pub use teardown::DownCommand;
