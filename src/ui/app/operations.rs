//! The controller's operations (stackless 0.4.0): the Operations pane's
//! selection and its overlay (Enter), `c` (cancel an operation, confirmed
//! with `y`) and the changes observed between two snapshots
//! ([`crate::model::observe`]), shown in Activity.

use std::sync::Arc;

use super::{App, Effect, FlashLevel, Focus, Layer, LayerKind, Question};
use crate::event::{Activity, ActivityKind, Actor};
use crate::model::observe::OwnDown;
use crate::model::op_rules::{cancel_refusal, short_id};
use crate::model::{Instance, Operation, Snapshot, observe};

/// How long after one of this console's teardowns ends a change observed on
/// that instance still counts as its own (the snapshot showing the
/// tombstone may arrive after the teardown's result), in seconds.
pub(super) const OWN_GRACE_SECS: i64 = 120;

/// How the line begins that amends a teardown of this console's killed at
/// its deadline, once the store shows it finished anyway
/// ([`App::finished_after_deadline`]): the Activity title counts it as
/// torn down and takes its failure back.
pub(crate) const AFTER_ALL: &str = "torn down after all: ";

impl App {
    /// The operation selected in the Operations pane, if any.
    #[must_use]
    pub fn selected_operation(&self) -> Option<&Operation> {
        self.shown.snapshot.operations.get(self.operations.index)
    }

    /// The row selected in the Operations pane (an index into
    /// `snapshot().operations`).
    #[must_use]
    pub fn operation_index(&self) -> usize {
        self.operations.index
    }

    /// The operation overlay: the id asked for, and the operation with that
    /// id in the current snapshot (`None` once it is no longer shown).
    #[must_use]
    pub fn operation_open(&self) -> Option<(&str, Option<&Operation>)> {
        let id = self.layers.operation()?;
        Some((
            id,
            self.shown.snapshot.operations.iter().find(|op| op.id == id),
        ))
    }

    /// The operation awaiting `y`/`N` confirmation of a cancel.
    #[must_use]
    pub fn confirming_cancel(&self) -> Option<&Operation> {
        match &self.layers.confirm()?.question {
            Question::Cancel(op) => Some(op),
            _ => None,
        }
    }

    /// The instance awaiting `y`/`N` to queue a teardown behind its
    /// pending operation (`d` on a schema-14 store), with the operation it
    /// waits behind and the others pending in words (` and 1 queued
    /// verify`).
    #[must_use]
    pub fn confirming_queue_down(&self) -> Option<(&Instance, &Operation, &str)> {
        match &self.layers.confirm()?.question {
            Question::QueueDown(instance, op, others) => Some((instance, &**op, others)),
            _ => None,
        }
    }

    /// Enter on the Operations pane: open the overlay of the selected one,
    /// and ask for its events.
    pub(super) fn open_operation(&mut self) -> Option<Effect> {
        match self.selected_operation().map(|op| op.id.clone()) {
            Some(id) => {
                self.layers
                    .open(Layer::Operation(super::OperationView::new(id)));
                self.refresh_operation_events()
            }
            None => {
                self.set_flash(FlashLevel::Warning, "no operation selected".into());
                None
            }
        }
    }

    /// Move the Operations pane's selection into the new snapshot from
    /// `before`, the operations shown until now
    /// ([`crate::model::operation::reselect`]: on the newest finished row
    /// it stays on the newest, else it follows its operation by id).
    pub(super) fn reselect_operation(&mut self, before: &[Operation]) {
        let ops = &self.shown.snapshot.operations;
        self.operations.index =
            crate::model::operation::reselect(before, self.operations.index, ops);
        self.operations.key = ops.get(self.operations.index).map(|op| op.id.clone());
    }

    /// The operation `c` acts on: the overlay's, the selected one in the
    /// Operations pane, else the pending one of the instance `r`/`d` would
    /// act on. `Err((instance, why))` when there is none.
    fn cancel_target(&self) -> Result<Operation, (String, String)> {
        if let Some((id, op)) = self.operation_open() {
            return op.cloned().ok_or_else(|| {
                (
                    String::new(),
                    format!("operation {} is no longer shown", short_id(id)),
                )
            });
        }
        if !self.layers.has(LayerKind::Detail) && self.focus == Focus::Operations {
            return self
                .selected_operation()
                .cloned()
                .ok_or_else(|| (String::new(), "no operation selected".into()));
        }
        let instance = self.target()?;
        self.shown
            .snapshot
            .pending_operation(&instance.name)
            .cloned()
            .ok_or_else(|| {
                (
                    instance.name.clone(),
                    format!("no queued or running operation on {}", instance.name),
                )
            })
    }

    /// `c`: the cancel rules, then the `y`/`N` question.
    pub(super) fn cancel_operation_key(&mut self) {
        if !self.cancel_gate() {
            return;
        }
        match self.cancel_target() {
            Err((name, why)) => self.refuse(&name, why),
            Ok(op) => self.cancel_operation_for(op),
        }
    }

    /// `c`'s gate ([`crate::model::rules::cancel_gate`]): the write keys
    /// on and a store with controller operations; `false` once refused.
    pub(super) fn cancel_gate(&mut self) -> bool {
        match self.with_rules(crate::model::rules::cancel_gate) {
            Ok(()) => true,
            Err(refusal) => {
                self.show_refusal(refusal);
                false
            }
        }
    }

    /// `c`'s rule for `op`: the question, or the refusal.
    pub(super) fn cancel_operation_for(&mut self, op: Operation) {
        match cancel_refusal(&op) {
            Some(why) => self.refuse(&op.instance, why),
            None => self.ask(Question::Cancel(op)),
        }
    }

    /// `y` to the cancel question: the operator's rules
    /// ([`crate::model::rules::admit`]) on the snapshot shown now.
    pub(super) fn confirm_cancel_operation(&mut self, asked: Operation) -> Option<Effect> {
        self.admit_key(&crate::model::rules::Action::Cancel(asked.id))
    }

    /// Any other key to the cancel question: close it, logging it.
    pub(super) fn refuse_cancel_operation(&mut self, op: Operation) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &op.instance,
            ActivityKind::Aborted,
            format!("cancel of {} not confirmed", op.verb),
        ));
    }

    /// Remember what this console's own teardowns are doing, so their
    /// effects are not reported as observed, and which controller
    /// operation the operator's queued teardown is ([`crate::model::observe::OwnDowns`]).
    pub(super) fn note_own(&mut self, activity: &Activity) {
        if !matches!(activity.actor, Actor::Reaper | Actor::Operator)
            || activity.instance.is_empty()
        {
            return;
        }
        match activity.kind {
            ActivityKind::Started => {
                self.ours.names.insert(activity.instance.clone(), i64::MAX);
                self.ours.downs.started(
                    &activity.instance,
                    OwnDown::Ran(activity.actor),
                    activity.at,
                );
            }
            ActivityKind::Queued => {
                if let Some(op) = &activity.operation {
                    self.ours.downs.queued_as(&activity.instance, &op.id);
                }
            }
            ActivityKind::Reaped
            | ActivityKind::TornDown
            | ActivityKind::Failed
            | ActivityKind::Aborted
            | ActivityKind::Collected
            | ActivityKind::Error => {
                if let Some(until) = self.ours.names.get_mut(&activity.instance) {
                    *until = self.now.saturating_add(OWN_GRACE_SECS);
                }
                self.ours.downs.ended(&activity.instance, activity.at);
            }
            ActivityKind::Renewed | ActivityKind::RenewFailed => {
                self.ours
                    .downs
                    .ended_verb(&activity.instance, "up", activity.at);
            }
            ActivityKind::Verified | ActivityKind::VerifyFailed => {
                self.ours
                    .downs
                    .ended_verb(&activity.instance, "verify", activity.at);
            }
            // A renew or verify that ran nothing.
            ActivityKind::WouldRun | ActivityKind::Refused => {
                for verb in ["up", "verify"] {
                    self.ours
                        .downs
                        .ended_verb(&activity.instance, verb, activity.at);
                }
            }
            _ => {}
        }
    }

    /// The operator's renews and verifies of `requests` start now: the
    /// operation each submits (stackless 0.4.0: an `up`, a `verify`) is
    /// the operator's, said once, by the operator's own line
    /// ([`crate::model::observe::OwnDowns::started_verb`]).
    pub(super) fn own_verbs(&mut self, requests: &[crate::model::verbs::VerbRequest]) {
        for request in requests {
            self.ours.downs.started_verb(
                &request.instance.name,
                request.verb.operation_verb(),
                self.now,
            );
        }
    }

    /// The operator's `y` to queue a teardown of `name`: the `down` it
    /// submits is the operator's ([`OwnDown::Queued`]).
    pub(super) fn own_queued(&mut self, name: &str) {
        self.ours.downs.started(name, OwnDown::Queued, self.now);
    }

    /// After the snapshot shown replaced `previous`: log what changed that
    /// this console did not do. Nothing for the first snapshot (no flood:
    /// it replaces none), nor for a re-probe of the same rows. The outcome
    /// of a `down` the operator queued is the operator's line; one this
    /// console ran and waited for is not said again; any other is the
    /// controller's ([`crate::model::observe::OwnDowns::claim`]). Whether a line was logged.
    pub(super) fn observe(&mut self, previous: &Arc<Snapshot>) -> bool {
        if Arc::ptr_eq(&self.shown.snapshot.rows, &previous.rows) {
            return false;
        }
        let mut logged = false;
        let now = self.now;
        self.ours.names.retain(|_, until| *until > now);
        let next = Arc::clone(&self.shown.snapshot);
        // Claimed as each row shows up, pending or not; the instances
        // whose teardown the operator queued: their tombstone is that
        // teardown, said once, as its outcome.
        let queued: std::collections::HashSet<&str> = next
            .rows
            .operations
            .iter()
            .filter(|op| self.ours.downs.claim(op) == Some(OwnDown::Queued))
            .map(|op| op.instance.as_str())
            .collect();
        for change in observe::changes(&previous.rows, &next.rows) {
            let line = match &change {
                observe::Observed::Tombstoned { name } => {
                    if let Some(amended) = self.finished_after_deadline(name) {
                        self.log_local(amended);
                        logged = true;
                        continue;
                    }
                    let own = self.ours.names.contains_key(name) || queued.contains(name.as_str());
                    (!own).then(|| change.activity(now))
                }
                observe::Observed::Finished(op) | observe::Observed::LeaseReaped(op) => {
                    match self.ours.downs.claim(op) {
                        Some(OwnDown::Ran(_)) => None,
                        Some(OwnDown::Queued) => change.as_operators(now),
                        None => Some(change.activity(now)),
                    }
                }
                observe::Observed::Appeared { .. } => Some(change.activity(now)),
            };
            if let Some(line) = line {
                self.log_activity(line);
                logged = true;
            }
        }
        logged
    }

    /// `name` was seen tombstoned: when this console's last teardown of it
    /// failed because `down` was killed at its deadline, the teardown went
    /// on and finished (stackless 0.4.0's controller runs a `down` to its
    /// end when the CLI is killed; stackless-core-0.4.0
    /// src/engine/run.rs:643-647 tombstones, then clears the reap failure):
    /// the line saying so, torn down after all ([`AFTER_ALL`]), for the
    /// Activity log and the audit trail. `None` otherwise (a teardown an
    /// earlier console ran is left as it was recorded).
    fn finished_after_deadline(&self, name: &str) -> Option<Activity> {
        let last = self.last_teardown(name)?;
        if last.kind != ActivityKind::Failed
            || last.restored
            || !crate::model::envelope::is_deadline_kill(&last.envelope)
        {
            return None;
        }
        let kind = match last.actor {
            Actor::Reaper => ActivityKind::Reaped,
            _ => ActivityKind::TornDown,
        };
        Some(Activity::new(
            self.now,
            last.actor,
            name,
            kind,
            format!(
                "{AFTER_ALL}down was killed at this console's deadline ({}), then the store \
                 showed the instance tombstoned: the controller finished the teardown",
                crate::model::text::sanitize_short(&last.envelope, crate::ui::text::CUT_SHORT)
            ),
        ))
    }
}
