//! Tests of `super`: a birth's texts and size, an instance row's size, and the
//! rows found by name (in order or not) and by the operations' index.

use super::*;
use crate::model::operation::OpStatus;

#[test]
fn a_birth_reads_back_both_texts_as_given() {
    let id = "0123456789abcdef0123456789abcdef";
    // Under 0.4.0: the namespace is `sl-<id>`, the id held decoded.
    let born = Birth::new(id, "sl-0123456789abcdef0123456789abcdef");
    assert_eq!(born.instance_id(), id);
    assert_eq!(
        born.resource_namespace(),
        "sl-0123456789abcdef0123456789abcdef"
    );
    // Migrated from before 0.4.0: the namespace is the name.
    let migrated = Birth::new(id, "golf");
    assert_eq!(migrated.instance_id(), id);
    assert_eq!(migrated.resource_namespace(), "golf");
    // Hostile or empty texts come back exactly.
    for (id, namespace) in [("", "sl-"), ("x", ""), ("é", "sl-é/../x")] {
        let odd = Birth::new(id, namespace);
        assert_eq!(
            (
                odd.instance_id().as_str(),
                odd.resource_namespace().as_str()
            ),
            (id, namespace)
        );
    }
    assert_ne!(Birth::new("ab", "c"), Birth::new("a", "bc"));
    assert_eq!(
        format!("{born:?}"),
        "Birth { instance_id: \"0123456789abcdef0123456789abcdef\", \
         resource_namespace: \"sl-0123456789abcdef0123456789abcdef\" }"
    );
    assert_eq!(born.instance_id().to_owned(), String::from(id));
    assert_eq!(format!("{}", born.instance_id()), id);
}

#[test]
fn a_birth_under_0_4_0_is_held_as_its_decoded_id() {
    let id = "89abcdef0123456789abcdef01234567";
    let namespace = format!("sl-{id}");
    let born = Birth::new(id, &namespace);
    assert!(matches!(
        born.0,
        birth::Held::Derived([0x89, 0xab, .., 0x45, 0x67])
    ));
    assert_eq!(
        (
            born.instance_id().as_str(),
            born.resource_namespace().as_str()
        ),
        (id, namespace.as_str())
    );
    // Any other id (length, uppercase or not hex), or a namespace not
    // derived from the id, keeps both texts as stored, read back the same.
    let upper = id.to_uppercase();
    let upper_namespace = format!("sl-{upper}");
    let not_hex = format!("g{}", &id[1..]);
    let not_hex_namespace = format!("sl-{not_hex}");
    for (id, namespace) in [
        ("ab", "sl-ab"),
        (id, "sl-other"),
        (&id[1..], &namespace[..34]),
        (&upper, &upper_namespace),
        (&not_hex, &not_hex_namespace),
    ] {
        let other = Birth::new(id, namespace);
        assert!(
            matches!(other.0, birth::Held::Stored(_)),
            "{id} {namespace}"
        );
        assert_eq!(
            (
                other.instance_id().as_str(),
                other.resource_namespace().as_str()
            ),
            (id, namespace)
        );
        assert_ne!(other, born);
    }
    assert_eq!(born, Birth::new(id, &namespace));
}

#[test]
fn an_instance_row_is_136_bytes() {
    // The rows at a million instances (BENCHMARKS.md, "The console's rows
    // at 1M"): at 136 B the row with its `Arc` counts (152 B asked) is
    // glibc malloc's 160-byte chunk; from 137 B (153 asked) a 176-byte
    // one. A 0.4.0 birth's id decoded (24 B, no allocation of its
    // own), an unknown status a 2-byte handle, the anomalies one word,
    // the substrate one word.
    assert_eq!(size_of::<Option<Birth>>(), 24);
    assert_eq!(size_of::<Anomalies>(), 8);
    assert_eq!(size_of::<Status>(), 4);
    assert_eq!(size_of::<Instance>(), 136);
}

#[test]
fn names_asked_in_order_or_not_find_the_same_rows() {
    let names: Vec<String> = (0..40).map(|i| format!("n{i:02}")).collect();
    let rows = Rows {
        instances: names
            .iter()
            .step_by(2)
            .map(|name| Instance {
                name: name.clone(),
                substrate: "".into(),
                status: Status::Active,
                created_at: None,
                tombstoned_at: None,
                lease: None,
                lock: None,
                anomalies: Anomalies::default(),
                dirty: None,
                birth: None,
            })
            .collect(),
        reap_attempts: names
            .iter()
            .step_by(3)
            .map(|name| ReapAttempt {
                instance: name.clone(),
                attempts: 1,
                last_error: String::new(),
                next_retry_at: 0,
            })
            .collect(),
        ..Rows::default()
    };
    let expect = |name: &str| (rows.instance(name), rows.reap_attempt(name));
    let mut cursor = Cursor::default();
    for name in &names {
        assert_eq!(
            rows.instance_in_order(name, &mut cursor),
            expect(name),
            "{name}"
        );
    }
    // Out of order, repeated, and past the end.
    for name in ["n04", "n04", "n39", "n00", "n30", "zz", "n31", ""] {
        assert_eq!(
            rows.instance_in_order(name, &mut cursor),
            expect(name),
            "{name}"
        );
    }
    let hits = names
        .iter()
        .filter(|n| {
            rows.instance_in_order(n, &mut Cursor::default())
                .0
                .is_some()
        })
        .count();
    assert_eq!(hits, 20);
}

fn op(id: &str, instance: &str, status: OpStatus) -> Operation {
    Operation {
        id: id.into(),
        instance: instance.into(),
        instance_id: None,
        verb: "up".into(),
        status,
        cancel_requested: false,
        created_at: 0,
        updated_at: 0,
        error_json: None,
        progress: None,
        ran: None,
    }
}

/// The linear look-up the index replaced (the `O(N x P)` scan): the first
/// pending operation of the name in store order.
fn linear<'a>(rows: &'a Rows, name: &str) -> Option<&'a Operation> {
    rows.operations
        .iter()
        .take_while(|op| op.status.is_pending())
        .find(|op| op.instance == name)
}

#[test]
fn the_index_finds_what_the_linear_search_found() {
    let mut rows = Rows {
        operations: vec![
            op("1", "delta", OpStatus::Running),
            op("2", "alpha", OpStatus::Queued),
            op("3", "delta", OpStatus::Queued),
            op("4", "alpha", OpStatus::Queued),
            op("5", "charlie", OpStatus::Failed),
            op("6", "bravo", OpStatus::Succeeded),
        ],
        ..Rows::default()
    };
    assert_eq!(rows.pending_operations().len(), 4);
    assert_eq!(rows.finished_operations().len(), 2);
    for name in ["alpha", "bravo", "charlie", "delta", "echo", ""] {
        assert_eq!(rows.pending_operation(name), linear(&rows, name), "{name}");
    }
    assert_eq!(
        rows.pending_operation("delta").map(|o| o.id.as_str()),
        Some("1")
    );
    assert_eq!(
        rows.pending_operation("alpha").map(|o| o.id.as_str()),
        Some("2")
    );
    // Changed by hand: rebuilt after `reindex`.
    rows.operations
        .insert(0, op("0", "bravo", OpStatus::Running));
    rows.reindex();
    assert_eq!(rows.pending_operations().len(), 5);
    assert_eq!(
        rows.pending_operation("bravo").map(|o| o.id.as_str()),
        Some("0")
    );
    // Through a snapshot's `DerefMut`, the index follows the change.
    let mut snapshot = crate::model::Snapshot::from(rows.clone());
    assert!(snapshot.pending_operation("echo").is_none());
    snapshot
        .operations
        .insert(0, op("e", "echo", OpStatus::Queued));
    assert_eq!(
        snapshot.pending_operation("echo").map(|o| o.id.as_str()),
        Some("e")
    );
    // A clone compares equal whether or not its index is built.
    assert_eq!(
        rows.clone(),
        Rows {
            operations: rows.operations.clone(),
            ..Rows::default()
        }
    );
}
