use super::*;

fn hello(protocol: u64, beat: i64) -> Line {
    Line::Hello {
        protocol: Some(protocol),
        heartbeat_secs: Some(beat),
        now: None,
    }
}

#[test]
fn a_hello_connects_and_silence_makes_it_stale() {
    let mut link = Link::new(1000);
    assert_eq!(
        host_message("fleet-1", &link),
        r#"{"type":"host","host":"fleet-1","state":"connecting","since":1000,"error":null,"retry_at":null}"#
    );
    assert!(!link.line(1001, &Line::Other));
    assert!(link.line(1002, &hello(1, 5)));
    assert_eq!(
        (link.state, link.since, link.connected_at),
        (LinkState::Connected, 1002, Some(1002))
    );
    // 14 s quiet: still connected; 15 s (3 x 5): stale, retried in 1 s.
    assert!(!link.check_silence(1016));
    assert!(link.check_silence(1017));
    assert_eq!(
        host_message("fleet-1", &link),
        r#"{"type":"host","host":"fleet-1","state":"stale","since":1017,"error":"no line for 15 s (3 x heartbeat_secs 5)","retry_at":1018}"#
    );
    assert!(!link.check_silence(1100));
    // A line the killed connection left queued changes nothing.
    assert!(!link.line(1017, &hello(1, 5)));
    assert_eq!((link.state, link.last_line), (LinkState::Stale, 1002));
    assert!(!link.due(1017));
    assert!(link.due(1018));
}

#[test]
fn the_heartbeat_of_the_hello_sets_the_silence() {
    let mut link = Link::new(0);
    assert!(link.line(0, &hello(1, 2)));
    assert!(!link.check_silence(5));
    assert!(link.check_silence(6));
    // Connecting without a hello: 3 x the default 5 s.
    let mut link = Link::new(0);
    assert!(!link.check_silence(14));
    assert!(link.check_silence(15));
    assert_eq!(link.state, LinkState::Stale);
}

#[test]
fn the_backoff_doubles_to_60_and_resets_after_a_healthy_run() {
    let mut link = Link::new(0);
    let mut now = 0;
    let mut delays = Vec::new();
    for _ in 0..8 {
        assert!(link.ended(now, Some(Failure::Closed), "closed".into()));
        let at = link.retry_at.expect("retry");
        delays.push(at - now);
        assert!(!link.ended(at, None, "again".into()));
        now = at;
        link.restarted(now);
        assert_eq!(
            (link.state, link.error.clone()),
            (LinkState::Connecting, None)
        );
    }
    assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
    // A run of 59 s does not reset it; one of 60 s does.
    assert!(link.line(now, &hello(1, 5)));
    assert!(link.ended(now + 59, None, "x".into()));
    assert_eq!(link.retry_at, Some(now + 59 + 60));
    link.restarted(now + 200);
    assert!(link.line(now + 200, &hello(1, 5)));
    assert!(link.ended(now + 260, None, "x".into()));
    assert_eq!(link.retry_at, Some(now + 261));
    assert_eq!(link.backoff, 2);
}

#[test]
fn permanent_failures_fail_and_are_not_retried() {
    for failure in [
        Failure::HostKey,
        Failure::Auth,
        Failure::NotInstalled,
        Failure::CannotStart,
        Failure::NotExecutable,
        Failure::OlderRemote,
        Failure::NoStreams,
    ] {
        let mut link = Link::new(10);
        assert!(link.ended(12, Some(failure), "said".into()));
        assert_eq!(
            (link.state, link.since, link.error.as_deref(), link.retry_at),
            (LinkState::Failed, 12, Some("said"), None)
        );
        assert!(!link.due(1_000_000));
        assert!(!link.check_silence(1_000_000));
    }
    for failure in [
        Failure::Closed,
        Failure::Connect,
        Failure::Signalled,
        Failure::BySignal,
        Failure::Ssh,
    ] {
        let mut link = Link::new(10);
        assert!(link.ended(12, Some(failure), "said".into()));
        assert_eq!((link.state, link.retry_at), (LinkState::Stale, Some(13)));
    }
}

#[test]
fn another_protocol_fails_the_host_named_newer_or_older() {
    let mut link = Link::new(0);
    assert!(link.line(3, &hello(2, 5)));
    assert_eq!(
        host_message("h", &link),
        r#"{"type":"host","host":"h","state":"failed","since":3,"error":"protocol 2 is newer than this console's 1: upgrade stackless-tui here","retry_at":null}"#
    );
    let mut link = Link::new(0);
    assert!(link.line(3, &hello(0, 5)));
    assert_eq!(
        link.error.as_deref(),
        Some("protocol 0 is older than this console's 1: upgrade stackless-tui there")
    );
    let mut link = Link::new(0);
    let none = Line::Hello {
        protocol: None,
        heartbeat_secs: None,
        now: None,
    };
    assert!(link.line(3, &none));
    assert_eq!(
        link.error.as_deref(),
        Some("its hello names no protocol (this console reads 1): not the protocol")
    );
    let mut link = Link::new(0);
    assert!(link.fail(4, "a line over 65536 bytes".into()));
    assert!(!link.fail(5, "again".into()));
    assert_eq!((link.state, link.since), (LinkState::Failed, 4));
}

#[test]
fn every_line_is_tagged_with_its_host_first() {
    assert_eq!(
        tag_line(
            "eu-1",
            br#"{"type":"hello","protocol":1,"heartbeat_secs":5}"#
        ),
        Ok((
            r#"{"host":"eu-1","type":"hello","protocol":1,"heartbeat_secs":5}"#.to_owned(),
            hello(1, 5)
        ))
    );
    assert_eq!(
        tag_line("eu-1", br#"{"type":"synced","seq":1,"host":"spoofed"}"#),
        Ok((
            r#"{"host":"eu-1","type":"synced","seq":1}"#.to_owned(),
            Line::Group
        ))
    );
    assert_eq!(
        tag_line("eu-1", br#"{"type":"heartbeat","at":7,"seq":1}"#).map(|(_, line)| line),
        Ok(Line::Heartbeat { at: 7 })
    );
    assert_eq!(
        tag_line("eu-1", br#"{"type":"activity","at":7}"#).map(|(_, line)| line),
        Ok(Line::Other)
    );
    assert_eq!(
        tag_line("eu-1", b"[1]"),
        Err(
            "its stream sent a line that is not a JSON object (3 bytes): not the protocol"
                .to_owned()
        )
    );
    assert!(tag_line("eu-1", b"\xff{").is_err());
    assert_eq!(MAX_LINE, 65536);
}

/// `hello.heartbeat_secs` is the host's word.
/// A hostile or broken one (`i64::MAX`) must neither overflow (`3 x
/// heartbeat_secs`: a panic in a debug build, the whole console gone)
/// nor keep a silent (stopped, `SIGSTOP`) host connected for ever: a day of
/// silence makes it stale.
#[test]
fn a_huge_heartbeat_neither_overflows_nor_keeps_a_silent_host_connected() {
    let mut link = Link::new(0);
    assert!(link.line(0, &hello(1, i64::MAX)));
    assert!(link.check_silence(86_400));
    assert_eq!(link.state, LinkState::Stale);
}

fn hello_at(host_now: i64) -> Line {
    Line::Hello {
        protocol: Some(1),
        heartbeat_secs: Some(5),
        now: Some(host_now),
    }
}

#[test]
fn a_second_hello_fails_the_host_with_the_reason() {
    let mut link = Link::new(0);
    assert!(link.line(1, &hello(1, 5)));
    assert!(!link.line(2, &Line::Group));
    assert!(link.line(3, &hello(1, 5)));
    assert_eq!(
        (link.state, link.since, link.error.as_deref()),
        (LinkState::Failed, 3, Some("a second hello"))
    );
    // A new connection's hello is its first.
    let mut link = Link::new(0);
    assert!(link.line(1, &hello(1, 5)));
    assert!(link.ended(2, None, "closed".into()));
    link.restarted(4);
    assert!(link.line(5, &hello(1, 5)));
    assert_eq!(link.state, LinkState::Connected);
}

#[test]
fn rows_before_hello_fail_the_host_with_the_reason() {
    let mut link = Link::new(0);
    assert!(!link.line(1, &Line::Other));
    assert!(!link.line(1, &Line::Heartbeat { at: 1 }));
    assert!(link.line(2, &Line::Group));
    assert_eq!(
        (link.state, link.error.as_deref()),
        (LinkState::Failed, Some("rows before hello"))
    );
    assert_eq!(
        host_message("h", &link),
        r#"{"type":"host","host":"h","state":"failed","since":2,"error":"rows before hello","retry_at":null}"#
    );
}

#[test]
fn the_host_clock_skew_is_measured_from_hello_and_heartbeats() {
    let mut link = Link::new(1_000);
    // An older agent's hello has no clock.
    assert!(link.line(1_000, &hello(1, 5)));
    assert_eq!(link.skew, None);
    // The first heartbeat measures it: an hour ahead.
    // (Not a state change: the `host` message of `snapshot --follow` is
    // not repeated for it.)
    assert!(!link.line(1_005, &Line::Heartbeat { at: 4_605 }));
    assert_eq!(link.skew, Some(3_600));
    // A second either way is the reading's own error: no change.
    assert!(!link.line(1_010, &Line::Heartbeat { at: 4_611 }));
    assert_eq!(link.skew, Some(3_600));
    assert!(!link.line(1_015, &Line::Heartbeat { at: 4_614 }));
    assert_eq!(link.skew, Some(3_600));
    // Moved by more: taken.
    assert!(!link.line(1_020, &Line::Heartbeat { at: 4_617 }));
    assert_eq!(link.skew, Some(3_597));
    // A hello's now measures it at once, and it outlives a reconnect.
    let mut link = Link::new(1_000);
    assert!(link.line(1_001, &hello_at(991)));
    assert_eq!(link.skew, Some(-10));
    assert!(link.ended(1_002, None, "closed".into()));
    link.restarted(1_003);
    assert_eq!(link.skew, Some(-10));
}

#[test]
fn reconnects_of_hosts_lost_together_are_spread() {
    // Seed 0 (a lone host) is never spread.
    assert_eq!(spread(0, 100, 60), 0);
    // Within a quarter of the delay, and not all the same.
    let spreads: Vec<i64> = (1..=64).map(|seed| spread(seed, 100, 60)).collect();
    assert!(spreads.iter().all(|s| (0..=15).contains(s)));
    let distinct: std::collections::BTreeSet<i64> = spreads.iter().copied().collect();
    assert!(distinct.len() >= 8, "{distinct:?}");
    // Under 4 s of delay there is nothing to spread.
    assert_eq!(spread(7, 100, 3), 0);
    let mut link = Link::new(0).seeded(5);
    for _ in 0..6 {
        let now = link.retry_at.unwrap_or(0);
        assert!(link.ended(now, None, "closed".into()));
        link.restarted(link.retry_at.expect("retry"));
    }
    assert!(link.ended(100, None, "closed".into()));
    assert_eq!(link.retry_at, Some(100 + 60 + spread(5, 100, 60)));
}

#[test]
fn a_wave_takes_hosts_never_started_first_then_the_longest_due() {
    // Hosts 0 and 1 retried since 100 and 90; 2 and 5 never started.
    let candidates = [(0, Some(100)), (1, Some(90)), (2, None), (5, None)];
    assert_eq!(next_wave(candidates.into_iter(), 3), [2, 5, 1]);
    assert_eq!(next_wave(candidates.into_iter(), 10), [2, 5, 1, 0]);
    assert_eq!(next_wave(candidates.into_iter(), 0), Vec::<usize>::new());
    assert_eq!(MAX_CONNECTING, 32);
}
