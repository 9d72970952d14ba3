//! Every action acts on the birth it was asked about: `d`, `r`, bulk
//! `d`/`r` (marks), `:down` and `:reap` (one name and several) asked
//! about one birth of `vic`, answered `y` after a snapshot in which `vic`
//! was born again (schema 14: another `instance_id`; schema 5: another
//! `created_at`), are refused with the birth words and hand the console
//! nothing; the same birth still goes ahead, carrying that birth.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{press, select};
use crossterm::event::KeyCode;

use stackless_tui::event::{ActivityKind, Event};
use stackless_tui::model::{Birth, Generation, Instance, Lease, Rows, Snapshot, Status};
use stackless_tui::ui::{App, AppConfig, Effect};

/// The first birth of `vic` on schema 14, and the one it is born again as.
const FIRST: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const AGAIN: &str = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";
/// When the first birth of `vic` was created, and the second.
const FIRST_AT: i64 = CAPTURE - 3_600;
const AGAIN_AT: i64 = CAPTURE - 5;

fn config() -> AppConfig {
    AppConfig {
        store_label: "/srv/state.db".into(),
        reaper: stackless_tui::ui::ReaperMode::Every {
            tick: std::time::Duration::from_secs(60),
            dry_run: false,
            always: false,
        },
        helper: stackless_tui::ui::HelperMode::None,
        write_keys: Ok(()),
        host: None,
        no_color: false,
    }
}

/// An active instance whose lease ran out `expired_for` seconds before
/// [`CAPTURE`] (negative: still runs), created at `created_at`, with the
/// birth `id` on schema 14 (none on schema 5).
fn instance(version: i64, name: &str, id: &str, created_at: i64, expired_for: i64) -> Instance {
    Instance {
        name: name.into(),
        substrate: "local".into(),
        status: Status::Active,
        created_at: Some(created_at),
        tombstoned_at: None,
        lease: Some(Lease {
            duration_secs: 1_800,
            expires_at: CAPTURE - expired_for,
        }),
        lock: None,
        anomalies: Default::default(),
        dirty: Some(false),
        birth: (version >= 7).then(|| Birth::new(id, &format!("sl-{id}"))),
    }
}

/// `alpha` (expired) and `vic` as `vic` is given.
fn snapshot(version: i64, vic: Instance) -> Arc<Snapshot> {
    Arc::new(Snapshot::from(Rows {
        generation: Generation::new(version),
        instances: vec![
            instance(
                version,
                "alpha",
                "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
                CAPTURE - 7_200,
                60,
            ),
            vic,
        ]
        .into(),
        ..Rows::default()
    }))
}

/// `vic`'s first birth, its lease run out a minute ago.
fn first(version: i64) -> Instance {
    instance(version, "vic", FIRST, FIRST_AT, 60)
}

/// `vic` born again: another birth, with a lease of its own (`expired`:
/// already run out too, so `r`'s rules pass on it as well).
fn again(version: i64, expired: bool) -> Instance {
    let expired_for = if expired { 1 } else { -1_795 };
    instance(version, "vic", AGAIN, AGAIN_AT, expired_for)
}

fn app(version: i64) -> App {
    let mut app = App::new(config(), CAPTURE);
    app.set_stackless("/opt/bin/stackless".into());
    app.handle(Event::Snapshot(snapshot(version, first(version))), CAPTURE);
    app
}

/// The refusal every action gives for `vic` born again, on `version`.
fn refusal(version: i64) -> String {
    let (asked, now) = if version >= 7 {
        (FIRST.to_owned(), AGAIN.to_owned())
    } else {
        (
            format!("created at {FIRST_AT}"),
            format!("created at {AGAIN_AT}"),
        )
    };
    format!(
        "refused: the birth asked about ({asked}) is not the instance's ({now}): it was born again, or another store was read"
    )
}

/// Every Activity line about `name`: `(kind, detail)`, oldest first.
fn lines_of(app: &App, name: &str) -> Vec<(ActivityKind, String)> {
    app.activity()
        .entries()
        .iter()
        .map(|l| &l.entry)
        .filter(|a| a.instance == name)
        .map(|a| (a.kind, a.detail.clone()))
        .collect()
}

fn type_command(app: &mut App, text: &str) {
    assert_eq!(press(app, KeyCode::Char(':')), None);
    for c in text.chars() {
        assert_eq!(press(app, KeyCode::Char(c)), None);
    }
    assert_eq!(press(app, KeyCode::Enter), None);
}

/// Born again between the question and `y`.
fn born_again(app: &mut App, version: i64, expired: bool) {
    app.handle(
        Event::Snapshot(snapshot(version, again(version, expired))),
        CAPTURE,
    );
}

#[test]
fn d_answered_after_a_rebirth_is_refused_and_hands_nothing_on() {
    for version in [14, 5] {
        let mut app = app(version);
        select(&mut app, "vic");
        assert_eq!(press(&mut app, KeyCode::Char('d')), None);
        assert_eq!(app.confirming().map(|i| i.name.as_str()), Some("vic"));
        born_again(&mut app, version, false);
        assert_eq!(press(&mut app, KeyCode::Char('y')), None, "v{version}");
        assert!(app.confirming().is_none());
        assert_eq!(
            lines_of(&app, "vic").last(),
            Some(&(ActivityKind::Refused, refusal(version))),
            "v{version}"
        );
    }
}

#[test]
fn r_answered_after_a_rebirth_that_also_expired_is_refused() {
    for version in [14, 5] {
        let mut app = app(version);
        select(&mut app, "vic");
        assert_eq!(press(&mut app, KeyCode::Char('r')), None);
        assert_eq!(app.confirming_reap().map(|i| i.name.as_str()), Some("vic"));
        born_again(&mut app, version, true);
        assert_eq!(press(&mut app, KeyCode::Char('y')), None, "v{version}");
        assert!(app.confirming_reap().is_none());
        assert_eq!(
            lines_of(&app, "vic").last(),
            Some(&(ActivityKind::Refused, refusal(version))),
            "v{version}"
        );
    }
}

#[test]
fn the_same_birth_goes_ahead_carrying_the_birth_asked_about() {
    for version in [14, 5] {
        let mut app = app(version);
        select(&mut app, "vic");
        press(&mut app, KeyCode::Char('d'));
        // The same birth, its lease renewed meanwhile: still that birth.
        let mut renewed = first(version);
        renewed.lease = Some(Lease {
            duration_secs: 1_800,
            expires_at: CAPTURE + 1_800,
        });
        app.handle(Event::Snapshot(snapshot(version, renewed.clone())), CAPTURE);
        match press(&mut app, KeyCode::Char('y')) {
            Some(Effect::TearDown { instance, .. }) => assert_eq!(instance, renewed),
            other => panic!("v{version}: {other:?}"),
        }
    }
}

#[test]
fn bulk_d_and_r_refuse_the_marked_name_born_again_and_act_on_the_rest() {
    for (version, key) in [(14, 'd'), (14, 'r'), (5, 'd'), (5, 'r')] {
        let mut app = app(version);
        for name in ["alpha", "vic"] {
            select(&mut app, name);
            press(&mut app, KeyCode::Char(' '));
        }
        assert_eq!(press(&mut app, KeyCode::Char(key)), None);
        assert!(app.confirming_bulk().is_some());
        born_again(&mut app, version, true);
        let effect = press(&mut app, KeyCode::Char('y'));
        let Some(Effect::Bulk { jobs, queued, .. }) = effect else {
            panic!("v{version} {key}: {effect:?}");
        };
        let names: Vec<&str> = jobs.iter().map(|(i, _)| i.name.as_str()).collect();
        assert_eq!(
            (names, queued.len()),
            (vec!["alpha"], 0),
            "v{version} {key}"
        );
        assert_eq!(
            lines_of(&app, "vic").last(),
            Some(&(ActivityKind::Refused, refusal(version))),
            "v{version} {key}"
        );
    }
}

#[test]
fn down_and_reap_commands_answered_after_a_rebirth_are_refused() {
    for (version, verb) in [(14, "down"), (14, "reap"), (5, "down"), (5, "reap")] {
        // One name: the single key's question.
        let mut app = app(version);
        type_command(&mut app, &format!("{verb} vic"));
        assert!(
            app.confirming().is_some() || app.confirming_reap().is_some(),
            "v{version} {verb}: not asked"
        );
        born_again(&mut app, version, true);
        assert_eq!(
            press(&mut app, KeyCode::Char('y')),
            None,
            "v{version} {verb}"
        );
        assert_eq!(
            lines_of(&app, "vic").last(),
            Some(&(ActivityKind::Refused, refusal(version))),
            "v{version} {verb}"
        );
        // Several names: the bulk question.
        let mut app = self::app(version);
        type_command(&mut app, &format!("{verb} vic alpha"));
        assert!(app.confirming_bulk().is_some(), "v{version} {verb}");
        born_again(&mut app, version, true);
        let effect = press(&mut app, KeyCode::Char('y'));
        let Some(Effect::Bulk { jobs, .. }) = effect else {
            panic!("v{version} {verb}: {effect:?}");
        };
        let names: Vec<&str> = jobs.iter().map(|(i, _)| i.name.as_str()).collect();
        assert_eq!(names, ["alpha"], "v{version} {verb}");
        assert_eq!(
            lines_of(&app, "vic").last(),
            Some(&(ActivityKind::Refused, refusal(version))),
            "v{version} {verb}"
        );
    }
}
