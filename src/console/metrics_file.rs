//! `--metrics-file PATH`: the `metrics-file` thread writes the store's
//! metrics (docs/metrics.md) to `PATH` at start, each reaper tick, and
//! within [`AUDIT_CHECK`] of a change to the audit trail (a teardown
//! started or ended: a reaper pass or a key), replaced atomically ([`crate::nofollow::replace`]) for `node_exporter`'s
//! textfile collector. Its own read-only connection reads the store; the
//! audit trail and who reaps are read as `snapshot --format openmetrics`
//! reads them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::metrics::{StoreState, document, reaper_by};
use crate::model::time::unix_now;
use crate::stop::StopToken;
use crate::store::{Access, Store};

/// The document of the store at `store` now: its state (`stackless_store_up
/// 0` when it cannot be read), who reaps, the audit trail's counts.
#[must_use]
pub(super) fn document_of(store: &Path) -> String {
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
    let counts = crate::audit::counts(&crate::audit::default_path(&state_dir));
    document(state.as_ref(), Some(reaper_by(&reaping)), counts.as_ref())
}

/// How often the thread looks whether the audit trail changed.
pub(super) const AUDIT_CHECK: Duration = Duration::from_secs(1);

/// The audit trail's size and modification time (`None`: not there).
fn audit_stamp(state_dir: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::symlink_metadata(crate::audit::default_path(state_dir)).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// More families a writer adds before `# EOF` (`record`'s recorded
/// teardowns): called at each write, and each [`AUDIT_CHECK`] to see
/// whether what it says changed (then the file is written again).
pub(crate) type Extra = std::sync::Arc<dyn Fn() -> String + Send + Sync>;

/// `document` with `extra`'s families inserted before its `# EOF` line.
fn with_extra(document: String, extra: Option<&Extra>) -> String {
    let Some(extra) = extra else {
        return document;
    };
    let body = document.strip_suffix("# EOF\n").unwrap_or(&document);
    format!("{body}{}# EOF\n", extra())
}

/// Start the `metrics-file` thread: [`document_of`] the store at `store`
/// (and `extra`'s families) written to `path` now, every `every`, and
/// after the audit trail (or what `extra` says) changed, until `stop`. A
/// write that fails is logged (once until one succeeds again) and tried
/// again at the next write.
///
/// # Errors
/// The thread could not be started.
pub(crate) fn spawn(
    path: PathBuf,
    store: PathBuf,
    every: Duration,
    stop: StopToken,
    extra: Option<Extra>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("metrics-file".into())
        .spawn(move || {
            let mut failing = false;
            let state_dir = store
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            let said = || extra.as_ref().map(|extra| extra());
            loop {
                let stamp = (audit_stamp(&state_dir), said());
                let written = std::time::Instant::now();
                let text = with_extra(document_of(&store), extra.as_ref());
                match crate::nofollow::replace(&path, text.as_bytes()) {
                    Ok(()) if failing => {
                        failing = false;
                        tracing::info!("metrics file {} written again", path.display());
                    }
                    Ok(()) => {}
                    Err(error) if !failing => {
                        failing = true;
                        tracing::warn!("metrics file {} not written: {error}", path.display());
                    }
                    Err(_) => {}
                }
                loop {
                    if stop.sleep(AUDIT_CHECK.min(every)) {
                        return;
                    }
                    if written.elapsed() >= every || (audit_stamp(&state_dir), said()) != stamp {
                        break;
                    }
                }
            }
        })
        .map(|_| ())
}
