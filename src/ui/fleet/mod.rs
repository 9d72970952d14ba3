//! The fleet view: every host's instances in one table (HOST first), a
//! Hosts pane, merged Operations, Backoffs and Activity tagged by host,
//! and every action sent to the owning host's agent (`serve --stdio`,
//! docs/protocol.md). Pure UI state: lines and links in, effects out.

use crate::model::fleet::Link;

/// What the fleet view asks its wiring to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FleetEffect {
    /// Write `line` (one protocol command, JSON, no newline) to host
    /// `host`'s agent.
    Send {
        /// The host's index in the fleet (as given to [`FleetApp::new`]).
        host: usize,
        /// The command line.
        line: String,
    },
}

/// The fleet view's state.
#[derive(Debug)]
pub struct FleetApp {
    hosts: Vec<String>,
    quit: bool,
}

impl FleetApp {
    /// A view over `hosts` (their names: label, else alias), none connected.
    #[must_use]
    pub fn new(hosts: Vec<String>, _now_ms: i64) -> Self {
        Self { hosts, quit: false }
    }

    /// One line of host `host`'s agent stream (a JSON object).
    pub fn line(&mut self, host: usize, line: &serde_json::Value, now_ms: i64) {
        let _ = (host, line, now_ms, &self.hosts);
    }

    /// Host `host`'s link changed (or was first reported).
    pub fn link(&mut self, host: usize, link: Link, now_ms: i64) {
        let _ = (host, link, now_ms);
    }

    /// A key; what to send where.
    pub fn key(&mut self, key: crossterm::event::KeyEvent, now_ms: i64) -> Vec<FleetEffect> {
        let _ = now_ms;
        if key.code == crossterm::event::KeyCode::Char('q') {
            self.quit = true;
        }
        Vec::new()
    }

    /// Called about once a second (and after each batch of events):
    /// pings to measure round trips, countdowns.
    pub fn tick(&mut self, now_ms: i64) -> Vec<FleetEffect> {
        let _ = now_ms;
        Vec::new()
    }

    /// The operator asked to quit.
    #[must_use]
    pub fn quit(&self) -> bool {
        self.quit
    }
}

/// Draw the fleet view on `frame` at `now_ms`.
pub fn draw(frame: &mut ratatui::Frame, app: &FleetApp, now_ms: i64) {
    let _ = (frame, app, now_ms);
}
