//! `snapshot`'s STAGE column read whole (`headless::table_stages`: the
//! services walked beside the instances, one instance at a time, each
//! process probed on one read of the process table) is the stage text of
//! the services `snapshot --json` reports, and the streamed table's, on a
//! store of a few thousand 0.4.0 instances whose services differ: a
//! process alive, one dead, one recorded under another state dir, a
//! service observed with no process recorded, one recorded and never
//! observed, tombstones.

use std::path::Path;

use stackless_tui::headless::probe::{ProcessTable, read_processes, services_probe};
use stackless_tui::headless::report::{
    ServiceReport, Services, Stages, TableStream, write_table, write_table_staged,
};
use stackless_tui::model::Snapshot;
use stackless_tui::store::StreamReader as _;
use stackless_tui::store::probe::{FixedProbe, HostProbe as _, SysinfoProbe};
use stackless_tui::store::{Access, Store};

use crate::common::{CAPTURE, fixture};
use crate::snapshot_golden::Table;

/// Copies of each instance of the 0.4.0 fixture per name.
const COPIES: usize = 300;

/// The 0.4.0 fixture with `COPIES` copies of each instance
/// (`alpha-0001`, ...: a birth of its own, its lease, its process
/// checkpoint and its observations), then: `alpha-0001`'s process record
/// gone (observed present, ready, applied: `web healthy`), `alpha-0002`'s
/// process this test's own, its log in this state dir (alive and
/// observed healthy: `web healthy`), `alpha-0003`'s a pid that cannot
/// exist, its log in this state dir (`web absent`), `hotel-0001`'s
/// observations gone (recorded elsewhere: `web unknown`), and a process
/// checkpoint of a name with no instance.
fn store() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let me = std::process::id();
    let started = SysinfoProbe::new()
        .live_start_time(me)
        .expect("this process's start time");
    let logs = dir.path().join("logs");
    let log = |ns: &str| format!("{}/{ns}/web.log", logs.display());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA foreign_keys = OFF;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {COPIES})
         INSERT INTO instances (name, substrate, status, definition, source_overrides,
                                created_at, tombstoned_at, definition_dir, dirty,
                                instance_id, resource_namespace)
         SELECT name || printf('-%04d', i), substrate, status, definition, source_overrides,
                created_at, tombstoned_at, definition_dir, dirty,
                printf('%04d', i) || substr(instance_id, 5),
                'sl-' || printf('%04d', i) || substr(instance_id, 5)
         FROM instances, n WHERE name NOT LIKE '%-%';
         INSERT INTO leases SELECT c.name, l.duration_secs, l.expires_at
         FROM leases l JOIN instances c ON c.name LIKE l.instance || '-%';
         INSERT INTO checkpoints SELECT c.name, k.step_id, k.resource_kind, k.resource_id,
                k.payload, k.recorded_at
         FROM checkpoints k JOIN instances c ON c.name LIKE k.instance || '-%';
         INSERT INTO observations SELECT c.instance_id, o.node, o.evidence_json, o.observed_at
         FROM observations o JOIN instances i ON i.instance_id = o.owner_id
         JOIN instances c ON c.name LIKE i.name || '-%';
         DELETE FROM checkpoints WHERE instance = 'alpha-0001' AND step_id = 'start:web';
         UPDATE checkpoints SET payload = json_object('pid', {me}, 'start_time', {started},
                'log', '{alive}')
         WHERE instance = 'alpha-0002' AND step_id = 'start:web';
         UPDATE checkpoints SET payload = json_object('pid', 4194305, 'start_time', 1,
                'log', '{dead}')
         WHERE instance = 'alpha-0003' AND step_id = 'start:web';
         DELETE FROM observations WHERE owner_id =
                (SELECT instance_id FROM instances WHERE name = 'hotel-0001');
         INSERT INTO checkpoints SELECT 'ghost', step_id, resource_kind, resource_id, payload,
                recorded_at FROM checkpoints WHERE instance = 'golf';",
        alive = log(&format!("sl-0002{}", &ns_id(&conn, "alpha")[4..])),
        dead = log(&format!("sl-0003{}", &ns_id(&conn, "alpha")[4..])),
    ))
    .unwrap();
    drop(conn);
    (dir, path)
}

/// `name`'s `instance_id` in the fixture.
fn ns_id(conn: &rusqlite::Connection, name: &str) -> String {
    conn.query_row(
        "SELECT instance_id FROM instances WHERE name = ?1",
        [name],
        |row| row.get(0),
    )
    .unwrap()
}

/// The store's snapshot, its lock holders probed on a fixed probe.
fn snapshot_of(store: &mut Store) -> Snapshot {
    store
        .snapshot(&mut FixedProbe {
            host: Some("vm".into()),
            processes: vec![],
        })
        .unwrap()
}

/// Each instance's services as `snapshot --json` reports them (the
/// recorder's read of them, `headless::recorded_services`: each name's
/// rows and observations read apart, each process probed per pid), read
/// back into the report's type, by name.
fn json_services(path: &Path, snapshot: &Snapshot) -> Services {
    let instances: Vec<stackless_tui::model::Instance> = snapshot
        .instances
        .iter()
        .map(|i| stackless_tui::model::Instance::clone(i))
        .collect();
    let read = stackless_tui::headless::recorded_services(path, &instances).unwrap();
    instances
        .iter()
        .zip(read)
        .filter(|(_, services)| !services.is_empty())
        .map(|(instance, services)| {
            let reports: Vec<ServiceReport> = services
                .into_iter()
                .map(|v| serde_json::from_value(v).unwrap())
                .collect();
            (instance.name.clone(), reports)
        })
        .collect()
}

/// The table's STAGE cells of the whole read, the `--json` services' and
/// the streamed table's are the same on every instance, and the lines of
/// the whole read's table are byte for byte those of a table made from
/// `--json`'s services and of the streamed one.
#[test]
fn the_tables_stage_is_the_stage_of_the_json_services_and_of_the_stream() {
    let (_dir, path) = store();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snapshot = snapshot_of(&mut store);
    assert_eq!(snapshot.instances.len(), 8 * (COPIES + 1));
    let stages =
        stackless_tui::headless::table_stages(&mut store, &snapshot, services_probe().as_mut())
            .unwrap();
    assert_eq!(stages.len(), snapshot.instances.len());
    let json = json_services(&path, &snapshot);
    let zone = jiff::tz::TimeZone::UTC;
    let mut staged = Vec::new();
    write_table_staged(
        &mut staged,
        &snapshot,
        CAPTURE,
        "state.db",
        &stages,
        &zone,
        None,
    )
    .unwrap();
    let mut from_json = Vec::new();
    write_table(
        &mut from_json,
        &snapshot,
        CAPTURE,
        "state.db",
        &json,
        &zone,
        None,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&staged),
        String::from_utf8_lossy(&from_json)
    );
    let mut streamed = Vec::new();
    let mut table = Table {
        table: TableStream::new(&mut streamed, "state.db", CAPTURE, &zone, None),
        state_dir: store.state_dir(),
        probe: services_probe(),
    };
    let mut probe = FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    assert!(matches!(
        store.stream_snapshot(&mut probe, None, &mut table),
        Ok(true)
    ));
    drop(table);
    assert_eq!(
        String::from_utf8_lossy(&streamed),
        String::from_utf8_lossy(&staged)
    );
    let stage = |name: &str| {
        let at = snapshot
            .instances
            .iter()
            .position(|i| i.name == name)
            .unwrap();
        stages.get(at).to_owned()
    };
    let cells: Vec<String> = [
        "alpha",
        "alpha-0001",
        "alpha-0002",
        "alpha-0003",
        "alpha-0004",
        "hotel-0001",
        "hotel-0002",
        "charlie-0001",
        "delta",
    ]
    .iter()
    .map(|name| format!("{name}: {}", stage(name)))
    .collect();
    assert_eq!(
        cells,
        [
            // Recorded under the fixture's own state dir, not this one.
            "alpha: web unknown",
            "alpha-0001: web healthy",
            "alpha-0002: web healthy",
            "alpha-0003: web absent",
            "alpha-0004: web unknown",
            "hotel-0001: web unknown",
            "hotel-0002: web unknown",
            "charlie-0001: web absent",
            "delta: web absent",
        ]
    );
}

/// The walk hands each instance over once, in the snapshot's order, with
/// its own rows only (its namespace, its steps), and ends with the last:
/// no instance's services outlive its call; a name with no instance
/// (`ghost`) pairs with none.
#[test]
fn the_services_walk_hands_each_instance_its_own_rows_once_in_order() {
    let (_dir, path) = store();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snapshot = snapshot_of(&mut store);
    let mut seen: Vec<String> = Vec::new();
    let mut with_rows = 0;
    let mut observed = 0;
    let walked = store.walk_services(&snapshot.instances, &mut |instance, rows, observations| {
        seen.push(instance.name.clone());
        if let Some(rows) = rows {
            let birth = instance.birth.as_ref().unwrap();
            assert_eq!(rows.logs_dir_name, birth.resource_namespace());
            let steps: Vec<&str> = rows
                .checkpoints
                .iter()
                .map(|c| c.step_id.as_str())
                .collect();
            assert_eq!(steps, ["start:web"], "{}", instance.name);
            with_rows += 1;
        }
        observed += usize::from(!observations.is_empty());
        Ok::<(), ()>(())
    });
    assert!(matches!(walked, Ok(true)));
    let names: Vec<String> = snapshot.instances.iter().map(|i| i.name.clone()).collect();
    assert_eq!(seen, names);
    // 4 process records in the fixture, each copied: one copy's removed.
    assert_eq!(with_rows, 4 * (COPIES + 1) - 1);
    // 7 observed in the fixture, each copied: one copy's removed.
    assert_eq!(observed, 7 * (COPIES + 1) - 1);
}

/// The streamed table as the binary streams it, but given a wrong STAGE
/// in every pass but the STAGE pass, and counting each pass's services.
struct Once<'a> {
    table: Table<'a>,
    /// Per pass: the instances handed out with service rows.
    with_rows: [usize; 2],
    /// Per pass: the instances handed out with observations.
    observed: [usize; 2],
}

impl stackless_tui::store::StreamReader for Once<'_> {
    type Error = std::io::Error;

    fn passes(&self) -> usize {
        self.table.passes()
    }

    fn services_in(&self, pass: usize) -> bool {
        self.table.services_in(pass)
    }

    fn head(&mut self, head: &Snapshot) -> std::io::Result<()> {
        self.table.head(head)
    }

    fn instance(
        &mut self,
        pass: usize,
        head: &Snapshot,
        instance: &stackless_tui::model::Instance,
        services: Option<stackless_tui::store::services::ServiceRows>,
        observations: Vec<stackless_tui::model::detail::Observation>,
    ) -> std::io::Result<()> {
        self.with_rows[pass] += usize::from(services.is_some());
        self.observed[pass] += usize::from(!observations.is_empty());
        if pass == TableStream::<Vec<u8>>::STAGE_PASS {
            return self
                .table
                .instance(pass, head, instance, services, observations);
        }
        self.table
            .table
            .instance(pass, head, (instance, "not this"))
    }

    fn finish(&mut self, head: &Snapshot) -> std::io::Result<()> {
        self.table.finish(head)
    }
}

/// The streamed table reads each instance's services in its STAGE pass
/// alone (the lines pass gets no rows and no observations), and its
/// lines pass writes the cells that pass was given, by position, whatever
/// it is given itself, then the tombstones' GC lines it kept: the whole
/// read's table byte for byte (GC section included).
#[test]
fn the_streamed_table_derives_each_stage_once_and_writes_it_by_position() {
    let (_dir, path) = store();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snapshot = snapshot_of(&mut store);
    let stages =
        stackless_tui::headless::table_stages(&mut store, &snapshot, services_probe().as_mut())
            .unwrap();
    let zone = jiff::tz::TimeZone::UTC;
    let mut whole = Vec::new();
    write_table_staged(
        &mut whole, &snapshot, CAPTURE, "state.db", &stages, &zone, None,
    )
    .unwrap();
    let mut streamed = Vec::new();
    let mut once = Once {
        table: Table {
            table: TableStream::new(&mut streamed, "state.db", CAPTURE, &zone, None),
            state_dir: store.state_dir(),
            probe: services_probe(),
        },
        with_rows: [0; 2],
        observed: [0; 2],
    };
    assert_eq!(TableStream::<Vec<u8>>::STAGE_PASS, 0);
    assert_eq!(once.passes(), 2);
    assert!(once.services_in(0) && !once.services_in(1));
    let mut probe = FixedProbe {
        host: Some("vm".into()),
        processes: vec![],
    };
    assert!(matches!(
        store.stream_snapshot(&mut probe, None, &mut once),
        Ok(true)
    ));
    // As the walk's: 4 process records and 7 observed in the fixture, each
    // copied, one copy's removed; none in the lines pass.
    assert_eq!(once.with_rows, [4 * (COPIES + 1) - 1, 0]);
    assert_eq!(once.observed, [7 * (COPIES + 1) - 1, 0]);
    drop(once);
    let text = String::from_utf8_lossy(&streamed);
    assert!(!text.contains("not this"));
    assert!(text.contains("\nGC\n"), "{text}");
    assert!(text.contains("\ncharlie  due for GC at "), "{text}");
    assert_eq!(text, String::from_utf8_lossy(&whole));
}

/// The table's services are probed on one read of the process table,
/// however many services there are.
#[test]
fn the_tables_stages_read_the_process_table_once() {
    let (_dir, path) = store();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snapshot = snapshot_of(&mut store);
    let mut reads = 0;
    let mut probe = ProcessTable::new(None, || {
        reads += 1;
        read_processes()
    });
    let stages: Stages =
        stackless_tui::headless::table_stages(&mut store, &snapshot, &mut probe).unwrap();
    drop(probe);
    assert_eq!(reads, 1);
    let alive = snapshot
        .instances
        .iter()
        .position(|i| i.name == "alpha-0002")
        .unwrap();
    assert_eq!(stages.get(alive), "web healthy");
}

/// The walk declines, before handing anything out, where pairing by byte
/// order could differ from the join by name: rows with no birth (schema
/// 5 and older) and a hand-made store's rows read with anomalies; the
/// table's stages are then read as `--json` reads them, the same cells.
/// The 0.4.0 store is walked.
#[test]
fn the_services_walk_declines_stores_it_could_pair_otherwise() {
    for (name, walks) in [
        ("real-0.4.0-v14.db", true),
        ("real-0.2.0-v5.db", false),
        ("older-v2.db", false),
        ("hostile.db", false),
    ] {
        let (_dir, path) = fixture(name);
        let mut store = Store::open(&path, Access::ReadOnly).unwrap();
        let snapshot = snapshot_of(&mut store);
        let mut calls = 0;
        let walked = store.walk_services(&snapshot.instances, &mut |_, _, _| {
            calls += 1;
            Ok::<(), ()>(())
        });
        assert!(matches!(walked, Ok(w) if w == walks), "{name}");
        let expected = if walks { snapshot.instances.len() } else { 0 };
        assert_eq!(calls, expected, "{name}");
        let stages =
            stackless_tui::headless::table_stages(&mut store, &snapshot, services_probe().as_mut())
                .unwrap();
        let json = json_services(&path, &snapshot);
        let from_json: Vec<String> = snapshot
            .instances
            .iter()
            .map(|i| {
                json.get(&i.name).map_or_else(String::new, |s| {
                    stackless_tui::headless::report::stage_text(s)
                })
            })
            .collect();
        let cells: Vec<&str> = (0..snapshot.instances.len())
            .map(|i| stages.get(i))
            .collect();
        assert_eq!(cells, from_json, "{name}");
    }
}

/// A name torn down and born again after the snapshot was read (a new
/// `instance_id` and namespace in the same row, its new process
/// recorded under the same name): the walk declines (a commit since the
/// snapshot), and the old row is lent none of the new birth's services,
/// as `--json` reads them; the other rows keep theirs.
#[test]
fn a_name_born_again_after_the_snapshot_lends_the_old_row_nothing() {
    let (dir, path) = store();
    let mut store = Store::open(&path, Access::ReadOnly).unwrap();
    let snapshot = snapshot_of(&mut store);
    let me = std::process::id();
    let started = SysinfoProbe::new().live_start_time(me).unwrap();
    let reborn = "sl-ffff0000000000000000000000000002";
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "UPDATE instances SET instance_id = substr('{reborn}', 4), resource_namespace = '{reborn}'
         WHERE name = 'alpha-0004';
         UPDATE checkpoints SET payload = json_object('pid', {me}, 'start_time', {started},
                'log', '{}/logs/{reborn}/web.log')
         WHERE instance = 'alpha-0004' AND step_id = 'start:web';",
        dir.path().display()
    ))
    .unwrap();
    drop(conn);
    let mut calls = 0;
    let walked = store.walk_services(&snapshot.instances, &mut |_, _, _| {
        calls += 1;
        Ok::<(), ()>(())
    });
    assert!(matches!(walked, Ok(false)));
    assert_eq!(calls, 0);
    let stages =
        stackless_tui::headless::table_stages(&mut store, &snapshot, services_probe().as_mut())
            .unwrap();
    let cell = |name: &str| {
        let at = snapshot
            .instances
            .iter()
            .position(|i| i.name == name)
            .unwrap();
        stages.get(at).to_owned()
    };
    assert_eq!(
        [cell("alpha-0004"), cell("alpha-0002"), cell("alpha-0005")],
        ["", "web healthy", "web unknown"]
    );
}
