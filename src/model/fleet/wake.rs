//! What a fleet host's connection tells the loop that runs the fleet
//! (`crate::event::Event::Host`): its lines wait in the connection's own
//! bounded queue (a flooding host blocks only its own reader), and the
//! loop is woken once until it drained that queue.

/// One host connection's wake-up. `host` is the host's index in the
/// fleet (the order of the fleet file or the `--controller` flags);
/// `generation` which start of its connection it is (a wake-up from an
/// earlier one is dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostWake {
    /// The connection queued lines: the loop drains its queue (at most
    /// the queue's size a turn).
    Queued {
        /// The host's index.
        host: usize,
        /// Its connection's start.
        generation: u64,
    },
    /// The `fleet-start` thread started the connection (or could not):
    /// the loop takes it from the starter's hand-off.
    Started {
        /// The host's index.
        host: usize,
        /// Its connection's start.
        generation: u64,
    },
}
