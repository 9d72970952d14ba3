//! A fleet: several controllers' hosts named at once (`--controller`
//! given twice or more, or a fleet file: `--fleet FILE`,
//! `STACKLESS_TUI_FLEET`, the config file's `fleet`), as pure rules: which
//! hosts a fleet file or the flags name, what one host's answer to
//! `snapshot --json` was, and the one document (or table) made of every
//! host's answer; the run a fleet is planned for ([`FleetLaunch`]). No
//! I/O: `crate::fleet` runs the ssh this plans.
//!
//! Each host is reached exactly as one `--controller` reaches it
//! ([`super::plan::Plan`]); a host is shown by its label, else by its
//! alias (the target's host part).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};
use toml::Value as TomlValue;

use super::failure::{classify, failure_message};
use super::plan::{Plan, Target};
use crate::cli::Sub;
use crate::model::text::sanitize_short;

/// The version of the fleet document's shape (`snapshot --json` over a
/// fleet): its instances and operations are those of the one-host
/// document ([`crate::headless::report::SCHEMA_VERSION`]) with a `host`
/// added; bumped on any incompatible change.
pub(crate) const FLEET_SCHEMA_VERSION: u32 = 1;

/// The most of one host's `snapshot --json` read into memory (bytes): a
/// host whose document is longer is failed, never merged.
pub(crate) const MAX_HOST_DOCUMENT: usize = 512 << 20;

/// What a label may be (DNS-safe-ish, short): shown in the errors.
pub(crate) const LABEL_RULE: &str =
    "a label is 1 to 63 characters of A-Z, a-z, 0-9, '-', '_' and '.'";

/// What the launcher decided for this run (`super::launch_if_remote`).
pub(crate) enum Launch {
    /// Run on one controller's host (or refused): done, with this status.
    Done(std::process::ExitCode),
    /// Run over a fleet: planned here, run by `crate::fleet::run`.
    Fleet(FleetLaunch),
}

/// A run over a fleet of two or more hosts, planned: what runs, the
/// hosts, and each host's ssh plan (`plans[i]` reaches `hosts[i]`).
pub(crate) struct FleetLaunch {
    /// What runs over the fleet.
    pub what: FleetWhat,
    /// The hosts, in the fleet's order.
    pub hosts: Vec<FleetHost>,
    /// Each host's plan, in the same order.
    pub plans: Vec<Plan>,
}

/// Which run over a fleet.
pub(crate) enum FleetWhat {
    /// The console over every host's agent (`serve --stdio`), its times
    /// shown in `zone`.
    Console {
        /// The display zone (`--utc`: UTC).
        zone: jiff::tz::TimeZone,
    },
    /// `snapshot --follow`: every host's stream, tagged, on stdout.
    Follow,
    /// `record`: every host's `snapshot --follow` recorded, each into
    /// `<dir>/<host>/` (docs/history.md, "A fleet").
    Record {
        /// The history directory (each host's a subdirectory).
        dir: std::path::PathBuf,
        /// `--retain` and `--max-size`, each host's alone.
        retention: crate::history::record::Retention,
    },
    /// `snapshot [--json]`: one merged document (`json`) or table, at
    /// `timeout` at the latest, its times in `zone`.
    Once {
        /// `--json` was asked for.
        json: bool,
        /// `--fleet-timeout`.
        timeout: std::time::Duration,
        /// The display zone (`--utc`: UTC).
        zone: jiff::tz::TimeZone,
    },
}

/// Why a fleet does not run `command` (`count` hosts): the console,
/// `snapshot`, `snapshot --json`, `snapshot --follow` and `record` run
/// over a fleet; `serve --stdio` and `reap --once` run on one host.
pub(super) fn fleet_refusal(command: &Sub, count: usize) -> String {
    let what = match command {
        Sub::Serve { .. } => "`serve --stdio`",
        Sub::Reap { .. } => "`reap --once`",
        _ => "this command",
    };
    format!(
        "{what} does not run over a fleet: over {count} hosts the console, `snapshot`, \
         `snapshot --json`, `snapshot --follow` and `record` run; run {what} with one --controller ssh://HOST"
    )
}

/// Why a fleet's `snapshot` does not take `--format` (`count` hosts): the
/// fleet merges the hosts' `--json` into one document or table; the
/// metrics of one store are asked of its host.
pub(super) fn fleet_format_refusal(count: usize) -> String {
    format!(
        "`snapshot --format` does not run over a fleet: over {count} hosts `snapshot` takes \
         `--json` or neither; ask each host for its metrics with one --controller ssh://HOST"
    )
}

/// The fleet view without a terminal here (`count` hosts): what to use
/// instead.
pub(super) fn fleet_needs_a_terminal(count: usize) -> String {
    format!(
        "the fleet view needs a terminal (stdin and stdout are not both a TTY). For scripts \
         and cron over these {count} hosts use `snapshot`, `snapshot --json` or \
         `snapshot --follow`."
    )
}

/// One host of a fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FleetHost {
    /// The target as given (`ssh://deploy@fleet-2`).
    pub given: String,
    /// The target, checked as `--controller` is ([`Target::parse`]).
    pub target: Target,
    /// The operator's short name for it, if any ([`check_label`]).
    pub label: Option<String>,
}

impl FleetHost {
    /// What the host is shown as (the `host` of its instances): its label,
    /// else its alias (the target's host part).
    #[must_use]
    pub(crate) fn name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.target.host)
    }
}

/// Check a label: 1 to 63 characters of ASCII letters, digits, `-`, `_`
/// and `.` (a DNS label's length; shown in tables and JSON as is).
///
/// # Errors
/// [`LABEL_RULE`].
pub(crate) fn check_label(label: &str) -> Result<(), &'static str> {
    let ok = (1..=63).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok { Ok(()) } else { Err(LABEL_RULE) }
}

/// `text` as the messages quote it.
fn quoted(text: &str) -> String {
    format!("{:?}", sanitize_short(text, 80))
}

/// The hosts named by `--controller` given twice or more (in order; no
/// labels).
///
/// # Errors
/// A target `Target::parse` refuses (`--controller "X": RULE`, as one
/// `--controller` says it), one given twice, or two shown by the same
/// alias.
pub(crate) fn from_controllers(list: &[String]) -> Result<Vec<FleetHost>, String> {
    let mut hosts = Vec::new();
    for given in list {
        let target = Target::parse(given)
            .map_err(|rule| format!("--controller {}: {rule}", quoted(given)))?;
        hosts.push(FleetHost {
            given: given.clone(),
            target,
            label: None,
        });
    }
    check_unique(&hosts, |i| {
        format!("--controller {}", quoted(&hosts[i].given))
    })?;
    Ok(hosts)
}

/// Two hosts of `hosts` with the same destination, or shown by the same
/// name: refused (`describe` names host `i` in the message).
fn check_unique(hosts: &[FleetHost], describe: impl Fn(usize) -> String) -> Result<(), String> {
    for (later, host) in hosts.iter().enumerate() {
        for (earlier, other) in hosts.iter().enumerate().take(later) {
            if other.target == host.target {
                return Err(format!(
                    "{} names the same host as {}: each host is given once",
                    describe(later),
                    describe(earlier)
                ));
            }
            if other.name() == host.name() {
                return Err(format!(
                    "{} and {} would both be shown as {}: give them labels that differ \
                     (in a fleet file: label = \"...\")",
                    describe(earlier),
                    describe(later),
                    quoted(host.name())
                ));
            }
        }
    }
    Ok(())
}

/// The hosts of a fleet file's `text` (read from `file`, named in the
/// errors): TOML, `[[host]]` tables each with `target` (checked as
/// `--controller` is) and an optional `label` ([`check_label`]); nothing
/// else. At least one host; none given twice.
///
/// # Errors
/// A message naming the file, the host (1-based) and what is wrong.
pub(crate) fn parse_fleet_file(text: &str, file: &Path) -> Result<Vec<FleetHost>, String> {
    let file = file.display();
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{file}: not valid TOML: {e}"))?;
    if let Some(key) = table.keys().find(|key| *key != "host") {
        return Err(format!(
            "{file}: unknown key `{}` (a fleet file holds only [[host]] tables)",
            sanitize_short(key, 80)
        ));
    }
    let list = match table.get("host") {
        None => &Vec::new(),
        Some(TomlValue::Array(list)) => list,
        Some(_) => return Err(format!("{file}: `host` must be [[host]] tables")),
    };
    if list.is_empty() {
        return Err(format!(
            "{file}: names no host (add [[host]] tables with target = \"ssh://HOST\")"
        ));
    }
    let mut hosts = Vec::new();
    for (index, entry) in list.iter().enumerate() {
        hosts.push(fleet_host(entry, &format!("{file}: host {}", index + 1))?);
    }
    check_unique(&hosts, |i| format!("{file}: host {}", i + 1))?;
    Ok(hosts)
}

/// One `[[host]]` table (`at` names it in the errors).
fn fleet_host(entry: &TomlValue, at: &str) -> Result<FleetHost, String> {
    let TomlValue::Table(entry) = entry else {
        return Err(format!("{at}: must be a [[host]] table"));
    };
    if let Some(key) = entry
        .keys()
        .find(|key| !["target", "label"].contains(&key.as_str()))
    {
        return Err(format!(
            "{at}: unknown key `{}` (known: target, label)",
            sanitize_short(key, 80)
        ));
    }
    let given = match entry.get("target") {
        Some(TomlValue::String(given)) => given.clone(),
        Some(_) => return Err(format!("{at}: `target` must be a string")),
        None => {
            return Err(format!(
                "{at}: `target` is missing (target = \"ssh://HOST\")"
            ));
        }
    };
    let target =
        Target::parse(&given).map_err(|rule| format!("{at}: target {}: {rule}", quoted(&given)))?;
    let label = match entry.get("label") {
        Some(TomlValue::String(label)) => {
            check_label(label).map_err(|rule| format!("{at}: label {}: {rule}", quoted(label)))?;
            Some(label.clone())
        }
        Some(_) => return Err(format!("{at}: `label` must be a string")),
        None => None,
    };
    Ok(FleetHost {
        given,
        target,
        label,
    })
}

/// What one host answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Its `snapshot --json` document, parsed.
    Document(Value),
    /// Why it has none: the operator's sentence.
    Failed(String),
}

/// One host's answer from how its ssh ended (`code`: its exit status, or
/// 128 + the signal), what it wrote on stdout (at most
/// [`MAX_HOST_DOCUMENT`] bytes were kept) and the tail of its stderr
/// (`tail`: [`super::failure::stderr_tail`]; `stderr`: the bytes kept).
/// ssh's own failures are classified as one `--controller` classifies them
/// ([`classify`], [`failure_message`]).
#[must_use]
pub(crate) fn answer(plan: &Plan, code: i32, stdout: &[u8], stderr: &str, tail: &str) -> Answer {
    if code == 0 {
        return match serde_json::from_slice(stdout) {
            Ok(document) => Answer::Document(document),
            Err(error) => Answer::Failed(format!(
                "the snapshot from {} is not JSON: {error}",
                plan.target.host
            )),
        };
    }
    if let Some(failure) = classify(code, stderr) {
        return Answer::Failed(failure_message(failure, plan, code, tail));
    }
    let said = if tail.is_empty() {
        String::new()
    } else {
        format!(": it said {tail:?}")
    };
    Answer::Failed(format!(
        "{} on {} exited {code}{said}",
        sanitize_short(&plan.remote_bin, 200),
        plan.target.host
    ))
}

/// The host summary fields of an answered host's `document` (`store`,
/// `store_user_version`, `now`, its instances and operations), or why the
/// document is not one this console reads.
fn summary(document: Value) -> Result<Answered, String> {
    let Value::Object(mut document) = document else {
        return Err("its snapshot is not a JSON object".to_owned());
    };
    let version = document.get("schema_version").and_then(Value::as_u64);
    if version != Some(u64::from(crate::headless::report::SCHEMA_VERSION)) {
        return Err(format!(
            "its snapshot has schema_version {}, this console reads {}",
            version.map_or_else(|| "(none)".to_owned(), |v| v.to_string()),
            crate::headless::report::SCHEMA_VERSION
        ));
    }
    let mut fields = Map::new();
    for (key, ok) in [
        ("store", Value::is_string as fn(&Value) -> bool),
        ("store_user_version", Value::is_i64),
        ("now", Value::is_i64),
    ] {
        match document.remove(key) {
            Some(value) if ok(&value) => fields.insert(key.to_owned(), value),
            _ => return Err(format!("its snapshot has no valid `{key}`")),
        };
    }
    let mut list = |key: &str| match document.remove(key) {
        Some(Value::Array(list)) => Ok(list),
        _ => Err(format!("its snapshot has no `{key}` list")),
    };
    let instances = list("instances")?;
    let operations = list("operations")?;
    Ok(Answered {
        fields,
        instances,
        operations,
    })
}

/// An answered host's document, taken apart ([`summary`]).
struct Answered {
    /// `store`, `store_user_version`, `now`.
    fields: Map<String, Value>,
    /// Its instances, as its document has them.
    instances: Vec<Value>,
    /// Its operations, as its document has them.
    operations: Vec<Value>,
}

/// `row` (an instance or an operation object) with `host` first.
fn tagged(host: &str, row: Value) -> Value {
    let mut out = Map::new();
    out.insert("host".to_owned(), Value::String(host.to_owned()));
    match row {
        Value::Object(fields) => out.extend(fields),
        other => {
            out.insert("row".to_owned(), other);
        }
    }
    Value::Object(out)
}

/// The fleet's one document from every host's answer (`answers[i]` is
/// `hosts[i]`'s): `schema_version` ([`FLEET_SCHEMA_VERSION`]), `hosts`
/// (in the order given: `host` as given, `name` (what its rows' `host`
/// says), `label`, `state` `ok` with `store`, `store_user_version`, `now`
/// and its `instances` count, or `failed` with `error`), then every
/// instance and every operation of every answered host, host by host, each
/// with its host's `name` as `host`. Also `true` when every host answered.
#[must_use]
pub(crate) fn merge(hosts: &[FleetHost], answers: Vec<Answer>) -> (Value, bool) {
    let mut summaries = Vec::new();
    let mut instances = Vec::new();
    let mut operations = Vec::new();
    let mut whole = true;
    for (host, answer) in hosts.iter().zip(answers) {
        let mut entry = Map::new();
        entry.insert("host".to_owned(), host.given.clone().into());
        entry.insert("name".to_owned(), host.name().into());
        entry.insert("label".to_owned(), host.label.clone().into());
        let read = match answer {
            Answer::Document(document) => summary(document),
            Answer::Failed(error) => Err(error),
        };
        match read {
            Ok(answered) => {
                entry.insert("state".to_owned(), "ok".into());
                entry.extend(answered.fields);
                entry.insert("instances".to_owned(), answered.instances.len().into());
                let tag = |row| tagged(host.name(), row);
                instances.extend(answered.instances.into_iter().map(tag));
                operations.extend(answered.operations.into_iter().map(tag));
            }
            Err(error) => {
                whole = false;
                entry.insert("state".to_owned(), "failed".into());
                entry.insert("error".to_owned(), error.into());
            }
        }
        summaries.push(Value::Object(entry));
    }
    let mut document = Map::new();
    document.insert("schema_version".to_owned(), FLEET_SCHEMA_VERSION.into());
    document.insert("hosts".to_owned(), summaries.into());
    document.insert("instances".to_owned(), instances.into());
    document.insert("operations".to_owned(), operations.into());
    (Value::Object(document), whole)
}

/// The stderr lines for the failed hosts of a merged `document`:
/// `stackless-tui: HOST failed: ERROR` each.
#[must_use]
pub(crate) fn failed_lines(document: &Value) -> Vec<String> {
    hosts_of(document)
        .filter(|host| host["state"] == "failed")
        .map(|host| {
            format!(
                "stackless-tui: {} failed: {}",
                sanitize_short(host["name"].as_str().unwrap_or_default(), 80),
                sanitize_short(host["error"].as_str().unwrap_or_default(), 2000)
            )
        })
        .collect()
}

/// What an answered host `name` wrote on stderr (`stderr`: its kept
/// tail, e.g. a clock doubt or the immutable-store note), one stderr line
/// each: `stackless-tui: NAME said: LINE`, sanitized and cut to 300
/// characters; blank lines dropped.
#[must_use]
pub(crate) fn said_lines(name: &str, stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            format!(
                "stackless-tui: {} said: {}",
                sanitize_short(name, 80),
                sanitize_short(line, 300)
            )
        })
        .collect()
}

fn hosts_of(document: &Value) -> impl Iterator<Item = &Value> {
    document["hosts"].as_array().into_iter().flatten()
}

/// A string field of a row, sanitized and cut to `width`.
fn cell(value: &Value, width: usize) -> String {
    value
        .as_str()
        .map_or_else(String::new, |text| sanitize_short(text, width))
}

/// One instance row of the merged document as the fleet table's cells:
/// `HOST`, then the one-host table's cells
/// (`crate::headless::report::table`), every string sanitized.
fn instance_cells(row: &Value) -> [String; 8] {
    let lease = match (&row["lease"], row["status"].as_str()) {
        (Value::Object(_), _) => cell(&row["lease"]["text"], 40),
        (_, Some("tombstoned")) => "tombstoned".to_owned(),
        _ if row["failed_up"] == true => "failed up: no lease".to_owned(),
        _ => "no lease".to_owned(),
    };
    let lock = match &row["lock"] {
        Value::Object(_) => {
            let l = &row["lock"];
            let host = l["holder_host"]
                .as_str()
                .map_or_else(String::new, |h| format!(" on {h}"));
            sanitize_short(
                &format!(
                    "{} by pid {}{host}, {}",
                    l["operation"].as_str().unwrap_or_default(),
                    l["holder_pid"],
                    l["liveness"].as_str().unwrap_or_default()
                ),
                64,
            )
        }
        _ => String::new(),
    };
    let backoff = match &row["reap_attempt"] {
        Value::Object(_) => sanitize_short(
            &format!(
                "{} ({})",
                row["reap_attempt"]["attempts"],
                row["reap_attempt"]["text"].as_str().unwrap_or_default()
            ),
            40,
        ),
        _ => String::new(),
    };
    [
        cell(&row["host"], 63),
        cell(&row["name"], 48),
        cell(&row["substrate"], 12),
        cell(&row["status"], 12),
        lease,
        lock,
        backoff,
        cell(&row["reaper"], 40),
    ]
}

/// The merged `document` as `snapshot`'s table over a fleet: one line per
/// host (`HOST  store PATH · schema vN · now TIME (UNIX) · N instances`,
/// or `HOST  failed: ERROR`), the instances of every answered host under a
/// `HOST` column first, then the tombstones' GC lines and the pending and
/// failed operations, each with its host. Times in `zone`; every string sanitized and cut to a width.
#[must_use]
pub(crate) fn fleet_table(document: &Value, zone: &jiff::tz::TimeZone) -> String {
    use crate::headless::report::{HEADER, widen, write_line};
    let hosts: Vec<&Value> = hosts_of(document).collect();
    let failed = hosts.iter().filter(|h| h["state"] == "failed").count();
    let mut out = format!(
        "fleet of {} hosts · {} answered, {failed} failed\n",
        hosts.len(),
        hosts.len() - failed
    );
    for host in &hosts {
        let name = cell(&host["name"], 63);
        let _ = if host["state"] == "ok" {
            let now = host["now"].as_i64().unwrap_or_default();
            writeln!(
                out,
                "{name}  store {} · schema v{} · now {} ({now}) · {} instances",
                cell(&host["store"], 200),
                host["store_user_version"],
                crate::model::time::stamp(now, zone),
                host["instances"]
            )
        } else {
            writeln!(out, "{name}  failed: {}", cell(&host["error"], 2000))
        };
    }
    let header: [&str; 8] = std::array::from_fn(|i| if i == 0 { "HOST" } else { HEADER[i - 1] });
    let rows: Vec<[String; 8]> = document["instances"]
        .as_array()
        .into_iter()
        .flatten()
        .map(instance_cells)
        .collect();
    let mut widths = header.map(unicode_width::UnicodeWidthStr::width);
    for row in &rows {
        widen(&mut widths, row);
    }
    let mut bytes = out.into_bytes();
    bytes.push(b'\n');
    // Writing to a vector cannot fail.
    let _ = write_line(&mut bytes, &header, &widths);
    for row in &rows {
        let _ = write_line(&mut bytes, row, &widths);
    }
    let mut out = String::from_utf8_lossy(&bytes).into_owned();
    gc_lines(&mut out, document, &hosts, zone);
    operations_lines(&mut out, document, &hosts);
    out
}

/// The `now` of the answered host named `name` among `hosts` (0 if none).
fn now_of(hosts: &[&Value], name: &Value) -> i64 {
    hosts
        .iter()
        .find(|h| h["name"] == *name)
        .and_then(|h| h["now"].as_i64())
        .unwrap_or_default()
}

/// The tombstones of every answered host, one line each with its host
/// (`fleet-1  charlie  due for GC at <time> (in 3d 04h), collected by
/// <who>`: [`crate::model::gc::GcPreview::text`] at that host's `now`, in
/// `zone`), after the instances; nothing when there are none.
fn gc_lines(out: &mut String, document: &Value, hosts: &[&Value], zone: &jiff::tz::TimeZone) {
    use crate::model::gc::{Collector, GcPreview};
    let mut first = true;
    for row in document["instances"].as_array().into_iter().flatten() {
        let gc = &row["gc"];
        let collector = match gc["collected_by"].as_str() {
            Some("controller") => Collector::Controller,
            Some("reaper") => Collector::Reapers,
            Some("stackless") => Collector::Stackless,
            _ => continue,
        };
        let Some(due_at) = gc["due_at"].as_i64() else {
            continue;
        };
        if first {
            out.push_str("\nGC\n");
            first = false;
        }
        let preview = GcPreview { due_at, collector };
        let _ = writeln!(
            out,
            "{}  {}  {}",
            cell(&row["host"], 63),
            cell(&row["name"], 48),
            preview.text(now_of(hosts, &row["host"]), zone)
        );
    }
}

/// The pending and failed operations of every answered host, one line
/// each with its host (`fleet-1  running down alpha (since 50s)`), after
/// the instances; nothing when there are none.
fn operations_lines(out: &mut String, document: &Value, hosts: &[&Value]) {
    let shown: Vec<&Value> = document["operations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|op| matches!(op["status"].as_str(), Some("queued" | "running" | "failed")))
        .collect();
    if shown.is_empty() {
        return;
    }
    // Pending first, then the failed ones (as one host's table).
    let mut shown = shown;
    shown.sort_by_key(|op| op["status"].as_str() == Some("failed"));
    out.push_str("\nOPERATIONS\n");
    for op in shown {
        let text = |key: &str| op[key].as_str().unwrap_or_default();
        let mut what = format!("{} {} {}", text("status"), text("verb"), text("instance"));
        if text("status") == "failed" {
            // When it ended, as one host's table says it.
            let ago = now_of(hosts, &op["host"])
                .saturating_sub(op["updated_at"].as_i64().unwrap_or_default());
            what.push_str(&format!(" ({} ago)", crate::model::time::span(ago.max(0))));
        }
        let tail = match &op["error"] {
            Value::Object(error) => {
                let code = error
                    .get("code")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match error.get("message").and_then(Value::as_str) {
                    Some(message) if !message.is_empty() => format!(": {code}: {message}"),
                    _ => format!(": {code}"),
                }
            }
            _ if text("status") == "failed" => op["error_unparsed"]
                .as_str()
                .map_or_else(String::new, |raw| format!(": {raw}")),
            _ => {
                let since = now_of(hosts, &op["host"])
                    .saturating_sub(op["created_at"].as_i64().unwrap_or_default());
                format!(" (since {})", crate::model::time::span(since.max(0)))
            }
        };
        let _ = writeln!(
            out,
            "{}  {}",
            cell(&op["host"], 63),
            sanitize_short(&format!("{what}{tail}"), 160)
        );
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
