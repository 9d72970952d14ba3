//! Tests of the detail document (`ui::detail`).

use super::*;

#[test]
fn timestamps() {
    let utc = Zone::UTC;
    let ist = Zone::posix("IST-5:30").unwrap();
    assert_eq!(time::stamp(253_402_300_799, &utc), "9999-12-31T23:59:59Z");
    assert_eq!(relative(100, 292), "3m 12s ago");
    assert_eq!(relative(292, 100), "in 3m 12s");
    assert_eq!(when(0, 60, &utc), "1970-01-01T00:00:00Z (1m 00s ago)");
    assert_eq!(when(0, 60, &ist), "1970-01-01 05:30:00 IST (1m 00s ago)");
}

#[test]
fn multi_line_text_is_split_then_sanitized() {
    assert_eq!(
        text_lines("a\r\n\tb\u{1b}[2J\nc\n\n", 10),
        ["a", "    b␛[2J", "c"]
    );
    assert_eq!(text_lines("1\n2\n3\n4", 2), ["1", "2", "… 2 more lines"]);
    assert_eq!(
        json_lines(r#"{"b":1,"a":[2]}"#, 10),
        ["{", r#"  "b": 1,"#, r#"  "a": ["#, "    2", "  ]", "}"]
    );
    assert_eq!(json_lines("not json\u{7}", 10), ["not json␇"]);
    assert_eq!(json_lines("{}", 10), ["{}"]);
}

/// The detail view of a tombstone says when it becomes
/// due for GC and who collects it; an active row says nothing of GC.
#[test]
fn a_tombstone_says_when_it_is_due_for_gc_and_who_collects_it() {
    let utc = Zone::UTC;
    let tombstoned_at = 1_796_117_797;
    let instance = Instance {
        name: "charlie".into(),
        substrate: "local".into(),
        status: Status::Tombstoned,
        created_at: Some(tombstoned_at - 60),
        tombstoned_at: Some(tombstoned_at),
        lease: None,
        lock: None,
        anomalies: Default::default(),
        dirty: None,
        birth: None,
    };
    let detail = Detail {
        name: "charlie".into(),
        loaded: Loaded::Loading,
        scroll: 0,
        cursor: 0,
        payloads: false,
    };
    let now = tombstoned_at + 86_400;
    let gc_lines = |instance: &Instance, version: i64| -> Vec<String> {
        let rows = crate::model::Rows {
            instances: vec![instance.clone()].into(),
            generation: crate::model::Generation::new(version),
            ..crate::model::Rows::default()
        };
        let snapshot = crate::model::Snapshot::new(rows, Default::default());
        document(&detail, &snapshot, None, (now, &utc))
            .iter()
            .map(DocLine::plain)
            .filter(|l| l.trim_start().starts_with("GC "))
            .collect()
    };
    assert_eq!(
        gc_lines(&instance, 14),
        [
            "   GC               due for GC at 2026-12-08T09:36:37Z (in 6d 00h), collected by the \
          stackless controller's lease reaper (a gc operation; an embedded controller has none)"
        ]
    );
    assert_eq!(
        gc_lines(&instance, 5),
        [
            "   GC               due for GC at 2026-12-08T09:36:37Z (in 6d 00h), collected by \
          stackless's reaper or this console's reaper, whichever passes first"
        ]
    );
    let active = Instance {
        status: Status::Active,
        tombstoned_at: None,
        ..instance
    };
    assert!(gc_lines(&active, 14).is_empty());
}
