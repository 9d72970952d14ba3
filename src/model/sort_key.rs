//! The order of the Instances table, one set of keys on one host and
//! over a fleet (`s` cycles, `S` reverses, `:sort KEY`).

/// The order of the Instances table (`s` cycles through them), on one
/// host and over a fleet (where [`SortKey::Host`] is one more, and the
/// first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortKey {
    /// Soonest lease expiry first; instances without a lease (tombstones)
    /// last; ties by name.
    #[default]
    LeaseExpiry,
    /// By name (byte order, as stored).
    Name,
    /// By substrate, then name.
    Substrate,
    /// Most reap attempts first, then name.
    ReapAttempts,
    /// By stored status (`active` before `tombstoned`), then name.
    Status,
    /// Locked instances first (held, then stale, then unprobed), then
    /// name.
    Lock,
    /// Over a fleet: by host (in the fleet's order), active before
    /// tombstoned, then name (on one host, by name).
    Host,
}

impl SortKey {
    /// The next order in the `s` cycle on one host (never
    /// [`SortKey::Host`]).
    #[must_use]
    pub const fn next(self) -> Self {
        match self {
            Self::LeaseExpiry | Self::Host => Self::Name,
            Self::Name => Self::Substrate,
            Self::Substrate => Self::ReapAttempts,
            Self::ReapAttempts => Self::Status,
            Self::Status => Self::Lock,
            Self::Lock => Self::LeaseExpiry,
        }
    }

    /// The next order in the `s` cycle over a fleet: the one host's, with
    /// [`SortKey::Host`] first.
    #[must_use]
    pub const fn next_over_fleet(self) -> Self {
        match self {
            Self::Host => Self::LeaseExpiry,
            Self::Lock => Self::Host,
            other => other.next(),
        }
    }

    /// How the header names it: `lease expiry`, `name`, `substrate`,
    /// `reap attempts`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::LeaseExpiry => "lease expiry",
            Self::Name => "name",
            Self::Substrate => "substrate",
            Self::ReapAttempts => "reap attempts",
            Self::Status => "status",
            Self::Lock => "lock",
            Self::Host => "host",
        }
    }

    /// The key `:sort KEY` names: `lease`, `name`, `substrate`, `reap`,
    /// `status`, `lock` (the column headers, lower-cased), or the label.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_lowercase().as_str() {
            "lease" | "lease expiry" | "expiry" => Self::LeaseExpiry,
            "name" => Self::Name,
            "substrate" => Self::Substrate,
            "reap" | "reap attempts" | "attempts" => Self::ReapAttempts,
            "status" => Self::Status,
            "lock" => Self::Lock,
            _ => return None,
        })
    }

    /// The key `:sort KEY` names over a fleet: [`SortKey::parse`]'s, and
    /// `host`.
    #[must_use]
    pub fn parse_over_fleet(text: &str) -> Option<Self> {
        if text.eq_ignore_ascii_case("host") {
            return Some(Self::Host);
        }
        Self::parse(text)
    }

    /// Whether its natural order runs from high to low (most reap attempts
    /// first): drawn `▼` unless reversed.
    #[must_use]
    pub const fn descending(self) -> bool {
        matches!(self, Self::ReapAttempts)
    }

    /// Which Instances column it sorts by (an index into
    /// `panes::instances::HEADERS`).
    #[must_use]
    pub const fn column(self) -> usize {
        match self {
            Self::Name | Self::Host => 0,
            Self::Substrate => 2,
            Self::Status => 3,
            Self::LeaseExpiry => 4,
            Self::Lock => 5,
            Self::ReapAttempts => 6,
        }
    }
}
