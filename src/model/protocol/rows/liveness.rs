//! A lock's liveness word as the tables hold it: one byte a row.

use crate::model::Liveness;

/// `lock.liveness_state`'s word ([`super::liveness_state`]) as one byte: the
/// tables hold one for every instance row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LivenessWord {
    Alive,
    StalePidGone,
    StalePidReused,
    ForeignHost,
    Unknown,
}

impl LivenessWord {
    pub(super) const fn of(liveness: Option<&Liveness>) -> Self {
        match liveness {
            Some(Liveness::Alive) => Self::Alive,
            Some(Liveness::StalePidGone) => Self::StalePidGone,
            Some(Liveness::StalePidReused) => Self::StalePidReused,
            Some(Liveness::ForeignHost(_)) => Self::ForeignHost,
            None => Self::Unknown,
        }
    }

    pub(super) const fn word(self) -> &'static str {
        match self {
            Self::Alive => "alive",
            Self::StalePidGone => "stale_pid_gone",
            Self::StalePidReused => "stale_pid_reused",
            Self::ForeignHost => "foreign_host",
            Self::Unknown => "unknown",
        }
    }
}
