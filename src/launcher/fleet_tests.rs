use std::path::Path;

use serde_json::json;

use super::*;
use crate::launcher::plan::{Mode, TARGET_RULE};

fn host(given: &str, label: Option<&str>) -> FleetHost {
    FleetHost {
        given: given.to_owned(),
        target: Target::parse(given).unwrap(),
        label: label.map(str::to_owned),
    }
}

const FILE: &str = "/etc/fleet.toml";

fn parse(text: &str) -> Result<Vec<FleetHost>, String> {
    parse_fleet_file(text, Path::new(FILE))
}

#[test]
fn a_fleet_file_names_hosts_with_labels() {
    let hosts = parse(
        "[[host]]\ntarget = \"ssh://fleet-1\"\nlabel = \"eu-1\"\n\n\
         [[host]]\ntarget = \"ssh://deploy@fleet-2\"\n\n\
         [[host]]\ntarget = \"fleet-3.example\"\nlabel = \"us_east.3\"\n",
    )
    .unwrap();
    assert_eq!(
        hosts,
        [
            host("ssh://fleet-1", Some("eu-1")),
            host("ssh://deploy@fleet-2", None),
            host("fleet-3.example", Some("us_east.3")),
        ]
    );
    assert_eq!(
        hosts.iter().map(FleetHost::name).collect::<Vec<_>>(),
        ["eu-1", "fleet-2", "us_east.3"]
    );
}

#[test]
fn a_bad_fleet_file_is_refused_naming_the_host() {
    for (text, expected) in [
        (
            "[[host]]\ntarget = \"ssh://a\"\n[[host]]\ntarget = \"ssh://b;rm -rf /\"\n",
            format!("{FILE}: host 2: target \"ssh://b;rm -rf /\": {TARGET_RULE}"),
        ),
        (
            "[[host]]\ntarget = \"ssh://-oProxyCommand=x\"\n",
            format!("{FILE}: host 1: target \"ssh://-oProxyCommand=x\": {TARGET_RULE}"),
        ),
        (
            "[[host]]\ntarget = \"ssh://a\"\n[[host]]\ntarget = \"ssh://b\"\n[[host]]\ntarget = \"a\"\n",
            format!(
                "{FILE}: host 3 names the same host as {FILE}: host 1: each host is given once"
            ),
        ),
        (
            "[[host]]\ntarget = \"ssh://u@h\"\n[[host]]\ntarget = \"ssh://v@h\"\n",
            format!(
                "{FILE}: host 1 and {FILE}: host 2 would both be shown as \"h\": give them \
                 labels that differ (in a fleet file: label = \"...\")"
            ),
        ),
        (
            "[[host]]\ntarget = \"ssh://a\"\nlabel = \"b\"\n[[host]]\ntarget = \"ssh://b\"\n",
            format!(
                "{FILE}: host 1 and {FILE}: host 2 would both be shown as \"b\": give them \
                 labels that differ (in a fleet file: label = \"...\")"
            ),
        ),
        (
            "[[host]]\ntarget = \"ssh://a\"\nlabel = \"eu 1\"\n",
            format!("{FILE}: host 1: label \"eu 1\": {LABEL_RULE}"),
        ),
        (
            "[[host]]\ntarget = \"ssh://a\"\nlabel = \"\"\n",
            format!("{FILE}: host 1: label \"\": {LABEL_RULE}"),
        ),
        (
            "[[host]]\ntarget = \"ssh://a\"\nport = 22\n",
            format!("{FILE}: host 1: unknown key `port` (known: target, label)"),
        ),
        (
            "hosts = []\n",
            format!("{FILE}: unknown key `hosts` (a fleet file holds only [[host]] tables)"),
        ),
        (
            "",
            format!("{FILE}: names no host (add [[host]] tables with target = \"ssh://HOST\")"),
        ),
        (
            "[[host]]\nlabel = \"a\"\n",
            format!("{FILE}: host 1: `target` is missing (target = \"ssh://HOST\")"),
        ),
        (
            "[[host]]\ntarget = 5\n",
            format!("{FILE}: host 1: `target` must be a string"),
        ),
        (
            "host = \"a\"\n",
            format!("{FILE}: `host` must be [[host]] tables"),
        ),
    ] {
        assert_eq!(parse(text), Err(expected), "{text}");
    }
    assert!(
        parse("[[host]\n")
            .unwrap_err()
            .starts_with(&format!("{FILE}: not valid TOML: "))
    );
    assert_eq!(check_label(&"a".repeat(63)), Ok(()));
    assert_eq!(check_label(&"a".repeat(64)), Err(LABEL_RULE));
    assert_eq!(check_label("é"), Err(LABEL_RULE));
}

#[test]
fn controllers_given_twice_or_more() {
    let list = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        from_controllers(&list(&["ssh://a", "deploy@b"])),
        Ok(vec![host("ssh://a", None), host("deploy@b", None)])
    );
    assert_eq!(
        from_controllers(&list(&["ssh://a", "ssh://b$(id)"])),
        Err(format!("--controller \"ssh://b$(id)\": {TARGET_RULE}"))
    );
    assert_eq!(
        from_controllers(&list(&["ssh://a", "a"])),
        Err(
            "--controller \"a\" names the same host as --controller \"ssh://a\": each host is \
             given once"
                .to_owned()
        )
    );
}

fn plan_for(given: &str) -> Plan {
    Plan {
        target: Target::parse(given).unwrap(),
        remote_bin: "stackless-tui".into(),
        ssh_config: None,
        forwarded: vec!["snapshot".into(), "--json".into()],
        mode: Mode::Headless,
        not_applied: Vec::new(),
    }
}

#[test]
fn each_host_answer_is_classified_as_the_launcher_does() {
    let plan = plan_for("ssh://fleet-2");
    assert_eq!(
        answer(&plan, 0, br#"{"a": 1}"#, "", ""),
        Answer::Document(json!({"a": 1}))
    );
    assert_eq!(
        answer(&plan, 0, b"{\"a\"", "", ""),
        Answer::Failed(
            "the snapshot from fleet-2 is not JSON: EOF while parsing an object at line 1 \
             column 4"
                .to_owned()
        )
    );
    let said = "Host key verification failed.";
    assert_eq!(
        answer(&plan, 255, b"", said, said),
        Answer::Failed(failure_message(
            super::super::failure::Failure::HostKey,
            &plan,
            255,
            said
        ))
    );
    assert_eq!(
        answer(&plan, 127, b"", "sh: stackless-tui: not found", ""),
        Answer::Failed(failure_message(
            super::super::failure::Failure::NotInstalled,
            &plan,
            127,
            ""
        ))
    );
    assert_eq!(
        answer(&plan, 2, b"", "x", "stackless-tui: no store at /s.db"),
        Answer::Failed(
            "stackless-tui on fleet-2 exited 2: it said \"stackless-tui: no store at /s.db\""
                .to_owned()
        )
    );
}

fn document(store: &str, names: &[&str]) -> Value {
    json!({
        "schema_version": 1,
        "store": store,
        "store_user_version": 14,
        "now": 1_795_960_700,
        "instances": names.iter().map(|n| json!({"name": n, "status": "active"})).collect::<Vec<_>>(),
        "operations": [{"id": "op-1", "instance": names[0], "verb": "down", "status": "running", "created_at": 1_795_960_650}],
    })
}

#[test]
fn the_merge_tags_every_row_with_its_host() {
    let hosts = [
        host("ssh://fleet-1", Some("eu-1")),
        host("ssh://deploy@fleet-2", None),
        host("ssh://fleet-3", None),
        host("ssh://fleet-4", None),
    ];
    let (merged, whole) = merge(
        &hosts,
        vec![
            Answer::Document(document("/s1.db", &["alpha", "bravo"])),
            Answer::Document(document("/s2.db", &["alpha"])),
            Answer::Failed("ssh could not verify the host key of fleet-3".to_owned()),
            Answer::Document(json!({"schema_version": 2})),
        ],
    );
    assert!(!whole);
    let op = |host: &str, name: &str| json!({"host": host, "id": "op-1", "instance": name, "verb": "down", "status": "running", "created_at": 1_795_960_650});
    assert_eq!(
        merged,
        json!({
            "schema_version": 1,
            "hosts": [
                {"host": "ssh://fleet-1", "name": "eu-1", "label": "eu-1", "state": "ok",
                 "store": "/s1.db", "store_user_version": 14, "now": 1_795_960_700, "instances": 2},
                {"host": "ssh://deploy@fleet-2", "name": "fleet-2", "label": null, "state": "ok",
                 "store": "/s2.db", "store_user_version": 14, "now": 1_795_960_700, "instances": 1},
                {"host": "ssh://fleet-3", "name": "fleet-3", "label": null, "state": "failed",
                 "error": "ssh could not verify the host key of fleet-3"},
                {"host": "ssh://fleet-4", "name": "fleet-4", "label": null, "state": "failed",
                 "error": "its snapshot has schema_version 2, this console reads 1"},
            ],
            "instances": [
                {"host": "eu-1", "name": "alpha", "status": "active"},
                {"host": "eu-1", "name": "bravo", "status": "active"},
                {"host": "fleet-2", "name": "alpha", "status": "active"},
            ],
            "operations": [op("eu-1", "alpha"), op("fleet-2", "alpha")],
        })
    );
    // `host` comes first in each row.
    assert_eq!(
        merged["instances"][0]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap(),
        "host"
    );
    assert_eq!(
        failed_lines(&merged),
        [
            "stackless-tui: fleet-3 failed: ssh could not verify the host key of fleet-3",
            "stackless-tui: fleet-4 failed: its snapshot has schema_version 2, this console reads 1",
        ]
    );
    let (_, whole) = merge(
        &hosts[..1],
        vec![Answer::Document(document("/s1.db", &["alpha"]))],
    );
    assert!(whole);
}

#[test]
fn the_fleet_table_has_a_host_column_first() {
    let hosts = [
        host("ssh://fleet-1", Some("eu-1")),
        host("ssh://fleet-2", None),
    ];
    let mut one = document("/s1.db", &["alpha"]);
    one["instances"][0] = json!({
        "name": "alpha\u{1b}[2J", "substrate": "local", "status": "active",
        "lease": {"text": "expired 3m 12s ago"}, "lock": null,
        "reap_attempt": {"attempts": 2, "text": "retry in 1m 04s"},
        "reaper": "wait: backoff", "failed_up": false,
    });
    one["instances"].as_array_mut().unwrap().push(json!({
        "name": "charlie", "substrate": "local", "status": "tombstoned", "lease": null,
        "lock": null, "reap_attempt": null, "reaper": null, "failed_up": false,
        "gc": {"due_at": 1_795_960_700 + 3 * 86_400 + 4 * 3600, "due": false,
               "due_in_secs": 3 * 86_400 + 4 * 3600, "collected_by": "controller"},
    }));
    // A failed operation listed first: the table puts it after the
    // pending one, with when it ended.
    one["operations"].as_array_mut().unwrap().insert(
        0,
        json!({"id": "op-0", "instance": "charlie", "verb": "up", "status": "failed",
               "created_at": 1_795_960_000, "updated_at": 1_795_960_090,
               "error": {"code": "engine.up", "message": "no"}}),
    );
    let (merged, _) = merge(
        &hosts,
        vec![
            Answer::Document(one),
            Answer::Failed("ssh could not log in to fleet-2 (exit 255)".to_owned()),
        ],
    );
    let zone = jiff::tz::TimeZone::UTC;
    assert_eq!(
        fleet_table(&merged, &zone),
        "fleet of 2 hosts · 1 answered, 1 failed\n\
         eu-1  store /s1.db · schema v14 · now 2026-11-29T13:58:20Z (1795960700) · 2 instances\n\
         fleet-2  failed: ssh could not log in to fleet-2 (exit 255)\n\
         \n\
         HOST  NAME       SUBSTRATE  STATUS      LEASE               LOCK  BACKOFF              REAPER\n\
         eu-1  alpha␛[2J  local      active      expired 3m 12s ago        2 (retry in 1m 04s)  wait: backoff\n\
         eu-1  charlie    local      tombstoned  tombstoned\n\
         \n\
         GC\n\
         eu-1  charlie  due for GC at 2026-12-02T17:58:20Z (in 3d 04h), collected by the \
         stackless controller's lease reaper (a gc operation; an embedded controller has none)\n\
         \n\
         OPERATIONS\n\
         eu-1  running down alpha (since 50s)\n\
         eu-1  failed up charlie (10m 10s ago): engine.up: no\n"
    );
}

#[test]
fn who_names_a_fleet() {
    use crate::launcher::fleet_hosts;
    use clap::Parser as _;
    let cli = |args: &[&str]| crate::cli::Cli::parse_from(args);
    let read = |file: &Path| {
        if file == Path::new("/f.toml") {
            Ok("[[host]]\ntarget = \"ssh://a\"\n[[host]]\ntarget = \"ssh://b\"\n".to_owned())
        } else {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        }
    };
    let count = |args: &[&str], on_line: bool| {
        fleet_hosts(&cli(args), on_line, read).map(|hosts| hosts.map(|h| h.len()))
    };
    assert_eq!(
        count(
            &["st", "--controller", "a", "--controller", "b", "snapshot"],
            false
        ),
        Ok(Some(2))
    );
    // One --controller: today's launcher, also beside a fleet from the
    // environment or the config file.
    assert_eq!(
        count(&["st", "--controller", "a", "snapshot"], false),
        Ok(None)
    );
    assert_eq!(
        count(&["st", "--controller", "a", "--fleet", "/f.toml"], false),
        Ok(None)
    );
    assert_eq!(
        count(&["st", "--fleet", "/f.toml", "snapshot"], true),
        Ok(Some(2))
    );
    assert_eq!(count(&["st", "--fleet", "/f.toml"], false), Ok(Some(2)));
    // A local store keeps a fleet from the environment or config away.
    assert_eq!(
        count(&["st", "--fleet", "/f.toml", "--state", "/s.db"], false),
        Ok(None)
    );
    assert_eq!(
        count(&["st", "--fleet", "/f.toml", "--demo"], false),
        Ok(None)
    );
    assert_eq!(
        count(&["st", "--fleet", "/f.toml", "--state", "/s.db"], true),
        Ok(Some(2))
    );
    assert_eq!(count(&["st", "--fleet", "/f.toml", "man"], true), Ok(None));
    assert_eq!(
        count(&["st", "--fleet", "/f.toml", "--controller", "a"], true),
        Err(
            "name the hosts either with --controller (once per host) or with --fleet FILE, not \
             both"
                .to_owned()
        )
    );
    assert_eq!(
        count(&["st", "--reached-as", "h", "--fleet", "/f.toml"], false),
        Ok(None)
    );
    assert!(count(&["st", "--reached-as", "h", "--fleet", "/f.toml"], true).is_err());
    assert_eq!(
        count(&["st", "--fleet", "/nope.toml", "snapshot"], true),
        Err("the fleet file /nope.toml: entity not found".to_owned())
    );
}

#[test]
fn an_answered_host_s_stderr_is_passed_on_with_its_name() {
    assert_eq!(
        said_lines(
            "eu-1",
            "stackless-tui: the wall clock looks wrong\n\n  \x1b[2Jsecond\n"
        ),
        [
            "stackless-tui: eu-1 said: stackless-tui: the wall clock looks wrong",
            "stackless-tui: eu-1 said: ␛[2Jsecond",
        ]
    );
    assert!(said_lines("eu-1", "\n").is_empty());
}
