//! The console's recording read back: every segment (its keyframe made
//! from the console's own state, never a copy of its rows) replays to the
//! states the stream said, at every time it recorded; a frame's text is
//! bounded; the console's sink holds no row.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::console::{Fed, Lines, Recorder};
use super::files::Dir;
use super::record::{Retention, Sink};
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::generation::Generation;
use crate::model::history::replay::Replay;
use crate::model::history::{SEGMENT_SECS, Stamp};
use crate::model::protocol::lines::{Banner, Hello, Message, ReaperLine, read};
use crate::model::rows::{Birth, Lease, Rows, Status};
use crate::model::{Instance, OpStatus, Operation, ReapAttempt, Snapshot};

const T0: i64 = 1_764_655_200;

const RETENTION: Retention = Retention {
    retain_secs: 30 * 86_400,
    max_bytes: 1 << 30,
};

fn instance(i: usize, expires_at: i64) -> Instance {
    Instance {
        name: format!("box-{i:04}"),
        substrate: "local".into(),
        status: Status::Active,
        created_at: Some(T0 - 600),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 3_600,
            expires_at,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: Some(false),
        birth: Some(Birth::new(&format!("b{i}"), &format!("sl-b{i}"))),
    }
}

fn operation(i: usize, status: &str) -> Operation {
    Operation {
        id: format!("op-{i:04}"),
        instance: format!("box-{i:04}"),
        instance_id: None,
        verb: "down".to_owned(),
        status: OpStatus::parse(status),
        cancel_requested: false,
        created_at: T0 - 100 + i64::try_from(i).unwrap_or_default(),
        updated_at: T0,
        error_json: None,
        progress: None,
        ran: None,
    }
}

/// A snapshot of instances `names` (each lease at `T0 + 3600 + bump`
/// for the ones in `renewed`), operations `0..ops` (the first `done`
/// finished) and a backoff for each of `backoffs`.
fn snapshot(
    names: impl Iterator<Item = usize>,
    renewed: &[usize],
    ops: (usize, usize),
    backoffs: &[usize],
    reopened: Option<&'static str>,
) -> Arc<Snapshot> {
    let instances: Vec<Instance> = names
        .map(|i| {
            let bump = if renewed.contains(&i) { 600 } else { 0 };
            instance(i, T0 + 3_600 + bump)
        })
        .collect();
    let operations = (0..ops.0)
        .map(|i| operation(i, if i < ops.1 { "succeeded" } else { "queued" }))
        .collect();
    let reap_attempts = backoffs
        .iter()
        .map(|i| ReapAttempt {
            instance: format!("box-{i:04}"),
            attempts: 2,
            last_error: "teardown failed".to_owned(),
            next_retry_at: T0 + 60,
        })
        .collect();
    let mut snapshot = Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: instances.into(),
        reap_attempts,
        operations,
        ..Rows::default()
    });
    snapshot.reopened = reopened;
    Arc::new(snapshot)
}

fn reaper(by: &str, pid: i64) -> ReaperLine {
    ReaperLine {
        by: by.to_owned(),
        pid: Some(pid),
        text: format!("reaper: {by} pid {pid}"),
        ..ReaperLine::default()
    }
}

fn banner(id: &str, text: &str) -> Banner {
    Banner {
        id: id.to_owned(),
        level: "warning".to_owned(),
        text: text.to_owned(),
    }
}

fn activity(at: i64, detail: &str) -> Activity {
    Activity::new(at, Actor::Reaper, "box-0003", ActivityKind::Reaped, detail)
}

/// One step of the console's life: something forwarded at a time, a
/// heartbeat, or the recorder's tick (a test's script of a few steps:
/// their size does not matter).
#[allow(clippy::large_enum_variant)]
enum Step {
    Feed(i64, Fed),
    Heartbeat(i64),
    Tick(i64),
}

/// What the console forwards: a first group, changes, a banner and a
/// reaper change, a store read anew (`reset` with its reason), a snapshot
/// that changes nothing, and two segment rollovers (15 minutes each),
/// the first at a group's start.
fn script() -> Vec<Step> {
    use Step::{Feed, Heartbeat, Tick};
    let hello = Hello {
        host: "host-a".to_owned(),
        store: "/s/state.db".to_owned(),
        schema: 14,
        generation: "controller",
        read_only: true,
        dry_run: false,
        follow_only: true,
        reaper: reaper("console", 10),
        teardown: Vec::new(),
        stackless: String::new(),
        now: T0,
    };
    let roll = T0 + SEGMENT_SECS;
    vec![
        Feed(T0, Fed::Hello(Box::new(hello))),
        Feed(
            T0,
            Fed::Snapshot(snapshot(0..60, &[], (30, 10), &[3, 4], None)),
        ),
        Tick(T0),
        Feed(T0 + 1, Fed::Banners(vec![banner("clock", "clock skew")])),
        Feed(T0 + 1, Fed::Activity(activity(T0 + 1, "down in 1.2s"))),
        Tick(T0 + 1),
        Feed(
            T0 + 2,
            Fed::Snapshot(snapshot(
                (0..60).filter(|i| *i != 7).chain([99]),
                &[5],
                (31, 12),
                &[3],
                None,
            )),
        ),
        Tick(T0 + 2),
        Heartbeat(T0 + 8),
        Tick(T0 + 8),
        // The segment is full: the next group starts a new one.
        Feed(
            roll,
            Fed::Snapshot(snapshot(
                (0..60).filter(|i| *i != 7).chain([99, 100]),
                &[5, 6, 8],
                (31, 20),
                &[],
                None,
            )),
        ),
        Tick(roll),
        Feed(roll + 1, Fed::Reaper(reaper("console", 11))),
        Feed(roll + 1, Fed::Banners(vec![banner("audit", "audit full")])),
        Tick(roll + 1),
        Feed(
            roll + 2,
            Fed::Snapshot(snapshot(
                10..50,
                &[],
                (5, 1),
                &[12],
                Some("the store file was replaced: another file is at its path"),
            )),
        ),
        Tick(roll + 2),
        // Full again: an Activity line starts the third segment.
        Feed(
            roll + SEGMENT_SECS,
            Fed::Activity(activity(roll + SEGMENT_SECS, "down in 2s")),
        ),
        Feed(
            roll + SEGMENT_SECS,
            Fed::Snapshot(snapshot(10..50, &[], (5, 1), &[12], None)),
        ),
        Tick(roll + SEGMENT_SECS),
        Feed(
            roll + SEGMENT_SECS + 1,
            Fed::Snapshot(snapshot(10..51, &[20], (6, 2), &[12], None)),
        ),
        Tick(roll + SEGMENT_SECS + 1),
    ]
}

/// What a reader holds: its keyframe's lines (the `hello`, every row,
/// `synced`'s seq and time, who reaps, the banners up).
fn state(replay: &Replay) -> Vec<String> {
    replay.keyframe()
}

/// The states the stream itself says, by time: after the last line of
/// each time (a plain [`Lines`], no recorder), and the resets that carry
/// a reason.
fn said() -> (BTreeMap<i64, Vec<String>>, usize) {
    let mut lines = Lines::default();
    let mut replay = Replay::new();
    let mut states = BTreeMap::new();
    let mut reasons = 0;
    for step in script() {
        let (t, fed) = match step {
            Step::Feed(t, fed) => (t, Some(fed)),
            Step::Heartbeat(t) => (t, None),
            Step::Tick(_) => continue,
        };
        let mut apply = |line: String| {
            let message = read(line.as_bytes()).expect("a message");
            if let Message::Reset(reset) = &message {
                reasons += usize::from(reset.reason.is_some());
            }
            replay.apply(t, message);
        };
        match fed {
            Some(fed) => lines.take(fed, t, &mut apply),
            None => lines.heartbeat(t, &mut apply),
        }
        states.insert(t, state(&replay));
    }
    (states, reasons)
}

/// Each segment's lines, in order.
fn segments(dir: &Dir) -> Vec<Vec<String>> {
    dir.segments()
        .expect("segments")
        .iter()
        .map(|segment| {
            let mut out = Vec::new();
            dir.read_segment(&segment.file, &mut |line| {
                out.push(String::from_utf8_lossy(line).into_owned());
                true
            })
            .expect("read");
            out
        })
        .collect()
}

fn record(frame_bytes: usize, segment_bytes: u64) -> (tempfile::TempDir, Dir, Recorder) {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = Dir::create(&temp.path().join("history")).expect("dir");
    let sink = Sink::console(dir.clone(), "/s/state.db".into(), RETENTION)
        .expect("sink")
        .bounded(frame_bytes, segment_bytes);
    (temp, dir, Recorder::new(sink))
}

#[test]
fn each_segment_of_the_consoles_recording_replays_to_the_states_the_stream_said() {
    // A frame bound under one group: groups are written over several
    // frames; segments full after a frame or two (on disk), so a segment
    // is full mid-group and the next starts after that group.
    let (_temp, dir, mut recorder) = record(8_192, 100);
    for step in script() {
        match step {
            Step::Feed(t, fed) => {
                recorder.take(fed, t);
            }
            Step::Heartbeat(t) => {
                recorder.heartbeat(t);
            }
            Step::Tick(t) => recorder.tick(t),
        }
        assert_eq!(recorder.sink().rows_held(), 0);
    }
    let (said, reasons) = said();
    let segments = segments(&dir);
    assert!(segments.len() > 3, "{}", segments.len());
    let mut checked = Vec::new();
    let mut recorded_reasons = 0;
    for lines in &segments {
        // Each segment alone, from its keyframe.
        let mut replay = Replay::new();
        let mut at: Option<i64> = None;
        for line in &lines[1..] {
            let t = serde_json::from_str::<Stamp>(line).expect("stamped").t;
            if let Some(before) = at.filter(|before| *before != t) {
                assert_eq!(state(&replay), said[&before], "at {before}");
                checked.push(before);
            }
            at = Some(t);
            let message = read(line.as_bytes()).expect("a message");
            if let Message::Reset(reset) = &message {
                recorded_reasons += usize::from(reset.reason.is_some());
            }
            replay.apply(t, message);
        }
        let end = at.expect("a line");
        assert_eq!(state(&replay), said[&end], "at {end}");
        checked.push(end);
    }
    // Every time the stream said something was read back, in order; the
    // keyframes' resets carry no reason (only the store read anew does).
    assert_eq!(checked, said.keys().copied().collect::<Vec<_>>());
    assert_eq!((reasons, recorded_reasons), (1, 1));
    // Every segment after the first opens with a keyframe: its `hello`
    // right after the header, stamped with the segment's first time.
    for lines in &segments[1..] {
        assert!(
            matches!(read(lines[1].as_bytes()), Ok(Message::Hello(_))),
            "{}",
            lines[1]
        );
    }
}

/// The frames of a segment file, each decoded.
fn frames(dir: &Dir) -> Vec<Vec<u8>> {
    let segment = &dir.segments().expect("segments")[0];
    dir.raw_frames(&segment.file)
        .expect("frames")
        .iter()
        .map(|frame| zstd::stream::decode_all(frame.as_slice()).expect("decoded"))
        .collect()
}

#[test]
fn a_large_group_is_written_in_bounded_frames_and_the_consoles_sink_holds_no_row() {
    let bound = 150_000;
    let (_temp, dir, mut recorder) = record(bound, u64::MAX);
    let hello = Hello {
        host: "host-a".to_owned(),
        store: "/s/state.db".to_owned(),
        schema: 14,
        generation: "controller",
        read_only: true,
        dry_run: false,
        follow_only: true,
        reaper: reaper("console", 10),
        teardown: Vec::new(),
        stackless: String::new(),
        now: T0,
    };
    let first = snapshot(0..2_000, &[], (500, 100), &[1, 2], None);
    recorder.take(Fed::Hello(Box::new(hello)), T0);
    let made = recorder.take(Fed::Snapshot(Arc::clone(&first)), T0);
    recorder.tick(T0);
    let frames = frames(&dir);
    let largest = frames.iter().map(Vec::len).max().unwrap_or_default();
    let total: usize = frames.iter().map(Vec::len).sum();
    assert!(total > 4 * bound, "{total}");
    assert!(largest <= bound + 1_024, "{largest}");
    // Every line is there, once: the header, the hello, the group.
    let lines: usize = frames
        .iter()
        .map(|f| f.iter().filter(|b| **b == b'\n').count())
        .sum();
    assert_eq!(lines, 1 + 1 + made);
    assert_eq!(recorder.sink().rows_held(), 0);
    // `record`'s sink reads the same lines into its tables.
    let mut lines = Lines::default();
    let other = tempfile::tempdir().expect("tempdir");
    let mut sink = Sink::new(
        Dir::create(other.path()).expect("dir"),
        "/s/state.db".into(),
        None,
        RETENTION,
    )
    .expect("sink");
    lines.take(Fed::Snapshot(first), T0, &mut |line| {
        sink.take_line(line, T0);
    });
    sink.tick(T0);
    assert_eq!(sink.rows_held(), 2_000 + 500 + 2);
}

#[test]
fn the_console_resumes_after_a_full_disk_with_a_keyframe_of_what_it_held_then() {
    let (_temp, dir, mut recorder) = record(8_192, u64::MAX);
    let mut steps = script().into_iter();
    // The first group, written.
    for step in steps.by_ref().take(3) {
        if let Step::Feed(t, fed) = step {
            recorder.take(fed, t);
        }
    }
    recorder.tick(T0);
    // The disk is full: a group and a banner are lost (frames cut back,
    // the recording paused); the state goes on.
    dir.fill(true);
    recorder.take(
        Fed::Snapshot(snapshot(0..40, &[5], (31, 12), &[3], None)),
        T0 + 2,
    );
    recorder.tick(T0 + 2);
    recorder.take(Fed::Banners(vec![banner("clock", "clock skew")]), T0 + 3);
    recorder.tick(T0 + 3);
    dir.fill(false);
    recorder.take(Fed::Activity(activity(T0 + 9, "down in 2s")), T0 + 9);
    recorder.tick(T0 + 9);
    let segments = segments(&dir);
    assert_eq!(segments.len(), 2);
    assert!(
        segments[1][1].contains(r#""type":"banner","id":"recording""#),
        "{}",
        segments[1][1]
    );
    let mut replay = Replay::new();
    for line in &segments[1][1..] {
        let t = serde_json::from_str::<Stamp>(line).expect("stamped").t;
        replay.apply(t, read(line.as_bytes()).expect("a message"));
    }
    // What a reader of the whole stream holds at the end.
    let mut lines = Lines::default();
    let mut said = Replay::new();
    let mut feeds = script().into_iter().filter_map(|step| match step {
        Step::Feed(t, fed) => Some((t, fed)),
        _ => None,
    });
    let mut feed = |lines: &mut Lines, t: i64, fed: Fed| {
        lines.take(fed, t, &mut |line| {
            said.apply(t, read(line.as_bytes()).expect("a message"));
        });
    };
    for (t, fed) in feeds.by_ref().take(2) {
        feed(&mut lines, t, fed);
    }
    feed(
        &mut lines,
        T0 + 2,
        Fed::Snapshot(snapshot(0..40, &[5], (31, 12), &[3], None)),
    );
    feed(
        &mut lines,
        T0 + 3,
        Fed::Banners(vec![banner("clock", "clock skew")]),
    );
    let mut banners = state(&said);
    // The resume banner is up in the recording only.
    banners.push(segments[1][1].replacen(&format!("{{\"t\":{},", T0 + 9), "{", 1));
    assert_eq!(state(&replay), banners);
}

/// Each segment's zstd frames' sizes on disk, in order.
fn frame_sizes(dir: &Dir) -> Vec<Vec<usize>> {
    dir.segments()
        .expect("segments")
        .iter()
        .map(|segment| {
            let frames = dir.raw_frames(&segment.file).expect("frames");
            frames.iter().map(Vec::len).collect()
        })
        .collect()
}

#[test]
fn a_keyframe_larger_than_a_segment_does_not_make_each_frame_a_segment() {
    let bound = 3_000;
    let (_temp, dir, mut recorder) = record(1 << 20, bound);
    recorder.take(
        Fed::Snapshot(snapshot(0..2_000, &[], (500, 100), &[1], None)),
        T0,
    );
    recorder.tick(T0);
    let first = frame_sizes(&dir)[0][0];
    assert!(first > 2 * 3_000, "{first}");
    // Small frames after it: one segment, however large its first frame.
    for k in 1..=10 {
        recorder.take(Fed::Activity(activity(T0 + k, "down")), T0 + k);
        recorder.tick(T0 + k);
    }
    assert_eq!(frame_sizes(&dir).len(), 1);
    assert_eq!(frame_sizes(&dir)[0].len(), 11);
    // Many more: a segment ends only once the frames after its first one
    // reach the bound; each next one opens with a keyframe as large.
    for k in 11..=400 {
        let detail = format!(
            "down {:016x}",
            (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        );
        recorder.take(Fed::Activity(activity(T0 + k, &detail)), T0 + k);
        recorder.tick(T0 + k);
    }
    let sizes = frame_sizes(&dir);
    assert!(sizes.len() > 1, "{}", sizes.len());
    for segment in &sizes[..sizes.len() - 1] {
        let after_first: usize = segment[1..].iter().sum();
        assert!(after_first as u64 >= bound, "{segment:?}");
        assert!(segment[0] > 2 * 3_000, "{segment:?}");
    }
}

#[test]
fn a_first_group_written_over_many_frames_is_the_segments_keyframe_in_size() {
    let bound = 3_000;
    let (_temp, dir, mut recorder) = record(8_192, bound);
    recorder.take(
        Fed::Snapshot(snapshot(0..2_000, &[], (500, 100), &[1], None)),
        T0,
    );
    recorder.tick(T0);
    let group: usize = frame_sizes(&dir)[0].iter().sum();
    assert!(frame_sizes(&dir)[0].len() > 3, "{:?}", frame_sizes(&dir));
    assert!(group as u64 > 2 * bound, "{group}");
    for k in 1..=10 {
        recorder.take(Fed::Activity(activity(T0 + k, "down")), T0 + k);
        recorder.tick(T0 + k);
    }
    // No segment started right after the first group: the frames after
    // it are far under the bound.
    let sizes = frame_sizes(&dir);
    assert_eq!(sizes.len(), 1, "{sizes:?}");
}
