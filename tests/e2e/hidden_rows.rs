//! Rows past the Instances pane's window, through the real binary in a
//! pseudo-terminal at 80x24: the pane's bottom border counts the rows it
//! does not draw (`↓ N more`, `↑ N more`), and the selected row is always
//! one of those drawn, whichever way the keys move it.

use crate::common::{stores, unix_now};
use crate::harness::{Tui, UI, instance_rows, pane_rect, selected_instance, utf8};

/// How many instances the store holds: more than the pane shows at 80x24.
const COUNT: usize = 30;

/// The name of the instance ranked `i` under the default sort (lease
/// expiry, soonest first).
fn name(i: usize) -> String {
    format!("inst-{i:02}")
}

/// The Instances pane's bottom border, as drawn.
fn bottom_border(screen: &vt100::Screen) -> String {
    let (_, left, bottom, right) = pane_rect(screen, "Instances").expect("the Instances pane");
    screen
        .rows(left, right - left + 1)
        .nth(usize::from(bottom))
        .unwrap_or_default()
}

/// What the bottom border says is hidden: `(above, below)`, 0 when it
/// says nothing of that side.
fn hidden(screen: &vt100::Screen) -> (usize, usize) {
    let border = bottom_border(screen);
    let count = |arrow: &str| {
        border
            .find(arrow)
            .and_then(|at| border[at + arrow.len()..].split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (count("↑ "), count("↓ "))
}

/// The screen after `key`, once the selection reads `expected`.
fn press(tui: &mut Tui, key: &str, expected: &str) -> vt100::Screen {
    tui.send(key);
    tui.wait_until(&format!("{expected} selected after {key:?}"), UI, |s| {
        selected_instance(s).as_deref() == Some(expected)
    })
}

/// The rows drawn are consecutive ranks; the counts above and below add
/// up with them to the store's rows; the selected one is drawn. Returns
/// the first rank drawn and how many are.
fn check(screen: &vt100::Screen, selected: usize) -> (usize, usize) {
    let rows = instance_rows(screen);
    let names: Vec<&str> = rows.iter().map(|(_, n)| n.as_str()).collect();
    let first = (0..COUNT)
        .find(|&i| names.first() == Some(&name(i).as_str()))
        .unwrap_or_else(|| panic!("first row {names:?}:\n{}", screen.contents()));
    let expected: Vec<String> = (first..first + names.len()).map(name).collect();
    assert_eq!(names, expected, "{}", screen.contents());
    assert!(
        names.contains(&name(selected).as_str()),
        "{}",
        screen.contents()
    );
    let (above, below) = hidden(screen);
    assert_eq!(above, first, "{}", bottom_border(screen));
    assert_eq!(
        below,
        COUNT - first - names.len(),
        "{}",
        bottom_border(screen)
    );
    (first, names.len())
}

#[test]
fn rows_past_the_pane_are_counted_and_the_selection_drawn_at_80x24() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = stores::migrated(dir.path(), 5);
    let now = unix_now();
    let mut sql = String::from("BEGIN;");
    for i in 0..COUNT {
        let expires = now + 3_600 + 60 * i64::try_from(i).expect("small");
        sql.push_str(&format!(
            "INSERT INTO instances (name, substrate, status, definition, created_at, tombstoned_at, dirty)
             VALUES ('{n}', 'local', 'active', '[stack]', {c}, NULL, 0);
             INSERT INTO leases VALUES ('{n}', 7200, {expires});",
            n = name(i),
            c = now - 100,
        ));
    }
    sql.push_str("COMMIT;");
    stores::exec(&path, &sql);
    let mut tui = Tui::spawn(&["--state", utf8(&path), "--no-reaper"], 80, 24);
    let screen = tui.wait_until("the first rows", UI, |s| {
        selected_instance(s).as_deref() == Some("inst-00")
    });
    let (first, shown) = check(&screen, 0);
    assert_eq!(first, 0);
    assert!(shown < COUNT, "the pane shows all {COUNT}: nothing to test");
    assert!(
        bottom_border(&screen).contains(&format!("↓ {} more", COUNT - shown)),
        "{}",
        bottom_border(&screen)
    );
    // Down to the last row drawn, then one past it: the window moves by
    // one, one row is now above.
    for i in 1..=shown {
        let screen = press(&mut tui, "j", &name(i));
        check(&screen, i);
    }
    let screen = tui.screen();
    assert_eq!(
        hidden(&screen),
        (1, COUNT - shown - 1),
        "{}",
        screen.contents()
    );
    assert!(
        bottom_border(&screen).contains(&format!("↑ 1 more · ↓ {} more", COUNT - shown - 1)),
        "{}",
        bottom_border(&screen)
    );
    // The end: everything else above.
    let screen = press(&mut tui, "G", &name(COUNT - 1));
    let (first, shown_at_end) = check(&screen, COUNT - 1);
    assert_eq!(first + shown_at_end, COUNT);
    assert!(
        bottom_border(&screen).contains(&format!("↑ {first} more")),
        "{}",
        bottom_border(&screen)
    );
    assert!(
        !bottom_border(&screen).contains('↓'),
        "{}",
        bottom_border(&screen)
    );
    // Up past the top drawn: the selection stays drawn.
    for i in (first.saturating_sub(2)..COUNT - 1).rev() {
        let screen = press(&mut tui, "k", &name(i));
        check(&screen, i);
    }
    let screen = press(&mut tui, "g", &name(0));
    assert_eq!(check(&screen, 0).0, 0);
    tui.send("q");
    assert_eq!(tui.wait_exit(UI), 0);
}
