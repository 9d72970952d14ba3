//! When a key may answer a confirmation dialog (`y`/`N` before a teardown,
//! a reap, a bulk `r`/`d`, an operation's cancel).
//!
//! The rule: a destructive confirmation is
//! answered only by a key the operator pressed *after* seeing the dialog.
//! Keys already read from the terminal before the dialog was first drawn
//! (typed ahead, a `dy` burst in one write, a paste that was not
//! bracketed) are dropped without effect, whatever they are. The terminal
//! input thread stamps each key with the instant its burst was read; the
//! render loop says when a frame with the dialog began to be drawn.
//! Generic over the instant type, so it is tested with plain numbers.

/// Whether a key read at `read` may answer a dialog first drawn at
/// `shown` (`None`: not drawn yet, so nothing may answer it). A key read
/// at the same instant the frame began counts (it cannot have been queued
/// before the dialog existed: the dialog is opened before it is drawn).
#[must_use]
pub(crate) fn answers<T: Ord>(read: T, shown: Option<T>) -> bool {
    shown.is_some_and(|shown| read >= shown)
}

#[cfg(test)]
mod tests {
    use super::answers;

    #[test]
    fn only_keys_read_once_the_dialog_was_drawn_answer_it() {
        assert!(!answers(5, None), "not drawn yet");
        assert!(!answers(4, Some(5)), "queued before the frame");
        assert!(answers(5, Some(5)));
        assert!(answers(9, Some(5)));
    }
}
