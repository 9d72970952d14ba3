//! Renew and verify (`L`, `v`) against the real stackless 0.4.0: the
//! console's runner (`stackless_tui::reaper::verbs`) runs `up --name NAME
//! --lease D --json` and `verify NAME --json` as the console does, and the
//! store shows what they did (`leases.duration_secs`, `expires_at`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stackless_tui::event::ActivityKind;
use stackless_tui::model::verbs::{Verb, VerbRequest};
use stackless_tui::reaper::verbs::VerbRunner;
use stackless_tui::recorder::{Forward, Recorder};
use stackless_tui::store::probe::SysinfoProbe;
use stackless_tui::store::{Access, Store};

use crate::harness::{Role, Stack, real_stackless, unix_now, wait_until};

/// The program the runner runs: the real stackless with this stack's env
/// and the embedded controller's flags before the verb (as
/// [`Stack::down_command`] gives our teardowns), the rest of the argv as
/// the console built it.
pub(crate) fn program(stack: &Stack) -> String {
    let path = stack.root().join("stackless-for-the-console");
    let root = stack.root().display().to_string();
    let script = format!(
        "#!/bin/sh\nexec env HOME='{root}' XDG_STATE_HOME='{root}' XDG_CONFIG_HOME='{root}/config' STACKLESS_NO_SELF_UPDATE=1 STACKLESS_TUI_REAL_TEST='{root}' '{bin}' --state-dir '{dir}' --proxy-port {port} \"$@\"\n",
        bin = real_stackless().display(),
        dir = stack.state_dir().display(),
        port = stack.port,
    );
    std::fs::write(&path, script).expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

fn runner(stack: &Stack) -> VerbRunner {
    VerbRunner {
        path: stack.db_path(),
        program: program(stack),
        dry_run: false,
        recorder: Recorder::new(None, Forward::Collect(Arc::new(Mutex::new(Vec::new())))),
        clock: Arc::new(unix_now),
        deadline: Duration::from_secs(180),
        running: stackless_tui::reaper::InFlight::default(),
    }
}

fn shown(path: &Path, name: &str) -> stackless_tui::model::Instance {
    let mut store = Store::open(path, Access::ReadOnly).expect("open");
    let snapshot = store.snapshot(&mut SysinfoProbe::new()).expect("snapshot");
    snapshot.instance(name).cloned().expect("instance")
}

/// Wait until the wall clock is past unix second `at` (a lease set at
/// `at` and renewed now then ends later).
pub(crate) fn next_second(at: i64) {
    wait_until("the next second", Duration::from_secs(5), || {
        (unix_now() > at).then_some(())
    });
}

pub(crate) fn lease(stack: &Stack, name: &str) -> (i64, i64) {
    stack
        .db()
        .query_row(
            "SELECT duration_secs, expires_at FROM leases WHERE instance = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("lease")
}

/// An instance with a 10-minute lease, renewed from the console for 2h:
/// `up --name demo --lease 2h --json` resumes it from its recorded
/// definition (no file, no cwd) and `leases` moves to 7200 s from then;
/// the birth is the same.
#[test]
fn a_renew_moves_the_lease() {
    let stack = Stack::new(Role::Embedded);
    stack.up("demo", "10m").expect_code(0);
    let (duration, _) = lease(&stack, "demo");
    assert_eq!(duration, 600);
    let seen = shown(&stack.db_path(), "demo");
    let runner = runner(&stack);
    let before = unix_now();
    let activity = runner.execute(&VerbRequest {
        instance: seen.clone(),
        verb: Verb::Renew { lease_secs: 7200 },
    });
    let after = unix_now();
    assert_eq!(activity.kind, ActivityKind::Renewed, "{activity:#?}");
    assert!(
        activity.detail.starts_with("2h, expires in "),
        "{activity:#?}"
    );
    let (duration, expires_at) = lease(&stack, "demo");
    assert_eq!(duration, 7200);
    assert!(
        (before + 7200..=after + 7200).contains(&expires_at),
        "{before} {expires_at} {after}"
    );
    let now = shown(&stack.db_path(), "demo");
    assert_eq!(now.birth, seen.birth, "the same birth");
    stack.shutdown();
}

/// The app with a `[stack.verify]` check that passes while `<root>/ok`
/// exists.
pub(crate) fn verify_app(stack: &Stack) -> PathBuf {
    let app = stack.write_app("verified", None);
    let definition = std::fs::read_to_string(app.join("stackless.toml")).expect("read");
    let marker = stack.root().join("ok");
    let definition = definition.replacen(
        "[stack]\nname = \"tui-test\"\n",
        &format!(
            "[stack]\nname = \"tui-test\"\n\n[stack.verify]\nrun = \"test -f {}\"\ntimeout_secs = 30\n",
            marker.display()
        ),
        1,
    );
    std::fs::write(app.join("stackless.toml"), definition).expect("write");
    marker
}

/// A passing verify renews the lease at its recorded duration and says
/// so; a failing one shows its check's failure and remediation.
#[test]
fn verify_passes_and_renews_or_shows_the_failing_check() {
    let stack = Stack::new(Role::Embedded);
    let marker = verify_app(&stack);
    stack
        .up_app("checked", "10m", "verified", &[])
        .expect_code(0);
    std::fs::write(&marker, "").expect("marker");
    let runner = runner(&stack);
    // A second after the lease was set, so a renewal shows.
    let (duration, expires_before) = lease(&stack, "checked");
    next_second(expires_before - duration);
    let before = unix_now();
    let passed = runner.execute(&VerbRequest {
        instance: shown(&stack.db_path(), "checked"),
        verb: Verb::Verify,
    });
    assert_eq!(passed.kind, ActivityKind::Verified, "{passed:#?}");
    assert!(
        passed.detail.starts_with("default check passed (exit 0, "),
        "{passed:#?}"
    );
    assert!(passed.detail.contains("; lease renewed: "), "{passed:#?}");
    let (duration, expires_at) = lease(&stack, "checked");
    assert_eq!(duration, 600);
    assert!(
        expires_at > expires_before,
        "{expires_before} -> {expires_at}"
    );
    assert!(expires_at >= before + 600, "{before} {expires_at}");

    std::fs::remove_file(&marker).expect("remove marker");
    // A second after the renewal, so another one would show.
    let (_, expires_passed) = lease(&stack, "checked");
    next_second(expires_passed - duration);
    let failed = runner.execute(&VerbRequest {
        instance: shown(&stack.db_path(), "checked"),
        verb: Verb::Verify,
    });
    assert_eq!(failed.kind, ActivityKind::VerifyFailed, "{failed:#?}");
    assert_eq!(
        failed.detail,
        "verify.failed: verify command exited with 1 (remediation: inspect error.context.log_tail and error.context.log_path; fix the verify script and re-run `stackless verify`)"
    );
    assert!(failed.envelope.contains("\"log_path\""), "{failed:#?}");
    // A failing verify renewed too: when its check started (verify.rs:139).
    let (_, expires_failed) = lease(&stack, "checked");
    assert!(
        expires_failed > expires_passed,
        "{expires_passed} -> {expires_failed}"
    );
    stack.shutdown();
}

/// Rows of the Instances pane whose text holds `name`.
fn row_of(screen: &str, name: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(&format!(" {name} ")) && l.contains("left"))
        .unwrap_or_default()
        .to_owned()
}

/// As a new user would: an instance about to expire, `L` in the console
/// (the line prefilled with its recorded 45s), the duration made 2h, the
/// confirmation naming the command, `y`; the row's countdown jumps to 2h
/// and the Activity pane says so. The screens are printed (`--nocapture`).
#[test]
fn renew_from_the_console_and_watch_the_countdown_jump() {
    let stack = Stack::new(Role::Embedded);
    stack.up("demo", "45s").expect_code(0);
    let db = stack.db_path().display().to_string();
    let program = program(&stack);
    let mut tui = crate::pty::Tui::spawn(
        &["--state", &db, "--no-reaper", "--stackless", &program],
        120,
        30,
    );
    tui.wait_for("demo", crate::pty::UI);
    tui.select("demo");
    let before = tui.wait_for("s left", crate::pty::UI);
    println!("before:\n{before}");
    let row = row_of(&before, "demo");
    assert!(!row.contains("1h 59m") && !row.contains("2h 00m"), "{row}");
    tui.send("L");
    let prompt = tui.wait_for(":renew demo 45s", crate::pty::UI);
    println!("the prompt:\n{prompt}");
    tui.send("\x7f\x7f\x7f2h\r");
    let asked = tui.wait_for("Confirm renew", crate::pty::UI);
    println!("the confirmation:\n{asked}");
    assert!(
        asked
            .replace(['║', '\n'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("Renew demo's lease for 2h? stackless resumes the instance (its prepare hooks run again). It expires in ")
            && asked
                .replace(['║', '\n'], " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(&format!(
                    ", then in 2h. This runs: {program} up --name demo --lease 2h --json [y/N]"
                )),
        "{asked}"
    );
    tui.send("y");
    tui.wait_for("lease renewed: 2h, expires in", Duration::from_secs(120));
    let after = tui
        .wait_until("the countdown at 2h", Duration::from_secs(30), |screen| {
            let row = row_of(&screen.contents(), "demo");
            row.contains("1h 59m left") || row.contains("2h 00m left")
        })
        .contents();
    println!("after:\n{after}");
    let (duration, expires_at) = lease(&stack, "demo");
    assert_eq!(duration, 7200);
    assert!(expires_at > unix_now() + 7000, "{expires_at}");
    // The renew is one line, the operator's: the `up` it submitted (0.4.0
    // runs it on the controller's queue) is not said again as the
    // controller's. Once the Operations pane lists it beside the first
    // `up`, the help opened and closed is drawn after the lines of that
    // snapshot were logged.
    tui.wait_until("both ups listed finished", crate::pty::UI, |s| {
        crate::pty::pane(s, "Operations").is_some_and(|lines| {
            lines
                .iter()
                .filter(|l| l.contains("up ") && l.contains("demo") && l.contains("succeeded"))
                .count()
                == 2
        })
    });
    tui.send("?");
    tui.wait_for("Help (Esc or ? closes)", crate::pty::UI);
    tui.send("\x1b");
    tui.wait_gone("Help (Esc or ? closes)", crate::pty::UI);
    let activity = crate::pty::pane(&tui.screen(), "Activity").expect("the Activity pane");
    let demo: Vec<&String> = activity.iter().filter(|l| l.contains(" demo ")).collect();
    assert_eq!(demo.len(), 1, "{activity:#?}");
    assert!(
        demo[0].contains(" operator demo lease renewed: 2h, expires in"),
        "{activity:#?}"
    );
    tui.send("q");
    tui.wait_exit(crate::pty::UI);
    stack.shutdown();
}

/// `v` in the console: under `--dry-run` it says what would run and the
/// lease stays; then for real its overlay lists the check, its result and
/// the renewed lease (printed, `--nocapture`).
#[test]
fn verify_from_the_console_dry_then_for_real() {
    let stack = Stack::new(Role::Embedded);
    let marker = verify_app(&stack);
    stack
        .up_app("checked", "10m", "verified", &[])
        .expect_code(0);
    std::fs::write(&marker, "").expect("marker");
    let db = stack.db_path().display().to_string();
    let program = program(&stack);
    let dry = ["--state", &db, "--dry-run", "--stackless", &program];
    let mut tui = crate::pty::Tui::spawn(&dry, 120, 30);
    tui.wait_for("checked", crate::pty::UI);
    tui.select("checked");
    let held = lease(&stack, "checked");
    tui.send("v");
    tui.wait_for("Confirm verify", crate::pty::UI);
    tui.send("y");
    let said = tui.wait_for("(dry run: nothing run)", crate::pty::UI);
    println!("dry run:\n{said}");
    assert!(
        said.contains(&format!(
            "would run: {program} verify checked --json (dry run: nothing run)"
        )),
        "{said}"
    );
    assert_eq!(lease(&stack, "checked"), held, "a dry run renews nothing");
    tui.send("q");
    tui.wait_exit(crate::pty::UI);

    // A second after the lease was set, so a renewal shows.
    next_second(held.1 - held.0);
    let mut tui = crate::pty::Tui::spawn(
        &["--state", &db, "--no-reaper", "--stackless", &program],
        120,
        30,
    );
    tui.wait_for("checked", crate::pty::UI);
    tui.select("checked");
    tui.send("v");
    tui.wait_for("Confirm verify", crate::pty::UI);
    tui.send("y");
    let overlay = tui.wait_for("Verify · checked", Duration::from_secs(120));
    println!("the verify overlay:\n{overlay}");
    assert!(
        overlay.contains("result       passed (exit 0, "),
        "{overlay}"
    );
    assert!(overlay.contains("lease        renewed: "), "{overlay}");
    assert!(lease(&stack, "checked").1 > held.1, "{held:?}");
    tui.send("\x1b");
    tui.wait_gone("Verify · checked", crate::pty::UI);
    std::fs::remove_file(&marker).expect("remove marker");
    tui.send("v");
    tui.wait_for("Confirm verify", crate::pty::UI);
    tui.send("y");
    let overlay = tui.wait_for("Verify · checked", Duration::from_secs(120));
    println!("the failed verify:\n{overlay}");
    assert!(overlay.contains("code         verify.failed"), "{overlay}");
    assert!(
        overlay.contains("remediation  inspect error.context.log_tail"),
        "{overlay}"
    );
    // Each verify is one line, the operator's: the `verify` operation it
    // submitted (0.4.0 runs it on the controller's queue) is not said
    // again as the controller's. Once the Operations pane lists both
    // finished, the help opened and closed is drawn after the lines of
    // that snapshot were logged.
    tui.send("\x1b");
    tui.wait_gone("Verify · checked", crate::pty::UI);
    tui.wait_until("both verifies listed finished", crate::pty::UI, |s| {
        crate::pty::pane(s, "Operations").is_some_and(|lines| {
            lines
                .iter()
                .filter(|l| {
                    l.contains("verify")
                        && l.contains("checked")
                        && (l.contains("succeeded") || l.contains("failed"))
                })
                .count()
                == 2
        })
    });
    tui.send("?");
    tui.wait_for("Help (Esc or ? closes)", crate::pty::UI);
    tui.send("\x1b");
    tui.wait_gone("Help (Esc or ? closes)", crate::pty::UI);
    let activity = crate::pty::pane(&tui.screen(), "Activity").expect("the Activity pane");
    let verifies: Vec<&String> = activity
        .iter()
        .filter(|l| l.contains("checked") && l.contains("verif"))
        .collect();
    assert_eq!(verifies.len(), 2, "{activity:#?}");
    assert!(
        verifies
            .iter()
            .all(|l| l.contains(" operator checked verif")),
        "{activity:#?}"
    );
    tui.send("q");
    tui.wait_exit(crate::pty::UI);
    stack.shutdown();
}
