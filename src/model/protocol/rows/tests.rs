use super::*;
use crate::model::generation::Generation;
use crate::model::rows::{Birth, Lease, Rows, Status};
use serde_json::json;

fn instance(name: &str, birth: &str, expires_at: i64) -> Instance {
    Instance {
        name: name.into(),
        substrate: "local".into(),
        status: Status::Active,
        created_at: Some(1),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 60,
            expires_at,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: Some(false),
        birth: Some(Birth::new(birth, &format!("sl-{birth}"))),
    }
}

fn snapshot(instances: Vec<Instance>) -> Snapshot {
    Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: instances.into(),
        ..Rows::default()
    })
}

#[test]
fn the_first_update_sends_every_row_then_only_what_changed() {
    let mut tables = Tables::new();
    let first = snapshot(vec![
        instance("alpha", "a1", 2_000),
        instance("bravo", "b1", 3_000),
    ]);
    let delta = tables.update(&first);
    assert_eq!(delta.tables[0].1.upsert.len(), 2);
    assert_eq!(delta.counts, [2, 0, 0]);
    // The same rows again (shared or copied): nothing.
    assert!(tables.update(&first).is_empty());
    let copied = snapshot(vec![
        instance("alpha", "a1", 2_000),
        instance("bravo", "b1", 3_000),
    ]);
    assert!(tables.update(&copied).is_empty());
    // One lease renewed: that row alone, whole.
    let renewed = snapshot(vec![
        instance("alpha", "a1", 2_000),
        instance("bravo", "b1", 9_000),
    ]);
    let delta = tables.update(&renewed);
    assert_eq!(
        delta.tables[0].1.upsert,
        [
            r#"{"name":"bravo","birth":{"instance_id":"b1","resource_namespace":"sl-b1"},"dns_safe":true,"substrate":"local","status":"active","created_at":1,"tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":9000},"lock":null,"dirty":false,"failed_up":false,"services_dead":0,"gc":null}"#
        ]
    );
    assert!(delta.tables[0].1.remove.is_empty());
    // A client reads the row into the same type and writes it back
    // byte for byte.
    let text = &delta.tables[0].1.upsert[0];
    let row: InstanceRow = serde_json::from_str(text).unwrap();
    assert_eq!(
        row.lease,
        Some(LeaseRow {
            duration_secs: 60,
            expires_at: 9000
        })
    );
    assert_eq!(&serde_json::to_string(&row).unwrap(), text);
}

#[test]
fn a_name_born_again_is_a_remove_and_an_upsert() {
    let mut tables = Tables::new();
    tables.update(&snapshot(vec![instance("alpha", "a1", 2_000)]));
    let delta = tables.update(&snapshot(vec![instance("alpha", "a2", 2_000)]));
    assert_eq!(
        delta.tables[0].1.remove,
        [r#"{"name":"alpha","birth":{"instance_id":"a1","resource_namespace":"sl-a1"}}"#]
    );
    assert_eq!(delta.tables[0].1.upsert.len(), 1);
    assert!(delta.tables[0].1.upsert[0].contains(r#""instance_id":"a2""#));
    let delta = tables.update(&snapshot(vec![]));
    assert_eq!(
        delta.tables[0].1.remove,
        [r#"{"name":"alpha","birth":{"instance_id":"a2","resource_namespace":"sl-a2"}}"#]
    );
    assert_eq!(delta.counts, [0, 0, 0]);
}

#[test]
fn long_texts_are_cut_and_a_row_always_fits() {
    let mut value = json!({ "a": "x".repeat(5_000), "b": ["é".repeat(2_000)] });
    cut_texts(&mut value, 4);
    assert_eq!(value, json!({ "a": "xxx…", "b": ["ééé…"] }));
    let huge = json!({ "name": "\u{1}".repeat(MAX_TEXT_CHARS), "more": vec!["\u{1}".repeat(MAX_TEXT_CHARS); 20] });
    let text = fit(huge);
    assert!(text.len() <= MAX_ROW_BYTES, "{}", text.len());
    assert!(text.ends_with(r#","cut":true}"#) || text.contains(r#""cut":true"#));
}

#[test]
fn a_kept_row_follows_its_dead_count_when_the_counts_change() {
    let mut tables = Tables::new();
    let first = snapshot(vec![
        instance("alpha", "a1", 2_000),
        instance("bravo", "b1", 3_000),
    ]);
    tables.update(&first);
    // The same rows (shared), other counts: alpha's row again, with 2.
    let mut dead = crate::model::snapshot::ServicesDead::new();
    dead.add("alpha", 2);
    let counted = first.with_services_dead(Arc::new(dead));
    let delta = tables.update(&counted);
    assert_eq!(
        delta.tables[0].1.upsert,
        [
            r#"{"name":"alpha","birth":{"instance_id":"a1","resource_namespace":"sl-a1"},"dns_safe":true,"substrate":"local","status":"active","created_at":1,"tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":2000},"lock":null,"dirty":false,"failed_up":false,"services_dead":2,"gc":null}"#
        ]
    );
    // The same counts shared again: nothing; the counts back to none:
    // alpha's row with 0.
    assert!(tables.update(&counted).is_empty());
    assert!(
        tables
            .update(&counted.with_services_dead(Arc::clone(&counted.services_dead)))
            .is_empty()
    );
    let delta = tables.update(&counted.with_services_dead(Arc::default()));
    assert_eq!(delta.tables[0].1.upsert.len(), 1);
    assert!(delta.tables[0].1.upsert[0].contains(r#""name":"alpha""#));
    assert!(delta.tables[0].1.upsert[0].contains(r#""services_dead":0"#));
}

#[test]
fn every_row_is_what_a_reset_group_sends() {
    let first = Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: vec![
            instance("alpha", "a1", 2_000),
            instance("bravo", "b1", 3_000),
        ]
        .into(),
        reap_attempts: vec![crate::model::ReapAttempt {
            instance: "alpha".to_owned(),
            attempts: 3,
            last_error: "boom".to_owned(),
            next_retry_at: 2_100,
        }],
        ..Rows::default()
    });
    let delta = Tables::new().update(&first);
    let mut rows = Vec::new();
    let counts = Tables::every_row(&first, &mut |table, text| rows.push((table, text)));
    let sent: Vec<(Table, String)> = delta
        .tables
        .iter()
        .flat_map(|(table, d)| d.upsert.iter().map(|text| (*table, text.clone())))
        .collect();
    assert_eq!(counts, [2, 0, 1]);
    assert_eq!(counts, delta.counts);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows, sent);
}

#[test]
fn a_sent_instance_row_is_held_in_forty_bytes() {
    // 1,000,000 rows: a table of 2^21 slots of this and a control byte.
    assert_eq!(std::mem::size_of::<SentInstance>(), 40);
}

/// The row written (borrowed from the snapshot's row) and the row a client
/// reads ([`InstanceRow`]) are one shape: every field, a lock and a
/// tombstone's collection included, reads back and writes as the same
/// text, in the same order.
#[test]
fn a_written_instance_row_reads_back_as_the_same_text() {
    let mut row = instance("charlie", "c1", 9_000);
    row.status = Status::Tombstoned;
    row.tombstoned_at = Some(5);
    row.lock = Some(Box::new(crate::model::rows::OpLock {
        operation: "down".into(),
        holder_pid: 7,
        holder_start_time: 8,
        acquired_at: 9,
        holder_host: Some("h".into()),
        claim_id: None,
    }));
    let delta = Tables::new().update(&snapshot(vec![row]));
    let text = delta.tables[0].1.upsert[0].clone();
    assert_eq!(
        text,
        r#"{"name":"charlie","birth":{"instance_id":"c1","resource_namespace":"sl-c1"},"dns_safe":true,"substrate":"local","status":"tombstoned","created_at":1,"tombstoned_at":5,"lease":{"duration_secs":60,"expires_at":9000},"lock":{"operation":"down","holder_pid":7,"holder_start_time":8,"holder_host":"h","acquired_at":9,"liveness_state":"unknown","held":false},"dirty":false,"failed_up":false,"services_dead":0,"gc":{"due_at":604805,"collected_by":"controller"}}"#
    );
    let read: InstanceRow = serde_json::from_str(&text).expect("an instance row");
    assert_eq!(serde_json::to_string(&read).expect("json"), text);
}
