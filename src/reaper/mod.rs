//! The reaper: the pure decision ([`decision`]), the teardown runner
//! ([`teardown`]) and the background thread that applies stackless §6 every
//! tick ([`runner`]), which the operator pauses or hurries ([`control`]).

pub(crate) mod clock;
pub(crate) mod control;
pub mod decision;
pub mod jobs;
pub(crate) mod kernel_clock;
pub mod runner;
pub(crate) mod teardown;
pub mod verbs;

pub use crate::model::reaper_status::{LastPass, PassSummary, ReaperStatus};
pub use control::ReaperControl;
pub use jobs::{InFlight, Intent, Job, JobRunner, ReaperConfig};
pub use runner::Reaper;
pub use teardown::DownCommand;
