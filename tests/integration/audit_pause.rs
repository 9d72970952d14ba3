//! The reaper pauses while the audit trail cannot be written: acting
//! without a record of it is what the audit trail exists to prevent. It
//! resumes once an owed line is written.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::stores;
use crate::common::{CAPTURE, argv_log, fake_down, runtime};
use stackless_tui::audit::AuditLog;
use stackless_tui::event::{Activity, ActivityKind, Actor};
use stackless_tui::reaper::Reaper;
use stackless_tui::reaper::jobs::{JobRunner, ReaperConfig};
use stackless_tui::recorder::{Forward, Recorder};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

#[test]
fn a_reaper_whose_audit_trail_fails_pauses_until_a_line_is_written() {
    let _rt = runtime();
    let (dir, path) = stores::v5();
    let trail = dir.path().join("stackless-tui");
    std::fs::create_dir_all(&trail).unwrap();
    let audit_path = trail.join("audit.jsonl");
    // A small cap: the next line rotates, and the rotation is refused
    // while a directory sits at `audit.jsonl.1` (as a full disk or a
    // planted name would refuse it).
    let log = AuditLog::open(&audit_path, 200).unwrap();
    let seen = Arc::new(Mutex::new(Vec::<Activity>::new()));
    let recorder = Recorder::new(
        Some(Arc::new(Mutex::new(log))),
        Forward::Collect(Arc::clone(&seen)),
    );
    let health = recorder.health();
    let note =
        |detail: &str| Activity::new(CAPTURE, Actor::Reaper, "", ActivityKind::Skipped, detail);
    health.record(&note("first line"));
    assert_eq!(health.failure(), None);
    std::fs::create_dir(trail.join("audit.jsonl.1")).unwrap();
    std::fs::write(trail.join("audit.jsonl.1/keep"), b"x").unwrap();
    health.record(&note("second line"));
    let why = health.failure().expect("the append failed");
    let jobs = JobRunner::new(
        path.clone(),
        ReaperConfig {
            down: fake_down(dir.path(), "exit 0"),
            tick: Duration::from_secs(60),
            down_timeout: Duration::from_secs(20),
            dry_run: false,
            concurrency: 2,
        },
        recorder,
    )
    .with_test_clock(Arc::new(|| CAPTURE));
    let probe = Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    });
    let mut reaper = Reaper::new(Store::open(&path, Access::ReadWrite).unwrap(), probe, jobs);
    for _ in 0..3 {
        let summary = reaper.pass();
        assert_eq!((summary.reaped, summary.failed), (0, 0));
    }
    assert!(argv_log(dir.path()).is_empty(), "nothing torn down");
    let paused: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::Skipped)
        .map(|a| a.detail.clone())
        .collect();
    assert_eq!(
        paused,
        [format!(
            "reaper paused: the audit trail cannot be written ({why}); nothing is torn down until it can"
        )]
    );
    // The name is free again: the owed lines are written at the next
    // pass, and the reaper resumes (alpha and bravo are expired).
    std::fs::remove_dir_all(trail.join("audit.jsonl.1")).unwrap();
    let summary = reaper.pass();
    assert_eq!(summary.reaped, 2);
    assert_eq!(health.failure(), None);
    let written = std::fs::read_to_string(&audit_path).unwrap()
        + &std::fs::read_to_string(trail.join("audit.jsonl.1")).unwrap_or_default();
    // (200 bytes a file: only the newest lines are left after rotating.)
    assert!(written.contains(r#""outcome":"succeeded""#), "{written}");
}
