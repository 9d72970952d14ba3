//! [`Substrate`]: an instance's substrate text, shared by the rows of a read.

use std::sync::Arc;

/// `instances.substrate` (`local`, `render`, `vercel`, or a newer one), as
/// stored. One word in the row, the text shared: a read keeps one copy of
/// each substrate for all its rows (measured at a million instances: the
/// row is one allocation, and a word less takes it from 208 to 192 B).
/// Reads as a `str` (`Deref`, `Display`); ordered and compared as its text.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Substrate(Arc<String>);

impl Substrate {
    /// Whether `self` and `other` are the one shared copy of the text (a
    /// read shares each substrate's among its rows).
    #[must_use]
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl From<&str> for Substrate {
    fn from(text: &str) -> Self {
        Self(Arc::new(text.to_owned()))
    }
}

impl From<String> for Substrate {
    fn from(text: String) -> Self {
        Self(Arc::new(text))
    }
}

impl std::ops::Deref for Substrate {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Substrate {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Substrate {
    fn eq(&self, other: &str) -> bool {
        *self.0 == other
    }
}

impl PartialEq<&str> for Substrate {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == *other
    }
}

impl std::fmt::Display for Substrate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for Substrate {
    /// As the text (`"local"`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::Substrate;

    #[test]
    fn a_substrate_is_one_word_and_reads_as_its_text() {
        assert_eq!(size_of::<Substrate>(), 8);
        let local = Substrate::from("local");
        let shared = local.clone();
        assert!(local.ptr_eq(&shared));
        assert!(!local.ptr_eq(&Substrate::from("local")));
        assert_eq!(&*local, "local");
        assert_eq!(local, "local");
        assert_eq!(local, Substrate::from(String::from("local")));
        assert_eq!(format!("{local} {local:?}"), "local \"local\"");
        // Ordered as the text (the Instances pane's substrate sort).
        let (empty, a, render) = (
            Substrate::from(""),
            Substrate::from("a"),
            Substrate::from("render"),
        );
        assert!(empty < a && a < local && local < render);
    }
}
