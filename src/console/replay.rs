//! `stackless-tui replay [--at TIME] [--history DIR]` (docs/history.md,
//! "Replay"): the one console (its [`App`], its render loop
//! [`drive`], its key table) fed from a recording instead of the watcher.
//! Read-only: no store connection, no reaper, no helper, no audit trail;
//! every action is refused by the rules with
//! [`crate::ui::app::replay::READ_ONLY`]. The `replay-reader` thread reads
//! the segments (never the render thread) and sends each cursor's
//! [`Frame`] as an [`Event::Replay`]; it holds one segment's reading at a
//! time (no keyframe is kept between seeks).

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;

use super::render_loop::{Carrier, drive};
use super::terminal::{self, RestoreOnDrop, with_terminal};
use crate::cli::{Cli, usage};
use crate::event::{Event, EventReceiver, EventSender};
use crate::history::files::Dir;
use crate::model::history::cursor::{Frame, Seek, Span, target};
use crate::model::history::reading::Reading;
use crate::model::history::{Found, Segment, Stamp, span_words};
use crate::model::protocol::lines::read;
use crate::model::time::unix_now;
use crate::ui::{App, AppConfig, Effect};

/// `stackless-tui replay`: the console on the recording in `--history`
/// (else the store's), its cursor at `--at` (else the recording's last
/// line), until the operator quits; exit 0, 1 when the terminal cannot be
/// used, 2 when there is no recording or the time does not parse.
#[must_use]
pub(crate) fn start(cli: &Cli, at: Option<&str>, given: Option<&Path>) -> ExitCode {
    let dir_path = match crate::history::history_dir(cli, given) {
        Ok(dir) => dir,
        Err(e) => return usage(&e),
    };
    let dir = match Dir::existing(&dir_path) {
        Ok(dir) => dir,
        Err(e) => return usage(&format!("no recording at {}: {e}", dir_path.display())),
    };
    let segments = match dir.segments() {
        Ok(segments) if !segments.is_empty() => segments,
        Ok(_) => return usage(&format!("nothing is recorded in {}", dir_path.display())),
        Err(e) => return usage(&format!("{}: {e}", dir_path.display())),
    };
    let zone = crate::startup::display_zone(cli.utc);
    let start = match at {
        Some(text) => match crate::model::history::cursor::parse_at(text, unix_now(), &zone) {
            Ok(at) => at,
            Err(e) => return usage(&e.to_string()),
        },
        None => segments.last().map_or(0, |s| s.last),
    };
    let config = crate::ui::app::replay::config(
        dir_path.display().to_string(),
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
    );
    let audit = crate::history::audit_path(cli);
    run(dir, audit, start, config, zone)
}

/// The terminal, the input thread, the reader, the one render loop.
fn run(
    dir: Dir,
    audit: Option<PathBuf>,
    at: i64,
    config: AppConfig,
    zone: jiff::tz::TimeZone,
) -> ExitCode {
    let (events, received): (EventSender, EventReceiver) = tokio::sync::mpsc::unbounded_channel();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        let _ = writeln!(
            io::stderr(),
            "stackless-tui: cannot start the replay's loop"
        );
        return ExitCode::FAILURE;
    };
    let seeks = match spawn_reader(dir, audit, at, zone.clone(), events.clone()) {
        Ok(seeks) => seeks,
        Err(e) => return failed(&format!("cannot start the replay's reader: {e}"), None),
    };
    let Some(entered) = with_terminal(terminal::enter) else {
        // Another thread panicked already; its hook exits the process.
        loop {
            std::thread::park();
        }
    };
    let restore = RestoreOnDrop;
    let mut term = match entered {
        Ok(term) => term,
        Err(error) => return failed(&format!("{error:#}"), Some(restore)),
    };
    let input = events;
    if let Err(error) =
        super::input::spawn_with(move |event, read| input.send(Event::InputAt(event, read)).is_ok())
    {
        return failed(
            &format!("cannot start the terminal input thread: {error}"),
            Some(restore),
        );
    }
    let mut app = App::new(config, at);
    app.set_zone(zone);
    let mut carrier = ReplayCarrier {
        seeks,
        copies: Vec::new(),
    };
    let why = runtime.block_on(drive(&mut term, &mut app, received, &mut carrier));
    if let Err(error) = why {
        tracing::warn!("the replay's loop ended: {error:#}");
    }
    terminal::restore_terminal();
    std::mem::forget(restore);
    std::mem::forget(term);
    ExitCode::SUCCESS
}

/// The terminal could not be used: given back, the reason said, exit 1.
fn failed(message: &str, restore: Option<RestoreOnDrop>) -> ExitCode {
    drop(restore);
    let _ = writeln!(io::stderr(), "stackless-tui: {message}");
    ExitCode::FAILURE
}

/// What carries out a replay's effects: the seeks go to the reader;
/// copies to the terminal; nothing else is carried out (the rules refused
/// every write: [`crate::ui::app::replay::READ_ONLY`]), and nothing is
/// audited (a replay writes nothing).
struct ReplayCarrier {
    seeks: mpsc::Sender<Ask>,
    copies: Vec<String>,
}

/// What the detail view says in a replay: its checkpoints and services
/// are read from the store, which a replay never opens.
pub(crate) const NO_DETAIL: &str =
    "replay: the detail is read from the store, not recorded: T shows this instance's timeline";

impl Carrier for ReplayCarrier {
    fn handle(&mut self, app: &mut App, event: Event) {
        let mut effect = app.handle(event, unix_now());
        drop(app.drain_outbox());
        // A read of the store is answered at once: there is none.
        while let Some(Effect::Io(crate::event::Request::OpenDetail { name })) = effect {
            let answer = crate::event::Answer::Detail {
                name,
                result: Err(NO_DETAIL.to_owned()),
            };
            effect = app.handle(Event::Answer(answer), unix_now());
        }
        match effect {
            Some(Effect::Seek(seek)) => {
                let _ = self.seeks.send(Ask::Seek(seek));
            }
            Some(Effect::Timeline(name)) => {
                let _ = self.seeks.send(Ask::Timeline(name));
            }
            Some(Effect::Copy { text }) => self.copies.push(text),
            _ => {}
        }
    }

    fn take_copies(&mut self, _app: &mut App) -> Vec<String> {
        std::mem::take(&mut self.copies)
    }
}

/// What the render loop asks the reader.
enum Ask {
    /// Move the cursor.
    Seek(Seek),
    /// An instance's timeline up to the cursor (`T`).
    Timeline(String),
}

/// The `replay-reader` thread: the first frame at `at`, then one per
/// batch of seeks (the seeks queued are applied together before one
/// read), and a timeline when `T` asks, until the loop is gone.
/// `zone`: the console's, for the times inside the timeline's lines;
/// `audit`: this console's audit trail, merged into both.
fn spawn_reader(
    dir: Dir,
    audit: Option<PathBuf>,
    at: i64,
    zone: jiff::tz::TimeZone,
    events: EventSender,
) -> io::Result<mpsc::Sender<Ask>> {
    let (seeks, asked) = mpsc::channel::<Ask>();
    std::thread::Builder::new()
        .name("replay-reader".to_owned())
        .spawn(move || {
            let mut at = at;
            let mut span = Span::default();
            let mut moved = true;
            loop {
                if moved {
                    let frame = frame_at(&dir, audit.as_deref(), &zone, at, &span);
                    span = frame.span.clone();
                    if events.send(Event::Replay(Box::new(frame))).is_err() {
                        return;
                    }
                }
                moved = false;
                let Ok(first) = asked.recv() else {
                    return;
                };
                for ask in std::iter::once(first).chain(asked.try_iter()) {
                    match ask {
                        Ask::Seek(seek) => {
                            at = target(seek, at, &span);
                            moved = true;
                        }
                        Ask::Timeline(name) => {
                            let shown =
                                timeline_at(&dir, audit.as_deref(), &name, at, zone.clone());
                            if events.send(Event::Timeline(Box::new(shown))).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        })?;
    Ok(seeks)
}

/// How far back before the cursor `T` reads the recording, in seconds: a
/// day (about 100 segments; older segments are not read, and the layer
/// says so).
pub(crate) const TIMELINE_SECS: i64 = 86_400;

/// `name`'s timeline up to `at` ([`crate::model::history::timeline::Timeline`])
/// from the segments of the [`TIMELINE_SECS`] before it, read in order on
/// this thread, with this console's teardowns of that window from its
/// audit trail at `audit` (its time, actor, outcome; redacted).
#[must_use]
pub(crate) fn timeline_at(
    dir: &Dir,
    audit: Option<&Path>,
    name: &str,
    at: i64,
    zone: jiff::tz::TimeZone,
) -> crate::model::history::timeline::Shown {
    crate::render_thread::assert_off("a replay's timeline read");
    let mut timeline = crate::model::history::timeline::Timeline::new(name, zone).at_cursor(at);
    let mut note = None;
    let segments = dir.segments().unwrap_or_default();
    let from = at.saturating_sub(TIMELINE_SECS);
    if segments.first().is_some_and(|s| s.first < from) {
        note = Some(format!(
            "the day before the cursor, from {}: older segments are not read",
            crate::model::time::rfc3339_or_raw(from)
        ));
    }
    for segment in segments
        .iter()
        .filter(|s| s.last >= from)
        .take_while(|s| s.first <= at)
    {
        let mut past = false;
        let read_all = dir.read_segment(&segment.file, &mut |line| {
            if let (Ok(stamp), Ok(message)) = (serde_json::from_slice::<Stamp>(line), read(line)) {
                if stamp.t > at {
                    past = true;
                    return false;
                }
                timeline.take(stamp.t, message);
            }
            true
        });
        if let Err(e) = read_all {
            note = Some(format!(
                "{}: {e}: the timeline may miss lines",
                segment.file
            ));
        }
        if past {
            break;
        }
    }
    if let Some(audit) = audit {
        for line in crate::audit::teardowns_between(audit, AUDIT_READ, from, at) {
            timeline.activity(&line);
        }
    }
    crate::model::history::timeline::Shown {
        name: name.to_owned(),
        entries: timeline.finish(),
        note,
    }
}

/// The recording at `at`: the segments listed again (a recorder may still
/// be writing: the live end moves), the segment holding `at` read, or why
/// nothing is recorded then (`zone`: the banners' times). `known`: the
/// changes found before. `audit`:
/// this console's audit trail, whose teardowns from the segment's start
/// to the cursor join the recorded Activity lines
/// ([`crate::model::history::reading::merge_audited`]).
#[must_use]
pub(crate) fn frame_at(
    dir: &Dir,
    audit: Option<&Path>,
    zone: &jiff::tz::TimeZone,
    at: i64,
    known: &Span,
) -> Frame {
    crate::render_thread::assert_off("a replay's segment read");
    let segments = dir.segments().unwrap_or_default();
    let mut span = recorded_span(&segments);
    span.changes.extend(known.changes.iter().copied());
    let index = match crate::history::locate_in(dir, &segments, at) {
        Found::In(index) => index,
        Found::Empty => return not_recorded(at, "nothing is recorded".to_owned(), span),
        Found::Before { first } => {
            return not_recorded(
                at,
                format!(
                    "before the recording, which starts {} later",
                    span_words(first - at)
                ),
                span,
            );
        }
        Found::After { last } => {
            return not_recorded(
                at,
                format!(
                    "after the recording's last line, {} before",
                    span_words(at - last)
                ),
                span,
            );
        }
        Found::Gap { from, to } => {
            return not_recorded(
                at,
                format!("a gap of {} in the recording", span_words(to - from)),
                span,
            );
        }
    };
    let mut reading = Reading::new(at).in_zone(zone.clone());
    let read_all = dir.read_segment(&segments[index].file, &mut |line| {
        if let (Ok(stamp), Ok(message)) = (serde_json::from_slice::<Stamp>(line), read(line)) {
            reading.take(stamp.t, message);
        }
        true
    });
    if let Err(e) = read_all {
        return not_recorded(at, format!("{}: {e}", segments[index].file), span);
    }
    let mut frame = reading.frame(span);
    if let Some(audit) = audit.filter(|_| frame.snapshot.is_some()) {
        let audited = crate::audit::teardowns_between(audit, AUDIT_READ, segments[index].first, at);
        frame.activity = crate::model::history::reading::merge_audited(
            std::mem::take(&mut frame.activity),
            audited,
        );
    }
    frame
}

/// How much of each audit file (`audit.jsonl`, `audit.jsonl.1`) the
/// replay reads back, from its end, in bytes.
const AUDIT_READ: u64 = 16 << 20;

/// The recording's first and last times, each segment's start a change
/// (`]` at a segment's last change goes on to the next one).
fn recorded_span(segments: &[Segment]) -> Span {
    Span {
        first: segments.first().map_or(0, |s| s.first),
        last: segments.last().map_or(0, |s| s.last),
        changes: segments.iter().map(|s| s.first).collect(),
    }
}

/// A cursor at which nothing is shown, and why.
fn not_recorded(at: i64, why: String, mut span: Span) -> Frame {
    span.changes.sort_unstable();
    span.changes.dedup();
    Frame {
        at,
        snapshot: None,
        why: Some(why),
        reaper: None,
        banners: Vec::new(),
        activity: Vec::new(),
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::record::{Retention, Sink};

    /// The reader's frame and `T` hold this console's teardowns from its
    /// audit trail beside the recorded lines, each with its time, actor
    /// and outcome, redacted; a teardown after the cursor is not shown.
    #[test]
    fn the_audit_trails_teardowns_join_the_frame_and_the_timeline() {
        let temp = tempfile::tempdir().unwrap();
        let dir = Dir::create(&temp.path().join("history")).unwrap();
        let retention = Retention {
            retain_secs: 86_400,
            max_bytes: 1 << 30,
        };
        let mut sink = Sink::new(dir.clone(), "/s/state.db".into(), None, retention).unwrap();
        let t0 = 1_000_000;
        let group = format!(
            "{{\"type\":\"reset\",\"seq\":1}}\n{{\"type\":\"rows\",\"seq\":1,\"table\":\"instances\",\"upsert\":[{{\"name\":\"alpha\",\"birth\":null,\"dns_safe\":true,\"substrate\":\"local\",\"status\":\"active\",\"created_at\":1,\"tombstoned_at\":null,\"lease\":null,\"lock\":null,\"dirty\":null,\"failed_up\":false,\"services_dead\":0,\"gc\":null}}],\"remove\":[]}}\n{{\"type\":\"synced\",\"seq\":1,\"at\":{t0},\"counts\":{{}}}}\n"
        );
        sink.take(group.as_bytes(), t0);
        sink.tick(t0);
        sink.take(b"{\"type\":\"heartbeat\",\"at\":1,\"seq\":1}\n", t0 + 4);
        sink.tick(t0 + 4);
        let audit = temp.path().join("audit.jsonl");
        std::fs::write(
            &audit,
            format!(
                "{{\"unix\":{},\"actor\":\"reaper\",\"instance\":\"alpha\",\"action\":\"teardown\",\"outcome\":\"failed\",\"reason\":\"token=CANARY9 rejected\"}}\n{{\"unix\":{},\"actor\":\"reaper\",\"instance\":\"alpha\",\"action\":\"teardown\",\"outcome\":\"succeeded\",\"reason\":\"down succeeded in 2.0s\"}}\n{{\"unix\":{},\"actor\":\"reaper\",\"instance\":\"alpha\",\"action\":\"teardown\",\"outcome\":\"succeeded\",\"reason\":\"later\"}}\n",
                t0 + 1,
                t0 + 3,
                t0 + 60
            ),
        )
        .unwrap();
        let utc = jiff::tz::TimeZone::UTC;
        let frame = frame_at(&dir, Some(&audit), &utc, t0 + 4, &Span::default());
        let seen: Vec<String> = frame
            .activity
            .iter()
            .map(|a| {
                format!(
                    "{} {} {} {}: {}",
                    a.at - t0,
                    a.actor,
                    a.instance,
                    a.kind,
                    a.detail
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                "1 reaper alpha failed: token=[redacted] rejected".to_owned(),
                "3 reaper alpha reaped: down succeeded in 2.0s".to_owned(),
            ]
        );
        let shown = timeline_at(&dir, Some(&audit), "alpha", t0 + 4, utc);
        let texts: Vec<String> = shown.entries.iter().map(|e| e.text.clone()).collect();
        assert_eq!(
            texts[1..],
            [
                "reaper failed: token=[redacted] rejected".to_owned(),
                "reaper reaped: down succeeded in 2.0s".to_owned(),
            ]
        );
    }
}
