//! Who reaps is asked again before each teardown the reaper starts, not
//! once a pass: a `down` that started the 0.4.0 controller (whose lease
//! reaper then reaps) is the last one this reaper starts; the rest of its
//! queue is left to the controller, said once.

use crate::common::{argv_log, fake_controller, fake_down, reaper_with, runtime};
use stackless_tui::controller::probe::ControllerProbe;
use stackless_tui::demo::{LiveHolder, v14};
use stackless_tui::event::ActivityKind;
use stackless_tui::model::controller::{ReaperChoice, hand_over};
use stackless_tui::store::probe::FixedProbe;

const NOW: i64 = 1_795_960_686;

/// The 0.4.0 demo store at `NOW`, read 60 s later: `billing-sandbox` and
/// `flaky-gpu-worker` are due; `payments-staging` is locked by a live
/// process (4242) and skipped.
fn store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let holder = LiveHolder {
        pid: 4242,
        start_time: 1_795_950_000,
        host: "vm".into(),
    };
    v14::seed(&path, NOW, &holder).unwrap();
    (dir, path)
}

fn probe() -> Box<FixedProbe> {
    Box::new(FixedProbe {
        host: Some("vm".into()),
        processes: vec![(4242, 1_795_950_000)],
    })
}

#[test]
fn a_controller_started_by_the_first_down_reaps_the_rest_of_the_pass() {
    let rt = runtime();
    let (dir, path) = store();
    let down = fake_down(dir.path(), "exit 0");
    let (reaper, log) = reaper_with(
        &path,
        down,
        probe(),
        std::sync::Arc::new(|| NOW + 60),
        &rt,
        |config| config.concurrency = 1,
    );
    // The controller appears once the first teardown ran, as 0.4.0's
    // `down` starts it when none runs.
    let state_dir = dir.path().to_owned();
    let mut controller_probe = ControllerProbe::default();
    let mut asked = 0;
    let mut controller = None;
    let mut reaper = reaper.with_who_reaps(Box::new(move || {
        asked += 1;
        if asked == 2 {
            controller.get_or_insert_with(|| fake_controller(&state_dir, true));
        }
        hand_over(ReaperChoice::Auto, &controller_probe.probe(&state_dir))
    }));
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (1, 0));
    assert_eq!(argv_log(dir.path()), ["[down][billing-sandbox][--json]"]);
    let pid = std::process::id();
    let roles: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::Role)
        .map(|a| a.detail.clone())
        .collect();
    assert_eq!(
        roles,
        [format!(
            "the controller (pid {pid}) reaps now: 1 queued teardown left to its lease reaper (flaky-gpu-worker)"
        )]
    );
}

/// With no controller, every due instance is torn down, each after asking.
#[test]
fn with_no_controller_the_pass_tears_down_every_due_instance() {
    let rt = runtime();
    let (dir, path) = store();
    let down = fake_down(dir.path(), "exit 0");
    let (reaper, log) = reaper_with(
        &path,
        down,
        probe(),
        std::sync::Arc::new(|| NOW + 60),
        &rt,
        |config| config.concurrency = 1,
    );
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&asked);
    let mut reaper = reaper.with_who_reaps(Box::new(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        stackless_tui::model::controller::HandOver::Reap
    }));
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (2, 0));
    assert_eq!(
        argv_log(dir.path()),
        [
            "[down][billing-sandbox][--json]",
            "[down][flaky-gpu-worker][--json]"
        ]
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .all(|a| a.kind != ActivityKind::Role)
    );
}

/// With no controller, two slots and `--reaper auto`: the first `down`
/// runs alone (0.4.0's `down` starts the controller, whose lease reaper
/// downs every expired instance); once it finished, the controller it
/// started reaps the rest: one `down` each, never two side by side.
#[test]
fn with_two_slots_the_first_down_runs_alone_and_the_controller_it_started_reaps_the_rest() {
    let rt = runtime();
    let (dir, path) = store();
    let down = fake_down(dir.path(), "exit 0");
    let (reaper, log) = reaper_with(
        &path,
        down,
        probe(),
        std::sync::Arc::new(|| NOW + 60),
        &rt,
        |config| config.concurrency = 2,
    );
    // The controller runs once a `down` has run.
    let state_dir = dir.path().to_owned();
    let mut controller_probe = ControllerProbe::default();
    let mut controller = None;
    let mut reaper = reaper.with_who_reaps(Box::new(move || {
        if !argv_log(&state_dir).is_empty() {
            controller.get_or_insert_with(|| fake_controller(&state_dir, true));
        }
        hand_over(ReaperChoice::Auto, &controller_probe.probe(&state_dir))
    }));
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (1, 0));
    assert_eq!(argv_log(dir.path()), ["[down][billing-sandbox][--json]"]);
    let pid = std::process::id();
    let roles: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.kind == ActivityKind::Role)
        .map(|a| a.detail.clone())
        .collect();
    assert_eq!(
        roles,
        [format!(
            "the controller (pid {pid}) reaps now: 1 queued teardown left to its lease reaper (flaky-gpu-worker)"
        )]
    );
}

/// With no controller and a `down` that starts none (a `--down-cmd` of
/// the operator's): the first runs alone, then the rest side by side.
#[test]
fn with_two_slots_and_no_controller_coming_the_rest_go_side_by_side_after_the_first() {
    let rt = runtime();
    let (dir, path) = store();
    let down = fake_down(dir.path(), "exit 0");
    let (reaper, _log) = reaper_with(
        &path,
        down,
        probe(),
        std::sync::Arc::new(|| NOW + 60),
        &rt,
        |config| config.concurrency = 2,
    );
    let state_dir = dir.path().to_owned();
    let mut controller_probe = ControllerProbe::default();
    let mut reaper = reaper.with_who_reaps(Box::new(move || {
        hand_over(ReaperChoice::Auto, &controller_probe.probe(&state_dir))
    }));
    let summary = reaper.pass();
    assert_eq!((summary.reaped, summary.failed), (2, 0));
    assert_eq!(
        argv_log(dir.path()),
        [
            "[down][billing-sandbox][--json]",
            "[down][flaky-gpu-worker][--json]"
        ]
    );
}
