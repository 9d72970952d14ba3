//! `--metrics-file PATH`: the `metrics-file` thread writes the store's
//! metrics (docs/metrics.md) to `PATH` at start, each reaper tick, and
//! within a second of a change to the audit trail (a teardown started or
//! ended: a reaper pass or a key), replaced atomically
//! ([`crate::nofollow::replace`]) for `node_exporter`'s textfile
//! collector. Its own read-only connection reads the store; who reaps is
//! read as `snapshot --format openmetrics` reads it; the audit trail's
//! counts and the helper's restarts come from [`Sources`], shared with
//! `serve --stdio`'s `metrics`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::audit::CountsCache;
use crate::model::metrics::{AuditCounts, Parts, StoreState, document_of, reaper_by};
use crate::model::time::unix_now;
use crate::stop::StopToken;
use crate::store::{Access, Store};
use crate::supervisor::HelperHandle;

/// What the metrics take besides the store: the audit trail's counts as
/// the `audit-counts` thread last read them ([`crate::audit::watch_counts`]),
/// and the supervised helper (its configured name and the supervisor's
/// count of its restarts, [`HelperHandle::restarts`]). Reading them does
/// no I/O.
#[derive(Clone, Default)]
pub(crate) struct Sources {
    /// The audit trail's counts.
    pub(crate) audit: CountsCache,
    /// The helper supervised here: its name and handle.
    pub(crate) helper: Option<(String, Arc<HelperHandle>)>,
    /// More families the writer adds before `# EOF` (`record`'s recorded
    /// teardowns).
    pub(crate) extra: Option<Extra>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field("audit", &self.audit)
            .field("helper", &self.helper)
            .field("extra", &self.extra.is_some())
            .finish()
    }
}

/// More families a writer adds before `# EOF` (`record`'s recorded
/// teardowns): called at each write, and each [`CHANGE_CHECK`] to see
/// whether what it says changed (then the file is written again). Does
/// no I/O.
pub(crate) type Extra = Arc<dyn Fn() -> String + Send + Sync>;

/// `document` with `extra`'s families inserted before its `# EOF` line.
fn with_extra(document: String, extra: Option<&Extra>) -> String {
    let Some(extra) = extra else {
        return document;
    };
    let body = document.strip_suffix("# EOF\n").unwrap_or(&document);
    format!("{body}{}# EOF\n", extra())
}

impl Sources {
    /// `(helper, restarts)` of the helper supervised here (none: empty).
    pub(super) fn helpers(&self) -> Vec<(String, u64)> {
        self.helper
            .iter()
            .map(|(name, handle)| (name.clone(), handle.restarts()))
            .collect()
    }

    /// What [`Sources::extra`] says now (none: `None`).
    fn said(&self) -> Option<String> {
        self.extra.as_ref().map(|extra| extra())
    }

    /// The audit trail's newest read ([`CountsCache::get`]).
    pub(super) fn audit(&self) -> Option<(u64, Option<AuditCounts>)> {
        self.audit.get()
    }
}

/// The document of the store at `store` now: its state (`stackless_store_up
/// 0` when it cannot be read), who reaps, the audit trail's `counts`, the
/// helpers' restarts.
#[must_use]
fn document_now(store: &Path, counts: Option<&AuditCounts>, helpers: &[(String, u64)]) -> String {
    let state_dir = store
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let state = Store::open(store, Access::ReadOnly)
        .and_then(|mut opened| opened.snapshot(crate::store::probe::checked_sysinfo().as_mut()))
        .ok()
        .map(|snapshot| StoreState::of(&snapshot, unix_now()));
    let reaping = crate::model::controller::reaping(
        &crate::controller::probe::probe(&state_dir),
        crate::roles::observe(
            &crate::supervisor::roles_dir(&state_dir),
            crate::roles::CONSOLE_ROLE,
        ),
    );
    document_of(&Parts {
        state: state.as_ref(),
        by: Some(reaper_by(&reaping)),
        counts,
        helpers,
    })
}

/// How often the thread looks whether the audit trail was read again or
/// a helper restarted.
pub(super) const CHANGE_CHECK: Duration = Duration::from_millis(250);

/// Start the `metrics-file` thread: the document of the store at `store`
/// and of `sources` written to `path` once the audit trail was first
/// counted, then every `every`, and after the audit trail was counted
/// again, a helper restarted or what `sources.extra` says changed, until
/// `stop`. A write that fails is
/// logged (once until one succeeds again) and tried again at the next
/// write.
///
/// # Errors
/// The thread could not be started.
pub(crate) fn spawn(
    path: PathBuf,
    store: PathBuf,
    every: Duration,
    sources: Sources,
    stop: StopToken,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("metrics-file".into())
        .spawn(move || {
            let mut failing = false;
            let mut seen = None;
            while seen.is_none() {
                seen = sources.audit();
                if seen.is_none() && stop.sleep(CHANGE_CHECK) {
                    return;
                }
            }
            loop {
                let (read, counts) = seen.clone().unwrap_or((0, None));
                let helpers = sources.helpers();
                let said = sources.said();
                let written = std::time::Instant::now();
                let text = with_extra(
                    document_now(&store, counts.as_ref(), &helpers),
                    sources.extra.as_ref(),
                );
                failing = write(&path, &text, failing);
                loop {
                    if stop.sleep(CHANGE_CHECK.min(every)) {
                        return;
                    }
                    seen = sources.audit();
                    let changed = seen.as_ref().map(|(r, _)| *r) != Some(read)
                        || sources.helpers() != helpers
                        || sources.said() != said;
                    if changed || written.elapsed() >= every {
                        break;
                    }
                }
            }
        })
        .map(|_| ())
}

/// Replace `path` with `text`; whether it is failing now (`failing`: it
/// was), said in the log when that changes.
fn write(path: &Path, text: &str, failing: bool) -> bool {
    match crate::nofollow::replace(path, text.as_bytes()) {
        Ok(()) => {
            if failing {
                tracing::info!("metrics file {} written again", path.display());
            }
            false
        }
        Err(error) => {
            if !failing {
                tracing::warn!("metrics file {} not written: {error}", path.display());
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use crate::event::{Event, SupervisorKind};
    use crate::stop::StopToken;
    use crate::supervisor::{HelperConfig, HelperHandle};

    /// A crash-looping helper: the metrics file's
    /// `stackless_helper_restarts_total` follows the supervisor, and ends
    /// equal to the restarts it reported (each `Started` after the
    /// first), under the helper's configured name.
    #[test]
    fn the_metrics_file_counts_the_restarts_the_supervisor_reported() {
        let dir = tempfile::tempdir().unwrap();
        let stop = StopToken::new();
        let handle = Arc::new(HelperHandle::default());
        let config = HelperConfig {
            argv: vec!["/bin/sh".into(), "-c".into(), "exit 3".into()],
            roles_dir: dir.path().join("roles"),
            restart: succession::supervision::Restart {
                base: Duration::from_millis(1),
                ceiling: Duration::from_millis(4),
                healthy_after: Duration::from_secs(30),
            },
            grace: Duration::from_secs(1),
        };
        let sources = super::Sources {
            audit: crate::audit::CountsCache::default(),
            helper: Some((config.name(), Arc::clone(&handle))),
            extra: None,
        };
        crate::audit::watch_counts(
            dir.path().join("audit.jsonl"),
            sources.audit.clone(),
            stop.clone(),
        )
        .unwrap();
        let file = dir.path().join("stackless.prom");
        super::spawn(
            file.clone(),
            dir.path().join("absent.db"),
            Duration::from_secs(3600),
            sources,
            stop.clone(),
        )
        .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let supervisor = crate::supervisor::thread::spawn(config, tx, Arc::clone(&handle)).unwrap();
        let mut started = 0_u64;
        let deadline = Instant::now() + Duration::from_secs(60);
        while started < 6 {
            assert!(Instant::now() < deadline, "only {started} starts");
            match rx.try_recv() {
                Ok(Event::Supervisor(note)) if note.kind == SupervisorKind::Started => {
                    started += 1;
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        handle.stop(Duration::from_millis(200));
        supervisor.join().unwrap();
        while let Ok(event) = rx.try_recv() {
            if matches!(event, Event::Supervisor(note) if note.kind == SupervisorKind::Started) {
                started += 1;
            }
        }
        assert_eq!(handle.restarts(), started - 1);
        let want = format!(
            "\nstackless_helper_restarts_total{{helper=\"sh\"}} {}\n",
            started - 1
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            if text.contains(&want) {
                assert!(text.ends_with("# EOF\n"), "{text}");
                break;
            }
            assert!(Instant::now() < deadline, "{want} not in\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.cancel();
    }
}
