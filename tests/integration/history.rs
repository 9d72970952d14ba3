//! An operation's finish is observed however many newer operations were
//! created while it ran (the finished list is the newest by rowid,
//! `LIMIT 50`), on a schema-14 store built from the 0.4.0 migrations.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::stores;
use stackless_tui::event::{ActivityKind, Actor, Event};
use stackless_tui::model::OpStatus;
use stackless_tui::store::probe::FixedProbe;
use stackless_tui::store::{Access, Store};
use stackless_tui::ui::{App, AppConfig};

fn vm() -> FixedProbe {
    FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    }
}

/// 60 operations created after alpha's running `down`, all finished; then
/// the `down` fails. The next snapshot of the same connection lists it
/// (beside the 50 newest, where its finish puts it), and the console reports `controller alpha
/// failed`.
#[test]
fn the_oldest_pending_operation_finishing_behind_sixty_newer_is_reported() {
    let (_dir, path) = stores::v14();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let first = store.snapshot(&mut vm()).unwrap();
    assert_eq!(
        first.pending_operation("alpha").map(|op| op.id.as_str()),
        Some("op-alpha-down")
    );
    let mut app = App::new(
        AppConfig {
            store_label: path.display().to_string(),
            reaper: stackless_tui::ui::ReaperMode::Off("--no-reaper".into()),
            helper: stackless_tui::ui::HelperMode::None,
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        CAPTURE,
    );
    app.handle(Event::Snapshot(Arc::new(first)), CAPTURE);
    let mut sql = String::from("BEGIN;");
    for n in 0..60 {
        sql.push_str(&format!(
            "INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
             VALUES ('newer-{n:02}', 'echo', 'verify', 'succeeded', 'null', {t}, {t});",
            t = CAPTURE - 40 + n
        ));
    }
    sql.push_str(&format!(
        "UPDATE operations SET status = 'failed', updated_at = {} WHERE id = 'op-alpha-down';
         COMMIT;",
        CAPTURE - 5
    ));
    stores::exec(&path, &sql);
    let second = store.snapshot(&mut vm()).unwrap();
    assert_eq!(second.pending_operation("alpha"), None);
    let finished: Vec<&str> = second
        .finished_operations()
        .iter()
        .map(|op| op.id.as_str())
        .collect();
    assert_eq!(finished.len(), 51, "{finished:?}");
    // In the order they finished (`updated_at`, newest first): the `down`
    // finished at CAPTURE - 5, as newer-35 did (a tie keeps rowid order).
    assert_eq!(finished[0], "newer-59");
    assert_eq!(finished[24], "newer-35");
    assert_eq!(finished[25], "op-alpha-down");
    assert_eq!(finished[26], "newer-34");
    assert_eq!(finished[50], "newer-10");
    assert_eq!(second.finished_operations()[25].status, OpStatus::Failed);
    app.handle(Event::Snapshot(Arc::new(second)), CAPTURE);
    // What changed is logged after the frame, as the render loop does.
    drop(app.settle());
    let reported: Vec<String> = app
        .activity()
        .entries()
        .iter()
        .map(|e| &e.entry)
        .filter(|a| a.actor == Actor::Controller && a.instance == "alpha")
        .map(|a| format!("{} {}", a.kind, a.detail))
        .collect();
    // Submitted at CAPTURE - 50, its first event recorded at CAPTURE - 46,
    // failed at CAPTURE - 5: 41 s run after 4 s queued, the run told apart
    // from the wait; alpha's lease had run out when it was submitted, so
    // it is the lease reaper's.
    assert_eq!(
        reported,
        ["failed down by its lease reaper: in 41s, after 4s queued"]
    );
    assert!(
        app.activity()
            .entries()
            .iter()
            .any(|e| e.entry.kind == ActivityKind::Failed)
    );
    // The read after: it was finished then, so it is neither listed again
    // nor reported twice.
    let third = store.snapshot(&mut vm()).unwrap();
    assert_eq!(third.finished_operations().len(), 50);
    app.handle(Event::Snapshot(Arc::new(third)), CAPTURE);
    let failed = app
        .activity()
        .entries()
        .iter()
        .filter(|e| e.entry.actor == Actor::Controller && e.entry.instance == "alpha")
        .count();
    assert_eq!(failed, 1);
}

/// The re-read by id is a primary-key seek (`EXPLAIN QUERY PLAN` on the
/// 0.4.0 schema): `SEARCH operations USING INDEX
/// sqlite_autoindex_operations_1 (id=?)`.
#[test]
fn the_re_read_by_id_is_a_primary_key_seek() {
    let (_dir, path) = stores::v14();
    let store = Store::open(&path, Access::ReadOnly).unwrap();
    let plans = store.operation_query_plans().unwrap();
    let by_id = plans
        .iter()
        .find(|(what, _)| what == "by_id")
        .map(|(_, lines)| lines.join(" | "))
        .unwrap();
    assert_eq!(
        by_id,
        "SEARCH operations USING INDEX sqlite_autoindex_operations_1 (id=?)"
    );
}

/// The pending look-up the re-check made before (a walk of every pending
/// row), as the reference.
fn walked(path: &std::path::Path, name: &str) -> Option<(String, OpStatus)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT verb, status FROM operations
         WHERE status IN ('queued', 'running') AND instance = ?1
         ORDER BY created_at, rowid LIMIT 1",
        [name],
        |row| {
            Ok((
                row.get::<_, String>(0)?,
                OpStatus::parse(&row.get::<_, String>(1)?),
            ))
        },
    )
    .ok()
}

/// The re-check finds the pending operation through what the last snapshot
/// saw plus the rows since, on another connection (a teardown job's), and
/// answers as the walk did: still pending, finished since, created since.
#[test]
fn the_re_check_finds_pending_operations_without_walking_the_queue() {
    let (_dir, path) = stores::v14();
    let mut watcher = Store::open(&path, Access::ReadOnly).unwrap();
    watcher.snapshot(&mut vm()).unwrap();
    let mut job = Store::open(&path, Access::ReadWrite).unwrap();
    let check = |job: &mut Store, name: &str| {
        let pending = job.recheck(name).unwrap().and_then(|r| r.pending);
        assert_eq!(pending, walked(&path, name), "{name}");
        pending
    };
    assert_eq!(
        check(&mut job, "alpha"),
        Some(("down".into(), OpStatus::Running))
    );
    assert_eq!(
        check(&mut job, "delta"),
        Some(("up".into(), OpStatus::Queued))
    );
    assert_eq!(check(&mut job, "bravo"), None);
    stores::exec(
        &path,
        &format!(
            "INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
             VALUES ('late-verify', 'bravo', 'verify', 'queued', 'null', {t}, {t});
             UPDATE operations SET status = 'succeeded' WHERE id = 'op-alpha-down';
             INSERT INTO operations (id, instance, verb, status, request_json, created_at, updated_at)
             VALUES ('late-up', 'delta', 'up', 'queued', 'null', {old}, {old});",
            t = CAPTURE,
            old = CAPTURE - 3_600
        ),
    );
    assert_eq!(
        check(&mut job, "bravo"),
        Some(("verify".into(), OpStatus::Queued))
    );
    assert_eq!(check(&mut job, "alpha"), None);
    // The oldest by `created_at` wins, as the walk's ORDER BY.
    assert_eq!(
        check(&mut job, "delta"),
        Some(("up".into(), OpStatus::Queued))
    );
    stores::exec(
        &path,
        "UPDATE operations SET verb = 'gc' WHERE id = 'late-up';",
    );
    assert_eq!(
        check(&mut job, "delta"),
        Some(("gc".into(), OpStatus::Queued))
    );
}

/// The plans (`EXPLAIN QUERY PLAN`, 0.4.0 schema) of the re-check's two
/// look-ups: a primary-key seek per id pending at the snapshot, and a walk
/// of the rows since the snapshot's rowid.
#[test]
fn the_re_checks_look_ups_are_index_seeks() {
    let (_dir, path) = stores::v14();
    let store = Store::open(&path, Access::ReadOnly).unwrap();
    let plans = store.operation_query_plans().unwrap();
    let plan = |what: &str| {
        plans
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, lines)| lines.join(" | "))
            .unwrap()
    };
    assert_eq!(
        plan("still_pending"),
        "SEARCH operations USING INDEX sqlite_autoindex_operations_1 (id=?)"
    );
    assert_eq!(
        plan("pending_since"),
        "SEARCH operations USING INTEGER PRIMARY KEY (rowid>?) | USE TEMP B-TREE FOR ORDER BY"
    );
}

/// A finished operation's events are final (the 0.4.0 controller writes
/// them while it runs), so a connection reads its newest event once: the
/// read that first lists it finished. An operation that finishes between
/// two reads gets its last event.
#[test]
fn a_finished_operations_newest_event_is_read_once_per_connection() {
    let (_dir, path) = stores::v14();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let progress = |snapshot: &stackless_tui::model::Snapshot, id: &str| {
        snapshot
            .operations
            .iter()
            .find(|op| op.id == id)
            .and_then(|op| op.progress.as_ref())
            .map(|p| format!("{} {}", p.event, p.text()))
    };
    let first = store.snapshot(&mut vm()).unwrap();
    assert_eq!(
        progress(&first, "op-alpha-down").as_deref(),
        Some("Started start:web 2/3")
    );
    assert_eq!(
        progress(&first, "op-bravo-up").as_deref().map(|p| &p[..6]),
        Some("Failed")
    );
    let before = progress(&first, "op-bravo-up");
    stores::exec(
        &path,
        r#"INSERT INTO operation_events (operation_id, event_json, recorded_at)
           VALUES ('op-alpha-down', '{"event":"Completed","step_id":"start:web","index":3,"total":3}', 1),
                  ('op-bravo-up', '{"event":"Started","step_id":"late:web","index":1,"total":1}', 1);
           UPDATE operations SET status = 'succeeded' WHERE id = 'op-alpha-down';"#,
    );
    let second = store.snapshot(&mut vm()).unwrap();
    assert_eq!(
        progress(&second, "op-alpha-down").as_deref(),
        Some("Completed start:web 3/3"),
        "finished since the last read: its last event is read"
    );
    assert_eq!(
        progress(&second, "op-bravo-up"),
        before,
        "finished at the last read: not read again"
    );
    let mut fresh = Store::open(&path, Access::ReadOnly).unwrap();
    let third = fresh.snapshot(&mut vm()).unwrap();
    assert_eq!(
        progress(&third, "op-bravo-up").as_deref(),
        Some("Started late:web 1/1"),
        "a new connection reads every listed operation's newest event"
    );
}
