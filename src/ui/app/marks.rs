//! Marks and bulk actions: `space` marks the selected instance, Ctrl-A
//! every instance the filter shows, Esc clears them (after the filter); `r`
//! and `d` then act on the marked rows the filter shows after one
//! confirmation (which says how many marked ones the filter hides: those
//! are left alone and stay marked), each instance through the same rules
//! as the single key (refusals listed one by one in Activity), run by the
//! console at most `--reap-concurrency` at once.
//!
//! Marks are names in a sorted set (look-ups `O(log n)`), never positions:
//! a 100k store with 100k marks costs `O(m log n)` per snapshot (marks of
//! names no longer stored are dropped) and per bulk action.

use super::bulk::{BULK_NAMES_SHOWN, Bulk};
use super::{App, Effect, FlashLevel, Focus, LayerKind, Question};
use crate::event::{Activity, ActivityKind, Actor};
use crate::model::birth_check::BirthSeen;
use crate::model::rules;
use crate::model::{Instance, ReapAttempt};
use crate::reaper::Intent;

impl App {
    /// The marked names, sorted.
    #[must_use]
    pub fn marks(&self) -> &std::collections::BTreeSet<String> {
        &self.instances.marks
    }

    /// Whether `name` is marked.
    #[must_use]
    pub fn is_marked(&self, name: &str) -> bool {
        self.instances.marks.contains(name)
    }

    /// The bulk action awaiting `y`/`N`, if its dialog is open.
    #[must_use]
    pub fn confirming_bulk(&self) -> Option<&Bulk> {
        match &self.layers.confirm()?.question {
            Question::Bulk(bulk) => Some(bulk),
            _ => None,
        }
    }

    /// `space`: mark or unmark the selected instance (Instances pane).
    pub(super) fn toggle_mark(&mut self) {
        self.focus = Focus::Instances;
        let Some(name) = self.selected_instance().map(|i| i.name.clone()) else {
            self.set_flash(FlashLevel::Warning, "no instance selected".into());
            return;
        };
        if !self.instances.marks.remove(&name) {
            self.instances.marks.insert(name);
        }
    }

    /// Ctrl-A: mark every instance the filter shows.
    pub(super) fn mark_all(&mut self) {
        self.focus = Focus::Instances;
        let instances = &self.shown.snapshot.instances;
        for &p in &*self.instances.order {
            if let Some(instance) = instances.get(p as usize)
                && !self.instances.marks.contains(&instance.name)
            {
                self.instances.marks.insert(instance.name.clone());
            }
        }
        let text = format!("{} marked", self.instances.marks.len());
        self.set_flash(FlashLevel::Info, text);
    }

    /// Esc with marks: clear them. `false` when there were none.
    pub(super) fn clear_marks(&mut self) -> bool {
        if self.instances.marks.is_empty() {
            return false;
        }
        let count = self.instances.marks.len();
        self.instances.marks.clear();
        self.set_flash(FlashLevel::Info, format!("{count} marks cleared"));
        true
    }

    /// After a new snapshot: drop the marks of names no longer stored.
    pub(super) fn prune_marks(&mut self) {
        if self.instances.marks.is_empty() {
            return;
        }
        let snapshot = &self.shown.snapshot;
        self.instances
            .marks
            .retain(|name| snapshot.instance(name).is_some());
    }

    /// Whether `r`/`d` act on the marks: some are set and no detail view
    /// names its own instance.
    pub(super) fn bulk_applies(&self) -> bool {
        !self.instances.marks.is_empty() && !self.layers.has(LayerKind::Detail)
    }

    /// `r`/`d` with marks: open the one confirmation (write keys on) for
    /// the marked rows the filter shows; the question says how many marked
    /// ones the filter hides (left alone). All hidden: nothing opens, the
    /// footer says so.
    pub(super) fn bulk_key(&mut self, intent: Intent) {
        if let Some(reason) = self.write_keys_off() {
            let reason = reason.into_owned();
            self.refuse("", reason);
            return;
        }
        let instances = &self.shown.snapshot.instances;
        let mut names: Vec<String> = self
            .instances
            .order
            .iter()
            .filter_map(|&p| instances.get(p as usize))
            .filter(|i| self.instances.marks.contains(&i.name))
            .map(|i| i.name.clone())
            .collect();
        names.sort();
        let hidden = self.instances.marks.len() - names.len();
        if names.is_empty() {
            let text = format!(
                "the {hidden} marked instances are all hidden by the filter \"{}\": nothing to act on (Esc clears the filter)",
                crate::model::text::sanitize_short(
                    &self.instances.filter,
                    crate::ui::text::CUT_SHORT
                )
            );
            self.set_flash(FlashLevel::Warning, text);
            return;
        }
        let bulk = self.bulk(intent, names, true, hidden);
        self.ask(Question::Bulk(bulk));
    }

    /// The bulk question's content for `names` (sorted).
    pub(super) fn bulk(
        &self,
        intent: Intent,
        names: Vec<String>,
        marked: bool,
        hidden: usize,
    ) -> Bulk {
        let queued: Vec<String> = if intent == Intent::TearDown {
            names
                .iter()
                .filter(|n| self.queue_behind(n).is_some())
                .cloned()
                .collect()
        } else {
            Vec::new()
        };

        let queues = queued
            .first()
            .and_then(|n| self.settings.teardown.queue_line_for(n));
        let births: Vec<BirthSeen> = names
            .iter()
            .map(|n| {
                self.shown
                    .snapshot
                    .instance(n)
                    .map(BirthSeen::of)
                    .unwrap_or_default()
            })
            .collect();
        let refused = self.bulk_admit(intent, &names, &births).refused;
        // The command line shown is the first name that runs now (not
        // queued, not refused).
        let runs = (intent == Intent::TearDown)
            .then(|| {
                names
                    .iter()
                    .find(|n| !queued.contains(n) && !refused.iter().any(|(r, _)| r == *n))
                    .map(|n| self.settings.teardown.line_for(n))
            })
            .flatten();
        Bulk {
            intent,
            names,
            births,
            marked,
            hidden,
            runs,
            queued,
            queues,
            refused,
        }
    }

    /// The pending operation `d` would queue a teardown of `name` behind,
    /// when it would (a store with controller operations, an instance that
    /// passes [`crate::model::op_rules::queue_down_refusal`]).
    fn queue_behind(&self, name: &str) -> Option<crate::model::Operation> {
        let instance = self.shown.snapshot.instance(name)?;
        self.queue_rule(instance)?.ok().map(|(op, _)| op)
    }

    /// Each of `names` (sorted, `births` the births asked about, same
    /// order) through the operator's rules ([`rules::admit`], the single
    /// key's) on the snapshot shown now: what runs, what is queued behind a
    /// pending operation, and what is refused with the rules' words. The
    /// question runs it when it is built (to name the refused before `y`)
    /// and `y` runs it again.
    fn bulk_admit(&self, intent: Intent, names: &[String], births: &[BirthSeen]) -> BulkAdmits {
        let mut admits = BulkAdmits::default();
        self.with_rules(|cx| {
            for (at, name) in names.iter().enumerate() {
                // A name without its birth is compared as one with none: any
                // instance_id refuses it.
                let target = rules::Asked {
                    name: name.clone(),
                    birth: births.get(at).cloned().unwrap_or_default(),
                };
                let action = match intent {
                    Intent::Reap => rules::Action::Reap(target),
                    // `d` on an instance with a pending operation queues its
                    // teardown behind it.
                    Intent::TearDown if self.queue_behind(name).is_some() => {
                        rules::Action::QueueDown {
                            target,
                            behind: None,
                        }
                    }
                    Intent::TearDown => rules::Action::Down(target),
                };
                match rules::admit(&action, cx).map(|a| a.effect) {
                    Ok(
                        rules::Effect::Reap { instance, attempt }
                        | rules::Effect::TearDown { instance, attempt },
                    ) => admits.jobs.push((instance, attempt)),
                    Ok(rules::Effect::QueueDown { instance, behind }) => {
                        admits.queue.push((instance, behind));
                    }
                    Ok(_) => {}
                    Err(refusal) => admits.refused.push((name.clone(), refusal.words)),
                }
            }
        });
        admits
    }

    /// `y` to a bulk action: each marked instance through the operator's
    /// rules ([`crate::model::rules::admit`], the single key's) on the
    /// snapshot shown now, list each refusal with its reason in Activity
    /// (an operator sees why each one was left), clear the marks and ask
    /// the console to run the rest. The refusals reach the audit trail as
    /// one batch ([`Activity::batch`]: one write, not one per refusal, so a
    /// bulk action on 10,000 marks does not write 10,000 times).
    pub(super) fn confirm_bulk(&mut self, bulk: Bulk) -> Option<Effect> {
        let BulkAdmits {
            jobs,
            queue,
            refused,
        } = self.bulk_admit(bulk.intent, &bulk.names, &bulk.births);
        let refusals: Vec<Activity> = refused
            .into_iter()
            .map(|(name, words)| {
                Activity::new(
                    self.now,
                    Actor::Operator,
                    &name,
                    ActivityKind::Refused,
                    words,
                )
            })
            .collect();
        for (instance, _) in &jobs {
            let name = instance.name.clone();
            self.own_until(&name);
        }
        for (instance, _) in &queue {
            self.own_queued(&instance.name);
        }
        // The marks acted on (refused ones too); hidden ones stay marked.
        for name in &bulk.names {
            self.instances.marks.remove(name);
        }
        let verb = match bulk.intent {
            Intent::Reap => "reap",
            Intent::TearDown => "teardown",
        };
        let refused = refusals.len();
        self.log_bulk_refusals(verb, bulk.names.len(), refusals);
        let mut text = format!("{verb} requested for {} instances", jobs.len());
        if !queue.is_empty() {
            text.push_str(&format!(
                ", {} queued behind pending operations",
                queue.len()
            ));
        }
        if refused > 0 {
            text.push_str(&format!(", {refused} refused (see Activity)"));
        }
        let level = if refused == 0 {
            FlashLevel::Info
        } else {
            FlashLevel::Warning
        };
        self.set_flash(level, text);
        (!jobs.is_empty() || !queue.is_empty()).then_some(Effect::Bulk {
            intent: bulk.intent,
            jobs,
            queued: queue,
        })
    }

    /// Each refusal of a bulk action as its own Activity line, and all of
    /// them as one batch for the audit trail, whose log line reads
    /// `teardown: 2 of 5 marked instances refused (alpha, bravo)`.
    fn log_bulk_refusals(&mut self, verb: &str, marked: usize, refusals: Vec<Activity>) {
        if refusals.is_empty() {
            return;
        }
        let count = refusals.len();
        let mut names = refusals
            .iter()
            .take(BULK_NAMES_SHOWN)
            .map(|a| crate::model::text::sanitize_short(&a.instance, crate::ui::text::CUT_SHORT))
            .collect::<Vec<_>>()
            .join(", ");
        if count > BULK_NAMES_SHOWN {
            names = format!("{names} and {} more", count - BULK_NAMES_SHOWN);
        }
        for activity in &refusals {
            self.show_activity(activity.clone());
        }
        let mut summary = Activity::new(
            self.now,
            Actor::Operator,
            "",
            ActivityKind::Refused,
            format!("{verb}: {count} of {marked} marked instances refused ({names})"),
        );
        summary.batch = refusals;
        self.outbox.push(summary);
    }

    /// Any other key to a bulk action: close it, logging the cancel.
    pub(super) fn cancel_bulk(&mut self, bulk: Bulk) {
        let verb = match bulk.intent {
            Intent::Reap => "reap",
            Intent::TearDown => "teardown",
        };
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            "",
            ActivityKind::Aborted,
            format!(
                "{verb} of {} {}instances cancelled",
                bulk.names.len(),
                if bulk.marked { "marked " } else { "" }
            ),
        ));
    }
}

/// What a bulk action's names come to under the operator's rules
/// ([`App::bulk_admit`]).
#[derive(Default)]
struct BulkAdmits {
    /// The reaps or teardowns to run now, each with the reap attempt it
    /// was admitted on.
    jobs: Vec<(Instance, Option<ReapAttempt>)>,
    /// The teardowns queued behind a pending operation (its id).
    queue: Vec<(Instance, String)>,
    /// The refused names, each with the rules' words.
    refused: Vec<(String, String)>,
}
