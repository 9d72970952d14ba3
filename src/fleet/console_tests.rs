//! The fleet console's pure parts: commands routed, refused and written,
//! lines queued, links as the view takes them.

use std::sync::mpsc;

use serde_json::{Value, json};

use super::super::conn::*;
use super::super::follow::Event as Read;
use super::super::hosts::*;
use super::super::link::{Line, Link as Rules};
use super::*;
use crate::model::fleet::notes::Unanswered;
use crate::model::fleet::{Link, LinkState};

/// `message` as its JSON value.
fn json_of(message: Box<crate::model::fleet::wire::Message>) -> Value {
    serde_json::to_value(*message).unwrap()
}

#[test]
fn a_refused_command_is_answered_with_its_id() {
    let refused = |line: &str, why: &str| json_of(refused(line, why));
    assert_eq!(
        refused(
            r#"{"id":7,"cmd":"reap","name":"alpha","birth":3}"#,
            "fleet-2 is not reading its commands (64 waiting)"
        ),
        json!({
            "type": "reply", "id": 7, "ok": false,
            "error": {"kind": "refused", "message": "fleet-2 is not reading its commands (64 waiting)"},
        })
    );
    assert_eq!(
        refused(r#"{"id":"a-1","cmd":"ping"}"#, "m")["id"],
        json!("a-1")
    );
    assert_eq!(refused("not json", "m")["id"], Value::Null);
    assert_eq!(refused(r#"{"cmd":"ping"}"#, "m")["id"], Value::Null);
}

/// A command waits for its host's writer up to [`COMMAND_QUEUE`]; the
/// next is refused at once (its id in the reply), and so is one for a
/// host with no connection or a writer gone.
#[test]
fn commands_beyond_the_queue_are_refused_at_once() {
    let (commands, orders) = mpsc::sync_channel::<String>(COMMAND_QUEUE);
    for id in 0..COMMAND_QUEUE {
        let line = format!(r#"{{"id":{id},"cmd":"ping"}}"#);
        assert_eq!(
            route(Some(&commands), "fleet-2", LinkState::Connected, line),
            Ok(())
        );
    }
    let full = route(
        Some(&commands),
        "fleet-2",
        LinkState::Connected,
        r#"{"id":64,"cmd":"reap","name":"alpha","birth":3}"#.to_owned(),
    );
    assert_eq!(
        full.map_err(json_of),
        Err(json!({
            "type": "reply", "id": 64, "ok": false,
            "error": {"kind": "refused", "message": "fleet-2 is not reading its commands (64 waiting)"},
        }))
    );
    assert_eq!(orders.try_iter().count(), COMMAND_QUEUE);
    drop(orders);
    assert_eq!(
        route(
            Some(&commands),
            "fleet-2",
            LinkState::Connected,
            r#"{"id":65}"#.to_owned()
        )
        .map_err(json_of)
        .unwrap_err()["error"]["message"],
        "fleet-2 is not connected: nothing was sent"
    );
    assert_eq!(
        route(None, "fleet-3", LinkState::Stale, r#"{"id":66}"#.to_owned())
            .map_err(json_of)
            .unwrap_err()["error"]["message"],
        "fleet-3 is stale: nothing was sent"
    );
}

/// Each command goes to ssh's stdin as one line, in order, until the
/// channel closes.
#[test]
fn commands_are_written_one_line_each() {
    let (commands, orders) = mpsc::sync_channel::<String>(COMMAND_QUEUE);
    for line in [r#"{"id":1,"cmd":"ping"}"#, r#"{"id":2,"cmd":"ping"}"#] {
        commands.try_send(line.to_owned()).unwrap();
    }
    drop(commands);
    let mut written = Vec::new();
    write_commands(&mut written, &orders);
    assert_eq!(
        String::from_utf8(written).unwrap(),
        "{\"id\":1,\"cmd\":\"ping\"}\n{\"id\":2,\"cmd\":\"ping\"}\n"
    );
}

#[test]
fn links_reach_the_view_as_they_are() {
    let mut link = Rules::new(100);
    assert_eq!(
        view_link(&link),
        Link {
            state: LinkState::Connecting,
            since: 100,
            error: None,
            retry_at: None,
            skew: None,
        }
    );
    link.ended(105, None, "gone".to_owned());
    assert_eq!(
        view_link(&link),
        Link {
            state: LinkState::Stale,
            since: 105,
            error: Some("gone".to_owned()),
            retry_at: Some(106),
            skew: None,
        }
    );
    link.skew = Some(3_600);
    assert_eq!(view_link(&link).skew, Some(3_600));
    link.fail(107, "bad".to_owned());
    assert_eq!(view_link(&link).state, LinkState::Failed);
}

#[test]
fn queued_lines_are_parsed_once() {
    let HostEvent::Line(message, line) = queued(Read::Line(
        br#"{"type":"hello","protocol":1,"heartbeat_secs":5}"#.to_vec(),
    )) else {
        panic!("not a line");
    };
    assert!(matches!(
        &*message,
        crate::model::fleet::wire::Message::Hello(hello) if hello.protocol == Some(1)
    ));
    assert_eq!(
        line,
        Line::Hello {
            protocol: Some(1),
            heartbeat_secs: Some(5),
            now: None,
        }
    );
    for (raw, want) in [
        (
            br#"{"type":"hello","protocol":2,"now":77}"#.as_slice(),
            Line::Hello {
                protocol: Some(2),
                heartbeat_secs: None,
                now: Some(77),
            },
        ),
        (br#"{"type":"reset","seq":1}"#.as_slice(), Line::Group),
        (br#"{"type":"synced","seq":1}"#.as_slice(), Line::Group),
        (
            br#"{"type":"rows","seq":1,"table":"instances","upsert":[],"remove":[]}"#.as_slice(),
            Line::Group,
        ),
        (
            br#"{"type":"heartbeat","at":9,"seq":1}"#.as_slice(),
            Line::Heartbeat { at: 9 },
        ),
        (
            br#"{"type":"banner_cleared","id":"x"}"#.as_slice(),
            Line::Other,
        ),
    ] {
        let HostEvent::Line(_, line) = queued(Read::Line(raw.to_vec())) else {
            panic!("not a line");
        };
        assert_eq!(line, want);
    }
    let HostEvent::NotProtocol(error) = queued(Read::Line(b"[1]".to_vec())) else {
        panic!("a list is not the protocol");
    };
    assert_eq!(
        error,
        "its stream sent a line that is not a JSON object (3 bytes): not the protocol"
    );
    assert!(matches!(queued(Read::TooLong), HostEvent::TooLong));
}

#[test]
fn a_command_unanswered_when_the_connection_ends_is_told_lost() {
    let plan = crate::launcher::plan::Plan {
        target: crate::launcher::plan::Target::parse("ssh://fleet-2").unwrap(),
        remote_bin: "stackless-tui".into(),
        ssh_config: None,
        forwarded: Vec::new(),
        mode: crate::launcher::plan::Mode::Serve,
        not_applied: Vec::new(),
    };
    let (now_s, now_ms) = now();
    let mut app = FleetState::new(vec!["fleet-2".into()], now_ms);
    let mut host = Host {
        name: "fleet-2",
        plan: &plan,
        link: Rules::new(now_s),
        generation: 1,
        conn: None,
        waiting: false,
        starting: false,
        unanswered: Unanswered::default(),
    };
    let hello = br#"{"type":"hello","protocol":1,"heartbeat_secs":5}"#;
    apply(0, &mut host, queued(Read::Line(hello.to_vec())), &mut app);
    assert_eq!(host.link.state, LinkState::Connected);
    // Two sent; the pause answered, the reap not.
    assert_eq!(
        host.unanswered
            .sent(r#"{"id":"r1","cmd":"reap","name":"alpha"}"#),
        None
    );
    assert_eq!(host.unanswered.sent(r#"{"id":"p1","cmd":"pause"}"#), None);
    let reply = br#"{"type":"reply","id":"p1","ok":true}"#;
    apply(0, &mut host, queued(Read::Line(reply.to_vec())), &mut app);
    assert_eq!(host.unanswered.len(), 1);
    // Its ssh ends: the link goes stale, the reap is told lost.
    apply(
        0,
        &mut host,
        HostEvent::Ended(Ok(255), String::new()),
        &mut app,
    );
    assert_eq!(host.link.state, LinkState::Stale);
    let lines: Vec<(String, String, String)> = app
        .fleet()
        .activity
        .iter()
        .map(|line| {
            (
                line.kind.clone(),
                line.instance.clone(),
                line.detail.clone(),
            )
        })
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        (
            "lost".to_owned(),
            "alpha".to_owned(),
            "command reap alpha lost with fleet-2's connection: its outcome is unknown; see \
             the host's Activity"
                .to_owned()
        )
    );
    // Then the link's own note: the host lost.
    assert_eq!((lines[1].0.as_str(), lines[1].1.as_str()), ("lost", ""));
    assert!(host.unanswered.is_empty());
}

#[test]
fn the_hosts_clock_skew_reaches_the_view() {
    let plan = crate::launcher::plan::Plan {
        target: crate::launcher::plan::Target::parse("ssh://fleet-1").unwrap(),
        remote_bin: "stackless-tui".into(),
        ssh_config: None,
        forwarded: Vec::new(),
        mode: crate::launcher::plan::Mode::Serve,
        not_applied: Vec::new(),
    };
    let (start, now_ms) = now();
    let mut app = FleetState::new(vec!["fleet-1".into()], now_ms);
    let mut host = Host {
        name: "fleet-1",
        plan: &plan,
        link: Rules::new(start),
        generation: 1,
        conn: None,
        waiting: false,
        starting: false,
        unanswered: Unanswered::default(),
    };
    // The host's clock an hour ahead of this machine's, as its hello says.
    let host_now = start + 3_600;
    let hello = format!(r#"{{"type":"hello","protocol":1,"now":{host_now}}}"#);
    apply(
        0,
        &mut host,
        queued(Read::Line(hello.into_bytes())),
        &mut app,
    );
    let end = now().0;
    let skew = app.fleet().hosts[0].link.skew.expect("measured");
    assert!(
        (host_now - end..=host_now - start).contains(&skew),
        "{skew}"
    );
    // A heartbeat 10 minutes further off: taken, and the view told.
    let beat = format!(r#"{{"type":"heartbeat","at":{},"seq":1}}"#, host_now + 600);
    apply(
        0,
        &mut host,
        queued(Read::Line(beat.into_bytes())),
        &mut app,
    );
    let seen = app.fleet().hosts[0].link.skew.expect("measured");
    assert!((skew + 600 - 2..=skew + 600).contains(&seen), "{seen}");
    assert_eq!(host.link.skew, Some(seen));
}

/// Through the one render loop's fleet carrier: an action's `y` on a row
/// whose host has no connection yet (its link `connecting`) sends nothing
/// and is refused at once, the reason said.
#[test]
fn the_carrier_refuses_at_once_what_cannot_go_to_its_host() {
    use crossterm::event::{Event as Term, KeyCode, KeyEvent, KeyModifiers};

    use super::FleetCarrier;
    use crate::console::render_loop::Carrier as _;
    use crate::event::Event;
    use crate::ui::App;

    let hosts = crate::launcher::fleet::from_controllers(&["ssh://fleet-1".to_owned()]).unwrap();
    let plans = vec![crate::launcher::plan::Plan {
        target: crate::launcher::plan::Target::parse("ssh://fleet-1").unwrap(),
        remote_bin: "stackless-tui".into(),
        ssh_config: None,
        forwarded: Vec::new(),
        mode: crate::launcher::plan::Mode::Serve,
        not_applied: Vec::new(),
    }];
    let (events, _received) = tokio::sync::mpsc::unbounded_channel();
    let (now_s, now_ms) = now();
    // The view took fleet-1's rows; the wiring has no connection for it.
    let mut fleet = FleetState::new(vec!["fleet-1".into()], now_ms);
    fleet.link(
        0,
        Link {
            state: LinkState::Connected,
            since: now_s,
            error: None,
            retry_at: None,
            skew: None,
        },
        now_ms,
    );
    for line in [
        json!({"type":"hello","protocol":1,"heartbeat_secs":5,"commands":["reap","ping"],
            "teardown":["stackless","down","{name}","--json"],"stackless":"stackless"}),
        json!({"type":"reset","seq":1}),
        json!({"type":"rows","seq":1,"table":"instances","remove":[],"upsert":[
            {"name":"alpha","birth":{"instance_id":"a1","resource_namespace":"sl-x"},
             "dns_safe":true,"substrate":"local","status":"active","created_at":now_s - 600,
             "tombstoned_at":null,"lease":{"duration_secs":60,"expires_at":now_s - 60},
             "lock":null,"dirty":false,"failed_up":false,"services_dead":0,"gc":null}]}),
        json!({"type":"synced","seq":1,"at":now_s}),
    ] {
        fleet.line(0, &line, now_ms);
    }
    let mut app = App::over_fleet(fleet, super::fleet_config(1), now_s);
    let mut carrier = FleetCarrier {
        hosts: Hosts::new(&hosts, &plans, events).unwrap(),
    };
    let read = std::time::Instant::now();
    let key = |c| {
        Event::InputAt(
            Term::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
            read,
        )
    };
    carrier.handle(&mut app, key('r'));
    app.drawn(read);
    carrier.handle(&mut app, key('y'));
    // The refusal is on the App's one flash line, as a warning.
    let flash = app.flash().unwrap();
    assert_eq!(
        (flash.text.as_str(), flash.level),
        (
            "fleet-1: reap alpha refused: fleet-1 is connecting: nothing was sent",
            crate::ui::FlashLevel::Warning
        )
    );
}
