//! The flight recorder (docs/history.md): `record` keeps the store's
//! protocol stream in compressed segments; `snapshot --at` and `history`
//! read them back. The pure rules (the index, the keyframe, retention,
//! the times typed) are [`crate::model::history`]'s; the files are
//! [`files`]'s alone.

pub mod console;
pub mod files;
pub mod fleet;
pub mod keyframe;
pub mod record;
#[cfg(test)]
mod tests;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use crate::cli::{Cli, usage};
use crate::model::history::replay::Replay;
use crate::model::history::{
    Found, GAP_SECS, Segment, Stamp, gaps_resumed, is_resume, locate_resumed,
};
use crate::model::protocol::lines::read;
use crate::model::time::unix_now;
use files::Dir;
use record::{Retention, Shared, Sink, bytes_words};

/// Exit code of a time that is not recorded (before the recording, in a
/// gap, after it) and of a second recorder.
pub const EXIT_NOT_RECORDED: u8 = 1;

/// The store the flags name (`--state`, else stackless's default path),
/// whether or not it exists.
fn store_path(cli: &Cli) -> Result<PathBuf, String> {
    match &cli.state {
        Some(path) => Ok(path.clone()),
        None => crate::startup::default_store_path().map_err(|e| e.to_string()),
    }
}

/// `--history DIR`, else `<state_dir>/stackless-tui/history` (the store's
/// directory).
///
/// # Errors
/// No `--state` and stackless's default path cannot be found.
pub fn history_dir(cli: &Cli, given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    let store = store_path(cli)?;
    let state_dir = store.parent().unwrap_or_else(|| Path::new("."));
    Ok(state_dir.join("stackless-tui").join("history"))
}

/// `--retain SPAN` and `--max-size SIZE` read.
///
/// # Errors
/// Either is not one (the sentence).
pub fn retention(retain: &str, max_size: &str) -> Result<Retention, String> {
    Ok(Retention {
        retain_secs: crate::model::history::parse_span(retain)?,
        max_bytes: crate::model::history::parse_size(max_size)?,
    })
}

/// The recording `--host NAME` names: `<dir>/<NAME>/` of the history
/// directory (`given`, else the default) for a fleet's recording; `given`
/// unchanged without one.
///
/// # Errors
/// The host is not a DNS-safe name, or no directory can be named.
pub fn host_dir(
    cli: &Cli,
    given: Option<&Path>,
    host: Option<&str>,
) -> Result<Option<PathBuf>, String> {
    let Some(host) = host else {
        return Ok(given.map(Path::to_path_buf));
    };
    fleet::check_host(host)?;
    Ok(Some(history_dir(cli, given)?.join(host)))
}

/// This console's audit trail beside the store the flags name
/// (`<state_dir>/stackless-tui/audit.jsonl`), read by `replay`; `None`
/// when no store is named and there is no default.
#[must_use]
pub fn audit_path(cli: &Cli) -> Option<PathBuf> {
    let store = store_path(cli).ok()?;
    let state_dir = store.parent().unwrap_or_else(|| Path::new("."));
    Some(crate::audit::default_path(state_dir))
}

/// `stackless-tui record [--history DIR] [--retain SPAN] [--max-size SIZE]`.
#[must_use]
pub fn record(cli: &Cli, given: Option<&Path>, retention: Retention) -> ExitCode {
    if !cli.controller.is_empty() || cli.fleet.is_some() || cli.demo.is_some() {
        return usage(
            "record keeps a store on the host it runs on (`ssh HOST stackless-tui record`), \
             or a fleet of two or more hosts (--fleet FILE, --controller twice or more); \
             not one --controller, nor --demo",
        );
    }
    let (dir_path, store) = match (history_dir(cli, given), store_path(cli)) {
        (Ok(dir), Ok(store)) => (dir, store),
        (Err(e), _) | (_, Err(e)) => return usage(&e),
    };
    let dir = match Dir::create(&dir_path) {
        Ok(dir) => dir,
        Err(e) => return usage(&format!("record: {}: {e}", dir_path.display())),
    };
    let _held = match dir.lock() {
        Ok(held) => held,
        Err(Ok(who)) => {
            eprintln!(
                "stackless-tui: record: another recorder holds {} ({who}): one recorder per store",
                dir_path.display()
            );
            return ExitCode::from(EXIT_NOT_RECORDED);
        }
        Err(Err(e)) => return usage(&format!("record: {}: {e}", dir_path.display())),
    };
    let shown = store.display().to_string();
    let sink = match Sink::new(dir, shown.clone(), None, retention) {
        Ok(sink) => Arc::new(Mutex::new(sink.with_services(services_read(store.clone())))),
        Err(e) => return usage(&format!("record: {}: {e}", dir_path.display())),
    };
    if let Err(e) = record::start_ticker(&sink) {
        return usage(&format!("record: cannot start the ticker: {e}"));
    }
    // A closed stdout (run detached) does not stop the recording.
    let mut stdout = std::io::stdout();
    let _ = writeln!(
        stdout,
        "stackless-tui: recording {} into {}: {}",
        crate::model::text::sanitize(&shown),
        crate::model::text::sanitize(&dir_path.display().to_string()),
        retention.words()
    )
    .and_then(|()| stdout.flush());
    let stop = crate::stop::StopToken::new();
    let mut agent = cli.clone();
    if let Some(file) = agent.metrics_file.take() {
        let counted = Arc::clone(&sink);
        let extra: crate::console::metrics_file::Extra = Arc::new(move || {
            counted
                .lock()
                .map(|sink| sink.teardowns().family())
                .unwrap_or_default()
        });
        let sources = crate::console::metrics_file::Sources {
            extra: Some(extra),
            ..crate::console::metrics_file::Sources::default()
        };
        let state_dir = store
            .parent()
            .map_or_else(|| std::path::PathBuf::from("."), Path::to_path_buf);
        let started = crate::audit::watch_counts(
            crate::audit::default_path(&state_dir),
            sources.audit.clone(),
            stop.clone(),
        )
        .and_then(|()| {
            crate::console::metrics_file::spawn(file, store, cli.tick, sources, stop.clone())
        });
        if let Err(e) = started {
            return usage(&format!(
                "record: cannot start the metrics file writer: {e}"
            ));
        }
    }
    let code = crate::console::record(&agent, Shared(Arc::clone(&sink)));
    stop.cancel();
    if let Ok(mut sink) = sink.lock() {
        sink.tick(unix_now());
    }
    code
}

/// The recorder's read of each instance's services from the store at
/// `store`, as `snapshot --json` reads them.
fn services_read(store: PathBuf) -> record::ReadServices {
    Box::new(move |instances| crate::headless::recorded_services(&store, instances).ok())
}

/// Whether segment `file` opens with the recorder's resume after a pause
/// ([`is_resume`]: its banner comes right after the header). Unreadable:
/// no.
#[must_use]
pub fn opens_with_resume(dir: &Dir, file: &str) -> bool {
    let mut seen = 0;
    let mut resume = false;
    let _ = dir.read_segment(file, &mut |line| {
        seen += 1;
        if let Ok(crate::model::protocol::lines::Message::Banner(banner)) = read(line) {
            resume = is_resume(&banner.id, &banner.text);
        }
        !resume && seen < 2
    });
    resume
}

/// Where `at` falls in `segments` (docs/history.md, "Gaps"): past a
/// segment's last line by at most [`GAP_SECS`] is recorded, unless the
/// next segment opens with a resume after a pause (then it is a gap).
#[must_use]
pub fn locate_in(dir: &Dir, segments: &[Segment], at: i64) -> Found {
    match locate_resumed(segments, &[], at) {
        Found::In(index)
            if at > segments[index].last
                && segments
                    .get(index + 1)
                    .is_some_and(|next| opens_with_resume(dir, &next.file)) =>
        {
            locate_resumed(segments, &[index + 1], at)
        }
        found => found,
    }
}

/// The indexes of the segments that open with a resume after a pause.
#[must_use]
pub fn resumed(dir: &Dir, segments: &[Segment]) -> Vec<usize> {
    (1..segments.len())
        .filter(|i| opens_with_resume(dir, &segments[*i].file))
        .collect()
}

/// A recording read up to `at`: the tables then, or why there are none.
///
/// # Errors
/// The words: nothing recorded at `at` (before, in a gap, after), or the
/// directory cannot be read.
pub fn replay_at(dir: &Dir, at: i64) -> Result<Replay, String> {
    let segments = dir
        .segments()
        .map_err(|e| format!("{}: {e}", dir.path().display()))?;
    let index = match locate_in(dir, &segments, at) {
        Found::In(index) => index,
        Found::Empty => return Err(format!("nothing is recorded in {}", dir.path().display())),
        Found::Before { first } => {
            return Err(format!(
                "{} is before the recording, which starts at {}",
                stamp_words(at),
                stamp_words(first)
            ));
        }
        Found::After { last } => {
            return Err(format!(
                "{} is after the recording, whose last line is at {}: not recorded",
                stamp_words(at),
                stamp_words(last)
            ));
        }
        Found::Gap { from, to } => return Err(gap_words(at, from, to)),
    };
    let mut replay = Replay::new();
    let mut next: Option<i64> = None;
    dir.read_segment(&segments[index].file, &mut |line| {
        let Ok(stamp) = serde_json::from_slice::<Stamp>(line) else {
            return true;
        };
        if stamp.t > at {
            next = Some(stamp.t);
            return false;
        }
        if let Ok(message) = read(line) {
            replay.apply(stamp.t, message);
        }
        true
    })
    .map_err(|e| format!("{}: {e}", segments[index].file))?;
    let last = replay.last_t.unwrap_or(at);
    if at - last > GAP_SECS {
        return Err(gap_words(at, last, next.unwrap_or(at)));
    }
    if !replay.synced() {
        return Err(format!(
            "{}: no whole snapshot recorded by then (the recording's first read ends after it)",
            stamp_words(at)
        ));
    }
    Ok(replay)
}

fn gap_words(at: i64, from: i64, to: i64) -> String {
    format!(
        "{} is in a gap of the recording: nothing recorded from {} to {}",
        stamp_words(at),
        stamp_words(from),
        stamp_words(to)
    )
}

/// A time as `history` and the refusals say it (RFC 3339, UTC).
fn stamp_words(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

/// `stackless-tui snapshot [--json] --at TIME [--now UNIX] [--history DIR]`:
/// the store as recorded at TIME, through the live `snapshot`'s report
/// code; countdowns at `--now`, else at TIME. Each instance's services are
/// the ones recorded (probed by the recorder when they were read).
#[must_use]
pub fn snapshot_at(
    cli: &Cli,
    json: bool,
    at: &str,
    now: Option<i64>,
    given: Option<&Path>,
) -> ExitCode {
    let zone = crate::startup::display_zone(cli.utc);
    let at = match crate::model::history::cursor::parse_at(at, unix_now(), &zone) {
        Ok(at) => at,
        Err(e) => return usage(&e.to_string()),
    };
    let dir_path = match history_dir(cli, given) {
        Ok(dir) => dir,
        Err(e) => return usage(&e),
    };
    let dir = match Dir::existing(&dir_path) {
        Ok(dir) => dir,
        Err(e) => return usage(&format!("no recording at {}: {e}", dir_path.display())),
    };
    let replay = match replay_at(&dir, at) {
        Ok(replay) => replay,
        Err(words) => {
            eprintln!("stackless-tui: snapshot --at: {words}");
            return ExitCode::from(EXIT_NOT_RECORDED);
        }
    };
    let snapshot = replay.snapshot();
    let store = replay
        .hello
        .as_ref()
        .map(|h| h.store.clone())
        .unwrap_or_default();
    let now = now.unwrap_or(at);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = if json {
        crate::headless::report::write_json(
            &mut out,
            &snapshot,
            now,
            &store,
            &mut |instance| Ok(recorded_services(&replay, instance)),
            None,
        )
        .map_err(std::io::Error::from)
    } else {
        crate::headless::report::write_table(
            &mut out,
            &snapshot,
            now,
            &store,
            &table_services(&replay, &snapshot),
            &zone,
            None,
        )
        .and_then(|()| {
            let text = replay.reaper.as_ref().map_or_else(
                || "not recorded".to_owned(),
                crate::model::history::replay::who_reaps,
            );
            writeln!(
                out,
                "who reaps (recorded): {}",
                crate::model::text::sanitize(&text)
            )
        })
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => usage(&e.to_string()),
    }
}

/// `instance`'s services as recorded (read back into the report's type).
fn recorded_services(
    replay: &Replay,
    instance: &crate::model::Instance,
) -> Vec<crate::headless::report::ServiceReport> {
    let id = instance
        .birth
        .as_ref()
        .map(crate::model::Birth::instance_id);
    replay
        .services_of(&instance.name, id.as_deref())
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

/// Every instance's recorded services with any, by name: the table's
/// STAGE.
fn table_services(
    replay: &Replay,
    snapshot: &crate::model::Snapshot,
) -> crate::headless::report::Services {
    snapshot
        .instances
        .iter()
        .map(|i| (i.name.clone(), recorded_services(replay, i)))
        .filter(|(_, s)| !s.is_empty())
        .collect()
}

/// `stackless-tui history [--history DIR]`: the recorded span, its size,
/// the segments, the retention the recorder said, and the gaps.
#[must_use]
pub fn history(cli: &Cli, given: Option<&Path>) -> ExitCode {
    let dir_path = match history_dir(cli, given) {
        Ok(dir) => dir,
        Err(e) => return usage(&e),
    };
    let segments = match Dir::existing(&dir_path).and_then(|d| d.segments()) {
        Ok(segments) => segments,
        Err(e) => return usage(&format!("no recording at {}: {e}", dir_path.display())),
    };
    let hosts = if segments.is_empty() {
        fleet_hosts(&dir_path)
    } else {
        Vec::new()
    };
    if hosts.is_empty() {
        print!("{}", history_of(&dir_path, &segments));
        return ExitCode::SUCCESS;
    }
    // A fleet's recording: each host's, in name order.
    let mut out = String::new();
    for (host, segments) in hosts {
        out.push_str(&format!("host {host}\n"));
        out.push_str(&history_of(&dir_path.join(&host), &segments));
    }
    print!("{out}");
    ExitCode::SUCCESS
}

/// The hosts of a fleet's recording in `dir` (`record --fleet`: each a
/// DNS-safe subdirectory with segments), in name order, with their
/// segments.
fn fleet_hosts(dir: &Path) -> Vec<(String, Vec<crate::model::history::Segment>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut hosts: Vec<(String, Vec<crate::model::history::Segment>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| fleet::check_host(name).is_ok())
        .filter_map(|name| {
            let segments = Dir::existing(&dir.join(&name))
                .and_then(|d| d.segments())
                .ok()?;
            (!segments.is_empty()).then_some((name, segments))
        })
        .collect();
    hosts.sort_by(|a, b| a.0.cmp(&b.0));
    hosts
}

/// What `history` says of the recording in `dir_path` (its `segments`).
fn history_of(dir_path: &Path, segments: &[crate::model::history::Segment]) -> String {
    let mut out = String::new();
    let shown = crate::model::text::sanitize(&dir_path.display().to_string()).into_owned();
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return format!("history: {shown}: nothing recorded\n");
    };
    let bytes: u64 = segments.iter().map(|s| s.bytes).sum();
    out.push_str(&format!(
        "history: {shown}\nrecorded: {} to {} ({})\nsize: {} in {} segment{}\n",
        stamp_words(first.first),
        stamp_words(last.last),
        crate::model::history::span_words(last.last - first.first),
        bytes_words(bytes),
        segments.len(),
        if segments.len() == 1 { "" } else { "s" }
    ));
    let mut header: Option<crate::model::history::Header> = None;
    if let Ok(dir) = Dir::existing(dir_path) {
        let _ = dir.read_segment(&last.file, &mut |line| {
            header = serde_json::from_slice(line).ok();
            false
        });
    }
    let retention = header.and_then(|h| Some((h.retain_secs?, h.max_bytes?)));
    out.push_str(&match retention {
        Some((retain_secs, max_bytes)) => format!(
            "retention: {}\n",
            Retention {
                retain_secs,
                max_bytes
            }
            .words()
        ),
        None => "retention: not said\n".to_owned(),
    });
    let resumed_at = Dir::existing(dir_path)
        .map(|dir| resumed(&dir, segments))
        .unwrap_or_default();
    let holes = gaps_resumed(segments, &resumed_at);
    if holes.is_empty() {
        out.push_str("gaps: none\n");
    }
    for (from, to) in holes {
        out.push_str(&format!(
            "gap: {} to {} ({}): not recorded\n",
            stamp_words(from),
            stamp_words(to),
            crate::model::history::span_words(to - from)
        ));
    }
    let skipped = Dir::existing(dir_path)
        .and_then(|dir| dir.skipped())
        .unwrap_or_default();
    for (name, why) in skipped {
        out.push_str(&format!(
            "segment {} skipped: {why}\n",
            crate::model::text::sanitize(&name)
        ));
    }
    for segment in segments {
        out.push_str(&format!(
            "segment {}: {} to {}, {}\n",
            segment.file,
            stamp_words(segment.first),
            stamp_words(segment.last),
            bytes_words(segment.bytes)
        ));
    }
    out
}
