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
        golf.birth.as_ref().map(|b| (
            b.instance_id().to_owned(),
            b.resource_namespace().to_owned()
        )),
        Some(("a1".to_owned(), "sl-a1".to_owned()))
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

#[test]
fn a_recording_is_known_up_to_its_last_line_plus_one_heartbeat_and_a_flush() {
    assert_eq!(
        i64::try_from(crate::model::protocol::HEARTBEAT_SECS).ok(),
        Some(GAP_SECS - 1)
    );
    // A recorder killed at 200 and restarted at 232 (a 32 s gap).
    let segments = [seg("a", 100, 200, 10), seg("b", 232, 300, 10)];
    assert_eq!(locate(&segments, 206), Found::In(0));
    assert_eq!(locate(&segments, 207), Found::Gap { from: 200, to: 232 });
    assert_eq!(
        locate(&segments, 212),
        Found::Gap { from: 200, to: 232 },
        "12 s into the gap is not recorded"
    );
    assert_eq!(gaps(&segments), vec![(200, 232)]);
}

#[test]
fn a_recorded_pause_is_a_gap_however_short() {
    let resume = "recording paused 4s (No space left on device (os error 28)); resumed: nothing recorded in between";
    assert!(is_resume("recording", resume));
    assert!(!is_resume("store", resume));
    assert!(!is_resume("recording", "recording paused"));
    let segments = [seg("a", 100, 200, 10), seg("b", 204, 300, 10)];
    assert_eq!(locate(&segments, 202), Found::In(0));
    assert_eq!(gaps(&segments), Vec::<(i64, i64)>::new());
    assert_eq!(locate_resumed(&segments, &[1], 200), Found::In(0));
    assert_eq!(
        locate_resumed(&segments, &[1], 202),
        Found::Gap { from: 200, to: 204 }
    );
    assert_eq!(locate_resumed(&segments, &[1], 204), Found::In(1));
    assert_eq!(gaps_resumed(&segments, &[1]), vec![(200, 204)]);
}

#[test]
fn a_hello_says_who_reaps_in_the_words_of_the_store_not_the_recorder() {
    let hello = r#"{"type":"hello","protocol":1,"program":"stackless-tui","version":"0.1.0","host":"db1","store":"/s.db","schema":4,"generation":"contract","read_only":true,"dry_run":false,"follow_only":false,"commands":[],"reaper":{"by":"console","pid":12458,"paused":false,"text":"reaper: off (read-only); console pid 12458 reaps now"},"max_message_bytes":65536,"heartbeat_secs":5}"#;
    let mut replay = Replay::new();
    replay.apply(10, read(hello.as_bytes()).expect("a hello"));
    let reaper = replay.reaper.as_ref().expect("the hello's reaper");
    assert_eq!(super::replay::who_reaps(reaper), "console pid 12458 reaps");
    let mut timeline = super::timeline::Timeline::new("alpha", jiff::tz::TimeZone::UTC);
    timeline.take(10, read(hello.as_bytes()).expect("a hello"));
    let texts: Vec<String> = timeline.finish().into_iter().map(|e| e.text).collect();
    assert_eq!(texts, vec!["who reaps: console pid 12458 reaps".to_owned()]);
    let nobody = crate::model::protocol::lines::ReaperLine {
        by: "nobody".to_owned(),
        ..Default::default()
    };
    assert_eq!(super::replay::who_reaps(&nobody), "nobody reaps");
}

#[test]
fn a_time_of_day_on_the_command_line_is_the_latest_one_at_or_before_now() {
    use super::cursor::parse_at;
    let utc = jiff::tz::TimeZone::UTC;
    // 2026-12-06T10:48:00Z
    let now = 1_796_554_080;
    assert_eq!(parse_at("03:12", now, &utc), Ok(1_796_526_720));
    assert_eq!(parse_at("10:40:10", now, &utc), Ok(1_796_553_610));
    assert_eq!(
        parse_at("10:50", now, &utc),
        Ok(1_796_554_200 - 86_400),
        "later today is yesterday's"
    );
    assert_eq!(parse_at("10m ago", now, &utc), Ok(now - 600));
    assert_eq!(
        parse_at("soon", now, &utc),
        Err(TimeError("soon".to_owned()))
    );
}

#[test]
fn the_audited_teardowns_join_the_recorded_activity_once_oldest_first() {
    use crate::model::activity::{Activity, ActivityKind, Actor};
    let recorded = vec![
        Activity::new(
            10,
            Actor::Observed,
            "alpha",
            ActivityKind::Tombstoned,
            String::new(),
        ),
        Activity::new(
            12,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "exit 1".to_owned(),
        ),
    ];
    let audited = vec![
        Activity::new(
            9,
            Actor::Reaper,
            "alpha",
            ActivityKind::Reaped,
            "down succeeded in 2.0s".to_owned(),
        ),
        Activity::new(
            12,
            Actor::Reaper,
            "golf",
            ActivityKind::Failed,
            "exit 1".to_owned(),
        ),
    ];
    let merged = super::reading::merge_audited(recorded, audited);
    let seen: Vec<(i64, String)> = merged
        .iter()
        .map(|a| (a.at, format!("{} {} {}", a.actor, a.instance, a.kind)))
        .collect();
    assert_eq!(
        seen,
        vec![
            (9, "reaper alpha reaped".to_owned()),
            (10, "observed alpha tombstoned".to_owned()),
            (12, "reaper golf failed".to_owned()),
        ]
    );
}

#[test]
fn a_time_inside_a_timeline_line_off_the_cursors_day_has_its_date() {
    use super::timeline::Timeline;
    let utc = jiff::tz::TimeZone::UTC;
    // 2026-11-29T13:45:59Z and 2026-12-06T10:41:51Z.
    let created = 1_795_959_959;
    let cursor = 1_796_553_711;
    assert_eq!(
        super::timeline::clock_on(created, cursor, &utc),
        "2026-11-29 13:45:59"
    );
    assert_eq!(
        super::timeline::clock_on(cursor - 60, cursor, &utc),
        "10:40:51"
    );
    let row = r#"{"type":"rows","seq":1,"table":"instances","upsert":[{"name":"alpha","birth":{"instance_id":"b1"},"dns_safe":true,"substrate":"local","status":"active","created_at":1795959959,"tombstoned_at":null,"lease":null,"lock":null,"dirty":null,"failed_up":false,"services_dead":0,"gc":null}],"remove":[]}"#;
    let mut timeline = Timeline::new("alpha", utc).at_cursor(cursor);
    timeline.take(
        cursor - 10,
        read(b"{\"type\":\"reset\",\"seq\":1}").expect("reset"),
    );
    timeline.take(cursor - 10, read(row.as_bytes()).expect("rows"));
    timeline.take(
        cursor - 10,
        read(b"{\"type\":\"synced\",\"seq\":1}").expect("synced"),
    );
    let entries = timeline.finish();
    assert_eq!(
        entries.first().map(|e| e.text.as_str()),
        Some("in the store when recorded: active, created 2026-11-29 13:45:59, no lease")
    );
}

/// alpha's row with `status` (as the recording holds it).
fn alpha_rows(seq: u64, status: &str) -> String {
    format!(
        r#"{{"type":"rows","seq":{seq},"table":"instances","upsert":[{{"name":"alpha","birth":{{"instance_id":"b1"}},"dns_safe":true,"substrate":"local","status":"{status}","created_at":100,"tombstoned_at":null,"lease":null,"lock":null,"dirty":null,"failed_up":false,"services_dead":0,"gc":null}}],"remove":[]}}"#
    )
}

#[test]
fn a_store_restored_in_place_is_said_in_the_banner_and_in_t_not_as_a_creation() {
    let utc = jiff::tz::TimeZone::UTC;
    let reason = "the store file was rewritten in place (restored from a copy, or truncated)";
    // 2026-12-06T10:41:51Z.
    let restored = 1_796_553_711;
    let lines = [
        (restored - 60, r#"{"type":"reset","seq":1}"#.to_owned()),
        (restored - 60, alpha_rows(1, "tombstoned")),
        (restored - 60, r#"{"type":"synced","seq":1}"#.to_owned()),
        (
            restored,
            format!(r#"{{"type":"reset","seq":2,"reason":"{reason}"}}"#),
        ),
        (restored, alpha_rows(2, "active")),
        (restored, r#"{"type":"synced","seq":2}"#.to_owned()),
    ];
    let mut timeline = super::timeline::Timeline::new("alpha", utc.clone()).at_cursor(restored + 5);
    let mut reading = super::reading::Reading::new(restored + 5).in_zone(utc.clone());
    let mut before = super::reading::Reading::new(restored - 1).in_zone(utc);
    for (t, line) in &lines {
        timeline.take(*t, read(line.as_bytes()).expect("a line"));
        reading.take(*t, read(line.as_bytes()).expect("a line"));
        before.take(*t, read(line.as_bytes()).expect("a line"));
    }
    let texts: Vec<(i64, String)> = timeline
        .finish()
        .into_iter()
        .map(|e| (e.at, e.text))
        .collect();
    assert_eq!(
        texts.last(),
        Some(&(
            restored,
            "the store was read anew (restored in place): status tombstoned -> active".to_owned()
        ))
    );
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(
        reading.frame(super::cursor::Span::default()).banners,
        vec![format!("store restored in place at 10:41:51: {reason}")]
    );
    assert_eq!(
        before.frame(super::cursor::Span::default()).banners,
        Vec::<String>::new()
    );
}
