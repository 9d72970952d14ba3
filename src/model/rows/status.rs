//! [`Status`]: an instance's lifecycle status, one word in the row.

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

/// An instance's lifecycle status (`instances.status`, stackless schema).
/// 4 B in the row: an unknown status is [`OtherStatus`], a 2-byte handle
/// to its text (with a boxed text the enum was 16 B; measured at a
/// million instances, each 16 B of `Instance` past 136 B is 16 MB more,
/// BENCHMARKS.md "The console's rows at 1M").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Status {
    /// `'active'`: running, leased, a reaper candidate once the lease expires.
    Active,
    /// `'tombstoned'`: torn down; the row is kept 7 days for `logs`/`status`
    /// (stackless D14), then garbage-collected.
    Tombstoned,
    /// Anything else (a hand-made non-STRICT store, a newer stackless). Shown
    /// as it is (sanitized), never acted upon.
    Other(OtherStatus),
}

impl Status {
    /// Parse the stored text; unknown values are kept, not rejected
    /// ([`OtherStatus::new`]: past its bounds, the one overflow text).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match text {
            "active" => Self::Active,
            "tombstoned" => Self::Tombstoned,
            other => Self::Other(OtherStatus::new(other)),
        }
    }

    /// The text as stored (for an [`OtherStatus`] not kept,
    /// [`OtherStatus::NOT_KEPT`]).
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Active => "active",
            Self::Tombstoned => "tombstoned",
            Self::Other(other) => other.as_str(),
        }
    }
}

/// A status this console does not know: a handle (2 B) to its text in one
/// table for the whole process, each text kept once. The table is bounded
/// (a hostile store's statuses must not grow it for ever): at most
/// [`OtherStatus::MAX_KEPT`] texts of at most [`OtherStatus::MAX_LEN`]
/// bytes each (256 KiB). A text past either bound is not kept: it reads as
/// [`OtherStatus::NOT_KEPT`] and all such are equal (the store read notes
/// the text in the row's anomalies). Equal handles, equal texts.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct OtherStatus(u16);

/// The texts kept, by handle (0: [`OtherStatus::NOT_KEPT`]), and the
/// handle of each; at most `max_kept` besides the first.
struct Table {
    texts: Vec<&'static str>,
    handles: HashMap<&'static str, u16>,
    max_kept: usize,
}

impl Table {
    fn new(max_kept: usize) -> Self {
        Self {
            texts: vec![OtherStatus::NOT_KEPT],
            handles: HashMap::new(),
            max_kept,
        }
    }

    /// The handle of `text`: the one it has, a new one within the
    /// bounds, else 0 ([`OtherStatus::NOT_KEPT`]).
    fn handle(&mut self, text: &str) -> u16 {
        if let Some(&handle) = self.handles.get(text) {
            return handle;
        }
        if text.len() > OtherStatus::MAX_LEN || self.texts.len() > self.max_kept {
            return 0;
        }
        let Ok(handle) = u16::try_from(self.texts.len()) else {
            return 0;
        };
        // Kept for the process's life: bounded above.
        let kept: &'static str = Box::leak(text.into());
        self.texts.push(kept);
        self.handles.insert(kept, handle);
        handle
    }

    fn text(&self, handle: u16) -> &'static str {
        self.texts
            .get(usize::from(handle))
            .copied()
            .unwrap_or(OtherStatus::NOT_KEPT)
    }
}

static TABLE: LazyLock<RwLock<Table>> =
    LazyLock::new(|| RwLock::new(Table::new(OtherStatus::MAX_KEPT)));

impl OtherStatus {
    /// How many unknown status texts the process keeps.
    pub const MAX_KEPT: usize = 256;
    /// The longest unknown status text kept, in bytes.
    pub const MAX_LEN: usize = 1024;
    /// What a status not kept reads as.
    pub const NOT_KEPT: &'static str = "(unknown status, not kept)";

    /// The handle of `text`: the one it already has, a new one while the
    /// table is within its bounds, else the handle of
    /// [`OtherStatus::NOT_KEPT`].
    #[must_use]
    pub fn new(text: &str) -> Self {
        if let Some(&handle) = TABLE
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .handles
            .get(text)
        {
            return Self(handle);
        }
        Self(
            TABLE
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .handle(text),
        )
    }

    /// Whether the text was kept (else it reads as
    /// [`OtherStatus::NOT_KEPT`]).
    #[must_use]
    pub fn is_kept(self) -> bool {
        self.0 != 0
    }

    /// The text.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        TABLE
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .text(self.0)
    }
}

impl std::ops::Deref for OtherStatus {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for OtherStatus {
    /// As the text (`"paused"`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::{OtherStatus, Status, Table};

    #[test]
    fn an_unknown_status_is_a_handle_to_its_text_kept_once() {
        assert_eq!(size_of::<Status>(), 4);
        let paused = Status::parse("paused-by-a-test");
        assert_eq!(paused.as_str(), "paused-by-a-test");
        assert_eq!(paused, Status::parse("paused-by-a-test"));
        assert_ne!(paused, Status::parse("stopped-by-a-test"));
        assert_eq!(Status::parse("active"), Status::Active);
        assert_eq!(Status::parse("tombstoned"), Status::Tombstoned);
        assert_eq!(format!("{paused:?}"), "Other(\"paused-by-a-test\")");
        // Too long to keep: the overflow text.
        let long = "x".repeat(OtherStatus::MAX_LEN + 1);
        let Status::Other(other) = Status::parse(&long) else {
            panic!("an unknown status");
        };
        assert!(!other.is_kept());
        assert_eq!(&*other, OtherStatus::NOT_KEPT);
        let kept = "x".repeat(OtherStatus::MAX_LEN);
        assert_eq!(Status::parse(&kept).as_str(), kept);
    }

    #[test]
    fn the_table_of_unknown_statuses_stops_growing_at_its_bound() {
        // A hostile store's many statuses: a table of 3 (the process's
        // holds `MAX_KEPT`).
        let mut table = Table::new(3);
        let handles: Vec<u16> = ["a", "b", "c", "d", "e", "b"]
            .into_iter()
            .map(|text| table.handle(text))
            .collect();
        assert_eq!(handles, [1, 2, 3, 0, 0, 2]);
        assert_eq!(table.texts.len(), 4);
        assert_eq!(
            [0, 1, 2, 3, 4].map(|h| table.text(h)),
            [OtherStatus::NOT_KEPT, "a", "b", "c", OtherStatus::NOT_KEPT]
        );
    }
}
