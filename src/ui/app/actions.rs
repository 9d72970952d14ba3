//! What the operator's keys act on and the rules they pass first: the
//! detail view (Enter), reap now (`r`), teardown (`d`), both confirmed
//! with `y`.

use super::{App, Effect, FlashLevel, Focus, Layer, Question};
use crate::event::Request;
use crate::event::{Activity, ActivityKind, Actor};
use crate::model::birth_check::{BirthSeen, birth_refusal};
use crate::model::op_rules::{queue_down_refusal, queue_spot};
use crate::model::services::DetailView;
use crate::model::{Instance, Operation};
use crate::reaper::decision::{may_reap_now, may_tear_down};
use crate::ui::detail::{Detail, DetailText, Loaded};

/// The detail of the Activity line (`aborted`) a reap dialog answered no
/// leaves: `operator golf aborted: reap cancelled`.
pub(super) const REAP_CANCELLED: &str = "reap cancelled";

impl App {
    /// The answer to [`Effect::OpenDetail`]: `Ok(Some(detail))` read,
    /// `Ok(None)` no such instance, `Err(message)` the read failed (e.g.
    /// `StoreError::to_string()`). Ignored when the detail view was closed or
    /// moved to another instance meanwhile. The scroll position and the
    /// payload toggle are kept (a refresh does not jump).
    pub(super) fn show_detail(&mut self, name: &str, result: Result<Option<DetailView>, String>) {
        let now = self.now;
        let proxy_port = self.controller().proxy_port;
        let Some(detail) = self.layers.detail_mut().filter(|d| d.name == name) else {
            return;
        };
        let first = detail.loaded == Loaded::Loading;
        let flash = match result {
            Ok(Some(read)) => {
                detail.loaded = Loaded::Ready(Box::new(DetailText::new(&read, now, proxy_port)));
                None
            }
            Ok(None) => {
                let was_gone = detail.loaded == Loaded::Gone;
                detail.loaded = Loaded::Gone;
                (!was_gone).then(|| {
                    (
                        FlashLevel::Warning,
                        format!("{name} is no longer in the store"),
                    )
                })
            }
            // A failed refresh (a busy store) keeps what was read before,
            // quietly: the header's store banner already says why.
            Err(_) if !first => None,
            Err(message) => {
                let text = format!("cannot read {name}: {message}");
                detail.loaded = Loaded::Failed(message);
                Some((FlashLevel::Error, text))
            }
        };
        if let Some((level, text)) = flash {
            self.set_flash(level, text);
        }
    }

    /// Enter: the detail view of the selected instance (Instances), the
    /// operation overlay (Operations), else the full text of the focused
    /// pane's selected line (Backoffs, Supervisor, Activity).
    pub(super) fn open_detail(&mut self) -> Option<Effect> {
        let name = match self.focus {
            Focus::Instances => self.selected_instance().map(|i| i.name.clone()),
            Focus::Operations => return self.open_operation(),
            Focus::Backoffs | Focus::Supervisor | Focus::Activity => {
                self.open_full_text();
                return None;
            }
        };
        let Some(name) = name else {
            self.set_flash(FlashLevel::Warning, "no instance selected".into());
            return None;
        };
        self.layers.open(Layer::Detail(Detail {
            name: name.clone(),
            loaded: Loaded::Loading,
            scroll: 0,
            cursor: 0,
            payloads: false,
        }));
        Some(Effect::Io(Request::OpenDetail { name }))
    }

    /// The instance `asked` (as a question showed it) on the snapshot
    /// shown now, when it is still the birth asked about
    /// ([`birth_refusal`]): its rows as shown now with the birth asked
    /// about (`instance_id`, `created_at`), which the job re-checks again
    /// right before its command starts. `None` once refused: gone, or
    /// another birth (born again, another store moved over the path or
    /// written over it).
    pub(super) fn asked_now(&mut self, asked: &Instance) -> Option<Instance> {
        let Some(current) = self.shown.snapshot.instance(&asked.name) else {
            self.refuse(&asked.name, "refused: no longer in the store".into());
            return None;
        };
        if let Some(refusal) = birth_refusal(&BirthSeen::of(asked), &BirthSeen::of(current)) {
            self.refuse(&asked.name, refusal);
            return None;
        }
        Some(Instance {
            birth: asked.birth.clone(),
            created_at: asked.created_at,
            ..current.clone()
        })
    }

    /// `y` in the teardown dialog: close it and ask the console to tear the
    /// instance down, if it is still the birth asked about
    /// ([`Self::asked_now`]) and still passes the teardown rules on the
    /// snapshot shown now (it may have changed while the dialog was open).
    pub(super) fn confirm_tear_down(&mut self, instance: Instance) -> Option<Effect> {
        let current = self.asked_now(&instance)?;
        if let Err(refusal) = may_tear_down(
            &current,
            self.shown.snapshot.lock_liveness(&current.name),
            self.shown.snapshot.pending_operation(&current.name),
        ) {
            self.refuse(&current.name, refusal.to_string());
            return None;
        }
        self.set_flash(
            FlashLevel::Info,
            format!("teardown requested for {}", current.name),
        );
        self.own_until(&current.name);
        let attempt = self.shown.snapshot.reap_attempt(&current.name).cloned();
        Some(Effect::TearDown {
            instance: current,
            attempt,
        })
    }

    /// Any other key in the teardown dialog: close it, logging the cancel.
    pub(super) fn cancel_tear_down(&mut self, instance: Instance) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &instance.name,
            ActivityKind::Aborted,
            "cancelled",
        ));
    }

    /// The instance `r` and `d` act on: the detail view's instance while it
    /// is open, the selected backoff's instance in the Backoffs pane, else
    /// the selected instance. `Err(detail)` when there is none.
    pub(super) fn target(&self) -> Result<Instance, (String, String)> {
        if let Some(detail) = self.layers.detail() {
            return self
                .shown
                .snapshot
                .instance(&detail.name)
                .cloned()
                .ok_or_else(|| {
                    (
                        detail.name.clone(),
                        "refused: no such instance in the store".into(),
                    )
                });
        }
        if self.focus == Focus::Backoffs {
            let Some(attempt) = self.shown.snapshot.reap_attempts.get(self.backoffs.index) else {
                return Err((String::new(), "refused: no backoff selected".into()));
            };
            return self
                .shown
                .snapshot
                .instance(&attempt.instance)
                .cloned()
                .ok_or_else(|| {
                    (
                        attempt.instance.clone(),
                        "refused: no such instance in the store".into(),
                    )
                });
        }
        self.selected_instance()
            .cloned()
            .ok_or_else(|| (String::new(), "refused: no instance selected".into()))
    }

    /// The common gate of `r` and `d`: write keys enabled and a target.
    fn writable_target(&mut self) -> Option<Instance> {
        let instance = match self.target() {
            Ok(instance) => instance,
            Err((name, detail)) => {
                self.refuse(&name, detail);
                return None;
            }
        };
        if let Some(reason) = self.write_keys_off() {
            let reason = reason.into_owned();
            self.refuse(&instance.name, reason);
            return None;
        }
        Some(instance)
    }

    pub(super) fn reap_key(&mut self) {
        if self.bulk_applies() {
            self.bulk_key(crate::reaper::Intent::Reap);
            return;
        }
        let Some(instance) = self.writable_target() else {
            return;
        };
        self.reap_instance(instance);
    }

    /// `r`'s rules for `instance` (the write keys are on): the
    /// confirmation opens when [`Self::may_reap`] passes (as `d`'s does:
    /// a reap runs `down` too, and skips a backoff the reaper would wait
    /// out).
    pub(super) fn reap_instance(&mut self, instance: Instance) {
        match self.may_reap(&instance) {
            Ok(()) => self.ask(Question::Reap(instance)),
            Err(reason) => self.refuse(&instance.name, reason),
        }
    }

    /// `r`'s rules on the snapshot shown: the clock, then [`may_reap_now`].
    /// `Err(reason)`: the refusal, in the operator's words.
    fn may_reap(&self, instance: &Instance) -> Result<(), String> {
        if self.status.clock_doubt.is_some() {
            // Whether a lease ran out is a question of the time: not
            // answered by a clock that looks wrong.
            return Err(
                "the wall clock looks wrong (see the header): r is off until it looks right".into(),
            );
        }
        let liveness = self.shown.snapshot.lock_liveness(&instance.name);
        let pending = self.shown.snapshot.pending_operation(&instance.name);
        may_reap_now(instance, liveness, pending, self.now).map_err(|r| r.to_string())
    }

    /// `y` in the reap dialog: close it and ask the console to reap the
    /// instance, if it is still the birth asked about ([`Self::asked_now`])
    /// and still passes `r`'s rules on the snapshot shown now (it may have
    /// changed while the dialog was open).
    pub(super) fn confirm_reap(&mut self, instance: Instance) -> Option<Effect> {
        let current = self.asked_now(&instance)?;
        if let Err(reason) = self.may_reap(&current) {
            self.refuse(&current.name, reason);
            return None;
        }
        self.set_flash(
            FlashLevel::Info,
            format!("reap requested for {}", current.name),
        );
        self.own_until(&current.name);
        let attempt = self.shown.snapshot.reap_attempt(&current.name).cloned();
        Some(Effect::Reap {
            instance: current,
            attempt,
        })
    }

    /// Any other key in the reap dialog: close it, logging the cancel
    /// (`reap cancelled`).
    pub(super) fn cancel_reap(&mut self, instance: Instance) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &instance.name,
            ActivityKind::Aborted,
            REAP_CANCELLED,
        ));
    }

    /// A teardown of `name` was asked for here: what is observed on it for
    /// a while is this console's own doing.
    pub(super) fn own_until(&mut self, name: &str) {
        let until = self.now.saturating_add(super::operations::OWN_GRACE_SECS);
        let entry = self.own.entry(name.to_owned()).or_insert(until);
        *entry = (*entry).max(until);
    }

    pub(super) fn down_key(&mut self) {
        if self.bulk_applies() {
            self.bulk_key(crate::reaper::Intent::TearDown);
            return;
        }
        let Some(instance) = self.writable_target() else {
            return;
        };
        self.down_instance(instance);
    }

    /// `d`'s rules for `instance` (the write keys are on): the
    /// confirmation opens when [`may_tear_down`] passes. On a store with
    /// controller operations (schema 14, stackless 0.4.0), an instance with
    /// a queued or running operation gets the question whether to queue a
    /// teardown behind it instead ([`queue_down_refusal`]); elsewhere such
    /// an instance does not exist, and nothing changes.
    pub(super) fn down_instance(&mut self, instance: Instance) {
        if let Some(rule) = self.queue_rule(&instance) {
            match rule {
                Ok((op, others)) => {
                    self.ask(Question::QueueDown(instance, Box::new(op), others));
                }
                Err(refusal) => self.refuse(&instance.name, refusal),
            }
            return;
        }
        let pending = self.shown.snapshot.pending_operation(&instance.name);
        match may_tear_down(
            &instance,
            self.shown.snapshot.lock_liveness(&instance.name),
            pending,
        ) {
            Ok(()) => self.ask(Question::TearDown(instance)),
            Err(refusal) => self.refuse(&instance.name, refusal.to_string()),
        }
    }

    /// `d`'s queue rule for `instance` on the snapshot shown: `None` when
    /// it does not apply (no controller operations, nothing pending on
    /// it); else the operation a queued `down` would really wait behind
    /// with the others pending in words ([`queue_spot`]), or the refusal
    /// ([`queue_down_refusal`], which sees every pending operation of the
    /// name, not only the first).
    pub(super) fn queue_rule(
        &self,
        instance: &Instance,
    ) -> Option<Result<(Operation, String), String>> {
        if !self.shown.snapshot.generation.has_operations() {
            return None;
        }
        let pending = self.shown.snapshot.pending_operations_of(&instance.name);
        let (behind, others) = queue_spot(&pending)?;
        Some(match queue_down_refusal(instance, &pending) {
            None => Ok((behind.clone(), others)),
            Some(refusal) => Err(refusal),
        })
    }

    /// `y` to the queue question: ask the console to queue the teardown,
    /// if on the snapshot shown now the instance is the same birth and
    /// still has a pending operation to queue behind (one that ended
    /// meanwhile leaves nothing to wait for: `d` again asks anew).
    pub(super) fn confirm_queue_down(
        &mut self,
        asked: Instance,
        behind: Operation,
    ) -> Option<Effect> {
        let current = self.asked_now(&asked)?;
        let pending = match self.queue_rule(&current) {
            Some(Ok((pending, _))) => pending,
            Some(Err(refusal)) => {
                self.refuse(&current.name, refusal);
                return None;
            }
            None => {
                self.refuse(
                    &current.name,
                    format!(
                        "refused: the {} it would wait behind has ended; press d again",
                        behind.verb
                    ),
                );
                return None;
            }
        };
        self.set_flash(
            FlashLevel::Info,
            format!(
                "queueing a teardown of {} behind its {}",
                current.name, pending.verb
            ),
        );
        Some(Effect::QueueDown {
            instance: current,
            behind: pending.verb,
        })
    }

    /// Any other key to the queue question: close it, logging it.
    pub(super) fn cancel_queue_down(&mut self, instance: Instance) {
        self.log_local(Activity::new(
            self.now,
            Actor::Operator,
            &instance.name,
            ActivityKind::Aborted,
            "queued teardown not confirmed",
        ));
    }
}
