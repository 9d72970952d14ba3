use super::*;

fn hello(protocol: u64, beat: i64) -> Line {
    Line::Hello {
        protocol: Some(protocol),
        heartbeat_secs: Some(beat),
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
        (State::Connected, 1002, Some(1002))
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
    assert_eq!((link.state, link.last_line), (State::Stale, 1002));
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
    assert_eq!(link.state, State::Stale);
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
        assert_eq!((link.state, link.error.clone()), (State::Connecting, None));
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
            (State::Failed, 12, Some("said"), None)
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
        assert_eq!((link.state, link.retry_at), (State::Stale, Some(13)));
    }
}

#[test]
fn another_protocol_fails_the_host() {
    let mut link = Link::new(0);
    assert!(link.line(3, &hello(2, 5)));
    assert_eq!(
        host_message("h", &link),
        r#"{"type":"host","host":"h","state":"failed","since":3,"error":"older protocol: its hello says protocol 2, this console reads 1; install this stackless-tui there","retry_at":null}"#
    );
    let mut link = Link::new(0);
    assert!(link.fail(4, "a line over 65536 bytes".into()));
    assert!(!link.fail(5, "again".into()));
    assert_eq!((link.state, link.since), (State::Failed, 4));
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
            Line::Other
        ))
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
    assert_eq!(link.state, State::Stale);
}
