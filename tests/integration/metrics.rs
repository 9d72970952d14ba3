//! `snapshot --format openmetrics` through the real binary: Prometheus's
//! own `promtool check metrics` takes it for every fixture store, a
//! generated 100,000-instance store and a store of hostile label values,
//! and each value equals what `snapshot --json` says of the same store at
//! the same `--now`. Without promtool (Debian/Ubuntu: the `prometheus`
//! package) the promtool checks are skipped, said once; with `CI` set
//! they fail, naming the package.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{CAPTURE, fixture};

/// Where Debian's `prometheus` package puts promtool.
const PROMTOOL: &str = "/usr/bin/promtool";

/// The fixture stores every check runs on.
const FIXTURES: [&str; 7] = [
    "hostile.db",
    "newer-v6.db",
    "older-v2.db",
    "real-0.2.0-v5.db",
    "real-0.3.0-v5.db",
    "real-0.4.0-v14.db",
    "stackless-real-v4.db",
];

/// promtool, or `None` (said) when it is not installed and `CI` is not
/// set. With `CI` set, a missing promtool fails the test, naming the
/// package.
pub fn promtool() -> Option<PathBuf> {
    let path = PathBuf::from(PROMTOOL);
    if path.exists() {
        return Some(path);
    }
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(
        !ci,
        "{PROMTOOL} is missing (Debian/Ubuntu: apt-get install prometheus); with CI set the \
         promtool tests are required"
    );
    eprintln!(
        "skipping the promtool checks: {PROMTOOL} is not installed (Debian/Ubuntu: apt-get \
         install prometheus); with CI set they are required"
    );
    None
}

/// `promtool check metrics` of `text`: it must pass, saying nothing.
pub fn check_metrics(text: &str) {
    let Some(promtool) = promtool() else { return };
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {:?}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stackless-tui"));
    command
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .env("XDG_STATE_HOME", "/nonexistent-state")
        .env("TZ", "UTC0");
    for (key, _) in std::env::vars() {
        if key.starts_with("STACKLESS_TUI_") || key.starts_with("STACKLESS_") {
            command.env_remove(key);
        }
    }
    command
}

/// `snapshot` of the store at `path` at `now` with `args`: its stdout,
/// after checking it exited 0.
fn snapshot(path: &Path, now: i64, args: &[&str]) -> Vec<u8> {
    let out = bin()
        .arg("--state")
        .arg(path)
        .args(["snapshot", "--now", &now.to_string()])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The document's samples, `name{labels}` to value.
pub fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (key, value) = line.rsplit_once(' ').unwrap();
            (key.to_owned(), value.parse::<f64>().unwrap())
        })
        .collect()
}

/// A label value as the document writes it.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The state's samples as `snapshot --json`'s document says them.
fn expected(doc: &Value) -> BTreeMap<String, f64> {
    let mut want: BTreeMap<String, f64> = BTreeMap::new();
    let mut add = |key: String, n: f64| *want.entry(key).or_default() += n;
    add("stackless_store_up".into(), 1.0);
    add(
        "stackless_store_schema_version".into(),
        doc["store_user_version"].as_f64().unwrap(),
    );
    add(
        "stackless_snapshot_timestamp_seconds".into(),
        doc["now"].as_f64().unwrap(),
    );
    let (mut overdue, mut failed_up, mut backoffs, mut attempts, mut most) = (0, 0, 0, 0, 0);
    for state in [
        "alive",
        "stale_pid_gone",
        "stale_pid_reused",
        "foreign_host",
        "unknown",
    ] {
        add(format!("stackless_locks{{liveness=\"{state}\"}}"), 0.0);
    }
    for i in doc["instances"].as_array().unwrap() {
        let (status, substrate) = (
            label(i["status"].as_str().unwrap()),
            label(i["substrate"].as_str().unwrap()),
        );
        add(
            format!("stackless_instances{{status=\"{status}\",substrate=\"{substrate}\"}}"),
            1.0,
        );
        if status == "active" && i["lease"]["expired"] == true {
            add(
                format!("stackless_instances_expired{{substrate=\"{substrate}\"}}"),
                1.0,
            );
            overdue = overdue.max(i["lease"]["overdue_secs"].as_i64().unwrap());
        }
        if i["failed_up"] == true {
            failed_up += 1;
        }
        if let Some(state) = i["lock"]["liveness_state"].as_str() {
            add(format!("stackless_locks{{liveness=\"{state}\"}}"), 1.0);
        }
        if let Some(n) = i["reap_attempt"]["attempts"].as_i64() {
            backoffs += 1;
            attempts += n;
            most = most.max(n);
        }
    }
    let queue = doc["store_user_version"].as_i64().unwrap() >= 8;
    for outcome in ["succeeded", "failed"].into_iter().filter(|_| queue) {
        add(
            format!("stackless_controller_teardowns{{actor=\"controller\",outcome=\"{outcome}\"}}"),
            0.0,
        );
    }
    for op in doc["operations"].as_array().unwrap() {
        let status = op["status"].as_str().unwrap();
        if op["verb"] == "down" && (status == "succeeded" || status == "failed") {
            add(
                format!(
                    "stackless_controller_teardowns{{actor=\"controller\",outcome=\"{status}\"}}"
                ),
                1.0,
            );
        }
        if status == "queued" || status == "running" {
            let verb = label(op["verb"].as_str().unwrap());
            add(
                format!("stackless_operations_pending{{verb=\"{verb}\",status=\"{status}\"}}"),
                1.0,
            );
        }
    }
    #[allow(clippy::cast_precision_loss)]
    for (name, n) in [
        ("stackless_lease_overdue_max_seconds", overdue),
        ("stackless_instances_failed_up", failed_up),
        ("stackless_reap_backoffs", backoffs),
        ("stackless_reap_backoff_attempts", attempts),
        ("stackless_reap_backoff_attempts_max", most),
    ] {
        add(name.into(), n as f64);
    }
    want
}

/// The state families' samples of the document at `path` equal what
/// `snapshot --json` says at the same `now`, and promtool takes it;
/// returns the document.
fn checked(path: &Path, now: i64) -> String {
    let text = String::from_utf8(snapshot(path, now, &["--format", "openmetrics"])).unwrap();
    assert!(text.ends_with("\n# EOF\n"), "{text}");
    check_metrics(&text);
    let doc: Value = serde_json::from_slice(&snapshot(path, now, &["--json"])).unwrap();
    let want = expected(&doc);
    let got: BTreeMap<String, f64> = samples(&text)
        .into_iter()
        .filter(|(key, _)| {
            !key.starts_with("stackless_teardown") && !key.starts_with("stackless_reaper_info")
        })
        .collect();
    assert_eq!(got, want, "{}", path.display());
    text
}

#[test]
fn every_fixture_store_passes_promtool_and_equals_snapshot_json() {
    for name in FIXTURES {
        let (_dir, path) = fixture(name);
        let text = checked(&path, CAPTURE);
        assert!(
            text.contains("\nstackless_reaper_info{by=\"nobody\"} 1\n"),
            "{name}"
        );
        assert!(
            text.contains(
                "\nstackless_teardowns_total{actor=\"reaper\",outcome=\"attempted\"} 0\n"
            ),
            "{name}"
        );
    }
}

#[test]
fn a_generated_100k_store_passes_promtool_and_equals_snapshot_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let spec = stackless_tui::bench_support::GenSpec {
        instances: 100_000,
        seed: 42,
        now: CAPTURE,
        host: "golden-host.invalid".into(),
    };
    let summary = stackless_tui::bench_support::generate(&path, &spec).unwrap();
    let text = checked(&path, CAPTURE);
    let expired: f64 = samples(&text)
        .iter()
        .filter(|(key, _)| key.starts_with("stackless_instances_expired{"))
        .map(|(_, n)| n)
        .sum();
    #[allow(clippy::cast_precision_loss)]
    let generated = summary.expired as f64;
    assert_eq!(expired, generated);
}

/// Substrates with `\`, `"` and newlines, twenty of them: escaped, at
/// most 16 values a label (the rest `other`), and promtool takes it.
#[test]
fn hostile_label_values_are_escaped_and_capped() {
    let (_dir, path) = fixture("stackless-real-v4.db");
    crate::common::stores::exec(
        &path,
        r#"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
           INSERT INTO instances (name, substrate, definition, created_at)
           SELECT 'h' || i, 'q"b\' || char(10) || printf('%02d', i), '', 1 FROM n;"#,
    );
    let text = String::from_utf8(snapshot(&path, CAPTURE, &["--format", "openmetrics"])).unwrap();
    check_metrics(&text);
    let got = samples(&text);
    assert_eq!(
        got["stackless_instances{status=\"active\",substrate=\"q\\\"b\\\\\\n01\"}"],
        1.0
    );
    let substrates: Vec<&String> = got
        .keys()
        .filter(|key| key.starts_with("stackless_instances{"))
        .collect();
    assert_eq!(substrates.len(), 17, "{substrates:?}");
    // `local` (6 active, 2 tombstoned: two series), 14 hostile ones,
    // the other 6 counted as `other`.
    assert_eq!(
        got["stackless_instances{status=\"active\",substrate=\"other\"}"],
        6.0
    );
}

/// The samples of `text` that do not move with the clock (the read's
/// time and the oldest overdue lease do).
fn still(text: &str) -> BTreeMap<String, f64> {
    samples(text)
        .into_iter()
        .filter(|(key, _)| {
            key != "stackless_snapshot_timestamp_seconds"
                && key != "stackless_lease_overdue_max_seconds"
        })
        .collect()
}

/// A writer replaces the file 200 times, a document of a different size
/// each time (up to about 190 KB), while a reader reads it in a loop:
/// every read is one whole document (its lines all of one write, as many
/// as that write had, `# EOF` last). The file is 0644, and a symbolic
/// link at its path is replaced, its target untouched.
#[test]
fn a_reader_never_sees_half_a_metrics_file() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stackless.prom");
    let target = dir.path().join("target");
    std::fs::write(&target, "kept\n").unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    let lines_of = |write: usize| 50 + (write * 37) % 4_000;
    let doc = |write: usize| {
        let mut text = String::from("# HELP stackless_w A write.\n# TYPE stackless_w gauge\n");
        for n in 0..lines_of(write) {
            text.push_str(&format!("stackless_w{{n=\"{n}\"}} {write}\n"));
        }
        text + "# EOF\n"
    };
    stackless_tui::nofollow::replace(&path, doc(0).as_bytes()).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept\n");
    assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let reads = std::sync::Arc::new(AtomicUsize::new(0));
    let reader = {
        let (path, done, reads) = (path.clone(), done.clone(), reads.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    text.ends_with("\n# EOF\n"),
                    "a half file: {} bytes",
                    text.len()
                );
                let values: Vec<usize> = samples(&text).values().map(|v| *v as usize).collect();
                let write = values[0];
                assert!(values.iter().all(|v| *v == write), "two writes in one read");
                assert_eq!(values.len(), lines_of(write), "write {write} cut");
                reads.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    // The writes start once the reader has read once.
    while reads.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    for write in 1..=200 {
        stackless_tui::nofollow::replace(&path, doc(write).as_bytes()).unwrap();
    }
    done.store(true, Ordering::SeqCst);
    reader.join().unwrap();
    assert!(reads.load(Ordering::SeqCst) > 1);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), doc(200));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "no temporary file is left");
}

/// `serve --stdio --metrics-file F` writes the document to `F` at start,
/// and its `metrics` command answers it: the same values as `snapshot
/// --format openmetrics` of the store, and promtool takes both.
#[test]
fn serve_writes_the_metrics_file_and_answers_metrics() {
    use super::agent_process::{lines_of, spawn, wait_for};
    use std::io::Write as _;
    let home = tempfile::tempdir().unwrap();
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let file = dir.path().join("out").join("stackless.prom");
    std::fs::create_dir(file.parent().unwrap()).unwrap();
    let mut child = spawn(
        home.path(),
        Some(&path),
        &[
            "--read-only",
            "--metrics-file",
            file.to_str().unwrap(),
            "serve",
            "--stdio",
        ],
    );
    let rx = lines_of(&mut child);
    wait_for(&rx, |m| m["type"] == "synced");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"id":"m","cmd":"metrics"}}"#).unwrap();
    let reply = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "m");
    assert_eq!(reply["ok"], true, "{reply}");
    let answered: String = reply["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| format!("{}\n", line.as_str().unwrap()))
        .collect();
    assert!(answered.ends_with("\n# EOF\n"), "{answered}");
    check_metrics(&answered);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !file.exists() {
        assert!(std::time::Instant::now() < deadline, "no metrics file");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let written = std::fs::read_to_string(&file).unwrap();
    check_metrics(&written);
    let out = bin()
        .arg("--state")
        .arg(&path)
        .args(["snapshot", "--format", "openmetrics"])
        .output()
        .unwrap();
    let snapshot = String::from_utf8(out.stdout).unwrap();
    assert_eq!(still(&answered), still(&snapshot));
    assert_eq!(still(&written), still(&snapshot));
    assert_eq!(samples(&answered)["stackless_store_up"], 1.0);
    drop(stdin);
    child.wait().unwrap();
}

/// The rules file's test, `docs/alerts.test.yml`.
const RULES_TEST: &str = "docs/alerts.test.yml";

/// Where the recorded series start and end in [`RULES_TEST`].
const SERIES_BEGIN: &str = "      # recorded: begin\n";
const SERIES_END: &str = "      # recorded: end\n";

/// `text` (a document) as the input series of a rules test, 90 minutes
/// of one sample a minute: each value as recorded and staying, but the
/// times that move with the clock (the read's time, the oldest overdue
/// lease) growing 60 s a minute.
fn input_series(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let (key, value) = line.rsplit_once(' ').unwrap();
        let step = if key == "stackless_lease_overdue_max_seconds"
            || key == "stackless_snapshot_timestamp_seconds"
        {
            60
        } else {
            0
        };
        out.push_str(&format!(
            "      - series: '{key}'\n        values: '{value}+{step}x90'\n"
        ));
    }
    out
}

/// The alert rules of docs/alerts.yml pass `promtool check rules`, and
/// `promtool test rules` shows them firing on the series recorded from
/// `snapshot --format openmetrics` of stackless-real-v4.db at its capture
/// (one expired lease 332 s overdue, one reap backoff, nobody reaping):
/// the backoff's alert at 35 min and not at 25 (`for: 30m`), the overdue
/// lease's once it passes an hour (at 60 min), nobody reaping's at 20
/// min, and no store-down alert. The recording is the binary's output
/// now (`UPDATE_GOLDEN=1` writes it again).
#[test]
fn the_alert_rules_pass_promtool_and_fire_on_a_recorded_series() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_dir, path) = fixture("stackless-real-v4.db");
    let text = String::from_utf8(snapshot(&path, CAPTURE, &["--format", "openmetrics"])).unwrap();
    let series = input_series(&text);
    let file = root.join(RULES_TEST);
    let test = std::fs::read_to_string(&file).unwrap();
    let (head, rest) = test.split_once(SERIES_BEGIN).unwrap();
    let (recorded, tail) = rest.split_once(SERIES_END).unwrap();
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(
            &file,
            format!("{head}{SERIES_BEGIN}{series}{SERIES_END}{tail}"),
        )
        .unwrap();
    } else {
        assert_eq!(
            recorded, series,
            "{RULES_TEST}: UPDATE_GOLDEN=1 records it again"
        );
    }
    assert!(
        series.contains("      - series: 'stackless_reap_backoffs'\n        values: '1+0x90'\n")
    );
    let Some(promtool) = promtool() else { return };
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts.test.yml"],
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(root.join("docs"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A store that cannot be read is `stackless_store_up 0` and nothing
/// else of it, why on stderr, exit 0 (a textfile written from it says
/// the store is down); promtool takes it.
#[test]
fn a_store_that_cannot_be_read_is_store_up_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(
        &path,
        "not a database, and long enough to be read as one\n".repeat(200),
    )
    .unwrap();
    let out = bin()
        .arg("--state")
        .arg(&path)
        .args(["snapshot", "--format", "openmetrics"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    check_metrics(&text);
    assert_eq!(
        samples(&text),
        BTreeMap::from([("stackless_store_up".to_owned(), 0.0)])
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("stackless-tui: "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `--format json` is `--json` byte for byte, `--format table` the table
/// (the default), and `--json` with `--format` is a usage error.
#[test]
fn format_json_and_table_are_json_and_the_table() {
    let (_dir, path) = fixture("real-0.4.0-v14.db");
    assert_eq!(
        snapshot(&path, CAPTURE, &["--format", "json"]),
        snapshot(&path, CAPTURE, &["--json"])
    );
    assert_eq!(
        snapshot(&path, CAPTURE, &["--format", "table"]),
        snapshot(&path, CAPTURE, &[])
    );
    let out = bin()
        .arg("--state")
        .arg(&path)
        .args(["snapshot", "--json", "--format", "openmetrics"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

/// The metrics file follows the audit trail: with a tick of an hour, a
/// teardown recorded after the first write is in the file within
/// seconds (the thread looks at the trail each second), not at the next
/// tick.
#[test]
fn the_metrics_file_is_written_again_when_the_audit_trail_changes() {
    use super::agent_process::{lines_of, spawn, wait_for};
    use std::io::Write as _;
    let home = tempfile::tempdir().unwrap();
    let (dir, path) = fixture("stackless-real-v4.db");
    let file = dir.path().join("stackless.prom");
    let mut child = spawn(
        home.path(),
        Some(&path),
        &[
            "--read-only",
            "--tick",
            "1h",
            "--metrics-file",
            file.to_str().unwrap(),
            "serve",
            "--stdio",
        ],
    );
    let rx = lines_of(&mut child);
    wait_for(&rx, |m| m["type"] == "synced");
    let failed = "\nstackless_teardowns_total{actor=\"reaper\",outcome=\"failed\"} 1\n";
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !read().ends_with("# EOF\n") {
        assert!(std::time::Instant::now() < deadline, "no metrics file");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!read().contains(failed));
    let audit = dir.path().join("stackless-tui");
    std::fs::create_dir_all(&audit).unwrap();
    let mut trail = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(audit.join("audit.jsonl"))
        .unwrap();
    writeln!(
        trail,
        r#"{{"unix":1,"actor":"reaper","instance":"golf","action":"teardown","outcome":"failed","reason":"x","duration_ms":2000}}"#
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !read().contains(failed) {
        assert!(
            std::time::Instant::now() < deadline,
            "the teardown never reached the file:\n{}",
            read()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(child.stdin.take());
    child.wait().unwrap();
}

/// `serve --stdio`'s `metrics` answers what the metrics file says for the
/// same state: the audit trail's counts come to both from the one
/// `audit-counts` thread (never read on the agent's loop).
#[test]
fn serve_s_metrics_reply_equals_the_metrics_file() {
    use super::agent_process::{lines_of, spawn, wait_for};
    use std::io::Write as _;
    let home = tempfile::tempdir().unwrap();
    let (dir, path) = fixture("real-0.4.0-v14.db");
    let audit = dir.path().join("stackless-tui");
    std::fs::create_dir_all(&audit).unwrap();
    std::fs::write(
        audit.join("audit.jsonl"),
        concat!(
            r#"{"unix":1,"actor":"reaper","instance":"golf","action":"teardown","outcome":"started","reason":""}"#,
            "\n",
            r#"{"unix":2,"actor":"reaper","instance":"golf","action":"teardown","outcome":"failed","reason":"x","duration_ms":2000}"#,
            "\n",
            r#"{"unix":3,"actor":"operator","instance":"hotel","action":"teardown","outcome":"succeeded","reason":"","duration_ms":400}"#,
            "\n",
        ),
    )
    .unwrap();
    let file = dir.path().join("stackless.prom");
    let mut child = spawn(
        home.path(),
        Some(&path),
        &[
            "--read-only",
            "--tick",
            "1h",
            "--metrics-file",
            file.to_str().unwrap(),
            "serve",
            "--stdio",
        ],
    );
    let rx = lines_of(&mut child);
    wait_for(&rx, |m| m["type"] == "synced");
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !read().ends_with("# EOF\n") {
        assert!(std::time::Instant::now() < deadline, "no metrics file");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"id":"m","cmd":"metrics"}}"#).unwrap();
    let reply = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "m");
    assert_eq!(reply["ok"], true, "{reply}");
    let answered: String = reply["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| format!("{}\n", line.as_str().unwrap()))
        .collect();
    let written = read();
    check_metrics(&answered);
    assert_eq!(still(&answered), still(&written));
    let got = samples(&answered);
    for (key, want) in [
        (
            "stackless_teardowns_total{actor=\"reaper\",outcome=\"attempted\"}",
            1.0,
        ),
        (
            "stackless_teardowns_total{actor=\"reaper\",outcome=\"failed\"}",
            1.0,
        ),
        (
            "stackless_teardowns_total{actor=\"operator\",outcome=\"succeeded\"}",
            1.0,
        ),
        (
            "stackless_teardown_duration_seconds_sum{actor=\"reaper\"}",
            2.0,
        ),
    ] {
        assert_eq!(got.get(key), Some(&want), "{key} in\n{answered}");
    }
    // The controller's finished downs, as the store holds them (fewer
    // than the newest 50 finished operations read).
    let conn =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let finished: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM operations WHERE status NOT IN ('queued', 'running')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(finished < 50, "{finished}");
    for outcome in ["succeeded", "failed"] {
        let held: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM operations WHERE verb = 'down' AND status = ?1",
                [outcome],
                |row| row.get(0),
            )
            .unwrap();
        let key =
            format!("stackless_controller_teardowns{{actor=\"controller\",outcome=\"{outcome}\"}}");
        #[allow(clippy::cast_precision_loss)]
        let held = held as f64;
        assert_eq!(got.get(&key), Some(&held), "{key} in\n{answered}");
    }
    assert_eq!(
        got["stackless_controller_teardowns{actor=\"controller\",outcome=\"failed\"}"],
        7.0
    );
    drop(stdin);
    child.wait().unwrap();
}

/// A `metrics` asked while the audit trail is still being counted (its
/// count held by `STACKLESS_TUI_FAULT=hold:audit-counts:GATE`) stalls
/// nothing: a `ping` asked after it is answered first, and the `metrics`
/// reply comes once the count ended, with the trail's counts.
#[test]
fn a_metrics_command_never_waits_on_the_audit_trail() {
    use super::agent_process::{lines_of, wait_for};
    use std::io::Write as _;
    let home = tempfile::tempdir().unwrap();
    let (dir, path) = fixture("stackless-real-v4.db");
    let audit = dir.path().join("stackless-tui");
    std::fs::create_dir_all(&audit).unwrap();
    std::fs::write(
        audit.join("audit.jsonl"),
        concat!(
            r#"{"unix":2,"actor":"reaper","instance":"golf","action":"teardown","outcome":"failed","reason":"x","duration_ms":2000}"#,
            "\n",
        ),
    )
    .unwrap();
    let gate = dir.path().join("gate");
    std::fs::write(&gate, "").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .arg("--state")
        .arg(&path)
        .args(["--read-only", "serve", "--stdio"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env(
            "STACKLESS_TUI_FAULT",
            format!("hold:audit-counts:{}", gate.display()),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rx = lines_of(&mut child);
    wait_for(&rx, |m| m["type"] == "synced");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"id":"m","cmd":"metrics"}}"#).unwrap();
    writeln!(stdin, r#"{{"id":"p","cmd":"ping"}}"#).unwrap();
    let first = wait_for(&rx, |m| m["type"] == "reply");
    assert_eq!(first["id"], "p", "{first}");
    assert_eq!(first["ok"], true, "{first}");
    std::fs::remove_file(&gate).unwrap();
    let reply = wait_for(&rx, |m| m["type"] == "reply" && m["id"] == "m");
    assert_eq!(reply["ok"], true, "{reply}");
    let answered: String = reply["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| format!("{}\n", line.as_str().unwrap()))
        .collect();
    check_metrics(&answered);
    assert_eq!(
        samples(&answered)["stackless_teardowns_total{actor=\"reaper\",outcome=\"failed\"}"],
        1.0
    );
    drop(stdin);
    child.wait().unwrap();
}

/// `serve --stdio --helper CMD --metrics-file F` with a helper that exits
/// at once: the file's `stackless_helper_restarts_total{helper="sh"}`
/// equals the restarts the supervisor reported in the console log (each
/// `helper started` after the first).
#[test]
fn the_metrics_file_counts_a_crash_looping_helper_s_restarts() {
    use super::agent_process::{lines_of, spawn, wait_for};
    let home = tempfile::tempdir().unwrap();
    let (dir, path) = fixture("stackless-real-v4.db");
    let file = dir.path().join("stackless.prom");
    let mut child = spawn(
        home.path(),
        Some(&path),
        &[
            "--helper",
            "/bin/sh -c 'exit 3'",
            "--metrics-file",
            file.to_str().unwrap(),
            "serve",
            "--stdio",
        ],
    );
    let rx = lines_of(&mut child);
    wait_for(&rx, |m| m["type"] == "synced");
    let log = dir.path().join("stackless-tui").join("console.log");
    // succession waits 4 s before the first restart, 8 s before the next.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let written = samples(&text)
            .get("stackless_helper_restarts_total{helper=\"sh\"}")
            .copied();
        let starts = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains("helper: helper started"))
            .count();
        #[allow(clippy::cast_precision_loss)]
        let reported = starts.saturating_sub(1) as f64;
        if written == Some(reported) && reported >= 1.0 {
            check_metrics(&text);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the file says {written:?} restarts, the log {reported}:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(child.stdin.take());
    child.wait().unwrap();
}
