//! [`Instances`]: the rows of one read, each shared between reads.

use super::Instance;

/// The instances of one read, ordered by name, each row behind an `Arc`:
/// a re-read of the store keeps the rows that did not change from the
/// read before it (`store::row_reuse`; measured: at 100,000 instances two
/// whole copies, the one on screen and the one being read, did not fit the
/// console's 60 MB), so consecutive snapshots share them, and a row is
/// copied only when changed through [`Instances::make_mut`]. Reads go
/// through `Deref` to `[Arc<Instance>]` (`instances.iter()`,
/// `instances[i].name`, `instances.len()`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instances(Vec<std::sync::Arc<Instance>>);

impl Instances {
    /// Rows already shared (the store adapter's read).
    #[must_use]
    pub fn from_shared(rows: Vec<std::sync::Arc<Instance>>) -> Self {
        Self(rows)
    }

    /// Append one row (kept in the order given: callers keep name order).
    pub fn push(&mut self, instance: Instance) {
        self.0.push(std::sync::Arc::new(instance));
    }

    /// Insert one row at `index` (callers keep name order).
    ///
    /// # Panics
    /// When `index > len`, as `Vec::insert`.
    pub fn insert(&mut self, index: usize, instance: Instance) {
        self.0.insert(index, std::sync::Arc::new(instance));
    }

    /// The row at `index` to change, copied first if another snapshot
    /// shares it; `None` past the end.
    pub fn make_mut(&mut self, index: usize) -> Option<&mut Instance> {
        self.0.get_mut(index).map(std::sync::Arc::make_mut)
    }

    /// Every row to change, each copied first if shared.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Instance> {
        self.0.iter_mut().map(std::sync::Arc::make_mut)
    }

    /// Keep the rows `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Instance) -> bool) {
        self.0.retain(|row| keep(row));
    }

    /// Sort the rows with `compare` (stable).
    pub fn sort_by(&mut self, mut compare: impl FnMut(&Instance, &Instance) -> std::cmp::Ordering) {
        self.0.sort_by(|a, b| compare(a, b));
    }
}

impl std::ops::Index<usize> for Instances {
    type Output = Instance;

    fn index(&self, index: usize) -> &Instance {
        &self.0[index]
    }
}

impl std::ops::IndexMut<usize> for Instances {
    /// The row at `index` to change, copied first if shared.
    fn index_mut(&mut self, index: usize) -> &mut Instance {
        std::sync::Arc::make_mut(&mut self.0[index])
    }
}

impl std::ops::Deref for Instances {
    type Target = [std::sync::Arc<Instance>];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl From<Vec<Instance>> for Instances {
    fn from(rows: Vec<Instance>) -> Self {
        rows.into_iter().collect()
    }
}

impl FromIterator<Instance> for Instances {
    fn from_iter<I: IntoIterator<Item = Instance>>(rows: I) -> Self {
        Self(rows.into_iter().map(std::sync::Arc::new).collect())
    }
}

impl<'a> IntoIterator for &'a Instances {
    type Item = &'a std::sync::Arc<Instance>;
    type IntoIter = std::slice::Iter<'a, std::sync::Arc<Instance>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
