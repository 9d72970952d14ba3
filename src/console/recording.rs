//! The one-host console's feed of its own recording
//! ([`crate::history::console`]): before the App takes an event, a whole
//! snapshot is forwarded (an `Arc` clone); after it, the App's Activity
//! journal, who reaps and the banners when they changed. Nothing here
//! writes or waits: the `history-recorder` thread does the rest.

use std::path::Path;

use crate::event::Event;
use crate::history::console::{DEFAULT_RETENTION, Fed, Feed, Recording};
use crate::model::protocol::lines::{Banner, Hello, ReaperLine};
use crate::ui::App;

/// What the render loop forwards to the recorder, and what it last
/// forwarded (so an unchanged reaper line or banner is not sent again).
#[derive(Debug)]
pub(super) struct Feeding {
    feed: Feed,
    /// The store file, for `hello`.
    store: String,
    /// This host's name (sanitized), for `hello`: read once at start.
    host: String,
    hello_sent: bool,
    reaper: Option<ReaperLine>,
    banners: Vec<Banner>,
}

/// Whether and where the console records: not with `--no-record` or
/// `--demo` (a demo's store is thrown away at quit), else into
/// `<state_dir>/stackless-tui/history` unless another recorder holds it.
pub(super) fn start(
    no_record: bool,
    demo: bool,
    state_dir: &Path,
    store: &Path,
) -> (Option<Feeding>, Recording) {
    if no_record {
        return (None, Recording::Off("--no-record".to_owned()));
    }
    if demo {
        return (None, Recording::Off("--demo".to_owned()));
    }
    let dir = state_dir.join("stackless-tui").join("history");
    let shown = store.display().to_string();
    let (feed, recording) = crate::history::console::start(&dir, shown.clone(), DEFAULT_RETENTION);
    (
        feed.map(|feed| Feeding {
            feed,
            store: shown,
            host: crate::model::text::sanitize_short(
                &sysinfo::System::host_name().unwrap_or_default(),
                253,
            ),
            hello_sent: false,
            reaper: None,
            banners: Vec::new(),
        }),
        recording,
    )
}

impl Feeding {
    /// Before the App takes `event`: a whole snapshot is forwarded (the
    /// first after its `hello`).
    pub(super) fn before(&mut self, app: &App, event: &Event) {
        let Event::Snapshot(snapshot) = event else {
            return;
        };
        if snapshot.partial.is_some() {
            return;
        }
        if !self.hello_sent {
            let reaper = super::agent::session::words::reaper_line(Some(app));
            self.feed.send(Fed::Hello(Box::new(Hello {
                host: self.host.clone(),
                store: self.store.clone(),
                schema: snapshot.generation.user_version,
                generation: super::agent::session::words::generation_word(snapshot.generation),
                read_only: true,
                dry_run: false,
                follow_only: true,
                reaper: reaper.clone(),
                teardown: Vec::new(),
                stackless: String::new(),
                now: crate::model::time::unix_now(),
            })));
            self.reaper = Some(reaper);
            self.hello_sent = true;
        }
        self.feed
            .send(Fed::Snapshot(std::sync::Arc::clone(snapshot)));
    }

    /// After the App took an event: its new Activity lines, who reaps
    /// and the banners, each when it changed.
    pub(super) fn after(&mut self, app: &mut App) {
        for activity in app.drain_activity_journal() {
            self.feed.send(Fed::Activity(activity));
        }
        if !self.hello_sent {
            return;
        }
        let reaper = super::agent::session::words::reaper_line(Some(app));
        if self.reaper.as_ref() != Some(&reaper) {
            self.feed.send(Fed::Reaper(reaper.clone()));
            self.reaper = Some(reaper);
        }
        let banners: Vec<Banner> = crate::ui::panes::header::banner_items(app)
            .into_iter()
            .map(|b| {
                // The busy banner counts seconds: said once, when it
                // appears (as the agent's stream says it).
                let said = self
                    .banners
                    .iter()
                    .find(|s| b.id == "store_busy" && s.id == b.id)
                    .map(|s| s.text.clone());
                Banner {
                    id: b.id.to_owned(),
                    level: if b.error { "error" } else { "warning" }.to_owned(),
                    text: said.unwrap_or(b.text),
                }
            })
            .collect();
        if banners != self.banners {
            self.feed.send(Fed::Banners(banners.clone()));
            self.banners = banners;
        }
    }

    /// The console stops: the last lines written, the lock released.
    pub(super) fn finish(self) {
        self.feed.finish();
    }
}
