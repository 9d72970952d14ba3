//! The follower under bursts shaped like stackless 0.4.0's rotation
//! (`stackless-local` `logging.rs`: rotate at exactly 1 MiB, mid-line;
//! `.log.1` renamed to `.log.2`, `.log` to `.log.1`, a new `.log`): every
//! line arrives once, in order, whole (the line cut at a rotation joined
//! with its own continuation only), or a gap note says lines are missing.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use stackless_tui::event::Event;
use stackless_tui::logs::{self, follower};
use stackless_tui::model::logview::{FollowNote, LogUpdate, LogsRequest};

/// stackless 0.4.0's rotation size.
const GEN: u64 = 1 << 20;

/// A writer rotating exactly like stackless 0.4.0 (and /tmp/breaklogs's
/// writer.py).
struct Rotating {
    path: PathBuf,
    file: File,
    size: u64,
}

impl Rotating {
    fn new(path: &Path) -> Self {
        let file = File::options()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        let size = file.metadata().unwrap().len();
        Self {
            path: path.to_owned(),
            file,
            size,
        }
    }

    fn generation(&self, index: u32) -> PathBuf {
        logs::generation(&self.path, index)
    }

    fn write(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.size == GEN {
                for index in [1, 0] {
                    let _ = std::fs::rename(self.generation(index), self.generation(index + 1));
                }
                self.file = File::create(&self.path).unwrap();
                self.size = 0;
            }
            let n = usize::try_from((GEN - self.size).min(bytes.len() as u64)).unwrap();
            self.file.write_all(&bytes[..n]).unwrap();
            self.size += n as u64;
            bytes = &bytes[n..];
        }
    }
}

/// Where a gap note came, among the lines.
const GAP: &str = "<gap>";

fn line(n: usize, pad: usize) -> String {
    format!("seq {n:08} {}", "x".repeat(pad))
}

/// What the follower sent: the lines' texts and the notes.
fn collect(
    rx: &mut stackless_tui::event::EventReceiver,
    want_last: &str,
    lines: &mut Vec<String>,
    notes: &mut Vec<FollowNote>,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines.last().map(String::as_str) != Some(want_last) {
        assert!(
            Instant::now() < deadline,
            "timed out after {} lines",
            lines.len()
        );
        match rx.try_recv() {
            Ok(Event::Logs(LogUpdate::Lines { lines: got, .. })) => {
                lines.extend(got.into_iter().map(|l| l.text));
            }
            Ok(Event::Logs(LogUpdate::Note { note, .. })) => {
                if note == FollowNote::Gap {
                    lines.push(GAP.to_owned());
                }
                notes.push(note);
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Open `alpha`'s logs with one line written and follow them.
fn start(
    notify: bool,
) -> (
    tempfile::TempDir,
    Rotating,
    follower::Handle,
    stackless_tui::event::EventReceiver,
) {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let mut writer = Rotating::new(&dir.join("web.log"));
    writer.write(format!("{}\n", line(0, 10)).as_bytes());
    let request = LogsRequest {
        instance: "alpha".into(),
        dir: "alpha".into(),
        substrate: "local".into(),
    };
    let (_, follows) = logs::open(state.path(), &request);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = follower::spawn(1, dir, vec!["web".into()], follows, tx, notify).unwrap();
    (state, writer, handle, rx)
}

/// 2.2 MiB written at once (two rotations before the polling follower
/// looks): `web.log.1`, still on disk, is read whole between the old file
/// and the new one, and the lines cut at each 1 MiB boundary are whole.
#[test]
fn a_burst_of_two_rotations_loses_nothing_on_disk() {
    let (_state, mut writer, handle, mut rx) = start(false);
    let pad = 60;
    let count = 2_300_000 / (pad + 14);
    let text: String = (1..=count).map(|n| format!("{}\n", line(n, pad))).collect();
    writer.write(text.as_bytes());
    assert!(writer.generation(2).exists(), "two rotations");
    let (mut lines, mut notes) = (Vec::new(), Vec::new());
    collect(&mut rx, &line(count, pad), &mut lines, &mut notes);
    drop(handle);
    assert_eq!(lines.len(), count);
    let want: Vec<String> = (1..=count).map(|n| line(n, pad)).collect();
    assert!(
        lines == want,
        "first wrong: {:?}",
        lines.iter().zip(&want).find(|(a, b)| a != b)
    );
    assert_eq!(notes, [FollowNote::Rotated, FollowNote::Rotated]);
}

/// 50 rotations in about a second (52,000 lines of 1 KiB), followed with
/// notifications: every line once, in order, whole; any line missing is
/// after a gap note (never silently).
#[test]
fn fifty_rotations_a_second_every_line_or_a_gap_note() {
    let (state, mut writer, handle, mut rx) = start(true);
    let pad = 1000;
    let count = 52_000;
    let started = Instant::now();
    for chunk in (1..=count).collect::<Vec<_>>().chunks(52) {
        let text: String = chunk
            .iter()
            .map(|&n| format!("{}\n", line(n, pad)))
            .collect();
        writer.write(text.as_bytes());
        // About 52 KB a millisecond: 50 rotations in about a second.
        let due = started + Duration::from_millis(chunk[0] as u64 / 52);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let (mut lines, mut notes) = (Vec::new(), Vec::new());
    collect(&mut rx, &line(count, pad), &mut lines, &mut notes);
    drop(handle);
    // Every line whole, once, in order; lines missing only where a gap
    // note is, around it at most the two pieces of the line cut there.
    let mut last = 0;
    let (mut missing, mut gaps) = (0, 0);
    let mut after_gap = false;
    for (index, text) in lines.iter().enumerate() {
        if text == GAP {
            gaps += 1;
            after_gap = true;
            continue;
        }
        let whole = text.get(4..12).and_then(|n| n.parse::<usize>().ok());
        let next_is_gap = lines.get(index + 1).is_some_and(|l| l == GAP);
        match whole {
            Some(n) if *text == line(n, pad) || next_is_gap => {
                assert!(n > last, "{n} after {last}: doubled or out of order");
                if !after_gap {
                    assert_eq!(
                        n,
                        last + 1,
                        "lines {}..{n} lost silently: {notes:?}",
                        last + 1
                    );
                }
                missing += n - last - 1;
                last = n;
            }
            _ => {
                // The rest of a line whose start rotated away unseen.
                assert!(after_gap, "a line glued or cut: {text:.40}");
                continue;
            }
        }
        after_gap = false;
    }
    eprintln!("{missing} lines missing at {gaps} gap notes");
    assert_eq!(last, count);
    let rotated = notes.iter().filter(|n| **n == FollowNote::Rotated).count();
    if gaps == 0 {
        let rotations = count * (pad + 14) / (GEN as usize);
        assert_eq!((missing, rotated), (0, rotations), "{notes:?}");
    }
    drop(state);
}
