//! The reaper: the pure decision ([`decision`]), the teardown runner
//! ([`teardown`]) and the background thread that applies stackless §6 every
//! tick ([`runner`]).

pub mod decision;
