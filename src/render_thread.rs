//! Which thread draws. The render loop marks its thread while it runs
//! ([`enter`]); the paths that read a file or the store assert, in debug
//! builds (every test binary, and the console the PTY tests drive), that
//! they do not run on it ([`assert_off`]): the render loop reads no file
//! and no store (`docs/ARCHITECTURE.md`, "Reads stay off the render thread"),
//! it hands reads to the I/O worker (`crate::console::io_worker`) and
//! applies the answers.
//!
//! A leaf: it imports nothing of the crate, so the store and the logs
//! reader can call it without an arrow up.

use std::cell::Cell;

thread_local! {
    static RENDER: Cell<bool> = const { Cell::new(false) };
}

/// The mark on the render loop's thread, taken off when dropped.
#[derive(Debug)]
#[must_use = "the thread is the render thread only while this lives"]
pub(crate) struct RenderThread(());

/// Mark the calling thread as the render thread until the returned guard
/// drops.
pub(crate) fn enter() -> RenderThread {
    RENDER.with(|r| r.set(true));
    RenderThread(())
}

impl Drop for RenderThread {
    fn drop(&mut self) {
        RENDER.with(|r| r.set(false));
    }
}

/// Whether the calling thread is the render thread now.
#[must_use]
pub(crate) fn is_render_thread() -> bool {
    RENDER.with(Cell::get)
}

/// In debug builds, panic when `what` (a file or store read: "open the
/// store", "read a log") runs on the render thread; nothing in release
/// builds.
///
/// # Panics
/// In debug builds, on the render thread.
#[track_caller]
pub(crate) fn assert_off(what: &str) {
    debug_assert!(
        !is_render_thread(),
        "{what} on the render thread: hand it to the I/O worker"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_only_while_the_guard_lives() {
        assert!(!is_render_thread());
        let guard = enter();
        assert!(is_render_thread());
        // Another thread is not the render thread.
        assert!(!std::thread::spawn(is_render_thread).join().unwrap_or(true));
        drop(guard);
        assert!(!is_render_thread());
        assert_off("a read");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "open the store on the render thread")]
    fn a_read_on_the_render_thread_panics_in_debug_builds() {
        let _guard = enter();
        assert_off("open the store");
    }
}
