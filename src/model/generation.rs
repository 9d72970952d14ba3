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

/// How the console's behaviour relates to the store's age.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 1..=3: written by an older stackless. Shown as it is; the reaper and the
    /// write keys are off, because acting would need tables or columns
    /// (`reap_attempts`, `holder_host`) that only an upgrade creates.
    Older,
    /// 4: the schema this console knows; full function.
    Current,
    /// Above 4: a newer stackless. Known tables and columns are shown and the
    /// reaper still runs (teardown is delegated to `stackless down`, which
    /// knows its own schema), but tombstone GC is left to stackless: deleting
    /// rows could strand tables this console does not know.
    Newer,
}

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
        if self.user_version < CURRENT_USER_VERSION {
            Era::Older
        } else if self.user_version == CURRENT_USER_VERSION {
            Era::Current
        } else {
            Era::Newer
        }
    }

    /// Whether the reaper may run (teardowns and `reap_attempts` writes).
    #[must_use]
    pub const fn allows_reaper(self) -> bool {
        !matches!(self.era(), Era::Older)
    }

    /// Whether the operator keys `r` and `d` may act.
    #[must_use]
    pub const fn allows_write_keys(self) -> bool {
        self.allows_reaper()
    }

    /// Whether the reaper may garbage-collect tombstones (delete rows).
    #[must_use]
    pub const fn allows_gc(self) -> bool {
        matches!(self.era(), Era::Current)
    }

    /// The banner the console shows for this generation, if any: what is off
    /// and what the operator can do about it.
    #[must_use]
    pub fn banner(self) -> Option<String> {
        match self.era() {
            Era::Current => None,
            Era::Older => Some(format!(
                "store schema v{} is older than v{CURRENT_USER_VERSION}: reaper and write keys are off. \
                 Run any `stackless` command (e.g. `stackless list`) to upgrade the store.",
                self.user_version
            )),
            Era::Newer => Some(format!(
                "store schema v{} is newer than v{CURRENT_USER_VERSION}: showing known tables only; \
                 tombstone GC is left to stackless.",
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

        let current = Generation::new(4);
        assert_eq!(current.era(), Era::Current);
        assert!(current.allows_reaper() && current.allows_write_keys() && current.allows_gc());
        assert_eq!(current.banner(), None);

        let newer = Generation::new(6);
        assert_eq!(newer.era(), Era::Newer);
        assert!(newer.allows_reaper());
        assert!(!newer.allows_gc());
        assert_eq!(
            newer.banner().as_deref(),
            Some(
                "store schema v6 is newer than v4: showing known tables only; tombstone GC is left to stackless."
            )
        );
    }
}
