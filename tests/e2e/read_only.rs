//! `--read-only` on a cleanly closed WAL store in a directory the reader
//! cannot write (no `-shm`, and none can be created): the console reads it
//! through an immutable snapshot, says so in the header, and sees a change
//! by reopening the file.

use crate::common::reader::{ReaderDir, cleanly_closed_wal_store};
use crate::harness::{BIN, Tui, UI};

/// The header's banner for a store read immutably.
const BANNER: &str = "! read-only (immutable: dir not writable; changes seen by reopening)";

#[test]
fn a_cleanly_closed_wal_store_the_reader_cannot_index_is_watched_through_reopening() {
    let Some(dir) = ReaderDir::new() else {
        return;
    };
    let path = cleanly_closed_wal_store(dir.path());
    let state = path.to_str().expect("utf-8 path");
    dir.lock();
    let before = dir.files();
    let reader: &[&str] = if dir.root {
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            BIN,
        ]
    } else {
        &[BIN]
    };
    let mut tui = Tui::spawn_with(reader, &["--read-only", "--state", state], &[], 160, 40);
    tui.wait_for_all(&[BANNER, "foxtrot", "reaper: off (read-only)"], UI);
    // The owner writes (and closes cleanly): the file changes, its -wal and
    // -shm come and go; the console reads the new rows by reopening.
    if dir.root {
        let owner = rusqlite::Connection::open(&path).expect("owner");
        owner
            .execute(
                "UPDATE instances SET substrate = 'vercel' WHERE name = 'golf'",
                [],
            )
            .expect("update");
        drop(owner);
        tui.wait_for_all(&[BANNER, "vercel"], UI);
        assert_eq!(dir.files().len(), before.len(), "no file left beside it");
    }
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0);
    if !dir.root {
        assert_eq!(dir.files(), before, "nothing created or written");
    }
}
