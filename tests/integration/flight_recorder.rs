//! The flight recorder (docs/history.md): `record` on a schema-14 store
//! while it changes, `snapshot --json --at T` equal to the live `snapshot
//! --json` captured at T; the segment files on their own (a torn last
//! line, a torn frame, retention); a `kill -9`; the directory's modes and
//! a planted symlink; a second recorder.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use stackless_tui::history::files::{Dir, Writing};
use stackless_tui::history::record::{Retention, Sink};
use stackless_tui::model::history::{SEGMENT_SECS, Segment};

use crate::common::stores::{self, exec};
use crate::common::{CAPTURE, unix_now};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
}

/// `record --history HIST` on `store`, HOME in `home`.
fn recorder(home: &Path, store: &Path, history: &Path) -> Child {
    bin()
        .arg("--state")
        .arg(store)
        .args(["record", "--history"])
        .arg(history)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn record")
}

fn run(home: &Path, store: &Path, args: &[&str]) -> Output {
    bin()
        .arg("--state")
        .arg(store)
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("run")
}

/// The live `snapshot --json --now NOW`, whole: the countdowns are at
/// `--now`, and the services' processes (`alive`, `origin`: probed when
/// read) are the recorder's read of the same processes, none of which
/// starts or stops in these runs.
fn live(home: &Path, store: &Path) -> Value {
    let out = run(
        home,
        store,
        &["snapshot", "--json", "--now", &NOW.to_string()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// `snapshot --json --at AT --now NOW`: the document, or the exit code
/// and stderr.
fn at(home: &Path, store: &Path, history: &Path, t: i64) -> Result<Value, (i32, String)> {
    let out = run(
        home,
        store,
        &[
            "snapshot",
            "--json",
            "--at",
            &t.to_string(),
            "--now",
            &NOW.to_string(),
            "--history",
            history.to_str().expect("utf-8"),
        ],
    );
    if !out.status.success() {
        return Err((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(serde_json::from_slice(&out.stdout).expect("json"))
}

/// The countdowns' time in every document of the scripted run.
const NOW: i64 = CAPTURE + 30;

/// Wait until the recording at the wall clock's second equals the live
/// document (the recorder has written the change), then until that second
/// is over (the next change is recorded at a later second); that second.
fn captured(home: &Path, store: &Path, history: &Path) -> (i64, Value) {
    let expected = live(home, store);
    let deadline = Instant::now() + Duration::from_secs(30);
    let t = loop {
        let t = unix_now();
        let got = at(home, store, history, t);
        if got.as_ref().ok() == Some(&expected) {
            break t;
        }
        assert!(
            Instant::now() < deadline,
            "never recorded: {expected}\nrecorded: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    while unix_now() <= t {
        std::thread::sleep(Duration::from_millis(20));
    }
    (t, expected)
}

/// The done-when run: a schema-14 store changed under a recorder (a
/// commit and, at once, the store restored in place from a copy, an
/// instance up, a lease
/// renewed, a failing reap's backoff, a tombstone); after the recorder stopped,
/// `snapshot --json --at T` at each instant equals the live `snapshot
/// --json` captured then, services too (nothing in it moves with the
/// clock: the countdowns are at `--now`). A time before
/// the recording is said, exit 1, no document.
#[test]
fn snapshot_at_each_instant_equals_the_live_snapshot_captured_then() {
    let (dir, store) = stores::v14();
    let home = dir.path();
    let history = home.join("history");
    // The copy restored later: the store with alpha's lease renewed.
    let backup = home.join("backup.db");
    exec(&store, "PRAGMA wal_checkpoint(TRUNCATE);");
    std::fs::copy(&store, &backup).expect("copy");
    exec(
        &backup,
        &format!(
            "UPDATE leases SET expires_at = {} WHERE instance = 'alpha';
             PRAGMA wal_checkpoint(TRUNCATE);",
            CAPTURE + 900
        ),
    );
    let started = unix_now();
    let mut child = recorder(home, &store, &history);
    let mut seen = vec![captured(home, &store, &history)];
    // A commit (delta's failing reap, in the log), then the copy restored
    // in place (the same file, the copy's bytes) at once, within one
    // watcher probe of the commit: the watcher sees a file rewritten under
    // it, not the commit's own write. SQLite replays the log's commit onto
    // the copy for every reader alike.
    let bytes = std::fs::read(&backup).expect("read");
    exec(
        &store,
        &format!(
            "INSERT INTO reap_attempts VALUES ('delta', 1, 'reaper.down.failed: exit 1', {})",
            CAPTURE + 60
        ),
    );
    // Written over the file's bytes, not truncated first (a reader never
    // finds it empty, so the log is kept beside it, not set aside).
    std::io::Write::write_all(
        &mut std::fs::OpenOptions::new()
            .write(true)
            .open(&store)
            .expect("open"),
        &bytes,
    )
    .expect("restore");
    seen.push(captured(home, &store, &history));
    exec(
        &store,
        &format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at,
               dirty, instance_id, resource_namespace)
             VALUES ('foxtrot', 'local', 'active', '[stack]', {c}, NULL, 0,
               'f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6', 'sl-f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6');
             INSERT INTO leases VALUES ('foxtrot', 600, {e});",
            c = CAPTURE,
            e = CAPTURE + 600
        ),
    );
    seen.push(captured(home, &store, &history));
    exec(
        &store,
        &format!(
            "UPDATE leases SET expires_at = {} WHERE instance = 'delta'",
            CAPTURE + 7200
        ),
    );
    seen.push(captured(home, &store, &history));
    // alpha renewed while its web service is observed unready: its
    // services change with its row.
    exec(
        &store,
        &format!(
            "UPDATE observations SET evidence_json = '{{\"existence\":\"present\",\"configuration\":\"applied\",\"readiness\":\"unready\",\"observed_at\":1795960700000,\"error_code\":null,\"drift\":[]}}'
               WHERE node = 'service:web'
                 AND owner_id = (SELECT instance_id FROM instances WHERE name = 'alpha');
             UPDATE leases SET expires_at = {} WHERE instance = 'alpha';",
            CAPTURE + 1800
        ),
    );
    seen.push(captured(home, &store, &history));
    exec(
        &store,
        &format!(
            "INSERT INTO reap_attempts VALUES ('bravo', 2, 'reaper.down.failed: exit 1', {})",
            CAPTURE + 120
        ),
    );
    seen.push(captured(home, &store, &history));
    exec(
        &store,
        &format!(
            "UPDATE instances SET status = 'tombstoned', tombstoned_at = {CAPTURE} WHERE name = 'foxtrot';
             DELETE FROM leases WHERE instance = 'foxtrot';
             PRAGMA wal_checkpoint(TRUNCATE);"
        ),
    );
    seen.push(captured(home, &store, &history));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    let names = |v: &Value| -> Vec<String> {
        v["instances"]
            .as_array()
            .expect("instances")
            .iter()
            .map(|i| i["name"].as_str().expect("name").to_owned())
            .collect()
    };
    let alpha = |v: &Value| v["instances"][0]["lease"]["expires_at"].clone();
    assert_eq!(alpha(&seen[0].1), Value::from(CAPTURE - 100));
    assert_eq!(alpha(&seen[1].1), Value::from(CAPTURE + 900));
    assert!(!names(&seen[1].1).contains(&"foxtrot".to_owned()));
    assert_eq!(
        seen[1].1["instances"][3]["reap_attempt"]["attempts"],
        Value::from(1),
        "{}",
        seen[1].1["instances"][3]
    );
    assert!(names(&seen[2].1).contains(&"foxtrot".to_owned()));
    assert_eq!(seen[6].1["instances"][5]["status"], "tombstoned");
    // alpha's web service as recorded: its stage before and after it was
    // observed unready.
    let web = |v: &Value| v["instances"][0]["services"][0].clone();
    assert_eq!(web(&seen[0].1)["name"], "web");
    assert_eq!(
        web(&seen[0].1)["log_path"]
            .as_str()
            .map(|p| p.ends_with("/web.log")),
        Some(true)
    );
    assert_eq!(web(&seen[3].1)["stage"], "started");
    assert_eq!(web(&seen[4].1)["stage"], "unhealthy");
    for (i, (t, expected)) in seen.iter().enumerate() {
        assert_eq!(
            at(home, &store, &history, *t).as_ref(),
            Ok(expected),
            "instant {i} at {t}"
        );
    }
    let (code, said) = at(home, &store, &history, started - 100).expect_err("before");
    assert_eq!(code, 1);
    assert!(
        said.contains("is before the recording, which starts at"),
        "{said}"
    );
    let listed = run(
        home,
        &store,
        &["history", "--history", history.to_str().expect("utf-8")],
    );
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains(
            "in 1 segment\nretention: keeps 7d and at most 256.0 MB (the oldest segment dropped \
             first)\ngaps: none\n"
        ),
        "{text}"
    );
    // Every line after the header is a protocol message.
    let dir = Dir::existing(&history).expect("dir");
    let segments = dir.segments().expect("segments");
    let all = lines(&dir, &segments[0].file);
    assert!(
        all[0].starts_with(r#"{"type":"history","format":1,"#),
        "{}",
        all[0]
    );
    for line in &all[1..] {
        crate::common::protocol::validate(line).unwrap_or_else(|why| panic!("{why}: {line}"));
    }
    assert!(all.iter().any(|l| l.contains(r#""type":"rows""#)));
    assert!(all.iter().any(|l| l.contains(r#""type":"services""#)));
    // Other processes' changes are recorded as the Activity lines the
    // console shows for them.
    let kinds: Vec<String> = all
        .iter()
        .filter(|l| l.contains(r#""type":"activity""#) && l.contains(r#""instance":"foxtrot""#))
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("json");
            format!(
                "{} {}",
                v["actor"].as_str().expect("actor"),
                v["kind"].as_str().expect("kind")
            )
        })
        .collect();
    assert_eq!(kinds, vec!["observed appeared", "observed tombstoned"]);
    // The restore in place is recorded as a reset with its reason (the
    // second group, or the third when the commit was read before it).
    let resets: Vec<Value> = all
        .iter()
        .filter(|l| l.contains(r#""type":"reset""#))
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(resets.len(), 2, "{resets:?}");
    assert_eq!(resets[0]["seq"], 1);
    assert_eq!(resets[0].get("reason"), None);
    assert_eq!(
        resets[1]["reason"],
        "the store file was rewritten in place (restored from a copy, or truncated)"
    );
}

/// A second `record` on the same directory says who holds it and exits
/// 1; the directory is 0700 and its files 0600; a `kill -9` of the first
/// leaves every line it had written a second before, readable, and the
/// next recorder starts a segment of its own beside it.
#[test]
fn one_recorder_per_store_private_files_and_a_kill_loses_at_most_the_last_second() {
    let (dir, store) = stores::v14();
    let home = dir.path();
    let history = home.join("history");
    let mut first = recorder(home, &store, &history);
    let (t, expected) = captured(home, &store, &history);
    let second = bin()
        .arg("--state")
        .arg(&store)
        .args(["record", "--history"])
        .arg(&history)
        .env("HOME", home)
        .output()
        .expect("second");
    assert_eq!(second.status.code(), Some(1));
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        said.contains(&format!("(pid {}): one recorder per store", first.id())),
        "{said}"
    );
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&history), 0o700);
    for entry in std::fs::read_dir(&history).expect("dir") {
        let path = entry.expect("entry").path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    first.kill().expect("kill -9");
    first.wait().expect("wait");
    assert_eq!(at(home, &store, &history, t), Ok(expected.clone()));
    let mut again = recorder(home, &store, &history);
    let (t2, _) = captured(home, &store, &history);
    let dir = Dir::existing(&history).expect("dir");
    let deadline = Instant::now() + Duration::from_secs(20);
    while dir.segments().expect("segments").len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the second recorder wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    again.kill().expect("kill -9");
    again.wait().expect("wait");
    assert_eq!(at(home, &store, &history, t), Ok(expected));
    let segments = dir.segments().expect("segments");
    assert_eq!(segments.len(), 2, "{segments:?}");
    assert!(
        segments[1].first <= t2 && t2 <= segments[1].last + 1,
        "{segments:?}"
    );
}

/// A history directory planted as a symbolic link is refused, never
/// followed: nothing is written where it points.
#[test]
fn a_history_dir_planted_as_a_symlink_is_refused() {
    let (dir, store) = stores::v14();
    let home = dir.path();
    let elsewhere = home.join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let history = home.join("history");
    std::os::unix::fs::symlink(&elsewhere, &history).expect("symlink");
    let out = run(
        home,
        &store,
        &["record", "--history", history.to_str().expect("utf-8")],
    );
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("symbolic link"), "{said}");
    assert_eq!(std::fs::read_dir(&elsewhere).expect("dir").count(), 0);
}

fn lines(dir: &Dir, file: &str) -> Vec<String> {
    let mut out = Vec::new();
    dir.read_segment(file, &mut |line| {
        out.push(String::from_utf8_lossy(line).into_owned());
        true
    })
    .expect("read");
    out
}

/// A last line without its newline is skipped; a frame torn by a `kill
/// -9` mid-write ends the read, and every frame before it is read whole.
#[test]
fn a_torn_last_line_and_a_torn_frame_are_skipped_on_read() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = Dir::create(&temp.path().join("history")).expect("dir");
    let mut segment = Writing::start(&dir, "seg-0000000100-000001.ndjson.zst".into()).expect("seg");
    segment
        .frame(|frame| frame.bytes(b"{\"t\":100,\"a\":1}\n{\"t\":100,\"b\":2}\n{\"t\":100,\"c\""))
        .expect("frame");
    assert_eq!(
        lines(&dir, &segment.name),
        vec![r#"{"t":100,"a":1}"#, r#"{"t":100,"b":2}"#]
    );
    let whole = segment.bytes;
    segment
        .frame(|frame| frame.line("{\"t\":101,\"d\":4}"))
        .expect("frame");
    let path = dir.path().join(&segment.name);
    let bytes = std::fs::read(&path).expect("read");
    let cut = usize::try_from(whole).expect("size")
        + (bytes.len() - usize::try_from(whole).expect("size")) / 2;
    std::fs::write(&path, &bytes[..cut]).expect("tear");
    assert_eq!(
        lines(&dir, &segment.name),
        vec![r#"{"t":100,"a":1}"#, r#"{"t":100,"b":2}"#]
    );
}

const RESET: &[u8] =
    b"{\"type\":\"reset\",\"seq\":1}\n{\"type\":\"synced\",\"seq\":1,\"at\":1,\"counts\":{}}\n";

/// Segments a quarter of an hour apart, kept 40 minutes: the oldest go
/// first, the newest stays; each new segment opens with the header and a
/// keyframe (a `reset` group); the index names what is on disk.
#[test]
fn retention_drops_the_oldest_segments_first_and_each_segment_opens_with_a_keyframe() {
    let temp = tempfile::tempdir().expect("tempdir");
    let path = temp.path().join("history");
    let dir = Dir::create(&path).expect("dir");
    let retention = Retention {
        retain_secs: 40 * 60,
        max_bytes: 1 << 30,
    };
    let mut sink = Sink::new(dir.clone(), "/s/state.db".into(), None, retention).expect("sink");
    let start = 1_000_000;
    sink.take(RESET, start);
    sink.tick(start);
    for i in 1..=4 {
        let t = start + i * SEGMENT_SECS;
        sink.take(
            format!("{{\"type\":\"heartbeat\",\"at\":{t},\"seq\":1}}\n").as_bytes(),
            t,
        );
        sink.tick(t);
    }
    let segments: Vec<Segment> = dir.segments().expect("segments");
    let firsts: Vec<i64> = segments.iter().map(|s| s.first).collect();
    // Five segments written (one per quarter hour); those whose last line
    // is older than 40 minutes before the newest line are gone.
    assert_eq!(
        firsts,
        vec![
            start + 2 * SEGMENT_SECS,
            start + 3 * SEGMENT_SECS,
            start + 4 * SEGMENT_SECS
        ]
    );
    let opened = lines(&dir, &segments[2].file);
    let t = start + 4 * SEGMENT_SECS;
    assert_eq!(
        opened[0],
        format!(
            r#"{{"type":"history","format":1,"store":"/s/state.db","started":{t},"retain_secs":2400,"max_bytes":1073741824}}"#
        )
    );
    assert_eq!(opened[1], format!(r#"{{"t":{t},"type":"reset","seq":1}}"#));
    assert!(
        opened[2].starts_with(&format!(r#"{{"t":{t},"type":"synced","seq":1"#)),
        "{opened:?}"
    );
    assert_eq!(
        opened.last().expect("line"),
        &format!(r#"{{"t":{t},"type":"heartbeat","at":{t},"seq":1}}"#)
    );
}

/// One whole group: alpha's row with its lease expiring at `expires_at`.
fn alpha_group(seq: u64, at: i64, expires_at: i64) -> Vec<u8> {
    let reset = if seq == 1 {
        "{\"type\":\"reset\",\"seq\":1}\n".to_owned()
    } else {
        String::new()
    };
    format!(
        "{reset}{{\"type\":\"rows\",\"seq\":{seq},\"table\":\"instances\",\"upsert\":[{{\"name\":\"alpha\",\"birth\":null,\"dns_safe\":true,\"substrate\":\"local\",\"status\":\"active\",\"created_at\":1,\"tombstoned_at\":null,\"lease\":{{\"duration_secs\":60,\"expires_at\":{expires_at}}},\"lock\":null,\"dirty\":null,\"failed_up\":false,\"services_dead\":0,\"gc\":null}}],\"remove\":[]}}\n{{\"type\":\"synced\",\"seq\":{seq},\"at\":{at},\"counts\":{{}}}}\n"
    )
    .into_bytes()
}

fn alpha_expiry(dir: &Dir, t: i64) -> Result<i64, String> {
    stackless_tui::history::replay_at(dir, t).map(|replay| {
        replay.instances[&("alpha".to_owned(), None)]
            .lease
            .expect("lease")
            .expires_at
    })
}

/// A full disk (every write ENOSPC, half a frame landed each time) pauses
/// the recording: what was written stays whole, the paused time reads as
/// a gap, no empty segment is left; the first write that succeeds opens a
/// segment with a `recording` banner and a keyframe holding the change
/// made while paused.
#[test]
fn a_full_disk_pauses_the_recording_and_it_resumes_with_a_banner_and_a_keyframe() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = Dir::create(&temp.path().join("history")).expect("dir");
    let retention = Retention {
        retain_secs: 86_400,
        max_bytes: 1 << 30,
    };
    let mut sink = Sink::new(dir.clone(), "/s/state.db".into(), None, retention).expect("sink");
    let t0 = 1_000_000;
    sink.take(&alpha_group(1, t0, 100), t0);
    sink.tick(t0);
    dir.fill(true);
    sink.take(&alpha_group(2, t0 + 5, 200), t0 + 5);
    sink.tick(t0 + 5);
    sink.take(b"{\"type\":\"heartbeat\",\"at\":1,\"seq\":2}\n", t0 + 30);
    sink.tick(t0 + 30);
    dir.fill(false);
    sink.take(b"{\"type\":\"heartbeat\",\"at\":2,\"seq\":2}\n", t0 + 40);
    sink.tick(t0 + 40);
    assert_eq!(alpha_expiry(&dir, t0), Ok(100));
    let gap = alpha_expiry(&dir, t0 + 25).expect_err("a gap");
    assert!(
        gap.contains("is in a gap of the recording: nothing recorded from"),
        "{gap}"
    );
    assert_eq!(alpha_expiry(&dir, t0 + 40), Ok(200));
    let segments = dir.segments().expect("segments");
    assert_eq!(segments.len(), 2, "{segments:?}");
    assert_eq!((segments[0].first, segments[0].last), (t0, t0));
    assert_eq!((segments[1].first, segments[1].last), (t0 + 40, t0 + 40));
    let resumed = lines(&dir, &segments[1].file);
    assert_eq!(
        resumed[1],
        format!(
            r#"{{"t":{},"type":"banner","id":"recording","level":"warning","text":"recording paused 35s (No space left on device (os error 28)); resumed: nothing recorded in between"}}"#,
            t0 + 40
        )
    );
    assert_eq!(
        resumed[2],
        format!(r#"{{"t":{},"type":"reset","seq":2}}"#, t0 + 40)
    );
}

/// A pause shorter than a heartbeat is still a gap: the segment after it
/// opens with the resume banner, and the time before it reads as not
/// recorded (docs/history.md, "Gaps").
#[test]
fn a_short_pause_reads_back_as_a_gap() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = Dir::create(&temp.path().join("history")).expect("dir");
    let retention = Retention {
        retain_secs: 86_400,
        max_bytes: 1 << 30,
    };
    let mut sink = Sink::new(dir.clone(), "/s/state.db".into(), None, retention).expect("sink");
    let t0 = 1_000_000;
    sink.take(&alpha_group(1, t0, 100), t0);
    sink.tick(t0);
    dir.fill(true);
    sink.take(&alpha_group(2, t0 + 2, 200), t0 + 2);
    sink.tick(t0 + 2);
    dir.fill(false);
    sink.take(b"{\"type\":\"heartbeat\",\"at\":2,\"seq\":2}\n", t0 + 4);
    sink.tick(t0 + 4);
    assert_eq!(alpha_expiry(&dir, t0), Ok(100));
    let gap = alpha_expiry(&dir, t0 + 3).expect_err("a gap");
    assert!(
        gap.contains("is in a gap of the recording: nothing recorded from"),
        "{gap}"
    );
    assert_eq!(alpha_expiry(&dir, t0 + 4), Ok(200));
}

/// A symbolic link planted at a segment's name is skipped by the reader
/// and listed as skipped, and one planted at the next segment's name is
/// refused by the writer naming the path and saying it is a link.
#[test]
fn a_planted_segment_link_is_said_and_refused_by_name() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = Dir::create(&temp.path().join("history")).expect("dir");
    let target = temp.path().join("elsewhere");
    std::fs::write(&target, b"").expect("target");
    let planted = "seg-0001000000-000000.ndjson.zst";
    std::os::unix::fs::symlink(&target, dir.path().join(planted)).expect("symlink");
    assert_eq!(dir.segments().expect("segments"), Vec::<Segment>::new());
    assert_eq!(
        dir.skipped().expect("skipped"),
        vec![(planted.to_owned(), "a symbolic link")]
    );
    let error = Writing::start(&dir, planted.to_owned()).expect_err("refused");
    assert_eq!(
        error.to_string(),
        format!(
            "{} is a symbolic link: refused, not followed",
            dir.path().join(planted).display()
        )
    );
    assert_eq!(std::fs::read(&target).expect("target"), Vec::<u8>::new());
}

/// `record --metrics-file F` writes the console's metrics document to F
/// with the `down` operations that finished while it recorded (the one
/// already finished in the first snapshot not counted), written again
/// when that count changes; promtool accepts it.
#[test]
fn record_writes_the_metrics_file_with_the_teardowns_it_recorded() {
    let (dir, store) = stores::v14();
    let home = dir.path();
    let history = home.join("history");
    let file = home.join("stackless.prom");
    let mut child = bin()
        .arg("--state")
        .arg(&store)
        .args(["record", "--history"])
        .arg(&history)
        .arg("--metrics-file")
        .arg(&file)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn record");
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let wait_for = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !read().contains(want) {
            assert!(
                Instant::now() < deadline,
                "never written: {want}\n{}",
                read()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("stackless_recorded_teardowns_total{outcome=\"succeeded\"} 0\n");
    // Written once the first snapshot is recorded: the document of the
    // store, then the recorded counts, then `# EOF`.
    captured(home, &store, &history);
    exec(
        &store,
        "UPDATE operations SET status = 'succeeded' WHERE id = 'op-alpha-down'",
    );
    wait_for("stackless_recorded_teardowns_total{outcome=\"succeeded\"} 1\n");
    let text = read();
    assert!(
        text.ends_with(
            "stackless_recorded_teardowns_total{outcome=\"succeeded\"} 1\n\
             stackless_recorded_teardowns_total{outcome=\"failed\"} 0\n# EOF\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("# EOF").count(), 1);
    assert!(text.contains("stackless_instances{"), "{text}");
    crate::metrics::check_metrics(&text);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    assert!(child.wait().expect("wait").success());
}
