//! The table against itself, and against the footer, the help overlay
//! and the handler.

use super::Context::{Confirm, Detail, Filter, FullText, Help, LogSearch, Logs, Operation, Panes};
use super::*;

/// A press that `key` matches.
fn example(key: Key) -> Input {
    match key {
        Key::Code(code, Mods::Ctrl) => Input::Key(code, KeyModifiers::CONTROL),
        Key::Code(code, _) => Input::Key(code, KeyModifiers::NONE),
        Key::Text => Input::Key(KeyCode::Char('x'), KeyModifiers::NONE),
        Key::Other => Input::Key(KeyCode::F(12), KeyModifiers::NONE),
        Key::Click => Input::Click(Position::default()),
        Key::WheelUp => Input::WheelUp(Position::default()),
        Key::WheelDown => Input::WheelDown(Position::default()),
    }
}

/// Every binding resolves to its own action: none is shadowed by an
/// earlier one.
#[test]
fn every_binding_resolves_to_its_action() {
    for entry in ENTRIES {
        for bind in entry.binds {
            for &context in bind.contexts {
                for &key in bind.keys {
                    assert!(key.matches(example(key)), "{key:?}");
                    assert_eq!(
                        resolve(context, example(key)),
                        Some(bind.action),
                        "{} {key:?} in {context:?}",
                        entry.keys
                    );
                }
            }
        }
    }
}

#[test]
fn footer_slots_are_unique_and_labels_are_reachable() {
    for context in [FullText, LogSearch, Logs, Filter, Detail, Panes, Confirm] {
        let labels = footer(context);
        assert!(!labels.is_empty(), "{context:?}");
        let slots: Vec<u8> = labels.iter().map(|(_, l)| l.slot).collect();
        let mut unique = slots.clone();
        unique.dedup();
        assert_eq!(slots, unique, "{context:?}");
        // A footer only shows keys that do something in its context.
        for (entry, label) in labels {
            assert!(
                entry.binds.iter().any(|b| b.contexts.contains(&context)),
                "{} in {context:?}",
                label.key
            );
        }
    }
    for entry in ENTRIES {
        for label in entry.footer {
            assert!(matches!(
                label.context,
                FullText | LogSearch | Logs | Filter | Detail | Panes | Confirm
            ));
        }
    }
}

#[test]
fn modifiers() {
    let q = |mods| Input::Key(KeyCode::Char('q'), mods);
    assert_eq!(resolve(Panes, q(KeyModifiers::NONE)), Some(Action::Quit));
    assert_eq!(resolve(Panes, q(KeyModifiers::ALT)), None);
    assert_eq!(resolve(Help, q(KeyModifiers::ALT)), Some(Action::Quit));
    assert_eq!(resolve(Help, q(KeyModifiers::CONTROL)), None);
    let shift_g = Input::Key(KeyCode::Char('G'), KeyModifiers::SHIFT);
    assert_eq!(resolve(Panes, shift_g), Some(Action::Last));
    let ctrl_c = Input::Key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    for context in [Confirm, Help, FullText, Filter, Detail, Panes] {
        assert_eq!(resolve(context, ctrl_c), Some(Action::Quit));
    }
    let tab = Input::Key(KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(resolve(Confirm, tab), Some(Action::CancelTearDown));
    assert_eq!(resolve(Confirm, Input::Click(Position::default())), None);
    let ctrl_x = Input::Key(KeyCode::Char('x'), KeyModifiers::CONTROL);
    assert_eq!(resolve(Filter, ctrl_x), None);
    assert_eq!(write_keys(false), "r/d");
    assert_eq!(write_keys(true), "r/d/c/L/v");
    // Renew and verify: `L` (lease), `v`; nowhere else, and neither is
    // taken by another action in the panes or the detail view.
    let key = |c| Input::Key(KeyCode::Char(c), KeyModifiers::NONE);
    for context in [Panes, Detail] {
        assert_eq!(resolve(context, key('L')), Some(Action::RenewLease));
        assert_eq!(resolve(context, key('v')), Some(Action::Verify));
    }
    assert_eq!(resolve(Operation, key('L')), None);
    assert_eq!(resolve(Confirm, key('v')), Some(Action::CancelTearDown));
    assert!(Action::RenewLease.writes() && Action::Verify.writes());
    assert!(Action::RenewLease.needs_operations() && Action::Verify.needs_operations());
    let c = Input::Key(KeyCode::Char('c'), KeyModifiers::NONE);
    assert_eq!(resolve(Panes, c), Some(Action::CancelOperation));
    assert_eq!(resolve(Operation, c), Some(Action::CancelOperation));
    assert_eq!(resolve(Confirm, c), Some(Action::CancelTearDown));
}

mod against_the_ui;
