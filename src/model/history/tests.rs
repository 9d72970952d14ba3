use super::replay::Replay;
use super::*;
use crate::model::protocol::lines::read;

fn seg(file: &str, first: i64, last: i64, bytes: u64) -> Segment {
    Segment {
        file: file.to_owned(),
        first,
        last,
        bytes,
    }
}

#[test]
fn a_time_is_found_in_its_segment_or_said_before_after_or_in_a_gap() {
    let segments = [
        seg("a", 100, 200, 10),
        seg("b", 200, 300, 10),
        seg("c", 1_000, 1_100, 10),
    ];
    assert_eq!(locate(&[], 5), Found::Empty);
    assert_eq!(locate(&segments, 99), Found::Before { first: 100 });
    assert_eq!(locate(&segments, 100), Found::In(0));
    assert_eq!(locate(&segments, 199), Found::In(0));
    assert_eq!(
        locate(&segments, 200),
        Found::In(1),
        "the later segment starting there"
    );
    assert_eq!(locate(&segments, 300 + GAP_SECS), Found::In(1));
    assert_eq!(
        locate(&segments, 300 + GAP_SECS + 1),
        Found::Gap {
            from: 300,
            to: 1_000
        }
    );
    assert_eq!(locate(&segments, 1_050), Found::In(2));
    assert_eq!(
        locate(&segments, 1_100 + GAP_SECS + 1),
        Found::After { last: 1_100 }
    );
    assert_eq!(gaps(&segments), vec![(300, 1_000)]);
}

#[test]
fn retention_drops_the_oldest_first_by_age_then_by_size_never_the_newest() {
    let segments = [
        seg("a", 0, 100, 50),
        seg("b", 100, 200, 50),
        seg("c", 200, 300, 50),
        seg("d", 300, 400, 50),
    ];
    // Age: a and b end before 400 - 150 = 250.
    assert_eq!(to_drop(&segments, 400, 150, 1_000), 2);
    // Size: 200 bytes, at most 120: a and b go.
    assert_eq!(to_drop(&segments, 400, 10_000, 120), 2);
    assert_eq!(to_drop(&segments, 400, 10_000, 200), 0);
    // Everything old and too big: the newest stays.
    assert_eq!(to_drop(&segments, 10_000, 1, 1), 3);
    assert_eq!(to_drop(&[], 10, 1, 1), 0);
}

#[test]
fn a_segment_ends_after_its_time_or_its_size() {
    assert!(!segment_full(1_000, 10, 1_000 + SEGMENT_SECS - 1));
    assert!(segment_full(1_000, 10, 1_000 + SEGMENT_SECS));
    assert!(segment_full(1_000, SEGMENT_BYTES, 1_000));
    assert_eq!(
        segment_name(1_764_655_200, 7),
        "seg-1764655200-000007.ndjson.zst"
    );
    assert_eq!(
        segment_seq("seg-1764655200-000007.ndjson.zst"),
        Some((1_764_655_200, 7))
    );
    assert_eq!(segment_seq("index.json"), None);
}

#[test]
fn times_are_rfc3339_unix_seconds_or_a_span_ago() {
    let now = 1_764_655_200;
    assert_eq!(parse_time("10m ago", now), Ok(now - 600));
    assert_eq!(parse_time("1h 30m ago", now), Ok(now - 5_400));
    assert_eq!(parse_time("1764650000", now), Ok(1_764_650_000));
    assert_eq!(parse_time("2025-12-02T06:00:00Z", now), Ok(1_764_655_200));
    assert_eq!(
        parse_time("2025-12-02T07:00:00+01:00", now),
        Ok(1_764_655_200)
    );
    assert_eq!(
        parse_time("yesterday", now),
        Err(TimeError("yesterday".to_owned()))
    );
    assert_eq!(parse_span("7d"), Ok(604_800));
    assert!(parse_span("0s").is_err());
    assert_eq!(parse_size("256MB"), Ok(256_000_000));
    assert_eq!(parse_size("1GiB"), Ok(1 << 30));
    assert_eq!(parse_size("4096"), Ok(4_096));
    assert!(parse_size("lots").is_err());
    assert_eq!(span_words(604_800), "7d");
    assert_eq!(span_words(7_500), "2h 5m");
    assert_eq!(span_words(0), "0s");
}

#[test]
fn a_stamped_line_keeps_the_message_and_reads_its_time_and_host() {
    let line = r#"{"type":"heartbeat","at":5,"seq":2}"#;
    assert_eq!(
        stamp(line, 9, None),
        r#"{"t":9,"type":"heartbeat","at":5,"seq":2}"#
    );
    let fleet = stamp(line, 9, Some("db\"1"));
    assert_eq!(
        fleet,
        r#"{"host":"db\"1","t":9,"type":"heartbeat","at":5,"seq":2}"#
    );
    let read_back: Stamp = serde_json::from_str(&fleet).unwrap();
    assert_eq!((read_back.t, read_back.host.as_deref()), (9, Some("db\"1")));
    assert_eq!(stamp("{}", 3, None), r#"{"t":3}"#);
    assert!(matches!(
        read(fleet.as_bytes()),
        Ok(crate::model::protocol::lines::Message::Heartbeat(_))
    ));
}

fn feed(replay: &mut Replay, t: i64, line: &str) {
    replay.apply(t, read(line.as_bytes()).unwrap());
}

const ROW: &str = r#"{"name":"golf","birth":{"instance_id":"a1","resource_namespace":"sl-a1"},"dns_safe":true,"substrate":"local","status":"active","created_at":1,"tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":100},"lock":{"operation":"up","holder_pid":7,"holder_start_time":1,"holder_host":"h","acquired_at":2,"liveness_state":"stale_pid_gone","held":false},"dirty":null,"failed_up":false,"services_dead":2,"gc":null}"#;

#[test]
fn rows_apply_at_their_synced_and_a_reset_empties_the_tables() {
    let mut replay = Replay::new();
    feed(&mut replay, 10, r#"{"type":"reset","seq":1}"#);
    feed(
        &mut replay,
        10,
        &format!(r#"{{"type":"rows","seq":1,"table":"instances","upsert":[{ROW}],"remove":[]}}"#),
    );
    assert!(replay.instances.is_empty(), "not before its synced");
    feed(
        &mut replay,
        10,
        r#"{"type":"synced","seq":1,"at":10,"counts":{}}"#,
    );
    assert_eq!(replay.instances.len(), 1);
    let snapshot = replay.snapshot();
    assert_eq!(snapshot.instances.len(), 1);
    let golf = &snapshot.instances[0];
    assert_eq!(
        (golf.name.as_str(), golf.lease.map(|l| l.expires_at)),
        ("golf", Some(100))
    );
    assert_eq!(
        golf.birth
            .as_ref()
            .map(|b| (b.instance_id(), b.resource_namespace())),
        Some(("a1", "sl-a1"))
    );
    assert_eq!(
        snapshot.lock_liveness("golf"),
        Some(&crate::model::Liveness::StalePidGone)
    );
    assert_eq!(snapshot.dead_services("golf"), 2);
    feed(
        &mut replay,
        20,
        r#"{"type":"rows","seq":2,"table":"instances","upsert":[],"remove":[{"name":"golf","birth":{"instance_id":"a1"}}]}"#,
    );
    feed(
        &mut replay,
        20,
        r#"{"type":"synced","seq":2,"at":20,"counts":{}}"#,
    );
    assert!(replay.instances.is_empty());
    assert_eq!(replay.synced_at, Some(20));
}

#[test]
fn services_lines_follow_their_row_ride_in_the_keyframe_and_go_with_it() {
    let mut replay = Replay::recording();
    feed(&mut replay, 10, r#"{"type":"reset","seq":1}"#);
    feed(
        &mut replay,
        10,
        &format!(r#"{{"type":"rows","seq":1,"table":"instances","upsert":[{ROW}],"remove":[]}}"#),
    );
    feed(
        &mut replay,
        10,
        r#"{"type":"synced","seq":1,"at":10,"counts":{}}"#,
    );
    let key = ("golf".to_owned(), Some("a1".to_owned()));
    assert_eq!(replay.take_changed(), vec![key.clone()]);
    assert_eq!(replay.take_changed(), Vec::new());
    let web = serde_json::json!({"name": "web", "pid": 7, "alive": false, "origin": null,
        "port": 8080, "stage": "unknown", "log_path": null});
    assert_eq!(
        replay.services_line(&key, Vec::new()),
        None,
        "none, as recorded"
    );
    let line = replay
        .services_line(&key, vec![web.clone()])
        .expect("a change");
    assert_eq!(
        line,
        r#"{"type":"services","name":"golf","instance_id":"a1","services":[{"name":"web","pid":7,"alive":false,"origin":null,"port":8080,"stage":"unknown","log_path":null}]}"#
    );
    feed(&mut replay, 11, &line);
    assert_eq!(
        replay.services_of("golf", Some("a1")),
        std::slice::from_ref(&web)
    );
    assert_eq!(
        replay.services_of("golf", None),
        &[] as &[serde_json::Value]
    );
    assert_eq!(replay.services_line(&key, vec![web.clone()]), None);
    assert_eq!(replay.keyframe().last(), Some(&line));
    // A reader's replay keeps no changes.
    let mut reader = Replay::new();
    for line in replay.keyframe() {
        feed(&mut reader, 12, &line);
    }
    assert_eq!(reader.services_of("golf", Some("a1")), &[web]);
    assert_eq!(reader.take_changed(), Vec::new());
    feed(
        &mut replay,
        20,
        r#"{"type":"rows","seq":2,"table":"instances","upsert":[],"remove":[{"name":"golf","birth":{"instance_id":"a1"}}]}"#,
    );
    feed(
        &mut replay,
        20,
        r#"{"type":"synced","seq":2,"at":20,"counts":{}}"#,
    );
    assert!(replay.services.is_empty());
}

#[test]
fn a_host_name_names_a_directory_of_its_own_only() {
    for good in ["fleet-1", "db1.example.com", "a", "0x"] {
        assert!(is_host_name(good), "{good}");
    }
    for bad in [
        "",
        ".",
        "..",
        "a..b",
        ".a",
        "a.",
        "-a",
        "a-",
        "A",
        "a/b",
        "a_b",
        "a b",
        &"a".repeat(64),
    ] {
        assert!(!is_host_name(bad), "{bad}");
    }
}
