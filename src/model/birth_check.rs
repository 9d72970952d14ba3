//! Which birth of a name an action was asked about, and the one rule every
//! action that names an instance passes before it runs: the instance is
//! still that birth ([`birth_refusal`]). `d`, `r`, bulk `d`/`r`, `:down`,
//! `:reap`, renew, verify, a queued `down` and every protocol command
//! compare through it, at `y` and again right before their command starts.
//!
//! What tells two births of a name apart:
//! - schema 7+ (stackless 0.4.0): `instances.instance_id`, 32 lowercase
//!   hex, new for every birth, also when `up` revives a tombstone in place
//!   (0.4.0 `Store::revive_instance`, docs/stackless-releases.md "Schema
//!   14", migration 7);
//! - schemas 4 and 5 (stackless 0.2, 0.3: no `instance_id`): `created_at`
//!   (unix seconds), which a creation writes and a revival of the name
//!   writes again (`created_at = now`; docs/stackless-state-store.md,
//!   `instances`). A name torn down and brought up again within the same
//!   second, or another store whose row of that name was created in the
//!   same second, is not told apart there: the store holds nothing finer.

use super::Instance;
use super::rows::Birth;

/// The birth an action was asked about, as far as the store tells births
/// apart (see the module doc): `instance_id` on schema 7+, else
/// `created_at`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BirthSeen {
    /// `instances.instance_id` (schema 7+); `None` before schema 7.
    pub instance_id: Option<String>,
    /// `instances.created_at`, unix seconds, when the asker knows it.
    /// Compared only when neither side has an `instance_id` (schemas 4
    /// and 5); `None` (a row that holds no integer, or an asker that
    /// named none) matches only `None`.
    pub created_at: Option<i64>,
}

impl BirthSeen {
    /// The birth of a row with this `birth` and `created_at`.
    #[must_use]
    pub fn new(birth: Option<&Birth>, created_at: Option<i64>) -> Self {
        Self {
            instance_id: birth.map(|b| b.instance_id().to_owned()),
            created_at,
        }
    }

    /// The birth `instance` is.
    #[must_use]
    pub fn of(instance: &Instance) -> Self {
        Self::new(instance.birth.as_ref(), instance.created_at)
    }

    /// The birth a protocol client names: its `instance_id` (`None`
    /// before schema 7) and nothing else.
    #[must_use]
    pub const fn by_id(instance_id: Option<String>) -> Self {
        Self {
            instance_id,
            created_at: None,
        }
    }

    /// The birth a protocol client names: the `instance_id` (schema 7+),
    /// or the row's `created_at` beside a null birth (before schema 7).
    #[must_use]
    pub const fn named(instance_id: Option<String>, created_at: Option<i64>) -> Self {
        Self {
            instance_id,
            created_at,
        }
    }

    /// Whether `now` is this birth (see the module doc for the rule): the
    /// same `instance_id`; without one on either side, the same
    /// `created_at` (an asker that names none is not the birth of a row
    /// that has one: it names no birth at all).
    #[must_use]
    pub fn same_as(&self, now: &Self) -> bool {
        if self.instance_id != now.instance_id {
            return false;
        }
        if self.instance_id.is_some() {
            return true;
        }
        self.created_at == now.created_at
    }

    /// How the refusal names it: the `instance_id`, else `created at
    /// <unix seconds>`, else `none`.
    fn label(&self) -> String {
        match (&self.instance_id, self.created_at) {
            (Some(id), _) => id.clone(),
            (None, Some(at)) => format!("created at {at}"),
            (None, None) => "none".into(),
        }
    }
}

/// `None` when the instance is now (`now`) the birth the action was asked
/// about (`asked`); else the refusal, in the words every action uses:
/// `refused: the birth asked about (A) is not the instance's (B): it was
/// born again, or another store was read`.
#[must_use]
pub fn birth_refusal(asked: &BirthSeen, now: &BirthSeen) -> Option<String> {
    (!asked.same_as(now)).then(|| {
        format!(
            "refused: the birth asked about ({}) is not the instance's ({}): it was born again, or another store was read",
            asked.label(),
            now.label()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{BirthSeen, birth_refusal};
    use crate::model::Birth;

    fn v14(id: &str, created: i64) -> BirthSeen {
        BirthSeen::new(Some(&Birth::new(id, &format!("sl-{id}"))), Some(created))
    }

    fn v5(created: Option<i64>) -> BirthSeen {
        BirthSeen::new(None, created)
    }

    #[test]
    fn the_same_instance_id_is_the_same_birth_whatever_else() {
        assert_eq!(birth_refusal(&v14("a1", 100), &v14("a1", 100)), None);
        assert_eq!(birth_refusal(&v14("a1", 100), &v14("a1", 160)), None);
    }

    #[test]
    fn another_instance_id_or_none_is_refused_in_the_words_of_every_action() {
        assert_eq!(
            birth_refusal(&v14("a1", 100), &v14("b2", 100)),
            Some(
                "refused: the birth asked about (a1) is not the instance's (b2): it was born again, or another store was read"
                    .into()
            )
        );
        assert_eq!(
            birth_refusal(&v14("a1", 100), &v5(Some(100))),
            Some(
                "refused: the birth asked about (a1) is not the instance's (created at 100): it was born again, or another store was read"
                    .into()
            )
        );
        assert_eq!(
            birth_refusal(&BirthSeen::by_id(None), &v14("b2", 100)),
            Some(
                "refused: the birth asked about (none) is not the instance's (b2): it was born again, or another store was read"
                    .into()
            )
        );
    }

    #[test]
    fn before_schema_7_created_at_tells_births_apart() {
        assert_eq!(birth_refusal(&v5(Some(100)), &v5(Some(100))), None);
        assert_eq!(
            birth_refusal(&v5(Some(100)), &v5(Some(160))),
            Some(
                "refused: the birth asked about (created at 100) is not the instance's (created at 160): it was born again, or another store was read"
                    .into()
            )
        );
        assert_eq!(
            birth_refusal(&v5(Some(100)), &v5(None)),
            Some(
                "refused: the birth asked about (created at 100) is not the instance's (none): it was born again, or another store was read"
                    .into()
            )
        );
    }

    #[test]
    fn an_asker_that_names_no_birth_is_refused_on_a_row_that_has_one() {
        assert_eq!(
            birth_refusal(&BirthSeen::by_id(None), &v5(Some(160))),
            Some(
                "refused: the birth asked about (none) is not the instance's (created at 160): it was born again, or another store was read"
                    .into()
            )
        );
        assert_eq!(
            birth_refusal(&BirthSeen::named(None, Some(160)), &v5(Some(160))),
            None
        );
        assert_eq!(birth_refusal(&v5(None), &v5(None)), None);
        assert_eq!(
            birth_refusal(&BirthSeen::by_id(Some("a1".into())), &v14("a1", 7)),
            None
        );
    }
}
