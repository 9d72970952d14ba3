//! The demo's service logs, so `l` has something to show: a few
//! timestamped lines per service of the local instances
//! (`<state_dir>/logs/<name>/<service>.log`, as stackless 0.2/0.3 lay them
//! out), and, while the demo console runs, a writer (thread `demo-logs`)
//! that appends a line to `api-gateway-dev`'s `gateway.log` every
//! [`WRITE_EVERY`] so the view is seen following.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::stop::StopToken;

/// How often the demo writer appends a line.
pub(crate) const WRITE_EVERY: Duration = Duration::from_secs(2);

/// The instance and service the writer appends to.
pub(crate) const LIVE: (&str, &str) = ("api-gateway-dev", "gateway");

/// `(instance, service, line templates)`; `{i}` is the line number.
const SERVICES: &[(&str, &str, &[&str])] = &[
    (
        "api-gateway-dev",
        "gateway",
        &[
            "INFO  listening on 0.0.0.0:8080",
            "INFO  GET /healthz 200 1ms",
            "INFO  GET /v1/orders/{i} 200 12ms",
            "WARN  upstream orders slow: 840ms for /v1/orders/{i}",
            "INFO  POST /v1/checkout 201 48ms",
            "ERROR upstream payments: connection refused (attempt {i})",
        ],
    ),
    (
        "api-gateway-dev",
        "redis",
        &[
            "1:M * Ready to accept connections tcp",
            "1:M * DB saved on disk ({i} changes)",
            "1:M * Background saving started by pid {i}",
        ],
    ),
    (
        "orders-e2e",
        "api",
        &[
            "INFO:     Uvicorn running on http://127.0.0.1:8000",
            "INFO:     127.0.0.1 - \"GET /orders/{i} HTTP/1.1\" 200 OK",
        ],
    ),
    (
        "orders-e2e",
        "worker",
        &["processed job {i} in 0.{i}s", "queue empty, sleeping 5s"],
    ),
    (
        "inventory-sync",
        "sync",
        &[
            "sync: fetched {i} items from the warehouse API",
            "sync: wrote {i} rows",
        ],
    ),
];

/// Lines seeded per service.
const SEEDED: i64 = 40;

/// `unix` seconds as `2026-12-01T11:20:00Z`.
fn stamp(unix: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_secs(u64::try_from(unix).unwrap_or(0));
    humantime::format_rfc3339_seconds(at).to_string()
}

fn line(template: &str, i: i64) -> String {
    template.replace("{i}", &i.to_string())
}

/// Write the seeded service logs under `state_dir` at `now` (unix seconds):
/// [`SEEDED`] lines each, one a minute up to `now`.
///
/// # Errors
/// Creating a directory or writing a file failed.
pub(crate) fn seed(state_dir: &Path, now: i64) -> std::io::Result<()> {
    for (instance, service, templates) in SERVICES {
        let dir = state_dir.join("logs").join(instance);
        std::fs::create_dir_all(&dir)?;
        let mut text = String::new();
        for i in 0..SEEDED {
            let template = templates[usize::try_from(i).unwrap_or(0) % templates.len()];
            let at = now - (SEEDED - i) * 60;
            text.push_str(&format!("{} {}\n", stamp(at), line(template, i)));
        }
        std::fs::write(dir.join(format!("{service}.log")), text)?;
    }
    Ok(())
}

/// The log the writer appends to.
#[must_use]
pub(crate) fn live_log(state_dir: &Path) -> PathBuf {
    state_dir
        .join("logs")
        .join(LIVE.0)
        .join(format!("{}.log", LIVE.1))
}

/// Start the `demo-logs` thread: a line every [`WRITE_EVERY`] until `stop`.
///
/// # Errors
/// The thread could not be spawned.
pub(crate) fn spawn_writer(state_dir: PathBuf, stop: StopToken) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("demo-logs".into())
        .spawn(move || {
            let path = live_log(&state_dir);
            let mut i: i64 = SEEDED;
            while !stop.sleep(WRITE_EVERY) {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
                let text = format!(
                    "{} INFO  GET /v1/orders/{i} 200 {}ms\n",
                    stamp(now),
                    5 + i % 20
                );
                let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(&path) else {
                    return;
                };
                let _ = file.write_all(text.as_bytes());
                i += 1;
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_rfc3339() {
        assert_eq!(stamp(1_795_960_686), "2026-11-29T13:58:06Z");
    }
}
