//! [`Anomalies`]: what was wrong with an instance's rows when read.

/// What was wrong with an instance's rows when they were read (a NULL
/// where stackless never writes one, a value of the wrong type), in the
/// order found. Empty for every row stackless itself wrote, and then one
/// word in the row with nothing allocated (the list is in every row:
/// measured at a million instances, an empty `Vec` was 24 B of each).
/// Reads as a slice of the texts (`is_empty()`, `iter()`, `len()`).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
#[expect(
    clippy::box_collection,
    reason = "the box is the point: one word in every row, a Vec three"
)]
pub struct Anomalies(Option<Box<Vec<String>>>);

impl Anomalies {
    /// Note one more.
    pub fn push(&mut self, anomaly: String) {
        self.0.get_or_insert_with(Box::default).push(anomaly);
    }

    /// Note each of `more`, in order (nothing allocated when there are
    /// none).
    pub fn extend(&mut self, more: impl IntoIterator<Item = String>) {
        for anomaly in more {
            self.push(anomaly);
        }
    }
}

impl From<Vec<String>> for Anomalies {
    fn from(list: Vec<String>) -> Self {
        Self((!list.is_empty()).then(|| Box::new(list)))
    }
}

impl std::ops::Deref for Anomalies {
    type Target = [String];

    fn deref(&self) -> &[String] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<'a> IntoIterator for &'a Anomalies {
    type Item = &'a String;
    type IntoIter = std::slice::Iter<'a, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::fmt::Debug for Anomalies {
    /// As the list it is (`[]`, `["status is not text"]`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Anomalies;

    #[test]
    fn anomalies_hold_nothing_until_one_is_noted_and_compare_by_their_texts() {
        assert_eq!(size_of::<Anomalies>(), 8);
        let mut noted = Anomalies::default();
        assert!(noted.is_empty());
        noted.extend(Vec::new());
        assert_eq!(
            noted,
            Anomalies::default(),
            "an empty extend allocates nothing"
        );
        assert_eq!(Anomalies::from(Vec::new()), Anomalies::default());
        noted.push("status is not text".into());
        noted.extend(["created_at is not an integer".to_owned()]);
        assert_eq!(
            noted.iter().map(String::as_str).collect::<Vec<_>>(),
            ["status is not text", "created_at is not an integer"]
        );
        assert_eq!(
            noted,
            Anomalies::from(vec![
                "status is not text".to_owned(),
                "created_at is not an integer".to_owned()
            ])
        );
        assert_eq!(
            format!("{noted:?}"),
            "[\"status is not text\", \"created_at is not an integer\"]"
        );
        assert_eq!(format!("{:?}", Anomalies::default()), "[]");
    }
}
