//! The note a question adds when its command starts stackless's
//! controller ([`controller_start_note`]).
//!
//! stackless 0.4.0's `up`, `down`, `verify` and `operation cancel` each
//! reach the controller through `Client::control`, which connects to it
//! or spawns it when none runs (stackless-0.4.0 `client/transport.rs`
//! `control` -> `ensure_daemon`, `client/mod.rs:474`). The spawned
//! controller's lease reaper passes at once: it submits a `down` for every
//! active instance whose lease ran out with no pending operation, no live
//! lock holder and no backoff left (stackless-daemon-0.4.0 `reaper.rs`
//! `plan`, called by the controller's `reap`, stackless-0.4.0
//! `controller.rs:427`). So a renew can start the reaper that downs the
//! instance it renews in the same second.

use super::Context;
use crate::model::Status;
use crate::model::text::sanitize_short;

/// How many names the note lists before `and N more`.
pub const NOTE_NAMES_SHOWN: usize = 3;

/// How many characters of a name the note quotes.
const NOTE_NAME_CUT: usize = 40;

/// Whether a command line runs a stackless 0.4.0 subcommand that reaches
/// the controller (`up`, `down`, `verify`, `operation`), so starts it when
/// none runs: `argv[0]` is stackless (the `--stackless` program
/// `stackless`, as configured, or a file named `stackless`) and `argv[1]`
/// the subcommand (`stackless down {name} --json`, the default
/// `--down-cmd`). A teardown command of the operator's own (`--down-cmd
/// './teardown.sh down {name}'`) is no such command, whatever its
/// arguments.
#[must_use]
pub fn argv_starts_controller(argv: &[String], stackless: &str) -> bool {
    let program = argv.first().map(String::as_str);
    let is_stackless = program.is_some_and(|p| {
        p == stackless || std::path::Path::new(p).file_name() == Some("stackless".as_ref())
    });
    is_stackless
        && matches!(
            argv.get(1).map(String::as_str),
            Some("up" | "down" | "verify" | "operation")
        )
}

/// What a question whose command starts the controller must say when no
/// controller runs (`cx.settings.controller_stopped`) on a stackless 0.4.0
/// store (schema 14, which has the controller's operations): `This starts
/// stackless's controller; its lease reaper then reaps the expired: alpha,
/// hotel, india (india's renew races the reaper).` The names are the
/// instances the lease reaper's first pass would down at `cx.now` (the
/// module's rule), sorted, the first [`NOTE_NAMES_SHOWN`] then `and N
/// more`; `renewed` names the instances the command renews (`verb`:
/// `renew`, `verify`), and each of those among the expired is said to race
/// the reaper. With none expired: `This starts stackless's controller (none
/// runs now); its lease reaper finds nothing expired now.` `None` when a
/// controller runs, or it is not known that none does, or the store is
/// older than 0.4.0's. Every question (key, bulk, `:` line) and the
/// agent's reply go through here.
#[must_use]
pub fn controller_start_note(cx: &Context<'_>, verb: &str, renewed: &[&str]) -> Option<String> {
    if !cx.settings.controller_stopped || !cx.snapshot.generation.has_operations() {
        return None;
    }
    let expired = lease_reaper_plan(cx);
    if expired.is_empty() {
        return Some(
            "This starts stackless's controller (none runs now); its lease reaper finds nothing expired now."
                .to_owned(),
        );
    }
    let cut = |n: &str| sanitize_short(n, NOTE_NAME_CUT);
    let mut list = expired
        .iter()
        .take(NOTE_NAMES_SHOWN)
        .map(|n| cut(n))
        .collect::<Vec<_>>()
        .join(", ");
    if expired.len() > NOTE_NAMES_SHOWN {
        list = format!("{list} and {} more", expired.len() - NOTE_NAMES_SHOWN);
    }
    let mut text = format!(
        "This starts stackless's controller; its lease reaper then reaps the expired: {list}"
    );
    let racing: Vec<String> = renewed
        .iter()
        .filter(|n| expired.contains(n))
        .map(|n| cut(n))
        .collect();
    match racing.as_slice() {
        [] => {}
        [one] => text.push_str(&format!(" ({one}'s {verb} races the reaper)")),
        [first, rest @ ..] => {
            let mut names = first.clone();
            for (i, n) in rest.iter().enumerate() {
                names.push_str(if i + 1 == rest.len() { " and " } else { ", " });
                names.push_str(n);
            }
            text.push_str(&format!(" ({names}: each {verb} races the reaper)"));
        }
    }
    text.push('.');
    Some(text)
}

/// The instances the controller's lease reaper would down at `cx.now`, by
/// name: active, lease run out, no pending operation, no live lock
/// holder, no backoff left (stackless-daemon-0.4.0 `reaper.rs` `plan`).
fn lease_reaper_plan<'s>(cx: &Context<'s>) -> Vec<&'s str> {
    let snapshot = cx.snapshot;
    let mut names: Vec<&str> = snapshot
        .instances
        .iter()
        .filter(|i| i.status == Status::Active && i.lease.is_some_and(|l| l.expired(cx.now)))
        .filter(|i| snapshot.pending_operation(&i.name).is_none())
        .filter(|i| {
            !snapshot
                .lock_liveness(&i.name)
                .is_some_and(crate::model::Liveness::held)
        })
        .filter(|i| {
            snapshot
                .reap_attempt(&i.name)
                .is_none_or(|a| a.next_retry_at <= cx.now)
        })
        .map(|i| i.name.as_str())
        .collect();
    names.sort_unstable();
    names
}
