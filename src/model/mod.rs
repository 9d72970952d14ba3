//! The pure core's data: what a stackless state store holds, as plain values.
//!
//! Nothing in `model` does I/O. The store adapter (`crate::store`) fills these
//! types from `SQLite`; the reaper's decision (`crate::reaper::decision`) and the
//! view model (`crate::ui::view`) read them. Times are **unix seconds** (i64)
//! throughout, as in the store itself (stackless schema, "Times are unix
//! seconds").

pub(crate) mod activity;
pub(crate) mod backoff;
pub mod birth_check;
pub(crate) mod clock_evidence;
pub(crate) mod confirm;
pub mod controller;
pub mod detail;
pub mod envelope;
pub mod fleet;
pub mod fulltext;
pub mod gc;
pub mod generation;
pub mod history;
pub mod liveness;
pub(crate) mod logbuffer;
pub(crate) mod logmerge;
pub mod logtext;
pub mod logview;
pub mod metrics;
pub mod name;
pub mod observe;
pub(crate) mod op_rules;
pub mod operation;
pub mod protocol;
pub mod readiness;
pub mod reaper_status;
pub mod recorded_teardowns;
pub mod redact;
pub(crate) mod repeats;
pub(crate) mod rows;
pub mod rules;
pub mod services;
pub(crate) mod snapshot;
pub mod sort_key;
pub mod text;
pub mod time;
pub mod verbs;

pub use generation::Generation;
pub use liveness::Liveness;
pub use operation::{OpStatus, Operation};
pub use rows::{
    Anomalies, Birth, BirthStr, Instance, Instances, Lease, OpLock, OperationIndex, OtherStatus,
    ReapAttempt, Rows, Status, Substrate,
};
pub use snapshot::{Partial, Snapshot};
