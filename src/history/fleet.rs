//! `record` over a fleet (`--fleet FILE`, or `--controller` twice or
//! more; docs/history.md, "A fleet"): each host's `snapshot --follow`
//! (over ssh, as `snapshot --follow` over a fleet reaches it) recorded
//! into its own recording, `<dir>/<host>/`, with its own lock, index and
//! segments; each line stamped with its `host`. The hosts' services are
//! not recorded (they are read on the host that runs the recorder).

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use super::files::Dir;
use super::record::{self, Retention, Sink};
use crate::cli::usage;
use crate::model::time::unix_now;

/// Every host's recorder: its sink (by host name) and its lock, held
/// until dropped.
pub struct Recorders {
    sinks: HashMap<String, Arc<Mutex<Sink>>>,
    _held: Vec<nix::fcntl::Flock<std::fs::File>>,
}

/// Why `host` cannot name a recording's directory
/// ([`crate::model::history::is_host_name`]: a DNS host name, never `.`,
/// `..` or a path).
///
/// # Errors
/// The sentence naming the host.
pub fn check_host(host: &str) -> Result<(), String> {
    if crate::model::history::is_host_name(host) {
        return Ok(());
    }
    Err(format!(
        "record: the host {:?} is not a DNS-safe name (a-z, 0-9, -, dots between): name it \
         with a label in the fleet file; its recording is a directory of that name",
        crate::model::text::sanitize_short(host, 80)
    ))
}

impl Recorders {
    /// A recording for each of `hosts` under `dir` (`<dir>/<host>/`, each
    /// locked: one recorder per host), each keeping `retention`; said on
    /// stdout, one line a host.
    ///
    /// # Errors
    /// A host name that is not DNS-safe, a directory that cannot be made,
    /// or a host another recorder holds: the exit code, said on stderr.
    pub fn start(hosts: &[&str], dir: &Path, retention: Retention) -> Result<Self, ExitCode> {
        for host in hosts {
            check_host(host).map_err(|e| usage(&e))?;
        }
        Dir::create(dir).map_err(|e| usage(&format!("record: {}: {e}", dir.display())))?;
        let mut sinks = HashMap::new();
        let mut held = Vec::new();
        for host in hosts {
            let path = dir.join(host);
            let shown = path.display().to_string();
            let one = Dir::create(&path).map_err(|e| usage(&format!("record: {shown}: {e}")))?;
            match one.lock() {
                Ok(lock) => held.push(lock),
                Err(Ok(who)) => {
                    eprintln!(
                        "stackless-tui: record: another recorder holds {shown} ({who}): one recorder per host"
                    );
                    return Err(ExitCode::from(super::EXIT_NOT_RECORDED));
                }
                Err(Err(e)) => return Err(usage(&format!("record: {shown}: {e}"))),
            }
            let store = format!("ssh://{host}");
            let sink = Sink::new(one, store, Some((*host).to_owned()), retention)
                .map_err(|e| usage(&format!("record: {shown}: {e}")))?;
            let sink = Arc::new(Mutex::new(sink));
            record::start_ticker(&sink)
                .map_err(|e| usage(&format!("record: cannot start the ticker: {e}")))?;
            println!(
                "stackless-tui: recording {host} into {}: {}",
                crate::model::text::sanitize(&shown),
                retention.words()
            );
            sinks.insert((*host).to_owned(), sink);
        }
        Ok(Self { sinks, _held: held })
    }

    /// Take the fleet stream's tagged lines (all of them): each protocol
    /// line goes to its host's recording without its `host` (the
    /// recording stamps it); the fleet's own `host` messages (a link's
    /// state) are not recorded: a host not heard from reads as a gap.
    pub fn take(&mut self, lines: &mut Vec<String>) {
        let now = unix_now();
        for line in lines.drain(..) {
            let Ok(serde_json::Value::Object(mut fields)) = serde_json::from_str(&line) else {
                continue;
            };
            let Some(serde_json::Value::String(host)) = fields.remove("host") else {
                continue;
            };
            if fields.get("type").and_then(serde_json::Value::as_str) == Some("host") {
                continue;
            }
            let Some(sink) = self.sinks.get(&host) else {
                continue;
            };
            let mut text = serde_json::Value::Object(fields).to_string();
            text.push('\n');
            if let Ok(mut sink) = sink.lock() {
                sink.take(text.as_bytes(), now);
            }
        }
    }

    /// Write what every host's recording still holds.
    pub fn finish(&mut self) {
        let now = unix_now();
        for sink in self.sinks.values() {
            if let Ok(mut sink) = sink.lock() {
                sink.tick(now);
            }
        }
    }
}
