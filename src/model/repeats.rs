//! Saying a repeated error once (a trail that repeats a line every pass
//! hides what changed): the reaper meets the same store error at every pass (each tick) while a file is
//! broken; the audit trail and the Activity pane get it when it first
//! appears, when it changes, and when it clears, each time with how many
//! passes repeated the one before, never once per tick. Pure.

/// The error being repeated, and how many more times it was seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Repeats {
    current: Option<String>,
    repeats: u64,
}

impl Repeats {
    /// `error` was seen: the line to say, if any. The first time: the
    /// error itself; the same again: nothing (counted); another one: it,
    /// with how many times the one before repeated.
    pub(crate) fn seen(&mut self, error: &str) -> Option<String> {
        match &self.current {
            Some(same) if same == error => {
                self.repeats += 1;
                None
            }
            Some(_) => {
                let said = format!(
                    "{error} (the error before it was seen {} more time{})",
                    self.repeats,
                    plural(self.repeats)
                );
                self.current = Some(error.to_owned());
                self.repeats = 0;
                Some(said)
            }
            None => {
                self.current = Some(error.to_owned());
                self.repeats = 0;
                Some(error.to_owned())
            }
        }
    }

    /// A pass met no error: the line to say when one was being repeated
    /// (`the store error cleared (seen 12 more times): ...`).
    pub(crate) fn cleared(&mut self) -> Option<String> {
        let error = self.current.take()?;
        let repeats = std::mem::take(&mut self.repeats);
        Some(format!(
            "the store error cleared (seen {repeats} more time{} after it was said): {error}",
            plural(repeats)
        ))
    }
}

const fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::Repeats;

    #[test]
    fn an_error_is_said_when_it_appears_changes_and_clears_with_its_repeats() {
        let mut r = Repeats::default();
        assert_eq!(r.cleared(), None, "nothing to clear");
        assert_eq!(r.seen("malformed").as_deref(), Some("malformed"));
        for _ in 0..12 {
            assert_eq!(r.seen("malformed"), None);
        }
        assert_eq!(
            r.seen("empty").as_deref(),
            Some("empty (the error before it was seen 12 more times)")
        );
        assert_eq!(r.seen("empty"), None);
        assert_eq!(
            r.cleared().as_deref(),
            Some("the store error cleared (seen 1 more time after it was said): empty")
        );
        assert_eq!(r.cleared(), None);
        assert_eq!(r.seen("empty").as_deref(), Some("empty"), "new again");
    }
}
