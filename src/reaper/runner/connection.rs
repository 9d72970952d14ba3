//! The reaper's own connection to the store: opened again when the file
//! changed identity, was rewritten, migrated, or failed to read (learning
//! generation, layout and writability anew); its errors said once per
//! change; the failed reaps owed to the store written as the probe that it
//! accepts writes again.

use super::Reaper;
use crate::model::activity::{Activity, ActivityKind, Actor};
use crate::store::{Access, FileState, Store, StoreError};

impl Reaper {
    /// Make sure the store connection still reads the file at the path as
    /// it is now (deleted → report and wait; replaced, rewritten in place,
    /// migrated, or unreadable at the last pass → open it again, learning
    /// its generation anew).
    pub(super) fn ensure_store(&mut self, now: i64) -> bool {
        if (self.reopen || self.store.stale()) && !self.store.path().exists() {
            self.store.close();
            self.reopen = true;
            self.quiet(
                "",
                ActivityKind::Error,
                format!(
                    "the store file {} is gone: reaping paused until it returns",
                    self.store.path().display()
                ),
            );
            return false;
        }
        let state = if self.reopen || self.store.stale() {
            None
        } else {
            Some(self.store.file_state())
        };
        let why = match state {
            Some(FileState::Same) => return true,
            Some(FileState::Gone) => {
                self.quiet(
                    "",
                    ActivityKind::Error,
                    format!(
                        "the store file {} is gone: reaping paused until it returns",
                        self.store.path().display()
                    ),
                );
                return false;
            }
            Some(FileState::Replaced) => "the store file was replaced: reopened it".to_owned(),
            Some(FileState::Rewritten) => {
                "the store file was rewritten in place (truncated or restored from a copy): reopened it"
                    .to_owned()
            }
            Some(FileState::Migrated { was, now }) => {
                format!("the store's schema changed from v{was} to v{now}: reopened it")
            }
            None => "the store is readable again: reopened it".to_owned(),
        };
        // Closed first: the file is opened again only once every
        // connection of this console to the old one is closed.
        self.store.close();
        let path = self.store.path().to_owned();
        match Store::open(&path, Access::ReadWrite) {
            Ok(store) => {
                self.store = store;
                self.reopen = false;
                self.last_quiet.remove("");
                let why = match crate::store::epoch::take_set_aside(&path) {
                    Some(kept) => format!(
                        "{why}; its old write-ahead log was set aside as {} (not replayed onto it)",
                        kept.display()
                    ),
                    None => why,
                };
                self.emit(Activity::new(
                    now,
                    Actor::Reaper,
                    "",
                    ActivityKind::Error,
                    why,
                ));
                true
            }
            Err(error) => {
                // Opened again at the next pass, whatever this pass saw.
                self.reopen = true;
                self.store_error(now, &error);
                false
            }
        }
    }

    /// Write the failed reaps owed to the store ([`super::jobs::Unrecorded`]),
    /// one try each: the probe that the store accepts writes again (a real
    /// write, the one that is owed: a `BEGIN IMMEDIATE` alone succeeds on a
    /// file that refuses the write itself). A name no longer active in the
    /// store is owed nothing. When the last is written the reaper resumes,
    /// and says so once.
    pub(super) fn settle_owed(&mut self, now: i64) {
        let owed = self.jobs.unrecorded.owed();
        if owed.is_empty() {
            return;
        }
        let mut written = 0;
        for record in owed {
            match self.store.recheck(&record.name) {
                Ok(Some(r)) if r.status == crate::model::Status::Active => {}
                Ok(_) => {
                    self.jobs.unrecorded.settle(&record.name);
                    continue;
                }
                Err(_) => return,
            }
            match self
                .store
                .record_reap_failure(&record.name, &record.reason, record.at)
            {
                Ok(_) => {
                    written += 1;
                    self.jobs.unrecorded.settle(&record.name);
                }
                Err(error) => {
                    // Still refused: the newest reason is shown.
                    self.jobs.unrecorded.push(crate::reaper::jobs::Owed {
                        error: error.to_string(),
                        ..record
                    });
                    return;
                }
            }
        }
        self.last_quiet.remove("");
        let plural = if written == 1 { "" } else { "s" };
        self.emit(Activity::new(
            now,
            Actor::Reaper,
            "",
            ActivityKind::Skipped,
            format!(
                "the store accepts writes again: {written} failed reap{plural} recorded; reaper resumed"
            ),
        ));
    }

    pub(super) fn store_error(&mut self, now: i64, error: &StoreError) {
        if error.is_busy() {
            if !self.busy_reported {
                self.busy_reported = true;
                self.emit(Activity::new(
                    now,
                    Actor::Reaper,
                    "",
                    ActivityKind::Error,
                    "store busy: retrying on the next tick",
                ));
            }
        } else {
            // Whatever broke (a truncated or corrupt file, an I/O error),
            // this connection is not trusted again: the next pass opens the
            // file afresh, so a store restored in place is read as it is
            // now, without waiting for another process to write. Every
            // other connection of this console to it is closed too. A write
            // the store rejected (a constraint, a full disk) says nothing
            // of the connection: it stays (a reopen every pass would only
            // hide the error's repeats).
            if error.breaks_connection() {
                self.store.invalidate();
                self.reopen = true;
            }
            // Said (and audited) when it appears, changes or clears, not
            // at every pass that meets it again.
            if let Some(said) = self.store_errors.seen(&error.to_string()) {
                self.emit(Activity::new(
                    now,
                    Actor::Reaper,
                    "",
                    ActivityKind::Error,
                    said,
                ));
            }
        }
    }
}
