use serde_json::json;

use super::*;

fn apply(fleet: &mut Fleet, host: usize, value: &Value) -> Applied {
    let message = wire::parse(&serde_json::to_vec(value).unwrap()).unwrap();
    fleet.apply(host, message)
}

const NOW: i64 = 1_764_655_200;

fn instance(name: &str, birth: &str, expires_at: i64) -> Value {
    json!({"name": name, "birth": {"instance_id": birth, "resource_namespace": "sl-x"},
        "dns_safe": true, "substrate": "local", "status": "active", "created_at": NOW - 600,
        "tombstoned_at": null, "lease": {"duration_secs": 3600, "expires_at": expires_at},
        "lock": null, "dirty": false, "failed_up": false, "services_dead": 0, "gc": null})
}

fn connected(fleet: &mut Fleet, host: usize) {
    fleet.hosts[host].set_link(Link {
        state: LinkState::Connected,
        since: NOW,
        error: None,
        retry_at: None,
        skew: None,
    });
    apply(
        fleet,
        host,
        &json!({"type":"hello","protocol":1,"host":"db1","schema":14,"read_only":false,
            "dry_run":false,"commands":["reap","down"],"version":"0.1.0",
            "reaper":{"by":"agent","pid":7,"paused":false,"text":"reaper: every 60s"}}),
    );
}

fn snapshot(fleet: &mut Fleet, host: usize, rows: &[Value]) {
    apply(fleet, host, &json!({"type":"reset","seq":1}));
    apply(
        fleet,
        host,
        &json!({"type":"rows","seq":1,"table":"instances","upsert":rows,"remove":[]}),
    );
    apply(fleet, host, &json!({"type":"synced","seq":1,"at":NOW}));
}

fn names(fleet: &Fleet, rows: &[RowRef]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let host = &fleet.hosts[r.host];
            format!("{}/{}", host.name, host.instances()[r.index].key.name)
        })
        .collect()
}

#[test]
fn rows_wait_for_their_synced() {
    let mut fleet = Fleet::new(vec!["a".into()], NOW);
    connected(&mut fleet, 0);
    apply(&mut fleet, 0, &json!({"type":"reset","seq":1}));
    apply(
        &mut fleet,
        0,
        &json!({"type":"rows","seq":1,"table":"instances","upsert":[instance("alpha","a1",NOW+60)],"remove":[]}),
    );
    assert!(fleet.hosts[0].instances().is_empty());
    assert_eq!(
        fleet.hosts[0].ready(NOW),
        Err("a has not sent its first snapshot yet".to_owned())
    );
    assert_eq!(
        apply(&mut fleet, 0, &json!({"type":"synced","seq":1,"at":NOW})),
        Applied::Tables
    );
    assert_eq!(fleet.hosts[0].instances().len(), 1);
    assert_eq!(fleet.hosts[0].ready(NOW).map(|h| h.schema), Ok(14));
    assert_eq!(
        fleet.hosts[0].reaper.as_ref().map(|r| r.text.as_str()),
        Some("reaper: every 60s")
    );
}

#[test]
fn a_remove_takes_the_row_of_its_birth_only() {
    let mut fleet = Fleet::new(vec!["a".into()], NOW);
    connected(&mut fleet, 0);
    snapshot(
        &mut fleet,
        0,
        &[
            instance("alpha", "a1", NOW + 60),
            instance("bravo", "b1", NOW + 60),
            instance("charlie", "c1", NOW + 60),
        ],
    );
    apply(
        &mut fleet,
        0,
        &json!({"type":"rows","seq":2,"table":"instances",
            "upsert":[instance("alpha","a2",NOW+90)],
            "remove":[{"name":"alpha","birth":"a1"},{"name":"bravo","birth":"zz"}]}),
    );
    apply(
        &mut fleet,
        0,
        &json!({"type":"synced","seq":2,"at":NOW + 1}),
    );
    let mut keys: Vec<_> = fleet.hosts[0]
        .instances()
        .iter()
        .map(|i| format!("{}@{}", i.key.name, i.key.birth.as_deref().unwrap_or("-")))
        .collect();
    keys.sort();
    assert_eq!(keys, ["alpha@a2", "bravo@b1", "charlie@c1"]);
    let key = rows::InstanceKey {
        name: "charlie".into(),
        birth: Some("c1".into()),
    };
    assert_eq!(
        fleet.hosts[0].instance(&key).map(|i| i.key.name.as_str()),
        Some("charlie")
    );
    // A reset empties what the last snapshot left.
    snapshot(&mut fleet, 0, &[instance("delta", "d1", NOW)]);
    assert_eq!(fleet.hosts[0].instances().len(), 1);
}

#[test]
fn a_stale_host_keeps_its_rows_and_refuses_actions() {
    let mut fleet = Fleet::new(vec!["fleet-3".into()], NOW);
    connected(&mut fleet, 0);
    snapshot(&mut fleet, 0, &[instance("alpha", "a1", NOW - 5)]);
    fleet.hosts[0].set_link(Link {
        state: LinkState::Stale,
        since: NOW,
        error: Some("no line for 15 s".into()),
        retry_at: Some(NOW + 2),
        skew: None,
    });
    assert_eq!(fleet.hosts[0].instances().len(), 1);
    assert_eq!(
        fleet.hosts[0].ready(NOW + 40),
        Err(
            "fleet-3 is stale (no line for 15 s): its rows are 40s old; nothing is sent until it is back"
                .to_owned()
        )
    );
    assert_eq!(fleet.hosts[0].counts(NOW), (1, 1, 1, 0));
    fleet.hosts[0].set_link(Link {
        state: LinkState::Failed,
        since: NOW,
        error: Some("host key: it changed".into()),
        retry_at: None,
        skew: None,
    });
    assert_eq!(
        fleet.hosts[0].ready(NOW),
        Err("fleet-3 failed: host key: it changed".to_owned())
    );
}

#[test]
fn operations_backoffs_and_activity_are_kept_per_host() {
    let mut fleet = Fleet::new(vec!["a".into(), "b".into()], NOW);
    connected(&mut fleet, 1);
    apply(&mut fleet, 1, &json!({"type":"reset","seq":1}));
    apply(
        &mut fleet,
        1,
        &json!({"type":"rows","seq":1,"table":"operations","upsert":[
            {"id":"op-1","instance":"alpha","verb":"down","status":"running","created_at":NOW,
             "updated_at":NOW,"error":null},
            {"id":"op-2","instance":"bravo","verb":"up","status":"failed","created_at":NOW,
             "updated_at":NOW,"error":{"code":"engine.up","message":"no"}}],"remove":[]}),
    );
    apply(
        &mut fleet,
        1,
        &json!({"type":"rows","seq":1,"table":"backoffs","upsert":[
            {"instance":"alpha","attempts":2,"last_error":"x","code":"c","summary":"c: boom",
             "remediation":null,"next_retry_at":NOW + 30}],"remove":[]}),
    );
    apply(&mut fleet, 1, &json!({"type":"synced","seq":1,"at":NOW}));
    let host = &fleet.hosts[1];
    assert_eq!(
        host.pending_operation("alpha").map(|o| o.id.clone()),
        Some(json!("op-1"))
    );
    assert_eq!(host.operations()[1].error.as_deref(), Some("engine.up: no"));
    assert_eq!(
        host.backoff("alpha").map(|b| b.summary.as_str()),
        Some("c: boom")
    );
    for i in 0..=MAX_ACTIVITY {
        let at = NOW + i64::try_from(i).unwrap_or(0);
        apply(
            &mut fleet,
            1,
            &json!({"type":"activity","at":at,"actor":"reaper","instance":"alpha",
                "kind":"reaped","detail":"down in 1s"}),
        );
    }
    assert_eq!(fleet.activity.len(), MAX_ACTIVITY);
    assert_eq!(
        fleet.activity.front().map(|a| (a.host, a.at)),
        Some((1, NOW + 1))
    );
}

#[test]
fn a_group_past_its_bound_is_dropped_and_noted() {
    // The defaults: 250,000 rows a group, as many instances a host.
    assert_eq!(
        Bounds::default(),
        Bounds {
            host_rows: 250_000,
            group_rows: 250_000
        }
    );
    let bounds = Bounds {
        host_rows: 1_000,
        group_rows: 100,
    };
    let mut fleet = Fleet::with_bounds(vec!["a".into()], NOW, bounds);
    connected(&mut fleet, 0);
    let keys: Vec<Value> = (0..bounds.group_rows)
        .map(|i| json!({"name": format!("n{i}"), "birth": null}))
        .collect();
    apply(
        &mut fleet,
        0,
        &json!({"type":"rows","seq":1,"table":"instances","upsert":[],"remove":keys}),
    );
    assert_eq!(fleet.hosts[0].note, None);
    apply(
        &mut fleet,
        0,
        &json!({"type":"rows","seq":1,"table":"instances","upsert":[instance("x","x1",NOW)],"remove":[]}),
    );
    assert_eq!(
        fleet.hosts[0].note.as_deref(),
        Some("its stream sent over 100 rows without a synced: dropped")
    );
    assert!(fleet.hosts[0].group.is_empty());
}

#[test]
fn the_sort_runs_across_hosts_over_the_rows_kept() {
    let mut fleet = Fleet::new(vec!["fleet-1".into(), "fleet-2".into()], NOW);
    for host in 0..2 {
        connected(&mut fleet, host);
    }
    snapshot(
        &mut fleet,
        0,
        &[
            instance("alpha", "a1", NOW + 300),
            instance("bravo", "b1", NOW - 10),
        ],
    );
    snapshot(
        &mut fleet,
        1,
        &[
            instance("alpha", "a9", NOW + 100),
            instance("zulu", "z1", NOW - 50),
        ],
    );
    // A flag per row of each host, as the console's filter keeps them
    // (`crate::ui::app::over_fleet`): here by a rule of the test's own.
    let kept = |keep: &dyn Fn(&str, &super::rows::Instance, i64) -> bool| -> Vec<Vec<bool>> {
        fleet
            .hosts
            .iter()
            .map(|host| {
                let now = host.host_now(NOW);
                host.instances()
                    .iter()
                    .map(|row| keep(&host.name, row, now))
                    .collect()
            })
            .collect()
    };
    let all = kept(&|_, _, _| true);
    assert_eq!(
        names(&fleet, &fleet.order(&all, SortKey::Host, false)),
        [
            "fleet-1/alpha",
            "fleet-1/bravo",
            "fleet-2/alpha",
            "fleet-2/zulu"
        ]
    );
    assert_eq!(
        names(&fleet, &fleet.order(&all, SortKey::LeaseExpiry, false)),
        [
            "fleet-2/zulu",
            "fleet-1/bravo",
            "fleet-2/alpha",
            "fleet-1/alpha"
        ]
    );
    assert_eq!(
        names(&fleet, &fleet.order(&all, SortKey::Name, true)),
        [
            "fleet-2/zulu",
            "fleet-1/bravo",
            "fleet-2/alpha",
            "fleet-1/alpha"
        ]
    );
    let expired = kept(&|_, row, now| row.expired(now));
    assert_eq!(
        names(&fleet, &fleet.order(&expired, SortKey::Host, false)),
        ["fleet-1/bravo", "fleet-2/zulu"]
    );
    let host = kept(&|host, row, _| host == "fleet-2" && row.key.name != "zulu");
    assert_eq!(
        names(&fleet, &fleet.order(&host, SortKey::Host, false)),
        ["fleet-2/alpha"]
    );
    let word = kept(&|_, row, _| row.key.name.contains("alp"));
    assert_eq!(
        names(&fleet, &fleet.order(&word, SortKey::Host, false)),
        ["fleet-1/alpha", "fleet-2/alpha"]
    );
}

#[test]
fn a_row_without_a_name_is_not_the_protocol_and_a_hostile_name_is_never_acted_upon() {
    let line =
        json!({"type":"rows","seq":1,"table":"instances","upsert":[{"birth": null}],"remove":[]});
    let error = wire::parse(&serde_json::to_vec(&line).unwrap()).unwrap_err();
    assert!(
        error.starts_with(
            "its stream sent a rows message that is not protocol 1 (missing field `name`"
        ),
        "{error}"
    );
    assert_eq!(
        wire::parse(b"[1]"),
        Err(
            "its stream sent a line that is not a JSON object (3 bytes): not the protocol"
                .to_owned()
        )
    );
    let hostile = json!({"type":"rows","seq":1,"table":"instances",
        "upsert":[{"name": "a;rm -rf", "dns_safe": true}],"remove":[]});
    let Ok(wire::Message::Rows(wire::Rows::Instances(rows))) =
        wire::parse(&serde_json::to_vec(&hostile).unwrap())
    else {
        panic!("not rows");
    };
    assert!(rows.upsert[0].dns_safe, "the host's claim, as sent");
    let row = rows::Instance::from(rows.upsert[0].clone());
    assert!(!row.dns_safe);
    // A type this view does not know, and fields it does not know, are
    // ignored (new within protocol 1).
    assert_eq!(
        wire::parse(br#"{"type":"future","x":1}"#),
        Ok(wire::Message::Unknown)
    );
    assert!(matches!(
        wire::parse(br#"{"type":"synced","seq":1,"at":5,"new":true}"#),
        Ok(wire::Message::Synced(
            crate::model::protocol::lines::Synced {
                seq: 1,
                at: Some(5),
                ..
            }
        ))
    ));
}

#[test]
fn countdowns_and_expiry_use_the_hosts_clock_and_a_skew_is_told() {
    let mut fleet = Fleet::new(vec!["fleet-2".into()], NOW);
    connected(&mut fleet, 0);
    // A lease that expired 85 s ago on a host whose clock is an hour
    // ahead: expired there, whatever this machine's clock says.
    snapshot(&mut fleet, 0, &[instance("alpha", "b1", NOW + 3_515)]);
    let host = &fleet.hosts[0];
    assert_eq!(host.time_left(NOW + 3_515, NOW), 3_515);
    assert_eq!(host.counts(NOW), (1, 1, 0, 0));
    assert_eq!(host.skew_shown(), None);
    let mut link = host.link.clone();
    link.skew = Some(3_600);
    fleet.hosts[0].set_link(link.clone());
    let host = &fleet.hosts[0];
    assert_eq!(host.host_now(NOW), NOW + 3_600);
    assert_eq!(host.time_left(NOW + 3_515, NOW), -85);
    assert_eq!(host.counts(NOW), (1, 1, 1, 0));
    // Expired on each host's own clock (the console's `status:expired`).
    let expired: Vec<Vec<bool>> = fleet
        .hosts
        .iter()
        .map(|h| {
            let now = h.host_now(NOW);
            h.instances().iter().map(|row| row.expired(now)).collect()
        })
        .collect();
    assert_eq!(
        names(&fleet, &fleet.order(&expired, SortKey::Host, false)),
        ["fleet-2/alpha"]
    );
    assert_eq!(host.skew_shown(), Some(3_600));
    assert_eq!(
        host.skew_text().as_deref(),
        Some("its clock is 1h 00m ahead of this machine's: its countdowns are on its own clock")
    );
    // Within SKEW_SHOWN_SECS either way: not told.
    for skew in [-2, 2] {
        link.skew = Some(skew);
        fleet.hosts[0].set_link(link.clone());
        assert_eq!(fleet.hosts[0].skew_shown(), None);
    }
    link.skew = Some(-3);
    fleet.hosts[0].set_link(link);
    assert_eq!(
        fleet.hosts[0].skew_text().as_deref(),
        Some("its clock is 3s behind this machine's: its countdowns are on its own clock")
    );
}

#[test]
fn the_first_pass_countdown_is_on_the_hosts_clock_until_it_ran() {
    let mut fleet = Fleet::new(vec!["fleet-1".into()], NOW);
    connected(&mut fleet, 0);
    // The hello's reaper: an agent that reaps, no pass yet.
    assert_eq!(fleet.hosts[0].first_pass_in(NOW), None);
    apply(
        &mut fleet,
        0,
        &json!({"type":"reaper","by":"agent","pid":42,"paused":false,
            "next_pass_at":NOW + 10,"text":"reaper: every 60s","last_pass":null}),
    );
    assert_eq!(fleet.hosts[0].first_pass_in(NOW), Some(10));
    assert_eq!(fleet.hosts[0].first_pass_in(NOW + 30), Some(0));
    // Its clock 4 s ahead: 6 s left there.
    let mut link = fleet.hosts[0].link.clone();
    link.skew = Some(4);
    fleet.hosts[0].set_link(link);
    assert_eq!(fleet.hosts[0].first_pass_in(NOW), Some(6));
    // Paused: no countdown (the pass does not run).
    apply(
        &mut fleet,
        0,
        &json!({"type":"reaper","by":"agent","paused":true,"next_pass_at":null,
            "text":"reaper: paused","last_pass":null}),
    );
    assert_eq!(fleet.hosts[0].first_pass_in(NOW), None);
    // Once a pass ran, the next ones are not the first.
    apply(
        &mut fleet,
        0,
        &json!({"type":"reaper","by":"agent","paused":false,"next_pass_at":NOW + 60,
            "text":"reaper: every 60s",
            "last_pass":{"at":NOW,"reaped":0,"failed":0,"collected":0,"skipped":0}}),
    );
    assert_eq!(fleet.hosts[0].first_pass_in(NOW), None);
    // Where the controller reaps, the agent has no pass to count down.
    apply(
        &mut fleet,
        0,
        &json!({"type":"reaper","by":"controller","pid":77,"paused":false,
            "next_pass_at":NOW + 10,"text":"standing by","last_pass":null}),
    );
    assert_eq!(fleet.hosts[0].first_pass_in(NOW), None);
}

#[test]
fn a_hosts_counts_follow_each_expiry_and_each_synced_without_a_recount_between() {
    let mut fleet = Fleet::new(vec!["fleet-1".into()], NOW);
    connected(&mut fleet, 0);
    snapshot(
        &mut fleet,
        0,
        &[
            instance("alpha", "a1", NOW + 10),
            instance("bravo", "b1", NOW + 20),
        ],
    );
    let host = &fleet.hosts[0];
    assert_eq!(host.counts(NOW), (2, 2, 0, 0));
    assert_eq!(host.counts(NOW + 9), (2, 2, 0, 0));
    // `expires_at <= now` (stackless §6): expired at the second itself.
    assert_eq!(host.counts(NOW + 10), (2, 2, 1, 0));
    assert_eq!(host.counts(NOW + 19), (2, 2, 1, 0));
    assert_eq!(host.counts(NOW + 20), (2, 2, 2, 0));
    // The clock set back: counted again, not the later answer kept.
    assert_eq!(host.counts(NOW), (2, 2, 0, 0));
    // A new snapshot (a new version) is counted at once.
    snapshot(&mut fleet, 0, &[instance("charlie", "c1", NOW + 5)]);
    assert_eq!(fleet.hosts[0].counts(NOW), (1, 1, 0, 0));
    assert_eq!(fleet.hosts[0].counts(NOW + 5), (1, 1, 1, 0));
}
