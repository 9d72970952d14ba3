//! Schema generations (`PRAGMA user_version`) and what the console may do on
//! each. The console never migrates an existing store and never lowers its
//! `user_version` (contract: "read what you know, write nothing you do not
//! understand, never downgrade").

/// The `user_version` of the stackless release this console was written
/// against (migrations 1-4).
pub const CURRENT_USER_VERSION: i64 = 4;

/// A store's schema generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Generation {
    /// `PRAGMA user_version` as read.
    pub user_version: i64,
}

impl Default for Generation {
    fn default() -> Self {
        Self {
            user_version: CURRENT_USER_VERSION,
        }
    }
}

/// How the console's behaviour relates to the store's generation
/// (docs/stackless-releases.md: the releases and the schemas they write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 1..=3: written by an older stackless. Shown as it is; the reaper and the
    /// write keys are off, because acting would need tables or columns
    /// (`reap_attempts`, `holder_host`) that only an upgrade creates.
    Older,
    /// 4 (the contract's source snapshot) and 5 (stackless 0.2.0, 0.3.0:
    /// schema 4 plus `instances.dirty`): full function, the reaper and GC
    /// exactly as the contract's §6 and D14.
    Contract,
    /// 14 (stackless 0.4.0): the controller runs every operation from a
    /// durable queue. Known in full; the reaper follows the controller's
    /// rules (an instance with a pending operation is skipped) and GC is
    /// left to the controller, which guards it by birth.
    Controller,
    /// 6..=13: never released (between 0.3.0's v5 and 0.4.0's v14). Known
    /// tables and columns are shown, the reaper runs through `stackless
    /// down`, GC is left to stackless.
    Unreleased,
    /// Above 14: a newer stackless than this console knows. As
    /// [`Era::Unreleased`].
    Newer,
}

/// The newest `user_version` this console knows (stackless 0.4.0).
pub const NEWEST_KNOWN_USER_VERSION: i64 = 14;

impl Generation {
    /// Wrap a `user_version`.
    #[must_use]
    pub const fn new(user_version: i64) -> Self {
        Self { user_version }
    }

    /// Which era the store belongs to. `user_version` 0 never reaches here
    /// for an existing store: the adapter refuses or creates the v4 schema.
    #[must_use]
    pub const fn era(self) -> Era {
        match self.user_version {
            v if v < CURRENT_USER_VERSION => Era::Older,
            4 | 5 => Era::Contract,
            14 => Era::Controller,
            6..=13 => Era::Unreleased,
            _ => Era::Newer,
        }
    }

    /// The stackless release that writes this `user_version`, when one does.
    #[must_use]
    pub const fn release(self) -> Option<&'static str> {
        match self.user_version {
            5 => Some("stackless 0.2.0 or 0.3.0"),
            14 => Some("stackless 0.4.0"),
            _ => None,
        }
    }

    /// Whether the reaper may run (teardowns and `reap_attempts` writes).
    #[must_use]
    pub const fn allows_reaper(self) -> bool {
        !matches!(self.era(), Era::Older)
    }

    /// Why the reaper may not run on this generation, as the header says it
    /// (`reaper: off (schema v2)`): `Some("schema v2")` where
    /// [`Generation::allows_reaper`] is false, else `None`. The console
    /// reads it from the generation of the store as it is now (the
    /// snapshot's, the reaper's last open), never only from start-up.
    #[must_use]
    pub fn reaper_off(self) -> Option<String> {
        (!self.allows_reaper()).then(|| format!("schema v{}", self.user_version))
    }

    /// Whether the operator keys `r` and `d` may act.
    #[must_use]
    pub const fn allows_write_keys(self) -> bool {
        self.allows_reaper()
    }

    /// Whether the console's reaper garbage-collects tombstones (deletes
    /// rows): only where the contract's D14 is the whole rule (v4, v5). On
    /// v14 the controller collects them behind a guard keyed by birth.
    #[must_use]
    pub const fn allows_gc(self) -> bool {
        matches!(self.era(), Era::Contract)
    }

    /// Whether the store has the controller's queue (`operations`,
    /// migration 8).
    #[must_use]
    pub const fn has_operations(self) -> bool {
        self.user_version >= 8
    }

    /// The banner the console shows for this generation, if any: what is off
    /// and what the operator can do about it. Known generations (4, 5, 14)
    /// have none.
    #[must_use]
    pub fn banner(self) -> Option<String> {
        match self.era() {
            Era::Contract | Era::Controller => None,
            Era::Older => Some(format!(
                "store schema v{} is older than v{CURRENT_USER_VERSION}: reaper and write keys are off. \
                 Run any `stackless` command (e.g. `stackless list`) to upgrade the store.",
                self.user_version
            )),
            Era::Unreleased => Some(format!(
                "store schema v{} was never released (stackless 0.2.0 and 0.3.0 write v5, 0.4.0 writes v14): \
                 showing known tables only; tombstone GC is left to stackless.",
                self.user_version
            )),
            Era::Newer => Some(format!(
                "store schema v{} is newer than v{NEWEST_KNOWN_USER_VERSION} (stackless 0.4.0): \
                 showing known tables only; tombstone GC is left to stackless.",
                self.user_version
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abilities_per_generation() {
        let older = Generation::new(2);
        assert_eq!(older.era(), Era::Older);
        assert!(!older.allows_reaper());
        assert!(!older.allows_write_keys());
        assert!(!older.allows_gc());
        assert_eq!(older.reaper_off().as_deref(), Some("schema v2"));
        assert_eq!(Generation::new(5).reaper_off(), None);

        for v in [4, 5] {
            let known = Generation::new(v);
            assert_eq!(known.era(), Era::Contract);
            assert!(known.allows_reaper() && known.allows_write_keys() && known.allows_gc());
            assert!(!known.has_operations());
            assert_eq!(known.banner(), None);
        }
        assert_eq!(
            Generation::new(5).release(),
            Some("stackless 0.2.0 or 0.3.0")
        );

        let controller = Generation::new(14);
        assert_eq!(controller.era(), Era::Controller);
        assert!(controller.allows_reaper() && controller.allows_write_keys());
        assert!(!controller.allows_gc());
        assert!(controller.has_operations());
        assert_eq!(controller.banner(), None);
        assert_eq!(controller.release(), Some("stackless 0.4.0"));

        let unreleased = Generation::new(6);
        assert_eq!(unreleased.era(), Era::Unreleased);
        assert!(unreleased.allows_reaper());
        assert!(!unreleased.allows_gc());
        assert!(!unreleased.has_operations());
        assert_eq!(
            unreleased.banner().as_deref(),
            Some(
                "store schema v6 was never released (stackless 0.2.0 and 0.3.0 write v5, 0.4.0 writes v14): showing known tables only; tombstone GC is left to stackless."
            )
        );
        let newer = Generation::new(15);
        assert_eq!(newer.era(), Era::Newer);
        assert!(newer.has_operations() && !newer.allows_gc());
        assert_eq!(
            newer.banner().as_deref(),
            Some(
                "store schema v15 is newer than v14 (stackless 0.4.0): showing known tables only; tombstone GC is left to stackless."
            )
        );
    }
}
