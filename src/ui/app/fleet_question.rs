//! A question over a fleet: the App's one confirm layer asks it
//! ([`super::Question::Fleet`]), with the App's typed-ahead guard
//! (`crate::model::confirm::answers`): each line names the host and the
//! exact argv run there (the agent's `hello` carries its teardown argv
//! and its stackless program) and what is skipped (a backoff, a pending
//! operation); a bulk question names the refusals per host before `y`.

use crate::model::protocol::command::Command;

/// What `y` sends where over a fleet, and the words asking it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetQuestion {
    /// The question's lines (the first is the question, the last `[y/N]`).
    pub lines: Vec<String>,
    /// (host index, command without its `id`) sent on `y`, in order.
    pub commands: Vec<(usize, Command)>,
}
