//! Garbage collection of old tombstones (D14: past 7 days, with their
//! `<state_dir>/logs/<name>/`), where the console owns GC (v4/v5); on v14
//! the controller collects them and the pass only says how many are due
//! (`super::super::decision`).

use std::collections::HashSet;

use super::Reaper;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::model::reaper_status::PassSummary;
use crate::reaper::decision::{GcDecision, TOMBSTONE_GC_WINDOW_SECS};

/// What GC did with one tombstone (`Reaper::collect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GcOutcome {
    /// Its logs and its row were deleted.
    Deleted,
    /// Nothing was deleted: a dry run, or the row was no longer a
    /// tombstone past the window.
    Kept,
    /// It could not be collected (said in Activity): a planted link, an
    /// I/O error, a rejected or failed delete; counted as an error.
    Failed,
}

impl Reaper {
    /// GC the tombstones past the window (D14), in name order: each
    /// collected counted in `summary.collected`, each failure in
    /// `summary.errors`; a name that is not DNS-safe is refused (said once).
    pub(super) fn collect_due(
        &mut self,
        gc: Vec<(String, GcDecision)>,
        now: i64,
        seen_now: &mut HashSet<String>,
        summary: &mut PassSummary,
    ) {
        for (name, gc) in gc {
            seen_now.insert(name.clone());
            match gc {
                GcDecision::RefuseName => {
                    self.quiet(
                        &name,
                        ActivityKind::Refused,
                        "GC: not a DNS-safe name".into(),
                    );
                }
                GcDecision::Collect => match self.collect(&name, now) {
                    GcOutcome::Deleted => summary.collected += 1,
                    GcOutcome::Kept => {}
                    GcOutcome::Failed => summary.errors += 1,
                },
            }
        }
    }

    /// Say (once per change) how many tombstones are due that the v14
    /// controller collects: `GC: 3 tombstones due: the controller collects
    /// them`. (v6-13 and >14 stay silent, as their banner already says GC is
    /// left to stackless.)
    pub(super) fn note_tombstones_due(&mut self, due: usize) {
        let controller = self.store.generation().era() == crate::model::generation::Era::Controller;
        let note = (controller && due > 0).then(|| {
            let plural = if due == 1 { "" } else { "s" };
            format!("GC: {due} tombstone{plural} due: the controller collects them")
        });
        if note != self.last_due_note {
            if let Some(text) = &note {
                self.emit(Activity::new(
                    self.now(),
                    Actor::Reaper,
                    "",
                    ActivityKind::Skipped,
                    text.clone(),
                ));
            }
            self.last_due_note = note;
        }
    }

    /// GC one tombstone: remove `<state_dir>/logs/<name>/`, then delete the
    /// row (only if it is still a tombstone past the window).
    pub(super) fn collect(&mut self, name: &str, now: i64) -> GcOutcome {
        if self.jobs.config.dry_run {
            self.quiet(
                name,
                ActivityKind::WouldReap,
                crate::model::activity::WOULD_GC_TOMBSTONE.into(),
            );
            return GcOutcome::Kept;
        }
        // `name` is DNS-safe here (GcDecision::Collect), so it is one plain
        // path component: no `..`, no `/`.
        let root = self.store.state_dir().join("logs");
        let logs = root.join(name);
        // A logs directory (or `<state_dir>/logs` itself) planted as a
        // symbolic link is never followed: its target is not ours to
        // delete. The tombstone is kept, and said once. The removal goes
        // through one handle on `<state_dir>/logs`, so a link swapped in
        // after the check is not followed either.
        match crate::nofollow::remove_logs(&root, std::ffi::OsStr::new(name)) {
            Ok(()) => {}
            Err(crate::nofollow::RemoveError::Refused(error)) => {
                self.quiet(
                    name,
                    ActivityKind::Refused,
                    format!("GC: {error}; the tombstone is kept"),
                );
                return GcOutcome::Failed;
            }
            Err(crate::nofollow::RemoveError::Io(e)) => {
                self.quiet(
                    name,
                    ActivityKind::Error,
                    format!("GC: cannot remove {}: {e}", logs.display()),
                );
                return GcOutcome::Failed;
            }
        }
        match self
            .store
            .delete_tombstone(name, now.saturating_sub(TOMBSTONE_GC_WINDOW_SECS))
        {
            Ok(true) => {
                self.emit(Activity::new(
                    self.now(),
                    Actor::Reaper,
                    name,
                    ActivityKind::Collected,
                    "tombstone older than 7 days deleted with its logs",
                ));
                GcOutcome::Deleted
            }
            Ok(false) => GcOutcome::Kept,
            // The store rejected this delete (a constraint, a full disk):
            // nothing wrong with the connection. Said once for this
            // tombstone, until it changes or is gone (not at every pass).
            Err(error @ crate::store::StoreError::Rejected(..)) => {
                self.quiet(name, ActivityKind::Error, format!("GC: {error}"));
                GcOutcome::Failed
            }
            Err(error) => {
                self.store_error(now, &error);
                GcOutcome::Failed
            }
        }
    }
}
