//! The logs directory removed under an open, following view: said in the
//! view (the lines read before kept), and the note gone when it is back.

use stackless_tui::logs;

use super::logs::{append, held, pump};
use crate::common::ui::render_app;

const GONE: &str = "no logs directory: ";

#[test]
fn a_logs_dir_removed_while_followed_is_said_and_its_return_too() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("logs/alpha");
    std::fs::create_dir_all(&dir).unwrap();
    let web = dir.join("web.log");
    append(&web, "line 1\nline 2\n");
    let options = logs::follower::Options {
        notify: true,
        safety_poll: std::time::Duration::from_millis(200),
    };
    let (mut app, mut rx, handle) = super::logs::follow_web(state.path(), options);
    pump(&mut app, &mut rx, |a| a.logs().unwrap().watch.is_some());
    assert!(!render_app(&app, 120, 16).contains(GONE));
    std::fs::remove_dir_all(&dir).unwrap();
    pump(&mut app, &mut rx, |a| a.logs().unwrap().dir_gone);
    let screen = render_app(&app, 160, 16);
    let path = format!("{}", dir.display());
    assert!(
        screen.contains(&format!(
            "no logs directory: {path} does not exist (removed while shown: the lines below were read before); looked for again every second"
        )),
        "{screen}"
    );
    assert!(
        screen.contains("line 1") && screen.contains("line 2"),
        "{screen}"
    );
    // Back: the note goes, and what is written there is followed.
    std::fs::create_dir_all(&dir).unwrap();
    append(&web, "line 3\n");
    pump(&mut app, &mut rx, |a| {
        !a.logs().unwrap().dir_gone && held(a).last().map(String::as_str) == Some("line 3")
    });
    let screen = render_app(&app, 160, 16);
    assert!(!screen.contains(GONE), "{screen}");
    assert_eq!(held(&app), ["line 1", "line 2", "line 3"]);
    drop(handle);
}
