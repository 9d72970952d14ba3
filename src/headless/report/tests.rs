//! `snapshot`'s report: field by field, on hand-made snapshots.

use super::*;
use crate::model::ReapAttempt;
use crate::model::services::{LogState, Service};

/// A service placed on render has no local `log_path` in
/// `snapshot --json`, and says where its logs are, as the detail view
/// does.
#[test]
fn a_service_off_this_machine_has_no_local_log_path() {
    let mut service = Service {
        name: "web".into(),
        runs_on: "render".into(),
        start: None,
        process: None,
        readiness: None,
        existence: None,
        configuration: None,
        observed_at: None,
        error_code: None,
        drift: vec![],
        log_path: Some("/s/logs/sl-1/web.log".into()),
        log: LogState::Elsewhere,
    };
    let report = ServiceReport::new(&service, 4444, false);
    assert_eq!(report.log_path, None);
    assert_eq!(
        report.logs.as_deref(),
        Some("kept by render, not on this disk")
    );
    service.runs_on = "local".into();
    service.log = LogState::Missing;
    let report = ServiceReport::new(&service, 4444, false);
    assert_eq!(report.log_path.as_deref(), Some("/s/logs/sl-1/web.log"));
    assert_eq!(report.logs, None);
}

/// A service observed present and unready (a failed `up` that kept its
/// lease, its health check answering 404) is `unhealthy` in `snapshot
/// --json`, as stackless 0.4.0's `list` says it; present and ready with
/// its configuration applied, `healthy`; any service of a tombstone,
/// `absent`; nothing recorded, `unknown`.
#[test]
fn each_service_has_its_stage_as_stackless_derives_it() {
    let service = |readiness: Option<&str>| Service {
        name: "web".into(),
        runs_on: "local".into(),
        start: None,
        process: Some(crate::model::services::ProcessState::Alive),
        readiness: readiness.map(str::to_owned),
        existence: readiness.map(|_| "present".to_owned()),
        configuration: readiness.map(|_| "applied".to_owned()),
        observed_at: Some(1),
        error_code: None,
        drift: vec![],
        log_path: None,
        log: LogState::Missing,
    };
    let stage = |s: &Service, tombstoned| ServiceReport::new(s, 4444, tombstoned).stage;
    assert_eq!(stage(&service(Some("unready")), false), "unhealthy");
    assert_eq!(stage(&service(Some("ready")), false), "healthy");
    assert_eq!(stage(&service(None), false), "started");
    assert_eq!(stage(&service(Some("ready")), true), "absent");
    let mut never = service(None);
    never.process = None;
    assert_eq!(stage(&never, false), "unknown");
}

/// The capture time of the fast-path fixture.
const NOW: i64 = 1_795_960_686;

/// Five instances: a live lock, a hostile name, a backoff, a tombstone
/// and a pending operation.
fn mixed_snapshot() -> Snapshot {
    mixed_snapshot_with(|_| {})
}

/// [`mixed_snapshot`] with its rows changed by `edit`.
fn mixed_snapshot_with(edit: impl FnOnce(&mut crate::model::Rows)) -> Snapshot {
    use crate::model::liveness::LockLiveness;
    use crate::model::{Generation, Lease, Liveness, OpLock, OpStatus, ReapAttempt, Rows, Status};
    let instance = |name: &str, status: Status| Instance {
        name: name.into(),
        substrate: "local".into(),
        lease: (status == Status::Active).then_some(Lease {
            duration_secs: 60,
            expires_at: NOW - 30,
        }),
        tombstoned_at: (status == Status::Tombstoned).then_some(NOW - 100),
        status,
        created_at: Some(NOW - 1_000),
        lock: None,
        anomalies: Default::default(),
        dirty: Some(false),
        birth: None,
    };
    let mut alpha = instance("alpha", Status::Active);
    alpha.lock = Some(Box::new(OpLock {
        operation: "up".into(),
        holder_pid: 42,
        holder_start_time: NOW - 50,
        acquired_at: NOW - 40,
        holder_host: Some("vm".into()),
        claim_id: None,
    }));
    let rows = Rows {
        generation: Generation::new(14),
        instances: vec![
            instance("alpha", Status::Active),
            instance("bad\u{1b}[2Jname", Status::Active),
            instance("bravo", Status::Active),
            instance("charlie", Status::Tombstoned),
            instance("delta", Status::Active),
        ]
        .into(),
        reap_attempts: vec![ReapAttempt {
            instance: "bravo".into(),
            attempts: 2,
            last_error: r#"{"code":"engine.teardown.survivors","message":"left web"}"#.into(),
            next_retry_at: NOW + 64,
        }],
        operations: vec![Operation {
            id: "op-1".into(),
            instance: "delta".into(),
            instance_id: None,
            verb: "down".into(),
            status: OpStatus::Queued,
            cancel_requested: false,
            created_at: NOW - 5,
            updated_at: NOW - 5,
            error_json: None,
            progress: None,
            ran: None,
        }],
        ..Rows::default()
    };
    let mut rows = rows;
    rows.instances[0] = alpha;
    edit(&mut rows);
    let mut liveness = LockLiveness::default();
    liveness.insert("alpha".into(), Liveness::Alive);
    Snapshot::new(rows, liveness)
}

/// Services for two of [`mixed_snapshot`]'s instances.
fn mixed_services() -> Services {
    let service = |name: &str, alive: bool| ServiceReport {
        name: name.into(),
        pid: Some(7),
        alive: Some(alive),
        origin: None,
        port: Some(3000),
        log_path: Some(format!("/s/logs/alpha/{name}.log")),
        logs: None,
        stage: if alive { "started" } else { "absent" }.to_owned(),
    };
    let mut services = Services::new();
    services.insert(
        "alpha".into(),
        vec![service("web", true), service("db", false)],
    );
    services.insert("delta".into(), vec![service("api", true)]);
    services
}

/// The fast paths give the same bytes: the table made from the snapshot
/// without building reports, and the JSON with the services borrowed,
/// are byte for byte what the whole report gives, with services,
/// locks, a backoff, a pending operation and a hostile name.
#[test]
fn streamed_json_and_table_match_the_whole_report_with_services() {
    let snapshot = mixed_snapshot();
    let services = mixed_services();
    let whole = build_with(&snapshot, NOW, "s.db", &services, None);
    let mut json = Vec::new();
    write_json(
        &mut json,
        &snapshot,
        NOW,
        "s.db",
        &mut |i| Ok(services.get(&i.name).cloned().unwrap_or_default()),
        None,
    )
    .unwrap();
    let expected = serde_json::to_string_pretty(&whole).unwrap() + "\n";
    assert_eq!(String::from_utf8(json).unwrap(), expected);
    assert!(expected.contains("\"services\": ["), "{expected}");
    let mut text = Vec::new();
    let utc = jiff::tz::TimeZone::UTC;
    write_table(&mut text, &snapshot, NOW, "s.db", &services, &utc, None).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text, table(&whole, &utc));
    // Each instance's stage, as the JSON has it, in its STAGE column.
    let header = text.lines().nth(1).unwrap_or_default();
    assert!(header.contains("STATUS      STAGE"), "{text}");
    let alpha = text
        .lines()
        .find(|l| l.starts_with("alpha "))
        .unwrap_or_default();
    assert!(alpha.contains(" web started, db absent "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("delta ") && l.contains(" api started ")),
        "{text}"
    );
    assert!(text.contains("skip: operation pending"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}

/// An old failed `up` listed before a pending operation
/// in the snapshot comes after it in the table, with when it ended
/// (relative, as the table's other times); a pending one keeps its
/// `since`.
#[test]
fn the_table_lists_pending_operations_first_and_failed_ones_with_their_time() {
    use crate::model::OpStatus;
    let op = |id: &str, instance: &str, verb: &str, status: OpStatus, at: i64| Operation {
        error_json: (status == OpStatus::Failed)
            .then(|| r#"{"code":"engine.up.failed","message":"port taken"}"#.to_owned()),
        id: id.into(),
        instance: instance.into(),
        instance_id: None,
        verb: verb.into(),
        status,
        cancel_requested: false,
        created_at: at - 20,
        updated_at: at,
        progress: None,
        ran: None,
    };
    let snapshot = mixed_snapshot_with(|rows| {
        rows.operations = vec![
            op(
                "op-old",
                "nc3-long",
                "up",
                OpStatus::Failed,
                NOW - 3 * 3600 - 300,
            ),
            op("op-ok", "delta", "up", OpStatus::Succeeded, NOW - 100),
            op("op-new", "delta", "down", OpStatus::Queued, NOW - 5),
            op("op-run", "alpha", "verify", OpStatus::Running, NOW - 40),
        ];
    });
    let mut text = Vec::new();
    let utc = jiff::tz::TimeZone::UTC;
    write_table(
        &mut text,
        &snapshot,
        NOW,
        "s.db",
        &Services::new(),
        &utc,
        None,
    )
    .unwrap();
    let text = String::from_utf8(text).unwrap();
    let tail: Vec<&str> = text.lines().skip_while(|l| *l != "OPERATIONS").collect();
    assert_eq!(
        tail,
        [
            "OPERATIONS",
            "queued down delta (since 25s)",
            "running verify alpha (since 1m 00s)",
            "failed up nc3-long (3h 05m ago): engine.up.failed: port taken",
        ]
    );
    let whole = build_with(&snapshot, NOW, "s.db", &Services::new(), None);
    assert_eq!(text, table(&whole, &utc));
}

/// Failed operations repeated (the same verb, instance and error) are one
/// line, counted first and timed as the newest; another error is a line
/// of its own; failures on several instances in turn fold per instance.
#[test]
fn repeated_failures_in_the_operations_section_are_folded_and_counted() {
    use crate::model::OpStatus;
    let failed = |id: &str, at: i64, code: &str| Operation {
        error_json: Some(format!(r#"{{"code":"{code}","message":"left survivors"}}"#)),
        id: id.into(),
        instance: "foxtrot".into(),
        instance_id: None,
        verb: "down".into(),
        status: OpStatus::Failed,
        cancel_requested: false,
        created_at: at,
        updated_at: at,
        progress: None,
        ran: None,
    };
    let snapshot = mixed_snapshot_with(|rows| {
        rows.operations = vec![
            failed("f-3", NOW - 60, "engine.teardown.survivors"),
            failed("f-2", NOW - 120, "engine.teardown.survivors"),
            failed("f-1", NOW - 180, "engine.teardown.survivors"),
            failed("f-0", NOW - 240, "state.lock.held"),
        ];
    });
    let mut text = Vec::new();
    let utc = jiff::tz::TimeZone::UTC;
    write_table(
        &mut text,
        &snapshot,
        NOW,
        "s.db",
        &Services::new(),
        &utc,
        None,
    )
    .unwrap();
    let text = String::from_utf8(text).unwrap();
    let tail: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "OPERATIONS")
        .take(3)
        .collect();
    assert_eq!(
        tail,
        [
            "OPERATIONS",
            "x3 failed down foxtrot (1m 00s ago): engine.teardown.survivors: left survivors",
            "failed down foxtrot (4m 00s ago): state.lock.held: left survivors",
        ]
    );
}

/// The facts `snapshot --json` shares with the stream's instance rows
/// (docs/protocol.md "Instance rows") have one shape: the lease object
/// holds the row's `lease` fields (plus what moves with the clock), the
/// birth is the row's birth, the lock's `liveness_state` the row's word.
#[test]
fn the_lease_birth_and_liveness_are_the_stream_rows_shapes() {
    let snapshot = mixed_snapshot();
    let report = serde_json::to_value(build(&snapshot, NOW, "s.db")).unwrap();
    let mut tables = crate::model::protocol::rows::Tables::new();
    let delta = tables.update(&snapshot);
    let rows: Vec<serde_json::Value> = delta.tables[0]
        .1
        .upsert
        .iter()
        .map(|text| serde_json::from_str(text).unwrap())
        .collect();
    let mut compared = 0;
    for row in &rows {
        let name = &row["name"];
        let Some(instance) = report["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == *name)
        else {
            panic!("{name} is not in the report");
        };
        assert_eq!(instance["birth"], row["birth"], "{name}");
        assert_eq!(
            instance["lock"]["liveness_state"], row["lock"]["liveness_state"],
            "{name}"
        );
        match (&row["lease"], &instance["lease"]) {
            (serde_json::Value::Null, serde_json::Value::Null) => {}
            (lease, report_lease) => {
                for (key, value) in lease.as_object().unwrap() {
                    assert_eq!(report_lease[key], *value, "{name} lease.{key}");
                }
                assert_eq!(
                    lease.as_object().unwrap().keys().collect::<Vec<_>>(),
                    ["duration_secs", "expires_at"]
                );
                compared += 1;
            }
        }
    }
    assert_eq!(rows.len(), 5);
    assert!(compared >= 1);
}

/// Each instance's reap attempt, stepped to in name order, is the one
/// `Snapshot::reap_attempt` finds, whatever order the names are asked in
/// (forward, with gaps past the steps, backward, absent names), and with
/// two attempts for one name each is the binary search's.
#[test]
fn the_reap_attempt_stepped_to_is_the_snapshots_in_any_order() {
    let attempt = |instance: &str| ReapAttempt {
        instance: instance.into(),
        attempts: 1,
        last_error: instance.into(),
        next_retry_at: NOW,
    };
    let names: Vec<String> = (0..40).map(|i| format!("n{i:03}")).collect();
    let snapshot = mixed_snapshot_with(|rows| {
        rows.reap_attempts = names.iter().step_by(3).map(|n| attempt(n)).collect();
    });
    let rules = Rules::new(&snapshot, None);
    let mut asked: Vec<&str> = names.iter().map(String::as_str).collect();
    asked.extend(["n039", "n000", "a", "n021", "n020", "zzz", "n003", "n036"]);
    for name in asked {
        assert_eq!(
            rules.attempt(&snapshot, name).map(|a| a.instance.as_str()),
            snapshot.reap_attempt(name).map(|a| a.instance.as_str()),
            "{name}"
        );
    }
    let twins = mixed_snapshot_with(|rows| {
        rows.reap_attempts = vec![attempt("a"), attempt("b"), attempt("b")];
    });
    let rules = Rules::new(&twins, None);
    for name in ["a", "b", "c"] {
        assert_eq!(
            rules.attempt(&twins, name).map(std::ptr::from_ref),
            twins.reap_attempt(name).map(std::ptr::from_ref),
            "{name}"
        );
    }
}

/// The lease reaper failing every minute on four instances in turn (golf,
/// india, hotel, alpha, golf, …): one line per instance, counted exactly.
#[test]
fn failures_in_turn_in_the_operations_section_fold_per_instance() {
    use crate::model::OpStatus;
    let failed = |name: &str, at: i64| Operation {
        error_json: Some(
            r#"{"code":"engine.teardown.survivors","message":"left survivors"}"#.into(),
        ),
        id: format!("{name}-{at}"),
        instance: name.into(),
        instance_id: None,
        verb: "down".into(),
        status: OpStatus::Failed,
        cancel_requested: false,
        created_at: at,
        updated_at: at,
        progress: None,
        ran: None,
    };
    let snapshot = mixed_snapshot_with(|rows| {
        rows.operations = (0..6_i64)
            .flat_map(|minute| {
                ["alpha", "hotel", "india", "golf"]
                    .into_iter()
                    .enumerate()
                    .map(move |(i, name)| {
                        failed(name, NOW - 60 * minute - i64::try_from(i).unwrap_or(0))
                    })
            })
            .collect();
    });
    let mut text = Vec::new();
    write_table(
        &mut text,
        &snapshot,
        NOW,
        "s.db",
        &Services::new(),
        &jiff::tz::TimeZone::UTC,
        None,
    )
    .unwrap();
    let text = String::from_utf8(text).unwrap();
    let section: Vec<&str> = text.lines().skip_while(|l| *l != "OPERATIONS").collect();
    assert_eq!(
        section,
        [
            "OPERATIONS",
            "x6 failed down alpha (0s ago): engine.teardown.survivors: left survivors",
            "x6 failed down hotel (1s ago): engine.teardown.survivors: left survivors",
            "x6 failed down india (2s ago): engine.teardown.survivors: left survivors",
            "x6 failed down golf (3s ago): engine.teardown.survivors: left survivors",
        ]
    );
}

/// The STAGE cells held by position: each cell as pushed (empty ones
/// too, multi-byte text whole), nothing past the last; a cell is
/// `stage_text`'s text whether made from reports or from `(name, stage)`
/// pairs, cut to 48 columns.
#[test]
fn stages_are_held_by_position_and_cut_as_the_reports_stage_text() {
    let mut stages = Stages::with_capacity(4);
    assert!(stages.is_empty());
    stages.push("web healthy");
    stages.push("");
    stages.push("wéb absent, worker unknown");
    assert_eq!(
        (0..4).map(|i| stages.get(i)).collect::<Vec<_>>(),
        ["web healthy", "", "wéb absent, worker unknown", ""]
    );
    assert_eq!(stages.len(), 3);
    let long: Vec<(String, &str)> = (0..6).map(|i| (format!("svc{i}"), "unhealthy")).collect();
    let cell = stage_cell(long.iter().map(|(n, s)| (n.as_str(), *s)));
    let reports: Vec<ServiceReport> = long
        .iter()
        .map(|(name, stage)| ServiceReport {
            name: name.clone(),
            pid: None,
            alive: None,
            origin: None,
            port: None,
            stage: (*stage).to_owned(),
            log_path: None,
            logs: None,
        })
        .collect();
    assert_eq!(cell, stage_text(&reports));
    assert_eq!(cell, "svc0 unhealthy, svc1 unhealthy, svc2 unhealthy,…");
}

/// Each distinct STAGE cell is kept once (the instances hold its
/// number); past `Stages::INTERNED` distinct cells, later new ones are
/// kept each time they come; every position reads its own cell either
/// way.
#[test]
fn stages_keep_each_distinct_cell_once_and_read_every_position_back() {
    let mut stages = Stages::with_capacity(8);
    for cell in [
        "web healthy",
        "",
        "web healthy",
        "web absent",
        "",
        "web healthy",
    ] {
        stages.push(cell);
    }
    assert_eq!(stages.len(), 6);
    assert_eq!(stages.kept(), 3);
    assert_eq!(
        (0..7).map(|i| stages.get(i)).collect::<Vec<_>>(),
        [
            "web healthy",
            "",
            "web healthy",
            "web absent",
            "",
            "web healthy",
            ""
        ]
    );
    let mut many = Stages::default();
    let cells: Vec<String> = (0..Stages::INTERNED + 10)
        .map(|i| format!("svc{i} healthy"))
        .collect();
    for cell in cells.iter().chain(&cells) {
        many.push(cell);
    }
    assert_eq!(many.len(), 2 * cells.len());
    // The first INTERNED are looked up the second time; the 10 past them
    // are kept again.
    assert_eq!(many.kept(), cells.len() + 10);
    for (index, cell) in cells.iter().chain(&cells).enumerate() {
        assert_eq!(many.get(index), cell.as_str(), "{index}");
    }
}
