//! Tests of the rules (`crate::model::rules`): who runs the reaper (`P`,
//! `R`, pass, and standing by for the controller's lease reaper), and the
//! note of a command that starts the controller: what its lease reaper
//! reaps.

use super::*;

/// `P` while standing by for the controller's lease reaper is admitted:
/// it means "do not take over when it stops", and `P` again undoes it.
#[test]
fn pause_in_standby_means_do_not_take_over() {
    let s = snapshot();
    let standby = |paused| Settings {
        reaper: ReaperState {
            elsewhere: Some("the controller (pid 77) runs stackless's lease reaper".into()),
            paused,
            standby_for: Some(77),
        },
        ..settings()
    };
    let words = |effect, words: &str| {
        Ok(Admitted {
            effect,
            words: words.into(),
        })
    };
    assert_eq!(
        admit_at(&Action::Pause, &s, &standby(false), NOW),
        words(
            Effect::Pause(true),
            "the controller (pid 77) reaps; when it stops this console will not take over (P: it will)"
        )
    );
    assert_eq!(
        admit_at(&Action::Resume, &s, &standby(true), NOW),
        words(
            Effect::Pause(false),
            "the controller (pid 77) reaps; when it stops this console takes over"
        )
    );
    assert_eq!(
        admit_at(&Action::Pause, &s, &standby(true), NOW),
        words(
            Effect::Nothing,
            "the reaper is already paused: this console does not take over"
        )
    );
}

#[test]
fn pause_resume_and_pass_by_who_runs_the_reaper() {
    let s = snapshot();
    let running = settings();
    let paused = Settings {
        reaper: ReaperState {
            elsewhere: None,
            paused: true,
            standby_for: None,
        },
        ..settings()
    };
    let elsewhere = Settings {
        reaper: ReaperState {
            elsewhere: Some("another console runs it".into()),
            paused: false,
            standby_for: None,
        },
        ..settings()
    };
    let words = |effect, words: &str| {
        Ok(Admitted {
            effect,
            words: words.into(),
        })
    };
    assert_eq!(
        admit_at(&Action::Pause, &s, &running, NOW),
        words(
            Effect::Pause(true),
            "reaper paused (P resumes): the role is free for another console or reap --once"
        )
    );
    assert_eq!(
        admit_at(&Action::Pause, &s, &paused, NOW),
        words(Effect::Nothing, "the reaper is already paused")
    );
    assert_eq!(
        admit_at(&Action::Resume, &s, &paused, NOW),
        words(
            Effect::Pause(false),
            "reaper resumed: it reaps once it has the role (the header says who reaps)"
        )
    );
    assert_eq!(
        admit_at(&Action::Resume, &s, &running, NOW),
        words(Effect::Nothing, "the reaper is not paused")
    );
    assert_eq!(
        admit_at(&Action::Pass, &s, &running, NOW),
        words(Effect::Pass, "reaper pass asked for: it runs now")
    );
    assert_eq!(
        admit_at(&Action::Pass, &s, &paused, NOW),
        said("the reaper is paused: P resumes it (and runs a pass)")
    );
    for action in [Action::Pause, Action::Resume, Action::Pass] {
        assert_eq!(
            admit_at(&action, &s, &elsewhere, NOW),
            said("another console runs it"),
            "{action:?}"
        );
    }
}

fn settings_stopped() -> Settings {
    Settings {
        controller_stopped: true,
        ..settings()
    }
}

/// alpha, hotel, india: expired; golf: lease left; kilo: expired in a
/// backoff; lima: expired with a pending up; mike: tombstoned.
fn expired_store() -> Snapshot {
    Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: vec![
            instance("alpha", Status::Active, Some(NOW - 100)),
            instance("golf", Status::Active, Some(NOW + 600)),
            instance("hotel", Status::Active, Some(NOW)),
            instance("india", Status::Active, Some(NOW - 5)),
            instance("kilo", Status::Active, Some(NOW - 5)),
            instance("lima", Status::Active, Some(NOW - 5)),
            instance("mike", Status::Tombstoned, None),
        ]
        .into(),
        operations: vec![op("op-lima", "lima", "up", OpStatus::Queued)],
        reap_attempts: vec![attempt("kilo")],
        ..Rows::default()
    })
}

fn note_at(
    snapshot: &Snapshot,
    settings: &Settings,
    verb: &str,
    renewed: &[&str],
) -> Option<String> {
    controller_start_note(
        &Context {
            snapshot,
            settings,
            in_flight: &InFlight::default(),
            now: NOW,
        },
        verb,
        renewed,
    )
}

/// With no controller running, a command that starts it names what its
/// lease reaper's first pass downs (0.4.0 `reaper::plan`: expired, no
/// pending operation, no backoff left), and a renewed one among them
/// races it.
#[test]
fn a_command_that_starts_the_controller_names_what_its_lease_reaper_reaps() {
    let s = expired_store();
    assert_eq!(
        note_at(&s, &settings_stopped(), "renew", &["golf", "india"]).as_deref(),
        Some(
            "This starts stackless's controller; its lease reaper then reaps the expired: alpha, hotel, india (india's renew races the reaper)."
        )
    );
    assert_eq!(
        note_at(&s, &settings_stopped(), "renew", &["alpha", "india"]).as_deref(),
        Some(
            "This starts stackless's controller; its lease reaper then reaps the expired: alpha, hotel, india (alpha and india: each renew races the reaper)."
        )
    );
    assert_eq!(
        note_at(&s, &settings_stopped(), "", &[]).as_deref(),
        Some(
            "This starts stackless's controller; its lease reaper then reaps the expired: alpha, hotel, india."
        )
    );
    // A controller runs (or none was probed yet): nothing to say.
    assert_eq!(note_at(&s, &settings(), "renew", &["india"]), None);
}

/// Past three names the note counts the rest; with none expired it says
/// the reaper finds nothing; a store older than 0.4.0's has no controller.
#[test]
fn the_controller_note_caps_its_names_and_needs_a_0_4_0_store() {
    let mut s = expired_store();
    s.instances
        .push(instance("november", Status::Active, Some(NOW - 9)));
    s.instances
        .push(instance("oscar", Status::Active, Some(NOW - 9)));
    assert_eq!(
        note_at(&s, &settings_stopped(), "verify", &["oscar"]).as_deref(),
        Some(
            "This starts stackless's controller; its lease reaper then reaps the expired: alpha, hotel, india and 2 more (oscar's verify races the reaper)."
        )
    );
    let none = Snapshot::from(Rows {
        generation: Generation::new(14),
        instances: vec![instance("golf", Status::Active, Some(NOW + 600))].into(),
        ..Rows::default()
    });
    assert_eq!(
        note_at(&none, &settings_stopped(), "", &[]).as_deref(),
        Some(
            "This starts stackless's controller (none runs now); its lease reaper finds nothing expired now."
        )
    );
    let old = Snapshot::from(Rows {
        generation: Generation::new(5),
        ..(*expired_store().rows).clone()
    });
    assert_eq!(note_at(&old, &settings_stopped(), "", &[]), None);
}

/// Only stackless's own subcommands that reach the controller start it.
#[test]
fn which_commands_start_the_controller() {
    let argv = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let starts = |a: &[&str]| argv_starts_controller(&argv(a), "/usr/local/bin/my-stackless");
    assert!(starts(&["stackless", "down", "{name}", "--json"]));
    assert!(starts(&["/opt/stackless", "up", "--name", "a"]));
    assert!(starts(&["stackless", "operation", "cancel", "x"]));
    // The configured `--stackless` program, whatever its file name.
    assert!(starts(&[
        "/usr/local/bin/my-stackless",
        "down",
        "{name}",
        "--json"
    ]));
    assert!(!starts(&["./teardown.sh", "{name}"]));
    // An operator's own script given stackless's words is not stackless.
    assert!(!starts(&["/tmp/fake-down.sh", "down", "{name}", "--json"]));
    assert!(!starts(&["stackless-tui", "demo-down", "{name}"]));
    assert!(!starts(&["stackless", "list", "--json"]));
}
