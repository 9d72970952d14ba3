//! The stop token for the console's std threads (the store watcher,
//! the reaper, the role thread), as bottom wakes its collectors: quitting
//! cancels the root token and every thread waiting in [`StopToken::sleep`]
//! wakes at once instead of finishing a poll interval. A child token is
//! cancelled with its parent, or on its own (the reaper's token when the
//! `console` role is lost). (Cancelling a stackless *operation* is
//! another thing: [`crate::controller::cancel`].)

use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// Cheap to clone; every clone is the same token.
#[derive(Debug, Clone, Default)]
pub struct StopToken(Arc<Node>);

#[derive(Debug, Default)]
struct Node {
    cancelled: Mutex<bool>,
    wake: Condvar,
    children: Mutex<Vec<Weak<Node>>>,
}

impl StopToken {
    /// A token nobody has cancelled.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A token cancelled when this one is (at once, if this one already
    /// is), and cancellable on its own without touching this one.
    #[must_use]
    pub fn child(&self) -> Self {
        let child = Self::new();
        let mut children = self
            .0
            .children
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        children.retain(|weak| weak.strong_count() > 0);
        children.push(Arc::downgrade(&child.0));
        drop(children);
        // A cancel that ran before the push saw no child: catch up.
        if self.is_cancelled() {
            child.cancel();
        }
        child
    }

    /// Cancel this token and its children; wakes every sleeper. Idempotent.
    pub fn cancel(&self) {
        cancel_node(&self.0);
    }

    /// Whether [`StopToken::cancel`] was called on this token or an
    /// ancestor.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        *self
            .0
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Wait up to `timeout`, returning early when cancelled. `true` when
    /// the token is cancelled (the caller should stop), `false` when the
    /// time ran out.
    #[must_use]
    pub fn sleep(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut cancelled = self
            .0
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while !*cancelled {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            cancelled = self
                .0
                .wake
                .wait_timeout(cancelled, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }
}

fn cancel_node(node: &Node) {
    {
        let mut cancelled = node
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *cancelled = true;
        node.wake.notify_all();
    }
    let children: Vec<Arc<Node>> = node
        .children
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for child in children {
        cancel_node(&child);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_runs_out_when_nobody_cancels() {
        let token = StopToken::new();
        let started = Instant::now();
        assert!(!token.sleep(Duration::from_millis(30)));
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert!(!token.is_cancelled());
    }

    #[test]
    fn cancel_wakes_a_sleeper_at_once() {
        let token = StopToken::new();
        let sleeper = token.clone();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            (sleeper.sleep(Duration::from_secs(30)), started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(50));
        token.cancel();
        let (cancelled, slept) = thread.join().expect("sleeper");
        assert!(cancelled);
        assert!(slept < Duration::from_secs(5), "slept {slept:?}");
    }

    #[test]
    fn children_follow_their_parent_not_the_other_way() {
        let root = StopToken::new();
        let part = root.child();
        part.cancel();
        assert!(part.is_cancelled());
        assert!(!root.is_cancelled());
        let second = root.child();
        root.cancel();
        assert!(second.is_cancelled());
        assert!(root.child().is_cancelled(), "a late child starts cancelled");
        assert!(second.sleep(Duration::from_secs(30)));
    }
}
