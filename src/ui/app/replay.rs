//! The console on a recording (`stackless-tui replay`, docs/history.md,
//! "Replay"): the cursor the replay's reader last sent, the panes as
//! recorded then, and the seek keys (`[`, `]`, `{`, `}`, `>`), which only
//! a replay takes.

use std::sync::Arc;

use super::{App, Effect, FlashLevel};
use crate::model::Snapshot;
use crate::model::fulltext::FullText;
use crate::model::history::cursor::{Frame, Seek, Span, cursor_words};
use crate::model::history::timeline::Shown;

/// The words of every action refused in a replay (the write keys' reason,
/// `AppConfig::write_keys`).
pub const READ_ONLY: &str = "replay: a recording is read-only";

/// What a seek key says outside a replay.
pub const SEEK_LIVE: &str = "[ ] { } > t step through a recording: stackless-tui replay";

/// A replay's configuration: the recording's directory as the store's
/// label, no reaper, no helper, every write key off with [`READ_ONLY`].
#[must_use]
pub fn config(store_label: String, no_color: bool) -> super::AppConfig {
    super::AppConfig {
        store_label,
        reaper: super::ReaperMode::Off("replay".to_owned()),
        helper: super::HelperMode::None,
        write_keys: Err(READ_ONLY.to_owned()),
        host: None,
        no_color,
    }
}

/// The replay's cursor as the header shows it.
#[derive(Debug, Clone, Default)]
pub struct ReplayView {
    /// The cursor (unix seconds).
    pub at: i64,
    /// Whether anything was recorded then.
    pub recorded: bool,
    /// Why not, when not.
    pub why: Option<String>,
    /// Who reaps, as recorded then.
    pub reaper: Option<String>,
    /// The recorded banners up then.
    pub banners: Vec<String>,
    /// The recording's span and changes.
    pub span: Span,
    /// The wall clock at the last event (unix seconds): how long ago the
    /// cursor is.
    pub wall: i64,
}

impl App {
    /// Show the recording as it was at `frame`'s cursor: its tables (none
    /// at a gap: no row is invented), its Activity lines, who reaped, its
    /// banners. The App's time is the cursor's (the replay's carrier passes
    /// it), so countdowns are computed then.
    pub(super) fn show_replay(&mut self, frame: Frame) -> Option<Effect> {
        let Frame {
            at,
            snapshot,
            why,
            reaper,
            banners,
            activity,
            span,
        } = frame;
        let wall = self.shown.replay.as_ref().map_or(at, |v| v.wall);
        self.shown.replay = Some(ReplayView {
            at,
            recorded: snapshot.is_some(),
            why,
            reaper,
            banners,
            span,
            wall,
        });
        self.activity = super::Log::default();
        for line in activity {
            self.activity.push_folding(
                line,
                crate::model::activity::Activity::repeats,
                crate::model::activity::Activity::repeats_apart,
            );
        }
        let snapshot = snapshot.unwrap_or_else(|| Arc::new(Snapshot::default()));
        let effect = self.show_snapshot(snapshot);
        // The Activity lines are the recorded ones: none made up from the
        // difference between two cursors.
        drop(self.shown.retired.take());
        effect
    }

    /// The App's time for `event` arriving at `now` (the wall clock): a
    /// replay's is its cursor (a new frame's, else the one shown), so
    /// countdowns are computed then; the wall clock is kept for the
    /// header's `ago`.
    pub(super) fn replay_now(&mut self, event: &crate::event::Event, now: i64) -> i64 {
        if let crate::event::Event::Replay(frame) = event {
            let view = self.shown.replay.get_or_insert_with(ReplayView::default);
            view.wall = now;
            return frame.at;
        }
        match self.shown.replay.as_mut() {
            Some(view) => {
                view.wall = now;
                view.at
            }
            None => now,
        }
    }

    /// The wall clock: the last event's time live, the replay's kept wall
    /// clock in a replay.
    #[must_use]
    pub fn wall_now(&self) -> i64 {
        self.shown.replay.as_ref().map_or(self.now, |v| v.wall)
    }

    /// The replay's cursor, `None` on a live console.
    #[must_use]
    pub fn replay(&self) -> Option<&ReplayView> {
        self.shown.replay.as_ref()
    }

    /// The header's cursor words (`replay 03:12:07, 5h 48m ago`, `: not
    /// recorded` at a gap), `now` the wall clock; `None` on a live console.
    #[must_use]
    pub fn replay_text(&self, now: i64) -> Option<String> {
        let view = self.shown.replay.as_ref()?;
        Some(cursor_words(view.at, now, self.zone(), view.recorded))
    }

    /// `T`: the selected instance's timeline: in a replay, read from the
    /// recording by the reader (an effect); live, built here from the
    /// store's rows and the Activity lines (the audit trail's teardowns
    /// read back at start), saying no recording was read.
    pub(super) fn timeline_key(&mut self) -> Option<Effect> {
        let Some(name) = self.selected_instance().map(|i| i.name.clone()) else {
            self.set_flash(FlashLevel::Warning, "no instance selected".into());
            return None;
        };
        if self.shown.replay.is_some() {
            return Some(Effect::Timeline(name));
        }
        let entries = crate::model::history::timeline::from_store(
            &name,
            self.zone().clone(),
            &self.shown.snapshot,
            self.activity.entries().iter().map(|logged| &logged.entry),
        );
        self.show_timeline(&Shown {
            name,
            entries,
            note: Some(crate::model::history::timeline::NO_RECORDING.to_owned()),
        });
        None
    }

    /// Open the `T` layer on `shown`: a full-text view titled with the
    /// name, each line `time  what` (times as the console shows them),
    /// sanitized and redacted as everything drawn.
    pub(super) fn show_timeline(&mut self, shown: &Shown) {
        let mut text = FullText::new(&format!("Timeline {} (oldest first)", shown.name));
        if let Some(note) = &shown.note {
            text.line(note);
            text.blank();
        }
        if shown.entries.is_empty() {
            text.line("nothing recorded about it");
        }
        for entry in &shown.entries {
            text.line(&format!(
                "{}  {}",
                crate::model::time::stamp(entry.at, self.zone()),
                entry.text
            ));
        }
        text.redact(&self.shown.snapshot.redactor);
        self.layers
            .open(super::Layer::FullText(super::full_view::FullView::new(
                text,
            )));
    }

    /// `:at TIME`: the replay's cursor to TIME
    /// ([`crate::model::history::cursor::parse_cursor`]); a time that does
    /// not parse is said in the flash; live, refused as the seek keys are.
    pub(super) fn seek_typed(&mut self, text: &str) -> Option<Effect> {
        let Some(view) = &self.shown.replay else {
            self.set_flash(FlashLevel::Warning, SEEK_LIVE.to_owned());
            return None;
        };
        match crate::model::history::cursor::parse_cursor(text, view.wall, view.at, self.zone()) {
            Ok(at) => Some(Effect::Seek(Seek::To(at))),
            Err(e) => {
                self.set_flash(FlashLevel::Error, e.to_string());
                None
            }
        }
    }

    /// `t`: the `:` line opened with `at ` typed, for a time.
    pub(super) fn type_time_key(&mut self) {
        if self.shown.replay.is_none() {
            self.set_flash(FlashLevel::Warning, SEEK_LIVE.to_owned());
            return;
        }
        self.open_command(false);
        if let Some(line) = self.layers.command_mut() {
            line.text = "at ".to_owned();
        }
    }

    /// A seek key: carried out by the replay's reader; refused with what
    /// it is for on a live console.
    pub(super) fn seek_key(&mut self, seek: Seek) -> Option<Effect> {
        if self.shown.replay.is_some() {
            return Some(Effect::Seek(seek));
        }
        self.set_flash(FlashLevel::Warning, SEEK_LIVE.to_owned());
        None
    }
}
