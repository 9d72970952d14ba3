//! The terminal's input on a thread of its own (`terminal-input`): a
//! blocking `crossterm::event::read` loop that sends every event as
//! [`Event::InputAt`] over the one channel. The render loop applies every
//! queued event before it draws, so a burst (a paste, 2000 queued `j`, a
//! fast wheel) is processed at once, in one frame, without waiting for
//! another key.
//!
//! crossterm reads the terminal 1 KiB at a time; its poll(2) source (the
//! `use-dev-tty` feature, Cargo.toml) is level-triggered, so bytes still
//! queued after one read are seen by the next poll at once.
//!
//! Each event is sent with the instant its burst was read
//! ([`Event::InputAt`]): the events read one after another without
//! waiting (a zero-timeout poll finds the next already there) share the
//! instant of the first, which is how a confirmation dialog tells keys
//! typed ahead of it from keys pressed once it was on screen
//! (`crate::model::confirm`).

use std::time::{Duration, Instant};

use crate::event::{Event, EventSender};

/// How long the input thread looks for the next event of a burst. Not
/// zero: crossterm 0.29's tty source returns at once for a zero timeout
/// without looking at the events it already parsed from its last read
/// (`UnixInternalEventSource::try_read` loops only while time is left), so
/// the `y` of a `dy` read together would look like a new burst. A key
/// arriving within this of the last one joins its burst (the safe side:
/// it does not answer a dialog drawn meanwhile).
const BURST_GAP: Duration = Duration::from_millis(1);

/// Start the input thread. It stops when the channel is closed (the render
/// loop is gone) or the terminal cannot be read any more (closed).
///
/// # Errors
/// The thread could not be spawned.
pub(super) fn spawn(tx: EventSender) -> std::io::Result<()> {
    spawn_with(move |event, read| tx.send(Event::InputAt(event, read)).is_ok())
}

/// Start the input thread, handing each terminal event and the instant its
/// burst was read to `send` (also the fleet console's:
/// `crate::fleet::console`). It stops when `send` returns `false`
/// (nobody listens) or the terminal cannot be read any more (closed).
///
/// # Errors
/// The thread could not be spawned.
pub(crate) fn spawn_with(
    mut send: impl FnMut(crossterm::event::Event, Instant) -> bool + Send + 'static,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || {
            let mut burst: Option<Instant> = None;
            loop {
                // A burst is what is read without waiting: its events carry
                // the instant the first of them was read, so a key queued
                // behind another (`dy` in one write) is never stamped later
                // than the frame the first one's dialog is drawn in.
                if burst.is_some() && !matches!(crossterm::event::poll(BURST_GAP), Ok(true)) {
                    burst = None;
                }
                match crossterm::event::read() {
                    Ok(event) => {
                        let read = *burst.get_or_insert_with(Instant::now);
                        if !send(event, read) {
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
