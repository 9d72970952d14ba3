//! When the agent's `hello` and first group go: once the store's rows
//! were read, who reaps is known and the rows' dead service counts came,
//! each wait bounded (docs/protocol.md, "Snapshots").

use std::time::Duration;

/// How long `hello` waits for the role thread to say who reaps.
const ROLE_WAIT: Duration = Duration::from_secs(2);

/// How long the first group waits for the watcher's first services read
/// (the rows' dead service counts) at most: a stream's first group holds
/// them (no second group of every counted row right after it; measured
/// at 100k, that doubled the bytes of the first snapshot, and a fleet
/// console of 50 hosts held 34 MiB more).
const SERVICES_WAIT: Duration = Duration::from_secs(10);

/// Whether `hello` and the first group go now: once the store's rows
/// were read (`loaded`), the role thread said who reaps (`role_known`,
/// or [`ROLE_WAIT`] after the start) and the services' first read came
/// (`counted`), all at most until `waited` reaches the wait of each.
pub(super) fn first_group_ready(
    loaded: bool,
    (role_known, counted): (bool, bool),
    waited: Duration,
) -> bool {
    loaded && (role_known || waited >= ROLE_WAIT) && (counted || waited >= SERVICES_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO: Duration = Duration::ZERO;

    #[test]
    fn the_first_group_waits_for_the_rows_who_reaps_and_the_counts_each_at_most_its_wait() {
        let ready =
            |loaded, known, counted, waited| first_group_ready(loaded, (known, counted), waited);
        assert!(ready(true, true, true, NO));
        assert!(!ready(false, true, true, NO));
        assert!(!ready(true, false, true, NO));
        assert!(!ready(true, true, false, NO));
        assert!(!ready(
            true,
            true,
            false,
            SERVICES_WAIT - Duration::from_millis(1)
        ));
        assert!(ready(true, true, false, SERVICES_WAIT));
        assert!(ready(true, false, true, ROLE_WAIT));
        assert!(!ready(false, true, true, SERVICES_WAIT));
    }
}
