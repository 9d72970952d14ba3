//! Random command lines against `serve --stdio`'s rules (docs/protocol.md,
//! "Commands"): valid and invalid commands, names, births of every shape,
//! `lease_secs` of every JSON number shape, ids, extra fields and lines
//! about the 65,536-byte cap. First through the parser and the keys'
//! rules (`command::parse`, `Action::of_command`, `App::remote`), then
//! through a real `serve --stdio` whose stackless and `down` log their
//! argv. What must hold:
//!
//! - nothing runs that the key table could not have run: every lease
//!   1 s to 30 days, every instance acted upon DNS-safe and of the birth
//!   the command named;
//! - every line gets exactly one reply, with its id (`null` for a line
//!   with no usable id);
//! - a command answered `ok` is never refused after (each `refused`
//!   Activity line of an instance is the refusal of a command answered
//!   `refused`).
//!
//! A fixed seed and a bounded number of cases in `cargo test`;
//! `SERVE_PROPERTY_SEED` and `SERVE_PROPERTY_CASES` run others
//! (docs/protocol.md).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stackless_tui::event::Event;
use stackless_tui::model::protocol::MAX_MESSAGE_BYTES;
use stackless_tui::model::protocol::command::{self, Command as Parsed};
use stackless_tui::model::rules::{Action, Asked, InFlight};
use stackless_tui::model::verbs::{LEASE_REFUSAL, MAX_LEASE_SECS};
use stackless_tui::ui::{App, AppConfig, Effect};

use crate::common::CAPTURE;

/// The seed and the number of App-level cases (the agent process gets a
/// fifth of them as lines, at least 60).
fn settings() -> (u64, usize) {
    let var = |key: &str| std::env::var(key).ok().and_then(|v| v.parse().ok());
    (
        var("SERVE_PROPERTY_SEED").unwrap_or(0x5eed_2026),
        var("SERVE_PROPERTY_CASES")
            .map_or(2_000, |n: u64| usize::try_from(n).unwrap_or(usize::MAX)),
    )
}

/// xorshift64*: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n as u64)).unwrap()
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The real 0.4.0 fixture's instances: name, birth (`instance_id`).
const FIXTURE: [(&str, &str); 8] = [
    ("alpha", "70aa7461da17489bb88e709a64f291aa"),
    ("hotel", "4a5b712791a84fc4b83f31953e14f928"),
    ("bravo", "068bf1ba7f464279bb1becd0506c0988"),
    ("charlie", "0a054ef40d3642b7bf93b1b903e5fd82"),
    ("delta", "e94596b0113c4ffb94c33672e04a01ed"),
    ("foxtrot", "76bb1421c88c40a7adb0f4de76e77a18"),
    ("india", "de3011ad48754ebd892399a8941bf77a"),
    ("golf", "ef4d5bd1eb6a4dc9bff5aaca6346aa78"),
];

/// Some of the fixture's operations (id, instance).
const OPERATIONS: [(&str, &str); 3] = [
    ("9b8fd650-07e8-4ff7-8cd7-0a952e02007b", "alpha"),
    ("c7524d51-8d28-4491-975f-d31acaa62745", "india"),
    ("8ee638b7-bb0f-454d-8e07-f59212221772", "nosuch"),
];

fn fixture_birth(name: &str) -> Option<&'static str> {
    FIXTURE.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// What the generator put in a line's `lease_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lease {
    Absent,
    /// A number the keys could ask: its seconds.
    Within(u64),
    /// A number outside 1 s..30 days (or a fraction).
    Outside,
    /// Not a number.
    NotNumber,
}

/// What the generator put in a line's `birth`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Birth {
    /// Absent or null.
    None,
    /// The row's object or the bare string: this `instance_id`.
    Id(String),
    /// No birth shape.
    Wrong,
}

/// One generated line and what the generator knows of it.
#[derive(Debug, Clone)]
struct Case {
    line: String,
    cmd: String,
    name: Option<String>,
    birth: Birth,
    lease: Lease,
    /// The operation a `cancel` names.
    operation: Option<String>,
}

impl Case {
    /// The fixture instance a refusal of this command names, if any.
    fn subject(&self) -> Option<&str> {
        let name = match self.cmd.as_str() {
            "cancel" => OPERATIONS
                .iter()
                .find(|(id, _)| Some(*id) == self.operation.as_deref())
                .map(|(_, instance)| *instance),
            // The reads' refusals are not Activity lines.
            "detail" | "logs" => None,
            _ => self.name.as_deref(),
        }?;
        fixture_birth(name).map(|_| name)
    }
}

const LEASES: [(&str, Lease); 22] = [
    ("0", Lease::Outside),
    ("1", Lease::Within(1)),
    ("2592000", Lease::Within(2_592_000)),
    ("2592001", Lease::Outside),
    ("-1", Lease::Outside),
    ("-3600", Lease::Outside),
    ("9223372036854775807", Lease::Outside),
    ("9223372036854775808", Lease::Outside),
    ("18446744073709551615", Lease::Outside),
    ("18446744073709551616", Lease::Outside),
    ("3.15e11", Lease::Outside),
    ("1.5", Lease::Outside),
    ("3600.0", Lease::Within(3600)),
    ("3.6e3", Lease::Within(3600)),
    ("1e300", Lease::Outside),
    ("-0", Lease::Outside),
    ("0.0", Lease::Outside),
    ("1e-7", Lease::Outside),
    (r#""3600""#, Lease::NotNumber),
    ("true", Lease::NotNumber),
    ("[]", Lease::NotNumber),
    ("{}", Lease::NotNumber),
];

fn lease(rng: &mut Rng) -> (Option<String>, Lease) {
    match rng.below(10) {
        0 => (None, Lease::Absent),
        1 => (Some("null".into()), Lease::Absent),
        2 | 3 => {
            let secs = rng.next() % (2 * MAX_LEASE_SECS + 2);
            let class = if (1..=MAX_LEASE_SECS).contains(&secs) {
                Lease::Within(secs)
            } else {
                Lease::Outside
            };
            let text = if rng.chance(30) {
                format!("{secs}.0")
            } else {
                secs.to_string()
            };
            (Some(text), class)
        }
        4 => (
            Some(format!("{}.25", rng.next() % MAX_LEASE_SECS)),
            Lease::Outside,
        ),
        _ => {
            let (text, class) = rng.pick(&LEASES);
            (Some((*text).to_owned()), *class)
        }
    }
}

fn name(rng: &mut Rng) -> (Option<String>, String) {
    const OTHERS: [&str; 6] = ["nosuch", "a;rm -rf /", "Alpha", "", "-lead", "x\u{1b}[2J"];
    match rng.below(30) {
        0 => (None, "null".into()),
        1 => (None, "5".into()),
        2 => {
            let long = "y".repeat(if rng.chance(50) { 4_096 } else { 4_097 });
            (Some(long.clone()), json!(long).to_string())
        }
        3..=5 => {
            let other = (*rng.pick(&OTHERS)).to_owned();
            (Some(other.clone()), json!(other).to_string())
        }
        _ => {
            let (n, _) = rng.pick(&FIXTURE);
            ((Some((*n).to_owned())), json!(n).to_string())
        }
    }
}

fn birth(rng: &mut Rng, name: Option<&str>) -> (Option<String>, Birth) {
    let right = name.and_then(fixture_birth).unwrap_or("ab");
    let id = match rng.below(8) {
        0 => "0".repeat(32),
        1 => rng.pick(&FIXTURE).1.to_owned(),
        _ => right.to_owned(),
    };
    match rng.below(12) {
        0 => (None, Birth::None),
        1 => (Some("null".into()), Birth::None),
        2 => (Some(json!(id).to_string()), Birth::Id(id)),
        3 => (Some(json!({"instance_id": id}).to_string()), Birth::Id(id)),
        4 => (
            Some(json!({"instance_id": id, "resource_namespace": null}).to_string()),
            Birth::Id(id),
        ),
        5 => {
            let wrong = [
                "5",
                "true",
                "[]",
                "{}",
                r#"{"instance_id":5}"#,
                r#"{"resource_namespace":"sl-x"}"#,
                r#"{"instance_id":"ab","resource_namespace":7}"#,
            ];
            (Some((*rng.pick(&wrong)).to_owned()), Birth::Wrong)
        }
        _ => (
            Some(json!({"instance_id": id, "resource_namespace": format!("sl-{id}")}).to_string()),
            Birth::Id(id),
        ),
    }
}

fn id_text(rng: &mut Rng, serial: usize) -> Option<String> {
    match rng.below(30) {
        0 => None,
        1 => Some("null".into()),
        2 => Some("1.5".into()),
        3 => Some(json!("i".repeat(65)).to_string()),
        4 => Some("{}".into()),
        5..=14 => Some(json!(format!("s{serial}")).to_string()),
        _ => Some(serial.to_string()),
    }
}

const CMDS: [&str; 24] = [
    "renew",
    "renew",
    "renew",
    "renew",
    "renew",
    "verify",
    "verify",
    "reap",
    "reap",
    "reap",
    "down",
    "down",
    "down",
    "queue_down",
    "detail",
    "detail",
    "detail",
    "cancel",
    "pause",
    "resume",
    "pass",
    "ping",
    "logs",
    "launch",
];

/// One random line (its serial makes its id unique).
fn case(rng: &mut Rng, serial: usize) -> Case {
    let cmd = (*rng.pick(&CMDS)).to_owned();
    let mut fields: Vec<(String, String)> = Vec::new();
    if let Some(id) = id_text(rng, serial) {
        fields.push(("id".into(), id));
    }
    if !rng.chance(3) {
        fields.push(("cmd".into(), json!(cmd).to_string()));
    }
    let (mut target, mut shape, mut lease_class, mut operation) =
        (None, Birth::None, Lease::Absent, None);
    match cmd.as_str() {
        "renew" | "verify" | "reap" | "down" | "queue_down" | "detail" | "logs" => {
            let (n, text) = name(rng);
            if !rng.chance(3) {
                fields.push(("name".into(), text));
                target = n;
            }
            let (b, class) = birth(rng, target.as_deref());
            if let Some(b) = b {
                fields.push(("birth".into(), b));
                shape = class;
            }
            if cmd == "renew" {
                let (l, class) = lease(rng);
                if let Some(l) = l {
                    fields.push(("lease_secs".into(), l));
                }
                lease_class = class;
            }
        }
        "cancel" => {
            let op = if rng.chance(70) {
                rng.pick(&OPERATIONS).0.to_owned()
            } else {
                "../x".to_owned()
            };
            fields.push(("operation".into(), json!(op).to_string()));
            operation = Some(op);
        }
        _ => {}
    }
    if rng.chance(10) {
        fields.push(("extra".into(), json!({"nested": [1, 2.5, "x"]}).to_string()));
    }
    if rng.chance(5) {
        fields.push((
            "protocol".into(),
            (*rng.pick(&["1", "2", "\"1\""])).to_owned(),
        ));
    }
    if rng.chance(5) && !fields.is_empty() {
        let at = rng.below(fields.len());
        let last = fields.len() - 1;
        fields.swap(at, last);
    }
    let mut line = format!(
        "{{{}}}",
        fields
            .iter()
            .map(|(k, v)| format!("{}:{v}", json!(k)))
            .collect::<Vec<_>>()
            .join(",")
    );
    match rng.below(40) {
        // Not JSON, or not an object.
        0 => {
            let cut = rng.below(line.len());
            line.truncate(cut);
        }
        1 => line = (*rng.pick(&["not json", "[1,2]", "\"ping\"", "", "{}", "null"])).to_owned(),
        // About the cap: the line with its newline this many bytes.
        2 => {
            let total = *rng.pick(&[
                MAX_MESSAGE_BYTES - 1,
                MAX_MESSAGE_BYTES,
                MAX_MESSAGE_BYTES + 1,
                MAX_MESSAGE_BYTES + 5_000,
            ]);
            let base = line.len() + r#","pad":"""#.len() + 1;
            let pad = "p".repeat(total.saturating_sub(base));
            line.insert_str(line.len() - 1, &format!(r#","pad":"{pad}""#));
        }
        _ => {}
    }
    Case {
        line,
        cmd,
        name: target,
        birth: shape,
        lease: lease_class,
        operation,
    }
}

/// A line's reply id as docs/protocol.md says it: the `id` when the line
/// is a JSON object whose `id` is an integer or a string of at most 64
/// characters, else `null` (also for a line over the cap).
fn expected_id(line: &str) -> Value {
    if line.len() + 1 > MAX_MESSAGE_BYTES {
        return Value::Null;
    }
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(fields)) => match fields.get("id") {
            Some(Value::String(s)) if s.chars().count() <= 64 => json!(s),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n.clone()),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

fn app() -> App {
    let mut app = App::new(
        AppConfig {
            store_label: "/srv/state.db".into(),
            reaper: stackless_tui::ui::ReaperMode::Every {
                tick: Duration::from_secs(1),
                dry_run: false,
                always: false,
            },
            helper: stackless_tui::ui::HelperMode::None,
            write_keys: Ok(()),
            host: None,
            no_color: false,
        },
        CAPTURE,
    );
    app.handle(
        Event::Snapshot(Arc::new(crate::common::ui::fixture_snapshot(
            "real-0.4.0-v14.db",
        ))),
        CAPTURE,
    );
    app
}

/// The instances an effect acts upon, with the lease of a renew.
fn acted_upon(effect: &Effect) -> Vec<(String, Option<String>, Option<u64>)> {
    let birth =
        |i: &stackless_tui::model::Instance| i.birth.as_ref().map(|b| b.instance_id().to_owned());
    match effect {
        Effect::Reap { instance, .. }
        | Effect::TearDown { instance, .. }
        | Effect::QueueDown { instance, .. } => {
            vec![(instance.name.clone(), birth(instance), None)]
        }
        Effect::Bulk { jobs, queued, .. } => jobs
            .iter()
            .map(|(i, _)| i)
            .chain(queued.iter().map(|(i, _)| i))
            .map(|i| (i.name.clone(), birth(i), None))
            .collect(),
        Effect::Verbs(requests) => requests
            .iter()
            .map(|r| {
                let lease = match r.verb {
                    stackless_tui::model::verbs::Verb::Renew { lease_secs } => Some(lease_secs),
                    stackless_tui::model::verbs::Verb::Verify => None,
                };
                (r.instance.name.clone(), birth(&r.instance), lease)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The parser's and the keys' verdict on one case, checked against what
/// the generator knows.
fn check_case(app: &mut App, case: &Case) {
    let line = &case.line;
    let want_id = expected_id(line);
    if line.len() + 1 > MAX_MESSAGE_BYTES {
        // The stdin reader answers it `too_long` (the process part checks).
        return;
    }
    let (id, parsed) = command::parse(line);
    assert_eq!(id, want_id, "the reply id of {line}");
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        assert_eq!(parsed.map_err(|r| r.kind), Err("bad_request"), "{line}");
        return;
    };
    let plain = value.is_object()
        && want_id != Value::Null
        && value.get("protocol").is_none_or(|p| p == 1)
        && value.get("cmd") == Some(&json!(case.cmd));
    let dns_safe = case
        .name
        .as_deref()
        .is_some_and(stackless_tui::model::name::is_dns_safe);
    let target_cmd = matches!(
        case.cmd.as_str(),
        "renew" | "verify" | "reap" | "down" | "queue_down"
    );
    if plain && target_cmd && dns_safe {
        match (&case.birth, case.lease) {
            (Birth::Wrong, _) | (_, Lease::NotNumber) => {
                assert_eq!(
                    parsed.clone().map_err(|r| r.kind),
                    Err("bad_request"),
                    "{line}"
                );
            }
            (_, Lease::Outside) if case.cmd == "renew" => {
                let rejected = parsed.clone().expect_err(line);
                assert_eq!(
                    (rejected.kind, rejected.message.as_str(), rejected.instance),
                    ("refused", LEASE_REFUSAL, case.name.clone()),
                    "{line}"
                );
            }
            _ => {
                let want_birth = match &case.birth {
                    Birth::Id(id) => Some(id.clone()),
                    _ => None,
                };
                let target = match parsed.clone().expect(line) {
                    Parsed::Renew(t, lease) => {
                        let want = match case.lease {
                            Lease::Within(secs) => Some(secs),
                            _ => None,
                        };
                        assert_eq!(lease, want, "{line}");
                        t
                    }
                    Parsed::Verify(t)
                    | Parsed::Reap(t)
                    | Parsed::Down(t)
                    | Parsed::QueueDown(t) => t,
                    other => panic!("{line}: {other:?}"),
                };
                assert_eq!(
                    (target.name.as_str(), target.birth),
                    (case.name.as_deref().unwrap_or_default(), want_birth),
                    "{line}"
                );
            }
        }
    }
    let Ok(parsed) = parsed else { return };
    let Some(action) = Action::of_command(parsed) else {
        return;
    };
    let Ok((_, Some(effect))) = app.remote(&action, &InFlight::default(), CAPTURE) else {
        return;
    };
    for (name, birth, lease) in acted_upon(&effect) {
        assert!(
            stackless_tui::model::name::is_dns_safe(&name),
            "{line}: ran on {name:?}"
        );
        assert_eq!(
            Some(name.as_str()),
            case.name.as_deref(),
            "{line}: ran on another instance"
        );
        assert_eq!(
            birth.as_deref(),
            fixture_birth(&name),
            "{line}: not the stored birth"
        );
        assert_eq!(
            case.birth,
            Birth::Id(birth.clone().unwrap_or_default()),
            "{line}: ran on a birth the command did not name"
        );
        if let Some(secs) = lease {
            assert!(
                (1..=MAX_LEASE_SECS).contains(&secs),
                "{line}: a lease of {secs} s"
            );
            if let Lease::Within(asked) = case.lease {
                assert_eq!(secs, asked, "{line}");
            }
        }
    }
}

#[test]
fn random_lines_pass_the_keys_rules_or_are_refused_in_the_reply() {
    let (seed, cases) = settings();
    let mut rng = Rng::new(seed);
    let mut app = app();
    let mut renews = 0;
    for serial in 0..cases {
        let case = case(&mut rng, serial);
        drop(app.drain_outbox());
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_case(&mut app, &case);
        }));
        if let Err(panic) = result {
            eprintln!("seed {seed}, case {serial}: {}", case.line);
            std::panic::resume_unwind(panic);
        }
        renews += usize::from(case.cmd == "renew");
    }
    assert!(renews > cases / 10, "only {renews} renews in {cases} cases");
}

/// A stackless that logs its argv (one line, elements joined by spaces)
/// to `<dir>/stackless.log`, after `body`, and fails.
fn logging_stackless(dir: &Path, body: &str) -> std::path::PathBuf {
    let script = dir.join("stackless");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\n{body}\nexit 1\n",
            dir.join("stackless.log").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// `serve --stdio` on a copy of the real 0.4.0 fixture (alpha, hotel and
/// india with leases an hour away; foxtrot and golf expired), no
/// reaper, its stackless and `down` logging their argv (alpha's `down`
/// succeeds, every other fails).
fn agent(dir: &Path, store: &Path, stackless_body: &str) -> std::process::Child {
    let now = crate::common::unix_now();
    crate::common::stores::exec(
        store,
        &format!(
            "UPDATE leases SET expires_at = {} WHERE instance IN ('alpha', 'hotel', 'india');",
            now + 3600
        ),
    );
    // alpha's `down` succeeds (and tombstones it), every other fails.
    let down = crate::common::counting_down(
        dir,
        r#"if [ "$NAME" = alpha ]; then exit 0; fi
exit 1"#,
    );
    Command::new(env!("CARGO_BIN_EXE_stackless-tui"))
        .env_remove("STACKLESS_STATE_URL")
        .env_remove("STACKLESS_BIN")
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", "/nonexistent-config")
        .env("XDG_STATE_HOME", dir)
        .args(["--no-reaper", "--down-cmd", &down, "--stackless"])
        .arg(logging_stackless(dir, stackless_body))
        .arg("--state")
        .arg(store)
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap()
}

/// Write `lines` to the agent at once, wait until `replies` replies came
/// (or 60 s), close stdin; every message it wrote.
fn run_lines(dir: &Path, store: &Path, lines: &[String], body: &str, pace: Duration) -> Vec<Value> {
    let replies = lines.len();
    let mut child = agent(dir, store, body);
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Err(why) = crate::common::protocol::validate(&line) {
                panic!("not a valid message: {why}: {line}");
            }
            let _ = tx.send(serde_json::from_str(&line).unwrap());
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let lines = lines.to_vec();
    let writer = std::thread::spawn(move || {
        if pace.is_zero() {
            let mut bytes = Vec::new();
            for line in &lines {
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
            }
            stdin.write_all(&bytes).unwrap();
        } else {
            for line in &lines {
                stdin.write_all(line.as_bytes()).unwrap();
                stdin.write_all(b"\n").unwrap();
                stdin.flush().unwrap();
                std::thread::sleep(pace);
            }
        }
        stdin.flush().unwrap();
        stdin
    });
    let count = |seen: &[Value]| seen.iter().filter(|m| m["type"] == "reply").count();
    while count(&seen) < replies {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(message) => seen.push(message),
            // The caller says which line went unanswered.
            Err(_) => break,
        }
    }
    drop(writer.join().unwrap());
    let status = child.wait().unwrap();
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    assert_eq!(status.code(), Some(0));
    let stderr = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
    assert!(!stderr.contains("panicked"), "{stderr}");
    seen
}

/// The fixture instance a `refused` or `aborted` (a teardown that found
/// the instance changed since it was asked) operator Activity line is
/// about, if `m` is one.
fn refusal_of(m: &Value) -> Option<&str> {
    let name = m["instance"].as_str()?;
    (m["type"] == "activity"
        && m["actor"] == "operator"
        && (m["kind"] == "refused" || m["kind"] == "aborted")
        && fixture_birth(name).is_some())
    .then_some(name)
}

/// Each refusal line ([`refusal_of`]) of a fixture instance, counted.
fn refusals_in_activity(messages: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for name in messages.iter().filter_map(refusal_of) {
        *counts.entry(name.to_owned()).or_default() += 1;
    }
    counts
}

/// The lines every run sends first: renews of alpha (its stored birth)
/// at the leases the keys could never ask, a `ping` of exactly the cap
/// with its newline and one of a byte more, `detail`s of several names.
fn fixed_cases() -> Vec<Case> {
    let alpha = FIXTURE[0].1;
    let mut cases: Vec<Case> = [
        "9223372036854775807",
        "18446744073709551615",
        "3.15e11",
        "2592001",
        "0",
        "-1",
    ]
    .iter()
    .enumerate()
    .map(|(i, lease)| Case {
        line: format!(
            r#"{{"id":"f{i}","cmd":"renew","name":"alpha","birth":{{"instance_id":"{alpha}","resource_namespace":"sl-{alpha}"}},"lease_secs":{lease}}}"#
        ),
        cmd: "renew".into(),
        name: Some("alpha".into()),
        birth: Birth::Id(alpha.into()),
        lease: Lease::Outside,
        operation: None,
    })
    .collect();
    for (id, total) in [("cap", MAX_MESSAGE_BYTES), ("over", MAX_MESSAGE_BYTES + 1)] {
        let base = format!(r#"{{"id":"{id}","cmd":"ping","pad":""}}"#);
        let pad = "p".repeat(total - 1 - base.len());
        cases.push(Case {
            line: format!(r#"{{"id":"{id}","cmd":"ping","pad":"{pad}"}}"#),
            cmd: "ping".into(),
            name: None,
            birth: Birth::None,
            lease: Lease::Absent,
            operation: None,
        });
    }
    for (name, _) in FIXTURE {
        cases.push(Case {
            line: format!(r#"{{"id":"detail-{name}","cmd":"detail","name":"{name}"}}"#),
            cmd: "detail".into(),
            name: Some(name.into()),
            birth: Birth::None,
            lease: Lease::Absent,
            operation: None,
        });
    }
    cases
}

#[test]
fn the_agent_answers_random_lines_once_each_and_runs_only_what_the_keys_could() {
    let (seed, cases) = settings();
    let mut rng = Rng::new(seed ^ 0xa6e7);
    let lines = (cases / 5).max(60);
    let mut cases = fixed_cases();
    let first = cases.len();
    cases.extend((first..first + lines).map(|serial| case(&mut rng, serial)));
    let (dir, store) = crate::common::fixture("real-0.4.0-v14.db");
    let texts: Vec<String> = cases.iter().map(|c| c.line.clone()).collect();
    let messages = run_lines(dir.path(), &store, &texts, "", Duration::ZERO);
    let replies: Vec<&Value> = messages.iter().filter(|m| m["type"] == "reply").collect();
    let context = || format!("seed {seed}");

    // (b) Exactly one reply per line, with its id.
    for case in &cases {
        let id = expected_id(&case.line);
        let got = replies.iter().filter(|r| r["id"] == id).count();
        assert!(
            id.is_null() || got == 1,
            "{}: {got} replies to {}",
            context(),
            crate::common::protocol::short(&case.line)
        );
    }
    assert_eq!(replies.len(), cases.len(), "{}", context());
    let mut by_id: HashMap<String, &Value> = HashMap::new();
    for reply in &replies {
        if !reply["id"].is_null() {
            let previous = by_id.insert(reply["id"].to_string(), reply);
            assert!(previous.is_none(), "two replies to {}", reply["id"]);
        }
    }
    let mut nulls = 0;
    let mut ok: Vec<&Case> = Vec::new();
    for case in &cases {
        let id = expected_id(&case.line);
        if id.is_null() {
            nulls += 1;
            continue;
        }
        let reply = by_id
            .get(&id.to_string())
            .unwrap_or_else(|| panic!("{}: no reply to {}", context(), case.line));
        if reply["ok"] == true {
            ok.push(case);
        }
        if case.line.len() + 1 > MAX_MESSAGE_BYTES {
            panic!("{}: a line over the cap answered by id", context());
        }
    }
    assert_eq!(
        replies.iter().filter(|r| r["id"].is_null()).count(),
        nulls,
        "{}",
        context()
    );
    let too_long = cases
        .iter()
        .filter(|c| c.line.len() + 1 > MAX_MESSAGE_BYTES)
        .count();
    assert_eq!(
        replies
            .iter()
            .filter(|r| r["error"]["kind"] == "too_long")
            .count(),
        too_long,
        "{}",
        context()
    );

    // (a) What ran: each renew 1 s to 30 days, on an instance a command
    // answered ok named with its stored birth.
    let asked = |cmds: &[&str], name: &str| {
        ok.iter().any(|c| {
            cmds.contains(&c.cmd.as_str())
                && c.name.as_deref() == Some(name)
                && fixture_birth(name).is_some_and(|b| c.birth == Birth::Id(b.to_owned()))
        })
    };
    let ran = std::fs::read_to_string(dir.path().join("stackless.log")).unwrap_or_default();
    for argv in ran.lines() {
        let words: Vec<&str> = argv.split(' ').collect();
        match words.as_slice() {
            ["up", "--name", name, "--lease", lease, "--json"] => {
                let secs = humantime::parse_duration(lease).unwrap().as_secs();
                assert!((1..=MAX_LEASE_SECS).contains(&secs), "ran: {argv}");
                assert!(asked(&["renew"], name), "ran: {argv}");
            }
            ["verify", name, "--json"] => assert!(asked(&["verify"], name), "ran: {argv}"),
            ["down", name, "--no-wait", "--json"] => {
                assert!(asked(&["queue_down"], name), "ran: {argv}");
            }
            ["operation", "cancel", id, "--json"] => assert!(
                ok.iter()
                    .any(|c| c.cmd == "cancel" && c.operation.as_deref() == Some(*id)),
                "ran: {argv}"
            ),
            _ => panic!("{}: ran {argv}", context()),
        }
    }
    for name in crate::common::calls(dir.path()) {
        assert!(asked(&["reap", "down"], &name), "tore down {name}");
    }

    eprintln!(
        "{} lines: {} ok, {} null ids, {} too long; ran {} stackless, {} down",
        cases.len(),
        ok.len(),
        nulls,
        too_long,
        ran.lines().count(),
        crate::common::calls(dir.path()).len()
    );
    // (c) No `ok` refused after.
    if let Err(why) = no_refusal_after_ok(&cases, &messages) {
        panic!("{}: {why}", context());
    }
}

/// In the stream's order, each refusal in Activity of an instance
/// ([`refusal_of`]) follows a refused reply of a command naming it that
/// no earlier refusal line took: no command answered ok was refused after.
fn no_refusal_after_ok(cases: &[Case], messages: &[Value]) -> Result<(), String> {
    let by_line: HashMap<String, &Case> = cases
        .iter()
        .filter(|c| !expected_id(&c.line).is_null())
        .map(|c| (expected_id(&c.line).to_string(), c))
        .collect();
    let mut waiting: BTreeMap<String, usize> = BTreeMap::new();
    for m in messages {
        if m["type"] == "reply" && m["error"]["kind"] == "refused" {
            if let Some(subject) = by_line.get(&m["id"].to_string()).and_then(|c| c.subject()) {
                *waiting.entry(subject.to_owned()).or_default() += 1;
            }
        } else if let Some(name) = refusal_of(m) {
            let left = waiting.entry(name.to_owned()).or_default();
            if *left == 0 {
                return Err(format!(
                    "{name} refused after its command was answered ok: {m}"
                ));
            }
            *left -= 1;
        }
    }
    Ok(())
}

/// A teardown asked again of an instance whose last teardown just failed
/// (a reap attempt recorded) before a snapshot shows it is refused in the
/// reply, never answered ok and then aborted (`reap attempt changed since
/// the decision`): reaps of expired foxtrot, whose `down` fails, one every
/// 2 ms for 1.5 s.
#[test]
fn a_teardown_asked_again_before_the_snapshot_shows_the_last_is_refused_in_the_reply() {
    let (dir, store) = crate::common::fixture("real-0.4.0-v14.db");
    let foxtrot = FIXTURE[5].1;
    let cases: Vec<Case> = (0..750)
        .map(|i| Case {
            line: format!(
                r#"{{"id":{i},"cmd":"reap","name":"foxtrot","birth":{{"instance_id":"{foxtrot}"}}}}"#
            ),
            cmd: "reap".into(),
            name: Some("foxtrot".into()),
            birth: Birth::Id(foxtrot.into()),
            lease: Lease::Absent,
            operation: None,
        })
        .collect();
    let lines: Vec<String> = cases.iter().map(|c| c.line.clone()).collect();
    let messages = run_lines(dir.path(), &store, &lines, "", Duration::from_millis(2));
    let replies: Vec<&Value> = messages.iter().filter(|m| m["type"] == "reply").collect();
    assert_eq!(replies.len(), 750);
    let ok = replies.iter().filter(|r| r["ok"] == true).count();
    let torn = crate::common::calls(dir.path()).len();
    // The agent stops its teardowns still running when its stdin ends
    // (docs/protocol.md): one answered ok just before the end may be
    // stopped before its `down` ran, and says so.
    let interrupted = messages
        .iter()
        .filter(|m| m["type"] == "activity" && m["kind"] == "stopped")
        .count();
    assert!(
        ok >= 1 && torn <= ok && torn + interrupted >= ok,
        "{ok} answered ok, {torn} downs ran, {interrupted} interrupted"
    );
    if let Err(why) = no_refusal_after_ok(&cases, &messages) {
        panic!("{why}");
    }
}

/// A second and third renew (or verify) of an instance whose first still
/// runs are refused in their replies; several `detail`s in flight each
/// get one reply.
#[test]
fn commands_in_flight_are_refused_in_the_reply_and_details_answered_once_each() {
    let (dir, store) = crate::common::fixture("real-0.4.0-v14.db");
    let alpha = r#"{"instance_id":"70aa7461da17489bb88e709a64f291aa","resource_namespace":"sl-70aa7461da17489bb88e709a64f291aa"}"#;
    let mut lines = Vec::new();
    for i in 0..3 {
        lines.push(format!(
            r#"{{"id":"r{i}","cmd":"renew","name":"alpha","birth":{alpha},"lease_secs":7200}}"#
        ));
    }
    for i in 0..2 {
        lines.push(format!(
            r#"{{"id":"v{i}","cmd":"verify","name":"alpha","birth":{alpha}}}"#
        ));
    }
    for (i, (name, _)) in FIXTURE.iter().enumerate() {
        lines.push(format!(r#"{{"id":"d{i}","cmd":"detail","name":"{name}"}}"#));
    }
    lines.push(r#"{"id":"d-alpha-again","cmd":"detail","name":"alpha"}"#.to_owned());
    // A logs stream replaced, and one stopped, perhaps before they opened.
    for line in [
        r#"{"id":"l0","cmd":"logs","name":"alpha"}"#,
        r#"{"id":"l1","cmd":"logs","name":"hotel"}"#,
        r#"{"id":"l2","cmd":"logs","name":"india"}"#,
        r#"{"id":"s2","cmd":"logs_stop","logs":"l2"}"#,
    ] {
        lines.push(line.to_owned());
    }
    // Each stackless run waits for the test to let it go.
    let gate = dir.path().join("gate");
    let body = format!("while [ ! -e '{}' ]; do sleep 0.05; done", gate.display());
    let messages = run_lines(dir.path(), &store, &lines, &body, Duration::ZERO);
    // The runs started (each logs its argv first), then are let go.
    let log = dir.path().join("stackless.log");
    let deadline = Instant::now() + Duration::from_secs(20);
    let ran = loop {
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        if ran.lines().count() >= 2 || Instant::now() > deadline {
            break ran;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::write(&gate, "").unwrap();
    let reply = |id: &str| -> (Value, Value) {
        let found: Vec<&Value> = messages
            .iter()
            .filter(|m| m["type"] == "reply" && m["id"] == id)
            .collect();
        assert_eq!(found.len(), 1, "replies to {id}: {found:?}");
        (found[0]["ok"].clone(), found[0]["error"]["message"].clone())
    };
    assert_eq!(reply("r0"), (json!(true), Value::Null));
    for id in ["r1", "r2"] {
        assert_eq!(
            reply(id),
            (
                json!(false),
                json!("refused: a renew of it is already running; nothing run")
            )
        );
    }
    assert_eq!(reply("v0"), (json!(true), Value::Null));
    assert_eq!(
        reply("v1"),
        (
            json!(false),
            json!("refused: a verify of it is already running; nothing run")
        )
    );
    for (i, (name, _)) in FIXTURE.iter().enumerate() {
        let found: Vec<&Value> = messages
            .iter()
            .filter(|m| m["type"] == "reply" && m["id"] == format!("d{i}"))
            .collect();
        assert_eq!(found.len(), 1, "detail of {name}");
        assert_eq!(
            (&found[0]["ok"], &found[0]["detail"]["name"]),
            (&json!(true), &json!(name))
        );
    }
    assert_eq!(reply("d-alpha-again").0, json!(true));
    for id in ["l0", "l1", "l2"] {
        reply(id);
    }
    assert_eq!(reply("s2"), (json!(true), Value::Null));
    // Refused in the reply, and said once in Activity (audited as the
    // key's refusal is), never as a second refusal after an ok.
    assert_eq!(
        refusals_in_activity(&messages).get("alpha"),
        Some(&3),
        "{messages:?}"
    );
    // Exactly the one renew and the one verify ran.
    let mut ran: Vec<&str> = ran.lines().collect();
    ran.sort_unstable();
    assert_eq!(
        ran,
        ["up --name alpha --lease 2h --json", "verify alpha --json"]
    );
}

/// A renew asked of the App by name at a lease outside the keys' bounds
/// (what no parsed line carries) is refused with the same words, logged
/// and kept for the audit as the key's refusal is; nothing runs.
#[test]
fn a_lease_outside_the_bounds_asked_of_the_app_is_refused_and_audited() {
    let mut app = app();
    drop(app.drain_outbox());
    let alpha = Asked::by_id("alpha".into(), Some(FIXTURE[0].1.into()));
    for lease in [0, MAX_LEASE_SECS + 1, u64::MAX] {
        assert_eq!(
            app.remote(
                &Action::Renew(alpha.clone(), Some(lease)),
                &InFlight::default(),
                CAPTURE
            ),
            Err(LEASE_REFUSAL.to_owned()),
            "{lease}"
        );
        let audited = app.drain_outbox();
        assert_eq!(
            audited
                .iter()
                .map(|a| (a.instance.as_str(), a.detail.as_str()))
                .collect::<Vec<_>>(),
            [("alpha", LEASE_REFUSAL)]
        );
    }
    assert!(matches!(
        app.remote(
            &Action::Renew(alpha, Some(MAX_LEASE_SECS)),
            &InFlight::default(),
            CAPTURE
        ),
        Ok((_, Some(Effect::Verbs(_))))
    ));
}
