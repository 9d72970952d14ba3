//! `y` acts on the birth the question was asked about, against the real
//! stackless 0.4.0 and the console in a PTY: `d` on `vic` asks; before
//! `y`, `vic` is born again (a) in place (`stackless down vic`, then `up
//! vic 30m`), (b) by another store moved over the path (rename(2)), (c) by
//! the file rewritten in place (same inode); once the console shows the
//! new birth, `y` is refused with the birth words, no `down` runs (the
//! `--down-cmd` logs its argv to a file that stays absent) and the new
//! birth is still active in the store.

use std::path::{Path, PathBuf};

use crate::harness::{Role, Stack, real_stackless};
use crate::pty::{Tui, UI};

/// `vic`'s `(instance_id, status)` in the store at `path`.
fn birth(path: &Path) -> (String, String) {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .expect("busy");
    conn.query_row(
        "SELECT instance_id, status FROM instances WHERE name = 'vic'",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("vic")
}

/// A whole copy of the stack's store (what is in its write-ahead log too)
/// at `to`, written beside it first and renamed into place by the caller
/// when it wants.
fn copy_store(stack: &Stack, to: &Path) {
    let _ = std::fs::remove_file(to);
    stack
        .db()
        .execute("VACUUM INTO ?1", [to.display().to_string()])
        .expect("vacuum into");
}

/// A `--down-cmd` that logs its argv to `<root>/down.log`, then runs the
/// real `stackless down` against this stack: the log exists once any
/// teardown ran.
fn logging_down(stack: &Stack) -> (String, PathBuf) {
    let log = stack.root().join("down.log");
    let script = stack.root().join("logging-down.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{log}'\nexec '{bin}' --state-dir '{dir}' --proxy-port {port} \"$@\"\n",
            log = log.display(),
            bin = real_stackless().display(),
            dir = stack.state_dir().display(),
            port = stack.port,
        ),
    )
    .expect("write script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (format!("{} down {{name}} --json", script.display()), log)
}

/// `vic` brought down and up again in the real store: its new birth.
fn born_again(stack: &Stack) -> String {
    stack.down("vic").expect_code(0);
    stack.up("vic", "30m").expect_code(0);
    let (id, status) = birth(&stack.db_path());
    assert_eq!(status, "active");
    id
}

/// The console on `watched` asks `Tear down vic?`; `rebirth` makes `vic`
/// another birth there (and returns its `instance_id`); once the console
/// shows it, `y` is refused with the birth words and nothing runs.
fn y_after_a_rebirth_is_refused(stack: &Stack, watched: &Path, rebirth: impl FnOnce() -> String) {
    let (first, _) = birth(watched);
    let (down_cmd, log) = logging_down(stack);
    let db = watched.display().to_string();
    let mut tui = Tui::spawn(
        &["--state", &db, "--down-cmd", &down_cmd, "--no-reaper"],
        260,
        50,
    );
    tui.wait_for("active 9m ", UI);
    tui.select("vic");
    tui.send("d");
    tui.wait_for("Tear down vic?", UI);
    let again = rebirth();
    assert_ne!(again, first);
    // The console has read the new birth: its lease (30m) on the row.
    tui.wait_for("active 29m ", UI);
    assert!(
        tui.contents().contains("Tear down vic?"),
        "{}",
        tui.contents()
    );
    tui.send("y");
    let words = format!(
        "refused: the birth asked about ({first}) is not the instance's ({again}): it was born again, or another store was read"
    );
    tui.wait_for(&words, UI);
    assert_eq!(birth(watched), (again, "active".to_owned()));
    assert!(
        !log.exists(),
        "a down ran: {:?}",
        std::fs::read_to_string(&log)
    );
    tui.send("q");
    tui.wait_exit(UI);
}

#[test]
fn y_is_refused_after_stackless_brings_the_name_down_and_up_again() {
    let stack = Stack::new(Role::Embedded);
    stack.up("vic", "10m").expect_code(0);
    let db = stack.db_path();
    y_after_a_rebirth_is_refused(&stack, &db, || born_again(&stack));
    stack.shutdown();
}

#[test]
fn y_is_refused_after_another_store_is_moved_over_the_path() {
    let stack = Stack::new(Role::Embedded);
    stack.up("vic", "10m").expect_code(0);
    let dir = stack.root().join("watched");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let watched = dir.join("state.db");
    copy_store(&stack, &watched);
    y_after_a_rebirth_is_refused(&stack, &watched, || {
        let again = born_again(&stack);
        let beside = dir.join("state.db.new");
        copy_store(&stack, &beside);
        std::fs::rename(&beside, &watched).expect("rename over the store");
        again
    });
    stack.shutdown();
}

#[test]
fn y_is_refused_after_the_file_is_rewritten_in_place() {
    let stack = Stack::new(Role::Embedded);
    stack.up("vic", "10m").expect_code(0);
    let dir = stack.root().join("watched");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let watched = dir.join("state.db");
    copy_store(&stack, &watched);
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&watched).expect("stat"));
    y_after_a_rebirth_is_refused(&stack, &watched, || {
        let again = born_again(&stack);
        let other = stack.root().join("other.db");
        copy_store(&stack, &other);
        // Written over, the same file (inode) all along.
        std::fs::write(&watched, std::fs::read(&other).expect("read")).expect("rewrite");
        let now = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&watched).expect("stat"));
        assert_eq!(now, inode);
        again
    });
    stack.shutdown();
}
