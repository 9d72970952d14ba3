//! The pure core's data: what a stackless state store holds, as plain values.
//!
//! Nothing in `model` does I/O. The store adapter (`crate::store`) fills these
//! types from `SQLite`; the reaper's decision (`crate::reaper::decision`) and the
//! view model (`crate::ui::view`) read them. Times are **unix seconds** (i64)
//! throughout, as in the store itself (stackless schema, "Times are unix
//! seconds").

pub mod activity;
pub mod backoff;
pub mod clock_evidence;
pub mod confirm;
pub mod controller;
pub mod detail;
pub mod envelope;
pub mod fulltext;
pub mod generation;
pub mod liveness;
pub mod logbuffer;
pub mod logmerge;
pub mod logtext;
pub mod logview;
pub mod name;
pub mod observe;
pub mod op_rules;
pub mod operation;
pub mod reaper_status;
pub mod repeats;
pub mod rows;
pub mod services;
pub mod snapshot;
pub mod text;
pub mod time;

pub use generation::Generation;
pub use liveness::Liveness;
pub use operation::{OpStatus, Operation};
pub use rows::{
    Birth, Instance, Instances, Lease, OpLock, OperationIndex, ReapAttempt, Rows, Status,
};
pub use snapshot::Snapshot;
