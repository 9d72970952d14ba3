//! Fault injection for the end-to-end tests of crash handling: with
//! `STACKLESS_TUI_FAULT=panic:<point>` set, the named thread panics at its
//! next step (`render`, `reaper`, `watcher`, `supervisor`). Unset (always,
//! outside tests), this is one cached environment lookup.

use std::sync::OnceLock;

/// The environment variable naming the fault to inject.
pub const ENV: &str = "STACKLESS_TUI_FAULT";

/// Panic here when `STACKLESS_TUI_FAULT=panic:<point>`.
///
/// # Panics
/// Exactly when the fault names `point`: that is its purpose.
pub fn inject(point: &str) {
    static FAULT: OnceLock<Option<String>> = OnceLock::new();
    let fault = FAULT.get_or_init(|| std::env::var(ENV).ok());
    if let Some(target) = fault.as_deref().and_then(|f| f.strip_prefix("panic:"))
        && target == point
    {
        panic!("injected fault: panic in the {point} thread ({ENV})");
    }
}
