//! An instance's services as the store records them, and what was found of
//! each on this machine (the detail's Services block, `snapshot --json`).
//! Pure: the process probe and the log file's metadata come in as closures
//! (`crate::store::services` passes the real ones).
//!
//! Where the facts live (read from the real releases' sources):
//! - the process: the `checkpoints` row `step_id = start:<service>`,
//!   `resource_kind = process`, whose `payload` is stackless-core's
//!   `StartCheckpoint` `{"pid","start_time","command"?,"port","hosts","log"}`
//!   (core-0.2.0..0.4.0 src/checkpoint.rs; written by stackless-local
//!   lib.rs `StepKind::Start`, the same shape on schemas 4, 5 and 14). The
//!   0.4.0 `resources` row of kind `process` carries the same payload, which
//!   this console never reads (`resources.payload` may hold credentials);
//! - alive or dead: pid plus start time, as `stackless status` decides it
//!   (cli-0.4.0 src/client/report.rs: `ProcessStamp::is_alive`) and as lock
//!   holders are probed (§2);
//! - the origin: stackless-local `local_service_origin`: `http://<host>:<proxy
//!   port>`, the host the root host (the last of `hosts`) for a
//!   `root_origin` service ([`StartRecord::origin`]); the proxy port is not
//!   in the store: the controller's `--proxy-port`, else
//!   `STACKLESS_PROXY_PORT`, else 4444 ([`proxy_port`]); a service without
//!   hosts has none, nor one whose process is dead ([`Service::origin`]);
//! - where it runs: `placements` (schema 14) `service:<name>`, else the
//!   instance's substrate; readiness: `observations` (schema 11+); drift:
//!   `instance_revisions` (per instance);
//! - its log: `<state_dir>/logs/<dir>/<service>.log`, `<dir>` the name on
//!   schemas 4 and 5 and `resource_namespace` on 14 (stackless-local
//!   logging.rs, spawn.rs), never the path the payload names.

use super::detail::{Checkpoint, InstanceDetail};
use super::name::is_dns_safe;

/// What a `start:<service>` process checkpoint records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartRecord {
    /// The service (after `start:`), as stored.
    pub service: String,
    /// The pid stackless started.
    pub pid: i64,
    /// Its start time (unix seconds, sysinfo's `Process::start_time`).
    pub start_time: i64,
    /// The port the service listens on (127.0.0.1).
    pub port: Option<u16>,
    /// The proxy hosts routed to it (`web.alpha.localhost`, ...).
    pub hosts: Vec<String>,
    /// The log file stackless recorded for it (`log`, an absolute path):
    /// 0.4.0's local provider observes the process only when it is
    /// `<state_root>/logs/<namespace>/<service>.log` of the state it runs
    /// on ([`Service::record_elsewhere`]). `None` when not a string.
    pub log: Option<String>,
}

impl StartRecord {
    /// `http://<host>:<proxy_port>`, as stackless 0.4.0 builds a service's
    /// origin (stackless-local-0.4.0 src/lib.rs:188-211,
    /// `local_service_origin`): the host is the last of the recorded hosts
    /// (`[service_host]`, or `[service_host, root_host]` for a
    /// `root_origin` service: lib.rs:164-186), the port the proxy's
    /// ([`proxy_port`]). `None` when no host is routed to it (no health
    /// contract, or a TCP one: stackless-local records no hosts then).
    #[must_use]
    pub fn origin(&self, proxy_port: u16) -> Option<String> {
        self.hosts
            .last()
            .map(|host| format!("http://{host}:{proxy_port}"))
    }
}

/// The proxy port when neither the controller's command line nor the
/// environment names one (stackless-daemon-0.4.0 src/proxy.rs:27,
/// `DEFAULT_PROXY_PORT`).
pub const DEFAULT_PROXY_PORT: u16 = 4444;

/// The proxy port stackless 0.4.0 serves origins on: the running
/// controller's `--proxy-port` (`flag`: the value after it on the
/// controller's command line; `up` and `down` always start it so:
/// stackless-daemon-0.4.0 src/client.rs:340-346), else
/// `STACKLESS_PROXY_PORT` (`env`), else [`DEFAULT_PROXY_PORT`]
/// (daemon-0.4.0 src/proxy.rs:29-35, `proxy_port`; a controller run bare by
/// launchd/systemd takes its port the same way). A value that is not a
/// port from 1 to 65535 is passed over, as stackless passes it over.
#[must_use]
pub fn proxy_port(flag: Option<&str>, env: Option<&str>) -> u16 {
    let port = |text: &str| text.trim().parse::<u16>().ok().filter(|p| *p > 0);
    flag.and_then(port)
        .or_else(|| env.and_then(port))
        .unwrap_or(DEFAULT_PROXY_PORT)
}

/// The value of `--proxy-port` in a controller's command line (`args`,
/// as `/proc/<pid>/cmdline` splits it): `--proxy-port 39171` or
/// `--proxy-port=39171` (clap's two spellings); the last one given wins.
#[must_use]
pub fn proxy_port_flag<S: AsRef<str>>(args: &[S]) -> Option<&str> {
    let mut found = None;
    let mut args = args.iter().map(AsRef::as_ref);
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == "--proxy-port" {
            found = args.next().or(found);
        } else if let Some(value) = arg.strip_prefix("--proxy-port=") {
            found = Some(value);
        }
    }
    found
}

/// The process checkpoints of `checkpoints` (`start:<service>`, kind
/// `process`), parsed ([`start_record`]); a payload that is not a
/// `StartCheckpoint` is left out (its row still shows under Checkpoints).
#[must_use]
pub fn start_records(checkpoints: &[Checkpoint]) -> Vec<StartRecord> {
    checkpoints
        .iter()
        .filter_map(|c| start_record(&c.step_id, &c.resource_kind, &c.payload))
        .collect()
}

/// One checkpoint row read as a `StartCheckpoint`: the one parser behind
/// the detail view, `snapshot --json` and the Instances row's `N svc dead`
/// count. `None` unless the kind is `process`, the step `start:<service>`
/// and the payload JSON with `pid` and `start_time` as integers (a string
/// or a float is not what stackless writes: such a service is left out
/// everywhere).
#[must_use]
pub fn start_record(step_id: &str, resource_kind: &str, payload: &str) -> Option<StartRecord> {
    if resource_kind != "process" {
        return None;
    }
    let service = step_id.strip_prefix("start:")?;
    let value: StartPayload = serde_json::from_str(payload).ok()?;
    Some(StartRecord {
        service: service.to_owned(),
        pid: value.pid?.as_i64()?,
        start_time: value.start_time?.as_i64()?,
        port: value
            .port
            .as_ref()
            .and_then(serde_json::Value::as_u64)
            .and_then(|p| u16::try_from(p).ok()),
        hosts: value
            .hosts
            .as_ref()
            .and_then(serde_json::Value::as_array)
            .map(|hosts| {
                hosts
                    .iter()
                    .filter_map(|h| h.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        log: value
            .log
            .as_ref()
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
    })
}

/// The four fields of a `start:` payload [`start_record`] reads, each the
/// last one given (as a JSON object keeps the last of duplicate keys),
/// every other field checked to be JSON and skipped without being built
/// (measured: building the whole payload as a `serde_json::Value`, its
/// nested `command` object included, was a tenth of `snapshot --json` at
/// 70,000 services). A payload that is not an object does not parse.
#[derive(Default)]
struct StartPayload {
    pid: Option<serde_json::Value>,
    start_time: Option<serde_json::Value>,
    port: Option<serde_json::Value>,
    hosts: Option<serde_json::Value>,
    log: Option<serde_json::Value>,
}

impl<'de> serde::Deserialize<'de> for StartPayload {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PayloadVisitor)
    }
}

struct PayloadVisitor;

impl<'de> serde::de::Visitor<'de> for PayloadVisitor {
    type Value = StartPayload;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a start checkpoint's JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<StartPayload, A::Error> {
        let mut out = StartPayload::default();
        while let Some(key) = map.next_key::<PayloadKey>()? {
            let slot = match key {
                PayloadKey::Pid => &mut out.pid,
                PayloadKey::StartTime => &mut out.start_time,
                PayloadKey::Port => &mut out.port,
                PayloadKey::Hosts => &mut out.hosts,
                PayloadKey::Log => &mut out.log,
                PayloadKey::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(out)
    }
}

/// A payload key, read without an allocation (an escaped key, `"pi\u0064"`,
/// is the same key as `"pid"`, as in a `serde_json::Value`).
enum PayloadKey {
    Pid,
    StartTime,
    Port,
    Hosts,
    Log,
    Other,
}

impl<'de> serde::Deserialize<'de> for PayloadKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = PayloadKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<PayloadKey, E> {
                Ok(match key {
                    "pid" => PayloadKey::Pid,
                    "start_time" => PayloadKey::StartTime,
                    "port" => PayloadKey::Port,
                    "hosts" => PayloadKey::Hosts,
                    "log" => PayloadKey::Log,
                    _ => PayloadKey::Other,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A service process, probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessState {
    /// The pid runs and started when the checkpoint says.
    Alive,
    /// No process with that pid.
    Dead,
    /// The pid runs but started at another time: the service's process is
    /// gone and the pid was recycled.
    PidReused,
}

impl ProcessState {
    /// `alive`, `dead`, `dead (pid reused)`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Alive => "alive",
            Self::Dead => "dead",
            Self::PidReused => "dead (pid reused)",
        }
    }

    /// Whether the process is gone.
    #[must_use]
    pub const fn dead(self) -> bool {
        !matches!(self, Self::Alive)
    }
}

/// Decide a recorded process's state: `probe(pid)` answers the start time
/// of the live process with that pid (`None`: none). A pid outside
/// `1..=u32::MAX` names no process: dead.
#[must_use]
pub fn process_state(record: &StartRecord, probe: impl FnOnce(u32) -> Option<u64>) -> ProcessState {
    let Some(pid) = u32::try_from(record.pid).ok().filter(|&p| p > 0) else {
        return ProcessState::Dead;
    };
    match probe(pid) {
        None => ProcessState::Dead,
        Some(started) if i64::try_from(started).ok() == Some(record.start_time) => {
            ProcessState::Alive
        }
        Some(_) => ProcessState::PidReused,
    }
}

/// A service's log file, as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogState {
    /// A regular file: its size in bytes and when it was last written
    /// (its mtime, unix seconds: the time of its last line).
    Present {
        /// Bytes.
        size: u64,
        /// Unix seconds.
        modified: Option<i64>,
    },
    /// No file there (not started yet, or removed by `down`/GC).
    Missing,
    /// Something that is not a regular file (a symlink is never followed),
    /// or a name that cannot form a path safely; the reason.
    Refused(String),
    /// The substrate keeps logs elsewhere (not `local`).
    Elsewhere,
}

/// An instance's detail as the detail view shows it: the store's rows
/// ([`InstanceDetail`]) and what was found outside the store, its services'
/// processes probed and their logs found (`crate::store::services::observe`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DetailView {
    /// The rows read.
    pub detail: InstanceDetail,
    /// The services, probed (empty before the probe).
    pub services: Vec<Service>,
}

impl From<InstanceDetail> for DetailView {
    /// The rows, before any probe: no service known.
    fn from(detail: InstanceDetail) -> Self {
        Self {
            detail,
            services: Vec::new(),
        }
    }
}

/// One service of an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    /// The service name, as stored.
    pub name: String,
    /// Where it runs: its placement's provider (schema 14), else the
    /// instance's substrate.
    pub runs_on: String,
    /// Its process checkpoint, when stackless recorded one.
    pub start: Option<StartRecord>,
    /// The probed process (with `start`).
    pub process: Option<ProcessState>,
    /// The last observation of `service:<name>` (schema 11+): readiness,
    /// configuration, unix seconds.
    pub readiness: Option<String>,
    /// `existence` of the last observation (`present`, `absent`,
    /// `unknown`).
    pub existence: Option<String>,
    /// `configuration` of the last observation (`applied`, `drifted`, ...).
    pub configuration: Option<String>,
    /// When it was observed (unix seconds).
    pub observed_at: Option<i64>,
    /// The last observation's `error_code` (schema 14), `None` when null.
    pub error_code: Option<String>,
    /// The last observation's `drift` entries (schema 14).
    pub drift: Vec<crate::model::detail::Drift>,
    /// `<state_dir>/logs/<dir>/<name>.log` (`None` when a name is not
    /// DNS-safe: no path is formed from it).
    pub log_path: Option<String>,
    /// The log file as found.
    pub log: LogState,
}

/// The services of an instance on `substrate`: every service its
/// definition declares ([`defined_services`]) or
/// with a process checkpoint, a placement or an observation, by name. `probe`
/// answers a pid's start time; `stat(path)` the log file at `path` (never
/// following a symlink); `logs_dir` is `<state_dir>/logs/<dir>` (`dir`
/// already checked by the caller), `None` when it cannot be formed.
pub fn services(
    detail: &InstanceDetail,
    substrate: &str,
    logs_dir: Option<&str>,
    mut probe: impl FnMut(u32) -> Option<u64>,
    mut stat: impl FnMut(&str) -> LogState,
) -> Vec<Service> {
    let starts = start_records(&detail.checkpoints);
    let mut names: Vec<String> = starts.iter().map(|s| s.service.clone()).collect();
    let nodes = detail
        .placements
        .iter()
        .map(|p| p.node.as_str())
        .chain(detail.observations.iter().map(|o| o.node.as_str()));
    names.extend(nodes.filter_map(|n| n.strip_prefix("service:").map(str::to_owned)));
    names.extend(defined_services(&detail.definition));
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let node = format!("service:{name}");
            let start = starts.iter().find(|s| s.service == name).cloned();
            let observation = detail.observations.iter().find(|o| o.node == node);
            let runs_on = detail
                .placements
                .iter()
                .find(|p| p.node == node)
                .map_or(substrate, |p| p.provider.as_str())
                .to_owned();
            let log_path = logs_dir
                .filter(|_| is_dns_safe(&name))
                .map(|dir| format!("{dir}/{name}.log"));
            let log = match &log_path {
                _ if runs_on != "local" => LogState::Elsewhere,
                Some(path) => stat(path),
                None => LogState::Refused("not a DNS-safe name: no path formed".into()),
            };
            Service {
                process: start.as_ref().map(|s| process_state(s, &mut probe)),
                start,
                readiness: observation.and_then(|o| o.readiness.clone()),
                existence: observation.and_then(|o| o.existence.clone()),
                configuration: observation.and_then(|o| o.configuration.clone()),
                observed_at: observation.and_then(|o| o.observed_at),
                error_code: observation.and_then(|o| o.error_code.clone()),
                drift: observation.map(|o| o.drift.clone()).unwrap_or_default(),
                name,
                runs_on,
                log_path,
                log,
            }
        })
        .collect()
}

impl Service {
    /// Whether stackless 0.4.0's local provider refuses to observe this
    /// service's recorded process, so `list` says its stage is `unknown`
    /// (its observation errs: stackless-local-0.4.0 `spawn::checked`, "process
    /// log belongs to another namespace"): a local service whose process
    /// record names a log that is not this state dir's
    /// `<state_dir>/logs/<dir>/<name>.log` ([`Service::log_path`]; a store
    /// copied from another machine or state dir). A record with no `log`
    /// is not judged (older writers).
    #[must_use]
    pub fn record_elsewhere(&self) -> bool {
        self.runs_on == "local"
            && self
                .start
                .as_ref()
                .and_then(|s| s.log.as_deref())
                .is_some_and(|log| self.log_path.as_deref() != Some(log))
    }

    /// Its origin as `stackless status` reports it
    /// ([`StartRecord::origin`] on `proxy_port`), none when its process is
    /// dead: 0.4.0 reports an origin only for a service not observed
    /// absent (cli-0.4.0 src/client/report.rs:357-366), and a dead process
    /// is observed gone (stackless-local-0.4.0 src/lib.rs:923-946).
    #[must_use]
    pub fn origin(&self, proxy_port: u16) -> Option<String> {
        if self.process.is_none_or(ProcessState::dead) {
            return None;
        }
        self.start.as_ref()?.origin(proxy_port)
    }
}

/// The services a definition declares (`[services.<name>]` tables of the
/// definition snapshot `instances.definition`, TOML), by name; empty when
/// it does not parse. `stackless status` reports one stage for each
/// (report.rs:343-345), started or not.
#[must_use]
pub fn defined_services(definition: &str) -> Vec<String> {
    if definition.is_empty() {
        // Nothing to parse (the services of `snapshot --json`, read
        // without the definition).
        return Vec::new();
    }
    let Ok(table) = definition.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut names: Vec<String> = table
        .get("services")
        .and_then(toml::Value::as_table)
        .map(|services| services.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// How many of `services` have a recorded process that is dead.
#[must_use]
pub fn dead_count(services: &[Service]) -> usize {
    services
        .iter()
        .filter(|s| s.process.is_some_and(ProcessState::dead))
        .count()
}

/// Dead service processes per instance, from `(instance, record)` pairs
/// (the watcher's per-snapshot list), each probed once with `probe`; only
/// instances with one or more dead are in the map.
pub fn dead_by_instance(
    records: &[(String, StartRecord)],
    mut probe: impl FnMut(u32) -> Option<u64>,
) -> super::snapshot::ServicesDead {
    records
        .iter()
        .filter(|(_, record)| process_state(record, &mut probe).dead())
        .map(|(instance, _)| (instance.as_str(), 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_payloads_read_as_a_json_object_would() {
        let read = |payload: &str| start_record("start:web", "process", payload);
        let full = read(
            r#"{"pid":7,"start_time":9,"command":{"pid":1,"start_time":2},"port":41325,
                "hosts":["web.a.localhost",3,"a.localhost"],"log":"/x"}"#,
        )
        .expect("a record");
        assert_eq!((full.pid, full.start_time, full.port), (7, 9, Some(41325)));
        assert_eq!(full.hosts, ["web.a.localhost", "a.localhost"]);
        // The last of a repeated key, and an escaped key, as in a Value.
        let last = read(r#"{"pid":1,"pid":8,"start_tim\u0065":5}"#).expect("a record");
        assert_eq!((last.pid, last.start_time), (8, 5));
        assert_eq!(read(r#"{"pid":"7","start_time":9}"#), None, "a string pid");
        assert_eq!(read(r#"{"pid":7.5,"start_time":9}"#), None, "a float pid");
        assert_eq!(read(r#"[7, 9]"#), None, "not an object");
        assert_eq!(read(r#"{"pid":7,"start_time":9"#), None, "not JSON");
        assert_eq!(
            read(r#"{"pid":7,"start_time":9,"port":70000}"#).map(|r| r.port),
            Some(None)
        );
    }
    use crate::model::detail::{Observation, Placement};

    fn checkpoint(step: &str, kind: &str, payload: &str) -> Checkpoint {
        Checkpoint {
            step_id: step.into(),
            resource_kind: kind.into(),
            resource_id: "19240".into(),
            payload: payload.into(),
            recorded_at: Some(1),
        }
    }

    /// The payload the real 0.4.0 wrote (tests/fixtures/real-0.4.0-v14.db).
    const REAL: &str = r#"{"pid":19240,"start_time":1796117794,"command":{"pid":19240,"start_time":1796117794,"cookie":"8c230466"},"port":41325,"hosts":["web.alpha.localhost","alpha.localhost"],"log":"/elsewhere/web.log"}"#;

    #[test]
    fn process_checkpoints_become_services_probed_and_stat_ed() {
        let detail = InstanceDetail {
            checkpoints: vec![
                checkpoint("materialize:web", "source", "{}"),
                checkpoint("start:web", "process", REAL),
                checkpoint("start:api", "process", "not json"),
                checkpoint("start:../../etc", "process", r#"{"pid":1,"start_time":1}"#),
            ],
            placements: vec![Placement {
                node: "service:worker".into(),
                provider: "render".into(),
            }],
            observations: vec![Observation {
                node: "service:web".into(),
                readiness: Some("ready".into()),
                existence: Some("present".into()),
                configuration: Some("applied".into()),
                observed_at: Some(50),
                error_code: None,
                drift: vec![],
            }],
            ..InstanceDetail::default()
        };
        let mut stats = vec![];
        let got = services(
            &detail,
            "local",
            Some("/s/logs/sl-1"),
            |pid| (pid == 19240).then_some(1_796_117_795),
            |path| {
                stats.push(path.to_owned());
                LogState::Present {
                    size: 10,
                    modified: Some(60),
                }
            },
        );
        let names: Vec<&str> = got.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["../../etc", "web", "worker"]);
        assert_eq!(stats, ["/s/logs/sl-1/web.log"]);
        assert_eq!(got[0].log_path, None);
        assert_eq!(got[0].process, Some(ProcessState::Dead));
        let web = &got[1];
        assert_eq!(web.process, Some(ProcessState::PidReused));
        assert_eq!(
            web.start.as_ref().and_then(|s| s.origin(39171)).as_deref(),
            Some("http://alpha.localhost:39171")
        );
        // Its process is not the one recorded: no origin.
        assert_eq!(web.origin(39171), None);
        let alive = Service {
            process: Some(ProcessState::Alive),
            ..web.clone()
        };
        assert_eq!(
            alive.origin(4444).as_deref(),
            Some("http://alpha.localhost:4444")
        );
        assert_eq!(web.start.as_ref().and_then(|s| s.port), Some(41325));
        assert_eq!(web.readiness.as_deref(), Some("ready"));
        assert_eq!(web.log_path.as_deref(), Some("/s/logs/sl-1/web.log"));
        assert_eq!(got[2].runs_on, "render");
        assert_eq!(got[2].log, LogState::Elsewhere);
        assert_eq!(got[2].process, None);
        assert_eq!(dead_count(&got), 2);
    }

    /// The proxy port as stackless 0.4.0 resolves it.
    #[test]
    fn the_proxy_port_is_the_controllers_then_the_environments_then_4444() {
        let cmdline = [
            "/usr/bin/stackless",
            "daemon",
            "run",
            "--state-dir",
            "/s",
            "--proxy-port",
            "39171",
            "--embedded",
        ];
        assert_eq!(proxy_port_flag(&cmdline), Some("39171"));
        assert_eq!(
            proxy_port_flag(&["stackless", "--proxy-port=81"]),
            Some("81")
        );
        assert_eq!(proxy_port_flag(&["stackless", "daemon", "run"]), None);
        assert_eq!(proxy_port_flag(&["x", "--", "--proxy-port", "9"]), None);
        assert_eq!(proxy_port_flag(&["x", "--proxy-port"]), None);
        assert_eq!(proxy_port(Some("39171"), Some("5000")), 39171);
        assert_eq!(proxy_port(None, Some("5000")), 5000);
        assert_eq!(proxy_port(Some("0"), Some("x")), 4444);
        assert_eq!(proxy_port(Some("70000"), None), 4444);
        assert_eq!(proxy_port(None, None), DEFAULT_PROXY_PORT);
    }

    #[test]
    fn defined_services_are_the_definitions_service_tables() {
        let definition = "[stack]\nname = \"x\"\n\n[services.web]\nhealth = { path = \"/\" }\n\
                          [services.web.local]\nrun = \"x\"\n[services.api]\n";
        assert_eq!(defined_services(definition), ["api", "web"]);
        assert!(defined_services("not = [toml").is_empty());
        assert!(defined_services("").is_empty());
    }

    #[test]
    fn alive_only_with_the_recorded_start_time() {
        let record = StartRecord {
            service: "web".into(),
            pid: 7,
            start_time: 100,
            port: None,
            hosts: vec![],
            log: None,
        };
        assert_eq!(process_state(&record, |_| Some(100)), ProcessState::Alive);
        assert_eq!(process_state(&record, |_| None), ProcessState::Dead);
        let zero = StartRecord { pid: 0, ..record };
        assert_eq!(process_state(&zero, |_| Some(100)), ProcessState::Dead);
        assert_eq!(zero.origin(4444), None);
        let records = vec![
            ("a".to_owned(), zero.clone()),
            (
                "a".to_owned(),
                StartRecord {
                    pid: 7,
                    ..zero.clone()
                },
            ),
            ("b".to_owned(), StartRecord { pid: 7, ..zero }),
        ];
        let dead = dead_by_instance(&records, |_| Some(100));
        assert_eq!(dead, [("a".to_owned(), 1)].into_iter().collect());
    }
}
