//! Stores written by the released CLIs (tests/fixtures/README.md:
//! `real-0.2.0-v5.db` and `real-0.3.0-v5.db` by stackless 0.2.0 and 0.3.0,
//! `real-0.4.0-v14.db` by 0.4.0 and
//! its controller): what the console reads of each, and what its reaper
//! decides on each, with exact values.

use crate::common::fixture;
use stackless_tui::model::generation::Era;
use stackless_tui::model::{Birth, OpStatus, Status};
use stackless_tui::reaper::decision::{Decision, plan};
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};

/// When `real-0.4.0-v14.db` was captured (its README section).
const CAPTURE_V14: i64 = 1_796_118_148;
/// When `real-0.3.0-v5.db` was captured.
const CAPTURE_V5: i64 = 1_796_118_757;
/// When `real-0.2.0-v5.db` was captured.
const CAPTURE_V5_020: i64 = 1_796_119_903;

fn snapshot(name: &str) -> stackless_tui::model::Snapshot {
    let (_dir, path) = fixture(name);
    Store::open(&path, Access::ReadOnly)
        .unwrap()
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap()
}

#[test]
fn a_real_0_4_0_store_is_known_in_full() {
    let snap = snapshot("real-0.4.0-v14.db");
    assert_eq!(snap.generation.user_version, 14);
    assert_eq!(snap.generation.era(), Era::Controller);
    assert_eq!(snap.generation.banner(), None);
    let names: Vec<(&str, &Status)> = snap
        .instances
        .iter()
        .map(|i| (i.name.as_str(), &i.status))
        .collect();
    assert_eq!(names.len(), 8);
    assert_eq!(names[0], ("alpha", &Status::Active));
    assert_eq!(names[2], ("charlie", &Status::Tombstoned));
    let alpha = snap.instance("alpha").unwrap();
    assert_eq!(
        alpha.birth,
        Some(Birth::new(
            "70aa7461da17489bb88e709a64f291aa",
            "sl-70aa7461da17489bb88e709a64f291aa"
        ))
    );
    assert_eq!(alpha.dirty, Some(false));
    assert_eq!(snap.instance("foxtrot").unwrap().dirty, Some(true));
    // bravo's `up` was refused before its lease was written.
    assert_eq!(snap.instance("bravo").unwrap().lease, None);
    assert!(snap.reap_attempts.is_empty(), "0.4.0 never writes them");

    // 18 operations, none pending: all of them are finished and shown.
    assert!(snap.pending_operations().is_empty());
    let finished = snap.finished_operations();
    assert_eq!(finished.len(), 18);
    assert_eq!(
        (finished[0].instance.as_str(), finished[0].verb.as_str()),
        ("golf", "up")
    );
    assert_eq!(finished[0].status, OpStatus::Succeeded);
    let failed_up = finished
        .iter()
        .find(|op| op.instance == "bravo")
        .expect("bravo's up");
    assert_eq!(failed_up.status, OpStatus::Failed);
    let error =
        stackless_tui::model::envelope::parse_error(failed_up.error_json.as_deref().unwrap())
            .unwrap();
    assert_eq!(error.code, "engine.source_override.shared");
    assert_eq!(error.schema_version, Some(2));
    assert!(
        error
            .remediation
            .as_deref()
            .unwrap()
            .contains("stackless down alpha"),
        "{error:?}"
    );
    let reaper_downs = finished
        .iter()
        .filter(|op| op.instance == "foxtrot" && op.verb == "down")
        .count();
    assert_eq!(reaper_downs, 6, "the operator's down and five reaps");
    let cancelled = finished.iter().find(|op| op.instance == "india").unwrap();
    assert_eq!(cancelled.status, OpStatus::Cancelled);
    assert!(cancelled.cancel_requested);
}

/// An operation's run time is told from the time it waited in the queue, by
/// its events' own clocks: alpha's `up` (created at 1796117794) started its
/// first step at ...794962 and ended its last at ...795743
/// (tests/fixtures/real-0.4.0-v14.db), so it ran 0.7 s after under a second
/// queued; `golf`'s likewise.
#[test]
fn real_0_4_0_operations_took_their_run_time_not_their_wait() {
    use stackless_tui::model::operation::Ran;
    let snap = snapshot("real-0.4.0-v14.db");
    let op = |id: &str| {
        snap.rows
            .operations
            .iter()
            .find(|o| o.id == id)
            .unwrap()
            .clone()
    };
    let alpha = op("9b8fd650-07e8-4ff7-8cd7-0a952e02007b");
    assert_eq!(
        alpha.ran,
        Some(Ran {
            started_ms: 1_796_117_794_962,
            last_ms: 1_796_117_795_743
        })
    );
    assert_eq!(alpha.run_ms(CAPTURE_V14), Some(781));
    assert_eq!(alpha.queued_secs(), Some(0));
    assert_eq!(alpha.took_and_queued(CAPTURE_V14), "0.7s");
    // A `down` refused before any step has no event: no run to tell apart.
    let nosuch = op("8ee638b7-bb0f-454d-8e07-f59212221772");
    assert_eq!(
        (nosuch.ran, nosuch.took(CAPTURE_V14)),
        (None, "<1s".to_owned())
    );
}

#[test]
fn on_a_real_0_4_0_store_the_reaper_reaps_the_expired_and_collects_nothing() {
    let snap = snapshot("real-0.4.0-v14.db");
    let now = CAPTURE_V14 + 8 * 86_400;
    let plan = plan(&snap, now, snap.generation.allows_gc());
    // Past a week every lease of the store has run out: alpha (24 h),
    // hotel (6 h), india (3 h), golf and foxtrot (seconds). bravo has no
    // lease row, so it is not on the worklist.
    let names: Vec<&str> = plan.reaps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["alpha", "foxtrot", "golf", "hotel", "india"]);
    assert!(plan.reaps.iter().all(|(_, d)| *d == Decision::Reap));
    assert!(
        plan.gc.is_empty(),
        "v14: the controller collects tombstones"
    );
    assert_eq!(plan.tombstones_due, ["charlie", "delta"]);
}

#[test]
fn real_0_2_0_and_0_3_0_stores_reap_and_collect_as_the_contract_says() {
    // (fixture, its capture time, foxtrot's retry after capture)
    for (name, capture, retry) in [
        ("real-0.3.0-v5.db", CAPTURE_V5, 12),
        ("real-0.2.0-v5.db", CAPTURE_V5_020, 10),
    ] {
        let snap = snapshot(name);
        assert_eq!(snap.generation.user_version, 5, "{name}");
        assert_eq!(snap.generation.era(), Era::Contract, "{name}");
        assert_eq!(snap.generation.banner(), None, "{name}");
        assert!(snap.generation.allows_gc(), "{name}");
        assert!(snap.operations.is_empty(), "{name}");
        let alpha = snap.instance("alpha").unwrap();
        assert_eq!(alpha.dirty, Some(false), "{name}");
        assert_eq!(alpha.birth, None, "{name}: births came with 0.4.0");
        let foxtrot = snap.reap_attempt("foxtrot").unwrap();
        assert_eq!((foxtrot.attempts, foxtrot.last_error.as_str()), (1, "}"));
        assert_eq!(foxtrot.next_retry_at, capture + retry, "{name}");

        // At capture foxtrot backs off, golf is due.
        let at_capture = plan(&snap, capture, true);
        assert_eq!(
            at_capture.reaps,
            vec![
                (
                    "foxtrot".to_owned(),
                    Decision::WaitBackoff {
                        until: capture + retry
                    }
                ),
                ("golf".to_owned(), Decision::Reap),
            ],
            "{name}"
        );
        // A week and a day later both tombstones are collected by the
        // console itself.
        let later = plan(&snap, capture + 8 * 86_400, true);
        let gc: Vec<&str> = later.gc.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(gc, ["charlie", "delta"], "{name}");
        assert!(later.tombstones_due.is_empty(), "{name}");
    }
}

/// A schema-14 store whose controller queue is gone cannot be read as
/// "nothing pending" (the reaper would race the controller): it is refused
/// with the store error, exit 2 for the headless modes, nothing written.
#[test]
fn a_v14_store_without_its_operations_table_is_refused() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE operation_events; DROP TABLE operations;")
        .unwrap();
    let error = Store::open(&path, Access::ReadWrite).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is a SQLite database but not a stackless state store (no `operations` table). Point --state at stackless's state.db (default: $XDG_STATE_HOME/stackless/state.db).",
            path.display()
        )
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .args(["reap", "--once", "--dry-run", "--state"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
