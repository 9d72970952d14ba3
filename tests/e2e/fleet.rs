//! A fleet (`--controller` given twice or more, `--fleet FILE`):
//! `snapshot --json` and `snapshot` over several host aliases of the real
//! sshd the tests start ([`crate::sshd`]), each alias reaching its own
//! store through `SetEnv STACKLESS_TUI_STATE` in the client config (the
//! test sshd accepts that variable; `--remote-bin` is one per run, and
//! `--state` would be forwarded to every host alike), and a fleet that
//! names a bad target refused before any ssh runs.

use std::path::Path;

use serde_json::Value;

use crate::common::fixture;
use crate::harness::{BIN, run_plain, utf8};
use crate::remote::{fake_ssh, ssh_calls, text};
use crate::sshd::Sshd;

/// The rule stackless 0.4.0 states for a refused target.
const RULE: &str =
    "use ssh://HOST_ALIAS or ssh://USER@HOST; configure ports and keys in OpenSSH config";

const NOW: &str = "1795960700";

/// The fixtures the three hosts hold, one store each.
const STORES: [&str; 3] = [
    "real-0.4.0-v14.db",
    "real-0.3.0-v5.db",
    "stackless-real-v4.db",
];

/// `snapshot --json --now NOW` of `store`, run here: what its host must
/// answer.
fn local_document(store: &Path, empty: &Path) -> Value {
    serde_json::from_str(&crate::harness::local_snapshot(store, empty, NOW)).expect("JSON")
}

/// `row` with `host` first, as the fleet document tags it.
fn tagged(host: &str, row: &Value) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("host".to_owned(), host.into());
    out.extend(row.as_object().expect("a row object").clone());
    Value::Object(out)
}

/// Three aliases, three stores, one `snapshot --json`: every instance and
/// operation of each store, tagged with its host (its label when given),
/// in the order given, exit 0; the same fleet from a fleet file; the table
/// with its HOST column.
#[test]
fn three_hosts_in_one_snapshot() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let stores: Vec<_> = STORES.iter().map(|name| fixture(name)).collect();
    let empty = stores[0].1.with_file_name("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let aliases = ["fleet-1", "fleet-2", "fleet-3"];
    let config = sshd.fleet_config(
        &aliases
            .iter()
            .zip(&stores)
            .map(|(alias, (_, store))| (*alias, store.as_path(), false))
            .collect::<Vec<_>>(),
    );
    let common = [
        "--ssh-config",
        utf8(&config),
        "--remote-bin",
        BIN,
        "--config",
        utf8(&empty),
    ];
    let snapshot = ["snapshot", "--json", "--now", NOW];
    let mut args: Vec<&str> = Vec::new();
    for alias in ["ssh://fleet-1", "ssh://fleet-2", "ssh://fleet-3"] {
        args.extend(["--controller", alias]);
    }
    args.extend(common);
    args.extend(snapshot);
    let (code, stdout, stderr) = run_plain(&args, &[]);
    assert_eq!(
        code,
        Some(0),
        "stderr: {}\nsshd: {}",
        text(&stderr),
        sshd.log()
    );
    assert_eq!(text(&stderr), "");
    let merged: Value = serde_json::from_slice(&stdout).expect("JSON");
    let locals: Vec<Value> = stores
        .iter()
        .map(|(_, store)| local_document(store, &empty))
        .collect();
    let counts: Vec<usize> = locals
        .iter()
        .map(|doc| doc["instances"].as_array().unwrap().len())
        .collect();
    // The fixtures differ: each host's rows are its own.
    assert_eq!(counts, [8, 5, 8]);
    let expected = |names: [&str; 3], labels: [Option<&str>; 3], given: [&str; 3]| {
        let hosts: Vec<Value> = (0..3)
            .map(|i| {
                serde_json::json!({
                    "host": given[i], "name": names[i], "label": labels[i], "state": "ok",
                    "store": locals[i]["store"], "store_user_version": locals[i]["store_user_version"],
                    "now": 1_795_960_700, "instances": counts[i],
                })
            })
            .collect();
        let rows = |key: &str| -> Vec<Value> {
            (0..3)
                .flat_map(|i| {
                    locals[i][key]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(move |row| tagged(names[i], row))
                })
                .collect()
        };
        serde_json::json!({
            "schema_version": 1,
            "hosts": hosts,
            "instances": rows("instances"),
            "operations": rows("operations"),
        })
    };
    assert_eq!(
        merged,
        expected(
            aliases,
            [None; 3],
            ["ssh://fleet-1", "ssh://fleet-2", "ssh://fleet-3"]
        )
    );

    // The same hosts from a fleet file, labelled, in another order.
    let file = empty.with_file_name("fleet.toml");
    std::fs::write(
        &file,
        "[[host]]\ntarget = \"ssh://fleet-1\"\nlabel = \"eu-1\"\n\n\
         [[host]]\ntarget = \"fleet-2\"\n\n\
         [[host]]\ntarget = \"ssh://fleet-3\"\nlabel = \"us-3\"\n",
    )
    .expect("fleet file");
    let mut args = vec!["--fleet", utf8(&file)];
    args.extend(common);
    args.extend(snapshot);
    let (code, stdout, stderr) = run_plain(&args, &[]);
    assert_eq!(code, Some(0), "{}", text(&stderr));
    let merged: Value = serde_json::from_slice(&stdout).expect("JSON");
    assert_eq!(
        merged,
        expected(
            ["eu-1", "fleet-2", "us-3"],
            [Some("eu-1"), None, Some("us-3")],
            ["ssh://fleet-1", "fleet-2", "ssh://fleet-3"]
        )
    );

    // The table: from STACKLESS_TUI_FLEET, a HOST column first.
    let mut args = common.to_vec();
    args.extend(["--utc", "snapshot", "--now", NOW]);
    let (code, stdout, stderr) = run_plain(&args, &[("STACKLESS_TUI_FLEET", utf8(&file))]);
    assert_eq!(code, Some(0), "{}", text(&stderr));
    let table = text(&stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "fleet of 3 hosts · 3 answered, 0 failed");
    assert_eq!(
        lines[1],
        format!(
            "eu-1  store {} · schema v14 · now 2026-11-29T13:58:20Z (1795960700) · 8 instances",
            locals[0]["store"].as_str().unwrap()
        )
    );
    assert!(lines[5].starts_with("HOST     NAME "), "{table}");
    let section: Vec<&str> = lines[6..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    let rows = |host: &str| {
        section
            .iter()
            .filter(|l| l.starts_with(&format!("{host} ")))
            .count()
    };
    // Each host's instances, under its name, host by host.
    assert_eq!(section.len(), 21, "{table}");
    assert_eq!(
        [rows("eu-1"), rows("fleet-2"), rows("us-3")],
        [8, 5, 8],
        "{table}"
    );
    assert!(
        section.iter().any(|l| l.starts_with("us-3     golf ")
            && l.contains("  expired 5m 46s ago  ")
            && l.ends_with("  3 (retry in 2m 39s)  wait: backoff")),
        "{table}"
    );
    drop(sshd);
}

/// One alias whose known-hosts file holds another key fails alone: the
/// others' rows are all there, the host is listed as failed with the
/// launcher's host-key sentence, one stderr line says so, exit 1.
#[test]
fn a_host_with_a_wrong_host_key_fails_alone() {
    let Some(sshd) = Sshd::for_test() else {
        return;
    };
    let stores: Vec<_> = STORES.iter().map(|name| fixture(name)).collect();
    let empty = stores[0].1.with_file_name("empty.toml");
    std::fs::write(&empty, "").expect("empty config");
    let config = sshd.fleet_config(&[
        ("fleet-1", &stores[0].1, false),
        ("fleet-2", &stores[1].1, true),
        ("fleet-3", &stores[2].1, false),
    ]);
    let (code, stdout, stderr) = run_plain(
        &[
            "--controller",
            "ssh://fleet-1",
            "--controller",
            "ssh://fleet-2",
            "--controller",
            "ssh://fleet-3",
            "--ssh-config",
            utf8(&config),
            "--remote-bin",
            BIN,
            "--config",
            utf8(&empty),
            "snapshot",
            "--json",
            "--now",
            NOW,
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{}", text(&stderr));
    let merged: Value = serde_json::from_slice(&stdout).expect("JSON");
    let error = "ssh could not verify the host key of fleet-2 (exit 255): ssh said \"Host key \
                 verification failed.\". Host key verification stays on: connect once with `ssh \
                 fleet-2` and check its fingerprint, or add its key to known_hosts; a changed key \
                 may mean the host was replaced or an attack, ask its administrator.";
    assert_eq!(
        merged["hosts"][1],
        serde_json::json!({
            "host": "ssh://fleet-2", "name": "fleet-2", "label": null, "state": "failed",
            "error": error,
        })
    );
    assert_eq!(
        [&merged["hosts"][0]["state"], &merged["hosts"][2]["state"]],
        ["ok", "ok"]
    );
    let per_host = |host: &str| {
        merged["instances"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["host"] == host)
            .count()
    };
    assert_eq!(
        [
            per_host("fleet-1"),
            per_host("fleet-2"),
            per_host("fleet-3")
        ],
        [8, 0, 8]
    );
    assert_eq!(
        text(&stderr),
        format!("stackless-tui: fleet-2 failed: {error}\n")
    );
    drop(sshd);
}

/// A fleet naming a bad target, a target twice or a bad label is refused
/// whole, exit 2, naming it, and so are the commands a fleet does not run
/// and the fleet view without a terminal: no ssh ever starts (a fake
/// `ssh` first in `PATH` logs each call).
#[test]
fn a_bad_fleet_is_refused_before_ssh_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fake_ssh(dir.path(), "", 0);
    let file = dir.path().join("fleet.toml");
    let shown = file.display().to_string();
    let env = [("PATH", path.as_str())];
    for (fleet, args, expected) in [
        (
            None,
            vec![
                "--controller",
                "ssh://a",
                "--controller",
                "ssh://b;rm",
                "snapshot",
            ],
            format!("--controller \"ssh://b;rm\": {RULE}"),
        ),
        (
            None,
            vec![
                "--controller",
                "ssh://a",
                "--controller",
                "a",
                "snapshot",
                "--json",
            ],
            "--controller \"a\" names the same host as --controller \"ssh://a\": each host \
             is given once"
                .to_owned(),
        ),
        (
            Some("[[host]]\ntarget = \"ssh://a\"\n[[host]]\ntarget = \"ssh://-oProxyCommand=x\"\n"),
            vec!["snapshot"],
            format!("{shown}: host 2: target \"ssh://-oProxyCommand=x\": {RULE}"),
        ),
        (
            Some("[[host]]\ntarget = \"ssh://a\"\nlabel = \"a b\"\n"),
            vec!["snapshot"],
            format!(
                "{shown}: host 1: label \"a b\": a label is 1 to 63 characters of A-Z, a-z, \
                 0-9, '-', '_' and '.'"
            ),
        ),
        (
            None,
            vec!["--controller", "ssh://a", "--controller", "ssh://b"],
            "the fleet view needs a terminal (stdin and stdout are not both a TTY). For \
             scripts and cron over these 2 hosts use `snapshot`, `snapshot --json` or \
             `snapshot --follow`."
                .to_owned(),
        ),
        (
            None,
            vec![
                "--controller",
                "ssh://a",
                "--controller",
                "ssh://b",
                "reap",
                "--once",
            ],
            "`reap --once` does not run over a fleet: over 2 hosts the console, `snapshot`, \
             `snapshot --json`, `snapshot --follow` and `record` run; run `reap --once` with one \
             --controller ssh://HOST"
                .to_owned(),
        ),
        (
            None,
            vec![
                "--controller",
                "ssh://a",
                "--controller",
                "ssh://b",
                "snapshot",
                "--format",
                "openmetrics",
            ],
            "`snapshot --format` does not run over a fleet: over 2 hosts `snapshot` takes \
             `--json` or neither; ask each host for its metrics with one --controller ssh://HOST"
                .to_owned(),
        ),
        (
            Some("[[host]]\ntarget = \"ssh://a\"\n[[host]]\ntarget = \"ssh://b\"\n"),
            vec!["serve", "--stdio"],
            "`serve --stdio` does not run over a fleet: over 2 hosts the console, `snapshot`, \
             `snapshot --json`, `snapshot --follow` and `record` run; run `serve --stdio` with one \
             --controller ssh://HOST"
                .to_owned(),
        ),
    ] {
        let mut argv: Vec<&str> = Vec::new();
        if let Some(text) = fleet {
            std::fs::write(&file, text).expect("fleet file");
            argv.extend(["--fleet", utf8(&file)]);
        }
        argv.extend(&args);
        let (code, stdout, stderr) = run_plain(&argv, &env);
        assert_eq!(code, Some(2), "{argv:?}: {}", text(&stderr));
        assert_eq!(
            text(&stderr),
            format!("stackless-tui: {expected}\n"),
            "{argv:?}"
        );
        assert!(stdout.is_empty());
        assert_eq!(ssh_calls(dir.path()), None, "ssh ran for {argv:?}");
    }
    // One host in a fleet file: today's launcher (ssh runs once, exactly
    // as one --controller would run it).
    std::fs::write(
        &file,
        "[[host]]\ntarget = \"ssh://deploy@a\"\nlabel = \"x\"\n",
    )
    .expect("fleet file");
    let (code, _, _) = run_plain(&["--fleet", utf8(&file), "snapshot"], &env);
    assert_eq!(code, Some(0));
    let calls = ssh_calls(dir.path()).expect("ssh ran");
    assert_eq!(
        calls,
        "-T\n-o\nBatchMode=yes\n-o\nStrictHostKeyChecking=yes\n-o\nConnectTimeout=10\n--\n\
         deploy@a\nstackless-tui\n--reached-as\na\nsnapshot\n--end--\n"
    );
}

/// A fake `ssh` answering `snapshot --json` for its destination (the word
/// after `--`) after `$FAKE_SLEEP` seconds (2 unless set), with one
/// instance named after it and a note on stderr; `slow` prints nothing
/// and exits 3 instead;
/// `stuck` writes its pid to `<dir>/stuck.pid` and sleeps 30 s.
fn answering_ssh(dir: &Path) -> String {
    let stuck = dir.join("stuck.pid");
    crate::remote::fake_ssh_script(
        dir,
        &format!(
            "dest=''; prev=''\n\
         for a in \"$@\"; do [ \"$prev\" = -- ] && dest=\"$a\"; prev=\"$a\"; done\n\
         if [ \"$dest\" = stuck ]; then echo $$ > '{}'; exec sleep 30; fi\n\
         sleep \"${{FAKE_SLEEP:-2}}\"\n\
         echo \"note from $dest\" >&2\n\
         if [ \"$dest\" = slow ]; then echo 'stackless-tui: no store here' >&2; exit 3; fi\n\
         printf '{{\"schema_version\": 1, \"store\": \"/%s.db\", \"store_user_version\": 14, \
         \"now\": 5, \"instances\": [{{\"name\": \"%s-i\"}}], \"operations\": []}}\\n' \"$dest\" \"$dest\"",
            stuck.display()
        ),
    )
}

/// The config file's `fleet` names a fleet (beside `--state` it does not:
/// the run stays local, and the key is one the config file may hold);
/// every host is asked at once (three hosts answering after 2 s each are
/// all in within twice that), an answered host's stderr is passed on with
/// its name, and a host whose remote command fails is failed with what it
/// said.
#[test]
fn the_config_file_names_a_fleet_asked_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = answering_ssh(dir.path());
    let file = dir.path().join("fleet.toml");
    std::fs::write(
        &file,
        "[[host]]\ntarget = \"a\"\n[[host]]\ntarget = \"slow\"\nlabel = \"s\"\n\
         [[host]]\ntarget = \"b\"\n",
    )
    .expect("fleet file");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("fleet = {:?}\n", utf8(&file))).expect("config");
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = run_plain(
        &["--config", utf8(&config), "snapshot", "--json"],
        &[("PATH", &path)],
    );
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{}", text(&stderr));
    assert!(
        took < std::time::Duration::from_secs(4),
        "{took:?}: not at once"
    );
    let error = "stackless-tui on slow exited 3: it said \"stackless-tui: no store here\"";
    assert_eq!(
        serde_json::from_slice::<Value>(&stdout).expect("JSON"),
        serde_json::json!({
            "schema_version": 1,
            "hosts": [
                {"host": "a", "name": "a", "label": null, "state": "ok", "store": "/a.db",
                 "store_user_version": 14, "now": 5, "instances": 1},
                {"host": "slow", "name": "s", "label": "s", "state": "failed", "error": error},
                {"host": "b", "name": "b", "label": null, "state": "ok", "store": "/b.db",
                 "store_user_version": 14, "now": 5, "instances": 1},
            ],
            "instances": [{"host": "a", "name": "a-i"}, {"host": "b", "name": "b-i"}],
            "operations": [],
        })
    );
    // What the answered hosts said on stderr, then the failed host.
    assert_eq!(
        text(&stderr),
        format!(
            "stackless-tui: a said: note from a\nstackless-tui: b said: note from b\n\
             stackless-tui: s failed: {error}\n"
        )
    );
    // Beside --state the run is local (no ssh: the store is missing here).
    let (code, stdout, stderr) = run_plain(
        &[
            "--config",
            utf8(&config),
            "--state",
            "/nonexistent/s.db",
            "snapshot",
        ],
        &[("PATH", &path)],
    );
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    let stderr = text(&stderr);
    assert!(stderr.contains("/nonexistent/s.db"), "{stderr}");
}

/// A host with no whole answer by `--fleet-timeout` is failed as timed
/// out and its ssh killed; the others' answers come out at the deadline.
#[test]
fn a_stuck_host_times_out_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = answering_ssh(dir.path());
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = run_plain(
        &[
            "--controller",
            "a",
            "--controller",
            "stuck",
            "--fleet-timeout",
            "2s",
            "snapshot",
            "--json",
        ],
        &[("PATH", &path), ("FAKE_SLEEP", "0")],
    );
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{}", text(&stderr));
    assert!(
        (2..10).contains(&took.as_secs()),
        "{took:?}: the deadline is 2 s"
    );
    let merged: Value = serde_json::from_slice(&stdout).expect("JSON");
    let error = "timed out: no whole answer within 2s (--fleet-timeout; its ssh was killed)";
    assert_eq!(
        merged["hosts"][1],
        serde_json::json!({"host": "stuck", "name": "stuck", "label": null, "state": "failed",
                           "error": error})
    );
    assert_eq!(merged["hosts"][0]["state"], "ok");
    assert_eq!(
        merged["instances"],
        serde_json::json!([{"host": "a", "name": "a-i"}])
    );
    assert_eq!(
        text(&stderr),
        format!("stackless-tui: a said: note from a\nstackless-tui: stuck failed: {error}\n")
    );
    // Its ssh (the fake's `sleep 30`) was killed, not left behind.
    let pid = std::fs::read_to_string(dir.path().join("stuck.pid")).expect("stuck ran");
    let proc = Path::new("/proc").join(pid.trim());
    crate::harness::poll(
        "the stuck host's ssh gone",
        std::time::Duration::from_secs(5),
        || (!proc.exists()).then_some(()),
        || format!("{} still runs", proc.display()),
    );
}
