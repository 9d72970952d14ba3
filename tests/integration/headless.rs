//! The headless modes through the real binary: `snapshot`, `reap --once`,
//! completions, the man page, exit codes.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{CAPTURE, fixture};

fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stackless-tui"));
    // Nothing from the developer's environment leaks in.
    command
        .env_remove("STACKLESS_STATE_URL")
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .env("XDG_STATE_HOME", "/nonexistent-state")
        // Times in UTC whatever the machine's zone (tests that want a zone
        // set their own).
        .env("TZ", "UTC0");
    for (key, _) in std::env::vars() {
        if key.starts_with("STACKLESS_TUI_") {
            command.env_remove(key);
        }
    }
    command
}

fn run(command: &mut Command) -> Output {
    command.output().expect("run the binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `snapshot --json --now CAPTURE --state PATH`, which must exit 0, parsed.
fn snapshot_json(path: &std::path::Path) -> serde_json::Value {
    let out = run(bin()
        .args([
            "snapshot",
            "--json",
            "--now",
            &CAPTURE.to_string(),
            "--state",
        ])
        .arg(path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn snapshot_json_on_the_real_store_field_by_field() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let doc = snapshot_json(&path);
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["store_user_version"], 4);
    assert_eq!(doc["now"], CAPTURE);
    assert_eq!(doc["store"], path.display().to_string());
    let instances = doc["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 8);
    let by = |name: &str| {
        instances
            .iter()
            .find(|i| i["name"] == name)
            .unwrap()
            .clone()
    };

    let golf = by("golf");
    assert_eq!(golf["status"], "active");
    assert_eq!(golf["substrate"], "local");
    assert_eq!(golf["dns_safe"], true);
    assert_eq!(golf["lease"]["duration_secs"], 60);
    assert_eq!(golf["lease"]["expires_at"], CAPTURE - 332);
    assert_eq!(golf["lease"]["remaining_secs"], 0);
    assert_eq!(golf["lease"]["overdue_secs"], 332);
    assert_eq!(golf["lease"]["expired"], true);
    assert_eq!(golf["lease"]["text"], "expired 5m 32s ago");
    assert_eq!(golf["reap_attempt"]["attempts"], 3);
    assert_eq!(golf["reap_attempt"]["last_error"], "}");
    assert_eq!(golf["reap_attempt"]["code"], serde_json::Value::Null);
    assert_eq!(golf["reap_attempt"]["summary"], "}");
    assert_eq!(golf["reap_attempt"]["next_retry_at"], CAPTURE + 173);
    assert_eq!(golf["reap_attempt"]["due"], false);
    assert_eq!(golf["reap_attempt"]["text"], "retry in 2m 53s");
    assert_eq!(golf["reaper"], "wait: backoff");
    assert_eq!(golf["reaper_action"], "wait_backoff");
    assert_eq!(golf["lock"], serde_json::Value::Null);

    let alpha = by("alpha");
    assert_eq!(alpha["lease"]["remaining_secs"], 85674);
    assert_eq!(alpha["lease"]["text"], "23h 47m left");
    assert_eq!(alpha["lease"]["overdue_secs"], 0);
    assert_eq!(alpha["reaper"], serde_json::Value::Null);
    assert_eq!(alpha["reaper_action"], serde_json::Value::Null);
    assert_eq!(alpha["reap_attempt"], serde_json::Value::Null);

    let echo = by("echo");
    assert_eq!(echo["lock"]["operation"], "up");
    assert_eq!(echo["lock"]["holder_pid"], 15180);
    assert_eq!(echo["lock"]["holder_start_time"], 1_795_959_972);
    assert_eq!(echo["lock"]["holder_host"], "vm");
    // The probe is this machine's: "vm" is another host unless we are it.
    let here = sysinfo::System::host_name();
    if here.as_deref() == Some("vm") {
        assert_ne!(echo["lock"]["liveness"], "foreign host");
    } else {
        assert_eq!(echo["lock"]["liveness"], "foreign host");
        assert_eq!(echo["lock"]["liveness_state"], "foreign_host");
        assert_eq!(echo["lock"]["held"], true);
    }

    let charlie = by("charlie");
    assert_eq!(charlie["status"], "tombstoned");
    assert_eq!(charlie["tombstoned_at"], 1_795_959_971);
    assert_eq!(charlie["lease"], serde_json::Value::Null);

    let duo = by("duo-79882653-fd55-4b17-bf19-d4afc89a2b5e");
    assert_eq!(duo["lease"]["text"], "33m 01s left");
}

#[test]
fn snapshot_table_time_is_local_with_the_zone_or_utc_with_the_flag() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let header = |extra: &[&str], tz: &str| {
        let out = run(bin()
            .env("TZ", tz)
            .args(["snapshot", "--now", &CAPTURE.to_string(), "--state"])
            .arg(&path)
            .args(extra));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout).lines().next().unwrap().to_owned()
    };
    let store = path.display();
    // A POSIX TZ string: no tz database needed.
    assert_eq!(
        header(&[], "IST-5:30"),
        format!("store {store} · schema v4 · now 2026-11-29 19:28:06 IST ({CAPTURE})")
    );
    assert_eq!(
        header(&["--utc"], "IST-5:30"),
        format!("store {store} · schema v4 · now 2026-11-29T13:58:06Z ({CAPTURE})")
    );
    // The JSON keeps unix seconds and RFC 3339 UTC whatever the zone.
    let out = run(bin()
        .env("TZ", "IST-5:30")
        .args([
            "snapshot",
            "--json",
            "--now",
            &CAPTURE.to_string(),
            "--state",
        ])
        .arg(&path));
    assert!(!text(&out.stdout).contains("IST"));
}

#[test]
fn utc_in_the_config_file_and_the_flag_or_environment_over_it() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let config = dir.path().join("config.toml");
    let now = CAPTURE.to_string();
    let header = |config_text: &str, extra: &[&str], env: &[(&str, &str)]| {
        std::fs::write(&config, config_text).unwrap();
        let mut command = bin();
        command.env("TZ", "IST-5:30").envs(env.iter().copied());
        let out = run(command
            .arg("--config")
            .arg(&config)
            .args(["snapshot", "--now", &now, "--state"])
            .arg(&path)
            .args(extra));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let first = text(&out.stdout).lines().next().unwrap().to_owned();
        first.split(" · now ").nth(1).unwrap().to_owned()
    };
    let utc = format!("2026-11-29T13:58:06Z ({CAPTURE})");
    let ist = format!("2026-11-29 19:28:06 IST ({CAPTURE})");
    assert_eq!(header("utc = true\n", &[], &[]), utc);
    assert_eq!(header("utc = false\n", &[], &[]), ist);
    assert_eq!(header("utc = false\n", &["--utc"], &[]), utc);
    assert_eq!(
        header("utc = true\n", &[], &[("STACKLESS_TUI_UTC", "0")]),
        ist
    );
}

#[test]
fn snapshot_table_is_plain_text() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let out = run(bin()
        .args(["snapshot", "--now", &CAPTURE.to_string(), "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    // Header, titles, 8 instances; then a blank line, `GC` and the two
    // tombstones, each with when it is due for GC and who collects it;
    // then who reaps the store now.
    assert_eq!(lines.len(), 15);
    assert_eq!(lines[11], "GC");
    assert_eq!(lines[14], "who reaps: nobody reaps now");
    assert_eq!(
        lines[0],
        format!(
            "store {} · schema v4 · now {} ({CAPTURE})",
            path.display(),
            stackless_tui::model::time::rfc3339(CAPTURE).unwrap()
        )
    );
    assert!(lines[1].starts_with("NAME"));
    // The lock's host is kept: `up by pid 15180 on vm, <liveness>`.
    let echo = lines.iter().find(|l| l.starts_with("echo ")).unwrap();
    assert!(echo.contains("up by pid 15180 on vm, "), "{echo}");
    let golf = lines.iter().find(|l| l.starts_with("golf ")).unwrap();
    assert!(golf.contains("expired 5m 32s ago"), "{golf}");
    assert!(golf.contains("3 (retry in 2m 53s)"), "{golf}");
    assert!(golf.ends_with("wait: backoff"), "{golf}");
    assert!(!table.contains('\u{1b}'));
}

#[test]
fn snapshot_of_hostile_store_is_safe_text_and_valid_json() {
    let (_dir, path) = fixture("hostile.db");
    let out = run(bin().args(["snapshot", "--state"]).arg(&path));
    assert_eq!(out.status.code(), Some(0));
    assert!(!out.stdout.contains(&0x1b), "no raw escape in the table");
    assert!(!text(&out.stdout).contains('\u{202e}'));
    let out = run(bin().args(["snapshot", "--json", "--state"]).arg(&path));
    assert!(
        !out.stdout.contains(&0x1b),
        "JSON escapes control characters"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<_> = doc["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["dns_safe"] == true)
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, vec!["ok-neighbour"]);
}

fn script(dir: &Path, body: &str) -> String {
    let path = dir.join("down.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nNAME=\"$2\"\n{}\n{body}\n",
            crate::common::tombstone_on_success(&dir.join("state.db"))
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("'{}' down {{name}} --json", path.display())
}

#[test]
fn reap_once_exits_0_when_every_teardown_succeeds() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = script(dir.path(), "exit 0");
    let out = run(bin()
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // Whatever "now" is, golf (expired at capture) was reaped.
    assert!(
        text(&out.stdout).contains("reaper golf reaped: down succeeded"),
        "{}",
        text(&out.stdout)
    );
}

/// With no `--down-cmd`, the teardown runs the `--stackless` program
/// (`PROGRAM down NAME --json`, the program one argument, spaces and all),
/// not a `stackless` found on PATH.
#[test]
fn reap_once_without_down_cmd_runs_the_stackless_program() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let bin_dir = dir.path().join("my tools");
    std::fs::create_dir(&bin_dir).unwrap();
    let program = bin_dir.join("stackless");
    std::fs::write(
        &program,
        format!(
            // One write a line: the teardowns run side by side, and two
            // writes a line interleave.
            "#!/bin/sh\nNAME=\"$2\"\nLINE=$(printf '%s|' \"$0\" \"$@\")\nprintf '%s\\n' \"$LINE\" >> '{}'\n{}\nexit 0\n",
            dir.path().join("argv.log").display(),
            crate::common::tombstone_on_success(&path)
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(bin()
        .env_remove("STACKLESS_BIN")
        // No `stackless` on PATH: only the named program can run.
        .env("PATH", "/usr/bin:/bin")
        .args(["reap", "--once", "--stackless"])
        .arg(&program)
        .arg("--state")
        .arg(&path));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("reaper golf reaped: down succeeded"),
        "{}",
        text(&out.stdout)
    );
    // Every expired instance (whatever "now" is), each by the program.
    let log = crate::common::argv_log(dir.path());
    let prefix = format!("{}|down|", program.display());
    assert!(log.contains(&format!("{prefix}golf|--json|")), "{log:?}");
    for line in &log {
        let name = line
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix("|--json|"))
            .unwrap_or_else(|| panic!("{line}"));
        assert!(!name.contains('|'), "{line}");
    }
}

#[test]
fn reap_once_verifies_the_row_after_a_down_that_exited_0() {
    let (dir, path) = fixture("stackless-real-v4.db");
    // Exits 0 and changes nothing: silence is not success.
    let silent = dir.path().join("silent.sh");
    std::fs::write(&silent, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&silent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let down = format!("'{}' down {{name}} --json", silent.display());
    let out = run(bin()
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("reaper golf failed: down exited 0 in ")
            && stdout.contains(
                "s but the instance is still active in the store; not counted as torn down (attempt 4, retry at "
            ),
        "{stdout}"
    );
    assert!(!stdout.contains("golf reaped"), "{stdout}");
}

#[test]
fn reap_once_exits_1_when_a_teardown_fails() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = script(dir.path(), "echo 'no luck'; exit 1");
    let out = run(bin()
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("reaper golf failed: no luck (attempt 4"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn reap_once_dry_run_runs_nothing() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let marker = dir.path().join("ran");
    let down = script(dir.path(), &format!("touch '{}'; exit 0", marker.display()));
    let before = std::fs::read(&path).unwrap();
    let out = run(bin()
        .args([
            "reap",
            "--once",
            "--dry-run",
            "--down-cmd",
            &down,
            "--state",
        ])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("reaper golf would reap: dry run: nothing run"));
    assert!(!marker.exists());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn reap_once_exits_2_on_a_bad_store_or_usage() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    let out = run(bin().args(["reap", "--once", "--state"]).arg(&missing));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("does not exist"));
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, b"definitely not sqlite".repeat(100)).unwrap();
    let out = run(bin().args(["reap", "--once", "--state"]).arg(&garbage));
    assert_eq!(out.status.code(), Some(2));
    let out = run(bin().args(["reap", "--state"]).arg(&garbage));
    assert_eq!(out.status.code(), Some(2), "--once is required");
    let (_fx, older) = fixture("older-v2.db");
    let out = run(bin().args(["reap", "--once", "--state"]).arg(&older));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("schema v2 is older"));
}

#[test]
fn completions_and_man_page_come_from_the_same_definitions() {
    let out = run(bin().args(["completions", "bash"]));
    assert_eq!(out.status.code(), Some(0));
    let script = text(&out.stdout);
    assert!(script.contains("--down-timeout"));
    assert!(script.contains("complete -F"));
    let out = run(bin().arg("man"));
    assert_eq!(out.status.code(), Some(0));
    let man = text(&out.stdout);
    assert!(
        man.starts_with(".ie") || man.contains(".TH stackless-tui"),
        "{}",
        &man[..200.min(man.len())]
    );
    assert!(man.contains("reap\\-concurrency"));
}

#[test]
fn config_file_and_environment_precedence() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let cfg_home = dir.path().join("cfg");
    std::fs::create_dir_all(cfg_home.join("stackless-tui")).unwrap();
    std::fs::write(
        cfg_home.join("stackless-tui/config.toml"),
        format!("state = \"{}\"\nlog-level = \"bogus\"\n", path.display()),
    )
    .unwrap();
    // The file's bad value is reported, naming the file.
    let out = run(bin().env("XDG_CONFIG_HOME", &cfg_home).args(["snapshot"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("config.toml"),
        "{}",
        text(&out.stderr)
    );
    // The environment beats the file.
    let out = run(bin()
        .env("XDG_CONFIG_HOME", &cfg_home)
        .env("STACKLESS_TUI_LOG_LEVEL", "warn")
        .args(["snapshot", "--now", &CAPTURE.to_string()]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).lines().any(|l| l.starts_with("golf ")),
        "the file's state was used"
    );
}

#[test]
fn snapshot_json_on_a_v14_store_carries_operations_births_and_dirty() {
    let (_dir, path) = crate::common::stores::v14();
    let doc = snapshot_json(&path);
    assert_eq!(doc["store_user_version"], 14);
    let ops = doc["operations"].as_array().unwrap();
    let ids: Vec<&str> = ops.iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "op-alpha-down",
            "op-delta-up",
            "op-echo-verify",
            "op-bravo-up",
            "op-charlie-down"
        ]
    );
    assert_eq!(
        ops[0],
        serde_json::json!({
            "id": "op-alpha-down", "instance": "alpha", "verb": "down", "status": "running",
            "created_at": CAPTURE - 50, "updated_at": CAPTURE - 45, "error": null
        })
    );
    let failed = &ops[3]["error"];
    assert_eq!(failed["code"], "engine.source_override.shared");
    assert_eq!(failed["schema_version"], 2);
    assert_eq!(failed["instance"], "bravo");
    assert!(
        failed["remediation"]
            .as_str()
            .unwrap()
            .contains("`stackless down alpha`")
    );
    assert!(!doc.to_string().contains("do-not-read"));
    let instances = doc["instances"].as_array().unwrap();
    let alpha = &instances[0];
    assert_eq!(alpha["name"], "alpha");
    assert_eq!(
        alpha["birth"]["instance_id"],
        crate::common::stores::ALPHA_ID
    );
    assert_eq!(alpha["dirty"], false);
    assert_eq!(alpha["reaper"], "skip: operation pending");
    assert_eq!(instances[1]["reaper"], "reap");
    assert_eq!(instances[3]["dirty"], true);

    let out = run(bin()
        .args(["snapshot", "--now", &CAPTURE.to_string(), "--state"])
        .arg(&path));
    let table = text(&out.stdout);
    let tail: Vec<&str> = table.lines().skip_while(|l| *l != "OPERATIONS").collect();
    assert_eq!(
        tail,
        [
            "OPERATIONS",
            "running down alpha (since 50s)",
            "queued up delta (since 10s)",
            "failed up bravo (8m 10s ago): engine.source_override.shared: service \"web\" --source path \"/srv/web\" is already pinned by active instance \"alpha\"",
            "who reaps: nobody reaps now",
        ]
    );
}

#[test]
fn snapshot_json_on_a_real_0_4_0_store_lists_its_failed_ups() {
    let (_dir, path) = crate::common::fixture("real-0.4.0-v14.db");
    let out = run(bin()
        .args(["snapshot", "--json", "--now", "1796118148", "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["store_user_version"], 14);
    let ops = doc["operations"].as_array().unwrap();
    assert_eq!(ops.len(), 18);
    let failed_ups: Vec<(&str, &str)> = ops
        .iter()
        .filter(|o| o["verb"] == "up" && o["status"] == "failed")
        .map(|o| {
            (
                o["instance"].as_str().unwrap(),
                o["error"]["code"].as_str().unwrap(),
            )
        })
        .collect();
    // In the order they finished: hotel's `up` (created before bravo's)
    // finished last, after its health checks.
    assert_eq!(
        failed_ups,
        [
            ("hotel", "local.health_failed"),
            ("bravo", "engine.source_override.shared"),
        ]
    );
    let out = run(bin().args(["snapshot", "--state"]).arg(&path));
    let table = text(&out.stdout);
    assert!(table.contains("engine.source_override.shared"), "{table}");
}

#[test]
fn an_error_json_that_does_not_parse_is_shown_as_stored_not_as_no_error() {
    let (_dir, path) = crate::common::fixture("real-0.4.0-v14.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE operations SET error_json = ?1 WHERE instance = 'bravo'",
            ["not json \u{1b}[2J at all"],
        )
        .unwrap();
    let out = run(bin()
        .args(["snapshot", "--json", "--now", "1796118148", "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bravo = doc["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["instance"] == "bravo")
        .unwrap();
    assert_eq!(bravo["error"], serde_json::Value::Null);
    assert_eq!(bravo["error_unparsed"], "not json ␛[2J at all");
    let ok = doc["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["instance"] == "hotel")
        .unwrap();
    assert!(ok.get("error_unparsed").is_none());
    let an_hour_later = (bravo["updated_at"].as_i64().unwrap() + 3600).to_string();
    let out = run(bin()
        .args(["snapshot", "--now", &an_hour_later, "--state"])
        .arg(&path));
    assert!(
        text(&out.stdout)
            .lines()
            .any(|l| l == "failed up bravo (1h 00m ago): not json ␛[2J at all"),
        "{}",
        text(&out.stdout)
    );
}

/// `snapshot --json` gains `services` where the store records a process or
/// an observation, each with its stage:
/// the real 0.4.0 store's alpha, its logs under the resource namespace; its
/// recorded process is not running here: dead, so it has no origin
/// (stackless 0.4.0 `status` gives none for a service observed gone), and,
/// recorded under another machine's state dir, its stage `unknown` (0.4.0's
/// local provider does not observe it).
#[test]
fn snapshot_json_services_on_the_real_0_4_0_store() {
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let doc = snapshot_json(&path);
    let instances = doc["instances"].as_array().unwrap();
    let by = |name: &str| instances.iter().find(|i| i["name"] == name).unwrap();
    let logs = dir
        .path()
        .join("logs/sl-70aa7461da17489bb88e709a64f291aa/web.log");
    assert_eq!(
        by("alpha")["services"],
        serde_json::json!([{
            "name": "web",
            "pid": 19240,
            "alive": false,
            "origin": null,
            "port": 41325,
            "stage": "unknown",
            "log_path": logs.display().to_string(),
        }])
    );
    // Each service's stage as 0.4.0's `list` derives it: a process
    // recorded under another state dir (this copy's) is `unknown`; every
    // service of a tombstone is `absent`; observed but never started
    // (bravo's refused `up`), `unknown`.
    let stages = |name: &str| -> Vec<String> {
        by(name)["services"]
            .as_array()
            .map(|s| {
                s.iter()
                    .map(|s| s["stage"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(stages("hotel"), ["unknown"]);
    assert_eq!(stages("charlie"), ["absent"]);
    assert_eq!(stages("bravo"), ["unknown"]);
    assert_eq!(stages("golf"), ["unknown"]);
}

/// A read creates nothing at stackless's default path and says there is no
/// store, exit 0, as `reap --once --dry-run` does: `snapshot` on stdout;
/// `--json` and `--follow` on stderr (their stdout is a document or the
/// protocol's lines, and stays empty).
#[test]
fn a_read_creates_no_store_at_the_default_path_and_says_so() {
    for (args, what, why, on_stdout) in [
        (
            &["snapshot"][..],
            "nothing to show",
            "a read creates nothing",
            true,
        ),
        (
            &["snapshot", "--read-only"][..],
            "nothing to show",
            "a read creates nothing",
            true,
        ),
        (
            &["snapshot", "--json", "--now", "100"][..],
            "nothing to show",
            "a read creates nothing",
            false,
        ),
        (
            &["snapshot", "--follow"][..],
            "nothing to follow",
            "a read creates nothing",
            false,
        ),
        (
            &["reap", "--once", "--dry-run"][..],
            "nothing to reap",
            "a dry run creates nothing",
            true,
        ),
    ] {
        let state = tempfile::tempdir().unwrap();
        let out = run(bin().env("XDG_STATE_HOME", state.path()).args(args));
        let line = format!(
            "no stackless state store at {} (stackless's default path): {what}; {why}\n",
            state.path().join("stackless/state.db").display()
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        if on_stdout {
            assert_eq!(
                (text(&out.stdout), text(&out.stderr)),
                (line, String::new()),
                "{args:?}"
            );
        } else {
            assert_eq!(
                (text(&out.stdout), text(&out.stderr)),
                (String::new(), format!("stackless-tui: {line}")),
                "{args:?}"
            );
        }
        assert_eq!(
            std::fs::read_dir(state.path()).unwrap().count(),
            0,
            "{args:?}"
        );
    }
}

/// A real `reap --once` pass creates the store at stackless's default
/// path, as stackless does on first run, and says so; a pass with nothing
/// to reap says that too, dry or not.
#[test]
fn reap_once_creates_the_default_store_and_says_when_there_is_nothing_to_reap() {
    let state = tempfile::tempdir().unwrap();
    let path = state.path().join("stackless/state.db");
    let reap = |dry: bool| {
        let mut command = bin();
        command.env("XDG_STATE_HOME", state.path()).args([
            "reap",
            "--once",
            "--down-cmd",
            "sh -c true {name}",
        ]);
        if dry {
            command.arg("--dry-run");
        }
        run(&mut command)
    };
    let nothing = "reaper  skipped: nothing to reap: no instance is expired\n";
    let out = reap(false);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "no store at {}: created an empty one, as stackless would\n{nothing}",
            path.display()
        )
    );
    assert!(path.exists());
    for dry in [false, true] {
        let out = reap(dry);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), nothing, "dry run: {dry}");
    }
}

/// The teardown command is checked once, before any instance.
#[test]
fn reap_once_checks_the_teardown_command_before_any_teardown() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let path = path.to_str().unwrap();
    let down = "no-such-stackless down {name}";
    let out = run(bin().args([
        "reap",
        "--once",
        "--dry-run",
        "--state",
        path,
        "--down-cmd",
        down,
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("would reap") && !l.ends_with("would GC tombstone"))
        .collect();
    assert!(!lines.is_empty(), "{stdout}");
    // A tombstone past the GC window (by today's clock) runs no teardown
    // command: its line carries no note.
    assert!(
        stdout
            .lines()
            .filter(|l| l.contains("would GC tombstone"))
            .all(|l| l.ends_with("would reap: would GC tombstone")),
        "{stdout}"
    );
    for line in lines {
        assert!(
            line.ends_with(
                "would reap: dry run: nothing run (teardown command 'no-such-stackless' not found on PATH)"
            ),
            "{line}"
        );
    }
    let out = run(bin().args(["reap", "--once", "--state", path, "--down-cmd", down]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "stackless-tui: reap --once: teardown command 'no-such-stackless' not found on PATH: \
         nothing was torn down (check --down-cmd, or PATH)\n"
    );
}

#[test]
fn the_man_page_has_keys_files_environment_and_exit_status() {
    let out = run(bin().arg("man"));
    assert_eq!(out.status.code(), Some(0));
    let man = text(&out.stdout);
    for heading in [
        ".SH SUBCOMMANDS",
        ".SH KEYS",
        ".SH FILES",
        ".SH ENVIRONMENT",
        ".SH EXIT STATUS",
    ] {
        assert!(man.contains(heading), "{heading}");
    }
    assert!(!man.contains("stackless\\-tui\\-snapshot("), "{man}");
    assert!(!man.contains("stackless\\-tui\\-reap("), "{man}");
}

/// A machine whose whole clock reads a year behind (the kernel agrees, so
/// only the store can tell): the store's newest write is a year after the
/// wall clock, and `reap --once` reaps nothing, naming the evidence.
#[test]
fn reap_once_refuses_when_the_wall_clock_is_far_behind_the_stores_newest_write() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let written = i64::try_from(now).unwrap() + 365 * 86_400 + 12 * 3600;
    crate::common::stores::exec(
        &path,
        &format!("UPDATE instances SET created_at = {written} WHERE name = 'alpha'"),
    );
    let down = script(dir.path(), "exit 0");
    let out = run(bin()
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("reaped"), "{stdout}");
    let iso = jiff::Timestamp::from_second(written)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let said = format!(
        "clock looks wrong: the wall clock is 1y 000d behind the store's newest write (instances.created_at of alpha, {iso}); reaper and GC paused, r is off"
    );
    assert!(stdout.contains(&said), "{stdout}\n{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

/// While the clock looks wrong (here: a year behind the store's newest
/// write), `snapshot` says the reaper would not act, in the table and in
/// JSON, as `reap --once` refuses.
#[test]
fn snapshot_says_paused_clock_for_the_expired_while_the_clock_looks_wrong() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let written = i64::try_from(now).unwrap() + 365 * 86_400 + 12 * 3600;
    crate::common::stores::exec(
        &path,
        &format!("UPDATE instances SET created_at = {written} WHERE name = 'alpha'"),
    );
    let out = run(bin().args(["snapshot", "--json", "--state"]).arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let find = |json: &serde_json::Value| {
        json["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == "golf")
            .cloned()
            .unwrap()
    };
    let golf = find(&json);
    assert_eq!(golf["reaper"], "paused: clock", "{golf}");
    assert_eq!(golf["reaper_action"], "paused_clock");
    assert!(
        text(&out.stderr).contains("clock looks wrong: the wall clock is 1y 000d behind the store's newest write (instances.created_at of alpha, "),
        "{}",
        text(&out.stderr)
    );
    let out = run(bin().args(["snapshot", "--state"]).arg(&path));
    let table = text(&out.stdout);
    let golf_row = table
        .lines()
        .find(|l| l.starts_with("golf"))
        .unwrap_or_default();
    assert!(golf_row.contains("paused: clock"), "{table}");
    // Without the doubt (an explicit --now), the same row says what the
    // rules decide (at capture: golf waits out its backoff).
    let out = run(bin()
        .args([
            "snapshot",
            "--json",
            "--now",
            &CAPTURE.to_string(),
            "--state",
        ])
        .arg(&path));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(find(&json)["reaper_action"], "wait_backoff");
}

/// The kernel check too: a wall clock a year ahead of the kernel's
/// (`STACKLESS_TUI_CLOCK_OFFSET`, as `faketime` makes one) is `paused:
/// clock` in `snapshot`, and `reap --once` reaps nothing.
#[test]
fn snapshot_and_reap_once_agree_on_a_clock_ahead_of_the_kernel() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let out = run(bin()
        .env("STACKLESS_TUI_CLOCK_OFFSET", "31536000")
        .args(["snapshot", "--json", "--state"])
        .arg(&path));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let actions: Vec<&serde_json::Value> = json["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["reaper_action"])
        .filter(|a| !a.is_null())
        .collect();
    assert!(!actions.is_empty());
    assert!(actions.iter().all(|a| *a == "paused_clock"), "{actions:?}");
    let down = script(dir.path(), "exit 0");
    let out = run(bin()
        .env("STACKLESS_TUI_CLOCK_OFFSET", "31536000")
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("reaped"), "{stdout}");
    assert!(
        stdout.contains("clock looks wrong: the wall clock is 1y 000d ahead of the kernel's clock"),
        "{stdout}"
    );
}

/// `snapshot --json` reads the services a batch of names at a time as it
/// writes: every instance across the batch edges still carries exactly its
/// own recorded service, tombstoned ones included, and the instances
/// without one none.
#[test]
fn snapshot_json_services_are_whole_across_batches() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    // 2,500 more instances `b-0000`.. (three batches of 1,000 and a bit,
    // with the fixture's eight), each with one `start:web` checkpoint of a
    // pid that cannot exist, except every seventh.
    crate::common::stores::exec(
        &path,
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2499)
         INSERT INTO instances (name, substrate, status, definition, created_at, instance_id,
                                resource_namespace)
             SELECT printf('b-%04d', i), 'local', 'active', '{}', 1796000000,
                    printf('%032x', i), printf('sl-%032x', i) FROM n;
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2499)
         INSERT INTO checkpoints (instance, step_id, resource_kind, resource_id, payload, recorded_at)
             SELECT printf('b-%04d', i), 'start:web', 'process', '4194305',
                    '{\"pid\":4194305,\"start_time\":' || (1000 + i) || ',\"port\":' || (20000 + i) || '}',
                    1796000000
             FROM n WHERE i % 7 != 0;",
    );
    let json = snapshot_json(&path);
    let instances = json["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 2508);
    let mut with = 0;
    for instance in instances {
        let name = instance["name"].as_str().unwrap();
        let Some(i) = name.strip_prefix("b-").map(|n| n.parse::<i64>().unwrap()) else {
            continue;
        };
        let services = instance.get("services").and_then(|s| s.as_array());
        if i % 7 == 0 {
            assert!(services.is_none(), "{name}");
            continue;
        }
        let services = services.unwrap_or_else(|| panic!("{name} has its service"));
        assert_eq!(services.len(), 1, "{name}");
        assert_eq!(services[0]["name"], "web", "{name}");
        assert_eq!(services[0]["port"], 20000 + i, "{name}");
        assert_eq!(services[0]["alive"], false, "{name}");
        with += 1;
    }
    assert_eq!(with, 2500 - 358);
}

/// `reap --once` leaves a store to the controller's lease reaper (`--reaper
/// auto`, the default) and says so; `--reaper always` reaps beside it;
/// beside an embedded controller (no lease reaper) it reaps.
#[test]
fn reap_once_stands_by_for_a_controller_that_reaps() {
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = script(dir.path(), "exit 0");
    let controller = crate::common::fake_controller(dir.path(), true);
    let out = run(bin()
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "the stackless controller (pid {}) runs its lease reaper and reaps this store; nothing done (--reaper always reaps here too)\n",
            std::process::id()
        )
    );
    // Who reaps is said first, before a teardown command it would not run.
    let out = run(bin()
        .args([
            "reap",
            "--once",
            "--down-cmd",
            "no-such-stackless down {name}",
            "--state",
        ])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("the stackless controller (pid "),
        "{}",
        text(&out.stdout)
    );
    let out = run(bin()
        .args([
            "reap",
            "--once",
            "--reaper",
            "always",
            "--down-cmd",
            &down,
            "--state",
        ])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("reaper golf reaped: down succeeded"),
        "{}",
        text(&out.stdout)
    );
    drop(controller);

    // An embedded controller: reap --once reaps.
    let (dir, path) = fixture("stackless-real-v4.db");
    let down = script(dir.path(), "exit 0");
    let _embedded = crate::common::fake_controller(dir.path(), false);
    let out = run(bin()
        .args(["reap", "--once", "--down-cmd", &down, "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("reaper golf reaped: down succeeded"),
        "{}",
        text(&out.stdout)
    );
}

/// `snapshot` says when each tombstone becomes due for GC (D14:
/// `tombstoned_at` + 7 days) and who collects it: on the real 0.4.0 store
/// the controller, on the contract's v4 store stackless's reaper or this
/// console's.
#[test]
fn snapshot_says_when_a_tombstone_is_due_for_gc_and_who_collects_it() {
    let (_dir, path) = crate::common::fixture("real-0.4.0-v14.db");
    let now = 1_796_117_797 + 604_800 + 7_200;
    let out = run(bin()
        .args(["snapshot", "--json", "--now", &now.to_string(), "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let by = |name: &str| {
        doc["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        by("charlie")["gc"],
        serde_json::json!({
            "due_at": 1_796_117_797_i64 + 604_800,
            "due": true,
            "due_in_secs": 0,
            "collected_by": "controller",
        })
    );
    assert!(by("alpha").get("gc").is_none(), "an active row has none");
    let out = run(bin()
        .args(["snapshot", "--utc", "--now", &now.to_string(), "--state"])
        .arg(&path));
    let table = text(&out.stdout);
    let gc: Vec<&str> = table
        .lines()
        .skip_while(|l| *l != "GC")
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        gc,
        [
            "GC",
            "charlie  due for GC since 2026-12-08T09:36:37Z (2h 00m ago), collected by the \
             stackless controller's lease reaper (a gc operation; an embedded controller has none)",
            "delta  due for GC since 2026-12-08T09:37:34Z (1h 59m ago), collected by the \
             stackless controller's lease reaper (a gc operation; an embedded controller has none)",
        ],
        "{table}"
    );

    let (_dir, v4) = fixture("stackless-real-v4.db");
    let doc = snapshot_json(&v4);
    let charlie = doc["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "charlie")
        .unwrap()
        .clone();
    assert_eq!(
        charlie["gc"],
        serde_json::json!({
            "due_at": 1_795_959_971_i64 + 604_800,
            "due": false,
            "due_in_secs": 1_795_959_971_i64 + 604_800 - CAPTURE,
            "collected_by": "reaper",
        })
    );
    let out = run(bin()
        .args([
            "snapshot",
            "--utc",
            "--now",
            &CAPTURE.to_string(),
            "--state",
        ])
        .arg(&v4));
    let table = text(&out.stdout);
    assert!(
        table.contains(
            "\ncharlie  due for GC at 2026-12-06T13:46:11Z (in 6d 23h), collected by stackless's \
             reaper or this console's reaper, whichever passes first\n"
        ),
        "{table}"
    );
}

/// `snapshot` marks a row a failed `up` left (active, no lease, nothing
/// pending, no live lock) as the console's row does, and `snapshot --json`
/// says it as `failed_up`.
#[test]
fn snapshot_marks_a_row_left_by_a_failed_up() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    let out = run(bin()
        .args(["snapshot", "--now", "1796117797", "--state"])
        .arg(&path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let bravo = table
        .lines()
        .find(|l| l.starts_with("bravo "))
        .expect("bravo's row");
    assert!(bravo.contains(" failed up: no lease"), "{table}");
    let doc = snapshot_json(&path);
    let failed: Vec<(&str, bool)> = doc["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap(),
                i["failed_up"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [
            ("alpha", false),
            ("bravo", true),
            ("charlie", false),
            ("delta", false),
            ("foxtrot", false),
            ("golf", false),
            ("hotel", false),
            ("india", false),
        ]
    );
}

/// A variable set but empty counts as unset, for clap too (else clap
/// refuses `STACKLESS_TUI_STATE=` with "a value is required for '--state
/// <PATH>'"): the default store is opened, no fleet or controller is
/// reached.
#[test]
fn empty_variables_count_as_unset() {
    let state = tempfile::tempdir().unwrap();
    let path = state.path().join("stackless/state.db");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stackless-real-v4.db"),
        &path,
    )
    .unwrap();
    let out = run(bin()
        .env("XDG_STATE_HOME", state.path())
        .env("STACKLESS_TUI_STATE", "")
        .env("STACKLESS_TUI_TICK", "")
        .env("STACKLESS_TUI_READ_ONLY", "")
        .env("STACKLESS_TUI_FLEET", "")
        .env("STACKLESS_CONTROLLER", "")
        .env("STACKLESS_STATE_URL", "")
        .args(["snapshot", "--json", "--now", &CAPTURE.to_string()]));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["store"], path.display().to_string());
    assert_eq!(doc["store_user_version"], 4);
}
