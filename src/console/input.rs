//! The terminal's input on a thread of its own (`terminal-input`): a
//! blocking `crossterm::event::read` loop that sends every event as
//! [`Event::Input`] over the one channel. The render loop applies every
//! queued event before it draws, so a burst (a paste, 2000 queued `j`, a
//! fast wheel) is processed at once, in one frame, without waiting for
//! another key.
//!
//! crossterm reads the terminal 1 KiB at a time; its poll(2) source (the
//! `use-dev-tty` feature, Cargo.toml) is level-triggered, so bytes still
//! queued after one read are seen by the next poll at once.

use crate::event::{Event, EventSender};

/// Start the input thread. It stops when the channel is closed (the render
/// loop is gone) or the terminal cannot be read any more (closed).
///
/// # Errors
/// The thread could not be spawned.
pub(super) fn spawn(tx: EventSender) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || {
            loop {
                match crossterm::event::read() {
                    Ok(event) => {
                        if tx.send(Event::Input(event)).is_err() {
                            return;
                        }
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        tracing::info!("terminal input closed: {error}");
                        return;
                    }
                }
            }
        })
        .map(drop)
}
