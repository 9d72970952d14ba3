//! [`HashCounts`]: counts by 64-bit name hash, 8 bytes a name counted once.

/// Counts above 0 by 64-bit hash, sorted by hash, one entry per hash. A
/// count of 1 (after a reboot every recorded process is dead, one a name
/// for most) is its hash alone, in `ones`: 8 bytes a name where a
/// `(u64, u32)` pair is 16 (measured at a million instances: 700,000
/// names, 11.2 to 5.6 MB, BENCHMARKS.md "The console's rows at 1M"). A
/// hash is in `ones` exactly when its count is 1, so equal counts are
/// equal values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct HashCounts {
    /// The hashes counted once, sorted.
    ones: Vec<u64>,
    /// The hashes counted twice or more, with their counts, sorted.
    more: Vec<(u64, u32)>,
}

impl HashCounts {
    /// The counts of `pairs`, sorted by hash, each hash once (a count of 0
    /// is no entry).
    pub(super) fn from_sorted(pairs: impl IntoIterator<Item = (u64, u32)>) -> Self {
        let mut counts = Self::default();
        for (key, count) in pairs {
            match count {
                0 => {}
                1 => counts.ones.push(key),
                _ => counts.more.push((key, count)),
            }
        }
        counts.ones.shrink_to_fit();
        counts.more.shrink_to_fit();
        counts
    }

    /// The counts of hashes counted once each in `ones` and by `more`, in
    /// any order, repeats summed (sorted in place: nothing copied when
    /// every hash is in `ones` once).
    pub(super) fn from_unsorted(mut ones: Vec<u64>, mut more: Vec<(u64, u32)>) -> Self {
        ones.sort_unstable();
        // A hash in `ones` twice or more: its repeats join `more`.
        let mut repeats = Vec::new();
        ones.dedup_by(|later, kept| {
            let same = later == kept;
            if same {
                repeats.push((*kept, 1));
            }
            same
        });
        if !repeats.is_empty() || !more.is_empty() {
            more.extend(repeats);
            more.sort_unstable_by_key(|&(key, _)| key);
            more.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    kept.1 = kept.1.saturating_add(later.1);
                }
                same
            });
            more.retain(|&(_, count)| count > 0);
            // A hash in both: its one joins its count.
            for (key, count) in &mut more {
                if ones.binary_search(key).is_ok() {
                    *count = count.saturating_add(1);
                }
            }
            ones.retain(|key| more.binary_search_by_key(key, |&(k, _)| k).is_err());
            // A sum of 1 (a count of 1 given in `more`) belongs in `ones`.
            if more.iter().any(|&(_, count)| count == 1) {
                return Self::from_sorted(
                    merge_sum(ones.iter().map(|&key| (key, 1)), more.iter().copied())
                        .collect::<Vec<_>>(),
                );
            }
        }
        ones.shrink_to_fit();
        more.shrink_to_fit();
        Self { ones, more }
    }

    /// The count of `key` (0: none).
    pub(super) fn get(&self, key: u64) -> u32 {
        if self.ones.binary_search(&key).is_ok() {
            return 1;
        }
        self.more
            .binary_search_by_key(&key, |&(k, _)| k)
            .map_or(0, |at| self.more[at].1)
    }

    /// `count` more under `key` (`O(n)` for a hash moving between the
    /// lists or new).
    pub(super) fn add(&mut self, key: u64, count: u32) {
        if count == 0 {
            return;
        }
        let had = match self.ones.binary_search(&key) {
            Ok(at) => {
                self.ones.remove(at);
                1
            }
            Err(_) => 0,
        };
        match self.more.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(at) => self.more[at].1 = self.more[at].1.saturating_add(count),
            Err(at) if had + count > 1 => self.more.insert(at, (key, had + count)),
            Err(_) => {
                let at = self.ones.partition_point(|&k| k < key);
                self.ones.insert(at, key);
            }
        }
    }

    /// Every `(hash, count)`, sorted by hash.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        merge_sum(
            self.ones.iter().map(|&key| (key, 1)),
            self.more.iter().copied(),
        )
    }

    /// How many hashes have a count.
    pub(super) fn len(&self) -> usize {
        self.ones.len() + self.more.len()
    }
}

/// Two hash-sorted lists of counts as one, hash-sorted, a hash in both
/// summed.
pub(super) fn merge_sum(
    a: impl Iterator<Item = (u64, u32)>,
    b: impl Iterator<Item = (u64, u32)>,
) -> impl Iterator<Item = (u64, u32)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek().copied(), b.peek().copied()) {
        (Some((ka, ca)), Some((kb, cb))) if ka == kb => {
            a.next();
            b.next();
            Some((ka, ca.saturating_add(cb)))
        }
        (Some((ka, _)), Some((kb, _))) => {
            if ka < kb {
                a.next()
            } else {
                b.next()
            }
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::HashCounts;

    #[test]
    fn counts_of_one_are_their_hash_alone_and_every_way_of_building_agrees() {
        let built = HashCounts::from_unsorted(vec![9, 3, 7, 3, 5], vec![(5, 2), (11, 1), (13, 4)]);
        assert_eq!(built.ones, [7, 9, 11]);
        assert_eq!(built.more, [(3, 2), (5, 3), (13, 4)]);
        assert_eq!(
            built.iter().collect::<Vec<_>>(),
            [(3, 2), (5, 3), (7, 1), (9, 1), (11, 1), (13, 4)]
        );
        assert_eq!(
            (built.get(3), built.get(7), built.get(13), built.get(4)),
            (2, 1, 4, 0)
        );
        assert_eq!(built.len(), 6);
        assert_eq!(HashCounts::from_sorted(built.iter()), built);
        let mut added = HashCounts::default();
        for (key, count) in [
            (13, 4),
            (9, 1),
            (3, 1),
            (5, 1),
            (7, 1),
            (3, 1),
            (11, 1),
            (5, 2),
            (1, 0),
        ] {
            added.add(key, count);
        }
        assert_eq!(added, built);
        // Only ones, each once: sorted in place.
        let ones = HashCounts::from_unsorted(vec![4, 2, 8], Vec::new());
        assert_eq!(
            (ones.ones.as_slice(), ones.more.len()),
            ([2, 4, 8].as_slice(), 0)
        );
    }
}
