//! Fault injection for the end-to-end tests of crash handling: with
//! `STACKLESS_TUI_FAULT=panic:<point>` set, the named thread panics at its
//! next step (`render`, `reaper`, `watcher`, `supervisor`); with
//! `STACKLESS_TUI_FAULT=hold:<point>:<path>` it waits there while the file
//! at `path` is there (`audit-counts`: before each count of the trail;
//! `services`: before each read of the services' checkpoints); with
//! `STACKLESS_TUI_CLOCK_OFFSET=<seconds>` the wall clock this process reads
//! ([`crate::model::time::unix_now`]) is that far off (a clock already
//! wrong at start-up, as `faketime` makes one; the kernel's clock is not).
//!
//! Only in test builds: the `fault-injection` feature, which this crate's
//! own tests turn on (a self dev-dependency in Cargo.toml). Without it (any
//! `cargo build`, the release binary), [`inject`] is an empty inline
//! function and the variable is never read.

#[cfg(feature = "fault-injection")]
/// The environment variable naming the fault to inject.
pub const ENV: &str = "STACKLESS_TUI_FAULT";

/// Panic here when `STACKLESS_TUI_FAULT=panic:<point>`.
///
/// # Panics
/// Exactly when the fault names `point`: that is its purpose.
#[cfg(feature = "fault-injection")]
pub fn inject(point: &str) {
    use std::sync::OnceLock;
    static FAULT: OnceLock<Option<String>> = OnceLock::new();
    let fault = FAULT.get_or_init(|| std::env::var(ENV).ok());
    if let Some(target) = fault.as_deref().and_then(|f| f.strip_prefix("panic:"))
        && target == point
    {
        panic!("injected fault: panic in the {point} thread ({ENV})");
    }
}

/// Fault injection is compiled out (no `fault-injection` feature): nothing.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn inject(_point: &str) {}

/// Wait here while `STACKLESS_TUI_FAULT=hold:<point>:<path>` names
/// `point` and a file is at `path` (a slow step, held for as long as a
/// test keeps the file; looked at every 20 ms).
#[cfg(feature = "fault-injection")]
pub fn hold(point: &str) {
    let Ok(fault) = std::env::var(ENV) else {
        return;
    };
    let Some((target, gate)) = fault
        .strip_prefix("hold:")
        .and_then(|rest| rest.split_once(':'))
    else {
        return;
    };
    while target == point && std::fs::symlink_metadata(gate).is_ok() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Fault injection is compiled out (no `fault-injection` feature): nothing.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn hold(_point: &str) {}

/// The wall clock's shift (`STACKLESS_TUI_CLOCK_OFFSET`): the hook lives
/// where the clock is read, in `model` (which imports nothing outside
/// `model`); named here with the other faults.
#[cfg(feature = "fault-injection")]
pub use crate::model::time::CLOCK_ENV;
pub use crate::model::time::clock_offset;
