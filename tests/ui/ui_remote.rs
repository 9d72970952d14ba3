//! `serve --stdio`'s commands (`App::remote`, docs/protocol.md) pass
//! exactly the rules of the keys they mirror: for every instance of the
//! real 0.4.0 store, `r` and `d` on the selected row and the same action
//! asked for by name either both ask (and the command's `y` is given) or
//! both refuse in the same words.

use std::sync::Arc;

use crate::common::CAPTURE;
use crate::common::ui::{fixture_snapshot, press, select};
use crossterm::event::KeyCode;
use stackless_tui::event::{ActivityKind, Event};
use stackless_tui::model::rules::{Action, Asked, InFlight};
use stackless_tui::ui::{App, AppConfig, Effect};

fn app(write_keys: Result<(), String>) -> App {
    let mut app = App::new(
        AppConfig {
            store_label: "/srv/state.db".into(),
            reaper: stackless_tui::ui::ReaperMode::Every {
                tick: std::time::Duration::from_secs(1),
                dry_run: false,
                always: false,
            },
            helper: stackless_tui::ui::HelperMode::None,
            write_keys,
            host: None,
            no_color: false,
        },
        CAPTURE,
    );
    app.handle(
        Event::Snapshot(Arc::new(fixture_snapshot("real-0.4.0-v14.db"))),
        CAPTURE,
    );
    app
}

fn named(app: &App, name: &str) -> Asked {
    let birth = app
        .snapshot()
        .instance(name)
        .and_then(|i| i.birth.as_ref())
        .map(|b| b.instance_id().to_owned());
    Asked::by_id(name.into(), birth)
}

/// What the key did: `Ok(())` its question opened, `Err(words)` refused.
fn key_outcome(app: &mut App, name: &str, key: char) -> Result<(), String> {
    select(app, name);
    let before = app.activity().entries().len();
    press(app, KeyCode::Char(key));
    if app.confirming_reap().is_some()
        || app.confirming().is_some()
        || app.confirming_queue_down().is_some()
    {
        return Ok(());
    }
    let entries = app.activity().entries();
    assert!(
        entries.len() > before,
        "{key} on {name}: neither asked nor refused"
    );
    let last = &entries[entries.len() - 1].entry;
    assert_eq!(last.kind, ActivityKind::Refused);
    Err(last.detail.clone())
}

#[test]
fn reap_and_down_by_name_pass_the_keys_rules_for_every_instance() {
    let names: Vec<String> = app(Ok(()))
        .snapshot()
        .instances
        .iter()
        .map(|i| i.name.clone())
        .collect();
    assert_eq!(names.len(), 8);
    let mut asked = 0;
    for name in &names {
        for key in ['r', 'd'] {
            let by_key = key_outcome(&mut app(Ok(())), name, key);
            let mut remote = app(Ok(()));
            let target = named(&remote, name);
            let action = if key == 'r' {
                Action::Reap(target)
            } else {
                Action::Down(target)
            };
            let by_name = remote.remote(&action, &InFlight::default(), CAPTURE);
            match (&by_key, &by_name) {
                (
                    Ok(()),
                    Ok((
                        _,
                        Some(Effect::Reap { instance, .. } | Effect::TearDown { instance, .. }),
                    )),
                ) => {
                    assert_eq!(&instance.name, name);
                    asked += 1;
                }
                (Err(words), Err(why)) => assert_eq!(words, why, "{key} on {name}"),
                // `d` on a pending operation asks to queue; by name that
                // is `queue_down`, and `down` says so.
                (Ok(()), Err(why)) if key == 'd' => {
                    assert!(
                        why.ends_with("ask again to queue a teardown behind it (`d`, or the command `queue_down`)"),
                        "{why}"
                    );
                }
                other => panic!("{key} on {name}: key and command disagree: {other:?}"),
            }
        }
    }
    assert!(
        asked >= 2,
        "only {asked} actions were taken: the fixture tests nothing"
    );
}

#[test]
fn another_birth_read_only_and_unknown_names_are_refused_in_words() {
    let mut app = app(Ok(()));
    let name = app.snapshot().instances[0].name.clone();
    let stale = Asked::by_id(name.clone(), Some("0".repeat(32)));
    let why = app
        .remote(&Action::Down(stale), &InFlight::default(), CAPTURE)
        .expect_err("refused");
    assert!(why.starts_with("refused: the birth asked about (00000000000000000000000000000000) is not the instance's ("), "{why}");
    assert_eq!(
        app.remote(
            &Action::Reap(Asked::by_id("nobody-here".into(), None)),
            &InFlight::default(),
            CAPTURE
        ),
        Err("refused: no such instance in the store".into())
    );
    let mut read_only = self::app(Err(
        "the store is open read-only (--read-only): r, d, L and v are off".into(),
    ));
    let target = named(&read_only, &name);
    assert_eq!(
        read_only.remote(&Action::Down(target), &InFlight::default(), CAPTURE),
        Err("the store is open read-only (--read-only): r, d, L and v are off".into())
    );
    // Each refusal is logged as the key's is (and kept for the audit).
    assert_eq!(read_only.drain_outbox().len(), 1);
    let mut paused = self::app(Ok(()));
    assert!(matches!(
        paused.remote(&Action::Pause, &InFlight::default(), CAPTURE),
        Ok((_, Some(Effect::PauseReaper(true))))
    ));
    assert_eq!(
        paused.remote(&Action::Pause, &InFlight::default(), CAPTURE),
        Ok(("the reaper is already paused".into(), None))
    );
    assert_eq!(
        paused.remote(&Action::Pass, &InFlight::default(), CAPTURE),
        Err("the reaper is paused: P resumes it (and runs a pass)".into())
    );
}

/// What a path reached: the words and what is carried out, or the
/// refusal's words.
type Outcome = Result<(String, Option<Effect>), String>;

/// The key path: `keys` pressed on the selected row, then `y` to the
/// question they opened (if one opened); the flash and the effect, or the
/// refusal's words (the last refusal logged, else the flash).
fn by_keys(app: &mut App, name: Option<&str>, keys: &[KeyCode]) -> Outcome {
    if let Some(name) = name {
        select(app, name);
    }
    let before = app.activity().entries().len();
    let mut effect = None;
    for &code in keys {
        // A refused key opens nothing the next key would answer.
        if app.activity().entries().len() > before {
            break;
        }
        effect = press(app, code);
    }
    if app.confirming_reap().is_some()
        || app.confirming().is_some()
        || app.confirming_queue_down().is_some()
        || app.confirming_cancel().is_some()
        || app.confirming_verbs().is_some()
    {
        effect = press(app, KeyCode::Char('y'));
    }
    let flash = app.flash().map(|f| f.text.clone()).unwrap_or_default();
    if effect.is_some() {
        return Ok((flash, effect));
    }
    let entries = app.activity().entries();
    Err(entries
        .iter()
        .skip(before)
        .rev()
        .find(|e| e.entry.kind == ActivityKind::Refused)
        .map_or(flash, |e| e.entry.detail.clone()))
}

/// Every operator action through the key path (its key, then `y`) and
/// through the agent's path (`App::remote`, the protocol's command by
/// name) on the same snapshot, write keys on and off: the same admit or
/// refuse, in the same words, with the same effect.
#[test]
fn every_action_by_key_and_by_name_reaches_the_same_rule() {
    let (mut admitted, mut refused) = (0, 0);
    for write_keys in [
        Ok(()),
        Err("the store is open read-only (--read-only): r, d, L and v are off".to_owned()),
    ] {
        let fresh = || app(write_keys.clone());
        let probe = fresh();
        let names: Vec<String> = probe
            .snapshot()
            .instances
            .iter()
            .map(|i| i.name.clone())
            .collect();
        let mut walks: Vec<(Option<String>, Vec<KeyCode>, Action)> = Vec::new();
        for name in &names {
            let target = named(&probe, name);
            let mut keyed = fresh();
            select(&mut keyed, name);
            press(&mut keyed, KeyCode::Char('d'));
            // `d` on an instance with a pending operation asks to queue
            // behind it: by name, that is `queue_down`.
            let down = if keyed.confirming_queue_down().is_some() {
                Action::QueueDown {
                    target: target.clone(),
                    behind: None,
                }
            } else {
                Action::Down(target.clone())
            };
            let one = |c: char| vec![KeyCode::Char(c)];
            walks.push((Some(name.clone()), one('r'), Action::Reap(target.clone())));
            walks.push((Some(name.clone()), one('d'), down));
            walks.push((Some(name.clone()), one('v'), Action::Verify(target.clone())));
            walks.push((
                Some(name.clone()),
                vec![KeyCode::Char('L'), KeyCode::Enter],
                Action::Renew(target.clone(), None),
            ));
            if let Some(op) = probe.snapshot().pending_operation(name) {
                walks.push((Some(name.clone()), one('c'), Action::Cancel(op.id.clone())));
            }
        }
        walks.push((None, vec![KeyCode::Char('R')], Action::Pass));
        walks.push((None, vec![KeyCode::Char('P')], Action::Pause));
        for (name, keys, action) in walks {
            let key = by_keys(&mut fresh(), name.as_deref(), &keys);
            let agent = fresh().remote(&action, &InFlight::default(), CAPTURE);
            assert_eq!(key, agent, "{action:?} by {keys:?}");
            match agent {
                Ok(_) => admitted += 1,
                Err(_) => refused += 1,
            }
        }
    }
    // Both outcomes are compared, not only refusals.
    assert_eq!((admitted, refused), (21, 47), "admitted, refused");
}
